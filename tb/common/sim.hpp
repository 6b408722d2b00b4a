// Simulation control shared by all block testbenches: command line, the generated RTL's
// config.json, clock/reset stepping of one or more Verilated models, a run-until watchdog, optional
// FST tracing (--trace file.fst, in real time at --clock-period-ps) and mismatch reporting.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/summary.hpp"
#include "verilated.h"
#if VM_TRACE_FST
#include "verilated_fst_c.h"
#else
class VerilatedFstC;  // tracing not built in (CAPSGEN_TB_TRACE=OFF)
#endif

namespace tb {

struct Args {
  std::uint64_t seed = 1;
  std::string rtl_dir;      // directory of the generated RTL (with config.json and the other summaries)
  std::string trace;        // FST file, empty: no tracing
  // The clock period in the trace, in ps (capsgen sim passes the preset's clock). The default, 2,
  // gives one time step per clock edge, for testbenches that run without a preset's clock.
  std::uint64_t clock_period_ps = 2;
  std::string vectors;      // directory for Icarus vector files, empty: none
  std::string program;      // engine: a `capsgen compile --dump-engine` directory to run instead
  std::string json;         // benchmark output, empty: none
  std::string results;      // tb_accel, tb_chip, the engine's program mode: the results document, empty: none
  double scale = 1.0;       // multiplies the amount of random stimulus
  std::string mode;         // testbench-specific
  std::string dram;         // chip: DRAM description (configs/dram/*.yaml), empty: the built-in DDR3-1600 x8
  int max_errors = 10;

  static Args parse(int argc, char** argv, const char* usage) {
    Args a;
    for (int i = 1; i < argc; ++i) {
      const std::string s = argv[i];
      auto value = [&]() -> std::string {
        if (i + 1 >= argc) throw std::runtime_error("missing value for " + s);
        return argv[++i];
      };
      if (s == "--seed") a.seed = std::stoull(value());
      else if (s == "--rtl") a.rtl_dir = value();
      else if (s == "--trace") a.trace = value();
      else if (s == "--clock-period-ps") a.clock_period_ps = std::stoull(value());
      else if (s == "--vectors") a.vectors = value();
      else if (s == "--program") a.program = value();
      else if (s == "--json") a.json = value();
      else if (s == "--results") a.results = value();
      else if (s == "--scale") a.scale = std::stod(value());
      else if (s == "--mode") a.mode = value();
      else if (s == "--dram") a.dram = value();
      else if (s == "--max-errors") a.max_errors = std::stoi(value());
      else if (s.rfind("+verilator", 0) == 0) continue;
      else {
        std::fprintf(stderr,
                     "usage: %s --rtl DIR [--seed N] [--trace file.fst] [--clock-period-ps PS] [--scale X] %s\n",
                     argv[0], usage);
        std::exit(2);
      }
    }
    if (a.clock_period_ps < 2) {
      std::fprintf(stderr, "%s: --clock-period-ps must be at least 2 (one ps per clock phase)\n", argv[0]);
      std::exit(2);
    }
    if (a.rtl_dir.empty()) {
      std::fprintf(stderr, "%s: --rtl DIR (generated RTL with config.json) is required\n", argv[0]);
      std::exit(2);
    }
    return a;
  }
};

// config.json written by `capsgen generate` (schemas/config.schema.json).
struct RtlConfig {
  std::string name;
  int rows = 0, cols = 0, pe_pipeline = 0, data_bits = 0, weight_bits = 0, psum_bits = 0, act_bits = 0,
      acc_depth = 0;

  static RtlConfig load(const std::string& dir) {
    const Summary kv(dir, "config");
    auto num = [&kv](const char* k) { return kv.num(k); };
    RtlConfig c;
    c.name = kv.str("name");
    c.rows = num("rows");
    c.cols = num("cols");
    c.pe_pipeline = kv.flag("pe_pipeline") ? 1 : 0;
    c.data_bits = num("data_bits");
    c.weight_bits = num("weight_bits");
    c.psum_bits = num("psum_bits");
    c.act_bits = num("act_bits");
    c.acc_depth = num("acc_depth");
    return c;
  }
  int acc_addr_bits() const {
    int k = 0;
    while ((1LL << k) < acc_depth) ++k;
    return k < 1 ? 1 : k;
  }
  // The array's documented latency (docs/rtl-datapath.md), computed here independently of the emitter.
  int array_latency() const { return rows + cols + pe_pipeline; }
};

// Counts and prints mismatches; the first max_errors are printed in full.
class Report {
 public:
  Report(std::string block, int max_errors) : block_(std::move(block)), max_(max_errors) {}
  void mismatch(std::uint64_t cycle, const std::string& where, long long expected, long long actual) {
    if (++errors_ <= max_)
      problem("MISMATCH block=" + block_ + " " + where + " expected=" + std::to_string(expected) +
              " actual=" + std::to_string(actual) + " cycle=" + std::to_string(cycle));
  }
  void check(std::uint64_t cycle, const std::string& where, long long expected, long long actual) {
    ++checks_;
    if (expected != actual) mismatch(cycle, where, expected, actual);
  }
  void fail(std::uint64_t cycle, const std::string& what) {
    if (++errors_ <= max_) problem("FAIL block=" + block_ + " " + what + " cycle=" + std::to_string(cycle));
  }
  // A problem line (stderr, and the results document's "problems") that counts no error of its own.
  void problem(const std::string& line) {
    std::fprintf(stderr, "%s\n", line.c_str());
    problems_.push_back(line);
  }
  long long errors() const { return errors_; }
  long long checks() const { return checks_; }
  bool too_many() const { return errors_ > max_; }
  // The MISMATCH and FAIL lines printed so far (at most max_errors of the counted ones).
  const std::vector<std::string>& problems() const { return problems_; }
  // Prints the summary; returns the process exit code.
  int summary(const std::string& extra = "") const {
    std::printf("%s %s: %lld checks, %lld errors%s%s\n", errors_ ? "FAIL" : "PASS", block_.c_str(), checks_, errors_,
                extra.empty() ? "" : ", ", extra.c_str());
    return errors_ ? 1 : 0;
  }

