// Weights and inputs against the network: every error names the file and the key or field.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "core/input_error.hpp"
#include "golden/quant.hpp"
#include "golden/workload.hpp"
#include "golden_util.hpp"
#include "weights/npy.hpp"

namespace capsgen {
namespace {

std::string tmp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("capsgen_workload_test_" + name)).string();
}

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(Weights, RandomWeightsHaveExpectedShapesAndAreDeterministic) {
  const Network net = test::model("capsnet-mnist");
  const WeightSet a = random_weights(net, 42), b = random_weights(net, 42), c = random_weights(net, 43);
  EXPECT_NO_THROW(check_weights(net, a, "random"));
  EXPECT_EQ(a.at("classcaps.W").shape, (Shape{1152, 10, 16, 8}));
  EXPECT_EQ(a.at("primary.weight").shape, (Shape{256, 256, 9, 9}));
  EXPECT_EQ(a.at("conv1.bias").data, b.at("conv1.bias").data);
  EXPECT_NE(a.at("conv1.bias").data, c.at("conv1.bias").data);
}

TEST(Weights, MissingKeyAndBadShapeNameFileAndKey) {
  const Network net = test::model("capsnet-tiny");
  WeightSet w = random_weights(net, 1);
  const std::string path = tmp_path("bad.npz");
  WeightSet missing = w;
  missing.erase("primary.bias");
  write_npz(path, missing);
  std::string msg = error_of([&] { load_weights(path, net); });
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  EXPECT_NE(msg.find("primary.bias"), std::string::npos) << msg;
  EXPECT_NE(msg.find("missing"), std::string::npos) << msg;

  WeightSet bad = w;
  bad["classcaps.W"] = FloatTensor({36, 5, 8, 5});
  write_npz(path, bad);
  msg = error_of([&] { load_weights(path, net); });
  EXPECT_NE(msg.find("classcaps.W"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[36,5,8,5]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[36,5,8,4]"), std::string::npos) << msg;

  WeightSet nan = w;
  nan["conv1.weight"].data[3] = std::nanf("");
  write_npz(path, nan);
  msg = error_of([&] { load_weights(path, net); });
  EXPECT_NE(msg.find("conv1.weight"), std::string::npos) << msg;
  EXPECT_NE(msg.find("non-finite"), std::string::npos) << msg;

  // A good file round-trips, and extra keys (e.g. a decoder) are reported, not fatal.
  WeightSet extra = w;
  extra["decoder.fc1.weight"] = FloatTensor({2, 2});
  write_npz(path, extra);
  const WeightSet back = load_weights(path, net);
  EXPECT_EQ(back.at("classcaps.W").data, w.at("classcaps.W").data);
  EXPECT_EQ(unused_weights(net, back), std::vector<std::string>{"decoder.fc1.weight"});
  std::remove(path.c_str());
}

TEST(Inputs, ShapesAreCheckedAgainstTheNetwork) {
  const Network net = test::model("capsnet-tiny");
  const std::string path = tmp_path("in.npy");
  write_npy(path, FloatTensor({3, 12, 12}, 0.5f));  // [N,H,W]
  EXPECT_EQ(load_inputs(path, net).size(), 3u);
  write_npy(path, FloatTensor({2, 1, 12, 12}, 0.5f));  // [N,C,H,W]
  EXPECT_EQ(load_inputs(path, net).size(), 2u);
  write_npy(path, FloatTensor({2, 1, 28, 28}, 0.5f));
  const std::string msg = error_of([&] { load_inputs(path, net); });
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  EXPECT_NE(msg.find("[2,1,28,28]"), std::string::npos) << msg;
  std::remove(path.c_str());
}

TEST(Quant, ChooseFrac) {
  EXPECT_EQ(choose_frac(1.0, 8, -16, 30), 6);     // 1.0 * 64 = 64 <= 127; * 128 = 128 > 127
  EXPECT_EQ(choose_frac(0.99, 8, -16, 30), 7);    // 126.7 <= 127
  EXPECT_EQ(choose_frac(300.0, 8, -16, 30), -2);  // 300 / 4 = 75
  EXPECT_EQ(choose_frac(1e-9, 8, -16, 12), 12);   // clamped
  EXPECT_EQ(choose_frac(0.0, 8, -16, 12), 12);    // never observed: finest allowed
}

TEST(Quant, FormatsChainThroughTheNetwork) {
  const Network net = test::model("capsnet-tiny");
  const Workload w = prepare_workload(test::preset("small-4x4"), net, random_weights(net, 3), "random",
                                      {random_input(net, 1), random_input(net, 2)});
  ASSERT_EQ(w.qm.layers.size(), 3u);
  const auto& conv = w.qm.layers[0];
  const auto& prim = w.qm.layers[1];
  const auto& cc = w.qm.layers[2];
  EXPECT_EQ(conv.in_frac, 7);
  EXPECT_EQ(prim.in_frac, conv.out_frac);
  EXPECT_EQ(prim.out_frac, w.cfg.squash.in_frac);
  EXPECT_EQ(cc.in_frac, w.cfg.squash.out_bits - 1);
  for (const auto& q : w.qm.layers) {
    EXPECT_EQ(q.shift, q.in_frac + q.w_frac - q.out_frac);
    EXPECT_GE(q.shift, 0);
  }
  EXPECT_EQ(cc.s_shift, (w.cfg.widths.act - 1) + cc.u_frac - w.cfg.squash.in_frac);
  EXPECT_EQ(cc.b_shift, cc.u_frac + (w.cfg.squash.out_bits - 1) - w.cfg.softmax.in_frac);
  EXPECT_EQ(cc.norm_shift % 2, 0);
  // Calibrated formats hold the calibration maxima without clipping.
  const double conv_max = w.stats.get("conv1.out");
  EXPECT_LE(conv_max * std::ldexp(1.0, conv.out_frac), 127.0 + 1e-9);
}

}  // namespace
}  // namespace capsgen
