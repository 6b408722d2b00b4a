// DeepCaps layers in the float and fixed-point golden models: hand-computed small cases of
// conv_caps2d, conv_caps3d (3D routing), caps_add and flatten_caps; the fixed model against the
// float model on models/deepcaps-tiny.yaml; bit-exact determinism; the numerics' align_sum.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "golden/fixed_model.hpp"
#include "golden/float_model.hpp"
#include "golden/report.hpp"
#include "golden/workload.hpp"
#include "golden_util.hpp"
#include "numerics/fixed.hpp"

namespace capsgen {
namespace {

Network net_of(const std::string& layers, int c, int h, int w) {
  return parse_network("name: t\ninput: {channels: " + std::to_string(c) + ", height: " + std::to_string(h) +
                           ", width: " + std::to_string(w) + "}\nlayers:\n" + layers,
                       "t.yaml");
}

FloatTensor tensor(Shape shape, std::vector<float> values) {
  FloatTensor t(std::move(shape));
  EXPECT_EQ(t.size(), values.size());
  t.data = std::move(values);
  return t;
}

// Squash of one capsule: |s|^2 / (1 + |s|^2) * s / |s|.
std::vector<double> squash(std::vector<double> s) {
  double n2 = 0;
  for (double v : s) n2 += v * v;
  const double k = n2 > 0 ? n2 / (1 + n2) / std::sqrt(n2) : 0;
  for (double& v : s) v *= k;
  return s;
}

TEST(DeepCapsFloat, ConvCaps2dSquashesEachCapsuleOfTheConvolution) {
  // x (1x1x1, value 1) -> a: 2 types x 2-D, 1x1 kernel: s = the weights, channel t*2 + d.
  // -> b: 1 type x 1-D reading channel 1 of a's grid, i.e. type 0, atom 1.
  const Network n = net_of(R"(  - {name: a, type: conv_caps2d, capsule_types: 2, capsule_dim: 2, kernel: 1}
  - {name: b, type: conv_caps2d, capsule_types: 1, capsule_dim: 1, kernel: 1}
)", 1, 1, 1);
  WeightSet w;
  w["a.weight"] = tensor({4, 1, 1, 1}, {3, 4, 0, 1});
  w["b.weight"] = tensor({1, 4, 1, 1}, {0, 1, 0, 0});
  const FloatTrace tr = run_float(n, w, tensor({1, 1, 1}, {1}));
  const FloatTensor& a = tr.get("a.out");
  ASSERT_EQ(a.shape, (Shape{2, 2}));
  EXPECT_NEAR(a[0], 15.0 / 26, 1e-6);  // [3,4]: |s| = 5, |v| = 25/26
  EXPECT_NEAR(a[1], 20.0 / 26, 1e-6);
  EXPECT_NEAR(a[2], 0.0, 1e-7);
  EXPECT_NEAR(a[3], 0.5, 1e-6);  // [0,1]: |v| = 1/2
  EXPECT_EQ(tr.get("a.s").data, (std::vector<float>{3, 4, 0, 1}));
  const double s = 20.0 / 26;
  EXPECT_NEAR(tr.get("b.s")[0], s, 1e-6);
  EXPECT_NEAR(tr.get("b.out")[0], s * s / (1 + s * s), 1e-6);

  // Positions, stride and padding: 1 type x 2-D on a 2x3 map, kernel 1x3, padding 1, stride 2.
  const Network p = net_of(R"(  - {name: a, type: conv_caps2d, capsule_types: 1, capsule_dim: 2, kernel: [1, 3], padding: 1, stride: 2}
)", 1, 2, 3);
  EXPECT_EQ(p.layers[0].out.str(), "4 capsules x 2-D (1 types x 2x2)");
  WeightSet wp;
  wp["a.weight"] = tensor({2, 1, 1, 3}, {1, 0, 0, 0, 0, 1});  // d0 reads column 2*xo - 1, d1 column 2*xo + 1
  const FloatTrace tp = run_float(p, wp, tensor({1, 2, 3}, {1, 2, 3, 4, 5, 6}));
  // Output row 0 reads input row -1 (padding); row 1 reads input row 1: xo = 0 -> [pad, 5], xo = 1 -> [5, pad].
  EXPECT_EQ(tp.get("a.s").data, (std::vector<float>{0, 0, 0, 0, 0, 5, 5, 0}));
}

TEST(DeepCapsFloat, ConvCaps3dRoutesOverTypesAndPositions) {
  // Input: 2 channels = 2 capsule types of one atom, on 1x2 positions. 1x1 kernel: the vote of
  // input type i for output capsule (t, p) is w[t] * x_i(p), the same kernel for both types.
  const Network n = net_of(R"(  - {name: r, type: conv_caps3d, capsule_types: 2, capsule_dim: 1, kernel: 1, routing_iterations: 2}
)", 2, 1, 2);
  EXPECT_EQ(n.layers[0].out.str(), "4 capsules x 1-D (2 types x 1x2)");
  WeightSet w;
  w["r.weight"] = tensor({2, 1, 1, 1}, {2, 1});
  w["r.bias"] = tensor({2, 1}, {0.1f, -0.2f});
  const std::vector<float> x{1, 0.5f, -1, 2};  // x_0 = [1, 0.5], x_1 = [-1, 2]
  const FloatTrace tr = run_float(n, w, tensor({2, 1, 2}, x));
  // u[i][t*2 + p]
  double u[2][4];
  for (int i = 0; i < 2; ++i)
    for (int t = 0; t < 2; ++t)
      for (int p = 0; p < 2; ++p) u[i][t * 2 + p] = (t == 0 ? 2.0 : 1.0) * x[std::size_t(i * 2 + p)];
  const FloatTensor& uh = tr.get("r.u_hat");
  ASSERT_EQ(uh.shape, (Shape{2, 4, 1}));
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j) EXPECT_NEAR(uh[std::size_t(i * 4 + j)], u[i][j], 1e-6);
  // Iteration 0: each input type spreads evenly over all 4 output capsules (2 types x 2 positions).
  for (float c : tr.get("r.iter0.c").data) EXPECT_NEAR(c, 0.25, 1e-7);
  const double bias[4] = {0.1, 0.1, -0.2, -0.2};
  double v0[4], b[2][4];
  for (int j = 0; j < 4; ++j) {
    const double s = 0.25 * (u[0][j] + u[1][j]) + bias[j];
    EXPECT_NEAR(tr.get("r.iter0.s")[std::size_t(j)], s, 1e-6);
    v0[j] = squash({s})[0];
    EXPECT_NEAR(tr.get("r.iter0.v")[std::size_t(j)], v0[j], 1e-6);
  }
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j) {
      b[i][j] = u[i][j] * v0[j];
      EXPECT_NEAR(tr.get("r.iter0.b")[std::size_t(i * 4 + j)], b[i][j], 1e-6);
    }
  // Iteration 1: softmax of each input type's logits over all 4 output capsules.
  double c[2][4];
  for (int i = 0; i < 2; ++i) {
    double sum = 0;
    for (int j = 0; j < 4; ++j) sum += std::exp(b[i][j]);
    for (int j = 0; j < 4; ++j) {
      c[i][j] = std::exp(b[i][j]) / sum;
      EXPECT_NEAR(tr.get("r.iter1.c")[std::size_t(i * 4 + j)], c[i][j], 1e-6);
    }
  }
  for (int j = 0; j < 4; ++j) {
    const double s = c[0][j] * u[0][j] + c[1][j] * u[1][j] + bias[j];
    EXPECT_NEAR(tr.get("r.out")[std::size_t(j)], squash({s})[0], 1e-6);
  }
  EXPECT_EQ(tr.find("r.iter1.b"), nullptr);  // no update after the last iteration
}

