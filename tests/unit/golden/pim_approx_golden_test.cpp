// Whole inferences of the golden model with PIM-CapsNet's approximations selected (exp, softmax
// divide, norm sqrt, each alone and all together): they complete, they really change the routing
// (some traced tensor differs from the LUT run), and the class norms stay within a stated distance of
// the LUT version on seeded random weights and inputs (docs/pim-capsnet.md quotes the distances).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>

#include "golden/fixed_model.hpp"
#include "golden/workload.hpp"
#include "golden_util.hpp"

namespace capsgen {
namespace {

struct Variant {
  const char* name;
  std::function<void(AccelConfig&)> apply;
};

const std::vector<Variant>& variants() {
  static const std::vector<Variant> v{
      {"exp pim-shift, no recovery", [](AccelConfig& c) { c.softmax.exp_kind = ExpKind::kPimShift; }},
      {"exp pim-shift, recovery",
       [](AccelConfig& c) {
         c.softmax.exp_kind = ExpKind::kPimShift;
         c.softmax.exp_recovery = true;
       }},
      {"divide pim-reciprocal", [](AccelConfig& c) { c.softmax.divide_kind = DivideKind::kPimReciprocal; }},
      {"sqrt pim-rsqrt", [](AccelConfig& c) { c.norm.sqrt_kind = SqrtKind::kPimRsqrt; }},
      {"all, recovery",
       [](AccelConfig& c) {
         c.softmax.exp_kind = ExpKind::kPimShift;
         c.softmax.exp_recovery = true;
         c.softmax.divide_kind = DivideKind::kPimReciprocal;
         c.norm.sqrt_kind = SqrtKind::kPimRsqrt;
       }},
  };
  return v;
}

struct Distance {
  double max_norm_diff = 0;
  int runs = 0, same_class = 0, traces_differ = 0;
};

// Runs `inputs` seeded inputs through the LUT preset and through the variant (same weights, same
// calibration), comparing class norms (as real values) and predictions.
Distance compare(const char* preset, const char* model, const Variant& var, int inputs) {
  const AccelConfig lut_cfg = test::preset(preset);
  AccelConfig approx_cfg = lut_cfg;
  var.apply(approx_cfg);
  validate_accel_config(approx_cfg);
  const Network net = test::model(model);
  std::vector<FloatTensor> calib;
  for (int k = 0; k < 4; ++k) calib.push_back(random_input(net, 7100 + k));
  const WeightSet weights = random_weights(net, 24);
  const Workload wl = prepare_workload(lut_cfg, net, weights, "random", calib);
  const Workload wa = prepare_workload(approx_cfg, net, weights, "random", calib);
  Distance d;
  for (int k = 0; k < inputs; ++k) {
    const FloatTensor img = random_input(net, std::uint64_t(8100 + k));
    const FixedTrace tl = run_golden(wl.cfg, wl.net, wl.qm, quantize_input(wl.cfg, wl.qm, wl.net, img));
    const FixedTrace ta = run_golden(wa.cfg, wa.net, wa.qm, quantize_input(wa.cfg, wa.qm, wa.net, img));
    EXPECT_EQ(ta.class_norms.size(), tl.class_norms.size());
    for (std::size_t j = 0; j < tl.class_norms.size(); ++j)
      d.max_norm_diff = std::max(d.max_norm_diff, std::fabs(ta.class_norms[j] - tl.class_norms[j]));
    ++d.runs;
    d.same_class += ta.prediction == tl.prediction;
    bool differ = false;
    for (const auto& [name, t] : tl.tensors) {
      const IntTensor* other = ta.find(name);
      if (other == nullptr || other->data != t.data) differ = true;
    }
    d.traces_differ += differ;
  }
  std::printf("[pim] %s / %s, %s: max |class norm - LUT's| %.4f, same class %d/%d, traces differ %d/%d\n", model,
              preset, var.name, d.max_norm_diff, d.same_class, d.runs, d.traces_differ, d.runs);
  return d;
}

// Distances asserted: the class norms (in [0, 1)) stay within `bound` of the LUT run's.
void check(const char* preset, const char* model, int inputs, double bound) {
  for (const Variant& v : variants()) {
    const Distance d = compare(preset, model, v, inputs);
    EXPECT_EQ(d.runs, inputs);
    EXPECT_GT(d.traces_differ, 0) << v.name << ": the approximation changed nothing";
    EXPECT_LE(d.max_norm_diff, bound) << v.name;
  }
}

TEST(PimApproxGolden, CapsNetTinySmall4x4) { check("small-4x4", "capsnet-tiny", 20, 0.10); }
TEST(PimApproxGolden, CapsNetSmallCapsacc16x16) { check("capsacc-16x16", "capsnet-small", 4, 0.10); }

}  // namespace
}  // namespace capsgen
