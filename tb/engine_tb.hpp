// Block test of the compute engine (capsgen_engine, docs/rtl-engine.md): whole Gemm descriptors run
// on the generated engine (gather, staging buffer, tile reader, array, accumulators, activation bank,
// output writer and their controller) with the operands in a memory model, compared against the one
// reference of what a Gemm computes, isa::run_gemm_reference (the functional executor runs the
// compiled CapsNet programs through the same function, bit-exact with the golden model).
//
// Memory model: the engine's four ports (data element reads, weight row reads of `cols` consecutive
// elements, bias row reads of `cols` psum codes, result writes), 1-cycle read latency. Operands live
// in disjoint regions (data, tiles, biases, outputs); their contents are a hash of the address, so any
// stride pattern reads defined values, and reads outside their region are reported.
// Checked for every descriptor: the sequence of writes (address and value, in order) equals the
// reference's, nothing is written after done_o, error_o stays low, done_o comes once, reads stay in
// their regions. Each mismatch names the descriptor, the write index, the output's (b, m, o), both
// values and the cycle.
// Stimuli: the conv layers of capsnet-tiny, capsnet-small and CapsNet-MNIST (vector counts capped),
// convs with padding, stride and non-square kernels, saturating operands, affine and block-diagonal
// Gemms, and 40 x --scale random descriptors; descriptors are presented back to back (the next one
// waits on desc_ready_o) and an empty descriptor (a zero count) must finish without writing.
// Activate (squash, softmax, norm) and Fill descriptors run through the same engine (its activation
// bank, data and write ports) against isa::run_activate_reference / run_fill_reference: directed
// lengths 1 and max_len, odd strides, and 12 x --scale random passes.
// Prints one "stat" line per descriptor (cycles, vectors, stalls by cause) for the cycle model; with
// --results FILE the same figures, the verdict and the problem lines go into one JSON document
// (schemas/accel-results.schema.json), which capsgen sim and bench/engine_cycles.sh read.
// With --program DIR (written by `capsgen compile --dump-engine DIR`) it runs a compiled network
// instead: every descriptor of the program in order on one memory that the engine's own writes
// update (the RTL computes the inference from the input image on), each descriptor's writes
// compared with the functional executor's, and the class prediction from the RTL's norm codes.
#pragma once

#include <algorithm>
#include <cstdio>
#include <deque>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "common/act_summary.hpp"
#include "common/bits.hpp"
#include "common/results.hpp"
#include "common/rng.hpp"
#include "common/sim.hpp"
#include "isa/engine_descriptor.hpp"
#include "isa/engine_timing.hpp"
#include "isa/gemm_ref.hpp"

namespace engine_tb {

using capsgen::isa::AccInit;
using capsgen::isa::Activate;
using capsgen::isa::Fill;
using capsgen::isa::ConvShape;
using capsgen::isa::DataSource;
using capsgen::isa::EngineDescriptor;
using capsgen::isa::Gemm;

// Disjoint regions of the address space (element addresses).
constexpr std::int64_t kDataBase = 0x0010'0000, kTileBase = 0x0100'0000, kBiasBase = 0x0200'0000,
                       kOutBase = 0x0300'0000, kRegionSize = 0x00F0'0000;

enum class Values { kRandom, kMax, kMin };

struct Stim {
  std::string name;
  Gemm g;
  Values values = Values::kRandom;
};

std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Dut: Vengine (capsgen_engine: descriptors presented by the testbench, as a host would) or Vaccel
// (capsgen_accel: the sequencer fetches the packed program itself; run_accel_program()). Both have the
// engine's memory ports and stat_* outputs under the same names.
template <class Dut>
class EngineTb {
 public:
  explicit EngineTb(const tb::Args& args)
      : args_(args), cfg_(tb::RtlConfig::load(args.rtl_dir)), sim_(args), rng_(args.seed * 7919 + 11),
        report_(requires(Dut& d) { d.pf_valid_o; } ? "accel" : "engine", args.max_errors), dut_(std::make_unique<Dut>(sim_.context())) {
    sim_.add(*dut_);
    sim_.open_trace();
    R_ = cfg_.rows;
    C_ = cfg_.cols;
    D_ = cfg_.data_bits;
    W_ = cfg_.weight_bits;
    P_ = cfg_.psum_bits;
    A_ = cfg_.act_bits;
    depth_ = cfg_.acc_depth;
    const tb::Summary kv(args.rtl_dir, "activation");
    ap_ = tb::act_params_from_summary(kv);
    max_len_ = kv.num("max_len");
    OB_ = std::max(A_, ap_.sqrt_out_bits);
  }

  // The simulation context (e.g. for the Verilator coverage counters after run()).
  VerilatedContext* context() { return sim_.context(); }

  // Which testbench writes the results: "accel" (capsgen_accel, the sequencer runs the program) or
  // "engine" (capsgen_engine, descriptors presented by the testbench).
  static constexpr const char* kTestbench = requires(Dut& d) { d.pf_valid_o; } ? "accel" : "engine";

  // The results document (schemas/accel-results.schema.json) before a run: every figure zero, every
  // list empty, no prediction, no verdict yet (pass false).
  static tb::Json empty_results() {
    tb::Json j;
    j["schema"] = "capsgen.accel-results/1";
    j["testbench"] = kTestbench;
    j["pass"] = false;
    j["checks"] = 0;
    j["errors"] = 0;
    j["problems"] = tb::Json::array();
    j["simulated_cycles"] = 0;
    j["trace_reset_released_ps"] = nullptr;
    j["descriptors"] = tb::Json::array();
    j["skipped"] = tb::Json::array();
    j["program"] = {{"cycles", 0}, {"model_cycles", 0}, {"ops", 0}, {"fetch_wait", 0}, {"words_per_descriptor", 0},
                    {"fetch", "latency1"}};
    j["prediction"] = {{"rtl", -1}, {"golden", -1}, {"norms", tb::Json::array()}};
    j["functional_coverage"] = tb::Json::object();
    j["functional_coverage_na"] = tb::Json::array();
    return j;
  }

  // The results document as far as the run got, with its verdict.
  tb::Json results() const { return tb::finished_results(results_, report_, sim_); }

  int run() {
    if constexpr (requires { dut_->pf_valid_o; }) {
      return run_accel_program(args_.program);
    } else {
      if (!args_.program.empty()) return run_program(args_.program);
      std::vector<Stim> stims = directed();
      const int n_random = std::max(1, static_cast<int>(40 * args_.scale));
      for (int i = 0; i < n_random; ++i) stims.push_back(random_stim(i));
      sim_.reset();
      idle_inputs();
      for (const Stim& s : stims) {
        run_one(s);
        if (report_.too_many()) break;
      }
      if (!report_.too_many()) run_activations();
      if (!report_.too_many()) run_empty();
      // The stalled descriptors must have seen refused writes (a short one may see none by chance).
      if (wr_stalled_descriptors_ > 0 && wr_waits_total_ == 0)
        report_.fail(sim_.cycle(), "write stalls requested, but no write was ever refused");
      sim_.finish();
      results_["simulated_cycles"] = sim_.cycle();
      return report_.summary(std::to_string(descriptors_) + " descriptors (" + std::to_string(wr_stalled_descriptors_) +
                             " with " + std::to_string(wr_waits_total_) + " refused write cycles), " +
                             std::to_string(writes_) + " writes, " +
                             std::to_string(vectors_) + " vectors, " + std::to_string(sim_.cycle()) + " cycles");
    }
  }

 private:
  // ---- stimuli ----------------------------------------------------------------------------------------
  Gemm conv(const ConvShape& s, bool bias, bool capsules, int dim, int shift, bool relu) const {
    Gemm g = capsgen::isa::conv_gemm(s, R_, C_, depth_, kDataBase, kTileBase, bias ? kBiasBase : -1);
    const std::int64_t pos = std::int64_t(s.out_h()) * s.out_w();
    g.out = capsules ? capsgen::isa::capsule_output(kOutBase, pos, dim) : capsgen::isa::map_output(kOutBase, pos);
    g.shift = shift;
    g.relu = relu;
    return g;
  }