TEST(DeepCapsFloat, ConvCaps3dSharesTheKernelAcrossInputTypes) {
  // 2 input types x 2 atoms at one position; output 1 type x 2-D; votes = W (2x2) . u_i for both i.
  const Network n = net_of(R"(  - {name: a, type: conv_caps2d, capsule_types: 2, capsule_dim: 2, kernel: 1}
  - {name: r, type: conv_caps3d, capsule_types: 1, capsule_dim: 2, kernel: 1, bias: false, routing_iterations: 1}
)", 1, 1, 1);
  WeightSet w;
  w["a.weight"] = tensor({4, 1, 1, 1}, {0.3f, 0.4f, -0.6f, 0.8f});
  w["r.weight"] = tensor({2, 2, 1, 1}, {1, 2, -1, 0.5f});  // out atom d = sum_e W[d][e] u_i[e]
  const FloatTrace tr = run_float(n, w, tensor({1, 1, 1}, {1}));
  const FloatTensor& a = tr.get("a.out");
  const FloatTensor& uh = tr.get("r.u_hat");
  ASSERT_EQ(uh.shape, (Shape{2, 1, 2}));
  for (int i = 0; i < 2; ++i) {
    const double e0 = a[std::size_t(i * 2)], e1 = a[std::size_t(i * 2 + 1)];
    EXPECT_NEAR(uh[std::size_t(i * 2)], 1 * e0 + 2 * e1, 1e-6);
    EXPECT_NEAR(uh[std::size_t(i * 2 + 1)], -1 * e0 + 0.5 * e1, 1e-6);
  }
  // One output capsule: c = 1, s = sum of both votes, one iteration.
  const std::vector<double> v = squash({uh[0] + double(uh[2]), uh[1] + double(uh[3])});
  EXPECT_NEAR(tr.get("r.out")[0], v[0], 1e-6);
  EXPECT_NEAR(tr.get("r.out")[1], v[1], 1e-6);
}

