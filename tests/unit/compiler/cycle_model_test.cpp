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
  EXPECT_EQ(total_cycles("small-4x4", "capsnet-small"), 658318);
  EXPECT_EQ(total_cycles("tiny-2x2", "capsnet-small"), 2268661);
  EXPECT_EQ(total_cycles("capsacc-16x16", "capsnet-small"), 190652);
}

}  // namespace
}  // namespace capsgen
