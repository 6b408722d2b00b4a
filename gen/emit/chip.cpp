#include "emit/chip.hpp"

#include <cctype>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>

#include "emit/activation_internal.hpp"
#include "emit/dma.hpp"
#include "emit/engine.hpp"
#include "emit/memsys.hpp"
#include "emit/pmu.hpp"
#include "emit/scratchpad.hpp"
#include "emit/sequencer.hpp"
#include "isa/engine.hpp"

namespace capsgen::emit {

using detail::lit;
using detail::zext;

namespace {
// "SEP", "SMP", "HY" for the generated comments.
std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}
}  // namespace

namespace {

const isa::PackedField& field(const std::vector<isa::PackedField>& layout, const std::string& name) {
  for (const isa::PackedField& f : layout)
    if (f.name == name) return f;
  throw std::logic_error("chip: no packed field " + name);
}

// `words[w*32 + lsb +: bits]` of a packed frame held in `words` (word 0 = the payload's first word).
std::string slice(const std::string& words, const isa::PackedField& f, int bits) {
  const int lo = f.word * 32 + f.lsb;
  return bits == 1 ? fmt::format("{}[{}]", words, lo) : fmt::format("{}[{}:{}]", words, lo + bits - 1, lo);
}

// Payload words per frame kind for the preset (the PMU's only with power gating) and the longest:
// the frame sequencer's payload buffer.
struct PayloadWords {
  int engine, dma, pmu, max;
  explicit PayloadWords(const isa::FrameGeometry& g)
      : engine(isa::payload_words(isa::FrameKind::kEngine, g)),
        dma(isa::payload_words(isa::FrameKind::kDma, g)),
        pmu(g.power_gating() ? isa::payload_words(isa::FrameKind::kPmu, g) : 0),
        max(std::max({engine, dma, pmu})) {}
};

const char* const kSeqStats[][2] = {
    {"cycles", "cycles from start_i to done_o"},
    {"engine", "engine frames issued"},
    {"dma", "DMA frames issued"},
    {"pmu", "PMU frames issued"},
    {"fetch", "cycles fetching a frame (nothing to issue)"},
    {"eng_busy", "cycles an engine frame waited for the engine to finish the previous one"},
    {"wait_dma", "cycles an engine frame waited for DMA frames (its wait_dma)"},
    {"wait_engine", "cycles a DMA frame waited for the engine to be idle (its wait_engine)"},
    {"dma_busy", "cycles a DMA frame waited for the DMA to finish the previous one"},
    {"pmu_wait", "cycles a PMU barrier waited for its sectors"},
    {"drain", "cycles after the end frame (or a refused frame) until the engine and the DMA are idle"},
};

}  // namespace

isa::FrameGeometry chip_frame_geometry(const AccelConfig& cfg) {
  const DmaGeometry d = dma_geometry(cfg);
  isa::FrameGeometry g;
  g.dram_addr_bits = kDmaDramAddrBits;
  g.count_bits = kDmaCountBits;
  g.spm_addr_bits = d.spm_addr_bits;
  g.len_bits = d.len_bits;
  g.size_bits = d.size_bits;
  g.max_size = d.max_size;
  const std::vector<SpmGeometry> mems = spm_memories(cfg);
  const char* const names[isa::kFrameMemories] = {"data", "weight", "acc", "shared"};
  for (int i = 0; i < isa::kFrameMemories; ++i) {
    g.sectors[i] = 0;
    for (const SpmGeometry& m : mems)
      if (m.name == names[i] && m.power_gating) g.sectors[i] = std::max(1, m.mem.sectors);
  }
  return g;
}

std::string chip_unsupported_reason(const AccelConfig& cfg) {
  if (std::string why = memsys_unsupported_reason(cfg); !why.empty()) return why;
  // DRAM stores codes of up to 16 bits in 1 or 2 bytes; the DMA moves bias (psum) codes as 4 bytes.
  if (cfg.widths.psum <= 16)
    return fmt::format("widths.psum: {}-bit bias codes are stored in {} in DRAM; the chip's DMA moves bias codes of "
                       "4 bytes into the 32-bit lanes (widening narrower bias codes is not built)",
                       cfg.widths.psum, cfg.widths.psum <= 8 ? "1 byte" : "2 bytes");
  for (const SpmGeometry& m : spm_memories(cfg))
    if (m.power_gating && m.mem.sectors > 32)
      return fmt::format("scratchpad.{}.sectors: {} sectors, more than a PMU frame's 32-bit awake field holds", m.name,
                         m.mem.sectors);
  return "";
}

