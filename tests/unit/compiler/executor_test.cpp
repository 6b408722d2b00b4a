// The compiled program, run by the functional executor, reproduces every tensor of the golden
// model bit for bit: this checks the compiler's mapping (tiling, chunk order, addressing, output
// placement, the routing dataflows) independently of the golden model's own loops.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "compiler/compiler.hpp"
#include "compiler/executor.hpp"
#include "golden/fixed_model.hpp"
#include "golden/workload.hpp"

namespace capsgen {
namespace {

AccelConfig preset(const std::string& n) { return load_accel_config(std::string(CAPSGEN_REPO_ROOT) + "/configs/" + n + ".yaml"); }
Network model(const std::string& n) { return load_network(std::string(CAPSGEN_REPO_ROOT) + "/models/" + n + ".yaml"); }

struct Case {
  const char* preset;
  const char* model;
  int seed;
  int rows = 0, cols = 0;  // override the preset's array (0: keep)
};

class ExecutorTest : public ::testing::TestWithParam<Case> {};

TEST_P(ExecutorTest, ProgramReproducesEveryGoldenTensor) {
  const Case tc = GetParam();
  AccelConfig cfg = preset(tc.preset);
  if (tc.rows) cfg.array.rows = tc.rows;
  if (tc.cols) cfg.array.cols = tc.cols;
  const Network net = model(tc.model);
  const Workload w = prepare_workload(cfg, net, random_weights(net, std::uint64_t(tc.seed)), "random",
                                      {random_input(net, 77), random_input(net, 78)});
  const IntTensor input = quantize_input(w.cfg, w.qm, w.net, random_input(w.net, std::uint64_t(tc.seed)));
  const FixedTrace golden = run_golden(w.cfg, w.net, w.qm, input);

  const isa::Program prog = compile_program(w.cfg, w.net, w.qm);
  std::vector<std::int32_t> mem = build_image(prog, w.net, w.qm, input);
  execute_program(w.cfg, prog, mem);

  int compared = 0;
  for (const auto& [name, t] : golden.tensors) {
    const isa::Region* r = prog.region(name);
    ASSERT_NE(r, nullptr) << "program has no region for golden tensor " << name;
    // A capsule grid's region is [types, positions, atoms] for the golden [types*positions, atoms].
    ASSERT_EQ(shape_size(r->shape), t.size()) << name;
    if (!r->minor_transposed) {
      ASSERT_EQ(r->shape, t.shape) << name;
    }
    for (std::size_t i = 0; i < t.size(); ++i) {
      const std::int32_t got = mem[std::size_t(r->base + r->offset_of(std::int64_t(i)))];
      ASSERT_EQ(got, t[i]) << "tensor " << name << " index " << index_str(t.shape, i) << ": executor " << got
                           << ", golden " << t[i];
    }
    ++compared;
  }
  EXPECT_EQ(compared, int(golden.tensors.size()));
  // The prediction from the program's norm codes (argmax, lowest index on ties) matches.
  const std::string last = w.net.layers.back().name;
  const isa::Region* nr = prog.region(last + ".norm");
  int best = 0;
  for (std::size_t j = 1; j < nr->shape[0]; ++j)
    if (mem[std::size_t(nr->base) + j] > mem[std::size_t(nr->base) + std::size_t(best)]) best = int(j);
  EXPECT_EQ(best, golden.prediction);
}

INSTANTIATE_TEST_SUITE_P(
    Workloads, ExecutorTest,
    ::testing::Values(Case{"small-4x4", "capsnet-tiny", 1}, Case{"small-4x4", "capsnet-tiny", 2},
                      Case{"tiny-2x2", "capsnet-tiny", 3}, Case{"capsacc-16x16", "capsnet-tiny", 4},
                      Case{"small-4x4", "capsnet-tiny", 5, 3, 5}, Case{"small-4x4", "capsnet-tiny", 6, 8, 2},
                      Case{"small-4x4", "capsnet-tiny", 7, 16, 3}, Case{"capsacc-16x16", "capsnet-small", 8},
                      // DeepCaps' layers (docs/deepcaps.md): conv capsules, 3D routing, skips, concatenation.
                      Case{"tiny-2x2", "deepcaps-tiny", 1}, Case{"small-4x4", "deepcaps-tiny", 2},
                      Case{"capsacc-16x16", "deepcaps-tiny", 3}, Case{"small-4x4", "deepcaps-tiny", 4, 3, 5},
                      Case{"small-4x4", "deepcaps-tiny", 5, 8, 2}),
    [](const ::testing::TestParamInfo<Case>& i) {
      std::string s = fmt::format("{}_{}_seed{}_{}x{}", i.param.preset, i.param.model, i.param.seed, i.param.rows,
                                  i.param.cols);
      for (auto& ch : s)
        if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
      return s;
    });

// The analytic model on CapsNet-MNIST / 16x16: the operation list and the cycle figures of
// docs/accelerator.md section 2.
TEST(Compiler, CapsNetMnistCycleModel) {
  const AccelConfig cfg = preset("capsacc-16x16");
  const Network net = model("capsnet-mnist");
  const Workload w = prepare_workload(cfg, net, random_weights(net, 1), "random", {random_input(net, 1)});
  const isa::Program prog = compile_program(w.cfg, w.net, w.qm);
  const auto stats = analyze_program(w.cfg, prog);
  std::vector<std::string> names;
  for (const auto& s : stats) names.push_back(s.name);
  EXPECT_EQ(names, (std::vector<std::string>{"conv1", "primary/conv+squash", "classcaps/predict+iter0.c",
                                             "classcaps/iter0.sum+iter0.squash", "classcaps/iter0.update+iter1.softmax",
                                             "classcaps/iter1.sum+iter1.squash", "classcaps/iter1.update+iter2.softmax",
                                             "classcaps/iter2.sum+iter2.squash+norm"}));
  long long macs = 0;
  for (const auto& s : stats) macs += s.useful_macs;
  EXPECT_EQ(macs, 8294400LL + 191102976LL + 1474560LL + 3 * 184320LL + 2 * 184320LL);
  const auto j = nlohmann::json::parse(stats_json(w.cfg, prog, stats));
  // The engine's cycles, measured on the RTL (capsgen sim / tb_blocks engine --program: 1,311,787
  // cycles over the 16 descriptors, every one bit-exact) = 190.6 inferences/s at 250 MHz.
  EXPECT_EQ(j["total_cycles"].get<long long>(), 1311787);
  EXPECT_EQ(j["cycle_model"].get<std::string>().rfind("engine (", 0), 0u);
}

// Conv filters are stored tile-major (docs/accelerator.md 8.1): a tile row is `cols` consecutive
// elements, padding rows and columns are zero, and each filter element sits where the tile reader
// expects it.
TEST(Compiler, ConvWeightsAreStoredTileMajor) {
  const AccelConfig cfg = preset("small-4x4");
  const Network net = model("capsnet-tiny");
  const Workload w = prepare_workload(cfg, net, random_weights(net, 3), "random", {random_input(net, 3)});
  const isa::Program prog = compile_program(w.cfg, w.net, w.qm);
  const auto mem = build_image(prog, w.net, w.qm, quantize_input(w.cfg, w.qm, w.net, random_input(w.net, 3)));
  const int rows = w.cfg.array.rows, cols = w.cfg.array.cols;
  const isa::Region* reg = prog.region("conv1.weight");
  ASSERT_NE(reg, nullptr);
  EXPECT_EQ(reg->tile_rows, rows);
  EXPECT_EQ(reg->tile_cols, cols);
  const IntTensor& wt = w.qm.layers[0].weight;
  const std::int64_t K = std::int64_t(wt.shape[0]), R = std::int64_t(wt.data.size()) / K;
  const std::int64_t kc = (R + rows - 1) / rows, nt = (K + cols - 1) / cols;
  EXPECT_EQ(reg->stored_size(), kc * nt * rows * cols);
  std::int64_t nonzero_pad = 0;
  for (std::int64_t k = 0; k < kc; ++k)
    for (std::int64_t n = 0; n < nt; ++n)
      for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) {
          const std::int64_t red = k * rows + r, o = n * cols + c;
          const std::int32_t v = mem[std::size_t(reg->base + ((k * nt + n) * rows + r) * cols + c)];
          if (red < R && o < K)
            EXPECT_EQ(v, wt.data[std::size_t(o * R + red)]) << "o=" << o << " R=" << red;
          else if (v != 0)
            ++nonzero_pad;
        }
  EXPECT_EQ(nonzero_pad, 0);
  // The gemm's tile pattern walks the same layout.
  const auto& g = std::get<isa::Gemm>(prog.instrs[0]);
  EXPECT_EQ(g.tile.s_c, 1);
  EXPECT_EQ(g.tile.s_r, cols);
  EXPECT_EQ(g.tile.s_n, std::int64_t(rows) * cols);
  EXPECT_EQ(g.tile.s_k, nt * rows * cols);
}

}  // namespace
}  // namespace capsgen