TEST(DeepCapsFloat, AddThenFlattenConcatenates) {
  const Network n = net_of(R"(  - {name: a, type: conv_caps2d, capsule_types: 1, capsule_dim: 2, kernel: 1}
  - {name: b, type: conv_caps2d, input: a, capsule_types: 1, capsule_dim: 2, kernel: 1}
  - {name: sum, type: caps_add, inputs: [a, b]}
  - {name: flat, type: flatten_caps, inputs: [sum, b]}
)", 1, 1, 2);
  WeightSet w;
  w["a.weight"] = tensor({2, 1, 1, 1}, {0.6f, 0.8f});
  w["b.weight"] = tensor({2, 2, 1, 1}, {0, 1, 1, 0});  // swaps the atoms
  const FloatTrace tr = run_float(n, w, tensor({1, 1, 2}, {1, 2}));
  const FloatTensor &a = tr.get("a.out"), &b = tr.get("b.out"), &sum = tr.get("sum.out"), &flat = tr.get("flat.out");
  ASSERT_EQ(sum.shape, (Shape{2, 2}));
  ASSERT_EQ(flat.shape, (Shape{4, 2}));
  for (std::size_t k = 0; k < 4; ++k) {
    EXPECT_FLOAT_EQ(sum[k], a[k] + b[k]);  // no squash after the add
    EXPECT_FLOAT_EQ(flat[k], sum[k]);
    EXPECT_FLOAT_EQ(flat[4 + k], b[k]);
  }
  // Position 1: a's s = [1.2, 1.6], |s| = 2 -> |v| = 4/5, v = [0.48, 0.64]. b's s = [0.64, 0.48],
  // |s| = 0.8 -> |v| = 0.64 / 1.64.
  EXPECT_NEAR(a[2], 0.48, 1e-6);
  EXPECT_NEAR(a[3], 0.64, 1e-6);
  const double k = 0.64 / 1.64 / 0.8;
  EXPECT_NEAR(b[2], 0.64 * k, 1e-6);
  EXPECT_NEAR(b[3], 0.48 * k, 1e-6);
  EXPECT_NEAR(sum[3], 0.64 + 0.48 * k, 1e-6);
}

TEST(DeepCapsNumerics, AlignSumRoundsOnceAndSaturates) {
  // 0.5 (Q.7 code 64) + 0.75 (Q.6 code 48) = 1.25 -> Q.6 code 80.
  const std::int64_t c1[] = {64, 48};
  const int f1[] = {7, 6};
  EXPECT_EQ(fx::align_sum(c1, f1, 2, 6, 8), 80);
  // 1/128 + 1/128 at Q.6 = 1/64 exactly; 1/128 alone at Q.6 rounds half up to 1/64.
  const std::int64_t c2[] = {1, 1};
  const int f2[] = {7, 7};
  EXPECT_EQ(fx::align_sum(c2, f2, 2, 6, 8), 1);
  EXPECT_EQ(fx::align_sum(c2, f2, 1, 6, 8), 1);
  const std::int64_t m[] = {-1};
  EXPECT_EQ(fx::align_sum(m, f2, 1, 6, 8), 0);  // -1/128 -> -0.5 LSB rounds up to 0
  // Saturation to 8 bits, and a finer output format shifts left exactly.
  const std::int64_t big[] = {127, 127};
  EXPECT_EQ(fx::align_sum(big, f2, 2, 7, 8), 127);
  EXPECT_EQ(fx::align_sum(c1, f1, 1, 9, 16), 256);
}