  // Caps the vectors streamed (m_total x k_chunks x n_tiles) so a descriptor runs in about a second,
  // and the tiles to what the accumulators hold (n_tiles <= depth: CapsNet-MNIST's 256 output
  // channels on a 2x2 array with 64 entries; the compiler would have to split such a layer).
  Gemm capped(Gemm g) const {
    if (g.n_tiles > depth_) {
      g.n_tiles = depth_;
      g.n_total = std::min(g.n_total, depth_ * C_);
      g.m_block = capsgen::isa::block_size(depth_, g.m_total, g.n_tiles);
    }
    const long long limit = static_cast<long long>(60000 * std::max(0.25, args_.scale));
    if (static_cast<long long>(g.k_chunks) * g.n_tiles > limit) {  // a shorter reduction (r_total cut)
      g.k_chunks = static_cast<int>(std::max<long long>(1, limit / 4 / g.n_tiles));
      g.r_total = std::min(g.r_total, g.k_chunks * R_);
    }
    const long long per_vec = static_cast<long long>(g.k_chunks) * g.n_tiles;
    while (g.batch > 1 && static_cast<long long>(g.batch) * g.m_total * per_vec > limit) --g.batch;
    if (static_cast<long long>(g.m_total) * per_vec > limit)
      g.m_total = static_cast<int>(std::max<long long>(1, limit / per_vec));
    g.m_block = std::min(g.m_block, g.m_total);
    return g;
  }

  std::vector<Stim> directed() const {
    std::vector<Stim> v;
    auto add = [&](const std::string& n, const Gemm& g, Values val = Values::kRandom) {
      v.push_back({n, capped(g), val});
    };
    // The conv layers of models/capsnet-*.yaml as compile_program() maps them (isa::conv_gemm).
    add("capsnet-tiny/conv1", conv({1, 12, 12, 8, 5, 5, 1, 0}, true, false, 0, 4, true));
    add("capsnet-tiny/primary", conv({8, 8, 8, 16, 3, 3, 2, 0}, true, true, 4, 6, false));
    add("capsnet-small/conv1", conv({1, 28, 28, 32, 9, 9, 1, 0}, true, false, 0, 7, true));
    add("capsnet-small/primary", conv({32, 20, 20, 64, 9, 9, 2, 0}, true, true, 8, 9, false));
    add("capsnet-mnist/conv1", conv({1, 28, 28, 256, 9, 9, 1, 0}, true, false, 0, 7, true));
    add("capsnet-mnist/primary", conv({256, 20, 20, 256, 9, 9, 2, 0}, true, true, 8, 9, false));
    // Geometry corners: padding, stride, non-square kernel, outputs not a multiple of cols, no bias.
    add("conv/pad2-stride2", conv({3, 9, 7, C_ + 1, 5, 5, 2, 2}, true, false, 0, 3, false));
    add("conv/3x1-pad1", conv({2, 6, 5, 2 * C_ + 3, 3, 1, 1, 1}, false, true, 3, 2, true));
    add("conv/1x1", conv({R_ + 1, 4, 4, 1, 1, 1, 1, 0}, true, false, 0, 0, false));
    // Saturation: every product +max*max (accumulators saturate high), then -min*max (low).
    add("saturate/high", conv({4, 6, 6, C_, 3, 3, 1, 0}, true, false, 0, 0, false), Values::kMax);
    add("saturate/low", conv({4, 6, 6, C_, 3, 3, 1, 0}, true, false, 0, 0, false), Values::kMin);
    // Affine Gemm with batch > 1 and m_total not a multiple of m_block.
    {
      Gemm g;
      g.batch = 3;
      g.m_total = 7;
      g.n_tiles = 2;
      g.n_total = 2 * C_ - 1;
      g.m_block = std::min(3, depth_ / g.n_tiles);
      g.r_total = 2 * R_ + 1;
      g.k_chunks = 3;
      g.data = {DataSource::Kind::kAffine, kDataBase, 1000, 3, 5, 2};
      g.tile = {kTileBase, 10000, std::int64_t(g.n_tiles) * R_ * C_, std::int64_t(R_) * C_, C_, 1, 1};
      g.init = {AccInit::Kind::kPerColumn, kBiasBase, 0, 0, 0};
      g.out = {kOutBase, 5000, 40, 3, 1, 2, 0};
      g.shift = 5;
      add("affine/batch3", g);
    }
    // Tile columns strided (the routing update's tile: v_j in column j, element d in row d, s_c = D).
    {
      const int D = R_ + 3, J = C_ + 1;
      Gemm g;
      g.m_total = 12;
      g.k_chunks = (D + R_ - 1) / R_;
      g.n_tiles = (J + C_ - 1) / C_;
      g.m_block = std::min(5, depth_ / g.n_tiles);
      g.r_total = D;
      g.n_total = J;
      g.tile = {kTileBase, 0, R_, std::int64_t(C_) * D, 1, D, 1};
      g.data = {DataSource::Kind::kAffine, kDataBase, 0, D, R_, 1};
      g.out = {kOutBase, 0, J, 1, 0, 1, 0};
      g.shift = 4;
      add("strided/update-tile", g);
      // The whole routing update: logits b << shift as per-output init, only column j = m % J kept.
      g.init = {AccInit::Kind::kPerOutput, kBiasBase, 0, 1, 3};
      g.out = {kOutBase, 0, 1, 0, 0, 1, J};
      add("update/init-per-output+select", g);
    }
    {
      // Per-output init with batch > 1, several tiles and saturating shifts.
      Gemm g;
      g.batch = 2;
      g.m_total = 9;
      g.n_tiles = 3;
      g.n_total = 3 * C_;
      g.m_block = std::max(1, std::min(4, depth_ / g.n_tiles));
      g.k_chunks = 2;
      g.r_total = 2 * R_;
      g.data = {DataSource::Kind::kAffine, kDataBase, 500, 7, 3, 1};
      g.tile = {kTileBase, 3000, std::int64_t(g.n_tiles) * R_ * C_, std::int64_t(R_) * C_, C_, 1, 1};
      g.init = {AccInit::Kind::kPerOutput, kBiasBase, 40, 2, 12};
      g.out = {kOutBase, 1000, 3 * C_, 1, 0, 1, 0};
      g.shift = 6;
      add("init-per-output/batch2", g);
    }
    // The class-capsule prediction without diag groups (Din > rows): u_i as a one-column tile that
    // moves with the batch item (s_b = Din, s_c = 0), the rows of W_i as data vectors.
    {
      const int Din = R_ + 1, JD = 40;
      Gemm g;
      g.batch = 3;
      g.m_total = JD;
      g.k_chunks = (Din + R_ - 1) / R_;
      g.n_tiles = 1;
      g.m_block = std::min(JD, depth_);
      g.r_total = Din;
      g.n_total = 1;
      g.tile = {kTileBase, Din, R_, 0, 1, 0, 1};
      g.data = {DataSource::Kind::kAffine, kDataBase, std::int64_t(JD) * Din, Din, R_, 1};
      g.out = {kOutBase, JD, 1, 1, 0, 1, 0};
      g.shift = 2;
      add("predict/one-column-tile", g);
    }
    // Block-diagonal tiles (the class-capsule prediction mapping, outputs written densely here).
    if (R_ >= 2 && C_ >= 2) {
      Gemm g;
      const int G = std::min(C_, 2), Din = R_ / G;
      g.batch = 3;
      g.m_total = 5;
      g.m_block = std::min(5, depth_);
      g.k_chunks = 1;
      g.n_tiles = 1;
      g.r_total = Din;
      g.n_total = G;
      g.tile.base = kTileBase;
      g.tile.s_b = Din;
      g.tile.s_r = 1;
      g.tile.diag_groups = G;
      g.data = {DataSource::Kind::kAffine, kDataBase, 64 * Din, G * Din, 0, 1};
      g.out = {kOutBase, 100, G, 1, 0, 1, 0};
      g.shift = 3;
      add("diag/groups2", g);
    }
    // A reduction split into three parts that keep their sums in the accumulators (the chip's
    // streamed program, docs/memory-system.md section 3): hold, continue + hold, continue; one block
    // (batch 1, m_total <= m_block), biases on the first part, saturating values, outputs only from the
    // last part. A conv part (whole windows) and an affine one with vector-wide gather.
    for (const Values val : {Values::kMax, Values::kRandom}) {
      Gemm g;
      g.m_total = std::max(1, std::min(6, depth_ / 2));
      g.n_tiles = std::min(2, std::max(1, depth_ / g.m_total));
      g.m_block = g.m_total;
      g.n_total = g.n_tiles * C_ - (C_ > 1 ? 1 : 0);
      g.k_chunks = 6;
      g.r_total = 6 * R_ - 1;
      g.data = {DataSource::Kind::kAffine, kDataBase, 0, 9 * R_, R_, 1};
      g.tile = {kTileBase, 0, std::int64_t(g.n_tiles) * R_ * C_, std::int64_t(R_) * C_, C_, 1, 1};
      g.init = {AccInit::Kind::kPerColumn, kBiasBase, 0, 0, 0};
      g.out = {kOutBase, 0, g.n_total, 1, 0, 1, 0};
      g.shift = 4;
      g.relu = val == Values::kRandom;
      const char* what = val == Values::kMax ? "split/saturate" : "split/affine";
      for (int part = 0; part < 3; ++part) {
        Gemm p = g;
        const int k0 = 2 * part;
        p.k_chunks = 2;
        p.r_total = std::min(g.r_total - k0 * R_, 2 * R_);
        p.data.base += k0 * g.data.s_k;
        p.tile.base += k0 * g.tile.s_k;
        p.acc_continue = part > 0;
        p.acc_hold = part < 2;
        if (part > 0) p.init = {};
        v.push_back({std::string(what) + "-part" + std::to_string(part), p, val});
      }
    }
    return v;
  }

