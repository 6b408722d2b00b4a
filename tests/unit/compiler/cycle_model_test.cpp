// The compiler's cycle statistics are the engine's measured cycles: totals measured on the RTL
// (tb_blocks engine --program on the dumped program, bench/engine_cycles.sh; the engine's block
// test asserts per descriptor that measurement and isa::engine_timing agree exactly). Cycles depend
// on the descriptors only, not on weights or the input, so seeded random weights reproduce them.
#include <gtest/gtest.h>

#include "compiler/compiler.hpp"
#include "golden/workload.hpp"

namespace capsgen {
namespace {

long long total_cycles(const std::string& preset, const std::string& net_name) {
  const AccelConfig cfg = load_accel_config(std::string(CAPSGEN_REPO_ROOT) + "/configs/" + preset + ".yaml");
  const Network net = load_network(std::string(CAPSGEN_REPO_ROOT) + "/models/" + net_name + ".yaml");
  const Workload w = prepare_workload(cfg, net, random_weights(net, 1), "random", {random_input(net, 2)});
  long long cycles = 0;
  for (const OpStats& s : analyze_program(w.cfg, compile_program(w.cfg, w.net, w.qm))) cycles += s.cycles;
  return cycles;
}

TEST(CycleModel, MatchesTheRtlOnWholeNetworks) {
  // Measured: sum of the 16 descriptors' cycles of capsnet-small (docs/rtl-engine.md).
  EXPECT_EQ(total_cycles("small-4x4", "capsnet-small"), 654383);
  EXPECT_EQ(total_cycles("tiny-2x2", "capsnet-small"), 2257937);
  EXPECT_EQ(total_cycles("capsacc-16x16", "capsnet-small"), 185704);
}

// The accumulator block of a Gemm whose vectors x tiles exceed the entries is the cycle model's pick
// (lower.cpp fastest_block). CapsNet-MNIST's PrimaryCaps (36 positions, 16 tiles of a 16x16 array):
// with 256 entries, three blocks of 12 (each waits 4 cycles per tile load, like 16, 16, 4); with
// 512, two blocks of 18 instead of 32 and 4, every tile's 16-cycle load hidden behind 18 vectors;
// with 576 (configs/throughput/capsacc-16x16-acc576.yaml) the whole map in one block.
TEST(CycleModel, AccumulatorBlocksAreTheCycleModelsPick) {
  const auto primary_conv = [](AccelConfig cfg, int depth) {
    if (depth > 0) cfg.accumulator.depth = depth;
    const Network net = load_network(std::string(CAPSGEN_REPO_ROOT) + "/models/capsnet-mnist.yaml");
    const Workload w = prepare_workload(cfg, net, random_weights(net, 1), "random", {random_input(net, 2)});
    const isa::Program prog = compile_program(w.cfg, w.net, w.qm);
    for (const isa::Instr& in : prog.instrs)
      if (isa::instr_name(in) == "primary/conv") return std::pair{std::get<isa::Gemm>(in), instr_stats(w.cfg, in)};
    throw std::logic_error("no primary/conv");
  };
  const std::string configs = std::string(CAPSGEN_REPO_ROOT) + "/configs/";
  const AccelConfig base = load_accel_config(configs + "capsacc-16x16.yaml");
  const auto [g256, s256] = primary_conv(base, 0);
  EXPECT_EQ(g256.m_block, 12);
  const long long mac_bound = s256.useful_macs / (16 * 16);
  EXPECT_EQ(mac_bound, 746496);
  const auto [g512, s512] = primary_conv(base, 512);
  EXPECT_EQ(g512.m_block, 18);
  EXPECT_LE(s512.cycles, mac_bound * 102 / 100);
  EXPECT_LT(s512.cycles, s256.cycles * 77 / 100);
  const auto [g576, s576] = primary_conv(load_accel_config(configs + "throughput/capsacc-16x16-acc576.yaml"), 0);
  EXPECT_EQ(g576.m_block, 36);
  // Measured on the RTL (bench/capsnet_rtl.sh --config configs/throughput/capsacc-16x16-acc576.yaml).
  EXPECT_EQ(s576.cycles, 757048);
  EXPECT_LE(s576.cycles, mac_bound * 102 / 100);
}

}  // namespace
}  // namespace capsgen
