// Block test of the staging buffer (capsgen_staging, docs/rtl-staging.md) against a cycle-exact C++
// model of its two buffers (contents, full flags, writer/reader buffer, sticky error). Every cycle
// the testbench compares wr_free_o, rd_avail_o, wr_buf_o, rd_buf_o and error_o with the model, and
// after every read the whole vector (every row) with the elements the model holds.
// Phases:
//   1. random legal traffic: a writer fills blocks of random length (1 .. accumulator depth vectors)
//      element by element in random order (10% zero elements) with random idle cycles and commits;
//      a reader streams each committed block 1-3 times with random idle cycles and releases it;
//   2. throughput: writer and reader without idle cycles, commit/release in the cycle of the last
//      write/read; the side that is not the bottleneck must never wait and the run must take exactly
//      blocks x (bottleneck cycles per block) + the other side's one block (the double buffer hides
//      one side behind the other completely), checked for a writer-bound and a reader-bound shape;
//   3. protocol errors (each after a reset): read, release with nothing committed; write and commit
//      with both buffers full (the full buffers must keep their contents); out-of-range indices when
//      rows or depth are not powers of two. error_o must rise in the cycle after the request.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "Vstaging.h"
#include "common/bits.hpp"
#include "common/rng.hpp"
#include "common/sim.hpp"

namespace {

struct In {
  bool wr_en = false, wr_zero = false, wr_commit = false, rd_en = false, rd_release = false;
  int wr_row = 0, wr_vec = 0, rd_vec = 0;
  std::int64_t wr_data = 0;
};

class StagingBench {
 public:
  explicit StagingBench(const tb::Args& args)
      : args_(args), cfg_(tb::RtlConfig::load(args.rtl_dir)), sim_(args), rng_(args.seed * 6151 + 5),
        report_("staging", args.max_errors), dut_(std::make_unique<Vstaging>(sim_.context())) {
    R_ = cfg_.rows;
    N_ = cfg_.acc_depth;
    D_ = cfg_.data_bits;
    RB_ = std::max(1, tb::clog2(R_));
    VB_ = std::max(1, tb::clog2(N_));
    sim_.add(*dut_);
    sim_.open_trace();
    sim_.set_watchdog(200'000'000ull);
  }

  int run() {
    restart();
    random_phase(std::max(4, static_cast<int>(40 * args_.scale)));
    // Writer-bound (rows cycles per vector against n passes of one cycle) and reader-bound shapes.
    throughput_phase("writer-bound", std::max(1, N_ / 2), std::max(1, R_ - 1), 5);
    throughput_phase("reader-bound", std::max(1, N_ / 3), R_ + 2, 5);
    throughput_phase("balanced", 1, R_, 7);
    error_phase();
    sim_.finish();
    return report_.summary(fmt_extra());
  }

 private:
  std::string fmt_extra() const {
    return std::to_string(R_) + " rows x 2 x " + std::to_string(N_) + " vectors, " + std::to_string(blocks_) +
           " blocks, " + std::to_string(reads_) + " vector reads";
  }

  void restart() {
    sim_.reset();
    for (auto& b : mem_) b.assign(static_cast<std::size_t>(N_) * R_, 0);
    full_[0] = full_[1] = false;
    wbuf_ = rbuf_ = 0;
    err_ = false;
    rd_pending_ = false;
    apply(In{});
  }

  void apply(const In& in) {
    dut_->wr_en_i = in.wr_en;
    dut_->wr_row_i = static_cast<std::remove_reference_t<decltype(dut_->wr_row_i)>>(in.wr_row);
    dut_->wr_vec_i = static_cast<std::remove_reference_t<decltype(dut_->wr_vec_i)>>(in.wr_vec);
    dut_->wr_zero_i = in.wr_zero;
    dut_->wr_data_i = static_cast<std::remove_reference_t<decltype(dut_->wr_data_i)>>(static_cast<std::uint64_t>(in.wr_data) & tb::mask64(D_));
    dut_->wr_commit_i = in.wr_commit;
    dut_->rd_en_i = in.rd_en;
    dut_->rd_vec_i = static_cast<std::remove_reference_t<decltype(dut_->rd_vec_i)>>(in.rd_vec);
    dut_->rd_release_i = in.rd_release;
    dut_->wr_vall_i = 0;  // element writes only (else the model's initial value, random with CAPSGEN_RAND_RESET=2)
  }

