#include "emit/sequencer.hpp"

#include <fmt/format.h>

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "emit/engine.hpp"
#include "isa/engine_descriptor.hpp"

namespace capsgen::emit {

Module build_sequencer(const AccelConfig& cfg) {
  const int NW = isa::engine_descriptor_words(), WB = clog2(NW + 1);
  const int AW = 32;  // bits of a word address, a program word and a statistics counter
  if (NW < 2) throw std::logic_error("build_sequencer: a packed descriptor of fewer than 2 words");
  Module m(kSequencerModule,
           fmt::format(
               "Program sequencer (docs/rtl-sequencer.md) for {0}: runs a program of packed descriptors\n"
               "(isa::pack_engine_program: {1} words of 32 bits each, the last descriptor's kind 3 ends the program)\n"
               "on the compute engine. start_i (while idle) fetches the descriptor at word address prog_base_i through\n"
               "the fetch port (pf_*: requests, any number outstanding; pr_*: the words, in request order, any\n"
               "latency), presents it on desc_words_o with desc_valid_o until the engine takes it (desc_ready_i),\n"
               "and fetches the next one while the engine runs (the engine loads every descriptor field on accept,\n"
               "so the words may change under a running descriptor). After the end marker it waits until the engine\n"
               "is idle, pulses done_o and goes idle. No network-specific state: the program is the network.\n"
               "error_o (sticky): a fetch response without an outstanding request.\n"
               "stat_ops_o counts the descriptors handed to the engine (the one running is number stat_ops_o - 1),\n"
               "stat_cycles_o the cycles from start_i to done_o, stat_fetch_wait_o the cycles the engine was idle\n"
               "waiting for a fetch (the first descriptor's fetch included).",
               cfg.name, NW));
  m.clock_and_reset();
  const Expr start_i = m.input("start_i", 1, "start the program at prog_base_i (ignored while busy)");
  const Expr prog_base_i = m.input("prog_base_i", AW, "word address of the program's first descriptor");
  const Expr busy_o = m.output("busy_o", 1, "a program runs");
  const Expr done_o = m.output("done_o", 1, "one-cycle pulse: the program ended and the engine is idle");
  const Expr error_o = m.output("error_o", 1, "sticky: a fetch response without a request");
  const Expr pf_valid_o = m.output("pf_valid_o", 1, "fetch request");
  const Expr pf_ready_i = m.input("pf_ready_i", 1, "the request is taken");
  const Expr pf_addr_o = m.output("pf_addr_o", AW, "word address of the request");
  const Expr pr_valid_i = m.input("pr_valid_i", 1, "a fetched word (in request order)");
  const Expr pr_data_i = m.input("pr_data_i", AW, "its value");
  const Expr desc_valid_o = m.output("desc_valid_o", 1, "desc_words_o holds a whole descriptor");
  const Expr desc_ready_i = m.input("desc_ready_i", 1, "the engine takes it (the engine is idle)");
  const Expr desc_words_o =
      m.output("desc_words_o", NW * AW, "the descriptor: word w in bits [w*32 +: 32] (isa::engine_descriptor_layout)");
  const Expr stat_ops_o = m.output("stat_ops_o", AW, "descriptors handed to the engine");
  const Expr stat_cycles_o = m.output("stat_cycles_o", AW, "cycles since start_i (frozen at done_o)");
  const Expr stat_fetch_wait_o = m.output("stat_fetch_wait_o", AW, "cycles the engine waited for a fetched descriptor");

  m.comment("Sequencer states (state_q).");
  const Expr st_idle = m.constant("StIdle", 2, 0, "no program runs");
  const Expr st_fetch = m.constant("StFetch", 2, 1, "fetching the words of the descriptor at desc_addr_q");
  const Expr st_offer = m.constant("StOffer", 2, 2, "the whole descriptor is offered to the engine");
  const Expr st_drain = m.constant("StDrain", 2, 3, "the end marker is fetched: waiting until the engine is idle");
  FlopGroup group(m);
  const Flop state = group.flop("state", 2);
  const Flop desc_addr = group.flop("desc_addr", AW, "word address of the descriptor being fetched");
  const Flop requested = group.flop("words_requested", WB, "words of the descriptor requested");
  const Flop received = group.flop("words_received", WB, "words of the descriptor received");
  const Flop done = group.flop("done", 1, "the program ended in the previous cycle");
  const Flop error = group.flop("error", 1, "sticky: a fetch response without a request");
  const Flop ops = group.flop("ops", AW, "descriptors handed to the engine");
  const Flop prog_cycles = group.flop("prog_cycles", AW, "cycles since start_i");
  const Flop fetch_wait = group.flop("fetch_wait", AW, "cycles the engine waited for a descriptor");
  const Memory words_q = m.memory("words_q", AW, NW, "the descriptor's words");
  const Expr fetching = m.wire("fetching", 1, "state StFetch");
  const Expr rsp_ok = m.wire("rsp_ok", 1, "a response that was requested");
  const Expr last_word = m.wire("last_word", 1, "the descriptor's last word arrives");
  const Expr is_end = m.wire("is_end", 1, "word 0 (received first) holds the end marker");
  const Expr accept = m.wire("accept", 1, "the engine takes the descriptor");
  const Expr finish = m.wire("finish", 1, "end marker fetched and the engine idle");
  m.blank();
  m.assign(fetching, state.q == st_fetch);
  m.assign(rsp_ok, pr_valid_i & fetching & (received.q != requested.q));
  m.assign(last_word, rsp_ok & (received.q == lit(WB, NW - 1)));
  m.assign(is_end, words_q.word(0).slice(1, 0) == lit(2, int(isa::kEngineKindEnd)));
  m.assign(accept, (state.q == st_offer) & desc_ready_i);
  m.assign(finish, (state.q == st_drain) & desc_ready_i);
  m.assign(pf_valid_o, fetching & (requested.q != lit(WB, NW)));
  m.assign(pf_addr_o, desc_addr.q + zext(requested.q, AW));
  m.assign(desc_valid_o, state.q == st_offer);
  for (int w = 0; w < NW; ++w) m.assign(desc_words_o.part(w, AW), words_q.word(w));
  m.assign(busy_o, state.q != st_idle);
  m.assign(done_o, done.q);
  m.assign(error_o, error.q);
  m.assign(stat_ops_o, ops.q);
  m.assign(stat_cycles_o, prog_cycles.q);
  m.assign(stat_fetch_wait_o, fetch_wait.q);
  m.blank();
  m.always_ff({if_(rsp_ok, {nb(words_q[received.q], pr_data_i)})});
  const Expr zero_word = lit(AW, 0), one_word = lit(AW, 1), zero_count = lit(WB, 0), one_count = lit(WB, 1);
  const Stmt count_cycle = blk(prog_cycles.d, prog_cycles.q + one_word);
  const std::vector<Flop>& flops = group.flops();
  Stmts next = hold_flops(flops);
  next.push_back(blk(done.d, finish));
  next.push_back(if_(pr_valid_i & ~rsp_ok, {blk(error.d, bit(true))}));
  next.push_back(
      case_(state.q, {{st_idle,
                       {if_(start_i, {blk(state.d, st_fetch), blk(desc_addr.d, prog_base_i),
                                      blk(requested.d, zero_count), blk(received.d, zero_count), blk(ops.d, zero_word),
                                      blk(prog_cycles.d, zero_word), blk(fetch_wait.d, zero_word)})}},
                      {st_fetch,
                       {count_cycle, if_(desc_ready_i, {blk(fetch_wait.d, fetch_wait.q + one_word)}),
                        if_(pf_valid_o & pf_ready_i, {blk(requested.d, requested.q + one_count)}),
                        if_(rsp_ok, {blk(received.d, received.q + one_count)}),
                        if_(last_word, {blk(state.d, ternary(is_end, st_drain, st_offer))})}},
                      {st_offer,
                       {count_cycle, if_(accept, {blk(state.d, st_fetch), blk(desc_addr.d, desc_addr.q + lit(AW, NW)),
                                                  blk(requested.d, zero_count), blk(received.d, zero_count),
                                                  blk(ops.d, ops.q + one_word)})}},
                      {st_drain, {count_cycle, if_(finish, {blk(state.d, st_idle)})}}}));
  m.blank();
  m.comment("Next state: start, the descriptor's words, its hand-over, the end; the statistics.");
  m.always_comb(std::move(next));
  m.always_ff_flops(flops, {{state.q, st_idle}});
  return m;
}

void connect_engine_descriptor(Instance& e, const Module& engine, const Expr& words) {
  const int bits = engine.port("desc_words_i").width();
  if (bits != isa::engine_descriptor_words() * 32 || words.width() < bits)
    throw std::logic_error(
        fmt::format("connect_engine_descriptor: {} packed bits for the engine's {}", words.width(), bits));
  e.connect("desc_words_i", words.width() == bits ? words : words.slice(bits - 1, 0));
}

namespace {

// The engine's memory ports and statistics outputs, which the top level passes through unchanged.
const std::vector<std::string>& engine_memory_ports() {
  static const std::vector<std::string> ports = {
      "drd_en_o", "drd_vec_o", "drd_addr_o", "drd_data_i", "wrd_en_o", "wrd_addr_o", "wrd_data_i", "brd_en_o",
      "brd_addr_o", "brd_data_i", "wr_en_o", "wr_addr_o", "wr_vec_o", "wr_mask_o", "wr_data_o", "wr_ready_i"};
  return ports;
}

const std::vector<std::string>& engine_statistics_ports() {
  static const std::vector<std::string> ports = {"stat_cycles_o",     "stat_vectors_o",   "stat_stall_data_o",
                                                 "stat_stall_tile_o", "stat_stall_out_o", "stat_wr_wait_o"};
  return ports;
}

// Declares each of the engine's ports `names` on the top level, same name, width and comment; returns
// them by name.
std::map<std::string, Expr> pass_engine_ports(Module& m, const Module& engine, const std::vector<std::string>& names) {
  std::map<std::string, Expr> passed;
  for (const std::string& name : names) {
    const Expr engine_port = engine.port(name);
    for (const Port& p : engine.ports())
      if (p.name == name)
        passed.emplace(name, p.dir == PortDir::kInput ? m.input(name, engine_port.width(), p.comment)
                                                      : m.output(name, engine_port.width(), p.comment));
  }
  return passed;
}

}  // namespace

Module build_accel(const AccelConfig& cfg) {
  const Module sequencer = build_sequencer(cfg);
  const Module engine = build_engine(cfg);
  const int words = isa::engine_descriptor_words();
  const int word_bits = 32;  // a word address, a program word and a statistics counter

  Module m(kAccelModule,
           fmt::format(
               "Accelerator top level (docs/rtl-sequencer.md) for {0}: the program sequencer in front of the compute\n"
               "engine. The host (or the testbench in its place) writes the operands and the program into memory and\n"
               "pulses start_i; the sequencer fetches the program's packed descriptors ({1} words each) through pf_*/pr_*\n"
               "and the engine runs them one after another through its memory ports (drd_*, wrd_*, brd_*: 1-cycle read\n"
               "latency; wr_*: writes, taken with wr_ready_i). op_done_o pulses when a descriptor finishes (the engine's stat_*_o then hold its\n"
               "cycles and stalls), done_o when the program has ended. error_o: the sequencer's or the engine's sticky error.",
               cfg.name, words));
  m.clock_and_reset();
  const Expr start_i = m.input("start_i", 1, "start the program at prog_base_i (ignored while busy)");
  const Expr prog_base_i = m.input("prog_base_i", word_bits, "word address of the program");
  const Expr busy_o = m.output("busy_o", 1, "a program runs");
  const Expr done_o = m.output("done_o", 1, "one-cycle pulse: the program ended");
  const Expr error_o = m.output("error_o", 1, "sticky: a contract violation in the sequencer or the engine");
  const Expr pf_valid_o = m.output("pf_valid_o", 1, "program fetch request");
  const Expr pf_ready_i = m.input("pf_ready_i", 1, "the request is taken");
  const Expr pf_addr_o = m.output("pf_addr_o", word_bits, "its word address");
  const Expr pr_valid_i = m.input("pr_valid_i", 1, "a fetched program word (in request order)");
  const Expr pr_data_i = m.input("pr_data_i", word_bits, "its value");
  const std::map<std::string, Expr> memory = pass_engine_ports(m, engine, engine_memory_ports());
  const Expr op_busy_o = m.output("op_busy_o", 1, "the engine runs a descriptor");
  const Expr op_done_o = m.output("op_done_o", 1, "one-cycle pulse: a descriptor finished");
  const std::map<std::string, Expr> statistics = pass_engine_ports(m, engine, engine_statistics_ports());
  const Expr stat_ops_o = m.output("stat_ops_o", word_bits, "descriptors started");
  const Expr stat_prog_cycles_o = m.output("stat_prog_cycles_o", word_bits, "cycles of the program (start_i to done_o)");
  const Expr stat_fetch_wait_o = m.output("stat_fetch_wait_o", word_bits, "cycles the engine waited for the sequencer");

  const Expr seq_desc_valid = m.wire("seq_desc_valid", 1);
  const Expr eng_desc_ready = m.wire("eng_desc_ready", 1);
  const Expr seq_error = m.wire("seq_error", 1);
  const Expr eng_error = m.wire("eng_error", 1);
  const Expr seq_words = m.wire("seq_words", words * word_bits, "the packed descriptor (isa::engine_descriptor_layout)");
  m.blank();
  m.assign(error_o, seq_error | eng_error);

  m.instance(sequencer, "u_seq")
      .connect("clk_i", m.clk())
      .connect("rst_ni", m.rst_n())
      .connect("start_i", start_i)
      .connect("prog_base_i", prog_base_i)
      .connect("busy_o", busy_o)
      .connect("done_o", done_o)
      .connect("error_o", seq_error)
      .connect("pf_valid_o", pf_valid_o)
      .connect("pf_ready_i", pf_ready_i)
      .connect("pf_addr_o", pf_addr_o)
      .connect("pr_valid_i", pr_valid_i)
      .connect("pr_data_i", pr_data_i)
      .connect("desc_valid_o", seq_desc_valid)
      .connect("desc_ready_i", eng_desc_ready)
      .connect("desc_words_o", seq_words)
      .connect("stat_ops_o", stat_ops_o)
      .connect("stat_cycles_o", stat_prog_cycles_o)
      .connect("stat_fetch_wait_o", stat_fetch_wait_o);

  Instance& e = m.instance(engine, "u_engine");
  e.connect("clk_i", m.clk()).connect("rst_ni", m.rst_n());
  e.connect("desc_valid_i", seq_desc_valid).connect("desc_ready_o", eng_desc_ready);
  connect_engine_descriptor(e, engine, seq_words);
  for (const std::string& p : engine_memory_ports()) e.connect(p, memory.at(p));
  e.connect("busy_o", op_busy_o).connect("done_o", op_done_o).connect("error_o", eng_error);
  for (const std::string& p : engine_statistics_ports()) e.connect(p, statistics.at(p));
  return m;
}

void emit_accel(const AccelConfig& cfg, Design& design) {
  design.add_module(build_sequencer(cfg));
  design.add_module(build_accel(cfg));
}

}  // namespace capsgen::emit