 private:
  std::string block_;
  int max_;
  long long errors_ = 0;
  long long checks_ = 0;
  std::vector<std::string> problems_;
};

// The initial value of every register and memory of the models built after this call (Verilator's
// randReset; the models are verilated with --x-initial unique, tb/CMakeLists.txt, so it applies):
//   CAPSGEN_RAND_RESET=0  all zero (the default), 1 all ones, 2 random;
//   CAPSGEN_RAND_SEED=N   the seed of the random values (N >= 1, default 1).
// The models' input ports start there too, so a testbench drives every control input (valid,
// ready, enable) before reset. Every register a design relies on is reset (rst_ni) and every memory
// word is written before it is read, so no result may depend on the mode or the seed.
inline void init_values(VerilatedContext& ctx) {
  auto env_int = [](const char* name, long long lo, long long hi, long long dflt) {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') return dflt;
    char* end = nullptr;
    const long long x = std::strtoll(v, &end, 10);
    if (*end != '\0' || x < lo || x > hi)
      throw std::runtime_error(std::string(name) + ": expected an integer in [" + std::to_string(lo) + ", " +
                               std::to_string(hi) + "], got '" + v + "'");
    return x;
  };
  const int mode = static_cast<int>(env_int("CAPSGEN_RAND_RESET", 0, 2, 0));
  const int seed = static_cast<int>(env_int("CAPSGEN_RAND_SEED", 1, 2147483647, 1));
  ctx.randReset(mode);
  ctx.randSeed(seed);
  if (mode != 0) std::fprintf(stderr, "initial values: CAPSGEN_RAND_RESET=%d CAPSGEN_RAND_SEED=%d\n", mode, seed);
}

// The clock as the trace shows it. The period is a whole number of ps (capsgen sim rounds the
// preset's frequency to the nearest ps, an error below 0.5 ps per cycle); the high phase is the
// period's first half, rounded down, the low phase the rest, so every cycle lasts exactly the period.
// The trace's precision is 1 ns when both phases are whole ns (GTKWave then shows ns directly),
// else 1 ps. Time steps are in units of that precision.
class TraceClock {
 public:
  explicit TraceClock(std::uint64_t period_ps)
      : high_ps_(period_ps / 2),
        low_ps_(period_ps - period_ps / 2),
        unit_ps_(high_ps_ % 1000 == 0 && low_ps_ % 1000 == 0 ? 1000 : 1) {}
  std::uint64_t unit_ps() const { return unit_ps_; }
  std::uint64_t high_steps() const { return high_ps_ / unit_ps_; }
  std::uint64_t low_steps() const { return low_ps_ / unit_ps_; }
  // The precision as VerilatedContext::timeprecision takes it, and as the FST's timescale.
  int precision_exponent() const { return unit_ps_ == 1000 ? -9 : -12; }
  const char* precision_name() const { return unit_ps_ == 1000 ? "1ns" : "1ps"; }

 private:
  std::uint64_t high_ps_, low_ps_, unit_ps_;
};

class Sim {
 public:
  explicit Sim(const Args& args)
      : args_(args), clock_(args.clock_period_ps), ctx_(std::make_unique<VerilatedContext>()) {
    init_values(*ctx_);
    if (!args.trace.empty()) ctx_->traceEverOn(true);
  }
  // Call finish() before the models are destroyed (it runs their final()).
  ~Sim() = default;

  VerilatedContext* context() { return ctx_.get(); }