  Stim random_stim(int i) {
    Stim s;
    s.name = "random/" + std::to_string(i);
    Gemm& g = s.g;
    if (rng_.chance(50)) {
      ConvShape c;
      c.channels = int(rng_.uniform(1, 6));
      c.kernel_h = int(rng_.uniform(1, 4));
      c.kernel_w = int(rng_.uniform(1, 4));
      c.padding = int(rng_.uniform(0, 2));
      c.stride = int(rng_.uniform(1, 3));
      c.height = int(rng_.uniform(std::max(1, c.kernel_h - 2 * c.padding), 10));
      c.width = int(rng_.uniform(std::max(1, c.kernel_w - 2 * c.padding), 10));
      c.out_channels = int(rng_.uniform(1, std::min(3, depth_) * C_));  // n_tiles <= depth
      g = conv(c, rng_.chance(70), rng_.chance(50), int(rng_.uniform(1, 9)), int(rng_.uniform(0, 12)), rng_.chance(50));
      if (rng_.chance(30)) g.m_block = int(rng_.uniform(1, g.m_block));
      // A band of a larger padded map (no zero rows above it): a DESCNet part of a padded convolution.
      if (c.padding > 0 && rng_.chance(25)) g.data.band = true;
    } else {
      g.batch = int(rng_.uniform(1, 3));
      g.m_total = int(rng_.uniform(1, 20));
      g.n_tiles = int(rng_.uniform(1, std::min(3, depth_)));  // m_block x n_tiles <= depth
      g.n_total = int(rng_.uniform((g.n_tiles - 1) * C_ + 1, g.n_tiles * C_));
      g.m_block = int(rng_.uniform(1, std::max(1, std::min(g.m_total, depth_ / g.n_tiles))));
      g.k_chunks = int(rng_.uniform(1, 4));
      g.r_total = int(rng_.uniform((g.k_chunks - 1) * R_ + 1, g.k_chunks * R_));
      // s_r = 1 (consecutive elements) half the time: the vector-wide gather's case.
      g.data = {DataSource::Kind::kAffine, kDataBase, rng_.uniform(0, 3000), rng_.uniform(0, 50), rng_.uniform(0, 50),
                rng_.chance(50) ? 1 : rng_.uniform(0, 5)};
      g.tile = {kTileBase, rng_.uniform(0, 5000), rng_.uniform(0, 400), rng_.uniform(0, 400), rng_.uniform(0, 40),
                rng_.chance(30) ? rng_.uniform(0, 40) : 1, 1};  // s_c != 1: rows read column by column
      if (rng_.chance(40))
        g.init = {AccInit::Kind::kPerColumn, kBiasBase + rng_.uniform(0, 100), 0, 0, 0};
      else if (rng_.chance(40))
        g.init = {AccInit::Kind::kPerOutput, kBiasBase + rng_.uniform(0, 100), rng_.uniform(0, 300), rng_.uniform(0, 5),
                  int(rng_.uniform(0, 8))};
      g.out = {kOutBase, rng_.uniform(1, 4000), rng_.uniform(1, 200), rng_.uniform(1, 30), rng_.uniform(0, 5),
               int(rng_.uniform(1, 5)), rng_.chance(25) ? int(rng_.uniform(1, g.n_total + 2)) : 0};
      // Consecutive outputs (offset of o is o) a third of the time: the writer's whole-record writes.
      if (g.out.select_mod == 0 && rng_.chance(35)) {
        g.out.s_o2 = rng_.chance(50) ? 1 : 0;
        if (g.out.s_o2 == 0) g.out.o_div = 1;
        g.out.s_o1 = g.out.o_div;  // o_wrap = s_o1 - (o_div - 1) * s_o2 = 1
      }
      g.shift = int(rng_.uniform(0, std::min(P_ - 1, 16)));
      g.relu = rng_.chance(50);
    }
    s.values = rng_.chance(10) ? (rng_.chance(50) ? Values::kMax : Values::kMin) : Values::kRandom;
    return s;
  }

  // ---- memory model -------------------------------------------------------------------------------------
  enum class Region { kData, kTile, kBias, kOut, kNone };
  static Region region(std::int64_t a) {
    for (const auto& [base, r] : {std::pair{kDataBase, Region::kData}, std::pair{kTileBase, Region::kTile},
                                  std::pair{kBiasBase, Region::kBias}, std::pair{kOutBase, Region::kOut}})
      if (a >= base && a < base + kRegionSize) return r;
    return Region::kNone;
  }

  // The value at address a: a hash of the address (with corner values), or the saturating patterns.
  std::int64_t value(std::int64_t a, Values v) const {
    const Region r = region(a);
    const int bits = r == Region::kBias ? P_ : r == Region::kTile ? W_ : D_;
    if (v == Values::kMax) return r == Region::kBias ? capsgen::fx::smax(P_) / 2 : capsgen::fx::smax(bits);
    if (v == Values::kMin) {
      if (r == Region::kBias) return capsgen::fx::smin(P_) / 2;
      return r == Region::kTile ? capsgen::fx::smax(bits) : capsgen::fx::smin(bits);
    }
    const std::uint64_t h = mix(static_cast<std::uint64_t>(a) * 0x9E3779B97F4A7C15ull + args_.seed);
    if (h % 9 == 0) return (h >> 8) % 2 ? capsgen::fx::smin(bits) : capsgen::fx::smax(bits);
    const int vb = r == Region::kBias ? std::min(bits, 16) : bits;  // biases of modest size
    return tb::sign_extend((h >> 16) & tb::mask64(vb), vb);
  }

  // ---- DUT I/O ---------------------------------------------------------------------------------------------
  void idle_inputs() {
    if constexpr (requires { dut_->desc_valid_i; }) dut_->desc_valid_i = 0;
    dut_->wr_ready_i = 1;
    for (int r = 0; r < R_; ++r) tb::put(dut_->drd_data_i, r * D_, D_, 0);
  }

  // The descriptor on desc_words_i, packed as the sequencers hold it (isa::engine_descriptor_layout).
  void apply(const EngineDescriptor& d) {
    const std::vector<std::uint32_t> words = capsgen::isa::pack_engine_descriptor(d);
    for (std::size_t w = 0; w < words.size(); ++w) tb::put(dut_->desc_words_i, static_cast<int>(w) * 32, 32, words[w]);
  }

  // Random values in every descriptor field, each within its port's width.
  EngineDescriptor garbage_descriptor() {
    std::string text;
    const int nsb = tb::clog2(2 * A_ - 1 + tb::clog2(max_len_) + 1);
    for (const capsgen::isa::PackedField& f : capsgen::isa::engine_descriptor_layout()) {
      int bits = f.bits;
      if (f.name == "shift") bits = tb::clog2(P_ + 1);
      if (f.name == "a_norm_shift") bits = nsb;
      if (f.name == "f_value") bits = A_;
      text += f.name + " " + std::to_string(rng_.next() & tb::mask64(bits)) + "\n";
    }
    return capsgen::isa::parse_engine_descriptor(text);
  }

  struct Write {
    std::int64_t addr, value;
    std::uint64_t cycle = 0;  // when the RTL wrote it
  };

  // One cycle: observe this cycle's outputs (reads issued, writes), step, present the read data.
  // Returns true when done_o was high in the observed cycle.
  bool cycle(Values vals, std::vector<Write>* got, const std::string& name) {
    return cycle_with([&](std::int64_t a) { return value(a, vals); }, true, got, name);
  }