Module build_frame_sequencer(const AccelConfig& cfg) {
  const isa::FrameGeometry g = chip_frame_geometry(cfg);
  const bool pg = g.power_gating();
  const PayloadWords pw(g);
  const int NW = pw.engine, DW = pw.dma, PW = pw.pmu, MW = pw.max, WB = clog2(MW + 1);
  const std::string wb = str(WB);
  const auto& hl = isa::frame_header_layout();
  const isa::PackedField &f_kind = field(hl, "kind"), &f_we = field(hl, "wait_engine"), &f_pend = field(hl, "pending"),
                         &f_wd = field(hl, "wait_dma");
  if (f_kind.word || f_we.word || f_pend.word || f_wd.word) throw std::logic_error("chip: the frame header is one word");
  const int DB = f_wd.bits;
  int HB = 0;  // header bits in use
  for (const isa::PackedField& f : hl) HB = std::max(HB, f.lsb + f.bits);

  Module m(kFrameSequencerModule,
           fmt::format(
               "Frame sequencer (docs/rtl-chip.md) for {0}: runs a frame program (isa/frames.hpp, docs/memory-system.md\n"
               "section 4.1). Each frame is a header word (kind [1:0]: 0 engine, 1 DMA, 2 PMU, 3 end; wait_engine,\n"
               "pending, wait_dma) and a payload of {1} (engine), {2} (DMA) or {3} (PMU) words. start_i fetches the\n"
               "header at prog_base_i through pf_*/pr_*, then the payload, and presents the frame to its unit until it is\n"
               "taken; the next frame is fetched after that (the units load every field on accept). An engine frame\n"
               "issues when the engine is idle and at most wait_dma DMA frames are outstanding (issued, done_o not yet\n"
               "seen); a DMA frame when the DMA is idle and, with wait_engine, the engine too; a PMU frame as a command to\n"
               "every PMU (prefetch: at once; barrier: when all its sectors are usable). The end frame finishes the\n"
               "program when the engine is idle and no DMA frame is outstanding: done_o pulses. A pending engine\n"
               "frame (the compiler could not encode the part) or a PMU frame without power gating is refused: error_o\n"
               "and the program ends there. Every busy cycle is counted in exactly one stat_* class (fetch, an issue,\n"
               "or the wait that holds the frame), so the classes sum to stat_cycles_o.",
               cfg.name, NW, DW, PW));
  m.clock_and_reset()
      .input("start_i", "1", "start the program at prog_base_i (ignored while busy)")
      .input("prog_base_i", "32", "word address of the program's first frame")
      .output("busy_o", "1", "a program runs")
      .output("done_o", "1", "one-cycle pulse: the program ended, the engine and the DMA are idle")
      .output("error_o", "1", "sticky: a refused frame, a fetch response without a request, a DMA done without a frame")
      .output("pf_valid_o", "1", "fetch request")
      .input("pf_ready_i", "1", "the request is taken")
      .output("pf_addr_o", "32", "word address of the request")
      .input("pr_valid_i", "1", "a fetched word (in request order)")
      .input("pr_data_i", "32", "its value")
      .output("words_o", str(MW * 32), "the frame's payload: word w in bits [w*32 +: 32]")
      .output("eng_valid_o", "1", "an engine frame is ready to issue")
      .input("eng_ready_i", "1", "the engine is idle (takes it)")
      .output("dma_valid_o", "1", "a DMA frame is ready to issue")
      .input("dma_ready_i", "1", "the DMA is idle (takes it)")
      .input("dma_done_i", "1", "the DMA finished a frame");
  if (pg)
    m.output("pmu_valid_o", "1", "a PMU command (prefetch or barrier)").input("pmu_ready_i", "1", "every PMU takes it");
  for (const auto& s : kSeqStats) m.output(fmt::format("stat_{}_o", s[0]), "32", s[1]);

  m.comment("State: fetching the frame at pc_q (header requested hreq_q / received hdr_ok_q, then req_q of len_q\n"
            "payload words requested and rcv_q received), a whole frame waiting to issue (full_q).");
  for (const char* n : {"busy_q", "fetch_q", "hreq_q", "hdr_ok_q", "full_q", "done_q", "err_q"}) m.reg(n, "1");
  m.reg("pc_q", "32", "word address of the frame's header");
  m.reg("hdr_q", str(HB), "the frame's header word (its used bits)");
  m.reg("len_q", wb, "payload words of the frame");
  m.reg("req_q", wb, "payload words requested");
  m.reg("rcv_q", wb, "payload words received");
  m.reg("outst_q", str(DB), "DMA frames issued and not done");
  m.memory("words_q", "32", str(MW), "the payload");
  for (const auto& s : kSeqStats) m.reg(fmt::format("st_{}_q", s[0]), "32");
  m.wire("kind", "2", "the frame's kind");
  m.wire("wait_engine", "1");
  m.wire("pending", "1");
  m.wire("wait_dma", str(DB));
  m.wire("rsp_hdr", "1", "the header arrives");
  m.wire("rsp_pay", "1", "a payload word arrives");
  m.wire("rsp_len", wb, "payload words of the arriving header's kind");
  m.wire("last_pay", "1", "the payload's last word arrives");
  m.wire("is_eng", "1");
  m.wire("is_dma", "1");
  m.wire("is_pmu", "1");
  m.wire("refused", "1", "a frame the sequencer must not run");
  m.wire("stop", "1", "the end frame or a refused one: wait for the units, then finish");
  m.wire("issue", "1", "the frame is taken by its unit");
  m.wire("dma_fire", "1");
  m.wire("finish", "1");
  m.blank();
  m.assign("kind", slice("hdr_q", f_kind, 2));
  m.assign("wait_engine", slice("hdr_q", f_we, 1));
  m.assign("pending", slice("hdr_q", f_pend, 1));
  m.assign("wait_dma", slice("hdr_q", f_wd, DB));
  m.assign("rsp_hdr", "pr_valid_i & fetch_q & hreq_q & ~hdr_ok_q");
  m.assign("rsp_pay", "pr_valid_i & fetch_q & hdr_ok_q & (rcv_q != req_q)");
  const std::string pk = slice("pr_data_i", f_kind, 2);
  m.assign("rsp_len", fmt::format("({0} == 2'd0) ? {1} : ({0} == 2'd1) ? {2} : ({0} == 2'd2) ? {3} : {4}", pk, lit(WB, NW),
                                  lit(WB, DW), lit(WB, PW), lit(WB, 0)));
  m.assign("last_pay", fmt::format("rsp_pay & (rcv_q == len_q - {})", lit(WB, 1)));
  m.assign("is_eng", "full_q & (kind == 2'd0)");
  m.assign("is_dma", "full_q & (kind == 2'd1)");
  m.assign("is_pmu", "full_q & (kind == 2'd2)");
  // Without power gating there is no PMU: a PMU frame is refused.
  m.assign("refused", pg ? "is_eng & pending" : "(is_eng & pending) | is_pmu");
  m.assign("stop", "(full_q & (kind == 2'd3)) | refused");
  m.assign("eng_valid_o", fmt::format("is_eng & ~pending & (outst_q <= wait_dma)"));
  m.assign("dma_valid_o", "is_dma & (~wait_engine | eng_ready_i)");
  if (pg) m.assign("pmu_valid_o", "is_pmu");
  m.assign("dma_fire", "dma_valid_o & dma_ready_i");
  m.assign("issue", std::string("(eng_valid_o & eng_ready_i) | dma_fire") + (pg ? " | (pmu_valid_o & pmu_ready_i)" : ""));
  m.assign("finish", fmt::format("stop & eng_ready_i & (outst_q == {})", lit(DB, 0)));
  m.assign("pf_valid_o", "fetch_q & (~hreq_q | (hdr_ok_q & (req_q != len_q)))");
  m.assign("pf_addr_o", fmt::format("hreq_q ? pc_q + 32'd1 + {} : pc_q", zext("req_q", WB, 32)));
  for (int w = 0; w < MW; ++w) m.assign(expr_slice("words_o", w, "32"), fmt::format("words_q[{}]", w));
  m.assign("busy_o", "busy_q");
  m.assign("done_o", "done_q");
  m.assign("error_o", "err_q");
  for (const auto& s : kSeqStats) m.assign(fmt::format("stat_{}_o", s[0]), fmt::format("st_{}_q", s[0]));
  m.blank();
  m.always_ff({if_("rsp_pay", {nb("words_q[rcv_q]", "pr_data_i")})});
  const auto inc = [](const std::string& r) { return nb("st_" + r + "_q", "st_" + r + "_q + 32'd1"); };
  Stmts reset{nb("busy_q", "1'b0"), nb("fetch_q", "1'b0"), nb("hreq_q", "1'b0"), nb("hdr_ok_q", "1'b0"),
              nb("full_q", "1'b0"), nb("done_q", "1'b0"), nb("err_q", "1'b0"), nb("pc_q", "32'd0"),
              nb("hdr_q", lit(HB, 0)), nb("len_q", lit(WB, 0)), nb("req_q", lit(WB, 0)), nb("rcv_q", lit(WB, 0)),
              nb("outst_q", lit(DB, 0))};
  Stmts clear_stats;
  for (const auto& s : kSeqStats) {
    reset.push_back(nb(fmt::format("st_{}_q", s[0]), "32'd0"));
    clear_stats.push_back(nb(fmt::format("st_{}_q", s[0]), "32'd0"));
  }
  Stmts start{nb("busy_q", "1'b1"), nb("fetch_q", "1'b1"), nb("hreq_q", "1'b0"), nb("hdr_ok_q", "1'b0"),
              nb("full_q", "1'b0"), nb("pc_q", "prog_base_i")};
  start.insert(start.end(), clear_stats.begin(), clear_stats.end());
  // One class per busy cycle (the stat_* sum is stat_cycles_o).
  Stmts classify{if_("~full_q", {inc("fetch")},
                     {if_("issue",
                          {if_("is_eng", {inc("engine")}, {if_("is_dma", {inc("dma")}, {inc("pmu")})})},
                          {if_("stop", {inc("drain")},
                               {if_("is_eng", {if_("~eng_ready_i", {inc("eng_busy")}, {inc("wait_dma")})},
                                    {if_("is_dma", {if_("wait_engine & ~eng_ready_i", {inc("wait_engine")}, {inc("dma_busy")})},
                                         {inc("pmu_wait")})})})})})};
  Stmts run{inc("cycles")};
  run.insert(run.end(), classify.begin(), classify.end());
  run.push_back(if_("pf_valid_o & pf_ready_i",
                    {if_("~hreq_q", {nb("hreq_q", "1'b1")}, {nb("req_q", fmt::format("req_q + {}", lit(WB, 1)))})}));
  run.push_back(if_("rsp_hdr", {nb("hdr_q", fmt::format("pr_data_i[{}:0]", HB - 1)), nb("hdr_ok_q", "1'b1"), nb("len_q", "rsp_len"),
                                if_(fmt::format("rsp_len == {}", lit(WB, 0)), {nb("fetch_q", "1'b0"), nb("full_q", "1'b1")})}));
  run.push_back(if_("rsp_pay", {nb("rcv_q", fmt::format("rcv_q + {}", lit(WB, 1)))}));
  run.push_back(if_("last_pay", {nb("fetch_q", "1'b0"), nb("full_q", "1'b1")}));
  run.push_back(if_("refused", {nb("err_q", "1'b1")}));
  run.push_back(if_("issue", {nb("full_q", "1'b0"), nb("fetch_q", "1'b1"), nb("hreq_q", "1'b0"), nb("hdr_ok_q", "1'b0"),
                              nb("req_q", lit(WB, 0)), nb("rcv_q", lit(WB, 0)),
                              nb("pc_q", fmt::format("pc_q + 32'd1 + {}", zext("len_q", WB, 32)))}));
  run.push_back(if_("finish", {nb("busy_q", "1'b0"), nb("full_q", "1'b0")}));
  m.always_ff_reset(
      reset,
      {nb("done_q", "busy_q & finish"),
       if_("pr_valid_i & ~(rsp_hdr | rsp_pay)", {nb("err_q", "1'b1")}),
       if_(fmt::format("dma_done_i & (outst_q == {})", lit(DB, 0)), {nb("err_q", "1'b1")}),
       if_("dma_fire & ~dma_done_i", {nb("outst_q", fmt::format("outst_q + {}", lit(DB, 1)))},
           {if_(fmt::format("~dma_fire & dma_done_i & (outst_q != {})", lit(DB, 0)),
                {nb("outst_q", fmt::format("outst_q - {}", lit(DB, 1)))})}),
       if_("start_i & ~busy_q", start, {if_("busy_q", run)})});
  return m;
}