  // Registers a model with clk_i and rst_ni ports. Call open_trace() after adding all models.
  template <class M>
  void add(M& m) {
    Hooks h;
    h.clk = &m.clk_i;
    h.rst = &m.rst_ni;
    h.eval = [&m] { m.eval(); };
#if VM_TRACE_FST
    h.trace = [&m](VerilatedFstC* t) { m.trace(t, 99); };
#endif
    h.final = [&m] { m.final(); };
    models_.push_back(std::move(h));
  }

  void open_trace() {
    // The models' constructors set the context's time unit and precision from the RTL's timescale;
    // the simulation's time follows the clock instead (TraceClock).
    ctx_->timeunit(-9);
    ctx_->timeprecision(clock_.precision_exponent());
    if (args_.trace.empty() || fst_) return;
#if !VM_TRACE_FST
    throw std::runtime_error("--trace: this testbench was built without tracing (configure tb/ with "
                             "-DCAPSGEN_TB_TRACE=ON)");
#else
    // The FST takes its timescale from the trace object, which reads the thread's default context
    // rather than this one, so it is set explicitly.
    fst_ = std::make_unique<VerilatedFstC>();
    fst_->set_time_unit("1ns");
    fst_->set_time_resolution(clock_.precision_name());
    for (auto& h : models_) h.trace(fst_.get());
    fst_->open(args_.trace.c_str());
    std::printf("trace clock_period_ps=%llu timescale=%s\n", static_cast<unsigned long long>(args_.clock_period_ps),
                clock_.precision_name());
#endif
  }

  // Holds rst_ni low for `cycles` clock cycles, then releases it; cycle() restarts at 0.
  void reset(int cycles = 3) {
    for (auto& h : models_) *h.rst = 0;
    for (int i = 0; i < cycles; ++i) edge();
    for (auto& h : models_) *h.rst = 1;
    for (auto& h : models_) h.eval();
    cycle_ = 0;
    // Where cycle 0 begins in the trace: capsgen sim zooms its GTKWave save file from here (the
    // results document's trace_reset_released_ps).
    if (fst_) {
      reset_released_ps_ = static_cast<long long>(ctx_->time() * clock_.unit_ps());
      std::printf("trace reset_released_ps=%lld\n", reset_released_ps_);
    }
  }

  // The trace time (ps) of the last reset release; -1 without a trace.
  long long reset_released_ps() const { return reset_released_ps_; }

  // One clock cycle: the inputs set for cycle() are sampled at the rising edge; afterwards the
  // outputs show the state of cycle()+1.
  void step() {
    if (profile_) {
      const auto t0 = std::chrono::steady_clock::now();
      edge();
      model_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    } else {
      edge();
    }
    ++cycle_;
    if (cycle_ > watchdog_) throw std::runtime_error("watchdog: simulation exceeded " + std::to_string(watchdog_) +
                                                     " cycles");
  }

  // Steps until pred() holds (checked before each step); false on timeout.
  template <class Pred>
  bool run_until(Pred pred, std::uint64_t timeout) {
    for (std::uint64_t i = 0; i < timeout; ++i) {
      if (pred()) return true;
      step();
    }
    return pred();
  }

  std::uint64_t cycle() const { return cycle_; }
  // Time spent in the models' eval() (and tracing), measured when profiling is on.
  void set_profile(bool on) { profile_ = on; }
  double model_seconds() const { return model_seconds_; }
  void set_watchdog(std::uint64_t cycles) { watchdog_ = cycles; }

  void finish() {
    if (finished_) return;
    finished_ = true;
    for (auto& h : models_) h.final();
#if VM_TRACE_FST
    if (fst_) fst_->close();
#endif
  }

 private:
  struct Hooks {
    CData* clk;
    CData* rst;
    std::function<void()> eval;
    std::function<void(VerilatedFstC*)> trace;
    std::function<void()> final;
  };
  // One clock period: the rising edge at the period's start, the falling edge half a period later.
  // Every edge of the simulation, reset included, advances the time, so the n-th rising edge is at
  // n periods.
  void edge() {
    for (auto& h : models_) *h.clk = 1;
    for (auto& h : models_) h.eval();
#if VM_TRACE_FST
    if (fst_) fst_->dump(ctx_->time());
#endif
    ctx_->timeInc(clock_.high_steps());
    for (auto& h : models_) *h.clk = 0;
    for (auto& h : models_) h.eval();
#if VM_TRACE_FST
    if (fst_) fst_->dump(ctx_->time());
#endif
    ctx_->timeInc(clock_.low_steps());
  }

  Args args_;
  TraceClock clock_;
  std::unique_ptr<VerilatedContext> ctx_;
#if VM_TRACE_FST
  std::unique_ptr<VerilatedFstC> fst_;
#else
  void* fst_ = nullptr;  // never set: tracing not built in
#endif
  std::vector<Hooks> models_;
  std::uint64_t cycle_ = 0;
  long long reset_released_ps_ = -1;
  std::uint64_t watchdog_ = 500'000'000;
  bool finished_ = false;
  bool profile_ = false;
  double model_seconds_ = 0;
};

}  // namespace tb
