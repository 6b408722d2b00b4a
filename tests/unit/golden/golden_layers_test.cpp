// Golden layers on small hand-computed cases, and against a term-by-term reference that uses
// fx::ChunkedAccumulator directly (the golden model's fast dot product must agree with it).
#include <gtest/gtest.h>

#include "core/rng.hpp"
#include "config/act_params.hpp"
#include "golden/fixed_model.hpp"
#include "golden_util.hpp"
#include "numerics/activation.hpp"
#include "numerics/fixed.hpp"

namespace capsgen {
namespace {

// A QuantizedModel with explicit codes, bypassing calibration, so expected values can be
// computed by hand.
QuantizedModel hand_model(const AccelConfig& cfg) {
  QuantizedModel qm;
  qm.act = act_params(cfg);
  qm.sqrt_lut = fx::build_sqrt_lut(qm.act);
  qm.squash_lut = fx::build_squash_lut(qm.act);
  qm.exp_lut = fx::build_exp_lut(qm.act);
  qm.input_frac = 0;
  return qm;
}

const char* kConvNet = R"(
name: conv-only
input: {channels: 1, height: 3, width: 3}
layers:
  - {name: c, type: conv2d, out_channels: 2, kernel: 2, activation: relu}
)";

TEST(GoldenConv, HandComputed) {
  AccelConfig cfg = test::preset("small-4x4");
  const Network net = parse_network(kConvNet, "conv-only.yaml");
  QuantizedModel qm = hand_model(cfg);
  LayerQuant q;
  q.name = "c";
  // Filter 0 = [[1,0],[0,-1]] (in[y][x] - in[y+1][x+1]), bias 10; filter 1 = all 2, bias -100.
  q.weight = IntTensor({2, 1, 2, 2});
  q.weight.data = {1, 0, 0, -1, 2, 2, 2, 2};
  q.bias = {10, -100};
  q.shift = 1;  // output = round(acc / 2)
  qm.layers.push_back(q);
  IntTensor in({1, 3, 3});
  in.data = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  const FixedTrace tr = run_golden(cfg, net, qm, in);
  const IntTensor& out = tr.get("c.out");
  ASSERT_EQ(out.shape, (Shape{2, 2, 2}));
  // Filter 0: (in - in_diag) = -4 everywhere, + 10 = 6, / 2 = 3.
  for (int i = 0; i < 4; ++i) EXPECT_EQ(out[std::size_t(i)], 3);
  // Filter 1: 2*(1+2+4+5) - 100 = -76 -> -38 -> ReLU 0; 2*(5+6+8+9) - 100 = -44 -> 0;
  // (2+3+5+6)*2 - 100 = -68 -> 0; (4+5+7+8)*2 - 100 = -52 -> 0.
  for (int i = 4; i < 8; ++i) EXPECT_EQ(out[std::size_t(i)], 0);
  // Without the bias offset filter 1 would be positive: check the rounding path too.
  qm.layers[0].bias = {0, 1};
  const FixedTrace tr2 = run_golden(cfg, net, qm, in);
  const IntTensor& out2 = tr2.get("c.out");
  EXPECT_EQ(out2[4], 13);  // (24 + 1) / 2 = 12.5 -> 13 (ties up)
}

TEST(GoldenConv, SaturationFollowsChunkOrder) {
  // rows = 2 and an 18-bit accumulator: chunks of 2 products of 127*127 = 16129 each.
  AccelConfig cfg = test::preset("small-4x4");
  cfg.array.rows = 2;
  cfg.widths.psum = 17;  // smax = 65535
  const Network net = parse_network(R"(
name: sat
input: {channels: 1, height: 1, width: 8}
layers:
  - {name: c, type: conv2d, out_channels: 1, kernel: [1, 8], activation: none, bias: false}
)",
                                    "sat.yaml");
  QuantizedModel qm = hand_model(cfg);
  LayerQuant q;
  q.name = "c";
  q.weight = IntTensor({1, 1, 1, 8});
  q.weight.data = {127, 127, 127, 127, 127, 127, -128, -128};
  q.shift = 10;
  qm.layers.push_back(q);
  IntTensor in({1, 1, 8});
  in.data = {127, 127, 127, 127, 127, 127, 127, 127};
  // Chunks: 32258 -> 32258; +32258 = 64516; +32258 = 96774 -> 65535 (saturated);
  // + (-32512) = 33023. round(33023 / 1024) = 32. The exact sum would be 64262 -> 63.
  GoldenStats st;
  const FixedTrace tr = run_golden(cfg, net, qm, in, &st);
  const IntTensor& out = tr.get("c.out");
  EXPECT_EQ(out[0], 32);
  EXPECT_EQ(st.psum_saturations, 1);
  EXPECT_EQ(st.macs, 8);
}

