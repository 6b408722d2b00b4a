// The fast convolution kernel (gen/golden/conv_kernel.hpp) against the scalar reference on random
// layers: outputs and every GoldenStats count equal, for every instruction set and thread count;
// whole inferences independent of the thread count; batches equal to image-by-image runs.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <random>

#include "golden/chunked_dot.hpp"
#include "golden/conv_kernel.hpp"
#include "golden/fixed_model.hpp"
#include "golden/workload.hpp"
#include "golden_util.hpp"

namespace capsgen {
namespace {

struct RandomConv {
  ConvShape shape;
  ChunkContract contract;
  IntTensor weight, input;
  std::vector<std::int64_t> bias;
};

int pick(std::mt19937_64& rng, int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }

void fill_codes(std::mt19937_64& rng, IntTensor& t, int bits) {
  const int hi = (1 << (bits - 1)) - 1, lo = -(1 << (bits - 1));
  for (auto& v : t.data) v = pick(rng, lo, hi);
}

// Code widths 4..8 or 16, rows 1..16 as far as the fast path allows, accumulators that saturate
// often (10..14 bits), rarely (25..32) or need int64 lanes (33..40).
RandomConv random_conv(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  RandomConv rc;
  ChunkContract& cc = rc.contract;
  const int widths[] = {4, 5, 6, 7, 8, 16};
  do {
    cc.data_bits = widths[pick(rng, 0, 5)];
    cc.weight_bits = widths[pick(rng, 0, 5)];
    cc.rows = pick(rng, 1, 16);
  } while (!fits_fast_path(cc.data_bits, cc.weight_bits, cc.rows));
  const int psum_kind = pick(rng, 0, 2);
  cc.psum_bits = psum_kind == 0 ? pick(rng, 10, 14) : psum_kind == 1 ? pick(rng, 25, 32) : pick(rng, 33, 40);
  cc.out_bits = 8;
  cc.shift = pick(rng, 0, 10);
  ConvShape& s = rc.shape;
  s.in_channels = pick(rng, 1, 5), s.in_height = pick(rng, 3, 11), s.in_width = pick(rng, 3, 11);
  s.padding = pick(rng, 0, 2), s.stride = pick(rng, 1, 3);
  s.kernel_h = pick(rng, 1, std::min(5, s.in_height + 2 * s.padding));
  s.kernel_w = pick(rng, 1, std::min(5, s.in_width + 2 * s.padding));
  s.out_channels = pick(rng, 1, 37);
  s.out_height = (s.in_height + 2 * s.padding - s.kernel_h) / s.stride + 1;
  s.out_width = (s.in_width + 2 * s.padding - s.kernel_w) / s.stride + 1;
  rc.weight = IntTensor({std::size_t(s.out_channels), std::size_t(s.reduction())});
  rc.input = IntTensor({std::size_t(s.in_channels), std::size_t(s.in_height), std::size_t(s.in_width)});
  fill_codes(rng, rc.weight, cc.weight_bits);
  fill_codes(rng, rc.input, cc.data_bits);
  if (pick(rng, 0, 3) != 0) {  // bias, sometimes beyond the accumulator range
    const std::int64_t span = std::int64_t{1} << (cc.psum_bits - (pick(rng, 0, 1) ? 0 : 2));
    for (int k = 0; k < s.out_channels; ++k)
      rc.bias.push_back(std::uniform_int_distribution<std::int64_t>(-span, span)(rng));
  }
  return rc;
}

struct ConvResult {
  IntTensor out;
  GoldenStats stats;
};

ConvResult run_conv(const RandomConv& rc, ConvPath path, int threads) {
  ConvResult r;
  r.out = conv_chunked(rc.shape, rc.contract, rc.weight, rc.bias, rc.input, r.stats, threads, path);
  return r;
}

void expect_same(const ConvResult& want, const ConvResult& got, const std::string& what) {
  EXPECT_EQ(want.out.data, got.out.data) << what;
  EXPECT_EQ(want.stats.macs, got.stats.macs) << what;
  EXPECT_EQ(want.stats.psum_saturations, got.stats.psum_saturations) << what;
  EXPECT_EQ(want.stats.output_saturations, got.stats.output_saturations) << what;
}

TEST(ConvKernel, FastPathsEqualScalarOnRandomLayers) {
  long long saturating_layers = 0;
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    const RandomConv rc = random_conv(seed);
    const ConvResult ref = run_conv(rc, ConvPath::Scalar, 1);
    saturating_layers += ref.stats.psum_saturations > 0;
    const std::string what = fmt::format("seed {} rows {} psum {} d/w {}/{} R {} K {}", seed, rc.contract.rows,
                                         rc.contract.psum_bits, rc.contract.data_bits, rc.contract.weight_bits,
                                         rc.shape.reduction(), rc.shape.out_channels);
    expect_same(ref, run_conv(rc, ConvPath::Generic, 1), what + " generic");
    if (cpu_has_avx2()) expect_same(ref, run_conv(rc, ConvPath::Avx2, 1), what + " avx2");
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_GT(saturating_layers, 50);  // the saturation counting was exercised
}

TEST(ConvKernel, ThreadCountDoesNotChangeResults) {
  for (std::uint64_t seed = 1000; seed < 1040; ++seed) {
    const RandomConv rc = random_conv(seed);
    for (const ConvPath path : {ConvPath::Scalar, ConvPath::Auto}) {
      const ConvResult one = run_conv(rc, path, 1);
      for (const int t : {2, 3, 7}) expect_same(one, run_conv(rc, path, t), fmt::format("seed {} threads {}", seed, t));
    }
  }
}

TEST(ConvKernel, PackedWeightsEqualPackingPerCall) {
  const RandomConv rc = random_conv(7);
  const PackedConvWeights pw = pack_conv_weights(rc.weight, rc.bias, rc.contract);
  ConvResult packed;
  packed.out = conv_chunked(rc.shape, rc.contract, rc.weight, rc.bias, rc.input, packed.stats, 2, ConvPath::Auto, &pw);
  expect_same(run_conv(rc, ConvPath::Scalar, 1), packed, "packed");
}

// The prediction-vector kernel against dot_chunked() per output on random sizes and contracts.
TEST(ConvKernel, MatvecsEqualDotChunkedPerOutput) {
  long long saturating = 0;
  for (std::uint64_t seed = 2000; seed < 2100; ++seed) {
    RandomConv rc = random_conv(seed);  // for its contract and code widths
    std::mt19937_64 rng(seed);
    const int I = pick(rng, 1, 9), O = pick(rng, 1, 40), depth = pick(rng, 1, 40);
    IntTensor w({std::size_t(I), std::size_t(O), std::size_t(depth)}), x({std::size_t(I), std::size_t(depth)});
    fill_codes(rng, w, rc.contract.weight_bits);
    fill_codes(rng, x, rc.contract.data_bits);
    const ChunkContract& cc = rc.contract;
    ConvResult ref{IntTensor({std::size_t(I) * std::size_t(O)}), {}};
    for (int i = 0; i < I; ++i)
      for (int o = 0; o < O; ++o) {
        const std::int64_t acc = dot_chunked(&w[(std::size_t(i) * O + std::size_t(o)) * depth],
                                             &x[std::size_t(i) * depth], depth, cc.rows, cc.psum_bits, 0, ref.stats);
        ref.out[std::size_t(i) * O + std::size_t(o)] = reduce_out(acc, cc.shift, cc.out_bits, ref.stats);
      }
    saturating += ref.stats.psum_saturations > 0;
    const PackedMatvecWeights pw = pack_matvec_weights(w, I, O, depth);
    for (const int t : {1, 2, 3}) {
      ConvResult got{IntTensor({std::size_t(I) * std::size_t(O)}), {}};
      chunked_matvecs(pw, x, cc, got.out, got.stats, t);
      expect_same(ref, got, fmt::format("seed {} rows {} psum {} threads {}", seed, cc.rows, cc.psum_bits, t));
    }
  }
  EXPECT_GT(saturating, 10);
}

void expect_same_trace(const FixedTrace& a, const FixedTrace& b, const GoldenStats& sa, const GoldenStats& sb) {
  ASSERT_EQ(a.tensors.size(), b.tensors.size());
  for (std::size_t k = 0; k < a.tensors.size(); ++k) {
    EXPECT_EQ(a.tensors[k].first, b.tensors[k].first);
    EXPECT_EQ(a.tensors[k].second.data, b.tensors[k].second.data) << a.tensors[k].first;
  }
  EXPECT_EQ(a.prediction, b.prediction);
  EXPECT_EQ(sa.macs, sb.macs);
  EXPECT_EQ(sa.psum_saturations, sb.psum_saturations);
  EXPECT_EQ(sa.output_saturations, sb.output_saturations);
}

Workload small_workload() {
  const Network net = test::model("capsnet-small");
  return prepare_workload(test::preset("capsacc-16x16"), net, random_weights(net, 3), "random",
                          {random_input(net, 30), random_input(net, 31)});
}

TEST(GoldenThreads, InferenceIndependentOfThreadCount) {
  const Workload w = small_workload();
  const IntTensor in = quantize_input(w.cfg, w.qm, w.net, random_input(w.net, 5));
  GoldenStats s1;
  const FixedTrace t1 = run_golden(w.cfg, w.net, w.qm, in, &s1, 1);
  for (const int t : {2, 3, 7}) {
    GoldenStats st;
    const FixedTrace tt = run_golden(w.cfg, w.net, w.qm, in, &st, t);
    expect_same_trace(t1, tt, s1, st);
  }
}

TEST(GoldenThreads, BatchEqualsImageByImage) {
  const Workload w = small_workload();
  std::vector<IntTensor> inputs;
  for (std::uint64_t k = 0; k < 5; ++k) inputs.push_back(quantize_input(w.cfg, w.qm, w.net, random_input(w.net, 40 + k)));
  const GoldenModel model(w.cfg, w.net, w.qm);
  std::vector<GoldenStats> stats;
  const std::vector<FixedTrace> batch = model.run_batch(inputs, &stats, 3);
  ASSERT_EQ(batch.size(), inputs.size());
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    GoldenStats st;
    const FixedTrace one = run_golden(w.cfg, w.net, w.qm, inputs[k], &st);
    expect_same_trace(one, batch[k], st, stats[k]);
  }
}

}  // namespace
}  // namespace capsgen
