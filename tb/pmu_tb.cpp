// Block test of the power-management units (capsgen_pmu_<name>, docs/rtl-pmu.md): every PMU of the
// preset's organization (--mode data|weight|acc|shared, default all) co-simulated with the REAL
// scratchpad memory of the same name (capsgen_spm_<name>): sleep_req_o -> sleep_req_i and
// sleep_ack_o -> sleep_ack_i are copied after every clock edge (both are registers). Checked every
// cycle against a cycle-exact C++ reference of the PMU and of the memory's handshake
// (docs/rtl-scratchpad.md): sleep_req_o, usable_o, cmd_ready_o, every counter, and the memory's
// sleep_ack_o. Stimulus:
//   - directed: barrier on an awake mask (accepted at once, no stall), all sectors asleep, barrier
//     right after a sleep command (stall W + 2), prefetch W + 2 / W + 1 / 1 cycles before a barrier
//     (stall 0 / 1 / W + 1: the completion formula of docs/rtl-pmu.md, asserted with exact cycles);
//   - random command streams (random masks, prefetch/barrier mix, random gaps, prefetches issued
//     earlier and later than W + 2 cycles before the matching barrier), length 20000 x --scale cycles;
//   - random memory accesses on port 0 of every bank, only to sectors with usable_o high: the
//     memory's err_sleep_o must never rise; then a negative check: accesses to asleep sectors
//     (usable_o low, ack high) must each be flagged by the memory.
// Without power gating there is no PMU: the test prints SKIP and passes.
#include <climits>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "common/bits.hpp"
#include "common/rng.hpp"
#include "common/sim.hpp"
#ifdef CAPSGEN_TB_PMU_DATA
#include "Vpmu_data.h"
#include "Vspm_data.h"
#endif
#ifdef CAPSGEN_TB_PMU_WEIGHT
#include "Vpmu_weight.h"
#include "Vspm_weight.h"
#endif
#ifdef CAPSGEN_TB_PMU_ACC
#include "Vpmu_acc.h"
#include "Vspm_acc.h"
#endif
#ifdef CAPSGEN_TB_PMU_SHARED
#include "Vpmu_shared.h"
#include "Vspm_shared.h"
#endif

namespace {

using tb::clog2;

// One PMU (pmu.json) and the geometry of its memory (scratchpad.json).
struct PmuInfo {
  std::string name, module;
  int sectors = 0, wakeup = 0;
  int banks = 0, width = 0;
  long long wps = 0;  // words per sector
  int ob = 0;         // word-offset bits
};

std::vector<PmuInfo> load_pmus(const std::string& dir) {
  std::vector<PmuInfo> v;
  if (!tb::Summary::exists(dir, "pmu")) return v;
  for (const tb::Summary& e : tb::Summary(dir, "pmu").list("pmus")) {
    PmuInfo p;
    p.name = e.str("memory");
    p.module = e.str("module");
    p.sectors = e.num("sectors");
    p.wakeup = e.num("wakeup_cycles");
    v.push_back(p);
  }
  for (const tb::Summary& m : tb::Summary(dir, "scratchpad").list("memories")) {
    const std::string name = m.str("name");
    const int kib = m.num("size_kib"), banks = m.num("banks"), sectors = m.num("sectors"), width = m.num("width_bits");
    for (PmuInfo& p : v)
      if (p.name == name) {
        if (p.sectors != sectors) throw std::runtime_error("pmu.json and scratchpad.json disagree on " + name);
        p.banks = banks, p.width = width;
        p.wps = static_cast<long long>(kib) * 1024 / (static_cast<long long>(banks) * sectors * (width / 8));
        p.ob = std::max(1, clog2(p.wps));
      }
  }
  for (const PmuInfo& p : v)
    if (p.banks == 0) throw std::runtime_error("memory " + p.name + " of pmu.json missing from scratchpad.json");
  return v;
}

// Cycle-exact reference: the PMU's command semantics (docs/rtl-pmu.md) and the memory's handshake
// rule (ack high in cycle u iff the request was high in some cycle L < u with u - L <= W + 1, last L).
struct RefPmu {
  int sc = 0, w = 0;
  std::vector<int> req;             // sleep_req_o
  std::vector<long long> last_high;  // last cycle with sleep_req_o[s] high
  std::vector<std::uint32_t> asleep;
  std::uint32_t wakes = 0, stalls = 0;