  // One clock cycle: compare the outputs of this cycle, apply `in`, advance the model and the DUT.
  void cycle(const In& in, const char* phase) {
    const auto t = sim_.cycle();
    const std::string p = phase;
    report_.check(t, p + " wr_free_o", !full_[wbuf_], dut_->wr_free_o);
    report_.check(t, p + " rd_avail_o", full_[rbuf_], dut_->rd_avail_o);
    report_.check(t, p + " wr_buf_o", wbuf_, dut_->wr_buf_o);
    report_.check(t, p + " rd_buf_o", rbuf_, dut_->rd_buf_o);
    report_.check(t, p + " error_o", err_, dut_->error_o);
    if (rd_pending_) {
      for (int r = 0; r < R_; ++r)
        report_.check(t, p + " rd_data_o row " + std::to_string(r) + " buf " + std::to_string(rd_buf_seen_) + " vec " +
                             std::to_string(rd_vec_seen_),
                      rd_expect_[static_cast<std::size_t>(r)], tb::get_signed(dut_->rd_data_o, r * D_, D_));
    }
    // Model of the cycle.
    const bool wr_free = !full_[wbuf_], rd_avail = full_[rbuf_];
    const bool row_ok = in.wr_row < R_, wvec_ok = in.wr_vec < N_, rvec_ok = in.rd_vec < N_;
    const bool bad = (in.wr_en && !wr_free) || (in.wr_commit && !wr_free) || (in.rd_en && !rd_avail) ||
                     (in.rd_release && !rd_avail) || (in.wr_en && (!row_ok || !wvec_ok)) || (in.rd_en && !rvec_ok);
    rd_pending_ = false;
    if (in.rd_en && rd_avail && rvec_ok) {
      rd_pending_ = true;
      rd_buf_seen_ = rbuf_;
      rd_vec_seen_ = in.rd_vec;
      rd_expect_.assign(mem_[rbuf_].begin() + static_cast<long>(in.rd_vec) * R_,
                        mem_[rbuf_].begin() + static_cast<long>(in.rd_vec + 1) * R_);
      ++reads_;
    }
    if (in.wr_en && wr_free && row_ok && wvec_ok)
      mem_[wbuf_][static_cast<std::size_t>(in.wr_vec) * R_ + in.wr_row] =
          in.wr_zero ? 0 : tb::sign_extend(static_cast<std::uint64_t>(in.wr_data) & tb::mask64(D_), D_);
    const int wb = wbuf_, rb = rbuf_;
    if (in.wr_commit && wr_free) {
      full_[wb] = true;
      wbuf_ = 1 - wb;
      ++blocks_;
    }
    if (in.rd_release && rd_avail) {
      full_[rb] = false;
      rbuf_ = 1 - rb;
    }
    if (bad) err_ = true;
    apply(in);
    sim_.step();
  }

