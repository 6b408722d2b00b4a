// Block test of the chip's frame sequencer (capsgen_frame_seq, docs/rtl-chip.md) alone. The
// testbench is everything around it: a program memory behind pf_*/pr_* (random back-pressure and
// fetch latency, responses in request order) and models of the engine (busy for a random time after
// it takes a frame), the DMA (idle again after a random time, its done pulses in issue order after a
// random latency, so several DMA frames can be outstanding) and the PMUs (random ready). Programs are
// packed with the compiler's encoding (isa::pack_frame, isa/frames.hpp) for the preset's geometry
// (chip.json): random engine, DMA, PMU (with power gating) and end frames with random payloads of the
// preset's field widths and random wait_engine / wait_dma, including the fields a kind ignores; with
// --program DIR also the frame program of `capsgen compile --stream --frames DIR` (frames.hex).
//
// A reference model steps with the RTL and checks every cycle:
//   - busy_o, done_o (one pulse, the cycle after the end frame found the engine idle and no DMA frame
//     outstanding) and error_o;
//   - eng_valid_o, dma_valid_o, pmu_valid_o exactly: an engine frame is offered only when it is fully
//     fetched and at most wait_dma DMA frames are outstanding; a DMA frame only when fully fetched and,
//     with wait_engine, the engine idle; nothing while fetching, for another kind, or after the end;
//   - at every issue: the frame is the next one in program order and words_o carries its exact payload;
//   - every fetch request: the next word of the program in order, none while a frame waits to issue
//     or after the program stopped;
// and at done_o the stat_* counters against the reference's classification of every busy cycle
// (and their sum against stat_cycles_o), the frames issued per kind, and one done_o pulse.
// Directed error cases (each from reset): a pending engine frame and, without power gating, a PMU
// frame are refused (error_o, nothing after them fetched or issued, done_o after the units drain); a
// fetch response without a request and a DMA done_i with no DMA frame outstanding set error_o and the
// program runs on to its end with the outstanding count intact. error_o is sticky in every case.
// --mode random|program|errors selects one part (default: all).
#include <algorithm>
#include <cstdio>
#include <deque>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "common/bits.hpp"
#include "common/rng.hpp"
#include "common/sim.hpp"
#include "isa/frames.hpp"
#ifdef CAPSGEN_TB_FRAME_SEQ_MODEL
#include "Vframe_seq.h"
#endif

