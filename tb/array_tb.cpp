// Block test of capsgen_systolic_array together with capsgen_accumulator_bank: tiled GEMMs
// C[MxN] = A[MxK] * B[KxN] + bias of arbitrary shapes (also not multiples of rows/cols) with
// weight tiles changing back to back, K-chunks accumulated in the accumulators. Checked every
// cycle, bit-exactly:
//   - the array's result_o/result_valid_o against exact dot products at cycle t + rows + cols
//     (+1 with pe_pipeline), the documented latency;
//   - the accumulators' finished entries against a golden GEMM that follows
//     capsgen::fx::ChunkedAccumulator (chunk = rows), 2 cycles after their last chunk;
//   - zero bubbles: with tiles of >= rows vectors and no stalls, data enters every cycle.
// Modes: default (full test), icarus (short run, writes vector files for tb/icarus with --vectors),
// bench (one large back-to-back GEMM, prints/writes JSON with cycles/s and utilization).
#include <chrono>
#include <cstdio>
#include <deque>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "Varray.h"
#include "Vbank.h"
#include "common/bits.hpp"
#include "common/rng.hpp"
#include "common/sim.hpp"
#include "numerics/fixed.hpp"

namespace fx = capsgen::fx;

namespace {

enum class Fill { kRandom, kMinMin, kMinMax };

struct Gemm {
  std::string name;
  int M, K, N;
  bool stall;      // random idle cycles in weight loads and data
  int mblock;      // rows of A per accumulator pass (<= acc depth)
  Fill fill = Fill::kRandom;
};

struct Tile {
  int n0, m0, mlen, kc;
  bool first, last;
  std::vector<std::int64_t> w;  // rows x cols, w[r*cols + c]
};

struct Pending {  // a data vector on its way through the array
  std::uint64_t due;
  int tile, v;
  std::vector<std::int64_t> dots;  // exact dot products per column
};

struct OutPending {  // a finished accumulator entry
  std::uint64_t due;
  int m, n0;
};

class ArrayBench {
 public:
  ArrayBench(const tb::Args& args, const tb::RtlConfig& cfg)
      : args_(args), cfg_(cfg), sim_(args), rng_(args.seed), report_("array", args.max_errors) {
    arr_ = std::make_unique<Varray>(sim_.context(), "array");
    bank_ = std::make_unique<Vbank>(sim_.context(), "bank");
    sim_.add(*arr_);
    sim_.add(*bank_);
    sim_.open_trace();
    R_ = cfg.rows, C_ = cfg.cols, D_ = cfg.data_bits, W_ = cfg.weight_bits, P_ = cfg.psum_bits;
    AW_ = cfg.acc_addr_bits();
    lat_ = cfg.array_latency();
    in_w_ = R_ * D_ + 2 + C_ * W_ + 1 + 3 + AW_ + C_ * P_;
    exp_w_ = 1 + C_ * P_ + 1 + AW_ + C_ * P_;
    sim_.reset();
  }

  void open_vectors(const std::string& dir) {
    vin_.open(dir + "/inputs.hex");
    vexp_.open(dir + "/expected.hex");
    vdir_ = dir;
    if (!vin_ || !vexp_) throw std::runtime_error("cannot write vectors to " + dir);
  }

  // Runs one GEMM; returns the number of cycles from its first data vector to its last output.
  void run(const Gemm& g);

  int finish() {
    // Drain: idle cycles until everything left the pipelines.
    idle_cycles(lat_ + 4);
    sim_.finish();
    if (vin_.is_open()) {
      vin_.close();
      vexp_.close();
      std::ofstream p(vdir_ + "/params.txt");
      p << "-Ptb_array.Rows=" << R_ << " -Ptb_array.Cols=" << C_ << " -Ptb_array.DataWidth=" << D_
        << " -Ptb_array.WeightWidth=" << W_ << " -Ptb_array.PsumWidth=" << P_ << " -Ptb_array.AddrWidth=" << AW_
        << " -Ptb_array.NumCycles=" << vec_cycles_ << "\n";
    }
    char extra[200];
    std::snprintf(extra, sizeof extra, "%s %dx%d%s, %d GEMMs, %llu cycles, %lld saturated outputs", cfg_.name.c_str(), R_,
                  C_, cfg_.pe_pipeline ? " pe_pipeline" : "", gemms_, static_cast<unsigned long long>(sim_.cycle()),
                  saturated_);
    return report_.summary(extra);
  }

