#include "emit/scratchpad.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "emit/activation_internal.hpp"

namespace capsgen::emit {

using detail::bits;
using detail::lit;

namespace {

// Bit `i` of a `count`-bit port (the plain name when the port is a scalar).
std::string bit_of(const std::string& name, int i, int count) {
  return count == 1 ? name : fmt::format("{}[{}]", name, i);
}

SpmGeometry geometry(const std::string& name, const MemoryConfig& mem, int ports, const ScratchpadConfig& spm) {
  SpmGeometry g;
  g.name = name;
  g.module = "capsgen_spm_" + name;
  g.mem = mem;
  g.ports = ports;
  const long long bytes = static_cast<long long>(mem.size_kib) * 1024;
  const long long sector_bytes = static_cast<long long>(mem.banks) * mem.sectors * (mem.width_bits / 8);
  if (mem.width_bits % 8 || sector_bytes <= 0 || bytes % sector_bytes)
    throw std::logic_error("emit_scratchpad: memory does not split into whole words (config not validated?)");
  g.words_per_sector = bytes / sector_bytes;
  g.sector_bits = clog2(mem.sectors);
  g.offset_bits = std::max(1, clog2(g.words_per_sector));
  g.addr_bits = g.sector_bits + g.offset_bits;
  g.power_gating = spm.power_gating;
  g.wakeup_cycles = spm.wakeup_cycles;
  return g;
}

}  // namespace

std::string spm_ram_module(int ports) { return fmt::format("capsgen_spm_ram_p{}", ports); }

std::vector<SpmGeometry> spm_memories(const AccelConfig& cfg) {
  const ScratchpadConfig& s = cfg.scratchpad;
  std::vector<SpmGeometry> v;
  if (s.organization != SpmOrganization::Smp) {
    v.push_back(geometry("data", s.data, 1, s));
    v.push_back(geometry("weight", s.weight, 1, s));
    v.push_back(geometry("acc", s.acc, 1, s));
  }
  if (s.organization != SpmOrganization::Sep) v.push_back(geometry("shared", s.shared, 3, s));
  return v;
}

Module build_spm_ram(int ports) {
  Module m(spm_ram_module(ports),
           fmt::format("Behavioral sector RAM: Depth words of Width bits, {} read/write port{}, synchronous read\n"
                       "(pK_rdata_o holds the word read by port K in the previous cycle; a write does not change it).\n"
                       "{}"
                       "FPGA tools infer block RAM{}; an ASIC flow replaces this module by an SRAM macro wrapper\n"
                       "that drives the macro's power switch from sleep_i (the sector's sleep request). The\n"
                       "behavioral model ignores it: the memory that instantiates it models the wake-up time and\n"
                       "blocks accesses to sleeping sectors.",
                       ports, ports == 1 ? "" : "s",
                       ports == 1 ? "" : "Same-cycle writes to one word: the highest port wins. A read sees the word\n"
                                         "before the writes of its cycle.\n",
                       ports <= 2 ? "" : " only for up to 2 ports (this one becomes LUT RAM/registers)"));
  m.parameter("Width", "64", "word bits (a multiple of 8)").parameter("Depth", "256", "words").parameter("AddrWidth", "8", "address bits");
  m.input("clk_i", "1", "clock");
  m.input("sleep_i", "1", "the sector's sleep request: power-switch control for SRAM macros (unused here)");
  for (int k = 0; k < ports; ++k) {
    const std::string p = fmt::format("p{}_", k);
    m.input(p + "en_i", "1", fmt::format("port {} access", k))
        .input(p + "we_i", "1", "write (1) or read (0)")
        .input(p + "be_i", "Width/8", "write: byte lanes written (bit j: bits [8j +: 8]); the others keep their value")
        .input(p + "addr_i", "AddrWidth", "word address (< Depth)")
        .input(p + "wdata_i", "Width", "write data")
        .output(p + "rdata_o", "Width", "read data, one cycle after a read");
  }
  m.lint_off("UNUSEDSIGNAL", "sleep_i is for SRAM macro wrappers; the behavioral RAM has no power switch.");
  m.wire("unused_sleep", "1");
  m.lint_on("UNUSEDSIGNAL");
  m.memory("mem", "Width", "Depth", "the words");
  for (int k = 0; k < ports; ++k) m.reg(fmt::format("p{}_rdata_q", k), "Width");
  m.integer("lane", "byte lane of a write");
  m.blank();
  m.assign("unused_sleep", "sleep_i");
  // A write stores the byte lanes whose enable is set (SRAM macros: bit/byte write masks; FPGA block
  // RAM: byte enables).
  auto write = [](int k) {
    return for_("lane", "Width/8",
                {if_(fmt::format("p{}_be_i[lane]", k),
                     {nb(fmt::format("mem[p{0}_addr_i][lane*8 +: 8]", k), fmt::format("p{}_wdata_i[lane*8 +: 8]", k))})});
  };
  Stmts body;
  if (ports == 1) {
    body.push_back(if_("p0_en_i", {if_("p0_we_i", {write(0)}, {nb("p0_rdata_q", "mem[p0_addr_i]")})}));
  } else {
    for (int k = 0; k < ports; ++k) body.push_back(if_(fmt::format("p{0}_en_i & p{0}_we_i", k), {write(k)}));
    for (int k = 0; k < ports; ++k)
      body.push_back(if_(fmt::format("p{0}_en_i & ~p{0}_we_i", k), {nb(fmt::format("p{}_rdata_q", k), fmt::format("mem[p{}_addr_i]", k))}));
  }
  m.always_ff(body);
  for (int k = 0; k < ports; ++k) m.assign(fmt::format("p{}_rdata_o", k), fmt::format("p{}_rdata_q", k));
  return m;
}

Module build_spm_memory(const SpmGeometry& g) {
  const int B = g.mem.banks, SC = g.mem.sectors, W = g.mem.width_bits, P = g.ports;
  const int AW = g.addr_bits, OB = g.offset_bits, SB = g.sector_bits;
  const long long WPS = g.words_per_sector;
  const bool pow2 = (1LL << OB) == WPS;
  const bool pg = g.power_gating;
  const int wake = g.wakeup_cycles;
  const int wcb = clog2(wake + 1);
  Module m(g.module,
           fmt::format(
               "DESCNet scratchpad memory '{}': {} KiB = {} bank{} x {} sector{} x {} words of {} bits, {} port{} per bank.\n"
               "Bank b, port K: pK_*_i/pK_*_o bits [b*w +: w]; address = {{sector ({} bit{}), word ({} bits)}}{}.\n"
               "Synchronous read: pK_rdata_o/pK_rvalid_o in the cycle after the read (0 for a refused read).\n"
               "{}"
               "An access to a sleeping or waking sector{} is refused (a write is dropped, a read returns 0) and\n"
               "flagged in the next cycle on err_*_o and in err_sticky_o (until reset).\n"
               "Contents of a sector are lost when it sleeps (non-retentive deep sleep); the RAM model keeps the\n"
               "bits, the testbench's shadow model flags reads of words not rewritten since wake-up.\n"
               "Handshake and waveforms: docs/rtl-scratchpad.md.",
               g.name, g.mem.size_kib, B, B == 1 ? "" : "s", SC, SC == 1 ? "" : "s", WPS, W, P, P == 1 ? "" : "s", SB,
               SB == 1 ? "" : "s", OB, pow2 ? "" : fmt::format("; word offsets >= {} are refused (err_addr_o)", WPS),
               pg ? fmt::format("Power gating: sleep_req_i[s] = 1 puts sector s of every bank to sleep, sleep_ack_o[s] rises\n"
                                "in the next cycle (the sector is off from then on). sleep_req_i[s] = 0 wakes it: sleep_ack_o[s]\n"
                                "falls {} cycle{} after the first cycle with the request low, and the sector is usable from\n"
                                "that cycle on (ack low = usable).\n",
                                wake + 1, wake == 0 ? "" : "s")
                  : "No power gating (scratchpad.power_gating: false): every sector is always on.\n",
               pow2 ? "" : " or to a word offset past the sector"));
  m.clock_and_reset();
  for (int k = 0; k < P; ++k) {
    const std::string p = fmt::format("p{}_", k);
    m.input(p + "en_i", str(B), "per bank: access this cycle")
        .input(p + "we_i", str(B), "per bank: write (1) or read (0)")
        .input(p + "addr_i", str(B * AW), fmt::format("per bank: {{sector, word}} address, bits [b*{} +: {}]", AW, AW))
        .input(p + "be_i", str(B * W / 8),
               fmt::format("per bank: byte lanes a write stores, bits [b*{} +: {}] (all ones: the whole word)", W / 8, W / 8))
        .input(p + "wdata_i", str(B * W), fmt::format("per bank: write data, bits [b*{} +: {}]", W, W))
        .output(p + "rdata_o", str(B * W), "per bank: read data of the previous cycle's read")
        .output(p + "rvalid_o", str(B), "per bank: rdata holds a read (also a refused one, as 0)");
  }
  if (pg) {
    m.input("sleep_req_i", str(SC), "per sector index: 1 = sleep, 0 = wake (level)");
    m.output("sleep_ack_o", str(SC), "per sector index: 1 = asleep or waking (not usable), 0 = usable");
  }
  m.output("err_sleep_o", "1", "an access in the previous cycle hit a sleeping or waking sector");
  if (!pow2) m.output("err_addr_o", "1", "an access in the previous cycle had a word offset past the sector");
  if (P > 1) m.output("err_conflict_o", "1", "two ports wrote the same word of a bank in the previous cycle");
  m.output("err_sticky_o", "1", "an error has been flagged since reset");

  // ---- declarations ----
  if (pg) {
    m.comment("Sector power state: ack = 1 while asleep or waking.");
    m.reg("sleep_ack_q", str(SC));
    if (wake > 0)
      for (int s = 0; s < SC; ++s) m.reg(fmt::format("wake_s{}_q", s), str(wcb), "wake-up cycles left");
  }
  for (int b = 0; b < B; ++b) {
    for (int k = 0; k < P; ++k) {
      const std::string n = fmt::format("b{}_p{}_", b, k);
      m.wire(n + "en", "1");
      m.wire(n + "we", "1");
      m.wire(n + "addr", str(AW));
      if (SB > 0) m.wire(n + "sec", str(SB));
      m.wire(n + "off", str(OB));
      m.wire(n + "on", "1", "sector usable");
      m.wire(n + "ok", "1", "access accepted");
      m.reg(n + "rvalid_q", "1");
      m.reg(n + "rok_q", "1");
      if (SB > 0) m.reg(n + "rsec_q", str(SB));
      for (int s = 0; s < SC; ++s) m.wire(fmt::format("b{}_s{}_p{}_rdata", b, s, k), str(W));
    }
  }
  m.wire("err_sleep", "1");
  if (!pow2) m.wire("err_addr", "1");
  if (P > 1) m.wire("err_conflict", "1");
  m.reg("err_sleep_q", "1");
  if (!pow2) m.reg("err_addr_q", "1");
  if (P > 1) m.reg("err_conflict_q", "1");
  m.reg("err_sticky_q", "1");

  // ---- sleep handshake ----
  if (pg) {
    m.blank();
    m.comment(wake == 0 ? "Sleep FSM per sector index: ack follows the request one cycle later."
                        : fmt::format("Sleep FSM per sector index: request -> ack in the next cycle; release -> ack falls\n"
                                      "after {} further cycles (wake_s*_q counts them down).",
                                      wake));
    Stmts reset = {nb("sleep_ack_q", lit(SC, 0))};
    Stmts body;
    for (int s = 0; s < SC; ++s) {
      const std::string req = bit_of("sleep_req_i", s, SC), ack = bit_of("sleep_ack_q", s, SC);
      if (wake == 0) {
        body.push_back(nb(ack, req));
      } else {
        const std::string cnt = fmt::format("wake_s{}_q", s);
        reset.push_back(nb(cnt, lit(wcb, 0)));
        body.push_back(if_(req, {nb(ack, "1'b1"), nb(cnt, lit(wcb, wake))},
                           {if_(ack, {if_(fmt::format("{} == {}", cnt, lit(wcb, 0)), {nb(ack, "1'b0")},
                                          {nb(cnt, fmt::format("{} - {}", cnt, lit(wcb, 1)))})})}));
      }
    }
    m.always_ff_reset(reset, body);
    m.assign("sleep_ack_o", "sleep_ack_q");
  }

  // ---- per bank and port: decode, check, sector RAM enables, read mux ----
  std::string err_sleep, err_addr, err_conflict;
  auto orj = [](std::string& acc, const std::string& t) { acc += (acc.empty() ? "" : " | ") + t; };
  Stmts rd_ctrl_reset, rd_ctrl, rd_data;
  for (int b = 0; b < B; ++b) {
    m.blank();
    m.comment(fmt::format("Bank {}.", b));
    for (int k = 0; k < P; ++k) {
      const std::string n = fmt::format("b{}_p{}_", b, k), p = fmt::format("p{}_", k);
      m.assign(n + "en", bit_of(p + "en_i", b, B));
      m.assign(n + "we", bit_of(p + "we_i", b, B));
      m.assign(n + "addr", expr_slice(p + "addr_i", b, str(AW)));
      if (SB > 0) m.assign(n + "sec", bits(n + "addr", AW - 1, OB));
      m.assign(n + "off", bits(n + "addr", OB - 1, 0));
      if (pg)
        m.assign(n + "on", SC == 1 ? "~sleep_ack_q" : fmt::format("~sleep_ack_q[{}sec]", n));
      else
        m.assign(n + "on", "1'b1");
      const std::string off_ok = pow2 ? "" : fmt::format(" & ({}off < {})", n, lit(OB, WPS));
      m.assign(n + "ok", fmt::format("{0}en & {0}on{1}", n, off_ok));
      orj(err_sleep, fmt::format("({0}en & ~{0}on)", n));
      if (!pow2) orj(err_addr, fmt::format("({0}en & ({0}off >= {1}))", n, lit(OB, WPS)));
      rd_ctrl_reset.push_back(nb(n + "rvalid_q", "1'b0"));
      rd_ctrl_reset.push_back(nb(n + "rok_q", "1'b0"));
      rd_ctrl.push_back(nb(n + "rvalid_q", fmt::format("{}en & ~{}we", n, n)));
      rd_ctrl.push_back(nb(n + "rok_q", fmt::format("{}ok & ~{}we", n, n)));
      if (SB > 0) rd_data.push_back(if_(n + "en", {nb(n + "rsec_q", n + "sec")}));
      // Read mux over the bank's sectors.
      std::string mux;
      if (SB == 0) {
        mux = fmt::format("b{}_s0_p{}_rdata", b, k);
      } else {
        for (int s = 0; s < SC - 1; ++s)
          mux += fmt::format("({}rsec_q == {}) ? b{}_s{}_p{}_rdata : ", n, lit(SB, s), b, s, k);
        mux += fmt::format("b{}_s{}_p{}_rdata", b, SC - 1, k);
      }
      m.assign(expr_slice(p + "rdata_o", b, str(W)), fmt::format("{}rok_q ? ({}) : {}", n, mux, lit(W, 0)));
      m.assign(bit_of(p + "rvalid_o", b, B), n + "rvalid_q");
    }
    if (P > 1) {
      for (int k1 = 0; k1 < P; ++k1)
        for (int k2 = k1 + 1; k2 < P; ++k2)
          orj(err_conflict, fmt::format("(b{0}_p{1}_ok & b{0}_p{1}_we & b{0}_p{2}_ok & b{0}_p{2}_we & (b{0}_p{1}_addr == b{0}_p{2}_addr))",
                                        b, k1, k2));
    }
    for (int s = 0; s < SC; ++s) {
      Instance& r = m.instance(spm_ram_module(P), fmt::format("u_ram_b{}_s{}", b, s));
      r.param("Width", str(W)).param("Depth", str(WPS)).param("AddrWidth", str(OB));
      r.connect("clk_i", "clk_i");
      r.connect("sleep_i", pg ? bit_of("sleep_req_i", s, SC) : "1'b0");
      for (int k = 0; k < P; ++k) {
        const std::string n = fmt::format("b{}_p{}_", b, k), p = fmt::format("p{}_", k);
        const std::string sel = SB > 0 ? fmt::format(" & ({}sec == {})", n, lit(SB, s)) : "";
        r.connect(p + "en_i", n + "ok" + sel);
        r.connect(p + "we_i", n + "we");
        r.connect(p + "be_i", expr_slice(p + "be_i", b, str(W / 8)));
        r.connect(p + "addr_i", n + "off");
        r.connect(p + "wdata_i", expr_slice(p + "wdata_i", b, str(W)));
        r.connect(p + "rdata_o", fmt::format("b{}_s{}_p{}_rdata", b, s, k));
      }
    }
  }
  m.blank();
  m.comment("Read-side registers and error flags.");
  m.always_ff_reset(rd_ctrl_reset, rd_ctrl);
  if (!rd_data.empty()) m.always_ff(rd_data);
  m.assign("err_sleep", err_sleep);
  if (!pow2) m.assign("err_addr", err_addr);
  if (P > 1) m.assign("err_conflict", err_conflict);
  std::string any = "err_sleep";
  if (!pow2) any += " | err_addr";
  if (P > 1) any += " | err_conflict";
  Stmts er = {nb("err_sleep_q", "1'b0"), nb("err_sticky_q", "1'b0")}, eb = {nb("err_sleep_q", "err_sleep")};
  if (!pow2) er.push_back(nb("err_addr_q", "1'b0")), eb.push_back(nb("err_addr_q", "err_addr"));
  if (P > 1) er.push_back(nb("err_conflict_q", "1'b0")), eb.push_back(nb("err_conflict_q", "err_conflict"));
  eb.push_back(if_(any, {nb("err_sticky_q", "1'b1")}));
  m.always_ff_reset(er, eb);
  m.assign("err_sleep_o", "err_sleep_q");
  if (!pow2) m.assign("err_addr_o", "err_addr_q");
  if (P > 1) m.assign("err_conflict_o", "err_conflict_q");
  m.assign("err_sticky_o", "err_sticky_q");
  return m;
}

std::string scratchpad_summary(const AccelConfig& cfg) {
  std::string s = file_header(cfg, "Scratchpad memories: preset values, read by tb/scratchpad_tb.cpp.", "#");
  s += fmt::format("organization {}\n", to_string(cfg.scratchpad.organization));
  s += fmt::format("power_gating {}\n", cfg.scratchpad.power_gating ? 1 : 0);
  s += fmt::format("wakeup_cycles {}\n", cfg.scratchpad.wakeup_cycles);
  s += "# memory <name> <size_kib> <banks> <sectors> <width_bits> <ports>\n";
  for (const SpmGeometry& g : spm_memories(cfg))
    s += fmt::format("memory {} {} {} {} {} {}\n", g.name, g.mem.size_kib, g.mem.banks, g.mem.sectors, g.mem.width_bits,
                     g.ports);
  return s;
}

void emit_scratchpad(const AccelConfig& cfg, Design& design) {
  const std::vector<SpmGeometry> mems = spm_memories(cfg);
  bool p1 = false, p3 = false;
  for (const SpmGeometry& g : mems) (g.ports == 1 ? p1 : p3) = true;
  if (p1) design.add_module(build_spm_ram(1));
  if (p3) design.add_module(build_spm_ram(3));
  for (const SpmGeometry& g : mems) design.add_module(build_spm_memory(g));
  design.add_other_file(kScratchpadSummaryName, scratchpad_summary(cfg));
}

}  // namespace capsgen::emit