Workload tiny_workload(std::uint64_t seed) {
  return prepare_workload({std::string(CAPSGEN_REPO_ROOT) + "/configs/capsacc-16x16.yaml",
                           std::string(CAPSGEN_REPO_ROOT) + "/models/deepcaps-tiny.yaml", std::nullopt, seed,
                           std::nullopt, 4});
}

TEST(DeepCapsGolden, FixedTracksFloatOnTheTinyVariant) {
  const Workload w = tiny_workload(1);
  int clear = 0;
  for (std::uint64_t img = 0; img < 4; ++img) {
    const FloatTensor in = random_input(w.net, 100 + img);
    GoldenStats st;
    const FixedTrace fx = run_golden(w.cfg, w.net, w.qm, quantize_input(w.cfg, w.qm, w.net, in), &st);
    const FloatTrace fl = run_float(w.net, w.weights, in);
    EXPECT_GT(st.macs, 0);
    // Every tensor of both traces, with the same names and shapes.
    ASSERT_EQ(fx.tensors.size(), fl.tensors.size());
    for (std::size_t k = 0; k < fx.tensors.size(); ++k) {
      const auto& [name, t] = fx.tensors[k];
      ASSERT_EQ(name, fl.tensors[k].first);
      ASSERT_EQ(t.shape, fl.tensors[k].second.shape) << name;
      const int frac = trace_frac(w.net, w.qm, name);
      double max_err = 0;
      for (std::size_t i = 0; i < t.size(); ++i)
        max_err = std::max(max_err, std::fabs(std::ldexp(double(t[i]), -frac) - fl.tensors[k].second[i]));
      // capsacc-16x16's squash input has 3 fraction bits (steps of 1/8), so every conv_caps2d s is off by
      // up to 1/16 per element before the squash, and the errors add up along the 16 capsule layers
      // and the skips (outputs up to 2 after an add). `capsgen golden` on seeds 1-6 measures at most
      // 0.24 per element and 0.052 on average for any ".out" tensor, and 0.06 on the class norms.
      if (name.size() > 4 && name.compare(name.size() - 4, 4, ".out") == 0) {
        double sum = 0;
        for (std::size_t i = 0; i < t.size(); ++i)
          sum += std::fabs(std::ldexp(double(t[i]), -frac) - fl.tensors[k].second[i]);
        EXPECT_LT(max_err, 0.4) << name << " image " << img;
        EXPECT_LT(sum / double(t.size()), 0.08) << name << " image " << img;
      }
    }
    for (std::size_t j = 0; j < fl.class_norms.size(); ++j)
      EXPECT_NEAR(fx.class_norms[j], fl.class_norms[j], 0.1) << "class " << j << " image " << img;
    // Random weights give close class norms; where float's winner leads by more than twice the
    // norm tolerance, the fixed-point model must pick it too.
    std::vector<double> sorted = fl.class_norms;
    std::sort(sorted.begin(), sorted.end(), std::greater<>());
    if (sorted[0] - sorted[1] > 0.2) {
      EXPECT_EQ(fx.prediction, fl.prediction) << "image " << img;
      ++clear;
    }
  }
  RecordProperty("clear_margin_images", clear);
}

