#include "emit/scratchpad.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace capsgen::emit {

namespace {

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

namespace {

// Port K of the RAM: an access with its byte enables, address and write data, and the read data.
struct RamPort {
  Expr en_i, we_i, be_i, addr_i, wdata_i, rdata_o;
};

// The RAM's module comment: ports, read timing, write collisions and what replaces it in a flow.
std::string spm_ram_description(int ports) {
  return fmt::format("Behavioral sector RAM: Depth words of Width bits, {} read/write port{}, synchronous read\n"
                     "(pK_rdata_o holds the word read by port K in the previous cycle; a write does not change it).\n"
                     "{}"
                     "FPGA tools infer block RAM{}; an ASIC flow replaces this module by an SRAM macro wrapper\n"
                     "that drives the macro's power switch from sleep_i (the sector's sleep request). The\n"
                     "behavioral model ignores it: the memory that instantiates it models the wake-up time and\n"
                     "blocks accesses to sleeping sectors.",
                     ports, ports == 1 ? "" : "s",
                     ports == 1 ? "" : "Same-cycle writes to one word: the highest port wins. A read sees the word\n"
                                       "before the writes of its cycle.\n",
                     ports <= 2 ? "" : " only for up to 2 ports (this one becomes LUT RAM/registers)");
}

}  // namespace

Module build_spm_ram(int ports) {
  Module m(spm_ram_module(ports), spm_ram_description(ports));
  const Param width = m.parameter("Width", 64, "word bits (a multiple of 8)");
  const Param depth = m.parameter("Depth", 256, "words");
  const Param addr_width = m.parameter("AddrWidth", 8, "address bits");
  const Dim lanes = width / 8;
  m.input("clk_i", 1, "clock");
  const Expr sleep_i =
      m.input("sleep_i", 1, "the sector's sleep request: power-switch control for SRAM macros (unused here)");
  std::vector<RamPort> port;
  for (int k = 0; k < ports; ++k) {
    const std::string p = fmt::format("p{}_", k);
    port.push_back(RamPort{
        m.input(p + "en_i", 1, fmt::format("port {} access", k)),
        m.input(p + "we_i", 1, "write (1) or read (0)"),
        m.input(p + "be_i", lanes, "write: byte lanes written (bit j: bits [8j +: 8]); the others keep their value"),
        m.input(p + "addr_i", addr_width, "word address (< Depth)"),
        m.input(p + "wdata_i", width, "write data"),
        m.output(p + "rdata_o", width, "read data, one cycle after a read")});
  }
  m.lint_off("UNUSEDSIGNAL", "sleep_i is for SRAM macro wrappers; the behavioral RAM has no power switch.");
  const Expr unused_sleep = m.wire("unused_sleep", 1);
  m.lint_on("UNUSEDSIGNAL");
  const Memory mem = m.memory("mem", width, depth, "the words");
  std::vector<Expr> rdata_q;
  for (int k = 0; k < ports; ++k) rdata_q.push_back(m.reg(fmt::format("p{}_rdata_q", k), width));
  const Expr lane = m.loop_variable("lane", lanes, "byte lane of a write");
  m.blank();
  m.assign(unused_sleep, sleep_i);
  // A write stores the byte lanes whose enable is set (SRAM macros: bit/byte write masks; FPGA block
  // RAM: byte enables).
  auto write = [&](const RamPort& p) {
    return for_(lane, lanes, {if_(p.be_i.at(lane), {nb(mem[p.addr_i].part_at(lane, 8), p.wdata_i.part_at(lane, 8))})});
  };
  Stmts body;
  if (ports == 1) {
    body.push_back(if_(port[0].en_i, {if_(port[0].we_i, {write(port[0])}, {nb(rdata_q[0], mem[port[0].addr_i])})}));
  } else {
    for (int k = 0; k < ports; ++k) body.push_back(if_(port[k].en_i & port[k].we_i, {write(port[k])}));
    for (int k = 0; k < ports; ++k)
      body.push_back(if_(port[k].en_i & ~port[k].we_i, {nb(rdata_q[k], mem[port[k].addr_i])}));
  }
  m.always_ff(body);
  for (int k = 0; k < ports; ++k) m.assign(port[k].rdata_o, rdata_q[k]);
  return m;
}

namespace {

// The sizes of one scratchpad memory that its pieces use, with full names.
struct MemoryShape {
  int banks = 0, sectors = 0, word_bits = 0, ports = 0;
  int addr_bits = 0, offset_bits = 0, sector_bits = 0;  // per-bank address {sector, offset}
  long long words_per_sector = 0;
  bool offsets_fill_sector = false;  // words_per_sector is 2^offset_bits: no offset is out of range
  bool power_gating = false;
  int wake_cycles = 0;
  int wake_count_bits = 0;  // the wake-up countdown, 0..wake_cycles
};

MemoryShape memory_shape(const SpmGeometry& g) {
  MemoryShape shape;
  shape.banks = g.mem.banks;
  shape.sectors = g.mem.sectors;
  shape.word_bits = g.mem.width_bits;
  shape.ports = g.ports;
  shape.addr_bits = g.addr_bits;
  shape.offset_bits = g.offset_bits;
  shape.sector_bits = g.sector_bits;
  shape.words_per_sector = g.words_per_sector;
  shape.offsets_fill_sector = (1LL << g.offset_bits) == g.words_per_sector;
  shape.power_gating = g.power_gating;
  shape.wake_cycles = g.wakeup_cycles;
  shape.wake_count_bits = clog2(g.wakeup_cycles + 1);
  return shape;
}

// The memory's module comment: its organization, address layout, read timing, power gating and the
// refused accesses.
std::string spm_memory_description(const SpmGeometry& g, const MemoryShape& shape) {
  const int banks = shape.banks, sectors = shape.sectors, ports = shape.ports, wake = shape.wake_cycles;
  const bool full = shape.offsets_fill_sector;
  return fmt::format(
      "DESCNet scratchpad memory '{}': {} KiB = {} bank{} x {} sector{} x {} words of {} bits, {} port{} per bank.\n"
      "Bank b, port K: pK_*_i/pK_*_o bits [b*w +: w]; address = {{sector ({} bit{}), word ({} bits)}}{}.\n"
      "Synchronous read: pK_rdata_o/pK_rvalid_o in the cycle after the read (0 for a refused read).\n"
      "{}"
      "An access to a sleeping or waking sector{} is refused (a write is dropped, a read returns 0) and\n"
      "flagged in the next cycle on err_*_o and in err_sticky_o (until reset).\n"
      "Contents of a sector are lost when it sleeps (non-retentive deep sleep); the RAM model keeps the\n"
      "bits, the testbench's shadow model flags reads of words not rewritten since wake-up.\n"
      "Handshake and waveforms: docs/rtl-scratchpad.md.",
      g.name, g.mem.size_kib, banks, banks == 1 ? "" : "s", sectors, sectors == 1 ? "" : "s", shape.words_per_sector,
      shape.word_bits, ports, ports == 1 ? "" : "s", shape.sector_bits, shape.sector_bits == 1 ? "" : "s",
      shape.offset_bits,
      full ? "" : fmt::format("; word offsets >= {} are refused (err_addr_o)", shape.words_per_sector),
      shape.power_gating
          ? fmt::format(
                "Power gating: sleep_req_i[s] = 1 puts sector s of every bank to sleep, sleep_ack_o[s] rises\n"
                "in the next cycle (the sector is off from then on). sleep_req_i[s] = 0 wakes it: sleep_ack_o[s]\n"
                "falls {} cycle{} after the first cycle with the request low, and the sector is usable from\n"
                "that cycle on (ack low = usable).\n",
                wake + 1, wake == 0 ? "" : "s")
          : "No power gating (scratchpad.power_gating: false): every sector is always on.\n",
      full ? "" : " or to a word offset past the sector");
}

// Bit `i` of a per-bank or per-sector vector of `count` bits (the vector itself when it is a scalar).
Expr bit_of(const Expr& v, int i, int count) { return count == 1 ? v : v[i]; }

// Bits [hi:lo] of a signal, a single bit when hi == lo.
Expr bits_of(const Expr& v, int hi, int lo) { return hi == lo ? v[hi] : v.slice(hi, lo); }

// The OR of `terms` (each parenthesized, also when alone).
Expr any_of(const std::vector<Expr>& terms) {
  Expr e = paren(terms.at(0));
  for (std::size_t i = 1; i < terms.size(); ++i) e = e | paren(terms[i]);
  return e;
}

// Port K's signals, every bank side by side (bank b in bits [b*w +: w] for w bits per bank).
struct MemoryPort {
  Expr en_i, we_i, addr_i, be_i, wdata_i, rdata_o, rvalid_o;
};

// The memory's ports: clock and reset, the ports K, the sleep handshake (power gating) and the error
// flags (err_addr_o when word offsets can be out of range, err_conflict_o with several ports).
struct MemoryPorts {
  std::vector<MemoryPort> port;
  std::optional<Expr> sleep_req_i, sleep_ack_o;
  Expr err_sleep_o;
  std::optional<Expr> err_addr_o, err_conflict_o;
  Expr err_sticky_o;
};

MemoryPort declare_memory_port(Module& m, const MemoryShape& shape, int k) {
  const int banks = shape.banks, addr_bits = shape.addr_bits, word_bits = shape.word_bits;
  const std::string p = fmt::format("p{}_", k);
  return MemoryPort{
      m.input(p + "en_i", banks, "per bank: access this cycle"),
      m.input(p + "we_i", banks, "per bank: write (1) or read (0)"),
      m.input(p + "addr_i", banks * addr_bits,
              fmt::format("per bank: {{sector, word}} address, bits [b*{} +: {}]", addr_bits, addr_bits)),
      m.input(p + "be_i", banks * word_bits / 8,
              fmt::format("per bank: byte lanes a write stores, bits [b*{} +: {}] (all ones: the whole word)",
                          word_bits / 8, word_bits / 8)),
      m.input(p + "wdata_i", banks * word_bits,
              fmt::format("per bank: write data, bits [b*{} +: {}]", word_bits, word_bits)),
      m.output(p + "rdata_o", banks * word_bits, "per bank: read data of the previous cycle's read"),
      m.output(p + "rvalid_o", banks, "per bank: rdata holds a read (also a refused one, as 0)")};
}

MemoryPorts declare_memory_ports(Module& m, const MemoryShape& shape) {
  m.clock_and_reset();
  std::vector<MemoryPort> port;
  for (int k = 0; k < shape.ports; ++k) port.push_back(declare_memory_port(m, shape, k));
  std::optional<Expr> sleep_req_i, sleep_ack_o;
  if (shape.power_gating) {
    sleep_req_i = m.input("sleep_req_i", shape.sectors, "per sector index: 1 = sleep, 0 = wake (level)");
    sleep_ack_o =
        m.output("sleep_ack_o", shape.sectors, "per sector index: 1 = asleep or waking (not usable), 0 = usable");
  }
  const Expr err_sleep_o =
      m.output("err_sleep_o", 1, "an access in the previous cycle hit a sleeping or waking sector");
  std::optional<Expr> err_addr_o, err_conflict_o;
  if (!shape.offsets_fill_sector)
    err_addr_o = m.output("err_addr_o", 1, "an access in the previous cycle had a word offset past the sector");
  if (shape.ports > 1)
    err_conflict_o = m.output("err_conflict_o", 1, "two ports wrote the same word of a bank in the previous cycle");
  return MemoryPorts{port,        sleep_req_i, sleep_ack_o, err_sleep_o, err_addr_o, err_conflict_o,
                     m.output("err_sticky_o", 1, "an error has been flagged since reset")};
}

// The sector power state (power gating): sleep_ack, one bit per sector index, and each sector's
// wake-up countdown (with a wake-up latency); sleep_ack_q is what the ports read.
struct PowerState {
  std::optional<Expr> sleep_ack_q;
  std::vector<Flop> flops;  // sleep_ack, then wake_s<N> per sector
};

PowerState declare_power_state(Module& m, const MemoryShape& shape) {
  PowerState power;
  if (!shape.power_gating) return power;
  m.comment("Sector power state: ack = 1 while asleep or waking.");
  FlopGroup group(m);
  power.sleep_ack_q = group.flop("sleep_ack", shape.sectors).q;
  if (shape.wake_cycles > 0)
    for (int s = 0; s < shape.sectors; ++s)
      group.flop(fmt::format("wake_s{}", s), shape.wake_count_bits, "wake-up cycles left");
  power.flops = group.flops();
  return power;
}

// Port K of bank b (signals b<b>_p<K>_*): its enable, write flag and address, the address's sector
// (with several sectors) and word offset, whether the sector is usable and the access accepted, the
// registered read state, and the read data of each sector's RAM (sector s at [s]).
struct BankPort {
  Expr en, we, addr;
  std::optional<Expr> sec;
  Expr off, on, ok, rvalid_q, rok_q;
  std::optional<Expr> rsec_q;
  std::vector<Expr> sector_rdata;
};

BankPort declare_bank_port(Module& m, const MemoryShape& shape, int b, int k) {
  const std::string n = fmt::format("b{}_p{}_", b, k);
  const bool sectored = shape.sector_bits > 0;
  Expr en = m.wire(n + "en", 1), we = m.wire(n + "we", 1), addr = m.wire(n + "addr", shape.addr_bits);
  std::optional<Expr> sec;
  if (sectored) sec = m.wire(n + "sec", shape.sector_bits);
  Expr off = m.wire(n + "off", shape.offset_bits);
  Expr on = m.wire(n + "on", 1, "sector usable");
  Expr ok = m.wire(n + "ok", 1, "access accepted");
  Expr rvalid_q = m.reg(n + "rvalid_q", 1);
  Expr rok_q = m.reg(n + "rok_q", 1);
  std::optional<Expr> rsec_q;
  if (sectored) rsec_q = m.reg(n + "rsec_q", shape.sector_bits);
  std::vector<Expr> sector_rdata;
  for (int s = 0; s < shape.sectors; ++s)
    sector_rdata.push_back(m.wire(fmt::format("b{}_s{}_p{}_rdata", b, s, k), shape.word_bits));
  return BankPort{en, we, addr, sec, off, on, ok, rvalid_q, rok_q, rsec_q, sector_rdata};
}

// The error flags of this cycle's accesses and their registers (err_addr* when word offsets can be
// out of range, err_conflict* with several ports).
struct ErrorFlags {
  Expr err_sleep;
  std::optional<Expr> err_addr, err_conflict;
  Expr err_sleep_q;
  std::optional<Expr> err_addr_q, err_conflict_q;
  Expr err_sticky_q;
};

ErrorFlags declare_error_flags(Module& m, const MemoryShape& shape) {
  const bool addr_check = !shape.offsets_fill_sector, conflict_check = shape.ports > 1;
  const Expr err_sleep = m.wire("err_sleep", 1);
  std::optional<Expr> err_addr, err_conflict, err_addr_q, err_conflict_q;
  if (addr_check) err_addr = m.wire("err_addr", 1);
  if (conflict_check) err_conflict = m.wire("err_conflict", 1);
  const Expr err_sleep_q = m.reg("err_sleep_q", 1);
  if (addr_check) err_addr_q = m.reg("err_addr_q", 1);
  if (conflict_check) err_conflict_q = m.reg("err_conflict_q", 1);
  return ErrorFlags{
      err_sleep, err_addr, err_conflict, err_sleep_q, err_addr_q, err_conflict_q, m.reg("err_sticky_q", 1)};
}

// Every signal of the memory, in declaration order (bank b's port K at bank[b][K]).
struct MemorySignals {
  MemoryPorts port;
  PowerState power;
  std::vector<std::vector<BankPort>> bank;
  ErrorFlags err;
};

MemorySignals declare_memory_signals(Module& m, const MemoryShape& shape) {
  MemoryPorts port = declare_memory_ports(m, shape);
  PowerState power = declare_power_state(m, shape);
  std::vector<std::vector<BankPort>> bank(shape.banks);
  for (int b = 0; b < shape.banks; ++b)
    for (int k = 0; k < shape.ports; ++k) bank[b].push_back(declare_bank_port(m, shape, b, k));
  return MemorySignals{port, power, bank, declare_error_flags(m, shape)};
}

// The sleep handshake per sector index: ack follows a sleep request in the next cycle; after a release
// it falls once the wake-up countdown has run out.
void build_sleep_fsm(Module& m, const MemorySignals& sig, const MemoryShape& shape) {
  const int sectors = shape.sectors, wake = shape.wake_cycles, count_bits = shape.wake_count_bits;
  const Flop& sleep_ack = sig.power.flops.front();
  m.blank();
  m.comment(wake == 0
                ? "Sleep FSM per sector index: ack follows the request one cycle later."
                : fmt::format("Sleep FSM per sector index: request -> ack in the next cycle; release -> ack falls\n"
                              "after {} further cycles (wake_s*_q counts them down).",
                              wake));
  Stmts next = hold_flops(sig.power.flops);
  for (int s = 0; s < sectors; ++s) {
    const Expr request = bit_of(*sig.port.sleep_req_i, s, sectors), ack = bit_of(sleep_ack.q, s, sectors);
    const Expr ack_d = bit_of(sleep_ack.d, s, sectors);
    if (wake == 0) {
      next.push_back(blk(ack_d, request));
      continue;
    }
    const Flop& countdown = sig.power.flops[std::size_t(s) + 1];
    next.push_back(if_(request, {blk(ack_d, bit(true)), blk(countdown.d, lit(count_bits, wake))},
                       {if_(ack, {if_(countdown.q == lit(count_bits, 0), {blk(ack_d, bit(false))},
                                      {blk(countdown.d, countdown.q - lit(count_bits, 1))})})}));
  }
  m.always_comb(std::move(next));
  m.always_ff_flops(sig.power.flops);
  m.assign(*sig.port.sleep_ack_o, sleep_ack.q);
}

// What the banks' ports add to the shared read-side registers and error flags.
struct ReadSide {
  Stmts ctrl_reset, ctrl, data;  // rvalid_q and rok_q (reset), rsec_q (no reset)
  std::vector<Expr> sleep_hits, addr_misses, conflicts;
};

// Port K of bank b: its slice of the port, the address split into sector and offset, whether the
// sector is usable and the access accepted; its read state registers and error terms go to `read`.
void build_bank_port_decode(Module& m, const MemorySignals& sig, const MemoryShape& shape, int b, int k,
                            ReadSide& read) {
  const MemoryPort& in = sig.port.port[k];
  const BankPort& bank_port = sig.bank[b][k];
  const int addr_bits = shape.addr_bits, offset_bits = shape.offset_bits;
  m.assign(bank_port.en, bit_of(in.en_i, b, shape.banks));
  m.assign(bank_port.we, bit_of(in.we_i, b, shape.banks));
  m.assign(bank_port.addr, in.addr_i.part(b, addr_bits));
  if (bank_port.sec) m.assign(*bank_port.sec, bits_of(bank_port.addr, addr_bits - 1, offset_bits));
  m.assign(bank_port.off, bits_of(bank_port.addr, offset_bits - 1, 0));
  if (!shape.power_gating)
    m.assign(bank_port.on, bit(true));
  else
    m.assign(bank_port.on, shape.sectors == 1 ? ~*sig.power.sleep_ack_q : ~sig.power.sleep_ack_q->at(*bank_port.sec));
  if (shape.offsets_fill_sector) {
    m.assign(bank_port.ok, bank_port.en & bank_port.on);
  } else {
    const Expr words = lit(offset_bits, shape.words_per_sector);
    m.assign(bank_port.ok, bank_port.en & bank_port.on & (bank_port.off < words));
    read.addr_misses.push_back(bank_port.en & (bank_port.off >= words));
  }
  read.sleep_hits.push_back(bank_port.en & ~bank_port.on);
  read.ctrl_reset.push_back(nb(bank_port.rvalid_q, bit(false)));
  read.ctrl_reset.push_back(nb(bank_port.rok_q, bit(false)));
  read.ctrl.push_back(nb(bank_port.rvalid_q, bank_port.en & ~bank_port.we));
  read.ctrl.push_back(nb(bank_port.rok_q, bank_port.ok & ~bank_port.we));
  if (bank_port.rsec_q) read.data.push_back(if_(bank_port.en, {nb(*bank_port.rsec_q, *bank_port.sec)}));
}

// Port K of bank b's read data: the sector read in the previous cycle, 0 for a refused read.
void build_bank_port_read_mux(Module& m, const MemorySignals& sig, const MemoryShape& shape, int b, int k) {
  const MemoryPort& out = sig.port.port[k];
  const BankPort& bank_port = sig.bank[b][k];
  const int sectors = shape.sectors;
  Expr sector_word = paren(bank_port.sector_rdata[0]);
  if (bank_port.rsec_q) {
    std::vector<std::pair<Expr, Expr>> arms;
    for (int s = 0; s < sectors - 1; ++s)
      arms.emplace_back(*bank_port.rsec_q == lit(shape.sector_bits, s), bank_port.sector_rdata[s]);
    sector_word = ternary_chain(arms, bank_port.sector_rdata[sectors - 1]);
  }
  m.assign(out.rdata_o.part(b, shape.word_bits), ternary(bank_port.rok_q, sector_word, zero(shape.word_bits)));
  m.assign(bit_of(out.rvalid_o, b, shape.banks), bank_port.rvalid_q);
}

// Bank b's write conflicts: two ports writing the same word in one cycle.
void add_bank_conflicts(const MemorySignals& sig, const MemoryShape& shape, int b, ReadSide& read) {
  for (int k1 = 0; k1 < shape.ports; ++k1)
    for (int k2 = k1 + 1; k2 < shape.ports; ++k2) {
      const BankPort &first = sig.bank[b][k1], &second = sig.bank[b][k2];
      read.conflicts.push_back(first.ok & first.we & second.ok & second.we & (first.addr == second.addr));
    }
}

// Bank b's sector RAMs: sector s takes port K's accepted accesses to it, and sleeps with its sector
// index's request.
void instantiate_sector_rams(Module& m, const Module& ram, const MemorySignals& sig, const MemoryShape& shape, int b) {
  const int sectors = shape.sectors, word_bits = shape.word_bits;
  for (int s = 0; s < sectors; ++s) {
    Instance& ram_inst = m.instance(ram, fmt::format("u_ram_b{}_s{}", b, s));
    ram_inst.param("Width", word_bits).param("Depth", shape.words_per_sector).param("AddrWidth", shape.offset_bits);
    ram_inst.connect("clk_i", m.clk());
    ram_inst.connect("sleep_i", shape.power_gating ? bit_of(*sig.port.sleep_req_i, s, sectors) : bit(false));
    for (int k = 0; k < shape.ports; ++k) {
      const MemoryPort& in = sig.port.port[k];
      const BankPort& bank_port = sig.bank[b][k];
      const std::string p = fmt::format("p{}_", k);
      ram_inst.connect(p + "en_i",
                       bank_port.sec ? bank_port.ok & (*bank_port.sec == lit(shape.sector_bits, s)) : bank_port.ok);
      ram_inst.connect(p + "we_i", bank_port.we);
      ram_inst.connect(p + "be_i", in.be_i.part(b, word_bits / 8));
      ram_inst.connect(p + "addr_i", bank_port.off);
      ram_inst.connect(p + "wdata_i", in.wdata_i.part(b, word_bits));
      ram_inst.connect(p + "rdata_o", bank_port.sector_rdata[s]);
    }
  }
}

// The read-side registers, and the error flags: registered, sticky until reset, and on the outputs.
void build_read_registers_and_errors(Module& m, const MemorySignals& sig, const ReadSide& read) {
  const ErrorFlags& err = sig.err;
  const MemoryPorts& out = sig.port;
  m.blank();
  m.comment("Read-side registers and error flags.");
  m.always_ff_next(read.ctrl_reset, read.ctrl);
  if (!read.data.empty()) m.always_ff(read.data);
  m.assign(err.err_sleep, any_of(read.sleep_hits));
  if (err.err_addr) m.assign(*err.err_addr, any_of(read.addr_misses));
  if (err.err_conflict) m.assign(*err.err_conflict, any_of(read.conflicts));
  Expr any = err.err_sleep;
  if (err.err_addr) any = any | *err.err_addr;
  if (err.err_conflict) any = any | *err.err_conflict;
  Stmts reset = {nb(err.err_sleep_q, bit(false)), nb(err.err_sticky_q, bit(false))},
        body = {nb(err.err_sleep_q, err.err_sleep)};
  if (err.err_addr)
    reset.push_back(nb(*err.err_addr_q, bit(false))), body.push_back(nb(*err.err_addr_q, *err.err_addr));
  if (err.err_conflict)
    reset.push_back(nb(*err.err_conflict_q, bit(false))), body.push_back(nb(*err.err_conflict_q, *err.err_conflict));
  body.push_back(if_(any, {nb(err.err_sticky_q, bit(true))}));
  m.always_ff_next(reset, body);
  m.assign(out.err_sleep_o, err.err_sleep_q);
  if (err.err_addr) m.assign(*out.err_addr_o, *err.err_addr_q);
  if (err.err_conflict) m.assign(*out.err_conflict_o, *err.err_conflict_q);
  m.assign(out.err_sticky_o, err.err_sticky_q);
}

}  // namespace

Module build_spm_memory(const SpmGeometry& g) {
  const MemoryShape shape = memory_shape(g);
  Module m(g.module, spm_memory_description(g, shape));
  const MemorySignals sig = declare_memory_signals(m, shape);
  if (shape.power_gating) build_sleep_fsm(m, sig, shape);

  // Per bank and port: decode, check, sector RAM enables, read mux.
  const Module ram = build_spm_ram(shape.ports);
  ReadSide read;
  for (int b = 0; b < shape.banks; ++b) {
    m.blank();
    m.comment(fmt::format("Bank {}.", b));
    for (int k = 0; k < shape.ports; ++k) {
      build_bank_port_decode(m, sig, shape, b, k, read);
      build_bank_port_read_mux(m, sig, shape, b, k);
    }
    add_bank_conflicts(sig, shape, b, read);
    instantiate_sector_rams(m, ram, sig, shape, b);
  }
  build_read_registers_and_errors(m, sig, read);
  return m;
}

// scratchpad.json (schemas/scratchpad.schema.json): the memories' preset values, read by
// tb/scratchpad_tb.cpp and tb/pmu_tb.cpp.
nlohmann::json scratchpad_summary(const AccelConfig& cfg) {
  nlohmann::json mems = nlohmann::json::array();
  for (const SpmGeometry& g : spm_memories(cfg))
    mems.push_back({{"name", g.name},
                    {"size_kib", g.mem.size_kib},
                    {"banks", g.mem.banks},
                    {"sectors", g.mem.sectors},
                    {"width_bits", g.mem.width_bits},
                    {"ports", g.ports}});
  return {{"organization", to_string(cfg.scratchpad.organization)},
          {"power_gating", cfg.scratchpad.power_gating},
          {"wakeup_cycles", cfg.scratchpad.wakeup_cycles},
          {"memories", mems}};
}

void emit_scratchpad(const AccelConfig& cfg, Design& design) {
  const std::vector<SpmGeometry> mems = spm_memories(cfg);
  bool p1 = false, p3 = false;
  for (const SpmGeometry& g : mems) (g.ports == 1 ? p1 : p3) = true;
  if (p1) design.add_module(build_spm_ram(1));
  if (p3) design.add_module(build_spm_ram(3));
  for (const SpmGeometry& g : mems) design.add_module(build_spm_memory(g));
  design.add_summary(kScratchpadSummaryName, scratchpad_summary(cfg));
}

}  // namespace capsgen::emit