TEST(GoldenPrimaryCaps, CapsuleIndexOrder) {
  // 1x1 kernel over a 2x2x2 input, 2 types x 2 dims: channel o = t*2 + d reads input channel
  // (o % 2) times (o + 1). Capsule i = t*H*W + y*W + x.
  AccelConfig cfg = test::preset("small-4x4");
  const Network net = parse_network(R"(
name: prim
input: {channels: 2, height: 2, width: 2}
layers:
  - {name: p, type: primary_caps, capsule_types: 2, capsule_dim: 2, kernel: 1, stride: 1, bias: false}
)",
                                    "prim.yaml");
  QuantizedModel qm = hand_model(cfg);
  LayerQuant q;
  q.name = "p";
  q.weight = IntTensor({4, 2, 1, 1});
  q.weight.data = {1, 0, 0, 2, 3, 0, 0, 4};
  q.shift = 0;
  qm.layers.push_back(q);
  IntTensor in({2, 2, 2});
  in.data = {1, 2, 3, 4, 5, 6, 7, 8};  // channel 0: 1..4, channel 1: 5..8
  const FixedTrace tr = run_golden(cfg, net, qm, in);
  const IntTensor& s = tr.get("p.s");
  ASSERT_EQ(s.shape, (Shape{8, 2}));
  for (int t = 0; t < 2; ++t)
    for (int y = 0; y < 2; ++y)
      for (int x = 0; x < 2; ++x) {
        const std::size_t i = std::size_t(t * 4 + y * 2 + x);
        EXPECT_EQ(s[i * 2 + 0], (2 * t + 1) * in[std::size_t(y * 2 + x)]) << "capsule " << i;
        EXPECT_EQ(s[i * 2 + 1], (2 * t + 2) * in[std::size_t(4 + y * 2 + x)]) << "capsule " << i;
      }
  // The output is the squash unit applied to each capsule.
  const IntTensor& u = tr.get("p.out");
  for (std::size_t i = 0; i < 8; ++i) {
    std::int64_t sv[2] = {s[i * 2], s[i * 2 + 1]}, uv[2];
    fx::squash(qm.act, qm.sqrt_lut, qm.squash_lut, sv, 2, uv);
    EXPECT_EQ(u[i * 2], uv[0]);
    EXPECT_EQ(u[i * 2 + 1], uv[1]);
  }
}

// Term-by-term reference convolution with fx::ChunkedAccumulator.
IntTensor reference_conv(const AccelConfig& cfg, const Layer& L, const LayerQuant& q, const IntTensor& in) {
  const int K = int(q.weight.shape[0]), C = L.in.channels, H = L.in.height, W = L.in.width;
  const int Ho = (H + 2 * L.padding - L.kernel_h) / L.stride + 1, Wo = (W + 2 * L.padding - L.kernel_w) / L.stride + 1;
  IntTensor out({std::size_t(K), std::size_t(Ho), std::size_t(Wo)});
  for (int k = 0; k < K; ++k)
    for (int y = 0; y < Ho; ++y)
      for (int x = 0; x < Wo; ++x) {
        fx::ChunkedAccumulator acc(cfg.array.rows, cfg.widths.psum, q.bias.empty() ? 0 : q.bias[std::size_t(k)]);
        for (int c = 0; c < C; ++c)
          for (int ky = 0; ky < L.kernel_h; ++ky)
            for (int kx = 0; kx < L.kernel_w; ++kx) {
              const int iy = y * L.stride + ky - L.padding, ix = x * L.stride + kx - L.padding;
              const std::int64_t v = (iy < 0 || iy >= H || ix < 0 || ix >= W) ? 0 : in.at({std::size_t(c), std::size_t(iy), std::size_t(ix)});
              acc.add_term(v * q.weight.at({std::size_t(k), std::size_t(c), std::size_t(ky), std::size_t(kx)}));
            }
        std::int64_t r = fx::reduce(acc.finish(), q.shift, cfg.widths.act);
        if (L.activation == Activation::Relu) r = fx::relu(r);
        out.at({std::size_t(k), std::size_t(y), std::size_t(x)}) = std::int32_t(r);
      }
  return out;
}

// Random layers, random codes (full range, so saturation happens), several array heights and
// accumulator widths: the golden conv equals the reference bit for bit.
TEST(GoldenConv, MatchesTermByTermReference) {
  Rng rng(3);
  for (int trial = 0; trial < 40; ++trial) {
    AccelConfig cfg = test::preset("small-4x4");
    cfg.array.rows = int(rng.range(1, 20));
    cfg.widths.psum = int(rng.range(16 + 5, 25));
    // Every fourth trial uses 16-bit codes: the golden model's int64 path instead of int16/int32.
    const bool wide = trial % 4 == 3;
    if (wide) {
      cfg.widths.data = cfg.widths.weight = cfg.widths.act = 16;
      cfg.widths.psum = int(rng.range(32 + 5, 40));
    }
    const std::int64_t cmax = wide ? 32767 : 127;
    const int C = int(rng.range(1, 4)), Hh = int(rng.range(3, 9)), k = int(rng.range(1, 3)), s = int(rng.range(1, 2));
    const int pad = int(rng.range(0, 1));
    const std::string yaml = "name: r\ninput: {channels: " + std::to_string(C) + ", height: " + std::to_string(Hh) +
                             ", width: " + std::to_string(Hh + 1) + "}\nlayers:\n  - {name: c, type: conv2d, out_channels: " +
                             std::to_string(rng.range(1, 5)) + ", kernel: " + std::to_string(k) + ", stride: " +
                             std::to_string(s) + ", padding: " + std::to_string(pad) + ", activation: relu}\n";
    const Network net = parse_network(yaml, "random.yaml");
    QuantizedModel qm = hand_model(cfg);
    const auto specs = expected_weights(net);
    LayerQuant q;
    q.name = "c";
    q.weight = IntTensor(specs[0].shape);
    for (auto& w : q.weight.data) w = std::int32_t(rng.range(-cmax - 1, cmax));
    for (std::size_t i = 0; i < specs[1].shape[0]; ++i) q.bias.push_back(rng.range(-(1 << 20), 1 << 20));
    q.shift = int(rng.range(0, 12));
    qm.layers.push_back(q);
    IntTensor in({std::size_t(C), std::size_t(Hh), std::size_t(Hh + 1)});
    for (auto& v : in.data) v = std::int32_t(rng.range(-cmax - 1, cmax));
    const FixedTrace tr = run_golden(cfg, net, qm, in);
    ASSERT_EQ(tr.get("c.out").data, reference_conv(cfg, net.layers[0], q, in).data) << "trial " << trial << "\n" << yaml;
  }
}

}  // namespace
}  // namespace capsgen