namespace {

namespace isa = capsgen::isa;
using isa::FrameKind;

isa::FrameGeometry load_geometry(const tb::Summary& kv) {
  isa::FrameGeometry g;
  g.spm_addr_bits = kv.num("spm_addr_bits");
  g.len_bits = kv.num("len_bits");
  g.size_bits = kv.num("size_bits");
  g.max_size = kv.num("max_size");
  const char* const names[isa::kFrameMemories] = {"sectors_data", "sectors_weight", "sectors_acc", "sectors_shared"};
  for (int i = 0; i < isa::kFrameMemories; ++i) g.sectors[i] = kv.num(names[i]);
  if (g.power_gating() != kv.flag("power_gating")) throw std::runtime_error("chip.json: power_gating disagrees with the sectors");
  if (kv.num("engine_words") != isa::payload_words(FrameKind::kEngine, g) || kv.num("dma_words") != isa::payload_words(FrameKind::kDma, g) ||
      kv.num("pmu_words") != isa::payload_words(FrameKind::kPmu, g))
    throw std::runtime_error("chip.json: payload words differ from isa::payload_words for its geometry");
  return g;
}

// A packed program and where each frame starts.
struct Program {
  std::string name;
  std::vector<std::uint32_t> words;
  struct Entry {
    std::size_t at = 0;  // header word index
    isa::FrameHeader h;
    int len = 0;  // payload words
  };
  std::vector<Entry> frames;  // up to and including the end frame (or the end of the image)
};

// Walks a packed image with the header layout (no payload decoding: a refused frame's payload is not
// defined), through the end frame.
Program index_program(std::string name, std::vector<std::uint32_t> words, const isa::FrameGeometry& g) {
  Program p;
  p.name = std::move(name);
  p.words = std::move(words);
  std::size_t at = 0;
  while (at < p.words.size()) {
    const std::uint32_t w = p.words[at];
    Program::Entry e;
    e.at = at;
    e.h.kind = static_cast<FrameKind>(w & 3u);
    e.h.wait_engine = (w >> 2) & 1u;
    e.h.pending = (w >> 3) & 1u;
    e.h.wait_dma = (w >> 4) & 0xFFFFu;
    e.len = isa::payload_words(e.h.kind, g);
    p.frames.push_back(e);
    at += 1 + std::size_t(e.len);
    if (e.h.kind == FrameKind::kEnd) break;
  }
  if (p.frames.empty() || p.frames.back().h.kind != FrameKind::kEnd) throw std::runtime_error(p.name + ": no end frame");
  return p;
}

// The header layout the indexer assumes is the compiler's (isa::frame_header_layout).
void check_header_layout() {
  const auto& l = isa::frame_header_layout();
  const int expect[][2] = {{0, 2}, {2, 1}, {3, 1}, {4, 16}};  // kind, wait_engine, pending, wait_dma: lsb, bits
  for (std::size_t i = 0; i < 4; ++i)
    if (l[i].word != 0 || l[i].lsb != expect[i][0] || l[i].bits != expect[i][1])
      throw std::runtime_error("isa::frame_header_layout changed: update frame_seq_tb.cpp's index_program");
}

// Timing of the units and of the program memory for one run.
struct Timing {
  const char* name;
  int pf_ready_pct;  // program memory takes a request
  int lat_max;       // fetch latency 1..lat_max cycles
  int eng_max;       // engine busy 0..eng_max cycles after it takes a frame
  int dma_idle_max;  // DMA idle again 1..dma_idle_max cycles after it takes a frame
  int dma_done_max;  // its done 1..dma_done_max cycles after it takes a frame (in order)
  int pmu_ready_pct;
};
// A frame takes 1 + its payload words of fetch after the previous one issued (48 for an engine frame):
// the units' times reach beyond that, or no frame would ever wait for them.
const Timing kTimings[] = {
    {"fast", 100, 1, 0, 1, 1, 100},
    {"slow fetch", 40, 8, 2, 2, 3, 70},
    {"slow units", 90, 2, 150, 60, 120, 20},
    {"queued DMA", 80, 3, 40, 1, 200, 60},
    {"mixed", 60, 5, 60, 20, 80, 50},
};

// What a directed case injects once, mid-program.
enum class Inject { kNone, kSpuriousResponse, kSpuriousDmaDone };

#ifdef CAPSGEN_TB_FRAME_SEQ_MODEL

// The PMU ports exist only with power gating.
template <class M>
constexpr bool kHasPmu = requires(M& m) { m.pmu_valid_o; };
template <class M>
void set_pmu_ready(M& m, bool v) {
  if constexpr (kHasPmu<M>) m.pmu_ready_i = v;
}
template <class M>
bool pmu_valid(const M& m) {
  if constexpr (kHasPmu<M>) return m.pmu_valid_o;
  else return false;
}

class FrameSeqBench {
 public:
  FrameSeqBench(const tb::Args& args, const isa::FrameGeometry& g)
      : args_(args), g_(g), sim_(args), rng_(args.seed * 7919 + 13), report_("frame_seq", args.max_errors) {
    m_ = std::make_unique<Vframe_seq>(sim_.context(), "frame_seq");
    sim_.add(*m_);
    sim_.open_trace();
    pg_ = g.power_gating();
    if (pg_ != kHasPmu<Vframe_seq>) throw std::runtime_error("chip.json power_gating and the model's pmu_* ports disagree");
    sim_.set_watchdog(50'000'000);
    reset();
  }
  ~FrameSeqBench() { sim_.finish(); }

  tb::Report& report() { return report_; }
  long long cycles() const { return total_cycles_; }
  long long frames_issued() const { return total_issued_; }
  bool pg() const { return pg_; }
  // Stimulus coverage over every run: cycles per class, the most DMA frames outstanding, cycles in
  // which a DMA frame issued while another one's done arrived.
  long long class_total(int c) const { return class_total_[c]; }
  long long max_outstanding() const { return max_outst_; }
  long long fire_with_done() const { return fire_with_done_; }