  RefPmu(int sectors, int wakeup) : sc(sectors), w(wakeup), req(sectors, 0), last_high(sectors, LLONG_MIN / 2),
                                    asleep(sectors, 0) {}
  bool ack(int s, long long t) const { return t - last_high[s] <= w + 1; }
  bool usable(int s, long long t) const { return !req[s] && !ack(s, t); }
  bool ready(std::uint64_t awake, bool wait, long long t) const {
    if (!wait) return true;
    for (int s = 0; s < sc; ++s)
      if (((awake >> s) & 1) && !usable(s, t)) return false;
    return true;
  }
  // The clock edge at the end of cycle t.
  void edge(long long t, bool valid, std::uint64_t awake, bool wait) {
    for (int s = 0; s < sc; ++s)
      if (ack(s, t)) ++asleep[s];
    if (valid && !ready(awake, wait, t)) ++stalls;
    for (int s = 0; s < sc; ++s)
      if (req[s]) last_high[s] = t;
    if (valid)
      for (int s = 0; s < sc; ++s) {
        const int on = static_cast<int>((awake >> s) & 1);
        if (req[s] && on) ++wakes;
        req[s] = !on;
      }
  }
};

template <class P, class M>
class PmuBench {
 public:
  PmuBench(const tb::Args& args, const PmuInfo& pi)
      : args_(args), pi_(pi), sim_(args), rng_(args.seed * 977 + pi.name.size()), report_("pmu_" + pi.name, args.max_errors),
        ref_(pi.sectors, pi.wakeup) {
    p_ = std::make_unique<P>(sim_.context(), ("pmu_" + pi.name).c_str());
    m_ = std::make_unique<M>(sim_.context(), ("spm_" + pi.name).c_str());
    sim_.add(*p_);
    sim_.add(*m_);
    sim_.open_trace();
    SC_ = pi.sectors, W_ = pi.wakeup, B_ = pi.banks;
    all_ = tb::mask64(SC_);
    aw_ = clog2(SC_) + pi.ob;
    sim_.reset();
    connect();
  }

  int run() {
    const long long cycles = static_cast<long long>(20000 * args_.scale);
    directed();
    const std::uint64_t t0 = sim_.cycle();
    while (static_cast<long long>(sim_.cycle() - t0) < cycles && !report_.too_many()) random_step();
    directed();  // again, from whatever state the random phase left
    idle(2);
    report_.check(sim_.cycle(), "memory err_sticky_o after the positive phases (no access to an unusable sector)", 0,
                  m_->err_sticky_o);
    negative();
    sim_.finish();
    if (barriers_ == 0 || prefetches_ == 0 || wake_stalled_ == 0 || accesses_ == 0)
      report_.fail(sim_.cycle(), "stimulus missed barriers, prefetches, stalled barriers or memory accesses");
    long long asleep = 0;
    for (int s = 0; s < SC_; ++s) asleep += tb::get(p_->asleep_cycles_o, s * 32, 32);
    char extra[400];
    std::snprintf(extra, sizeof extra,
                  "%s: %d sector(s), W %d; %llu cycles, %lld commands (%lld barriers, %lld prefetches), %lld stall "
                  "cycles, %lld asleep sector-cycles, %lld wake-ups, %lld memory accesses, %lld refused accesses flagged",
                  pi_.name.c_str(), SC_, W_, static_cast<unsigned long long>(sim_.cycle()), barriers_ + prefetches_,
                  barriers_, prefetches_, static_cast<long long>(p_->stall_cycles_o), asleep,
                  static_cast<long long>(p_->wake_count_o), accesses_, neg_flagged_);
    return report_.summary(extra);
  }

 private:
  std::string where(const std::string& sig) const { return "memory=" + pi_.name + " signal=" + sig; }