  // ---- Phase 1 ----------------------------------------------------------------------------------
  void random_phase(int blocks) {
    struct Writer {
      std::vector<std::pair<int, int>> todo;  // (vec, row) still to write
      int m = 0;
      bool active = false, done_writing = false;
    } w;
    struct Reader {
      std::vector<int> order;  // vectors to read
      std::size_t next = 0;
      bool active = false;
    } r;
    std::vector<int> committed;  // block lengths committed, not yet released
    int started = 0, released = 0;
    const int idle_w = static_cast<int>(rng_.uniform(0, 40)), idle_r = static_cast<int>(rng_.uniform(0, 40));
    while (released < blocks) {
      In in;
      // Writer.
      if (!w.active && started < blocks && !full_[wbuf_]) {
        w.m = static_cast<int>(rng_.chance(20) ? N_ : rng_.uniform(1, N_));
        w.todo.clear();
        for (int v = 0; v < w.m; ++v)
          for (int row = 0; row < R_; ++row) w.todo.emplace_back(v, row);
        for (std::size_t i = w.todo.size(); i > 1; --i)
          std::swap(w.todo[i - 1], w.todo[static_cast<std::size_t>(rng_.uniform(0, static_cast<long>(i) - 1))]);
        w.active = true;
        ++started;
      }
      if (w.active && !rng_.chance(idle_w)) {
        if (!w.todo.empty()) {
          in.wr_en = true;
          in.wr_vec = w.todo.back().first;
          in.wr_row = w.todo.back().second;
          in.wr_zero = rng_.chance(10);
          in.wr_data = rng_.signed_value(D_);
          w.todo.pop_back();
        }
        if (w.todo.empty() && (in.wr_en ? rng_.chance(50) : true)) {
          in.wr_commit = true;  // in the cycle of the last write, or later
          committed.push_back(w.m);
          w.active = false;
        }
      } else if (w.active && !w.todo.empty() && rng_.chance(5)) {
        // An idle cycle with junk on the write bus (wr_en low): must not write.
        in.wr_vec = static_cast<int>(rng_.uniform(0, N_ - 1));
        in.wr_row = static_cast<int>(rng_.uniform(0, R_ - 1));
        in.wr_data = rng_.signed_value(D_);
      }
      // Reader (uses the state before this cycle's commit: a committed block is readable next cycle).
      if (!r.active && full_[rbuf_]) {
        const int m = committed.front();
        const int passes = static_cast<int>(rng_.uniform(1, 3));
        r.order.clear();
        for (int pass = 0; pass < passes; ++pass)
          for (int v = 0; v < m; ++v) r.order.push_back(rng_.chance(10) ? static_cast<int>(rng_.uniform(0, m - 1)) : v);
        r.next = 0;
        r.active = true;
      }
      if (r.active && !rng_.chance(idle_r)) {
        if (r.next < r.order.size()) {
          in.rd_en = true;
          in.rd_vec = r.order[r.next++];
        }
        if (r.next == r.order.size() && (in.rd_en ? rng_.chance(50) : true)) {
          in.rd_release = true;
          committed.erase(committed.begin());
          r.active = false;
          ++released;
        }
      }
      cycle(in, "random");
      if (report_.too_many()) return;
    }
    cycle(In{}, "random");  // the last read's data
    cycle(In{}, "random");
  }

  // ---- Phase 2 ----------------------------------------------------------------------------------
  void throughput_phase(const char* name, int m, int passes, int blocks) {
    m = std::min(m, N_);
    const long long wcyc = static_cast<long long>(m) * R_, rcyc = static_cast<long long>(m) * passes;
    restart();
    int wblock = 0, wi = 0, rblock = 0;
    long long ri = 0, wstall = 0, rstall = 0, cycles = 0;
    while (rblock < blocks) {
      In in;
      if (wblock < blocks) {
        if (!full_[wbuf_]) {
          in.wr_en = true;
          in.wr_vec = wi / R_;
          in.wr_row = wi % R_;
          in.wr_data = rng_.signed_value(D_);
          if (++wi == m * R_) {
            in.wr_commit = true;
            wi = 0;
            ++wblock;
          }
        } else {
          ++wstall;
        }
      }
      if (full_[rbuf_]) {
        in.rd_en = true;
        in.rd_vec = static_cast<int>(ri % m);
        if (++ri == rcyc) {
          in.rd_release = true;
          ri = 0;
          ++rblock;
        }
      } else if (wblock > rblock || wi > 0) {
        if (cycles >= wcyc) ++rstall;  // waiting after the first block could have been there
      }
      cycle(in, name);
      ++cycles;
      if (report_.too_many()) return;
    }
    cycle(In{}, name);
    const long long expect = wcyc >= rcyc ? blocks * wcyc + rcyc : wcyc + blocks * rcyc;
    const std::string what = std::string(name) + " m=" + std::to_string(m) + " passes=" + std::to_string(passes);
    if (wcyc >= rcyc) report_.check(sim_.cycle(), what + " writer stall cycles", 0, wstall);
    if (rcyc >= wcyc) report_.check(sim_.cycle(), what + " reader stall cycles", 0, rstall);
    report_.check(sim_.cycle(), what + " cycles for " + std::to_string(blocks) + " blocks", expect, cycles);
  }