  void reset() {
    drive_idle();
    sim_.reset();
    total_cycles_ += 3;
    err_ = false;
    err_why_ = "no error condition yet";
  }

  // Runs one program at word address `base` from a start pulse to done_o. Returns false when it did not finish.
  bool run(const Program& p, const Timing& t, Inject inject = Inject::kNone) {
    prog_ = &p;
    t_ = t;
    base_ = static_cast<std::uint32_t>(rng_.uniform(0, 1 << 20));
    k_ = 0, req_ = 0, rcv_ = 0, full_ = false, stopped_ = false, busy_ = false, done_next_ = false;
    outst_ = 0;
    pf_q_.clear();
    dma_q_.clear();
    eng_free_ = dma_free_ = 0;
    std::fill(std::begin(stat_), std::end(stat_), 0);
    dones_ = 0;
    injected_ = false;
    issued_.assign(4, 0);
    const long long t0 = static_cast<long long>(sim_.cycle());
    const long long limit = 2000 + static_cast<long long>(p.words.size()) * 40 + static_cast<long long>(p.frames.size()) * 200;
    bool started = false, finished = false;
    for (long long n = 0; n < limit && !report_.too_many(); ++n) {
      const bool start = !started;
      cycle(start, inject);
      started = true;
      if (dones_ > 0 && !busy_) {
        finished = true;
        break;
      }
    }
    if (!finished) {
      report_.fail(sim_.cycle(), where() + ": the program did not finish within " + std::to_string(limit) + " cycles");
      return false;
    }
    // A few idle cycles: done_o does not pulse again, error_o holds, nothing is fetched or offered.
    for (int i = 0; i < 4; ++i) cycle(false, Inject::kNone);
    report_.check(sim_.cycle(), where() + " done_o pulses", 1, dones_);
    check_stats(sim_.cycle());
    int expect_issued = 0;
    for (std::size_t i = 0; i + 1 < p.frames.size() && !refused(p.frames[i].h); ++i) ++expect_issued;
    report_.check(sim_.cycle(), where() + " frames issued", expect_issued, issued_[0] + issued_[1] + issued_[2]);
    if (inject != Inject::kNone && !injected_)
      report_.fail(sim_.cycle(), where() + ": the directed case found no cycle to inject its event");
    total_cycles_ += static_cast<long long>(sim_.cycle()) - t0;
    total_issued_ += issued_[0] + issued_[1] + issued_[2];
    return true;
  }

  bool error_o() const { return m_->error_o; }

 private:
  bool refused(const isa::FrameHeader& h) const {
    return (h.kind == FrameKind::kEngine && h.pending) || (h.kind == FrameKind::kPmu && !pg_);
  }
  const Program::Entry& cur() const { return prog_->frames[k_]; }
  std::string where() const {
    return prog_->name + " (" + t_.name + ")" + (k_ < prog_->frames.size() ? " frame " + std::to_string(k_) + " " +
                                                                                 isa::to_string(cur().h.kind)
                                                                           : "");
  }

  void drive_idle() {
    m_->start_i = 0;
    m_->prog_base_i = 0;
    m_->pf_ready_i = 0;
    m_->pr_valid_i = 0;
    m_->pr_data_i = 0;
    m_->eng_ready_i = 1;
    m_->dma_ready_i = 1;
    m_->dma_done_i = 0;
    set_pmu_ready(*m_, false);
  }

  void set_err(const std::string& why) {
    if (!err_) err_why_ = why + " at cycle " + std::to_string(sim_.cycle());
    err_ = true;
  }