  // The registered handshake outputs of each model feed the other.
  void connect() {
    tb::put(m_->sleep_req_i, 0, SC_, tb::get(p_->sleep_req_o, 0, SC_));
    tb::put(p_->sleep_ack_i, 0, SC_, tb::get(m_->sleep_ack_o, 0, SC_));
    m_->eval();
    p_->eval();
  }

  // One cycle: command inputs, memory accesses (to usable sectors, or with `bad` to asleep ones),
  // every output checked against the reference. Returns true when the command was accepted.
  bool tick(bool valid, std::uint64_t awake, bool wait, bool bad = false) {
    const long long t = static_cast<long long>(sim_.cycle());
    p_->cmd_valid_i = valid;
    p_->cmd_wait_i = wait;
    tb::put(p_->cmd_awake_i, 0, SC_, awake);
    p_->eval();
    std::uint64_t exp_req = 0, exp_use = 0, exp_ack = 0;
    for (int s = 0; s < SC_; ++s) {
      exp_req |= static_cast<std::uint64_t>(ref_.req[s]) << s;
      exp_use |= static_cast<std::uint64_t>(ref_.usable(s, t)) << s;
      exp_ack |= static_cast<std::uint64_t>(ref_.ack(s, t)) << s;
    }
    const bool exp_ready = ref_.ready(awake, wait, t);
    report_.check(t, where("sleep_req_o"), static_cast<long long>(exp_req), static_cast<long long>(tb::get(p_->sleep_req_o, 0, SC_)));
    report_.check(t, where("spm sleep_ack_o"), static_cast<long long>(exp_ack), static_cast<long long>(tb::get(m_->sleep_ack_o, 0, SC_)));
    report_.check(t, where("usable_o"), static_cast<long long>(exp_use), static_cast<long long>(tb::get(p_->usable_o, 0, SC_)));
    report_.check(t, where("cmd_ready_o"), exp_ready, p_->cmd_ready_o);
    for (int s = 0; s < SC_; ++s)
      report_.check(t, where("asleep_cycles_o[" + std::to_string(s) + "]"), ref_.asleep[s],
                    static_cast<long long>(tb::get(p_->asleep_cycles_o, s * 32, 32)));
    report_.check(t, where("wake_count_o"), ref_.wakes, p_->wake_count_o);
    report_.check(t, where("stall_cycles_o"), ref_.stalls, p_->stall_cycles_o);
    report_.check(t, where("spm err_sleep_o"), exp_err_, m_->err_sleep_o);
    // Memory accesses on port 0 of every bank.
    const std::uint64_t use = tb::get(p_->usable_o, 0, SC_);
    exp_err_ = 0;
    for (int b = 0; b < B_; ++b) {
      std::vector<int> cand;
      for (int s = 0; s < SC_; ++s)
        if (bad ? ref_.ack(s, t) : ((use >> s) & 1)) cand.push_back(s);
      const bool en = !cand.empty() && (bad || rng_.chance(60));
      const int s = cand.empty() ? 0 : cand[static_cast<std::size_t>(rng_.uniform(0, static_cast<long long>(cand.size()) - 1))];
      const long long off = rng_.uniform(0, pi_.wps - 1);
      tb::put(m_->p0_en_i, b, 1, en);
      tb::put(m_->p0_we_i, b, 1, rng_.chance(50));
      tb::put(m_->p0_be_i, b * (pi_.width / 8), pi_.width / 8, ~std::uint64_t{0});  // whole words
      tb::put(m_->p0_addr_i, b * aw_, aw_, (static_cast<std::uint64_t>(s) << pi_.ob) | static_cast<std::uint64_t>(off));
      for (int c = 0; c * 32 < pi_.width; ++c)
        tb::put(m_->p0_wdata_i, b * pi_.width + c * 32, std::min(32, pi_.width - c * 32), rng_.next());
      if (en) {
        ++accesses_;
        if (bad) exp_err_ = 1, ++neg_sent_;
      }
    }
    m_->eval();
    const bool accepted = valid && p_->cmd_ready_o;
    ref_.edge(t, valid, awake, wait);
    sim_.step();
    connect();
    if (bad && exp_err_ && m_->err_sleep_o) ++neg_flagged_;
    return accepted;
  }

