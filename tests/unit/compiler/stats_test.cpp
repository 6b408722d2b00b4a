// DESCNet usage and access statistics of analyze_program on a hand-built program whose numbers are
// worked out in the comments (tiny-2x2: 2x2 array, 8-bit data and weights, 20-bit partial sums
// stored in 3 bytes).
#include <gtest/gtest.h>

#include "compiler/compiler.hpp"
#include "config/accel_config.hpp"
#include "isa/engine_timing.hpp"

namespace capsgen {
namespace {

AccelConfig tiny() { return load_accel_config(std::string(CAPSGEN_REPO_ROOT) + "/configs/tiny-2x2.yaml"); }

isa::Program hand_program() {
  isa::Program p;
  isa::Gemm g;
  g.name = "lay";
  g.m_total = 5, g.m_block = 4, g.k_chunks = 3, g.n_tiles = 2, g.r_total = 6, g.n_total = 4;
  p.instrs.push_back(g);
  isa::Activate a;
  a.name = "lay/squash";
  a.func = isa::Activate::Func::kSquash;
  a.count = 5, a.n = 4;
  p.instrs.push_back(a);
  isa::Fill c;
  c.name = "lay/iter0.c";
  c.count = 8;
  p.instrs.push_back(c);
  isa::Fill s;
  s.name = "lay/iter0.sum";
  s.count = 6;
  p.instrs.push_back(s);
  return p;
}

TEST(Stats, DescnetRows) {
  EXPECT_TRUE(starts_descnet_row("", "conv1"));
  EXPECT_TRUE(starts_descnet_row("conv1", "primary/conv"));
  EXPECT_FALSE(starts_descnet_row("primary/conv", "primary/squash"));
  EXPECT_FALSE(starts_descnet_row("classcaps/predict", "classcaps/iter0.c"));
  EXPECT_TRUE(starts_descnet_row("classcaps/iter0.c", "classcaps/iter0.sum"));
  EXPECT_FALSE(starts_descnet_row("classcaps/iter0.sum", "classcaps/iter0.squash"));
  EXPECT_TRUE(starts_descnet_row("classcaps/iter0.squash", "classcaps/iter0.update"));
  // Parts of one step (per capsule type, block, input) join its row.
  EXPECT_EQ(instr_step("c1_0/squash.t3"), "c1_0/squash");
  EXPECT_EQ(instr_step("cell1/add.m0.in1"), "cell1/add");
  EXPECT_EQ(instr_step("c4_skip/iter2.sum.t31"), "c4_skip/iter2.sum");
  EXPECT_EQ(instr_step("classcaps/iter0.c"), "classcaps/iter0.c");
  EXPECT_EQ(instr_step("conv1"), "conv1");
  EXPECT_EQ(instr_step("main/t1"), "main/t1");
  EXPECT_TRUE(starts_descnet_row("c4_skip/iter0.c", "c4_skip/iter0.sum"));
  EXPECT_FALSE(starts_descnet_row("c4_skip/iter0.sum", "c4_skip/iter0.sum.t1"));
  EXPECT_FALSE(starts_descnet_row("c4_skip/iter0.sum.t1", "c4_skip/iter0.sum.t2"));
  EXPECT_FALSE(starts_descnet_row("c4_skip/iter0.sum.t31", "c4_skip/iter0.squash"));
  EXPECT_FALSE(starts_descnet_row("classcaps/iter0.update", "classcaps/iter1.softmax"));
  EXPECT_FALSE(starts_descnet_row("classcaps/iter2.squash", "classcaps/norm"));
}

TEST(Stats, HandComputedUsageAndAccesses) {
  const auto st = analyze_program(tiny(), hand_program());
  ASSERT_EQ(st.size(), 2u);
  const OpStats& o = st[0];
  EXPECT_EQ(o.name, "lay+squash+iter0.c");
  // Cycles: the engine's cycle model of each instruction (exact against the RTL: the engine's block
  // test); the squash pass 5 x 4 elements + 4 + 9, the fill 8 + 2.
  long long cycles = 0;
  for (int i = 0; i < 3; ++i) {
    isa::EngineTiming t;
    ASSERT_TRUE(isa::instr_timing(hand_program().instrs[std::size_t(i)], {2, 2, false, 8}, &t));
    cycles += t.cycles;
  }
  EXPECT_EQ(o.cycles, cycles);
  isa::EngineTiming squash;
  ASSERT_TRUE(isa::instr_timing(hand_program().instrs[1], {2, 2, false, 8}, &squash));
  EXPECT_EQ(squash.cycles, 20 + 4 + 9);
  // Accumulators: 4 vectors x 2 tiles x 2 columns = 16 partial sums x 3 bytes.
  EXPECT_EQ(o.usage_acc, 48);
  // Weights: tiles of two chunks, 2 rows x 2 tiles x 2 cols x 2 = 16 (< 24 per block).
  EXPECT_EQ(o.usage_weight, 16);
  // Data: gemm 2 chunks x 4 vectors x 2 rows + 4 x 4 outputs = 32; squash 20 in + 20 out = 40.
  EXPECT_EQ(o.usage_data, 40);
  // Data memory: gemm reads 5x6 = 30, squash 20; writes 30 operand + 20 outputs, squash 20, fill 8.
  EXPECT_EQ(o.data_rd, 50);
  EXPECT_EQ(o.data_wr, 30 + 20 + 20 + 8);
  // Weights: 2 blocks x 6 x 4 = 48 bytes through the weight memory.
  EXPECT_EQ(o.weight_rd, 48);
  EXPECT_EQ(o.weight_wr, 48);
  // 30 vectors x 2 columns read-modify-write, plus the reduction reading 5 x 2 tiles x 2 columns.
  EXPECT_EQ(o.acc_rd, (60 + 20) * 3);
  EXPECT_EQ(o.acc_wr, 60 * 3);
  EXPECT_EQ(o.offchip_rd, 48 + 30);
  EXPECT_EQ(o.offchip_wr, 20);
  EXPECT_EQ(st[1].name, "lay/iter0.sum");
  EXPECT_EQ(st[1].usage_data, 6);
  EXPECT_EQ(st[1].data_wr, 6);
  EXPECT_EQ(st[1].acc_rd, 0);
}

}  // namespace
}  // namespace capsgen