  // One clock cycle: drive the inputs, check the outputs against the reference, advance both.
  void cycle(bool start, Inject inject) {
    const long long now = static_cast<long long>(sim_.cycle());
    // --- inputs
    m_->start_i = start || (busy_ && rng_.chance(3));  // a start while busy must be ignored
    m_->prog_base_i = start ? base_ : static_cast<std::uint32_t>(rng_.next());
    m_->pf_ready_i = rng_.chance(t_.pf_ready_pct);
    bool rsp = false, spurious_rsp = false;
    std::uint32_t rsp_addr = 0;
    if (!pf_q_.empty() && pf_q_.front().second <= now) {
      rsp = true;
      rsp_addr = pf_q_.front().first;
      pf_q_.pop_front();
    } else if (inject == Inject::kSpuriousResponse && !injected_ && busy_ && pf_q_.empty() && issued_total() >= 3 &&
               rng_.chance(20)) {
      spurious_rsp = injected_ = true;
    }
    m_->pr_valid_i = rsp || spurious_rsp;
    m_->pr_data_i = rsp ? word_at(rsp_addr) : static_cast<std::uint32_t>(rng_.next());
    const bool eng_ready = now >= eng_free_;
    m_->eng_ready_i = eng_ready;
    bool dma_ready = now >= dma_free_;
    bool dma_done = !dma_q_.empty() && dma_q_.front() <= now;
    bool spurious_done = false;
    if (dma_done) {
      dma_q_.pop_front();
    } else if (inject == Inject::kSpuriousDmaDone && !injected_ && busy_ && outst_ == 0 && dma_q_.empty() &&
               issued_[1] >= 1 && rng_.chance(20)) {
      spurious_done = injected_ = true;
      dma_done = true;
      dma_ready = false;  // no DMA frame taken in this cycle: the done has nothing to pair with
    }
    m_->dma_ready_i = dma_ready;
    m_->dma_done_i = dma_done;
    const bool pmu_ready = pg_ && rng_.chance(t_.pmu_ready_pct);
    set_pmu_ready(*m_, pmu_ready);
    m_->eval();

    // --- outputs of this cycle against the reference
    const auto& h = full_ ? cur().h : isa::FrameHeader{};
    report_.check(now, where() + " busy_o", busy_, m_->busy_o);
    report_.check(now, where() + " done_o", done_next_, m_->done_o);
    report_.check(now, where() + " error_o (" + err_why_ + ")", err_, m_->error_o);
    const bool exp_eng = full_ && h.kind == FrameKind::kEngine && !h.pending && outst_ <= h.wait_dma;
    const bool exp_dma = full_ && h.kind == FrameKind::kDma && (!h.wait_engine || eng_ready);
    report_.check(now, where() + " eng_valid_o (engine idle=" + std::to_string(eng_ready) + ", DMA frames outstanding " +
                           std::to_string(outst_) + ", wait_dma " + std::to_string(h.wait_dma) + ")",
                  exp_eng, m_->eng_valid_o);
    report_.check(now, where() + " dma_valid_o (wait_engine " + std::to_string(h.wait_engine) + ", engine idle " +
                           std::to_string(eng_ready) + ")",
                  exp_dma, m_->dma_valid_o);
    const bool exp_pmu = pg_ && full_ && h.kind == FrameKind::kPmu;
    if (pg_) report_.check(now, where() + " pmu_valid_o", exp_pmu, pmu_valid(*m_));
    const bool fire_eng = exp_eng && eng_ready, fire_dma = exp_dma && dma_ready, fire_pmu = exp_pmu && pmu_ready;
    const bool fire = fire_eng || fire_dma || fire_pmu;
    if (fire) {
      const int n = cur().len;
      for (int w = 0; w < n; ++w)
        report_.check(now, where() + " words_o[" + std::to_string(w) + "] at issue", word_at(base_ + std::uint32_t(cur().at + 1 + w)),
                      static_cast<long long>(tb::get(m_->words_o, 32 * w, 32)));
    }
    // Fetch requests: the next word of the program, only while fetching.
    const bool fetching = busy_ && !full_;
    if (m_->pf_valid_o && m_->pf_ready_i) {
      if (!fetching) {
        report_.fail(now, where() + ": pf_valid_o while no frame is being fetched (a frame waits, or the program stopped)");
      } else {
        const int max_req = rcv_ > 0 ? 1 + cur().len : 1;  // the payload only after the header arrived
        if (req_ >= max_req) {
          report_.fail(now, where() + ": fetch request beyond the frame's words");
        } else {
          const std::uint32_t exp_addr = base_ + static_cast<std::uint32_t>(cur().at) + static_cast<std::uint32_t>(req_);
          report_.check(now, where() + " pf_addr_o (word " + std::to_string(req_) + " of the frame)", exp_addr, m_->pf_addr_o);
          pf_q_.push_back({m_->pf_addr_o, now + rng_.uniform(1, t_.lat_max)});
          ++req_;
        }
      }
    } else if (m_->pf_valid_o && !fetching) {
      report_.fail(now, where() + ": pf_valid_o while no frame is being fetched (a frame waits, or the program stopped)");
    }

    // --- the reference's next state (the clock edge at the end of this cycle)
    if (busy_) {
      ++stat_[0];
      classify(h, fire_eng, fire_dma, fire_pmu, eng_ready);
    }
    if (spurious_rsp) set_err("a fetch response without a request");
    if (spurious_done) set_err("a DMA done_i with no DMA frame outstanding");
    if (full_ && refused(h)) set_err(std::string("a refused ") + isa::to_string(h.kind) + " frame");
    const bool finish = full_ && (h.kind == FrameKind::kEnd || refused(h)) && eng_ready && outst_ == 0;
    done_next_ = busy_ && finish;
    if (done_next_) ++dones_;
    if (dma_done && !spurious_done && !fire_dma) --outst_;
    if (fire_dma && !dma_done) ++outst_;
    if (fire_dma && dma_done) ++fire_with_done_;
    max_outst_ = std::max(max_outst_, outst_);
    if (rsp && fetching) {
      ++rcv_;
      if (rcv_ == 1 + cur().len) full_ = true;
    }
    if (fire) {
      ++issued_[static_cast<int>(h.kind)];
      if (fire_eng) eng_free_ = now + 1 + rng_.uniform(0, t_.eng_max);
      if (fire_dma) {
        dma_free_ = now + 1 + rng_.uniform(0, t_.dma_idle_max - 1);
        long long when = now + 1 + rng_.uniform(0, t_.dma_done_max - 1);
        if (!dma_q_.empty()) when = std::max(when, dma_q_.back() + 1);
        dma_q_.push_back(when);
      }
      ++k_;
      full_ = false, req_ = 0, rcv_ = 0;
    }
    if (finish && busy_) busy_ = false, full_ = false, stopped_ = true;
    if (start && !busy_) {
      busy_ = true, full_ = false, req_ = 0, rcv_ = 0, k_ = 0;
    }
    sim_.step();
  }