  // Cycles without a command; cmd_awake_i and cmd_wait_i carry random don't-care values (a PMU
  // must ignore them while cmd_valid_i is low; cmd_ready_o still follows them).
  void idle(int n) {
    for (int i = 0; i < n; ++i) tick(false, rng_.next() & all_, rng_.chance(50));
  }

  // Presents a command until it is accepted; returns the cycles it waited (0: accepted at once).
  long long issue(std::uint64_t awake, bool wait) {
    (wait ? barriers_ : prefetches_)++;
    const std::uint64_t t0 = sim_.cycle();
    while (!tick(true, awake, wait)) {
      if (sim_.cycle() - t0 > static_cast<std::uint64_t>(W_) + 8) {
        report_.fail(sim_.cycle(), where("cmd_ready_o") + ": barrier not accepted within W + 8 cycles");
        return -1;
      }
    }
    const long long waited = static_cast<long long>(sim_.cycle() - t0) - 1;
    if (wait && waited > 0) ++wake_stalled_;
    return waited;
  }

  std::uint64_t random_mask() {
    const int r = static_cast<int>(rng_.uniform(0, 9));
    if (r == 0) return 0;
    if (r == 1) return all_;
    return rng_.next() & all_;
  }

  // A barrier presented in cycle t must be accepted in cycle t + `stall` (docs/rtl-pmu.md formula).
  void expect_barrier(std::uint64_t awake, long long stall, const char* what) {
    const long long s0 = p_->stall_cycles_o;
    const long long got = issue(awake, true);
    report_.check(sim_.cycle(), where(std::string("barrier cycles waited, ") + what), stall, got);
    report_.check(sim_.cycle(), where(std::string("stall_cycles_o increase, ") + what), stall,
                  static_cast<long long>(p_->stall_cycles_o) - s0);
  }

  void directed() {
    // All on (from any state), settled.
    issue(all_, true);
    // 1. Barrier on an already-awake mask: accepted in the cycle it is presented, no stall.
    expect_barrier(all_, 0, "awake mask");
    const std::uint64_t some = (rng_.next() & all_) | 1;
    expect_barrier(some, 0, "awake subset");  // puts the others to sleep
    expect_barrier(some, 0, "awake subset again");
    // 2. All sectors asleep: nothing usable, every ack high from the cycle after the request.
    issue(0, false);
    idle(W_ + 3);
    report_.check(sim_.cycle(), where("usable_o with all sectors asleep"), 0, static_cast<long long>(tb::get(p_->usable_o, 0, SC_)));
    report_.check(sim_.cycle(), where("spm sleep_ack_o with all sectors asleep"), static_cast<long long>(all_),
                  static_cast<long long>(tb::get(m_->sleep_ack_o, 0, SC_)));
    expect_barrier(0, 0, "empty mask while all asleep");
    // 3. Barrier right after a sleep command: the request is still high when the barrier arrives,
    //    falls in the next cycle; the ack falls W + 1 cycles later: W + 2 cycles waited.
    issue(all_, true);
    issue(0, false);
    expect_barrier(all_, W_ + 2, "immediately after sleep");
    // ... and after a long sleep: the same.
    issue(0, false);
    idle(W_ + 5);
    expect_barrier(all_, W_ + 2, "after a long sleep");
    // 4. Prefetch k cycles before the barrier (prefetch in p, barrier in p + k): waits max(0, W + 2 - k).
    for (const int k : {W_ + 2, W_ + 3, W_ + 1, 1, 2}) {
      const std::uint64_t mask = (rng_.next() & all_) | (1ull << rng_.uniform(0, SC_ - 1));
      issue(0, false);
      idle(W_ + 3);
      issue(mask, false);
      idle(k - 1);
      const std::string what = "prefetch " + std::to_string(k) + " cycles ahead";
      expect_barrier(mask, std::max(0, W_ + 2 - k), what.c_str());
    }
  }