  // The same with any memory contents; `regions`: check that reads stay in their operand's region.
  bool cycle_with(const std::function<std::int64_t(std::int64_t)>& read, bool regions, std::vector<Write>* got,
                  const std::string& name) {
    const auto t = sim_.cycle();
    // The memory takes a write unless this descriptor is run with write stalls (a Gemm only: an
    // Activate or Fill result must not be refused, docs/rtl-engine.md "Memory ports").
    const bool wr_ready = wr_stall_pct_ == 0 || !rng_.chance(wr_stall_pct_);
    dut_->wr_ready_i = wr_ready;
    wr_waits_ += dut_->wr_en_o && !wr_ready;
    const bool drd = dut_->drd_en_o, wrd = dut_->wrd_en_o, brd = dut_->brd_en_o, drd_vec = drd && dut_->drd_vec_o;
    const std::int64_t da = dut_->drd_addr_o, wa = dut_->wrd_addr_o, ba = dut_->brd_addr_o;
    reads_data_ += drd && !drd_vec;
    reads_data_vec_ += drd_vec;
    reads_weight_ += wrd;
    reads_bias_ += brd;
    if (dut_->wr_en_o && wr_ready) {
      // One element in lane 0, or with wr_vec_o the masked lanes at consecutive addresses (in lane
      // order, which is the reference's column order).
      const bool vec = dut_->wr_vec_o;
      for (int c = 0; c < (vec ? C_ : 1); ++c) {
        if (vec && !((static_cast<std::uint64_t>(dut_->wr_mask_o) >> c) & 1)) continue;
        const std::uint64_t raw = tb::get(dut_->wr_data_o, c * OB_, OB_);
        const std::int64_t v = unsigned_writes_ ? static_cast<std::int64_t>(raw & tb::mask64(OB_)) : tb::sign_extend(raw, OB_);
        if (got) got->push_back({std::int64_t(dut_->wr_addr_o) + c, v, t});
        else report_.fail(t, name + ": write while idle at " + std::to_string(dut_->wr_addr_o));
      }
    }
    if (dut_->error_o && !error_seen_) {
      error_seen_ = true;
      report_.fail(t, name + ": error_o went high");
    }
    const bool done = dut_->done_o;
    if (regions) {
      if (drd && region(da) != Region::kData) report_.fail(t, name + ": data read outside the data region at " + std::to_string(da));
      if (wrd && region(wa) != Region::kTile) report_.fail(t, name + ": weight read outside the tile region at " + std::to_string(wa));
      if (brd && region(ba) != Region::kBias) report_.fail(t, name + ": bias read outside the bias region at " + std::to_string(ba));
    }
    sim_.step();
    if (drd) {
      // An element in the low lane, or a vector of R_ consecutive elements (vector-wide gather).
      for (int r = 0; r < (drd_vec ? R_ : 1); ++r)
        tb::put(dut_->drd_data_i, r * D_, D_, static_cast<std::uint64_t>(read(da + r)));
    }
    if (wrd)
      for (int c = 0; c < C_; ++c) tb::put(dut_->wrd_data_i, c * W_, W_, static_cast<std::uint64_t>(read(wa + c)));
    if (brd)
      for (int c = 0; c < C_; ++c) tb::put(dut_->brd_data_i, c * P_, P_, static_cast<std::uint64_t>(read(ba + c)));
    return done;
  }

  void run_one(const Stim& s) {
    const Gemm& g = s.g;
    EngineDescriptor d;
    try {
      // Every third descriptor keeps the element-wise gather where the vector-wide one would apply,
      // so both data paths see every kind of stimulus.
      d = capsgen::isa::encode_engine(g, R_, C_, depth_, descriptors_ % 3 != 2);
    } catch (const std::exception& e) {
      report_.fail(sim_.cycle(), s.name + ": the stimulus does not encode: " + e.what());
      return;
    }
    // The reference writes.
    std::vector<Write> want;
    capsgen::isa::GemmCounters counters;
    // The accumulators carry over between descriptors (acc_continue starts from them), as the RTL's do.
    capsgen::isa::run_gemm_reference(
        g, {R_, C_, P_, A_}, [&](std::int64_t a) { return value(a, s.values); },
        [&](std::int64_t a, std::int64_t v) { want.push_back({a, v, 0}); }, &counters, &acc_state_);
    // The cycle budget: twice the compiler's cycle model (exact without write stalls; tile reloads
    // dominate when m_block is 1) plus a margin for a broken model, which the cycle check reports.
    const long long model_cycles = capsgen::isa::engine_timing(d, {R_, C_, cfg_.pe_pipeline != 0, A_}).cycles;
    const long long bound = 50000 + 2 * model_cycles +
                            8LL * (counters.vectors + counters.writes * C_ +
                                   std::int64_t(g.batch) * g.m_total * g.k_chunks * R_);
    // Every fourth Gemm runs with the memory refusing 30% of the result writes (wr_ready_i low): the
    // writer must hold each write, the output FIFO's credits must stall the array, nothing may be
    // lost; the cycles can then only grow beyond the model's.
    wr_stall_pct_ = gemms_++ % 4 == 3 ? 30 : 0;
    run_descriptor(s.name, d, [&](std::int64_t a) { return value(a, s.values); }, true, want, counters.vectors,
                   wr_stall_pct_ ? 4 * bound : bound, [&](std::size_t i) { return where(g, i); });
    wr_stall_pct_ = 0;
    dut_->wr_ready_i = 1;
  }

  // Runs one descriptor: present it (waiting on desc_ready_o), run until done_o (within `bound`
  // cycles), check three idle cycles, then compare the writes with `want` in order, and the vector
  // count when `vectors` >= 0. `label(i)` describes the i-th write for the report.
  std::vector<Write> run_descriptor(const std::string& name, const EngineDescriptor& d,
                      const std::function<std::int64_t(std::int64_t)>& read, bool regions, const std::vector<Write>& want,
                      long long vectors, long long bound, const std::function<std::string(std::size_t)>& label) {
    unsigned_writes_ = d.kind == 1 && d.a_func == 2;  // norm codes are unsigned
    const int nsb = tb::clog2(2 * A_ - 1 + tb::clog2(max_len_) + 1);  // the unit's norm_shift_i width
    if (d.kind == 1 && d.a_norm_shift >= (1u << nsb)) {
      report_.fail(sim_.cycle(), name + ": norm shift does not fit the port");
      return {};
    }
    if (d.kind == 0 && d.shift >= (1u << tb::clog2(P_ + 1))) {
      report_.fail(sim_.cycle(), name + ": shift does not fit the port");
      return {};
    }
    apply(d);
    dut_->desc_valid_i = 1;
    reads_data_ = reads_data_vec_ = reads_weight_ = reads_bias_ = 0;
    wr_waits_ = 0;
    const std::uint64_t t0 = sim_.cycle();
    std::vector<Write> got;
    while (!dut_->desc_ready_o) cycle_with(read, regions, &got, name);
    cycle_with(read, regions, &got, name);  // accepted at this edge
    dut_->desc_valid_i = 0;
    // The engine loads every field on accept (the contract the sequencer relies on: it fetches the
    // next descriptor into the same words while this one runs): garbage on the ports from now on.
    apply(garbage_descriptor());
    const std::uint64_t t_acc = sim_.cycle();
    bool done = false;
    while (!done) {
      if (static_cast<long long>(sim_.cycle() - t_acc) > bound) {
        report_.fail(sim_.cycle(), name + ": no done_o within " + std::to_string(bound) + " cycles (" +
                                       std::to_string(got.size()) + " of " + std::to_string(want.size()) + " writes)");
        sim_.reset();
        return got;
      }
      done = cycle_with(read, regions, &got, name);
    }
    // A few idle cycles: no write, no second done.
    for (int i = 0; i < 3; ++i)
      if (cycle_with(read, regions, nullptr, name)) report_.fail(sim_.cycle(), name + ": done_o twice");
    const std::uint64_t cycles = sim_.cycle() - t_acc - 3;
    check_descriptor(name, d, got, want, vectors, cycles, t_acc - t0, t_acc, label, engine_stats());
    return got;
  }

  // The checks of a finished descriptor: its writes against `want` (in order), the vectors it sent
  // (when `vectors` >= 0), its cycles and stalls against the compiler's cycle model; then its "stat"
  // line (read by capsgen sim and the benchmarks). `cycles` counts from the accept to done_o.
  // The engine's stat_*_o of the last descriptor (valid from its done_o until the next accept).
  struct EngineStats {
    std::uint32_t cycles = 0, vectors = 0, stall_data = 0, stall_tile = 0, stall_out = 0, wr_wait = 0;
  };
  EngineStats engine_stats() const {
    return {dut_->stat_cycles_o, dut_->stat_vectors_o, dut_->stat_stall_data_o, dut_->stat_stall_tile_o,
            dut_->stat_stall_out_o, dut_->stat_wr_wait_o};
  }