  // The class of one busy cycle (docs/rtl-chip.md "Cycle classes"); stat_ in kStatNames order.
  void classify(const isa::FrameHeader& h, bool fire_eng, bool fire_dma, bool fire_pmu, bool eng_ready) {
    int c;
    if (!full_) c = 4;                                                       // fetch
    else if (fire_eng) c = 1;                                                // engine
    else if (fire_dma) c = 2;                                                // dma
    else if (fire_pmu) c = 3;                                                // pmu
    else if (h.kind == FrameKind::kEnd || refused(h)) c = 10;                // drain
    else if (h.kind == FrameKind::kEngine) c = eng_ready ? 6 : 5;            // wait_dma / eng_busy
    else if (h.kind == FrameKind::kDma) c = h.wait_engine && !eng_ready ? 7 : 8;  // wait_engine / dma_busy
    else c = 9;                                                              // pmu_wait
    ++stat_[c];
  }

  void check_stats(std::uint64_t now) {
    const long long got[11] = {m_->stat_cycles_o, m_->stat_engine_o,   m_->stat_dma_o,      m_->stat_pmu_o,
                               m_->stat_fetch_o,  m_->stat_eng_busy_o, m_->stat_wait_dma_o, m_->stat_wait_engine_o,
                               m_->stat_dma_busy_o, m_->stat_pmu_wait_o, m_->stat_drain_o};
    static const char* const names[11] = {"cycles", "engine", "dma",      "pmu",      "fetch", "eng_busy",
                                          "wait_dma", "wait_engine", "dma_busy", "pmu_wait", "drain"};
    long long sum = 0;
    for (int i = 0; i < 11; ++i) {
      class_total_[i] += stat_[i];
      report_.check(now, where() + " stat_" + names[i] + "_o", stat_[i], got[i]);
      if (i > 0) sum += got[i];
    }
    report_.check(now, where() + " sum of the stat_* classes against stat_cycles_o", got[0], sum);
    report_.check(now, where() + " stat_engine_o against engine frames issued", issued_[0], got[1]);
    report_.check(now, where() + " stat_dma_o against DMA frames issued", issued_[1], got[2]);
  }