  void random_step() {
    const int gap = rng_.chance(50) ? 0 : static_cast<int>(rng_.uniform(1, 2 * W_ + 4));
    idle(gap);
    const int kind = static_cast<int>(rng_.uniform(0, 9));
    if (kind < 4) {  // prefetch, then the matching barrier earlier or later than W + 2 cycles after it
      const std::uint64_t mask = random_mask();
      issue(mask, false);
      idle(static_cast<int>(rng_.uniform(0, 2 * W_ + 5)));
      issue(mask, true);
    } else if (kind < 7) {
      issue(random_mask(), true);
    } else {
      issue(random_mask(), false);
    }
  }

  // Negative check: accesses to asleep sectors (usable_o low, ack high) must be flagged.
  void negative() {
    issue(0, false);
    idle(2);
    for (int i = 0; i < 8; ++i) tick(false, rng_.next() & all_, rng_.chance(50), true);
    idle(1);
    if (neg_sent_ == 0 || neg_flagged_ != 8)
      report_.fail(sim_.cycle(), where("spm err_sleep_o") + ": " + std::to_string(8 - neg_flagged_) +
                                     " of 8 cycles with accesses to asleep sectors were not flagged");
    report_.check(sim_.cycle(), where("spm err_sticky_o after accesses to asleep sectors"), 1, m_->err_sticky_o);
  }

  const tb::Args& args_;
  PmuInfo pi_;
  tb::Sim sim_;
  tb::Rng rng_;
  tb::Report report_;
  RefPmu ref_;
  std::unique_ptr<P> p_;
  std::unique_ptr<M> m_;
  int SC_ = 0, W_ = 0, B_ = 0, aw_ = 0;
  std::uint64_t all_ = 0;
  long long exp_err_ = 0;
  long long barriers_ = 0, prefetches_ = 0, wake_stalled_ = 0, accesses_ = 0, neg_sent_ = 0, neg_flagged_ = 0;
};

template <class P, class M>
int run_pmu(const tb::Args& args, const std::vector<PmuInfo>& pmus, const std::string& name) {
  for (const PmuInfo& pi : pmus)
    if (pi.name == name) {
      PmuBench<P, M> b(args, pi);
      return b.run();
    }
  std::fprintf(stderr, "FAIL pmu_%s: model built but not listed in pmu.json\n", name.c_str());
  return 1;
}

}  // namespace

int pmu_tb_main(int argc, char** argv) {
  const tb::Args args = tb::Args::parse(argc, argv, "[--mode all|data|weight|acc|shared]");
  const std::vector<PmuInfo> pmus = load_pmus(args.rtl_dir);
  const std::string mode = args.mode.empty() ? "all" : args.mode;
  int rc = 0, ran = 0;
  auto want = [&mode](const char* n) { return mode == "all" || mode == n; };
  (void)want;
#ifdef CAPSGEN_TB_PMU_DATA
  if (want("data")) rc |= run_pmu<Vpmu_data, Vspm_data>(args, pmus, "data"), ++ran;
#endif
#ifdef CAPSGEN_TB_PMU_WEIGHT
  if (want("weight")) rc |= run_pmu<Vpmu_weight, Vspm_weight>(args, pmus, "weight"), ++ran;
#endif
#ifdef CAPSGEN_TB_PMU_ACC
  if (want("acc")) rc |= run_pmu<Vpmu_acc, Vspm_acc>(args, pmus, "acc"), ++ran;
#endif
#ifdef CAPSGEN_TB_PMU_SHARED
  if (want("shared")) rc |= run_pmu<Vpmu_shared, Vspm_shared>(args, pmus, "shared"), ++ran;
#endif
  if (pmus.empty() && ran == 0) {
    std::printf("SKIP pmu: no power gating in this design (no pmu.json, no capsgen_pmu_* modules)\n");
    return 0;
  }
  if (mode == "all" && ran != static_cast<int>(pmus.size())) {
    std::fprintf(stderr, "FAIL pmu: %d PMUs in pmu.json, %d models built\n", static_cast<int>(pmus.size()), ran);
    return 1;
  }
  if (ran == 0) {
    std::fprintf(stderr, "FAIL pmu: no PMU '%s' in this design\n", mode.c_str());
    return 1;
  }
  return rc;
}
