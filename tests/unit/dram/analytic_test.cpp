// The closed-form access counts (Eq. 14-17, gen/romanet/tiling.cpp) against element-level brute force,
// and the trace generator's fetched elements against both, on small layers and all 24 loop orders.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "brute_force.hpp"
#include "dram/address_mapping.hpp"
#include "romanet/search.hpp"
#include "romanet/tiling.hpp"
#include "romanet/trace.hpp"

namespace capsgen::romanet {
namespace {

using test::brute_force;

std::vector<std::array<int, 4>> all_loop_orders() {
  std::array<int, 4> p{kDimH, kDimW, kDimI, kDimJ};
  std::vector<std::array<int, 4>> out;
  do out.push_back(p);
  while (std::next_permutation(p.begin(), p.end()));
  return out;
}

LayerGeometry conv(int H, int W, int I, int J, int P, int Q, int stride, int pad) {
  LayerGeometry g;
  g.name = "t";
  g.op = OpKind::Conv;
  g.H = H;
  g.W = W;
  g.I = I;
  g.J = J;
  g.P = P;
  g.Q = Q;
  g.stride = stride;
  g.pad = pad;
  g.M = (H + 2 * pad - P) / stride + 1;
  g.N = (W + 2 * pad - Q) / stride + 1;
  return g;
}

class CountingSink : public AccessSink {
 public:
  void on_request(const dram::DramAddress&, bool, int beats, int) override { words += beats; }
  long long words = 0;
};

void expect_all_agree(const LayerGeometry& g, const Tiling& t, const std::string& what) {
  const dram::DramOrganization org;
  for (const auto& loops : all_loop_orders()) {
    Schedule s;
    s.loops = loops;
    for (bool reuse : {true, false}) {
      const test::BruteCounts b = brute_force(g, t, loops, reuse);
      const AccessCounts a = analytic_counts(g, t, s, reuse);
      const std::string ctx = what + " loops " + s.loops_str() + (reuse ? " reuse" : " no-reuse");
      ASSERT_EQ(a.ifmap_rd, b.ifmap_rd) << ctx;
      ASSERT_EQ(a.weight_rd, b.weight_rd) << ctx;
      ASSERT_EQ(a.ofmap_rd, b.ofmap_rd) << ctx;
      ASSERT_EQ(a.ofmap_wr, b.ofmap_wr) << ctx;
      // The trace generator fetches exactly these elements, with either mapping and burst size.
      for (auto policy : {dram::MappingPolicy::Romanet, dram::MappingPolicy::BankContiguous}) {
        dram::TileAllocator alloc(org, policy);
        CountingSink sink;
        TraceConfig cfg;
        cfg.policy = policy;
        cfg.overlap_reuse = reuse;
        cfg.beats_per_request = policy == dram::MappingPolicy::Romanet ? 8 : 1;
        const TraceTotals tt = generate_trace(g, t, s, cfg, alloc, sink);
        ASSERT_EQ(tt.read_elements[kStreamIfmap], b.ifmap_rd) << ctx;
        ASSERT_EQ(tt.read_elements[kStreamWeight], b.weight_rd) << ctx;
        ASSERT_EQ(tt.read_elements[kStreamOfmap], b.ofmap_rd) << ctx;
        ASSERT_EQ(tt.write_elements[kStreamOfmap], b.ofmap_wr) << ctx;
        ASSERT_EQ(sink.words, tt.words()) << ctx;
      }
    }
  }
}

TEST(Analytic, HandCountedConv) {
  // 1 input channel 6x6, 3x3 kernel, 4x4 ofmaps in tiles of 2x2, 1 output channel: ifmap tiles are
  // 4x4 (rows/cols [0,4) and [2,6)), two rows/columns of overlap. Loops h,w,i,j visit (h0,w0) 16,
  // (h0,w1) 16 - 8 shared columns = 8, (h1,w0) 16 - 4 (rows 2-3 x cols 2-3 shared with the previous
  // tile) = 12, (h1,w1) 16 - 8 = 8: 44 with reuse, 4 x 16 = 64 without.
  const LayerGeometry g = conv(6, 6, 1, 1, 3, 3, 1, 0);
  const Tiling t{2, 2, 1, 1};
  Schedule s;
  s.loops = {kDimH, kDimW, kDimI, kDimJ};
  EXPECT_EQ(analytic_counts(g, t, s, true).ifmap_rd, 44);
  EXPECT_EQ(analytic_counts(g, t, s, false).ifmap_rd, 64);
  EXPECT_EQ(analytic_counts(g, t, s, true).weight_rd, 9);  // one weight tile, fetched once
  EXPECT_EQ(analytic_counts(g, t, s, true).ofmap_wr, 16);
  EXPECT_EQ(analytic_counts(g, t, s, true).ofmap_rd, 0);
  EXPECT_EQ(brute_force(g, t, s.loops, true).ifmap_rd, 44);
}

TEST(Analytic, PartialSumsRoundTrips) {
  // Two input-channel tiles with the i loop outermost: every ofmap tile is visited twice,
  // so the partial sums are written twice and read once.
  const LayerGeometry g = conv(4, 4, 4, 2, 1, 1, 1, 0);
  const Tiling t{2, 2, 2, 2};
  Schedule s;
  s.loops = {kDimI, kDimH, kDimW, kDimJ};
  const AccessCounts a = analytic_counts(g, t, s, true);
  EXPECT_EQ(a.ofmap_wr, 2 * 32);
  EXPECT_EQ(a.ofmap_rd, 32);
  s.loops = {kDimH, kDimW, kDimJ, kDimI};  // i innermost: partial sums stay on chip
  EXPECT_EQ(analytic_counts(g, t, s, true).ofmap_rd, 0);
}

TEST(Analytic, MatchesBruteForceOnFixedLayers) {
  expect_all_agree(conv(7, 7, 3, 4, 3, 3, 1, 0), Tiling{2, 3, 2, 3}, "conv 3x3/1");
  expect_all_agree(conv(9, 8, 2, 3, 3, 3, 2, 1), Tiling{2, 2, 1, 2}, "conv 3x3/2 pad 1");
  expect_all_agree(conv(11, 11, 1, 2, 5, 5, 2, 0), Tiling{1, 2, 1, 1}, "conv 5x5/2 (overlap beyond neighbours)");
  expect_all_agree(conv(6, 6, 3, 2, 3, 3, 1, 1), Tiling{6, 6, 3, 2}, "conv one tile");
  expect_all_agree(conv(5, 5, 2, 2, 1, 1, 1, 0), Tiling{2, 2, 1, 1}, "conv 1x1");
  expect_all_agree(conv(8, 8, 2, 2, 4, 4, 4, 0), Tiling{1, 1, 2, 1}, "conv stride = kernel (no overlap)");
  expect_all_agree(conv(5, 5, 2, 2, 3, 3, 1, 2), Tiling{2, 3, 1, 1}, "conv pad 2");
}

TEST(Analytic, MatchesBruteForceOnOtherOps) {
  LayerGeometry dw = conv(8, 8, 5, 5, 3, 3, 1, 1);
  dw.op = OpKind::Depthwise;
  expect_all_agree(dw, Tiling{3, 4, 1, 2}, "depthwise");
  LayerGeometry dw2 = conv(9, 9, 4, 4, 3, 3, 2, 1);
  dw2.op = OpKind::Depthwise;
  expect_all_agree(dw2, Tiling{2, 5, 1, 3}, "depthwise stride 2");

  LayerGeometry fc;
  fc.op = OpKind::FullyConnected;
  fc.I = 13;
  fc.J = 7;
  expect_all_agree(fc, Tiling{1, 1, 4, 3}, "fc");

  LayerGeometry caps;
  caps.op = OpKind::CapsPredict;
  caps.M = caps.H = 10;
  caps.N = caps.W = 1;
  caps.I = 4;
  caps.J = 6;
  expect_all_agree(caps, Tiling{3, 1, 3, 4}, "class_caps predictions");
}

TEST(Analytic, MatchesBruteForceOnRandomLayers) {
  std::mt19937 rng(20240607);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int trial = 0; trial < 60; ++trial) {
    const int P = pick(1, 4), Q = pick(1, 4), stride = pick(1, std::min(P, Q)), pad = pick(0, std::min(P, Q) - 1);
    const int H = pick(P, 9), W = pick(Q, 9);
    LayerGeometry g = conv(H, W, pick(1, 4), pick(1, 4), P, Q, stride, pad);
    if (trial % 5 == 4) {
      g.op = OpKind::Depthwise;
      g.J = g.I;
    }
    const Tiling t{pick(1, g.M), pick(1, g.N), g.depthwise() ? 1 : pick(1, g.I), pick(1, g.J)};
    expect_all_agree(g, t, "random trial " + std::to_string(trial));
    if (HasFatalFailure()) return;
  }
}

TEST(Analytic, RoutingTrafficOfClassCaps) {
  LayerGeometry g;
  g.op = OpKind::CapsPredict;
  g.M = g.H = 1152;
  g.I = 8;
  g.J = 160;
  g.routing_iterations = 3;
  g.routing_out = 160;
  const AccessCounts r = routing_counts(g);
  EXPECT_EQ(r.routing_rd, 3LL * 1152 * 160);
  EXPECT_EQ(r.routing_wr, 160);
  // The trace reads u_hat once per iteration and writes v.
  const dram::DramOrganization org;
  dram::TileAllocator alloc(org, dram::MappingPolicy::Romanet);
  CountingSink sink;
  const TraceTotals tt = generate_trace(g, Tiling{64, 1, 8, 160}, schedule_for_order(6), TraceConfig{}, alloc, sink);
  EXPECT_EQ(tt.read_elements[kStreamRouting], r.routing_rd);
  EXPECT_EQ(tt.write_elements[kStreamRouting], r.routing_wr);
}

TEST(Analytic, PartitionEquations) {
  // AlexNet conv1 (227x227, 11x11/4, 55x55 ofmaps) with Tm = Tn = 8: base tile 39 rows, overlap 7,
  // intermediate 32, 7 tiles: 5 intermediate, last = 227 - 39 - 5*32 = 28 (Eq. 7-8).
  LayerGeometry g = conv(227, 227, 3, 96, 11, 11, 4, 0);
  const Partition p = partition(g, Tiling{8, 8, 3, 32});
  EXPECT_EQ(p.h.base, 39);
  EXPECT_EQ(p.h.overlap, 7);
  EXPECT_EQ(p.h.intermediate, 32);
  EXPECT_EQ(p.h.n_tiles, 7);
  EXPECT_EQ(p.h.n_intermediate, 5);
  EXPECT_EQ(p.h.last, 28);
  EXPECT_EQ(p.tm_last, 55 - 6 * 8);
  EXPECT_EQ(p.n_tj, 3);
  EXPECT_EQ(p.tj_last, 32);
  // Sum of the pieces = the input rows used. With h,w outermost, all channels in one tile and a
  // single column of tiles, overlap reuse fetches every ifmap element exactly once; with 7 columns of
  // tiles only the horizontal neighbour is on chip, so every later row of tiles fetches again the 7
  // rows it shares with the row above: 6 x 7 rows x 227 columns x 3 channels more.
  EXPECT_EQ(p.h.base + p.h.n_intermediate * p.h.intermediate + p.h.last, 227);
  const Schedule s = schedule_for_order(2);  // h,w,i,j
  EXPECT_EQ(analytic_counts(g, Tiling{8, 55, 3, 32}, s, true).ifmap_rd, 227LL * 227 * 3);
  EXPECT_EQ(analytic_counts(g, Tiling{8, 8, 3, 32}, s, true).ifmap_rd, 227LL * 227 * 3 + 6LL * 7 * 227 * 3);
}

}  // namespace
}  // namespace capsgen::romanet