  tb::Report& report() { return report_; }
  long long saturated() const { return saturated_; }
  std::uint64_t cycle() const { return sim_.cycle(); }
  long long useful_macs = 0;
  bool verbose = true;
  void set_profile(bool on) { sim_.set_profile(on); }
  double model_seconds() const { return sim_.model_seconds(); }
  std::uint64_t span_first = 0, span_last = 0;  // last GEMM: first data cycle, end of its last output
  std::uint64_t issue_last = 0;                 // last GEMM: last data cycle

 private:
  std::int64_t data_value(Fill f) {
    if (f == Fill::kMinMin || f == Fill::kMinMax) return fx::smin(D_);
    return rng_.signed_value(D_);
  }
  std::int64_t weight_value(Fill f) {
    if (f == Fill::kMinMin) return fx::smin(W_);
    if (f == Fill::kMinMax) return fx::smax(W_);
    return rng_.signed_value(W_);
  }
  void idle_cycles(int n) {
    for (int i = 0; i < n; ++i) cycle_io(false, nullptr, 0, false, false, nullptr, nullptr);
  }
  // Applies the inputs of one cycle, checks the outputs of this cycle, steps the clock.
  void cycle_io(bool data_valid, const std::vector<std::int64_t>* x, int /*unused*/, bool swap, bool load,
                const std::vector<std::int64_t>* wrow, const Gemm* g);

