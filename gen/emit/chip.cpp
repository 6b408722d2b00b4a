#include "emit/chip.hpp"

#include <cctype>

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>

#include "emit/activation_internal.hpp"
#include "emit/dma.hpp"
#include "emit/engine.hpp"
#include "emit/memsys.hpp"
#include "emit/pmu.hpp"
#include "emit/scratchpad.hpp"
#include "emit/sequencer.hpp"
#include "isa/engine_descriptor.hpp"

namespace capsgen::emit {

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

// Bits [w*32 + lsb +: bits] of a packed frame held in `words` (word 0 = the payload's first word).
Expr field_bits(const Expr& words, const isa::PackedField& f, int bits) {
  const int lo = f.word * 32 + f.lsb;
  return bits == 1 ? words[lo] : words.slice(lo + bits - 1, lo);
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

std::string chip_unsupported_reason(const AccelConfig& cfg) {
  if (std::string why = memsys_unsupported_reason(cfg); !why.empty()) return why;
  // DRAM stores codes of up to 16 bits in 1 or 2 bytes; the DMA moves bias (psum) codes as 4 bytes.
  if (cfg.widths.psum <= 16)
    return fmt::format("widths.psum: {}-bit bias codes are stored in {} in DRAM; the chip's DMA moves bias codes of "
                       "4 bytes into the 32-bit lanes (widening narrower bias codes is not built)",
                       cfg.widths.psum, cfg.widths.psum <= 8 ? "1 byte" : "2 bytes");
  for (const SpmGeometry& m : spm_memories(cfg))
    if (m.power_gating && m.mem.sectors > isa::kAwakeFieldSectors)
      return fmt::format("scratchpad.{}.sectors: {} sectors, more than a PMU frame's {}-bit awake field holds", m.name,
                         m.mem.sectors, isa::kAwakeFieldSectors);
  return "";
}

namespace {

// The frame header's fields (isa::frame_header_layout), all in its one word.
struct FrameHeader {
  isa::PackedField kind, wait_engine, pending, wait_dma;
  int used_bits = 0;  // header bits in use
};

FrameHeader frame_header() {
  const auto& layout = isa::frame_header_layout();
  FrameHeader h{field(layout, "kind"), field(layout, "wait_engine"), field(layout, "pending"), field(layout, "wait_dma")};
  if (h.kind.word || h.wait_engine.word || h.pending.word || h.wait_dma.word)
    throw std::logic_error("chip: the frame header is one word");
  for (const isa::PackedField& f : layout) h.used_bits = std::max(h.used_bits, f.lsb + f.bits);
  return h;
}

std::string frame_sequencer_description(const AccelConfig& cfg, const PayloadWords& words) {
  return fmt::format(
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
      cfg.name, words.engine, words.dma, words.pmu);
}

// The frame sequencer's ports; the PMU handshake only with power gating.
struct FrameSeqPorts {
  Expr start_i, prog_base_i, busy_o, done_o, error_o;
  Expr pf_valid_o, pf_ready_i, pf_addr_o, pr_valid_i, pr_data_i, words_o;
  Expr eng_valid_o, eng_ready_i, dma_valid_o, dma_ready_i, dma_done_i;
  std::optional<Expr> pmu_valid_o, pmu_ready_i;
  std::vector<Expr> stats;  // stat_<class>_o, in kSeqStats order
};

FrameSeqPorts declare_frame_sequencer_ports(Module& m, bool power_gating, const PayloadWords& words) {
  m.clock_and_reset();
  FrameSeqPorts ports{
      m.input("start_i", 1, "start the program at prog_base_i (ignored while busy)"),
      m.input("prog_base_i", 32, "word address of the program's first frame"),
      m.output("busy_o", 1, "a program runs"),
      m.output("done_o", 1, "one-cycle pulse: the program ended, the engine and the DMA are idle"),
      m.output("error_o", 1, "sticky: a refused frame, a fetch response without a request, a DMA done without a frame"),
      m.output("pf_valid_o", 1, "fetch request"),
      m.input("pf_ready_i", 1, "the request is taken"),
      m.output("pf_addr_o", 32, "word address of the request"),
      m.input("pr_valid_i", 1, "a fetched word (in request order)"),
      m.input("pr_data_i", 32, "its value"),
      m.output("words_o", words.max * 32, "the frame's payload: word w in bits [w*32 +: 32]"),
      m.output("eng_valid_o", 1, "an engine frame is ready to issue"),
      m.input("eng_ready_i", 1, "the engine is idle (takes it)"),
      m.output("dma_valid_o", 1, "a DMA frame is ready to issue"),
      m.input("dma_ready_i", 1, "the DMA is idle (takes it)"),
      m.input("dma_done_i", 1, "the DMA finished a frame"),
      std::nullopt,
      std::nullopt,
      {}};
  if (power_gating) {
    ports.pmu_valid_o = m.output("pmu_valid_o", 1, "a PMU command (prefetch or barrier)");
    ports.pmu_ready_i = m.input("pmu_ready_i", 1, "every PMU takes it");
  }
  for (const auto& stat : kSeqStats) ports.stats.push_back(m.output(fmt::format("stat_{}_o", stat[0]), 32, stat[1]));
  return ports;
}

// The sequencer's named constants: fetch states, frame kinds and busy-cycle classes.
struct FrameSeqConstants {
  Expr st_idle, st_header_req, st_header_wait, st_payload, st_frame;
  Expr kind_engine, kind_dma, kind_pmu, kind_end;
  std::vector<Expr> cycle_classes;  // Cycle<Class> of kSeqStats[1..] (every stat but "cycles")
};

// "eng_busy" -> "EngBusy".
std::string upper_camel(const std::string& snake) {
  std::string out;
  bool up = true;
  for (char c : snake) {
    if (c == '_') {
      up = true;
      continue;
    }
    out += up ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    up = false;
  }
  return out;
}

FrameSeqConstants declare_frame_sequencer_constants(Module& m) {
  m.comment("Fetch states (state_q).");
  const Expr st_idle = m.constant("StIdle", 3, 0, "no program runs");
  const Expr st_header_req = m.constant("StHeaderReq", 3, 1, "requesting the header word of the frame at frame_addr_q");
  const Expr st_header_wait = m.constant("StHeaderWait", 3, 2, "waiting for the header word");
  const Expr st_payload = m.constant("StPayload", 3, 3, "requesting and receiving the payload words");
  const Expr st_frame = m.constant("StFrame", 3, 4, "the whole frame is offered to its unit (an end frame: the units drain)");
  m.comment("Frame kinds (the header's kind field).");
  const Expr kind_engine = m.constant("KindEngine", 2, 0), kind_dma = m.constant("KindDma", 2, 1);
  const Expr kind_pmu = m.constant("KindPmu", 2, 2), kind_end = m.constant("KindEnd", 2, 3);
  m.comment("Busy-cycle classes (cycle_class): each cycle of a program counts in exactly one stat_*_o.");
  const int classes = static_cast<int>(std::size(kSeqStats)) - 1;
  std::vector<Expr> cycle_classes;
  for (int i = 0; i < classes; ++i)
    cycle_classes.push_back(m.constant("Cycle" + upper_camel(kSeqStats[i + 1][0]), clog2(classes), i));
  return FrameSeqConstants{st_idle,  st_header_req, st_header_wait, st_payload, st_frame,
                           kind_engine, kind_dma,   kind_pmu,       kind_end,   cycle_classes};
}

// The sequencer's registers (each with its next state) and the wires of its decode.
struct FrameSeqState {
  Flop state, frame_addr, header, payload_len, requested, received, dma_outstanding, error;
  std::vector<Flop> stats;  // stat_<class>, in kSeqStats order
  Expr done_q;
  Memory payload_q;
  Expr cycle_class;
  Expr frame_kind, frame_wait_engine, frame_pending, frame_wait_dma;
  Expr header_arrives, payload_word_arrives, arriving_payload_len, last_payload_word, unexpected_response;
  Expr frame_held, engine_frame, dma_frame, pmu_frame, frame_refused, program_stops, frame_taken, dma_frame_taken;
  Expr program_finishes, unexpected_dma_done;

  // The counter of stat class `name` (a kSeqStats entry).
  const Flop& stat(const std::string& name) const {
    for (std::size_t i = 0; i < stats.size(); ++i)
      if (name == kSeqStats[i][0]) return stats[i];
    throw std::logic_error("chip: no sequencer stat " + name);
  }
};

FrameSeqState declare_frame_sequencer_state(Module& m, const PayloadWords& words, const FrameHeader& header,
                                            const FrameSeqConstants& c) {
  const int count_bits = clog2(words.max + 1), wait_dma_bits = header.wait_dma.bits;
  m.blank();
  std::vector<Flop> stats;
  const auto stat_flops = [&] {
    for (const auto& stat : kSeqStats) stats.push_back(m.flop(fmt::format("stat_{}", stat[0]), 32));
    return stats;
  };
  // Braced initialization evaluates in order: the declarations print in this order.
  return FrameSeqState{
      m.flop("state", 3, "fetch state (St*)"),
      m.flop("frame_addr", 32, "word address of the frame's header"),
      m.flop("header", header.used_bits, "the frame's header word (its used bits)"),
      m.flop("payload_len", count_bits, "payload words of the frame"),
      m.flop("requested", count_bits, "payload words requested"),
      m.flop("received", count_bits, "payload words received"),
      m.flop("dma_outstanding", wait_dma_bits, "DMA frames issued and not done"),
      m.flop("error", 1, "sticky error_o"),
      stat_flops(),
      m.reg("done_q", 1, "done_o"),
      m.memory("payload_q", 32, words.max, "the payload"),
      m.reg("cycle_class", c.cycle_classes.front().width(), "the class of this busy cycle (Cycle*)"),
      m.wire("frame_kind", 2, "the header's fields"),
      m.wire("frame_wait_engine", 1),
      m.wire("frame_pending", 1),
      m.wire("frame_wait_dma", wait_dma_bits),
      m.wire("header_arrives", 1, "the requested header word arrives"),
      m.wire("payload_word_arrives", 1, "a requested payload word arrives"),
      m.wire("arriving_payload_len", count_bits, "payload words of the arriving header's kind"),
      m.wire("last_payload_word", 1, "the payload's last word arrives (every word was requested)"),
      m.wire("unexpected_response", 1, "a fetched word nobody asked for"),
      m.wire("frame_held", 1, "a whole frame is held (StFrame)"),
      m.wire("engine_frame", 1, "it is an engine frame"),
      m.wire("dma_frame", 1, "a DMA frame"),
      m.wire("pmu_frame", 1, "a PMU frame"),
      m.wire("frame_refused", 1, "a frame the sequencer must not run"),
      m.wire("program_stops", 1, "the end frame or a refused one: wait for the units, then finish"),
      m.wire("frame_taken", 1, "the frame is taken by its unit"),
      m.wire("dma_frame_taken", 1),
      m.wire("program_finishes", 1, "the program ends: done_o next cycle"),
      m.wire("unexpected_dma_done", 1, "a DMA done without an outstanding frame")};
}

// The header's fields, the fetch responses, which unit the frame goes to and when it issues, the
// fetch requests and the outputs.
void decode_frame(Module& m, const FrameSeqPorts& ports, const FrameSeqState& s, const FrameSeqConstants& c,
                  const PayloadWords& words, const FrameHeader& header) {
  const int count_bits = s.payload_len.q.width();
  const bool power_gating = ports.pmu_valid_o.has_value();
  m.blank();
  m.assign(s.frame_kind, field_bits(s.header.q, header.kind, 2));
  m.assign(s.frame_wait_engine, field_bits(s.header.q, header.wait_engine, 1));
  m.assign(s.frame_pending, field_bits(s.header.q, header.pending, 1));
  m.assign(s.frame_wait_dma, field_bits(s.header.q, header.wait_dma, header.wait_dma.bits));
  m.assign(s.header_arrives, ports.pr_valid_i & (s.state.q == c.st_header_wait));
  m.assign(s.payload_word_arrives, ports.pr_valid_i & (s.state.q == c.st_payload) & (s.received.q != s.requested.q));
  const Expr arriving_kind = field_bits(ports.pr_data_i, header.kind, 2);
  m.assign(s.arriving_payload_len, ternary_chain({{arriving_kind == c.kind_engine, lit(count_bits, words.engine)},
                                                  {arriving_kind == c.kind_dma, lit(count_bits, words.dma)},
                                                  {arriving_kind == c.kind_pmu, lit(count_bits, words.pmu)}},
                                                 lit(count_bits, 0)));
  m.assign(s.last_payload_word, s.payload_word_arrives & (s.requested.q == s.payload_len.q) &
                                     (s.received.q == bare(s.payload_len.q - lit(count_bits, 1))));
  m.assign(s.unexpected_response, ports.pr_valid_i & ~(s.header_arrives | s.payload_word_arrives));
  m.assign(s.frame_held, s.state.q == c.st_frame);
  m.assign(s.engine_frame, s.frame_held & (s.frame_kind == c.kind_engine));
  m.assign(s.dma_frame, s.frame_held & (s.frame_kind == c.kind_dma));
  m.assign(s.pmu_frame, s.frame_held & (s.frame_kind == c.kind_pmu));
  // Without power gating there is no PMU: a PMU frame is refused.
  m.assign(s.frame_refused, power_gating ? s.engine_frame & s.frame_pending : (s.engine_frame & s.frame_pending) | s.pmu_frame);
  m.assign(s.program_stops, (s.frame_held & (s.frame_kind == c.kind_end)) | s.frame_refused);
  m.assign(ports.eng_valid_o, s.engine_frame & ~s.frame_pending & (s.dma_outstanding.q <= s.frame_wait_dma));
  m.assign(ports.dma_valid_o, s.dma_frame & (~s.frame_wait_engine | ports.eng_ready_i));
  if (power_gating) m.assign(*ports.pmu_valid_o, s.pmu_frame);
  m.assign(s.dma_frame_taken, ports.dma_valid_o & ports.dma_ready_i);
  Expr taken = (ports.eng_valid_o & ports.eng_ready_i) | s.dma_frame_taken;
  if (power_gating) taken = taken | (*ports.pmu_valid_o & *ports.pmu_ready_i);
  m.assign(s.frame_taken, taken);
  const Expr no_dma_outstanding = s.dma_outstanding.q == lit(s.dma_outstanding.q.width(), 0);
  m.assign(s.program_finishes, s.program_stops & ports.eng_ready_i & no_dma_outstanding);
  m.assign(s.unexpected_dma_done, ports.dma_done_i & no_dma_outstanding);
  m.assign(ports.pf_valid_o, (s.state.q == c.st_header_req) | ((s.state.q == c.st_payload) & (s.requested.q != s.payload_len.q)));
  m.assign(ports.pf_addr_o, ternary(s.state.q == c.st_header_req, s.frame_addr.q,
                                    s.frame_addr.q + lit(32, 1) + zext(s.requested.q, 32)));
  // One assign per word, not a loop into a wide vector: Verilator 5.006 cannot compile the sampled copy
  // of a wide vector whose slice a $past reads (a PMU's cmd_awake_i comes from these words).
  for (int w = 0; w < words.max; ++w) m.assign(ports.words_o.part(w, 32), s.payload_q.word(w));
  m.assign(ports.busy_o, s.state.q != c.st_idle);
  m.assign(ports.done_o, s.done_q);
  m.assign(ports.error_o, s.error.q);
  for (std::size_t i = 0; i < s.stats.size(); ++i) m.assign(ports.stats[i], s.stats[i].q);
}

// The fetch FSM: header, payload, the frame offered until taken (then the next frame) or, for the
// end frame or a refused one, until the program finishes.
void fetch_fsm(Module& m, const FrameSeqPorts& ports, const FrameSeqState& s, const FrameSeqConstants& c) {
  const int count_bits = s.payload_len.q.width();
  const Expr zero_count = lit(count_bits, 0), one_count = lit(count_bits, 1);
  m.blank();
  m.comment("Next fetch state.");
  m.always_comb(
      {blk(s.state.d, s.state.q), blk(s.frame_addr.d, s.frame_addr.q), blk(s.header.d, s.header.q),
       blk(s.payload_len.d, s.payload_len.q), blk(s.requested.d, s.requested.q), blk(s.received.d, s.received.q),
       case_(s.state.q,
             {{c.st_idle, {if_(ports.start_i, {blk(s.state.d, c.st_header_req), blk(s.frame_addr.d, ports.prog_base_i)})}},
              {c.st_header_req, {if_(ports.pf_ready_i, {blk(s.state.d, c.st_header_wait)})}},
              {c.st_header_wait,
               {if_(ports.pr_valid_i,
                    {blk(s.state.d, ternary(s.arriving_payload_len == zero_count, c.st_frame, c.st_payload)),
                     blk(s.header.d, ports.pr_data_i.slice(s.header.q.width() - 1, 0)),
                     blk(s.payload_len.d, s.arriving_payload_len), blk(s.requested.d, zero_count),
                     blk(s.received.d, zero_count)})}},
              {c.st_payload,
               {if_(ports.pf_valid_o & ports.pf_ready_i, {blk(s.requested.d, s.requested.q + one_count)}),
                if_(s.payload_word_arrives,
                    {blk(s.received.d, s.received.q + one_count), if_(s.last_payload_word, {blk(s.state.d, c.st_frame)})})}},
              {c.st_frame,
               {if_(s.frame_taken,
                    {blk(s.state.d, c.st_header_req),
                     blk(s.frame_addr.d, s.frame_addr.q + lit(32, 1) + zext(s.payload_len.q, 32))},
                    {if_(s.program_finishes, {blk(s.state.d, c.st_idle)})})}}},
             {blk(s.state.d, c.st_idle)})});
}

// DMA frames outstanding, and the sticky error.
void status_logic(Module& m, const FrameSeqPorts& ports, const FrameSeqState& s) {
  const Expr& out = s.dma_outstanding.q;
  const Expr one = lit(out.width(), 1), zero_out = lit(out.width(), 0);
  m.blank();
  m.comment("DMA frames outstanding (issued, done_i not yet seen) and the sticky error.");
  m.always_comb({blk(s.dma_outstanding.d, out),
                 if_(s.dma_frame_taken & ~ports.dma_done_i, {blk(s.dma_outstanding.d, out + one)},
                     {if_(~s.dma_frame_taken & ports.dma_done_i & (out != zero_out), {blk(s.dma_outstanding.d, out - one)})}),
                 blk(s.error.d, s.error.q | s.unexpected_response | s.unexpected_dma_done | s.frame_refused)});
}

// The class of a busy cycle: fetching, an issue by kind, the drain after the end frame, or the wait
// that holds the frame.
void classify_busy_cycle(Module& m, const FrameSeqPorts& ports, const FrameSeqState& s, const FrameSeqConstants& c) {
  const bool power_gating = ports.pmu_valid_o.has_value();
  const auto cls = [&](const std::string& name) {
    for (std::size_t i = 1; i < std::size(kSeqStats); ++i)
      if (name == kSeqStats[i][0]) return blk(s.cycle_class, c.cycle_classes[i - 1]);
    throw std::logic_error("chip: no cycle class " + name);
  };
  m.blank();
  m.comment("The class of this busy cycle.");
  m.always_comb(
      {cls("fetch"),
       if_(s.frame_held,
           {case_(s.frame_kind,
                  {{c.kind_engine, {if_(s.frame_pending, {cls("drain")},
                                        {if_(s.frame_taken, {cls("engine")},
                                             {if_(~ports.eng_ready_i, {cls("eng_busy")}, {cls("wait_dma")})})})}},
                   {c.kind_dma, {if_(s.frame_taken, {cls("dma")},
                                     {if_(s.frame_wait_engine & ~ports.eng_ready_i, {cls("wait_engine")}, {cls("dma_busy")})})}},
                   {c.kind_pmu, power_gating ? Stmts{if_(s.frame_taken, {cls("pmu")}, {cls("pmu_wait")})} : Stmts{cls("drain")}}},
                  {cls("drain")})})});
}

// The stat counters: cleared at start, then each busy cycle counts in stat_cycles and its class.
void stat_counters(Module& m, const FrameSeqPorts& ports, const FrameSeqState& s, const FrameSeqConstants& c) {
  const Expr one = lit(32, 1);
  Stmts hold, clear;
  std::vector<std::pair<Expr, Stmts>> count;
  for (std::size_t i = 0; i < s.stats.size(); ++i) {
    hold.push_back(blk(s.stats[i].d, s.stats[i].q));
    clear.push_back(blk(s.stats[i].d, lit(32, 0)));
    if (i > 0) count.push_back({c.cycle_classes[i - 1], {blk(s.stats[i].d, s.stats[i].q + one)}});
  }
  const Flop& cycles = s.stat("cycles");
  Stmts body = hold;
  body.push_back(if_((s.state.q == c.st_idle) & ports.start_i, clear,
                     {if_(s.state.q != c.st_idle, {blk(cycles.d, cycles.q + one), case_(s.cycle_class, std::move(count), {stmt_comment("cycle_class holds a Cycle* code")})})}));
  m.blank();
  m.comment("Next stat counters.");
  m.always_comb(std::move(body));
}

// The registers: reset, then q <= d; the payload words (no reset: read only after written).
void frame_sequencer_registers(Module& m, const FrameSeqPorts& ports, const FrameSeqState& s, const FrameSeqConstants& c) {
  std::vector<const Flop*> flops{&s.state,    &s.frame_addr,      &s.header, &s.payload_len, &s.requested,
                                 &s.received, &s.dma_outstanding, &s.error};
  for (const Flop& f : s.stats) flops.push_back(&f);
  Stmts reset{nb(s.state.q, c.st_idle)}, update;
  for (const Flop* f : flops) {
    if (f != &s.state) reset.push_back(nb(f->q, f->q.width() == 1 ? bit(false) : lit(f->q.width(), 0)));
    update.push_back(nb(f->q, f->d));
  }
  reset.push_back(nb(s.done_q, bit(false)));
  update.push_back(nb(s.done_q, s.program_finishes));
  m.blank();
  m.always_ff_reset(reset, update);
  m.comment("The payload words (no reset: a word is read only after it was written).");
  m.always_ff({if_(s.payload_word_arrives, {nb(s.payload_q[s.received.q], ports.pr_data_i)})});
}

// The handshake promises of the sequencer's outputs (docs/rtl-assertions.md).
void frame_sequencer_assertions(Module& m, const FrameSeqPorts& ports) {
  m.assertion("a_fetch_held", ~past(ports.pf_valid_o & ~ports.pf_ready_i) | (ports.pf_valid_o & (ports.pf_addr_o == past(ports.pf_addr_o))),
              "A fetch request that was not taken stays, at the same address.");
  m.assertion("a_engine_frame_held", ~past(ports.eng_valid_o & ~ports.eng_ready_i) | ports.eng_valid_o,
              "An engine frame that was offered and not taken stays offered.");
  Expr two_units = ports.eng_valid_o & ports.dma_valid_o;
  if (ports.pmu_valid_o) two_units = two_units | ((ports.eng_valid_o | ports.dma_valid_o) & *ports.pmu_valid_o);
  m.assertion("a_one_unit", ~two_units, "A frame is offered to one unit at a time.");
  m.assertion("a_done_ends_program", ~ports.done_o | (past(ports.busy_o) & ~ports.busy_o),
              "done_o pulses in the first cycle after a program.");
  m.assertion("a_error_sticky", ~past(ports.error_o) | ports.error_o, "error_o stays set until reset.");
}

}  // namespace

Module build_frame_sequencer(const AccelConfig& cfg) {
  const isa::FrameGeometry g = isa::frame_geometry(cfg);
  const PayloadWords words(g);
  const FrameHeader header = frame_header();
  Module m(kFrameSequencerModule, frame_sequencer_description(cfg, words));
  const FrameSeqPorts ports = declare_frame_sequencer_ports(m, g.power_gating(), words);
  const FrameSeqConstants c = declare_frame_sequencer_constants(m);
  const FrameSeqState state = declare_frame_sequencer_state(m, words, header, c);
  decode_frame(m, ports, state, c, words, header);
  fetch_fsm(m, ports, state, c);
  status_logic(m, ports, state);
  classify_busy_cycle(m, ports, state, c);
  stat_counters(m, ports, state, c);
  frame_sequencer_registers(m, ports, state, c);
  frame_sequencer_assertions(m, ports);
  return m;
}

namespace {

// The width of a child's port as a number (the children are built with numeric widths).
Dim port_width(const Port& p) {
  if (p.bits != 0) return p.bits;
  if (p.width.empty() || p.width.find_first_not_of("0123456789") != std::string::npos)
    throw std::logic_error("chip: port " + p.name + " has the width " + p.width + ", not a number");
  return std::stoll(p.width);
}

// A module's ports by name.
std::map<std::string, const Port*> ports_by_name(const Module& m) {
  std::map<std::string, const Port*> ports;
  for (const Port& p : m.ports()) ports[p.name] = &p;
  return ports;
}

// The port's name without its _i/_o suffix (the chip's wire names: e_<engine port>, d_<DMA port>).
std::string without_direction(const std::string& port) { return port.substr(0, port.size() - 2); }

// The DMA's off-chip port (the chip's pins dram_<port>), the engine's counters (pins of the same
// name), and the engine's and the DMA's ports to memsys (engine or DMA port, memsys port).
const char* const kOffchipPorts[] = {"req_valid_o", "req_ready_i", "req_addr_o", "req_len_o", "req_write_o",
                                     "req_size_o",  "rd_valid_i",  "rd_ready_o", "rd_data_i", "wr_valid_o",
                                     "wr_ready_i",  "wr_data_o",   "wr_strb_o",  "wr_last_o"};
const char* const kEngineStatPorts[] = {"stat_cycles_o",     "stat_vectors_o",   "stat_stall_data_o",
                                        "stat_stall_tile_o", "stat_stall_out_o", "stat_wr_wait_o"};
const char* const kEngineMemsysPorts[][2] = {
    {"drd_en_o", "drd_en_i"},     {"drd_vec_o", "drd_vec_i"},   {"drd_addr_o", "drd_addr_i"}, {"drd_data_i", "drd_data_o"},
    {"wrd_en_o", "wrd_en_i"},     {"wrd_addr_o", "wrd_addr_i"}, {"wrd_data_i", "wrd_data_o"}, {"brd_en_o", "brd_en_i"},
    {"brd_addr_o", "brd_addr_i"}, {"brd_data_i", "brd_data_o"}, {"wr_en_o", "wr_en_i"},       {"wr_vec_o", "wr_vec_i"},
    {"wr_mask_o", "wr_mask_i"},   {"wr_addr_o", "wr_addr_i"},   {"wr_data_o", "wr_data_i"},   {"wr_ready_i", "wr_ready_o"}};
const char* const kDmaMemsysPorts[][2] = {{"spm_req_o", "spm_req_i"},       {"spm_gnt_i", "spm_gnt_o"},
                                          {"spm_we_o", "spm_we_i"},         {"spm_addr_o", "spm_addr_i"},
                                          {"spm_size_o", "spm_size_i"},     {"spm_wdata_o", "spm_wdata_i"},
                                          {"spm_rvalid_i", "spm_rvalid_o"}, {"spm_rdata_i", "spm_rdata_o"}};

// The chip's units, built from the same config: the instances' connections are checked against them.
struct ChipUnits {
  Module sequencer, engine, dma, memsys;
  std::vector<SpmGeometry> memories;  // spm_memories: one PMU each with power gating
};

// One memory's power-management pins: its sleeping sectors and its PMU's counters.
struct MemoryPower {
  Expr sector_asleep_o, asleep_cycles_o, wake_count_o, stall_cycles_o;
};

// The host's pins: start, done, the program fetch.
struct HostPins {
  Expr start_i, prog_base_i, busy_o, done_o, error_o, pf_valid_o, pf_ready_i, pf_addr_o, pr_valid_i, pr_data_i;
};

// The units' status outputs.
struct StatusPins {
  Expr op_busy_o, op_done_o, dma_busy_o, dma_done_o;
};

// The chip's pins. The tables' pins are keyed by the unit's port they connect to.
struct ChipPins {
  HostPins host;
  std::map<std::string, Expr> offchip;  // dram_<DMA port>, by the DMA's port
  StatusPins status;
  std::map<std::string, Expr> engine_stats;  // by the engine's port (the same name)
  std::vector<Expr> sequencer_stats;         // seq_<class>_o, in kSeqStats order
  Expr dma_beats_read_o, dma_beats_written_o;
  std::map<std::string, Expr> counters;  // memsys's cnt_* outputs, the same names
  std::vector<MemoryPower> power;        // power gating: per memory
};

std::string chip_description(const AccelConfig& cfg, bool power_gating) {
  return fmt::format(
      "The accelerator with its memory system (docs/rtl-chip.md) for {0}: the frame sequencer runs a frame\n"
      "program (engine, DMA and PMU frames) fetched through pf_*/pr_*; the compute engine computes on the {3}\n"
      "scratchpads of capsgen_memsys; the DMA moves operands and results between them and the off-chip memory\n"
      "(dram_*: valid/ready bursts, docs/rtl-dma.md){1}. The host writes the\n"
      "network's memory image into the off-chip memory and the program into the program memory, pulses start_i\n"
      "and waits for done_o. op_done_o / dma_done_o pulse when an engine / DMA frame finishes; the counters\n"
      "(stat_*, seq_*, cnt_* of the memories, dma_beats_*{2}) count since reset or start_i.\n"
      "error_o: the sequencer's, the engine's or the memory system's sticky error.",
      cfg.name, power_gating ? "; one PMU per memory drives the sectors' sleep requests from the PMU frames" : "",
      power_gating ? ", pmu_*" : "", upper(to_string(cfg.scratchpad.organization)));
}

HostPins declare_host_pins(Module& m) {
  m.clock_and_reset();
  const Expr start_i = m.input("start_i", 1, "start the program at prog_base_i (ignored while busy)");
  const Expr prog_base_i = m.input("prog_base_i", 32, "word address of the frame program");
  const Expr busy_o = m.output("busy_o", 1, "a program runs");
  const Expr done_o = m.output("done_o", 1, "one-cycle pulse: the program ended");
  const Expr error_o =
      m.output("error_o", 1, "sticky: a contract violation in the sequencer, the engine or the memory system");
  const Expr pf_valid_o = m.output("pf_valid_o", 1, "program fetch request");
  const Expr pf_ready_i = m.input("pf_ready_i", 1, "the request is taken");
  const Expr pf_addr_o = m.output("pf_addr_o", 32, "its word address");
  const Expr pr_valid_i = m.input("pr_valid_i", 1, "a fetched program word (in request order)");
  const Expr pr_data_i = m.input("pr_data_i", 32, "its value");
  return HostPins{start_i, prog_base_i, busy_o, done_o, error_o, pf_valid_o, pf_ready_i, pf_addr_o, pr_valid_i, pr_data_i};
}

// The DMA's off-chip port, renamed dram_*.
std::map<std::string, Expr> declare_offchip_pins(Module& m, const Module& dma) {
  const auto dma_ports = ports_by_name(dma);
  std::map<std::string, Expr> pins;
  for (const char* port : kOffchipPorts) {
    const Port& dp = *dma_ports.at(port);
    const std::string name = std::string("dram_") + port;
    pins.emplace(port, dp.dir == PortDir::kInput ? m.input(name, port_width(dp), "off-chip: " + dp.comment)
                                                 : m.output(name, port_width(dp), "off-chip: " + dp.comment));
  }
  return pins;
}

// Power gating: per memory its sleeping sectors and its PMU's counters.
std::vector<MemoryPower> declare_power_pins(Module& m, const std::vector<SpmGeometry>& memories) {
  std::vector<MemoryPower> power;
  for (const SpmGeometry& sg : memories) {
    const int sectors = std::max(1, sg.mem.sectors);
    const Expr asleep = m.output(fmt::format("sector_asleep_{}_o", sg.name), sectors,
                                 fmt::format("{} memory: per sector 1 = asleep or waking", sg.name));
    const Expr asleep_cycles =
        m.output(fmt::format("pmu_{}_asleep_cycles_o", sg.name), 32 * sectors,
                 fmt::format("{} memory: per sector s in [s*32 +: 32], cycles asleep or waking", sg.name));
    const Expr wakes =
        m.output(fmt::format("pmu_{}_wake_count_o", sg.name), 32, fmt::format("{} memory: sector wake-ups", sg.name));
    const Expr stalls = m.output(fmt::format("pmu_{}_stall_cycles_o", sg.name), 32,
                                 fmt::format("{} memory: cycles a barrier waited for its sectors", sg.name));
    power.push_back(MemoryPower{asleep, asleep_cycles, wakes, stalls});
  }
  return power;
}

// The chip's pins: the host's, the DMA's off-chip port, the units' status and counters.
ChipPins declare_chip_pins(Module& m, const ChipUnits& units, bool power_gating) {
  const HostPins host = declare_host_pins(m);
  const std::map<std::string, Expr> offchip = declare_offchip_pins(m, units.dma);
  const StatusPins status{m.output("op_busy_o", 1, "the engine runs a frame"),
                          m.output("op_done_o", 1, "one-cycle pulse: an engine frame finished (stat_* hold its counts)"),
                          m.output("dma_busy_o", 1, "the DMA runs a frame"),
                          m.output("dma_done_o", 1, "one-cycle pulse: a DMA frame finished")};
  const auto engine_ports = ports_by_name(units.engine);
  std::map<std::string, Expr> engine_stats;
  for (const char* port : kEngineStatPorts) {
    const Port& ep = *engine_ports.at(port);
    engine_stats.emplace(port, m.output(port, port_width(ep), "engine: " + ep.comment));
  }
  std::vector<Expr> sequencer_stats;
  for (const auto& stat : kSeqStats)
    sequencer_stats.push_back(m.output(fmt::format("seq_{}_o", stat[0]), 32, std::string("sequencer: ") + stat[1]));
  const Expr beats_read = m.output("dma_beats_read_o", 32, "DMA: off-chip read beats since reset");
  const Expr beats_written = m.output("dma_beats_written_o", 32, "DMA: off-chip write beats since reset");
  std::map<std::string, Expr> counters;
  for (const Port& mp : units.memsys.ports())
    if (mp.name.rfind("cnt_", 0) == 0) counters.emplace(mp.name, m.output(mp.name, port_width(mp), "memory system: " + mp.comment));
  std::vector<MemoryPower> power = power_gating ? declare_power_pins(m, units.memories) : std::vector<MemoryPower>{};
  return ChipPins{host, offchip, status, engine_stats, sequencer_stats, beats_read, beats_written, counters, power};
}

// Per memory (power gating): its PMU's ready and usable outputs, and the sleep handshake between
// the PMU and memsys.
struct PowerWires {
  std::vector<Expr> pmu_ready, usable, sleep_req, sleep_ack;
};

// The wires between the units; the tables' wires are keyed by the unit's port they connect to.
struct ChipWires {
  Expr seq_words, seq_eng_valid, eng_ready, seq_dma_valid, dma_ready, dma_done, seq_error, eng_error, mem_error;
  std::optional<Expr> seq_pmu_valid, pmu_ready;
  std::map<std::string, Expr> engine_memsys;  // e_<port>, by the engine's port
  std::map<std::string, Expr> dma_memsys;     // d_<port>, by the DMA's port
  PowerWires power;
};

// A wire for each port pair of `table` (unit port, memsys port), named prefix + the unit's port
// without its direction; the two ports must have one width.
template <std::size_t N>
std::map<std::string, Expr> declare_port_pair_wires(Module& m, const char* what, const Module& unit, const Module& memsys,
                                                    const char* const (&table)[N][2], const std::string& prefix) {
  const auto unit_ports = ports_by_name(unit), memsys_ports = ports_by_name(memsys);
  std::map<std::string, Expr> wires;
  for (const auto& [up, mp] : table) {
    const Dim width = port_width(*unit_ports.at(up));
    if (width.value() != port_width(*memsys_ports.at(mp)).value())
      throw std::logic_error(fmt::format("build_chip: {} {} is {} bits, memsys {} {}", what, up, width.value(), mp,
                                         memsys_ports.at(mp)->width));
    wires.emplace(up, m.wire(prefix + without_direction(up), width));
  }
  return wires;
}

ChipWires declare_chip_wires(Module& m, const ChipUnits& units, bool power_gating, int payload_words) {
  m.comment("The frame sequencer and the units its frames drive.");
  m.lint_off("UNUSEDSIGNAL",
             "payload words past a kind's fields (the payload buffer holds the longest kind)");
  const Expr seq_words = m.wire("seq_words", payload_words * 32, "the current frame's payload (isa::*_frame_layout)");
  m.lint_on("UNUSEDSIGNAL");
  const Expr seq_eng_valid = m.wire("seq_eng_valid", 1), eng_ready = m.wire("eng_ready", 1);
  const Expr seq_dma_valid = m.wire("seq_dma_valid", 1), dma_ready = m.wire("dma_ready", 1);
  const Expr dma_done = m.wire("dma_done", 1), seq_error = m.wire("seq_error", 1);
  const Expr eng_error = m.wire("eng_error", 1), mem_error = m.wire("mem_error", 1);
  ChipWires wires{seq_words, seq_eng_valid, eng_ready, seq_dma_valid, dma_ready, dma_done, seq_error, eng_error, mem_error,
              std::nullopt, std::nullopt, {}, {}, {}};
  if (power_gating) {
    wires.seq_pmu_valid = m.wire("seq_pmu_valid", 1);
    wires.pmu_ready = m.wire("pmu_ready", 1, "every PMU takes the command (a barrier: all its sectors are usable)");
    for (const SpmGeometry& sg : units.memories) wires.power.pmu_ready.push_back(m.wire(fmt::format("pmu_ready_{}", sg.name), 1));
    m.lint_off("UNUSEDSIGNAL", "the PMUs' usable_o: memsys decides grants from the sleep acknowledgements itself");
    for (const SpmGeometry& sg : units.memories)
      wires.power.usable.push_back(m.wire(fmt::format("usable_{}", sg.name), std::max(1, sg.mem.sectors)));
    m.lint_on("UNUSEDSIGNAL");
  }
  wires.engine_memsys = declare_port_pair_wires(m, "engine", units.engine, units.memsys, kEngineMemsysPorts, "e_");
  wires.dma_memsys = declare_port_pair_wires(m, "DMA", units.dma, units.memsys, kDmaMemsysPorts, "d_");
  if (power_gating)
    for (const SpmGeometry& sg : units.memories) {
      wires.power.sleep_req.push_back(m.wire(fmt::format("sleep_req_{}", sg.name), std::max(1, sg.mem.sectors)));
      wires.power.sleep_ack.push_back(m.wire(fmt::format("sleep_ack_{}", sg.name), std::max(1, sg.mem.sectors)));
    }
  return wires;
}

// The chip's error, the DMA's done, the PMUs' joint ready and the sleeping sectors.
void chip_status_outputs(Module& m, const ChipPins& pins, const ChipWires& wires) {
  m.blank();
  m.assign(pins.host.error_o, wires.seq_error | wires.eng_error | wires.mem_error);
  m.assertion("a_memory_error_free", ~wires.mem_error,
              "The memory system drops no access and its scratchpads flag none: no access to a sleeping or waking\n"
              "sector (the PMUs wake a sector before its frames use it), none beyond a sector, no port conflict.");
  m.assign(pins.status.dma_done_o, wires.dma_done);
  if (!wires.pmu_ready) return;
  Expr all_ready = wires.power.pmu_ready.front();
  for (std::size_t i = 1; i < wires.power.pmu_ready.size(); ++i) all_ready = all_ready & wires.power.pmu_ready[i];
  m.assign(*wires.pmu_ready, all_ready);
  for (std::size_t i = 0; i < pins.power.size(); ++i) m.assign(pins.power[i].sector_asleep_o, wires.power.sleep_ack[i]);
}

void instantiate_frame_sequencer(Module& m, const ChipUnits& units, const ChipPins& pins, const ChipWires& wires) {
  Instance& s = m.instance(units.sequencer, "u_seq");
  s.connect("clk_i", m.clk()).connect("rst_ni", m.rst_n()).connect("start_i", pins.host.start_i);
  s.connect("prog_base_i", pins.host.prog_base_i);
  s.connect("busy_o", pins.host.busy_o).connect("done_o", pins.host.done_o).connect("error_o", wires.seq_error);
  s.connect("pf_valid_o", pins.host.pf_valid_o).connect("pf_ready_i", pins.host.pf_ready_i).connect("pf_addr_o", pins.host.pf_addr_o);
  s.connect("pr_valid_i", pins.host.pr_valid_i).connect("pr_data_i", pins.host.pr_data_i);
  s.connect("words_o", wires.seq_words);
  s.connect("eng_valid_o", wires.seq_eng_valid).connect("eng_ready_i", wires.eng_ready);
  s.connect("dma_valid_o", wires.seq_dma_valid).connect("dma_ready_i", wires.dma_ready).connect("dma_done_i", wires.dma_done);
  if (wires.seq_pmu_valid) s.connect("pmu_valid_o", *wires.seq_pmu_valid).connect("pmu_ready_i", *wires.pmu_ready);
  for (std::size_t i = 0; i < std::size(kSeqStats); ++i)
    s.connect(fmt::format("stat_{}_o", kSeqStats[i][0]), pins.sequencer_stats[i]);
}

void instantiate_engine(Module& m, const ChipUnits& units, const ChipPins& pins, const ChipWires& wires) {
  m.comment("The engine: descriptor fields sliced out of the payload (isa::engine_descriptor_layout).");
  Instance& e = m.instance(units.engine, "u_engine");
  e.connect("clk_i", m.clk()).connect("rst_ni", m.rst_n());
  e.connect("desc_valid_i", wires.seq_eng_valid).connect("desc_ready_o", wires.eng_ready);
  connect_engine_descriptor(e, units.engine, wires.seq_words);
  for (const auto& [engine_port, memsys_port] : kEngineMemsysPorts) e.connect(engine_port, wires.engine_memsys.at(engine_port));
  e.connect("busy_o", pins.status.op_busy_o).connect("done_o", pins.status.op_done_o).connect("error_o", wires.eng_error);
  for (const char* port : kEngineStatPorts) e.connect(port, pins.engine_stats.at(port));
}

// The DMA's descriptor inputs, one per field of the DMA frame (isa::dma_frame_layout) and no other.
void connect_dma_descriptor(Instance& d, const Module& dma, const isa::FrameGeometry& g, const Expr& words) {
  const auto dma_ports = ports_by_name(dma);
  int fields = 0;
  for (const isa::PackedField& f : isa::dma_frame_layout(g)) {
    const std::string port = "desc_" + f.name + "_i";
    const auto it = dma_ports.find(port);
    if (it == dma_ports.end() || port_width(*it->second).value() != f.bits)
      throw std::logic_error("build_chip: capsgen_dma has no " + port + " of " + str(f.bits) + " bits");
    d.connect(port, field_bits(words, f, f.bits));
    ++fields;
  }
  int expected = 0;
  for (const Port& p : dma.ports())
    if (p.dir == PortDir::kInput && p.name.rfind("desc_", 0) == 0 && p.name != "desc_valid_i") ++expected;
  if (fields != expected)
    throw std::logic_error(fmt::format("build_chip: {} DMA frame fields for {} DMA inputs", fields, expected));
}

void instantiate_dma(Module& m, const ChipUnits& units, const isa::FrameGeometry& g, const ChipPins& pins, const ChipWires& wires) {
  m.comment("The DMA: descriptor fields sliced out of the payload (isa::dma_frame_layout).");
  Instance& d = m.instance(units.dma, "u_dma");
  d.connect("clk_i", m.clk()).connect("rst_ni", m.rst_n());
  d.connect("desc_valid_i", wires.seq_dma_valid).connect("desc_ready_o", wires.dma_ready);
  connect_dma_descriptor(d, units.dma, g, wires.seq_words);
  d.connect("busy_o", pins.status.dma_busy_o).connect("done_o", wires.dma_done);
  for (const char* port : kOffchipPorts) d.connect(port, pins.offchip.at(port));
  for (const auto& [dma_port, memsys_port] : kDmaMemsysPorts) d.connect(dma_port, wires.dma_memsys.at(dma_port));
  d.connect("beats_read_o", pins.dma_beats_read_o).connect("beats_written_o", pins.dma_beats_written_o);
}

void instantiate_memsys(Module& m, const AccelConfig& cfg, const ChipUnits& units, const ChipPins& pins, const ChipWires& wires) {
  m.comment(fmt::format("The memory system: {} scratchpads behind the engine's and the DMA's ports.",
                        upper(to_string(cfg.scratchpad.organization))));
  Instance& ms = m.instance(units.memsys, "u_memsys");
  ms.connect("clk_i", m.clk()).connect("rst_ni", m.rst_n());
  for (const auto& [engine_port, memsys_port] : kEngineMemsysPorts) ms.connect(memsys_port, wires.engine_memsys.at(engine_port));
  for (const auto& [dma_port, memsys_port] : kDmaMemsysPorts) ms.connect(memsys_port, wires.dma_memsys.at(dma_port));
  for (std::size_t i = 0; i < wires.power.sleep_req.size(); ++i) {
    const std::string& name = units.memories[i].name;
    ms.connect(fmt::format("sleep_req_{}_i", name), wires.power.sleep_req[i])
        .connect(fmt::format("sleep_ack_{}_o", name), wires.power.sleep_ack[i]);
  }
  for (const Port& port : units.memsys.ports())
    if (port.name.rfind("cnt_", 0) == 0) ms.connect(port.name, pins.counters.at(port.name));
  ms.connect("err_o", wires.mem_error);
}

// One PMU per memory, commanded by the PMU frame's awake mask and prefetch/barrier bit.
void instantiate_pmus(Module& m, const ChipUnits& units, const isa::FrameGeometry& g, const ChipPins& pins, const ChipWires& wires) {
  m.comment("One PMU per memory: the PMU frame's awake mask and prefetch/barrier (isa::pmu_frame_layout).");
  const std::vector<isa::PackedField> layout = isa::pmu_frame_layout(g);
  const char* const names[isa::kFrameMemories] = {"data", "weight", "acc", "shared"};
  for (std::size_t i = 0; i < units.memories.size(); ++i) {
    const SpmGeometry& sg = units.memories[i];
    int frame_memory = -1;
    for (int k = 0; k < isa::kFrameMemories; ++k)
      if (sg.name == names[k]) frame_memory = k;
    if (frame_memory < 0) throw std::logic_error("build_chip: memory " + sg.name + " has no PMU frame field");
    Instance& pmu = m.instance(build_pmu(sg), "u_pmu_" + sg.name);
    pmu.connect("clk_i", m.clk()).connect("rst_ni", m.rst_n());
    pmu.connect("cmd_valid_i", *wires.seq_pmu_valid).connect("cmd_ready_o", wires.power.pmu_ready[i]);
    pmu.connect("cmd_awake_i", field_bits(wires.seq_words, field(layout, std::string("awake_") + names[frame_memory]),
                                          g.sectors[frame_memory]));
    pmu.connect("cmd_wait_i", field_bits(wires.seq_words, field(layout, "wait"), 1));
    pmu.connect("sleep_req_o", wires.power.sleep_req[i]).connect("sleep_ack_i", wires.power.sleep_ack[i]);
    pmu.connect("usable_o", wires.power.usable[i]);
    pmu.connect("asleep_cycles_o", pins.power[i].asleep_cycles_o)
        .connect("wake_count_o", pins.power[i].wake_count_o)
        .connect("stall_cycles_o", pins.power[i].stall_cycles_o);
  }
}

}  // namespace

Module build_chip(const AccelConfig& cfg) {
  const isa::FrameGeometry g = isa::frame_geometry(cfg);
  const bool power_gating = g.power_gating();
  const ChipUnits units{build_frame_sequencer(cfg), build_engine(cfg), build_dma(cfg), build_memsys(cfg), spm_memories(cfg)};
  Module m(kChipModule, chip_description(cfg, power_gating));
  const ChipPins pins = declare_chip_pins(m, units, power_gating);
  const ChipWires wires = declare_chip_wires(m, units, power_gating, PayloadWords(g).max);
  chip_status_outputs(m, pins, wires);
  instantiate_frame_sequencer(m, units, pins, wires);
  instantiate_engine(m, units, pins, wires);
  instantiate_dma(m, units, g, pins, wires);
  instantiate_memsys(m, cfg, units, pins, wires);
  if (power_gating) instantiate_pmus(m, units, g, pins, wires);
  return m;
}

// chip.json (schemas/chip.schema.json): the frame format and the off-chip side of capsgen_chip
// (docs/rtl-chip.md), read by tb/frame_seq_tb.cpp and tb/chip_tb.cpp.
nlohmann::json chip_summary(const AccelConfig& cfg) {
  const std::string why = chip_unsupported_reason(cfg);
  if (!why.empty()) return {{"supported", false}, {"reason", why}};
  const isa::FrameGeometry g = isa::frame_geometry(cfg);
  const DmaGeometry d = dma_geometry(cfg);
  return {{"supported", true},
          {"engine_words", isa::payload_words(isa::FrameKind::kEngine, g)},
          {"dma_words", isa::payload_words(isa::FrameKind::kDma, g)},
          {"pmu_words", g.power_gating() ? isa::payload_words(isa::FrameKind::kPmu, g) : 0},
          {"spm_addr_bits", g.spm_addr_bits},
          {"len_bits", g.len_bits},
          {"size_bits", g.size_bits},
          {"max_size", g.max_size},
          {"power_gating", g.power_gating()},
          {"sectors_data", g.sectors[0]},
          {"sectors_weight", g.sectors[1]},
          {"sectors_acc", g.sectors[2]},
          {"sectors_shared", g.sectors[3]},
          {"organization", to_string(cfg.scratchpad.organization)},
          {"word_bytes", d.word_bytes},
          {"max_burst", d.max_burst},
          {"latency_cycles", cfg.offchip.latency_cycles},
          {"clock_mhz", cfg.clock.target_mhz}};
}

void emit_chip(const AccelConfig& cfg, Design& design) {
  if (chip_unsupported_reason(cfg).empty()) {
    design.add_module(build_frame_sequencer(cfg));
    design.add_module(build_chip(cfg));
  }
  design.add_summary(kChipSummaryName, chip_summary(cfg));
}

}  // namespace capsgen::emit