  void check_descriptor(const std::string& name, const EngineDescriptor& d, const std::vector<Write>& got,
                        const std::vector<Write>& want, long long vectors, std::uint64_t cycles, std::uint64_t accept_wait,
                        std::uint64_t t_acc, const std::function<std::string(std::size_t)>& label,
                        const EngineStats& st) {
    report_.check(sim_.cycle(), name + " write count", static_cast<long long>(want.size()), static_cast<long long>(got.size()));
    const std::size_t n = std::min(want.size(), got.size());
    for (std::size_t i = 0; i < n; ++i) {
      if (want[i].addr == got[i].addr && want[i].value == got[i].value) {
        report_.check(0, "", 0, 0);
        continue;
      }
      report_.mismatch(got[i].cycle, name + " write " + std::to_string(i) + " (" + label(i) + ") addr " +
                                         std::to_string(got[i].addr) + " (expected " + std::to_string(want[i].addr) + ")",
                       want[i].value, got[i].value);
      if (report_.too_many()) break;
    }
    if (vectors >= 0) report_.check(sim_.cycle(), name + " stat_vectors_o", vectors, st.vectors);
    // The compiler's cycle model of this descriptor (isa::engine_timing) must predict the measured
    // cycles and stall cycles exactly: RTL cycle counts are deterministic.
    const capsgen::isa::EngineTiming model =
        capsgen::isa::engine_timing(d, {R_, C_, cfg_.pe_pipeline != 0, A_});
    report_.check(sim_.cycle(), name + " stat_wr_wait_o (cycles a write waited)", wr_waits_, st.wr_wait);
    if (wr_stall_pct_ > 0) {
      // Refused writes: the model is a lower bound (run() checks that some writes were refused).
      if (static_cast<long long>(cycles) < model.cycles)
        report_.fail(sim_.cycle(), name + ": fewer cycles than the model with write stalls");
      wr_stalled_descriptors_ += 1;
      wr_waits_total_ += wr_waits_;
    } else {
      report_.check(sim_.cycle(), name + " cycles (measured vs isa::engine_timing)", model.cycles,
                    static_cast<long long>(cycles));
    }
    if (d.kind == 0 && wr_stall_pct_ == 0) {
      report_.check(sim_.cycle(), name + " stat_stall_data_o vs model", model.stall_data, st.stall_data);
      report_.check(sim_.cycle(), name + " stat_stall_tile_o vs model", model.stall_tile, st.stall_tile);
      report_.check(sim_.cycle(), name + " stat_stall_out_o vs model", model.stall_out, st.stall_out);
    }
    // Port activity: element and vector (`rows` elements) reads of the data port, tile-row reads
    // (`cols` elements each), accumulator-init reads, element writes.
    std::printf("stat name=%s cycles=%llu accept=%llu vectors=%u writes=%zu stall_data=%u stall_tile=%u stall_out=%u "
                "model=%lld model_stall_data=%lld model_stall_tile=%lld model_stall_out=%lld reads_data=%lld reads_data_vec=%lld "
                "reads_weight=%lld reads_bias=%lld start=%llu vmode=%d ovec=%d wr_wait=%u\n",
                name.c_str(), static_cast<unsigned long long>(cycles), static_cast<unsigned long long>(accept_wait),
                st.vectors, got.size(), st.stall_data, st.stall_tile, st.stall_out,
                model.cycles, model.stall_data, model.stall_tile, model.stall_out, reads_data_, reads_data_vec_, reads_weight_,
                reads_bias_, static_cast<unsigned long long>(t_acc), d.kind == 0 && d.v_mode ? 1 : 0,
                d.kind == 0 && d.o_vec ? 1 : 0, st.wr_wait);
    results_["descriptors"].push_back({{"id", running_id_},
                                       {"label", name},
                                       {"cycles", cycles},
                                       {"accept", accept_wait},
                                       {"vectors", st.vectors},
                                       {"writes", got.size()},
                                       {"stall_data", st.stall_data},
                                       {"stall_tile", st.stall_tile},
                                       {"stall_out", st.stall_out},
                                       {"model", model.cycles},
                                       {"model_stall_data", model.stall_data},
                                       {"model_stall_tile", model.stall_tile},
                                       {"model_stall_out", model.stall_out},
                                       {"reads_data", reads_data_},
                                       {"reads_data_vec", reads_data_vec_},
                                       {"reads_weight", reads_weight_},
                                       {"reads_bias", reads_bias_},
                                       {"start", t_acc},
                                       {"vmode", d.kind == 0 && d.v_mode ? 1 : 0},
                                       {"ovec", d.kind == 0 && d.o_vec ? 1 : 0},
                                       {"wr_wait", st.wr_wait}});
    ++descriptors_;
    writes_ += static_cast<long long>(got.size());
    vectors_ += st.vectors;
  }

  // ---- program mode: the gemm descriptors of a compiled network ------------------------------------------
  static std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + path);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  static std::vector<std::int32_t> load_image(const std::string& path) {
    const std::string bytes = slurp(path);
    std::vector<std::int32_t> mem(bytes.size() / 4);
    for (std::size_t i = 0; i < mem.size(); ++i) {
      std::uint32_t u = 0;
      for (int k = 0; k < 4; ++k) u |= std::uint32_t(static_cast<unsigned char>(bytes[4 * i + std::size_t(k)])) << (8 * k);
      mem[i] = static_cast<std::int32_t>(u);
    }
    return mem;
  }

  static std::vector<Write> load_writes(const std::string& path) {
    std::vector<Write> w;
    std::istringstream ws(slurp(path));
    for (long long a, v; ws >> a >> v;) w.push_back({a, v, 0});
    return w;
  }