  // ---- Phase 3 ----------------------------------------------------------------------------------
  void expect_error(const char* what, bool expected) {
    if (err_ != expected) report_.fail(sim_.cycle(), std::string("model: error flag after ") + what);
    cycle(In{}, what);  // compares error_o with the model
  }

  void fill_block(int buf_rows_value) {
    for (int v = 0; v < N_; ++v)
      for (int row = 0; row < R_; ++row) {
        In in;
        in.wr_en = true;
        in.wr_vec = v;
        in.wr_row = row;
        in.wr_data = buf_rows_value + v + row;
        in.wr_commit = (v == N_ - 1 && row == R_ - 1);
        cycle(in, "errors fill");
      }
  }

  void error_phase() {
    In in;
    restart();
    in = {};
    in.rd_en = true;
    cycle(in, "errors read-empty");
    expect_error("read with nothing committed", true);

    restart();
    in = {};
    in.rd_release = true;
    cycle(in, "errors release-empty");
    expect_error("release with nothing committed", true);

    restart();
    fill_block(3);
    fill_block(-50);
    expect_error("two full buffers", false);
    in = {};
    in.wr_en = true;
    in.wr_data = 99;
    cycle(in, "errors write-full");
    expect_error("write with both buffers full", true);
    in = {};
    in.wr_commit = true;
    cycle(in, "errors commit-full");
    // The full buffers kept their contents: read both back (legal reads; error_o stays high).
    for (int b = 0; b < 2; ++b)
      for (int v = 0; v < N_; ++v) {
        In rd;
        rd.rd_en = true;
        rd.rd_vec = v;
        rd.rd_release = (v == N_ - 1);
        cycle(rd, "errors read-back");
      }
    cycle(In{}, "errors read-back");

    if ((1 << RB_) != R_) {
      restart();
      in = {};
      in.wr_en = true;
      in.wr_row = R_;
      cycle(in, "errors row-range");
      expect_error("write to row >= rows", true);
    }
    if ((1LL << VB_) != N_) {
      restart();
      in = {};
      in.wr_en = true;
      in.wr_vec = N_;
      cycle(in, "errors vec-range");
      expect_error("write to vector >= depth", true);
    }
  }

  const tb::Args& args_;
  tb::RtlConfig cfg_;
  tb::Sim sim_;
  tb::Rng rng_;
  tb::Report report_;
  std::unique_ptr<Vstaging> dut_;
  int R_ = 0, N_ = 0, D_ = 0, RB_ = 0, VB_ = 0;
  std::vector<std::int64_t> mem_[2];
  bool full_[2] = {false, false};
  int wbuf_ = 0, rbuf_ = 0;
  bool err_ = false;
  bool rd_pending_ = false;
  int rd_buf_seen_ = 0, rd_vec_seen_ = 0;
  std::vector<std::int64_t> rd_expect_;
  long long blocks_ = 0, reads_ = 0;
};

}  // namespace

int staging_tb_main(int argc, char** argv) {
  const tb::Args args = tb::Args::parse(argc, argv, "");
  StagingBench b(args);
  return b.run();
}