  int issued_total() const { return issued_[0] + issued_[1] + issued_[2]; }
  std::uint32_t word_at(std::uint32_t addr) const {
    const std::uint32_t i = addr - base_;
    return i < prog_->words.size() ? prog_->words[i] : 0xDEADBEEFu;  // beyond the image: never a valid frame
  }

  const tb::Args& args_;
  isa::FrameGeometry g_;
  tb::Sim sim_;
  tb::Rng rng_;
  tb::Report report_;
  std::unique_ptr<Vframe_seq> m_;
  bool pg_ = false;
  // Reference state for the running program.
  const Program* prog_ = nullptr;
  Timing t_ = kTimings[0];
  std::uint32_t base_ = 0;
  std::size_t k_ = 0;      // frame being fetched or waiting
  int req_ = 0, rcv_ = 0;  // words of frame k_ requested / received (header included)
  bool full_ = false, stopped_ = false, busy_ = false, done_next_ = false, err_ = false, injected_ = false;
  std::string err_why_;
  long long outst_ = 0;  // DMA frames issued, done not yet seen
  std::deque<std::pair<std::uint32_t, long long>> pf_q_;  // requested address, response cycle
  std::deque<long long> dma_q_;                          // done cycle of each outstanding DMA frame
  long long eng_free_ = 0, dma_free_ = 0;
  long long stat_[11] = {};
  int dones_ = 0;
  std::vector<int> issued_;
  long long total_cycles_ = 0, total_issued_ = 0;
  long long class_total_[11] = {}, max_outst_ = 0, fire_with_done_ = 0;
};

// Random frames of the preset's widths, packed with isa::pack_frame.
class ProgramGen {
 public:
  ProgramGen(const isa::FrameGeometry& g, std::uint64_t seed) : g_(g), rng_(seed) {}

  isa::Frame engine(bool pending = false) {
    isa::Frame f;
    f.header.kind = FrameKind::kEngine;
    f.header.pending = pending;
    f.header.wait_dma = wait_dma();
    f.header.wait_engine = rng_.chance(50);  // ignored by an engine frame
    if (!pending) {
      // Random field values of the descriptor's widths (the sequencer passes them through).
      std::vector<std::uint32_t> w(std::size_t(isa::engine_descriptor_words()));
      for (auto& x : w) x = static_cast<std::uint32_t>(rng_.next());
      f.engine = isa::unpack_engine_descriptor(w);
      if (f.engine.kind == isa::kEngineKindEnd) f.engine.kind = 0;
    }
    return f;
  }
  isa::Frame dma() {
    isa::Frame f;
    f.header.kind = FrameKind::kDma;
    f.header.wait_engine = rng_.chance(50);
    f.header.wait_dma = rng_.chance(30) ? wait_dma() : 0;  // ignored by a DMA frame
    isa::DmaFields& d = f.dma;
    d.store = rng_.chance(50);
    d.dram_addr = bits(32);
    d.spm_addr = bits(g_.spm_addr_bits);
    for (int i = 0; i < 3; ++i) d.count[i] = bits(16), d.dram_stride[i] = bits(32), d.spm_stride[i] = bits(g_.spm_addr_bits);
    d.burst = bits(g_.len_bits);
    d.size = static_cast<std::uint32_t>(rng_.uniform(0, g_.max_size));
    d.widen = rng_.chance(50);
    return f;
  }
  isa::Frame pmu() {
    isa::Frame f;
    f.header.kind = FrameKind::kPmu;
    f.pmu.wait = rng_.chance(50);
    for (int i = 0; i < isa::kFrameMemories; ++i) f.pmu.awake[i] = bits(g_.sectors[i]);
    return f;
  }
  // n random frames (engine, DMA, PMU with power gating), then the end frame.
  std::vector<isa::Frame> frames(int n) {
    std::vector<isa::Frame> v;
    for (int i = 0; i < n; ++i) {
      const int r = static_cast<int>(rng_.uniform(0, 99));
      if (r < 30) v.push_back(engine());
      else if (r < 80 || !g_.power_gating()) v.push_back(dma());
      else v.push_back(pmu());
    }
    return v;
  }
  Program pack(std::string name, std::vector<isa::Frame> frames) {
    std::vector<std::uint32_t> w;
    for (const isa::Frame& f : frames) {
      const auto p = f.header.kind == FrameKind::kPmu && !g_.power_gating() ? pmu_without_gating(f) : isa::pack_frame(f, g_);
      w.insert(w.end(), p.begin(), p.end());
    }
    const auto e = isa::pack_frame(isa::Frame{}, g_);
    w.insert(w.end(), e.begin(), e.end());
    // Words after the end frame: a sequencer that fetched past it would find no valid frame.
    for (int i = 0; i < 4; ++i) w.push_back(static_cast<std::uint32_t>(rng_.next()));
    return index_program(std::move(name), std::move(w), g_);
  }
  tb::Rng& rng() { return rng_; }