Module build_chip(const AccelConfig& cfg) {
  const isa::FrameGeometry g = chip_frame_geometry(cfg);
  const bool pg = g.power_gating();
  const int MW = PayloadWords(g).max;
  const Module engine = build_engine(cfg), dma = build_dma(cfg), memsys = build_memsys(cfg);
  std::map<std::string, const Port*> eports, dports, mports;
  for (const Port& p : engine.ports()) eports[p.name] = &p;
  for (const Port& p : dma.ports()) dports[p.name] = &p;
  for (const Port& p : memsys.ports()) mports[p.name] = &p;
  const std::vector<SpmGeometry> mems = spm_memories(cfg);

  Module m(kChipModule,
           fmt::format(
               "The accelerator with its memory system (docs/rtl-chip.md) for {0}: the frame sequencer runs a frame\n"
               "program (engine, DMA and PMU frames) fetched through pf_*/pr_*; the compute engine computes on the {3}\n"
               "scratchpads of capsgen_memsys; the DMA moves operands and results between them and the off-chip memory\n"
               "(dram_*: valid/ready bursts, docs/rtl-dma.md){1}. The host writes the\n"
               "network's memory image into the off-chip memory and the program into the program memory, pulses start_i\n"
               "and waits for done_o. op_done_o / dma_done_o pulse when an engine / DMA frame finishes; the counters\n"
               "(stat_*, seq_*, cnt_* of the memories, dma_beats_*{2}) count since reset or start_i.\n"
               "error_o: the sequencer's, the engine's or the memory system's sticky error.",
               cfg.name, pg ? "; one PMU per memory drives the sectors' sleep requests from the PMU frames" : "",
               pg ? ", pmu_*" : "", upper(to_string(cfg.scratchpad.organization))));
  m.clock_and_reset()
      .input("start_i", "1", "start the program at prog_base_i (ignored while busy)")
      .input("prog_base_i", "32", "word address of the frame program")
      .output("busy_o", "1", "a program runs")
      .output("done_o", "1", "one-cycle pulse: the program ended")
      .output("error_o", "1", "sticky: a contract violation in the sequencer, the engine or the memory system")
      .output("pf_valid_o", "1", "program fetch request")
      .input("pf_ready_i", "1", "the request is taken")
      .output("pf_addr_o", "32", "its word address")
      .input("pr_valid_i", "1", "a fetched program word (in request order)")
      .input("pr_data_i", "32", "its value");
  // The DMA's off-chip port, renamed dram_*.
  static const char* kOffchip[] = {"req_valid_o", "req_ready_i", "req_addr_o", "req_len_o", "req_write_o", "req_size_o",
                                   "rd_valid_i",  "rd_ready_o",  "rd_data_i",  "wr_valid_o", "wr_ready_i",  "wr_data_o",
                                   "wr_strb_o",   "wr_last_o"};
  for (const char* p : kOffchip) {
    const Port& dp = *dports.at(p);
    const std::string n = std::string("dram_") + p;
    if (dp.dir == PortDir::kInput) m.input(n, dp.width, "off-chip: " + dp.comment);
    else m.output(n, dp.width, "off-chip: " + dp.comment);
  }
  m.output("op_busy_o", "1", "the engine runs a frame")
      .output("op_done_o", "1", "one-cycle pulse: an engine frame finished (stat_* hold its counts)")
      .output("dma_busy_o", "1", "the DMA runs a frame")
      .output("dma_done_o", "1", "one-cycle pulse: a DMA frame finished");
  static const char* kEngineStats[] = {"stat_cycles_o", "stat_vectors_o", "stat_stall_data_o", "stat_stall_tile_o",
                                       "stat_stall_out_o", "stat_wr_wait_o"};
  for (const char* p : kEngineStats) m.output(p, eports.at(p)->width, "engine: " + eports.at(p)->comment);
  for (const auto& s : kSeqStats) m.output(fmt::format("seq_{}_o", s[0]), "32", std::string("sequencer: ") + s[1]);
  m.output("dma_beats_read_o", "32", "DMA: off-chip read beats since reset")
      .output("dma_beats_written_o", "32", "DMA: off-chip write beats since reset");
  for (const Port& p : memsys.ports())
    if (p.name.rfind("cnt_", 0) == 0) m.output(p.name, p.width, "memory system: " + p.comment);
  if (pg)
    for (const SpmGeometry& sg : mems) {
      const std::string sc = str(std::max(1, sg.mem.sectors));
      m.output(fmt::format("sector_asleep_{}_o", sg.name), sc, fmt::format("{} memory: per sector 1 = asleep or waking", sg.name))
          .output(fmt::format("pmu_{}_asleep_cycles_o", sg.name), str(32 * std::max(1, sg.mem.sectors)),
                  fmt::format("{} memory: per sector s in [s*32 +: 32], cycles asleep or waking", sg.name))
          .output(fmt::format("pmu_{}_wake_count_o", sg.name), "32", fmt::format("{} memory: sector wake-ups", sg.name))
          .output(fmt::format("pmu_{}_stall_cycles_o", sg.name), "32",
                  fmt::format("{} memory: cycles a barrier waited for its sectors", sg.name));
    }

  m.comment("The frame sequencer and the units its frames drive.");
  m.lint_off("UNUSEDSIGNAL",
             "payload words past a kind's fields (the payload buffer holds the longest kind) and the high bits of "
             "engine fields wider than the engine's port");
  m.wire("seq_words", str(MW * 32), "the current frame's payload (isa::*_frame_layout)");
  m.lint_on("UNUSEDSIGNAL");
  for (const char* n : {"seq_eng_valid", "eng_ready", "seq_dma_valid", "dma_ready", "dma_done", "seq_error", "eng_error", "mem_error"})
    m.wire(n, "1");
  if (pg) {
    m.wire("seq_pmu_valid", "1");
    m.wire("pmu_ready", "1", "every PMU takes the command (a barrier: all its sectors are usable)");
    for (const SpmGeometry& sg : mems) m.wire(fmt::format("pmu_ready_{}", sg.name), "1");
    m.lint_off("UNUSEDSIGNAL", "the PMUs' usable_o: memsys decides grants from the sleep acknowledgements itself");
    for (const SpmGeometry& sg : mems) m.wire(fmt::format("usable_{}", sg.name), str(std::max(1, sg.mem.sectors)));
    m.lint_on("UNUSEDSIGNAL");
  }
  // Engine <-> memsys, DMA <-> memsys.
  static const char* kEngineMem[][2] = {{"drd_en_o", "drd_en_i"},   {"drd_vec_o", "drd_vec_i"},   {"drd_addr_o", "drd_addr_i"},
                                        {"drd_data_i", "drd_data_o"}, {"wrd_en_o", "wrd_en_i"},     {"wrd_addr_o", "wrd_addr_i"},
                                        {"wrd_data_i", "wrd_data_o"}, {"brd_en_o", "brd_en_i"},     {"brd_addr_o", "brd_addr_i"},
                                        {"brd_data_i", "brd_data_o"}, {"wr_en_o", "wr_en_i"},       {"wr_vec_o", "wr_vec_i"},
                                        {"wr_mask_o", "wr_mask_i"},   {"wr_addr_o", "wr_addr_i"},   {"wr_data_o", "wr_data_i"},
                                        {"wr_ready_i", "wr_ready_o"}};
  for (const auto& [ep, mp] : kEngineMem) {
    if (eports.at(ep)->width != mports.at(mp)->width)
      throw std::logic_error(fmt::format("build_chip: engine {} is {} bits, memsys {} {}", ep, eports.at(ep)->width, mp,
                                         mports.at(mp)->width));
    m.wire("e_" + std::string(ep).substr(0, std::string(ep).size() - 2), eports.at(ep)->width);
  }
  static const char* kDmaSpm[][2] = {{"spm_req_o", "spm_req_i"},   {"spm_gnt_i", "spm_gnt_o"},     {"spm_we_o", "spm_we_i"},
                                     {"spm_addr_o", "spm_addr_i"}, {"spm_size_o", "spm_size_i"},   {"spm_wdata_o", "spm_wdata_i"},
                                     {"spm_rvalid_i", "spm_rvalid_o"}, {"spm_rdata_i", "spm_rdata_o"}};
  for (const auto& [dp, mp] : kDmaSpm) {
    if (dports.at(dp)->width != mports.at(mp)->width)
      throw std::logic_error(fmt::format("build_chip: DMA {} is {} bits, memsys {} {}", dp, dports.at(dp)->width, mp,
                                         mports.at(mp)->width));
    m.wire("d_" + std::string(dp).substr(0, std::string(dp).size() - 2), dports.at(dp)->width);
  }
  if (pg)
    for (const SpmGeometry& sg : mems) {
      const std::string sc = str(std::max(1, sg.mem.sectors));
      m.wire(fmt::format("sleep_req_{}", sg.name), sc);
      m.wire(fmt::format("sleep_ack_{}", sg.name), sc);
    }
  m.blank();
  m.assign("error_o", "seq_error | eng_error | mem_error");
  m.assign("dma_done_o", "dma_done");
  if (pg) {
    std::string all;
    for (const SpmGeometry& sg : mems) all += (all.empty() ? "" : " & ") + fmt::format("pmu_ready_{}", sg.name);
    m.assign("pmu_ready", all);
    for (const SpmGeometry& sg : mems) m.assign(fmt::format("sector_asleep_{}_o", sg.name), fmt::format("sleep_ack_{}", sg.name));
  }

  Instance& s = m.instance(kFrameSequencerModule, "u_seq");
  s.connect("clk_i", "clk_i").connect("rst_ni", "rst_ni").connect("start_i", "start_i").connect("prog_base_i", "prog_base_i");
  s.connect("busy_o", "busy_o").connect("done_o", "done_o").connect("error_o", "seq_error");
  for (const char* p : {"pf_valid_o", "pf_ready_i", "pf_addr_o", "pr_valid_i", "pr_data_i"}) s.connect(p, p);
  s.connect("words_o", "seq_words");
  s.connect("eng_valid_o", "seq_eng_valid").connect("eng_ready_i", "eng_ready");
  s.connect("dma_valid_o", "seq_dma_valid").connect("dma_ready_i", "dma_ready").connect("dma_done_i", "dma_done");
  if (pg) s.connect("pmu_valid_o", "seq_pmu_valid").connect("pmu_ready_i", "pmu_ready");
  for (const auto& st : kSeqStats) s.connect(fmt::format("stat_{}_o", st[0]), fmt::format("seq_{}_o", st[0]));

  m.comment("The engine: descriptor fields sliced out of the payload (isa::engine_descriptor_layout).");
  Instance& e = m.instance(kEngineModule, "u_engine");
  e.connect("clk_i", "clk_i").connect("rst_ni", "rst_ni");
  e.connect("desc_valid_i", "seq_eng_valid").connect("desc_ready_o", "eng_ready");
  connect_engine_descriptor(e, engine, "seq_words");
  for (const auto& [ep, mp] : kEngineMem) e.connect(ep, "e_" + std::string(ep).substr(0, std::string(ep).size() - 2));
  e.connect("busy_o", "op_busy_o").connect("done_o", "op_done_o").connect("error_o", "eng_error");
  for (const char* p : kEngineStats) e.connect(p, p);

  m.comment("The DMA: descriptor fields sliced out of the payload (isa::dma_frame_layout).");
  Instance& d = m.instance(kDmaModule, "u_dma");
  d.connect("clk_i", "clk_i").connect("rst_ni", "rst_ni");
  d.connect("desc_valid_i", "seq_dma_valid").connect("desc_ready_o", "dma_ready");
  int dfields = 0;
  for (const isa::PackedField& f : isa::dma_frame_layout(g)) {
    const std::string port = "desc_" + f.name + "_i";
    const auto it = dports.find(port);
    if (it == dports.end() || std::stoi(it->second->width) != f.bits)
      throw std::logic_error("build_chip: capsgen_dma has no " + port + " of " + str(f.bits) + " bits");
    d.connect(port, slice("seq_words", f, f.bits));
    ++dfields;
  }
  int dexpected = 0;
  for (const Port& p : dma.ports())
    if (p.dir == PortDir::kInput && p.name.rfind("desc_", 0) == 0 && p.name != "desc_valid_i") ++dexpected;
  if (dfields != dexpected) throw std::logic_error(fmt::format("build_chip: {} DMA frame fields for {} DMA inputs", dfields, dexpected));
  d.connect("busy_o", "dma_busy_o").connect("done_o", "dma_done");
  for (const char* p : kOffchip) d.connect(p, std::string("dram_") + p);
  for (const auto& [dp, mp] : kDmaSpm) d.connect(dp, "d_" + std::string(dp).substr(0, std::string(dp).size() - 2));
  d.connect("beats_read_o", "dma_beats_read_o").connect("beats_written_o", "dma_beats_written_o");

  m.comment(fmt::format("The memory system: {} scratchpads behind the engine's and the DMA's ports.",
                        upper(to_string(cfg.scratchpad.organization))));
  Instance& ms = m.instance(kMemsysModule, "u_memsys");
  ms.connect("clk_i", "clk_i").connect("rst_ni", "rst_ni");
  for (const auto& [ep, mp] : kEngineMem) ms.connect(mp, "e_" + std::string(ep).substr(0, std::string(ep).size() - 2));
  for (const auto& [dp, mp] : kDmaSpm) ms.connect(mp, "d_" + std::string(dp).substr(0, std::string(dp).size() - 2));
  if (pg)
    for (const SpmGeometry& sg : mems)
      ms.connect(fmt::format("sleep_req_{}_i", sg.name), fmt::format("sleep_req_{}", sg.name))
          .connect(fmt::format("sleep_ack_{}_o", sg.name), fmt::format("sleep_ack_{}", sg.name));
  for (const Port& p : memsys.ports())
    if (p.name.rfind("cnt_", 0) == 0) ms.connect(p.name, p.name);
  ms.connect("err_o", "mem_error");

  if (pg) {
    m.comment("One PMU per memory: the PMU frame's awake mask and prefetch/barrier (isa::pmu_frame_layout).");
    const std::vector<isa::PackedField> pl = isa::pmu_frame_layout(g);
    const char* const names[isa::kFrameMemories] = {"data", "weight", "acc", "shared"};
    for (const SpmGeometry& sg : mems) {
      int mi = -1;
      for (int i = 0; i < isa::kFrameMemories; ++i)
        if (sg.name == names[i]) mi = i;
      if (mi < 0) throw std::logic_error("build_chip: memory " + sg.name + " has no PMU frame field");
      Instance& p = m.instance(pmu_module(sg), "u_pmu_" + sg.name);
      p.connect("clk_i", "clk_i").connect("rst_ni", "rst_ni");
      p.connect("cmd_valid_i", "seq_pmu_valid").connect("cmd_ready_o", fmt::format("pmu_ready_{}", sg.name));
      p.connect("cmd_awake_i", slice("seq_words", field(pl, std::string("awake_") + names[mi]), g.sectors[mi]));
      p.connect("cmd_wait_i", slice("seq_words", field(pl, "wait"), 1));
      p.connect("sleep_req_o", fmt::format("sleep_req_{}", sg.name)).connect("sleep_ack_i", fmt::format("sleep_ack_{}", sg.name));
      p.connect("usable_o", fmt::format("usable_{}", sg.name));
      p.connect("asleep_cycles_o", fmt::format("pmu_{}_asleep_cycles_o", sg.name))
          .connect("wake_count_o", fmt::format("pmu_{}_wake_count_o", sg.name))
          .connect("stall_cycles_o", fmt::format("pmu_{}_stall_cycles_o", sg.name));
    }
  }
  return m;
}

