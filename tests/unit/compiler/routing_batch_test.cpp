// The compiler's batch-shared routing (CompileOptions::routing_batch, docs/pim-capsnet.md): the
// program of K inputs, run by the functional executor, reproduces every per-input tensor of the golden
// model up to the predictions and the class norms of GoldenModel::run_shared_routing bit for bit
// (check_routing_batch, which names the first element that differs); the engine can run every
// descriptor; the batch saves the per-input softmax passes; bad requests are refused.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "compile_fixture.hpp"
#include "compiler/routing_batch_check.hpp"
#include "core/input_error.hpp"
#include "golden/fixed_model.hpp"
#include "golden/shared_routing.hpp"
#include "isa/engine_descriptor.hpp"

namespace capsgen {
namespace {

struct Case {
  const char* preset;
  const char* model;
  int inputs;
  int rows = 0, cols = 0;  // override the preset's array (0: keep)
};

struct Batch {
  Workload w;
  std::vector<IntTensor> codes;
};

Batch make_batch(const Case& tc, int seed) {
  AccelConfig cfg = test::preset(tc.preset);
  if (tc.rows) cfg.array.rows = tc.rows;
  if (tc.cols) cfg.array.cols = tc.cols;
  const Network net = test::model(tc.model);
  Batch b{prepare_workload(cfg, net, random_weights(net, std::uint64_t(seed)), "random",
                           {random_input(net, 77), random_input(net, 78)}),
          {}};
  for (int k = 0; k < tc.inputs; ++k)
    b.codes.push_back(quantize_input(b.w.cfg, b.w.qm, b.w.net, random_input(b.w.net, std::uint64_t(seed * 100 + k))));
  return b;
}

class RoutingBatchTest : public ::testing::TestWithParam<Case> {};

TEST_P(RoutingBatchTest, ProgramReproducesTheSharedRouting) {
  const Case tc = GetParam();
  const Batch b = make_batch(tc, 31);
  const isa::Program prog = compile_program(b.w.cfg, b.w.net, b.w.qm, {tc.inputs});
  ASSERT_EQ(prog.inputs, tc.inputs);
  std::vector<std::int32_t> mem = build_image(prog, b.w.net, b.w.qm, b.codes);
  execute_program(b.w.cfg, prog, mem);
  const RoutingBatchCheck ck = check_routing_batch(b.w, prog, b.codes, mem);
  EXPECT_EQ(ck.mismatch, "");
  // Per input: its tensors up to the predictions, u_hat, its class norms.
  const std::size_t per_input = run_golden(b.w.cfg, b.w.net, b.w.qm, b.codes[0]).tensors.size();
  std::size_t routing = 0;
  for (const auto& [name, t] : run_golden(b.w.cfg, b.w.net, b.w.qm, b.codes[0]).tensors)
    routing += name.rfind(b.w.net.layers.back().name + ".", 0) == 0;
  EXPECT_EQ(ck.tensors, std::size_t(tc.inputs) * (per_input - routing + 2));
  ASSERT_EQ(ck.shared.size(), std::size_t(tc.inputs));
}

// The check names the first element that differs: an input's conv output, its interleaved prediction,
// a class norm.
TEST(RoutingBatch, CheckNamesTheFirstDifference) {
  const Case tc{"small-4x4", "capsnet-tiny", 3};
  const Batch b = make_batch(tc, 35);
  const isa::Program prog = compile_program(b.w.cfg, b.w.net, b.w.qm, {tc.inputs});
  std::vector<std::int32_t> mem = build_image(prog, b.w.net, b.w.qm, b.codes);
  execute_program(b.w.cfg, prog, mem);
  const std::string last = b.w.net.layers.back().name;
  const auto corrupted = [&](const std::string& region, std::int64_t offset) {
    std::vector<std::int32_t> bad = mem;
    bad[std::size_t(prog.region(region)->base + offset)] += 1;
    return check_routing_batch(b.w, prog, b.codes, bad).mismatch;
  };
  EXPECT_NE(corrupted(routing_batch_name(b.w.net.layers.front().name + ".out", 1), 0)
                .find("tensor conv1.out.k1 index [0,0,0]: program "),
            std::string::npos);
  // u_hat (i, j, d) = (0, 0, 1) of input 2 at ((0*J + 0)*D + 1)*K + 2.
  const std::string uh = corrupted(last + ".u_hat", 1 * 3 + 2);
  EXPECT_NE(uh.find("tensor " + last + ".u_hat index [0,0,1]"), std::string::npos) << uh;
  const std::string norm = corrupted(routing_batch_name(last + ".norm", 2), 4);
  EXPECT_NE(norm.find("tensor " + routing_batch_name(last + ".norm", 2) + " index [4]"), std::string::npos) << norm;
}

// The engine encodes every descriptor, so the program runs on the RTL (capsgen sim --routing-batch).
TEST_P(RoutingBatchTest, EngineRunsEveryDescriptor) {
  const Case tc = GetParam();
  const Batch b = make_batch(tc, 32);
  const isa::Program prog = compile_program(b.w.cfg, b.w.net, b.w.qm, {tc.inputs});
  for (const isa::Instr& in : prog.instrs) {
    if (const auto* g = std::get_if<isa::Gemm>(&in))
      EXPECT_NO_THROW(isa::encode_engine(*g, b.w.cfg.array.rows, b.w.cfg.array.cols, b.w.cfg.accumulator.depth))
          << g->name;
  }
}

INSTANTIATE_TEST_SUITE_P(Presets, RoutingBatchTest,
                         ::testing::Values(Case{"tiny-2x2", "capsnet-tiny", 3}, Case{"small-4x4", "capsnet-tiny", 2},
                                           // rows not dividing D*K: a chunk spans two atoms' inputs
                                           Case{"small-4x4", "capsnet-tiny", 3, 5, 3},
                                           Case{"capsacc-16x16", "capsnet-tiny", 4},
                                           Case{"small-4x4", "deepcaps-tiny", 2}),
                         [](const auto& info) {
                           std::string n =
                               fmt::format("{}_{}_k{}", info.param.preset, info.param.model, info.param.inputs);
                           if (info.param.rows) n += fmt::format("_{}x{}", info.param.rows, info.param.cols);
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

// The batch shares one softmax per routing iteration: fewer cycles than K programs of one input.
TEST(RoutingBatch, SharedRoutingSavesTheBatchsSoftmaxPasses) {
  const Batch b = make_batch({"small-4x4", "capsnet-tiny", 4}, 34);
  const long long one = program_cycles(b.w.cfg, compile_program(b.w.cfg, b.w.net, b.w.qm));
  const isa::Program batch = compile_program(b.w.cfg, b.w.net, b.w.qm, {4});
  int softmax = 0;
  for (const isa::Instr& in : batch.instrs)
    if (const auto* a = std::get_if<isa::Activate>(&in)) softmax += a->func == isa::Activate::Func::kSoftmax;
  EXPECT_EQ(softmax, b.w.net.layers.back().routing_iterations - 1);
  EXPECT_LT(program_cycles(b.w.cfg, batch), 4 * one);
}

TEST(RoutingBatch, RefusesANetworkWithoutClassCapsulesLast) {
  const AccelConfig cfg = test::preset("small-4x4");
  Network net = test::model("capsnet-tiny");
  const Workload w = prepare_workload(cfg, net, random_weights(net, 5), "random", {random_input(net, 77)});
  Network cut = w.net;
  cut.layers.pop_back();
  QuantizedModel qm = w.qm;
  qm.layers.pop_back();
  EXPECT_THROW(compile_program(w.cfg, cut, qm, {2}), InputError);
  EXPECT_THROW(compile_program(w.cfg, w.net, w.qm, {0}), std::invalid_argument);
}

}  // namespace
}  // namespace capsgen