  tb::Args args_;
  tb::RtlConfig cfg_;
  tb::Sim sim_;
  tb::Rng rng_;
  tb::Report report_;
  std::unique_ptr<Varray> arr_;
  std::unique_ptr<Vbank> bank_;
  int R_, C_, D_, W_, P_, AW_, lat_, in_w_, exp_w_;
  // current GEMM state (for output checking)
  std::vector<Tile> tiles_;
  std::vector<std::int64_t> golden_;  // M x N of the current GEMM
  std::vector<std::int64_t> bias_;
  int N_ = 0, M_ = 0;
  std::deque<Pending> pend_;
  std::deque<OutPending> outs_;
  long long saturated_ = 0;
  int gemms_ = 0;
  std::ofstream vin_, vexp_;
  std::string vdir_;
  long long vec_cycles_ = 0;
};

void ArrayBench::cycle_io(bool data_valid, const std::vector<std::int64_t>* x, int, bool swap, bool load,
                          const std::vector<std::int64_t>* wrow, const Gemm*) {
  const std::uint64_t t = sim_.cycle();
  const bool rec = vin_.is_open();
  tb::BitVec vin(in_w_, rec), vexp(exp_w_, rec);
  // ---- array inputs ----
  int pos = 0;
  for (int r = 0; r < R_; ++r) {
    const std::uint64_t v = x ? static_cast<std::uint64_t>((*x)[r]) : 0;
    tb::put(arr_->data_i, r * D_, D_, v);
    vin.put(pos + r * D_, D_, v);
  }
  pos += R_ * D_;
  arr_->data_valid_i = data_valid;
  arr_->weight_swap_i = swap;
  vin.put(pos++, 1, data_valid);
  vin.put(pos++, 1, swap);
  for (int c = 0; c < C_; ++c) {
    const std::uint64_t v = wrow ? static_cast<std::uint64_t>((*wrow)[c]) : 0;
    tb::put(arr_->weight_i, c * W_, W_, v);
    vin.put(pos + c * W_, W_, v);
  }
  pos += C_ * W_;
  arr_->weight_load_i = load;
  vin.put(pos++, 1, load);

  // ---- array outputs of cycle t ----
  const bool exp_valid = !pend_.empty() && pend_.front().due == t;
  report_.check(t, "result_valid_o", exp_valid, arr_->result_valid_o);
  vexp.put(0, 1, arr_->result_valid_o);
  Pending cur;
  if (exp_valid) {
    cur = std::move(pend_.front());
    pend_.pop_front();
    for (int c = 0; c < C_; ++c) {
      const std::int64_t got = tb::get_signed(arr_->result_o, c * P_, P_);
      vexp.put(1 + c * P_, P_, static_cast<std::uint64_t>(got));
      if (got != cur.dots[c]) {
        const Tile& tl = tiles_[cur.tile];
        report_.mismatch(t,
                         "result_o tile=" + std::to_string(cur.tile) + " (n0=" + std::to_string(tl.n0) +
                             " m0=" + std::to_string(tl.m0) + " kchunk=" + std::to_string(tl.kc) +
                             ") vector=" + std::to_string(cur.v) + " col=" + std::to_string(c),
                         cur.dots[c], got);
      }
    }
  }
  // ---- accumulator bank inputs: the array's results with the control of their tile ----
  bank_->in_psum_i = arr_->result_o;
  bank_->in_valid_i = exp_valid;
  int bpos = pos;
  if (exp_valid) {
    const Tile& tl = tiles_[cur.tile];
    const int addr = cur.v;
    bank_->in_accumulate_i = !tl.first;
    bank_->in_last_i = tl.last;
    tb::put(bank_->in_addr_i, 0, AW_, static_cast<std::uint64_t>(addr));
    for (int c = 0; c < C_; ++c) {
      const int n = tl.n0 + c;
      tb::put(bank_->in_bias_i, c * P_, P_, static_cast<std::uint64_t>(n < N_ ? bias_[n] : 0));
    }
    if (tl.last) outs_.push_back({t + 2, tl.m0 + cur.v, tl.n0});
  } else {
    bank_->in_accumulate_i = 0;
    bank_->in_last_i = 0;
  }
  vin.put(bpos++, 1, bank_->in_valid_i);
  vin.put(bpos++, 1, bank_->in_accumulate_i);
  vin.put(bpos++, 1, bank_->in_last_i);
  vin.put(bpos, AW_, tb::get(bank_->in_addr_i, 0, AW_));
  bpos += AW_;
  for (int c = 0; c < C_; ++c) vin.put(bpos + c * P_, P_, tb::get(bank_->in_bias_i, c * P_, P_));
  bank_->rd_en_i = 0;

  // ---- accumulator outputs of cycle t ----
  const bool exp_out = !outs_.empty() && outs_.front().due == t;
  report_.check(t, "accumulator out_valid_o", exp_out, bank_->out_valid_o);
  const int epos = 1 + C_ * P_;
  vexp.put(epos, 1, bank_->out_valid_o);
  if (exp_out) {
    const OutPending o = outs_.front();
    outs_.pop_front();
    vexp.put(epos + 1, AW_, tb::get(bank_->out_addr_o, 0, AW_));
    for (int c = 0; c < C_; ++c) {
      const int n = o.n0 + c;
      const std::int64_t want = n < N_ ? golden_[static_cast<std::size_t>(o.m) * N_ + n] : 0;
      const std::int64_t got = tb::get_signed(bank_->out_data_o, c * P_, P_);
      vexp.put(epos + 1 + AW_ + c * P_, P_, static_cast<std::uint64_t>(got));
      if (got != want) {
        report_.mismatch(t, "accumulator_bank C[" + std::to_string(o.m) + "][" + std::to_string(n) + "] col=" +
                          std::to_string(c), want, got);
      }
    }
  }
  if (vin_.is_open()) {
    vin_ << vin.hex() << "\n";
    vexp_ << vexp.hex() << "\n";
    ++vec_cycles_;
  }
  sim_.step();
}

void ArrayBench::run(const Gemm& g) {
  ++gemms_;
  M_ = g.M, N_ = g.N;
  const int K = g.K;
  // Matrices.
  std::vector<std::int64_t> A(static_cast<std::size_t>(g.M) * K), B(static_cast<std::size_t>(K) * g.N);
  for (auto& a : A) a = data_value(g.fill);
  for (auto& b : B) b = weight_value(g.fill);
  bias_.assign(g.N, 0);
  for (auto& b : bias_) b = g.fill == Fill::kRandom && rng_.chance(70) ? rng_.signed_value(P_ - 2) : 0;
  // Golden GEMM: the accumulation contract of capsgen::fx (chunks of `rows` terms).
  golden_.assign(static_cast<std::size_t>(g.M) * g.N, 0);
  for (int m = 0; m < g.M; ++m)
    for (int n = 0; n < g.N; ++n) {
      fx::ChunkedAccumulator acc(R_, P_, bias_[n]);
      for (int k = 0; k < K; ++k) acc.add_term(A[static_cast<std::size_t>(m) * K + k] * B[static_cast<std::size_t>(k) * g.N + n]);
      golden_[static_cast<std::size_t>(m) * g.N + n] = acc.finish();
      if (acc.saturated()) ++saturated_;
    }
  useful_macs = static_cast<long long>(g.M) * g.N * K;
  // Tiles: n-tiles, then m-blocks, then k-chunks (innermost: accumulate in place).
  tiles_.clear();
  const int kchunks = (K + R_ - 1) / R_;
  for (int n0 = 0; n0 < g.N; n0 += C_)
    for (int m0 = 0; m0 < g.M; m0 += g.mblock)
      for (int kc = 0; kc < kchunks; ++kc) {
        Tile t{n0, m0, std::min(g.mblock, g.M - m0), kc, kc == 0, kc == kchunks - 1, {}};
        t.w.assign(static_cast<std::size_t>(R_) * C_, 0);
        for (int r = 0; r < R_; ++r)
          for (int c = 0; c < C_; ++c) {
            const int k = kc * R_ + r, n = n0 + c;
            if (k < K && n < g.N) t.w[static_cast<std::size_t>(r) * C_ + c] = B[static_cast<std::size_t>(k) * g.N + n];
          }
        tiles_.push_back(std::move(t));
      }
  const int T = static_cast<int>(tiles_.size());
  bool all_long = true;
  for (const Tile& t : tiles_) all_long = all_long && t.mlen >= R_;

  // Schedule: data first (a tile starts once its load completed in an earlier cycle), then the
  // weight load of the next tile (allowed from the cycle its predecessor swapped in).
  int load_tile = 0, load_k = 0, data_tile = 0, data_v = 0;
  std::vector<long long> load_done(T, -1), swapped(T, -1);
  long long first_issue = -1, last_issue = -1, issued = 0, bubbles = 0;
  std::vector<std::int64_t> x(R_), wrow(C_);
  const std::uint64_t start = sim_.cycle();
  while (data_tile < T || !pend_.empty() || !outs_.empty()) {
    const long long t = static_cast<long long>(sim_.cycle());
    // data
    bool dv = false, swap = false;
    if (data_tile < T) {
      const Tile& tl = tiles_[data_tile];
      const bool ready = data_v > 0 || (load_done[data_tile] >= 0 && load_done[data_tile] < t);
      if (ready && !(g.stall && rng_.chance(20))) {
        dv = true;
        swap = data_v == 0;
        if (swap) swapped[data_tile] = t;
        const int m = tl.m0 + data_v;
        Pending p{static_cast<std::uint64_t>(t + lat_), data_tile, data_v, std::vector<std::int64_t>(C_, 0)};
        for (int r = 0; r < R_; ++r) {
          const int k = tl.kc * R_ + r;
          x[r] = k < K ? A[static_cast<std::size_t>(m) * K + k] : 0;
        }
        for (int c = 0; c < C_; ++c) {
          std::int64_t s = 0;
          for (int r = 0; r < R_; ++r) s += x[r] * tl.w[static_cast<std::size_t>(r) * C_ + c];
          if (!fx::fits_s(s, P_)) report_.fail(t, "config: a column sum does not fit psum (validation hole)");
          p.dots[c] = s;
        }
        pend_.push_back(std::move(p));
        if (first_issue < 0) first_issue = t;
        last_issue = t;
        ++issued;
        if (++data_v == tl.mlen) data_v = 0, ++data_tile;
      } else if (first_issue >= 0) {
        ++bubbles;
      }
    }
    // weights
    bool load = false;
    if (load_tile < T && (load_tile == 0 || swapped[load_tile - 1] >= 0) && !(g.stall && rng_.chance(30))) {
      load = true;
      const Tile& tl = tiles_[load_tile];
      const int r = R_ - 1 - load_k;  // bottom row first
      for (int c = 0; c < C_; ++c) wrow[c] = tl.w[static_cast<std::size_t>(r) * C_ + c];
      if (++load_k == R_) load_k = 0, load_done[load_tile++] = t;
    }
    cycle_io(dv, dv ? &x : nullptr, 0, swap, load, load ? &wrow : nullptr, &g);
    if (report_.too_many()) return;
    if (static_cast<long long>(sim_.cycle() - start) > 50LL * (issued + 1000) + 100000) {
      report_.fail(sim_.cycle(), "watchdog: GEMM " + g.name + " does not finish");
      return;
    }
  }
  span_first = static_cast<std::uint64_t>(first_issue);
  issue_last = static_cast<std::uint64_t>(last_issue);
  span_last = sim_.cycle();
  if (!g.stall && all_long && bubbles != 0)
    report_.fail(sim_.cycle(), "GEMM " + g.name + ": " + std::to_string(bubbles) +
                                   " bubble cycles between weight tiles (expected none: all tiles >= rows vectors)");
  if (!g.stall && all_long && last_issue - first_issue + 1 != issued)
    report_.fail(sim_.cycle(), "GEMM " + g.name + ": data input not contiguous");
  if (verbose) std::printf("  GEMM %-22s %3dx%-3d * %3dx%-3d %s mblock=%d: %d tiles, %lld vectors, %lld bubbles\n", g.name.c_str(),
              g.M, K, K, g.N, g.stall ? "stalls " : "tight  ", g.mblock, T, issued, bubbles);
}

}  // namespace

