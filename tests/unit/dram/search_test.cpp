// Alg. 1 and Alg. 2: reuse factors and priority orders (Table I), schedules, search bounds, the
// exhaustive search against an independent enumeration, search steps and the baseline.
#include <gtest/gtest.h>

#include "model/network.hpp"
#include "romanet/layer_model.hpp"
#include "romanet/search.hpp"

namespace capsgen::romanet {
namespace {

const std::string kRepo = CAPSGEN_REPO_ROOT;

LayerGeometry conv(int H, int W, int I, int J, int P, int stride, int pad) {
  LayerGeometry g;
  g.name = "t";
  g.H = H;
  g.W = W;
  g.I = I;
  g.J = J;
  g.P = g.Q = P;
  g.stride = stride;
  g.pad = pad;
  g.M = (H + 2 * pad - P) / stride + 1;
  g.N = (W + 2 * pad - P) / stride + 1;
  return g;
}

std::vector<Schedule> all_schedules() {
  std::vector<Schedule> v;
  for (int k = 1; k <= 6; ++k) v.push_back(schedule_for_order(k));
  return v;
}

TEST(ReusePriority, TableIAndSchedules) {
  EXPECT_EQ(reuse_priority(1), (std::array<int, 3>{kIfmap, kWeight, kOfmap}));
  EXPECT_EQ(reuse_priority(5), (std::array<int, 3>{kOfmap, kIfmap, kWeight}));
  // Fig. 14: ofmaps > ifmaps > weights -> h, w outermost, then j, i innermost (partial sums stay).
  EXPECT_EQ(schedule_for_order(5).loops_str(), "h,w,j,i");
  EXPECT_EQ(schedule_for_order(6).loops_str(), "j,h,w,i");  // baseline ofmap reuse
  EXPECT_EQ(schedule_for_order(4).loops_str(), "j,i,h,w");  // baseline weight reuse
  EXPECT_EQ(schedule_for_order(1).loops_str(), "i,h,w,j");
  EXPECT_EQ(schedule_for_order(2).loops_str(), "h,w,i,j");
  EXPECT_EQ(schedule_for_order(3).loops_str(), "i,j,h,w");
  EXPECT_EQ(schedule_for_order(5).name(), "ofmaps>ifmaps>weights (h,w,j,i)");
}

TEST(ReusePriority, ReuseFactorsOfVggLayers) {
  // Eq. 4-6 on VGG-16 (Fig. 5): CONV1 reuses weights most, FC1 the least.
  const LayerGeometry c1 = conv(224, 224, 3, 64, 3, 1, 1);
  const ReuseFactors a = reuse_factors(c1);
  EXPECT_EQ(a.ifmaps, 9 * 64);
  EXPECT_EQ(a.weights, 224 * 224);
  EXPECT_EQ(a.ofmaps, 27);
  EXPECT_EQ(reuse_priority_order(a), 3);  // weights > ifmaps > ofmaps
  LayerGeometry fc;
  fc.op = OpKind::FullyConnected;
  fc.I = 25088;
  fc.J = 4096;
  const ReuseFactors b = reuse_factors(fc);
  EXPECT_EQ(b.ifmaps, 4096);
  EXPECT_EQ(b.weights, 1);
  EXPECT_EQ(b.ofmaps, 25088);
  EXPECT_EQ(reuse_priority_order(b), 5);  // ofmaps > ifmaps > weights
  // Ties keep ifmaps, weights, ofmaps.
  EXPECT_EQ(reuse_priority_order(ReuseFactors{5, 5, 5}), 1);
}

TEST(Search, ExhaustiveAgainstIndependentEnumeration) {
  // Every (Tm, Tn, Ti, Tj) that fits, every schedule: the search's minimum is the true minimum
  // (which also shows that taking the largest Ti that fits loses nothing).
  Buffers buf{300, 200, 150};
  const ElementBytes eb;
  for (const LayerGeometry& g : {conv(10, 10, 6, 8, 3, 1, 1), conv(13, 11, 5, 7, 3, 2, 0), conv(9, 9, 8, 4, 1, 1, 0)}) {
    SearchOptions o;
    o.buffers = buf;
    o.schedules = all_schedules();
    const SearchResult r = search_layer(g, o);
    ASSERT_TRUE(r.found);
    long long best = -1, feasible = 0;
    for (int tm = 1; tm <= g.M; ++tm)
      for (int tn = 1; tn <= g.N; ++tn)
        for (int ti = 1; ti <= g.I; ++ti)
          for (int tj = 1; tj <= g.J; ++tj) {
            const Tiling t{tm, tn, ti, tj};
            if (!fits(g, t, buf, eb)) continue;
            ++feasible;
            for (const Schedule& s : o.schedules) {
              const long long c = analytic_counts(g, t, s, true).total();
              if (best < 0 || c < best) best = c;
            }
          }
    EXPECT_EQ(r.counts.total(), best) << g.shape_str();
    EXPECT_TRUE(fits(g, r.tiling, buf, eb));
    EXPECT_EQ(analytic_counts(g, r.tiling, r.schedule, true).total(), r.counts.total());
    EXPECT_GT(feasible, 0);
  }
}

TEST(Search, BoundsAndLargeBuffers) {
  // Lower bound: every ifmap element, weight and ofmap element moves at least once.
  const LayerGeometry g = conv(27, 27, 96, 256, 5, 1, 2);  // AlexNet conv2
  SearchOptions o = romanet_options({g}, Buffers{}, ElementBytes{}, true);
  const SearchResult r = search_layer(g, o);
  ASSERT_TRUE(r.found);
  const long long lower = g.ifmap_elements() + g.weight_elements() + g.ofmap_elements();
  EXPECT_GE(r.counts.total(), lower);
  EXPECT_TRUE(fits(g, r.tiling, o.buffers, o.bytes));
  // With buffers that hold the whole layer the bound is reached.
  SearchOptions big = o;
  big.buffers = Buffers{1 << 24, 1 << 24, 1 << 24};
  const SearchResult rb = search_layer(g, big);
  EXPECT_EQ(rb.counts.total(), lower);
  EXPECT_EQ(rb.counts.ofmap_rd, 0);
  // Buffers too small for any tile: nothing found.
  SearchOptions tiny = o;
  tiny.buffers = Buffers{10, 10, 10};
  EXPECT_FALSE(search_layer(g, tiny).found);
}

TEST(Search, StepsShrinkTheSpaceButNeverBeatStepOne) {
  const LayerGeometry g = conv(56, 56, 128, 256, 3, 1, 1);  // VGG conv3_1
  SearchOptions o = romanet_options({g}, Buffers{}, ElementBytes{}, false);
  const SearchResult full = search_layer(g, o);
  o.step_m = o.step_n = 4;
  o.step_j = 16;
  const SearchResult coarse = search_layer(g, o);
  EXPECT_LT(coarse.evaluated, full.evaluated / 10);
  EXPECT_GE(coarse.counts.total(), full.counts.total());
  EXPECT_EQ(tile_values(10, 4), (std::vector<int>{1, 5, 9, 10}));
  EXPECT_EQ(tile_values(9, 4), (std::vector<int>{1, 5, 9}));
}

TEST(Search, RomanetNeverLosesToTheBaseline) {
  // With all six orders ROMANet's space contains the baseline's (schedules 4 and 6, any Tj), and its
  // overlap-aware count is never above the baseline's own count of the baseline's choice.
  const Network net = load_network(kRepo + "/models/alexnet.yaml");
  const std::vector<LayerGeometry> layers = dram_layers(net);
  const SearchOptions ro = romanet_options(layers, Buffers{}, ElementBytes{}, true);
  const SearchOptions bo = baseline_options(Buffers{}, ElementBytes{});
  for (const LayerGeometry& g : layers) {
    const SearchResult a = search_layer(g, ro), b = search_layer(g, bo);
    ASSERT_TRUE(a.found && b.found) << g.name;
    EXPECT_LE(a.counts.total(), analytic_counts(g, b.tiling, b.schedule, true).total()) << g.name;
    EXPECT_LE(analytic_counts(g, b.tiling, b.schedule, true).total(), b.counts.total()) << g.name;
    // The baseline's rule: the largest Tj that fits.
    EXPECT_TRUE(b.tiling.Tj == g.J || !fits(g, Tiling{1, 1, 1, b.tiling.Tj + 1}, bo.buffers, bo.bytes)) << g.name;
  }
}

TEST(Search, Alg2OrdersOfTheBundledNetworks) {
  const std::vector<LayerGeometry> vgg = dram_layers(load_network(kRepo + "/models/vgg16.yaml"));
  EXPECT_EQ(vgg.size(), 16u);  // 13 conv + 3 fc (pools skipped)
  EXPECT_EQ(network_orders(vgg), (std::vector<int>{2, 3, 5}));
  const SearchOptions o = romanet_options(vgg, Buffers{}, ElementBytes{}, false);
  ASSERT_EQ(o.schedules.size(), 3u);
  EXPECT_EQ(o.schedules[0].order, 2);
  EXPECT_EQ(romanet_options(vgg, Buffers{}, ElementBytes{}, true).schedules.size(), 6u);
}

}  // namespace
}  // namespace capsgen::romanet