 private:
  // isa::pack_frame refuses a PMU frame without power gating: its header alone (payload_words = 0).
  std::vector<std::uint32_t> pmu_without_gating(const isa::Frame& f) {
    return {static_cast<std::uint32_t>(FrameKind::kPmu) | (std::uint32_t(f.header.wait_engine) << 2)};
  }
  std::uint32_t bits(int n) { return n <= 0 ? 0 : static_cast<std::uint32_t>(rng_.next() & tb::mask64(n)); }
  std::uint32_t wait_dma() {
    const int r = static_cast<int>(rng_.uniform(0, 9));
    if (r < 3) return 0;
    if (r < 8) return static_cast<std::uint32_t>(rng_.uniform(1, 3));
    if (r < 9) return 65535;
    return bits(16);
  }
  isa::FrameGeometry g_;
  tb::Rng rng_;
};

std::vector<std::uint32_t> read_hex(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::vector<std::uint32_t> w;
  for (std::string l; std::getline(in, l);)
    if (!l.empty() && l[0] != '#' && l.rfind("//", 0) != 0) w.push_back(static_cast<std::uint32_t>(std::stoul(l, nullptr, 16)));
  return w;
}

#endif  // CAPSGEN_TB_FRAME_SEQ_MODEL

}  // namespace