int array_tb_main(int argc, char** argv) {
  const tb::Args args = tb::Args::parse(argc, argv, "[--mode full|icarus|bench] [--vectors DIR] [--json FILE]");
  const tb::RtlConfig cfg = tb::RtlConfig::load(args.rtl_dir);
  const std::string mode = args.mode.empty() ? "full" : args.mode;
  ArrayBench bench(args, cfg);
  tb::Rng rng(args.seed * 7919 + 13);
  const int R = cfg.rows, C = cfg.cols, depth = cfg.acc_depth;
  auto mb = [depth](int M) { return std::max(1, std::min(depth, M)); };

  if (mode == "bench") {
    // Back-to-back weight tiles of 4*rows vectors (zero bubbles), the GEMM repeated
    // round(50 * scale) times. Utilization = useful MACs / (rows * cols * cycles), end to end
    // (first data vector to last accumulator output) and over the data-issue cycles only.
    if (!args.vectors.empty()) bench.open_vectors(args.vectors);
    const int M = std::min(depth, 4 * R), K = 8 * R, N = 4 * C;
    const int reps = std::max(1, static_cast<int>(50 * args.scale + 0.5));
    bench.verbose = false;
    bench.set_profile(true);
    const auto t0 = std::chrono::steady_clock::now();
    const std::uint64_t c0 = bench.cycle();
    double busy = 0, issue = 0;
    long long macs = 0;
    for (int i = 0; i < reps; ++i) {
      bench.run({"bench", M, K, N, false, mb(M)});
      busy += static_cast<double>(bench.span_last - bench.span_first);
      issue += static_cast<double>(bench.issue_last - bench.span_first + 1);
      macs += bench.useful_macs;
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double cycles = static_cast<double>(bench.cycle() - c0);
    const double rc = static_cast<double>(R) * C;
    char json[800];
    std::snprintf(json, sizeof json,
                  "{\"config\": \"%s\", \"rows\": %d, \"cols\": %d, \"pe_pipeline\": %s, \"gemm_mkn\": [%d, %d, %d], "
                  "\"repetitions\": %d, \"cycles\": %.0f, \"seconds\": %.4f, \"cycles_per_second\": %.1f, \"cycles_per_second_with_testbench\": %.1f, "
                  "\"useful_macs\": %lld, \"utilization\": %.4f, \"utilization_issue\": %.4f, \"trace\": %s}",
                  cfg.name.c_str(), R, C, cfg.pe_pipeline ? "true" : "false", M, K, N, reps, cycles, secs,
                  cycles / bench.model_seconds(), cycles / secs, macs, static_cast<double>(macs) / (rc * busy), static_cast<double>(macs) / (rc * issue),
                  args.trace.empty() ? "false" : "true");
    std::printf("%s\n", json);
    if (!args.json.empty()) std::ofstream(args.json) << json << "\n";
    return bench.finish();
  }

  if (!args.vectors.empty()) bench.open_vectors(args.vectors);
  std::vector<Gemm> gemms;
  gemms.push_back({"37x53x19", 37, 53, 19, false, mb(37)});
  gemms.push_back({"37x53x19-stall", 37, 53, 19, true, mb(37)});
  gemms.push_back({"M1-forwarding", 1, 3 * R + 1, C + 1, false, 1});
  if (mode == "full") {
    gemms.push_back({"1x1x1", 1, 1, 1, false, 1});
    gemms.push_back({"exact-multiples", mb(2 * R), 2 * R, 2 * C, false, mb(2 * R)});
    gemms.push_back({"tiles-shorter-than-rows", std::max(1, R / 2), 3 * R, C, false, mb(std::max(1, R / 2))});
    // Saturation of the accumulators, both directions: min x min products (positive), min x max
    // (negative), over enough chunks to exceed psum whatever its headroom.
    int need = cfg.data_bits + cfg.weight_bits;
    while ((1 << (need - cfg.data_bits - cfg.weight_bits)) < R) ++need;
    const int chunks = (1 << std::min(12, cfg.psum_bits - need + 2)) + 2;
    gemms.push_back({"saturate-up", mb(R + 1), R * chunks, C, false, mb(R + 1), Fill::kMinMin});
    gemms.push_back({"saturate-down", mb(R + 1), R * chunks, C, false, mb(R + 1), Fill::kMinMax});
    const int n_random = static_cast<int>(12 * args.scale);
    for (int i = 0; i < n_random; ++i) {
      const int M = static_cast<int>(rng.uniform(1, 3 * R + 5));
      const int K = static_cast<int>(rng.uniform(1, 4 * R + 3));
      const int N = static_cast<int>(rng.uniform(1, 2 * C + 3));
      const int block = static_cast<int>(rng.uniform(1, mb(M)));
      gemms.push_back({"random-" + std::to_string(i), M, K, N, rng.chance(50), rng.chance(50) ? mb(M) : block});
    }
  }
  for (const Gemm& g : gemms) {
    bench.run(g);
    if (bench.report().too_many()) break;
  }
  if (mode == "full" && bench.saturated() == 0) bench.report().fail(bench.cycle(), "no accumulator saturation reached");
  return bench.finish();
}