TEST(DeepCapsGolden, QuantizationOfTheNewTensors) {
  const Workload w = tiny_workload(1);
  auto q = [&](const std::string& name) -> const LayerQuant& {
    for (std::size_t i = 0; i < w.net.layers.size(); ++i)
      if (w.net.layers[i].name == name) return w.qm.layers[i];
    throw std::out_of_range(name);
  };
  const int sq_out = w.qm.act.squash_out_frac();
  // conv_caps2d: s in the squash unit's input format, output the squash output format.
  EXPECT_EQ(q("c2_1").out_frac, w.qm.act.sq_in_frac);
  EXPECT_EQ(q("c2_1").next_frac, sq_out);
  EXPECT_EQ(q("c2_1").shift, q("c2_1").in_frac + q("c2_1").w_frac - q("c2_1").out_frac);
  EXPECT_EQ(q("c2_1").in_frac, q("c2_0").next_frac);   // reads c2_0, not the layer before it (c2_skip)
  EXPECT_EQ(q("c2_0").in_frac, q("cell1").next_frac);  // reads the sum
  EXPECT_TRUE(q("c2_1").bias.empty());
  // caps_add of two Q0.7 squash outputs: between Q1.6 (room for the sum) and Q0.7, by calibration.
  for (const char* add : {"cell1", "cell2", "cell3", "cell4"}) {
    EXPECT_GE(q(add).out_frac, sq_out - 1) << add;
    EXPECT_LE(q(add).out_frac, sq_out) << add;
    EXPECT_EQ(q(add).next_frac, q(add).out_frac) << add;
    EXPECT_TRUE(q(add).weight.data.empty()) << add;
  }
  // flatten_caps takes the coarser of its inputs' formats; class_caps reads that.
  EXPECT_EQ(q("flat").out_frac, std::min(q("cell4").next_frac, q("cell3").next_frac));
  EXPECT_EQ(q("classcaps").in_frac, q("flat").out_frac);
  // conv_caps3d: routing shifts as class_caps, and its bias [T, D] repeated over the 2x2 positions,
  // in the s accumulator's format.
  const LayerQuant& r = q("c4_skip");
  EXPECT_EQ(r.u_frac, r.out_frac);
  EXPECT_EQ(r.s_shift, w.qm.act.coupling_frac() + r.u_frac - w.qm.act.sq_in_frac);
  EXPECT_EQ(r.b_shift, r.u_frac + sq_out - w.qm.act.sm_in_frac);
  ASSERT_EQ(r.bias.size(), 4u * 4u * 8u);
  const FloatTensor& bt = w.weights.at("c4_skip.bias");
  for (std::size_t t = 0; t < 4; ++t)
    for (std::size_t p = 0; p < 4; ++p)
      for (std::size_t d = 0; d < 8; ++d)
        EXPECT_EQ(r.bias[(t * 4 + p) * 8 + d],
                  fx::quantize(bt[t * 8 + d], w.qm.act.coupling_frac() + r.u_frac, w.cfg.widths.psum));
}

TEST(DeepCapsGolden, BitExactAndDeterministic) {
  const Workload a = tiny_workload(7), b = tiny_workload(7);
  const FloatTensor in = random_input(a.net, 3);
  const IntTensor codes = quantize_input(a.cfg, a.qm, a.net, in);
  const FixedTrace ta = run_golden(a.cfg, a.net, a.qm, codes);
  const FixedTrace tb = run_golden(b.cfg, b.net, b.qm, codes);
  const FixedTrace tc = run_golden(a.cfg, a.net, a.qm, codes);
  ASSERT_EQ(ta.tensors.size(), tb.tensors.size());
  for (std::size_t k = 0; k < ta.tensors.size(); ++k) {
    EXPECT_EQ(ta.tensors[k].second.data, tb.tensors[k].second.data) << ta.tensors[k].first;
    EXPECT_EQ(tensor_checksum(ta.tensors[k].second), tensor_checksum(tc.tensors[k].second)) << ta.tensors[k].first;
  }
  EXPECT_EQ(ta.prediction, tb.prediction);
  // The trace holds every DeepCaps tensor: the 3D routing's iterations and the skips' sums.
  for (const char* name : {"c1_0.s", "c1_0.out", "c4_skip.u_hat", "c4_skip.iter0.c", "c4_skip.iter1.b",
                           "c4_skip.iter2.v", "c4_skip.out", "cell4.out", "flat.out", "classcaps.norm"})
    EXPECT_NE(ta.find(name), nullptr) << name;
  EXPECT_EQ(ta.get("flat.out").shape, (Shape{80, 8}));
  EXPECT_EQ(ta.get("c4_skip.u_hat").shape, (Shape{4, 16, 8}));
  // Another seed gives other weights and other codes.
  const Workload c = tiny_workload(8);
  EXPECT_NE(run_golden(c.cfg, c.net, c.qm, quantize_input(c.cfg, c.qm, c.net, in)).get("flat.out").data,
            ta.get("flat.out").data);
}

}  // namespace
}  // namespace capsgen