  // The whole program, chained: one memory, initialized from initial.mem; every descriptor runs on the
  // engine and its writes (not the executor's) go into the memory the next descriptors read, so the
  // RTL computes the inference from the input image on; each descriptor's writes are compared with
  // the executor's. A descriptor the engine cannot run ("skip") gets the executor's writes, reported.
  // A tensor of the address map (regions.txt of the dump).
  struct Tensor {
    std::string name;
    std::int64_t base = 0;
    std::vector<std::int64_t> shape;
    std::int64_t size() const {
      std::int64_t n = 1;
      for (std::int64_t d : shape) n *= d;
      return n;
    }
  };
  static std::vector<Tensor> load_tensors(const std::string& path) {
    std::vector<Tensor> ts;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#') continue;
      std::istringstream ls(line);
      Tensor t;
      ls >> t.name >> t.base;
      for (std::int64_t d; ls >> d;) t.shape.push_back(d);
      ts.push_back(t);
    }
    return ts;
  }
  // "tensor primary.out[3,0,5] (address A)" for an output address, or the address alone.
  static std::string tensor_at(const std::vector<Tensor>& ts, std::int64_t addr) {
    for (const Tensor& t : ts) {
      if (addr < t.base || addr >= t.base + t.size()) continue;
      std::int64_t rest = addr - t.base;
      std::string idx;
      for (std::size_t k = t.shape.size(); k-- > 0;) {
        idx = std::to_string(rest % t.shape[k]) + (idx.empty() ? "" : "," + idx);
        rest /= t.shape[k];
      }
      return "tensor " + t.name + "[" + idx + "] (address " + std::to_string(addr) + ")";
    }
    return "address " + std::to_string(addr);
  }

  // index.txt of a dump: the instructions in program order ("iNN name", or "skip iNN name (why)"), the
  // golden model's prediction ("# golden P") and the input's description ("# input ...").
  struct ProgramIndex {
    struct Entry {
      bool skip = false;
      std::string stem, name, line;
    };
    std::vector<Entry> entries;
    int golden = -1;
    std::string input_line;
  };
  static ProgramIndex load_index(const std::string& dir) {
    ProgramIndex ix;
    std::istringstream index(slurp(dir + "/index.txt"));
    for (std::string line; std::getline(index, line);) {
      if (line.rfind("# golden ", 0) == 0) ix.golden = std::stoi(line.substr(9));
      if (line.rfind("# input ", 0) == 0) ix.input_line = line.substr(2);
      if (line.empty() || line[0] == '#') continue;
      std::istringstream ls(line);
      typename ProgramIndex::Entry e;
      e.line = line;
      ls >> e.stem;
      if (e.stem == "skip") {
        e.skip = true;
        ls >> e.stem;
      }
      ls >> e.name;
      ix.entries.push_back(e);
    }
    return ix;
  }

  int run_program(const std::string& dir) {
    const std::vector<Tensor> tensors = load_tensors(dir + "/regions.txt");  // absent in old dumps: addresses only
    std::vector<std::int32_t> mem = load_image(dir + "/initial.mem");
    std::string last_name;
    std::vector<Write> last_writes;
    int ran = 0, skipped = 0;
    sim_.reset();
    idle_inputs();
    auto apply_writes = [&](const std::vector<Write>& ws) {
      for (const Write& w : ws)
        if (w.addr >= 0 && w.addr < static_cast<std::int64_t>(mem.size())) mem[std::size_t(w.addr)] = std::int32_t(w.value);
    };
    const ProgramIndex ix = load_index(dir);
    const int golden = ix.golden;
    const std::string& input_line = ix.input_line;
    for (const auto& e : ix.entries) {
      const std::string &stem = e.stem, &name = e.name;
      if (e.skip) {
        std::printf("skip %s (the executor's writes applied)\n", e.line.c_str() + 5);
        apply_writes(load_writes(dir + "/" + stem + ".writes"));
        results_["skipped"].push_back(stem);
        ++skipped;
        continue;
      }
      const EngineDescriptor d = capsgen::isa::parse_engine_descriptor(slurp(dir + "/" + stem + ".desc"));
      const std::vector<Write> want = load_writes(dir + "/" + stem + ".writes");
      const std::string label = name + " (" + stem + ")";
      // Reads inside the image; a tile row or bias row may run past its end in masked columns (0).
      auto read = [&](std::int64_t a) -> std::int64_t {
        return a >= 0 && a < static_cast<std::int64_t>(mem.size()) ? mem[static_cast<std::size_t>(a)] : 0;
      };
      const long long elements = d.kind != 0 ? static_cast<long long>(d.a_count) * std::max<int>(1, d.a_n)
                                             : static_cast<long long>(d.gather.batch) * d.gather.m_total * d.gather.k_chunks * R_;
      const long long vectors =
          d.kind != 0 ? -1 : static_cast<long long>(d.gather.batch) * d.gather.m_total * d.gather.k_chunks * d.n_tiles;
      const long long bound = 50000 + 8LL * (std::max(vectors, 0LL) + static_cast<long long>(want.size()) * C_ + elements);
      const long long errors_before = report_.errors();
      running_id_ = stem;
      const std::vector<Write> got = run_descriptor(label, d, read, false, want, vectors, bound, [&](std::size_t i) {
        return i < want.size() ? tensor_at(tensors, want[i].addr) : std::string("past the expected writes");
      });
      apply_writes(got);
      ++ran;
      if (report_.errors() > errors_before) {
        report_.problem("FAIL block=engine program stopped after " + label + ": its outputs differ from the golden model's");
        break;
      }
      last_name = name;
      last_writes = got;
    }
    if (ran == 0) report_.fail(sim_.cycle(), dir + ": no descriptor to run");
    const std::string extra = report_prediction(last_name, last_writes, input_line, golden);
    sim_.finish();
    results_["simulated_cycles"] = sim_.cycle();
    return report_.summary(std::to_string(ran) + " program descriptors chained (" + std::to_string(skipped) +
                           " skipped), " + std::to_string(writes_) + " writes, " + std::to_string(vectors_) +
                           " vectors, " + std::to_string(sim_.cycle()) + " cycles" + extra);
  }

  // The class norms' descriptor: <layer>/norm, or <layer>/norm.k<N> (input N of a routing batch).
  static bool is_class_norm(const std::string& name) {
    const std::size_t at = name.rfind("/norm");
    if (at == std::string::npos) return false;
    const std::string rest = name.substr(at + 5);
    return rest.empty() || (rest.size() > 2 && rest.compare(0, 2, ".k") == 0 &&
                            rest.find_first_not_of("0123456789", 2) == std::string::npos);
  }

  // The class prediction from the RTL's own norm codes (argmax, lowest index on ties) when the last
  // descriptor was the class norms, checked against the golden model's.
  std::string report_prediction(const std::string& last_name, const std::vector<Write>& last_writes,
                                const std::string& input_line, int golden) {
    if (!is_class_norm(last_name) || last_writes.empty()) return "";
    std::size_t best = 0;
    for (std::size_t i = 1; i < last_writes.size(); ++i)
      if (last_writes[i].value > last_writes[best].value) best = i;
    std::printf("%s: RTL class norms", input_line.c_str());
    for (const Write& w : last_writes) std::printf(" %lld", static_cast<long long>(w.value));
    std::printf(" -> RTL prediction %zu, golden prediction %d\n", best, golden);
    tb::Json norms = tb::Json::array();
    for (const Write& w : last_writes) norms.push_back(w.value);
    results_["prediction"] = {{"rtl", best}, {"golden", golden}, {"norms", norms}};
    if (golden >= 0) report_.check(sim_.cycle(), "RTL prediction vs the golden model's", golden, static_cast<long long>(best));
    return ", RTL prediction class " + std::to_string(best);
  }

  // ---- the accelerator (Vaccel): the sequencer runs the packed program ------------------------------------
  // The program of `capsgen compile --dump-engine DIR` (program.hex: the packed descriptors and the end
  // marker, which the testbench places at word address 0 of a program memory, as a host would) runs
  // from one start_i pulse to done_o. The testbench is the off-chip side only: the memory image
  // (element reads with 1-cycle latency, writes applied as they happen) and the program memory behind
  // the fetch port (latency 1, or with --mode fetch-random a random latency of 1-8 cycles and random
  // request back-pressure). Each descriptor's writes (between two op_done_o pulses) are compared with
  // the executor's, its cycles with the cycle model; the program's total cycles with the sequencer's
  // model isa::program_cycles (the first fetch, then max(descriptor, fetch) per descriptor).
  int run_accel_program(const std::string& dir) {
    if constexpr (requires { dut_->pf_valid_o; }) {
      const ProgramIndex ix = load_index(dir);
      const std::vector<Tensor> tensors = load_tensors(dir + "/regions.txt");
      std::vector<std::int32_t> mem = load_image(dir + "/initial.mem");
      const std::vector<std::uint32_t> prog = load_hex(dir + "/program.hex");
      struct Op {
        std::string label, name, id;
        EngineDescriptor d;
        std::vector<Write> want;
      };
      std::vector<Op> ops;
      for (const auto& e : ix.entries) {
        if (e.skip) throw std::runtime_error(dir + ": the program has a descriptor the engine cannot run: " + e.line);
        ops.push_back({e.name + " (" + e.stem + ")", e.name, e.stem,
                       capsgen::isa::parse_engine_descriptor(slurp(dir + "/" + e.stem + ".desc")),
                       load_writes(dir + "/" + e.stem + ".writes")});
      }
      const std::size_t NW = std::size_t(capsgen::isa::engine_descriptor_words());
      if (prog.size() != (ops.size() + 1) * NW)
        throw std::runtime_error(dir + "/program.hex: " + std::to_string(prog.size()) + " words for " +
                                 std::to_string(ops.size()) + " descriptors and the end marker of " + std::to_string(NW) +
                                 " words each");
      const bool random_fetch = args_.mode == "fetch-random";
      auto read = [&](std::int64_t a) -> std::int64_t {
        return a >= 0 && a < static_cast<std::int64_t>(mem.size()) ? mem[static_cast<std::size_t>(a)] : 0;
      };
      sim_.reset();
      idle_inputs();
      dut_->prog_base_i = 0;
      dut_->pf_ready_i = 1;
      dut_->pr_valid_i = 0;
      dut_->start_i = 1;
      std::deque<std::pair<std::uint64_t, std::uint32_t>> pending;  // (cycle the word is due, word address)
      std::vector<Write> got, last_writes;
      std::string last_name;
      std::size_t op = 0, applied = 0;
      std::uint64_t t_op = sim_.cycle();
      std::vector<long long> measured;  // each descriptor's engine cycles, for the program model
      long long bound = 100000;
      for (const Op& o : ops) {
        const long long elements = o.d.kind != 0 ? static_cast<long long>(o.d.a_count) * std::max<int>(1, o.d.a_n)
                                                 : static_cast<long long>(o.d.gather.batch) * o.d.gather.m_total *
                                                       o.d.gather.k_chunks * R_;
        bound += 50000 + 8LL * (static_cast<long long>(o.want.size()) * C_ + elements + static_cast<long long>(NW) * 8);
      }
      bool done = false;
      const std::uint64_t t_start = sim_.cycle();
      reads_data_ = reads_data_vec_ = reads_weight_ = reads_bias_ = 0;
      if (!ops.empty()) unsigned_writes_ = ops[0].d.kind == 1 && ops[0].d.a_func == 2;
      while (!done) {
        if (static_cast<long long>(sim_.cycle() - t_start) > bound) {
          report_.fail(sim_.cycle(), "accelerator: no done_o within " + std::to_string(bound) + " cycles (" +
                                         std::to_string(op) + " of " + std::to_string(ops.size()) + " descriptors finished)");
          break;
        }
        const std::uint64_t t = sim_.cycle();
        if (dut_->pf_valid_o && dut_->pf_ready_i)
          pending.emplace_back(t + (random_fetch ? rng_.uniform(1, 8) : 1), dut_->pf_addr_o);
        const bool op_done = dut_->op_done_o, prog_done = dut_->done_o;
        const EngineStats st = engine_stats();  // a finished descriptor's, before the next accept clears them
        cycle_with(read, false, &got, op < ops.size() ? ops[op].label : std::string("past the program"));
        dut_->start_i = 0;
        for (; applied < got.size(); ++applied)  // the memory takes each write as it happens
          if (got[applied].addr >= 0 && got[applied].addr < static_cast<std::int64_t>(mem.size()))
            mem[std::size_t(got[applied].addr)] = std::int32_t(got[applied].value);
        // The fetch port for the next cycle: the oldest request's word once it is due (in order).
        dut_->pr_valid_i = 0;
        if (!pending.empty() && pending.front().first <= sim_.cycle()) {
          const std::uint32_t a = pending.front().second;
          dut_->pr_data_i = a < prog.size() ? prog[a] : 0;
          dut_->pr_valid_i = 1;
          pending.pop_front();
        }
        dut_->pf_ready_i = random_fetch ? rng_.chance(70) : 1;
        if (op_done) {
          if (op >= ops.size()) {
            report_.fail(t, "accelerator: op_done_o after the last descriptor");
          } else {
            const Op& o = ops[op];
            unsigned_writes_ = o.d.kind == 1 && o.d.a_func == 2;
            const long long vectors = o.d.kind != 0 ? -1
                                                    : static_cast<long long>(o.d.gather.batch) * o.d.gather.m_total *
                                                          o.d.gather.k_chunks * o.d.n_tiles;
            const long long errors_before = report_.errors();
            running_id_ = o.id;
            check_descriptor(o.label, o.d, got, o.want, vectors, st.cycles, 0, t_op,
                             [&](std::size_t i) {
                               return i < o.want.size() ? tensor_at(tensors, o.want[i].addr) : std::string("past the expected writes");
                             },
                             st);
            measured.push_back(st.cycles);
            count_functional_coverage(o.name, o.d, got);
            last_name = o.name;
            last_writes = got;
            if (report_.errors() > errors_before) {
              report_.problem("FAIL block=accel program stopped after " + o.label +
                              ": its outputs differ from the golden model's");
              break;
            }
          }
          ++op;
          got.clear();
          applied = 0;
          t_op = sim_.cycle();
          reads_data_ = reads_data_vec_ = reads_weight_ = reads_bias_ = 0;
        }
        done = prog_done;
        // Unsigned norm codes for the class norms: the flag follows the running descriptor.
        if (op < ops.size()) unsigned_writes_ = ops[op].d.kind == 1 && ops[op].d.a_func == 2;
      }
      const long long model_total = capsgen::isa::program_cycles(measured, static_cast<int>(NW));
      if (done) {
        report_.check(sim_.cycle(), "accelerator: descriptors run (stat_ops_o)", static_cast<long long>(ops.size()),
                      static_cast<long long>(dut_->stat_ops_o));
        report_.check(sim_.cycle(), "accelerator: descriptors finished (op_done_o)", static_cast<long long>(ops.size()),
                      static_cast<long long>(op));
        if (!random_fetch)
          report_.check(sim_.cycle(), "accelerator: program cycles (measured vs sequencer model)", model_total,
                        static_cast<long long>(dut_->stat_prog_cycles_o));
        if (dut_->error_o) report_.fail(sim_.cycle(), "accelerator: error_o is high");
        std::printf("program cycles=%u model=%lld ops=%u fetch_wait=%u words_per_descriptor=%zu fetch=%s\n",
                    dut_->stat_prog_cycles_o, model_total, dut_->stat_ops_o, dut_->stat_fetch_wait_o, NW,
                    random_fetch ? "random" : "latency1");
        results_["program"] = {{"cycles", dut_->stat_prog_cycles_o}, {"model_cycles", model_total}, {"ops", dut_->stat_ops_o},
                               {"fetch_wait", dut_->stat_fetch_wait_o}, {"words_per_descriptor", NW},
                               {"fetch", random_fetch ? "random" : "latency1"}};
      }
      print_functional_coverage();
      const std::string extra = report_prediction(last_name, last_writes, ix.input_line, ix.golden);
      sim_.finish();
      results_["simulated_cycles"] = sim_.cycle();
      return report_.summary(std::to_string(op) + " descriptors run by the sequencer, " + std::to_string(writes_) +
                             " writes, " + std::to_string(vectors_) + " vectors, " + std::to_string(sim_.cycle()) +
                             " cycles" + extra);
    } else {
      throw std::logic_error("run_accel_program needs the accelerator model");
    }
  }

  // ---- functional coverage (capsgen regress sums it over a regression; docs/regress.md) ----------------
  // Bins counted per finished descriptor of the accelerator's program: the controller's descriptor
  // kinds and activation functions, the Gemm variants the engine's datapath distinguishes, the routing
  // dataflows (from the operation's name in index.txt), and saturation events (written results at the
  // act code's max or min; norms at the unsigned max of sqrt_out_bits). Printed as "fcov NAME COUNT"
  // lines and put into the results document, every bin even when 0, so that never-hit bins show; bins
  // whose hardware is not behind the engine in capsgen_accel are printed as "fcov NAME 0 na" (the
  // document's functional_coverage_na).
  static const std::vector<std::string>& fcov_bins() {
    static const std::vector<std::string> bins = {
        "op.gemm", "op.activate.squash", "op.activate.softmax", "op.activate.norm", "op.fill",
        "gemm.conv", "gemm.affine", "gemm.conv.padding", "gemm.conv.stride2+", "gemm.batch2+",
        "gemm.vector_gather", "gemm.record_writes", "gemm.init.none", "gemm.init.per_column",
        "gemm.init.per_output", "gemm.relu", "gemm.select_mod", "gemm.diag", "gemm.strided_tile",
        "gemm.multi_k_chunk", "gemm.multi_n_tile",
        "route.predict", "route.coupling_fill", "route.softmax", "route.sum", "route.squash", "route.update",
        "route.class_norm",
        "sat.gemm.max", "sat.gemm.min", "sat.squash.max", "sat.squash.min", "sat.softmax.max", "sat.norm.max"};
    return bins;
  }

  void count_functional_coverage(const std::string& name, const EngineDescriptor& d, const std::vector<Write>& got) {
    auto hit = [&](const char* bin, long long n = 1) { fcov_[bin] += n; };
    const long long amax = capsgen::fx::smax(A_), amin = capsgen::fx::smin(A_);
    auto sat = [&](const char* bmax, const char* bmin, long long hi, long long lo) {
      for (const Write& w : got) {
        if (bmax && w.value == hi) hit(bmax);
        if (bmin && w.value == lo) hit(bmin);
      }
    };
    if (d.kind == 0) {
      const auto& g = d.gather;
      hit("op.gemm");
      hit(g.conv ? "gemm.conv" : "gemm.affine");
      if (g.conv && g.padding > 0) hit("gemm.conv.padding");
      if (g.conv && g.stride > 1) hit("gemm.conv.stride2+");
      if (g.batch > 1) hit("gemm.batch2+");
      if (d.v_mode) hit("gemm.vector_gather");
      if (d.o_vec) hit("gemm.record_writes");
      hit(d.init_bias ? "gemm.init.per_column" : d.init_out ? "gemm.init.per_output" : "gemm.init.none");
      if (d.relu) hit("gemm.relu");
      if (d.o_sel != 0) hit("gemm.select_mod");
      if (d.t_diag) hit("gemm.diag");
      if (d.t_strided) hit("gemm.strided_tile");
      if (g.k_chunks > 1) hit("gemm.multi_k_chunk");
      if (d.n_tiles > 1) hit("gemm.multi_n_tile");
      sat("sat.gemm.max", d.relu ? nullptr : "sat.gemm.min", amax, amin);
    } else if (d.kind == 1) {
      if (d.a_func == 3) {
        hit("op.activate.squash");
        sat("sat.squash.max", "sat.squash.min", amax, amin);
      } else if (d.a_func == 4) {
        hit("op.activate.softmax");
        sat("sat.softmax.max", nullptr, amax, amin);
      } else {
        hit("op.activate.norm");
        sat("sat.norm.max", nullptr, static_cast<long long>(tb::mask64(ap_.sqrt_out_bits)), 0);
      }
    } else {
      hit("op.fill");
    }
    // Routing dataflows, from the compiler's operation names ("classcaps/predict", "classcaps/iter1.softmax").
    const std::string op = name.substr(name.rfind('/') == std::string::npos ? 0 : name.rfind('/') + 1);
    const std::size_t dot = op.find('.');
    const std::string step = op.rfind("iter", 0) == 0 && dot != std::string::npos ? op.substr(dot + 1) : "";
    if (op == "predict") hit("route.predict");
    if (step == "c") hit("route.coupling_fill");
    if (step == "softmax") hit("route.softmax");
    if (step == "sum") hit("route.sum");
    if (step == "squash") hit("route.squash");
    if (step == "update") hit("route.update");
    if (op == "norm") hit("route.class_norm");
  }

  void print_functional_coverage() {
    for (const std::string& b : fcov_bins()) std::printf("fcov %s %lld\n", b.c_str(), fcov_[b]);
    // The scratchpad and its power-management units (sector sleep/wake) are blocks of their own (block
    // tests in tb_blocks) but not behind the engine in capsgen_accel yet: nothing to count here.
    const std::vector<std::string> na = {"pmu.sector_sleep", "pmu.sector_wake"};
    for (const std::string& b : na) std::printf("fcov %s 0 na\n", b.c_str());
    tb::set_functional_coverage(results_, fcov_bins(), fcov_, na);
  }

  static std::vector<std::uint32_t> load_hex(const std::string& path) {
    std::istringstream in(slurp(path));
    std::vector<std::uint32_t> words;
    std::string tok;
    while (in >> tok) {
      if (tok[0] == '#' || tok.rfind("//", 0) == 0) {
        std::getline(in, tok);
        continue;
      }
      words.push_back(static_cast<std::uint32_t>(std::stoul(tok, nullptr, 16)));
    }
    return words;
  }

  // (b, m, o) of the i-th write in the reference order (blocks, tiles, vectors, columns).
  std::string where(const Gemm& g, std::size_t i) const {
    std::size_t k = 0;
    for (int b = 0; b < g.batch; ++b)
      for (int m0 = 0; m0 < g.m_total; m0 += g.m_block) {
        const int mb = std::min(g.m_block, g.m_total - m0);
        for (int n = 0; n < g.n_tiles; ++n)
          for (int mi = 0; mi < mb; ++mi)
            for (int c = 0; c < C_ && n * C_ + c < g.n_total; ++c)
              if (k++ == i)
                return "b=" + std::to_string(b) + " m=" + std::to_string(m0 + mi) + " o=" + std::to_string(n * C_ + c);
      }
    return "?";
  }

  // Activate and Fill passes against isa::run_activate_reference / run_fill_reference.
  void run_activations() {
    const capsgen::isa::ActTables tables(ap_);
    std::vector<std::pair<std::string, Activate>> acts;
    auto act = [&](const std::string& n, Activate::Func f, int count, int len, std::int64_t s_v, std::int64_t s_e,
                   std::int64_t o_v, std::int64_t o_e, int norm_shift) {
      Activate a;
      a.name = n;
      a.func = f;
      a.count = count;
      a.n = len;
      a.in_base = kDataBase + 17;
      a.in_s_v = s_v;
      a.in_s_e = s_e;
      a.out_base = kOutBase + 5;
      a.out_s_v = o_v;
      a.out_s_e = o_e;
      a.norm_shift = norm_shift;
      acts.emplace_back(n, a);
    };
    // The class-capsule passes' shapes (squash of J vectors of D, softmax of I vectors of J, norms).
    act("activate/squash", Activate::Func::kSquash, 10, std::min(16, max_len_), 16, 1, 16, 1, 0);
    act("activate/softmax", Activate::Func::kSoftmax, 12, std::min(10, max_len_), 10, 1, 10, 1, 0);
    act("activate/norm", Activate::Func::kNorm, 10, std::min(16, max_len_), 16, 1, 1, 0, 2);
    act("activate/squash-n1", Activate::Func::kSquash, 5, 1, 3, 1, 2, 1, 0);
    act("activate/softmax-max_len", Activate::Func::kSoftmax, 3, max_len_, max_len_ + 3, 1, max_len_, 1, 0);
    act("activate/norm-max_len-strided", Activate::Func::kNorm, 4, max_len_, 7, 3 * max_len_, 2, 0, 4);
    const int n_random = std::max(1, static_cast<int>(12 * args_.scale));
    for (int i = 0; i < n_random; ++i) {
      const auto f = static_cast<Activate::Func>(rng_.uniform(0, 2));
      act("activate/random-" + std::to_string(i), f, int(rng_.uniform(1, 12)), int(rng_.uniform(1, max_len_)),
          rng_.uniform(0, 100), rng_.uniform(1, 4), rng_.uniform(1, 100), rng_.uniform(1, 4),
          2 * int(rng_.uniform(0, 4)));
    }
    for (const auto& [name, a] : acts) {
      EngineDescriptor d;
      try {
        d = capsgen::isa::encode_activate(a, ap_.sq_norm_shift, max_len_);
      } catch (const std::exception& e) {
        report_.fail(sim_.cycle(), name + ": does not encode: " + e.what());
        continue;
      }
      std::vector<Write> want;
      capsgen::isa::run_activate_reference(a, tables, [&](std::int64_t x) { return value(x, Values::kRandom); },
                                           [&](std::int64_t x, std::int64_t v) { want.push_back({x, v, 0}); });
      run_descriptor(name, d, [&](std::int64_t x) { return value(x, Values::kRandom); }, true, want, -1,
                     50000 + 8LL * a.count * (a.n + 40), [&](std::size_t i) {
                       const std::size_t per = a.func == Activate::Func::kNorm ? 1 : std::size_t(a.n);
                       return "vector " + std::to_string(i / per) + " element " + std::to_string(i % per);
                     });
      if (report_.too_many()) return;
    }
    for (int i = 0; i < 3; ++i) {
      Fill f;
      f.name = "fill/" + std::to_string(i);
      f.base = kOutBase + 3 * i;
      f.count = rng_.uniform(1, 50);
      f.stride = rng_.uniform(1, 7);
      f.value = i == 0 ? capsgen::fx::smin(A_) : rng_.signed_value(A_);
      if (i == 2) {  // a period table of one value (the first routing iteration's coupling fill)
        f.period = 10;
        f.table.assign(10, f.value);
      }
      std::vector<Write> want;
      capsgen::isa::run_fill_reference(f, [&](std::int64_t x, std::int64_t v) { want.push_back({x, v, 0}); });
      run_descriptor(f.name, capsgen::isa::encode_fill(f, A_), [&](std::int64_t x) { return value(x, Values::kRandom); },
                     true, want, -1, 1000 + 4 * f.count, [](std::size_t i) { return "element " + std::to_string(i); });
    }
  }

  // A descriptor with a zero count: done_o in the cycle after the accept, no reads, no writes.
  void run_empty() {
    Gemm g = capped(conv({1, 4, 4, 1, 1, 1, 1, 0}, false, false, 0, 0, false));
    EngineDescriptor d = capsgen::isa::encode_engine(g, R_, C_, depth_);
    d.gather.batch = 0;
    apply(d);
    dut_->desc_valid_i = 1;
    while (!dut_->desc_ready_o) cycle(Values::kRandom, nullptr, "empty");
    cycle(Values::kRandom, nullptr, "empty");
    dut_->desc_valid_i = 0;
    report_.check(sim_.cycle(), "empty: done_o one cycle after the accept", 1, dut_->done_o);
    for (int i = 0; i < 4; ++i) {
      if (dut_->drd_en_o || dut_->wrd_en_o || dut_->brd_en_o) report_.fail(sim_.cycle(), "empty: a read was issued");
      cycle(Values::kRandom, nullptr, "empty");
    }
    ++descriptors_;
  }

  tb::Args args_;
  tb::RtlConfig cfg_;
  tb::Sim sim_;
  tb::Rng rng_;
  tb::Report report_;
  std::unique_ptr<Dut> dut_;
  int R_ = 0, C_ = 0, D_ = 0, W_ = 0, P_ = 0, A_ = 0, depth_ = 0;
  bool error_seen_ = false;
  bool unsigned_writes_ = false;
  int wr_stall_pct_ = 0;              // probability (%) that the memory refuses a write this cycle
  long long gemms_ = 0;               // random Gemm descriptors run (every fourth with write stalls)
  capsgen::isa::AccState acc_state_;  // the accumulators' sums after the last Gemm (acc_continue starts from them)
  long long wr_waits_ = 0;            // cycles of this descriptor with wr_en_o and wr_ready_i low
  long long wr_stalled_descriptors_ = 0, wr_waits_total_ = 0;
  capsgen::fx::ActParams ap_;
  int max_len_ = 32, OB_ = 8;
  long long descriptors_ = 0, writes_ = 0, vectors_ = 0;
  std::map<std::string, long long> fcov_;  // functional coverage bins (run_accel_program)
  tb::Json results_ = empty_results();    // what --results FILE gets (results())
  std::string running_id_;                // the program's id of the running descriptor ("i03"); "" in the block test
  long long reads_data_ = 0, reads_data_vec_ = 0, reads_weight_ = 0, reads_bias_ = 0;  // of the running descriptor
};

}  // namespace engine_tb