std::string chip_summary(const AccelConfig& cfg) {
  std::string s = fmt::format("# capsgen_chip of {} (docs/rtl-chip.md)\n", cfg.name);
  const std::string why = chip_unsupported_reason(cfg);
  if (!why.empty()) return s + "supported 0\nreason " + why + "\n";
  const isa::FrameGeometry g = chip_frame_geometry(cfg);
  s += "supported 1\n";
  s += fmt::format("engine_words {}\ndma_words {}\npmu_words {}\n", isa::payload_words(isa::FrameKind::kEngine, g),
                   isa::payload_words(isa::FrameKind::kDma, g), g.power_gating() ? isa::payload_words(isa::FrameKind::kPmu, g) : 0);
  s += fmt::format("spm_addr_bits {}\nlen_bits {}\nsize_bits {}\nmax_size {}\n", g.spm_addr_bits, g.len_bits, g.size_bits,
                   g.max_size);
  s += fmt::format("power_gating {}\nsectors_data {}\nsectors_weight {}\nsectors_acc {}\nsectors_shared {}\n",
                   g.power_gating() ? 1 : 0, g.sectors[0], g.sectors[1], g.sectors[2], g.sectors[3]);
  s += fmt::format("organization {}\n", to_string(cfg.scratchpad.organization));
  const DmaGeometry d = dma_geometry(cfg);
  s += fmt::format("word_bytes {}\nmax_burst {}\nlatency_cycles {}\nclock_mhz {}\n", d.word_bytes, d.max_burst,
                   cfg.offchip.latency_cycles, cfg.clock.target_mhz);
  return s;
}

void emit_chip(const AccelConfig& cfg, Design& design) {
  if (chip_unsupported_reason(cfg).empty()) {
    design.add_module(build_frame_sequencer(cfg));
    design.add_module(build_chip(cfg));
  }
  design.add_other_file(kChipSummaryName, chip_summary(cfg));
}

}  // namespace capsgen::emit