int frame_seq_tb_main(int argc, char** argv) {
  const tb::Args args = tb::Args::parse(argc, argv, "[--mode all|random|program|errors] [--program DIR (frames.hex)]");
  const tb::Summary chip(args.rtl_dir, "chip");
  if (!chip.flag("supported")) {
    std::printf("SKIP frame_seq: no capsgen_chip for this preset (chip.json: supported false)\n");
    return 0;
  }
#ifndef CAPSGEN_TB_FRAME_SEQ_MODEL
  std::fprintf(stderr, "FAIL frame_seq: chip.json says supported, but capsgen_frame_seq was not verilated\n");
  return 1;
#else
  check_header_layout();
  const isa::FrameGeometry g = load_geometry(chip);
  const std::string mode = args.mode.empty() ? "all" : args.mode;
  if (mode != "all" && mode != "random" && mode != "program" && mode != "errors")
    throw std::runtime_error("--mode: all, random, program or errors");
  FrameSeqBench b(args, g);
  ProgramGen gen(g, args.seed * 104729 + 1);
  int programs = 0;
  std::string parts;

  if (mode == "all" || mode == "random") {
    // Random programs back to back (no reset between them: start_i restarts the counters), every timing.
    const int n = std::max(1, static_cast<int>(200 * args.scale));
    for (int i = 0; i < n && !b.report().too_many(); ++i) {
      const int len = i < 3 ? i : static_cast<int>(gen.rng().uniform(4, 48));  // 0, 1, 2 frames first
      b.run(gen.pack("random program " + std::to_string(i), gen.frames(len)), kTimings[i % std::size(kTimings)]);
      ++programs;
    }
    parts += std::to_string(n) + " random programs";
  }
  if ((mode == "all" || mode == "program") && !args.program.empty()) {
    const Program p = index_program("compiled program", read_hex(args.program + "/frames.hex"), g);
    for (const Timing& t : {kTimings[0], kTimings[4]}) {
      b.reset();
      b.run(p, t);
      ++programs;
    }
    parts += ", the compiled program (" + std::to_string(p.frames.size()) + " frames) twice";
  }
  if (mode == "all" || mode == "errors") {
    auto sticky = [&](const char* what) {
      b.report().check(0, std::string("error_o after ") + what + " (sticky, after the program's end)", 1, b.error_o());
    };
    // 1. A pending engine frame in the middle: refused, nothing after it fetched or issued.
    {
      std::vector<isa::Frame> f = gen.frames(6);
      f.push_back(gen.engine(true));
      for (const isa::Frame& x : gen.frames(4)) f.push_back(x);
      b.reset();
      b.run(gen.pack("pending engine frame", f), kTimings[4]);
      sticky("a pending engine frame");
    }
    // 2. A PMU frame without power gating: refused the same way.
    if (!b.pg()) {
      std::vector<isa::Frame> f = gen.frames(5);
      f.push_back(gen.pmu());
      for (const isa::Frame& x : gen.frames(4)) f.push_back(x);
      b.reset();
      b.run(gen.pack("PMU frame without power gating", f), kTimings[4]);
      sticky("a PMU frame without power gating");
    } else {
      std::printf("frame_seq: the preset has power gating: the refused PMU frame is checked on a variant without it\n");
    }
    // 3. A fetch response without a request: flagged; the word is not taken; the program runs to its end.
    {
      b.reset();
      b.run(gen.pack("fetch response without a request", gen.frames(24)), kTimings[2], Inject::kSpuriousResponse);
      sticky("a fetch response without a request");
    }
    // 4. A DMA done_i with no DMA frame outstanding: flagged; the outstanding count stays 0 (the
    //    engine frames' wait_dma and the end frame still see the true count); the program runs to its end.
    {
      std::vector<isa::Frame> f;
      for (int i = 0; i < 16; ++i) f.push_back(i % 2 ? gen.engine() : gen.dma());
      b.reset();
      b.run(gen.pack("DMA done without an outstanding frame", f), kTimings[1], Inject::kSpuriousDmaDone);
      sticky("a DMA done_i with no DMA frame outstanding");
    }
    parts += std::string(", error cases: pending engine frame") + (b.pg() ? "" : ", PMU frame without power gating") +
             ", fetch response without a request, DMA done without an outstanding frame";
  }
  if (mode == "all" || mode == "random") {
    // The random programs must have reached every wait the sequencer has.
    static const char* const names[11] = {"cycles", "engine", "dma",      "pmu",      "fetch", "eng_busy",
                                          "wait_dma", "wait_engine", "dma_busy", "pmu_wait", "drain"};
    for (int c = 1; c < 11; ++c)
      if (b.class_total(c) == 0 && (b.pg() || (c != 3 && c != 9)))
        b.report().fail(0, std::string("stimulus never produced a cycle of class ") + names[c]);
    if (b.max_outstanding() < 3) b.report().fail(0, "stimulus never had 3 DMA frames outstanding");
    if (b.fire_with_done() == 0) b.report().fail(0, "stimulus never issued a DMA frame in the cycle of another's done");
  }
  char extra[800];
  std::snprintf(extra, sizeof extra,
                "%s; %lld frames issued, %lld cycles (fetch %lld, eng_busy %lld, wait_dma %lld, wait_engine %lld, "
                "dma_busy %lld, pmu_wait %lld, drain %lld), up to %lld DMA frames outstanding (power gating %d)",
                parts.c_str(), b.frames_issued(), b.cycles(), b.class_total(4), b.class_total(5), b.class_total(6),
                b.class_total(7), b.class_total(8), b.class_total(9), b.class_total(10), b.max_outstanding(), b.pg() ? 1 : 0);
  (void)programs;
  return b.report().summary(extra);
#endif
}
