// The data-element semantics of gen/isa/gather.hpp against hand-computed small cases: a 1x4x4
// conv with padding 1 (3x3 kernel, stride 1, 4 rows: three chunks, the last one partly outside the
// reduction), diag groups (2 groups of 2 rows, r_total 1 and 2, a row outside the groups), an affine
// pass with a partial last block and batch > 1 (sequence order and flags), zero counts, and the
// descriptor encoding's derived fields.
#include <gtest/gtest.h>

#include <optional>
#include <stdexcept>

#include "isa/gather.hpp"

using namespace capsgen::isa;

namespace {

// 1x4x4 map at element 100, 3x3 kernel, stride 1, padding 1: a 4x4 output; R = ky*3 + kx < 9.
Gemm conv_4x4(int m_block) {
  Gemm g;
  g.m_total = 16;
  g.m_block = m_block;
  g.k_chunks = 3;
  g.r_total = 9;
  g.data.kind = DataSource::Kind::kConv;
  g.data.base = 100;
  g.data.channels = 1;
  g.data.height = g.data.width = 4;
  g.data.kernel_h = g.data.kernel_w = 3;
  g.data.stride = 1;
  g.data.padding = 1;
  g.data.out_w = 4;
  return g;
}

const std::optional<std::int64_t> Z = std::nullopt;

}  // namespace

TEST(GatherSemantics, ConvWithPadding) {
  const Gemm g = conv_4x4(16);
  // Vector 0 (y = x = 0): iy = ky - 1, ix = kx - 1.
  // Chunk 0: R = 0..3 = (ky,kx) (0,0) (0,1) (0,2) (1,0): all in the padding.
  for (int r = 0; r < 4; ++r) EXPECT_EQ(data_element_address(g, 4, 0, 0, 0, r), Z) << r;
  // Chunk 1: R = 4 (1,1) -> (0,0); 5 (1,2) -> (0,1); 6 (2,0) -> ix = -1; 7 (2,1) -> (1,0).
  EXPECT_EQ(data_element_address(g, 4, 0, 0, 1, 0), std::optional<std::int64_t>(100));
  EXPECT_EQ(data_element_address(g, 4, 0, 0, 1, 1), std::optional<std::int64_t>(101));
  EXPECT_EQ(data_element_address(g, 4, 0, 0, 1, 2), Z);
  EXPECT_EQ(data_element_address(g, 4, 0, 0, 1, 3), std::optional<std::int64_t>(104));
  // Chunk 2: R = 8 (2,2) -> (1,1); R = 9..11 outside the reduction.
  EXPECT_EQ(data_element_address(g, 4, 0, 0, 2, 0), std::optional<std::int64_t>(105));
  for (int r = 1; r < 4; ++r) EXPECT_EQ(data_element_address(g, 4, 0, 0, 2, r), Z) << r;
  // Vector 5 (y = x = 1): the window starts at (0,0).
  EXPECT_EQ(data_element_address(g, 4, 0, 5, 0, 0), std::optional<std::int64_t>(100));
  EXPECT_EQ(data_element_address(g, 4, 0, 5, 2, 0), std::optional<std::int64_t>(110));
  // Vector 15 (y = x = 3): centre (3,3) = 115; (ky,kx) = (2,2) -> (4,4) outside.
  EXPECT_EQ(data_element_address(g, 4, 0, 15, 1, 0), std::optional<std::int64_t>(115));
  EXPECT_EQ(data_element_address(g, 4, 0, 15, 2, 0), Z);
  // Vector 3 (y = 0, x = 3): R = 5 (1,2) -> ix = 4 outside; R = 3 (1,0) -> (0,2).
  EXPECT_EQ(data_element_address(g, 4, 0, 3, 1, 1), Z);
  EXPECT_EQ(data_element_address(g, 4, 0, 3, 0, 3), std::optional<std::int64_t>(102));
}

TEST(GatherSemantics, ConvSequenceOrderAndFlags) {
  // Blocks of 5 vectors: 5, 5, 5, 1. Order: block, chunk, vector, row.
  const Gemm g = conv_4x4(5);
  const auto seq = gather_sequence(g, 4);
  ASSERT_EQ(seq.size(), 16u * 3 * 4);
  EXPECT_EQ(gather_element_count(g, 4), 192);
  // Element (block 0, chunk 1, vector 0, row 0) is the 5*4 + 0 = 20th... after chunk 0's 5 vectors.
  EXPECT_EQ(seq[20].chunk, 1);
  EXPECT_EQ(seq[20].vec, 0);
  EXPECT_FALSE(seq[20].zero);
  EXPECT_EQ(seq[20].addr, 100);
  // Element 24: chunk 1, vector 1 (x = 1), row 0: R = 4 -> (0,1) = 101.
  EXPECT_EQ(seq[24].vec, 1);
  EXPECT_EQ(seq[24].addr, 101);
  EXPECT_TRUE(seq[3].vec_last);
  EXPECT_FALSE(seq[3].chunk_last);
  EXPECT_TRUE(seq[19].chunk_last);  // chunk 0 of block 0 ends after 5 vectors
  EXPECT_FALSE(seq[19].last);
  // The last block (m = 15) has one vector: 12 elements, each chunk one vector long.
  const std::size_t lb = 3 * 5 * 3 * 4;
  EXPECT_EQ(seq[lb].vec, 0);
  EXPECT_TRUE(seq[lb + 3].chunk_last);
  EXPECT_EQ(seq[lb + 4].chunk, 1);
  EXPECT_EQ(seq[lb + 4].addr, 115);
  EXPECT_TRUE(seq.back().last);
  for (std::size_t i = 0; i + 1 < seq.size(); ++i) EXPECT_FALSE(seq[i].last) << i;
}

TEST(GatherSemantics, DiagGroups) {
  // rows 4, G = 2 (group_rows 2); data = G rows of W side by side: base 1000, s_b 100, s_m 4, s_r 1.
  Gemm g;
  g.batch = 2;
  g.m_total = 4;
  g.m_block = 4;
  g.r_total = 2;
  g.tile.diag_groups = 2;
  g.data = {DataSource::Kind::kAffine, 1000, 100, 4, 0, 1};
  for (int r = 0; r < 4; ++r) EXPECT_EQ(data_element_address(g, 4, 1, 3, 0, r), std::optional<std::int64_t>(1112 + r)) << r;
  // k is ignored: every chunk reads chunk 0.
  EXPECT_EQ(data_element_address(g, 4, 1, 3, 1, 2), std::optional<std::int64_t>(1114));
  // r_total 1: element 1 of each group is zero; group g starts at g * r_total * s_r.
  g.r_total = 1;
  EXPECT_EQ(data_element_address(g, 4, 1, 3, 0, 0), std::optional<std::int64_t>(1112));
  EXPECT_EQ(data_element_address(g, 4, 1, 3, 0, 1), Z);
  EXPECT_EQ(data_element_address(g, 4, 1, 3, 0, 2), std::optional<std::int64_t>(1113));
  EXPECT_EQ(data_element_address(g, 4, 1, 3, 0, 3), Z);
  // rows 5: group_rows 2, row 4 is in group 2 >= G: zero.
  g.r_total = 2;
  EXPECT_EQ(data_element_address(g, 5, 0, 0, 0, 3), std::optional<std::int64_t>(1003));
  EXPECT_EQ(data_element_address(g, 5, 0, 0, 0, 4), Z);
  const GatherDescriptor d = encode_gather(g, 4);
  EXPECT_EQ(d.groups, 2);
  EXPECT_EQ(d.group_rows, 2);
  EXPECT_EQ(d.s_g, 2u);
  g.data.kind = DataSource::Kind::kConv;
  EXPECT_THROW(encode_gather(g, 4), std::invalid_argument);
}

TEST(GatherSemantics, AffineBlocksBatchAndZeroCounts) {
  // rows 2, r_total 3 (chunk 1 row 1 is zero), 3 vectors in blocks of 2, batch 2, negative s_m.
  Gemm g;
  g.batch = 2;
  g.m_total = 3;
  g.m_block = 2;
  g.k_chunks = 2;
  g.r_total = 3;
  g.data = {DataSource::Kind::kAffine, 50, 1000, -10, 2, 1};
  const auto seq = gather_sequence(g, 2);
  ASSERT_EQ(seq.size(), 2u * 3 * 2 * 2);
  // Batch 0, block 0: chunk 0: m0 (50, 51), m1 (40, 41); chunk 1: m0 (52, zero), m1 (42, zero);
  // block 1: chunk 0: m2 (30, 31); chunk 1: m2 (32, zero).
  const std::int64_t want[] = {50, 51, 40, 41, 52, -1, 42, -1, 30, 31, 32, -1};
  for (int i = 0; i < 12; ++i) {
    EXPECT_EQ(seq[std::size_t(i)].zero, want[i] < 0) << i;
    if (want[i] >= 0) {
      EXPECT_EQ(seq[std::size_t(i)].addr, want[i]) << i;
      EXPECT_EQ(seq[std::size_t(i) + 12].addr, want[i] + 1000) << i;
    }
  }
  EXPECT_TRUE(seq[3].chunk_last);
  EXPECT_EQ(seq[4].chunk, 1);
  EXPECT_EQ(seq[6].vec, 1);
  EXPECT_TRUE(seq[9].chunk_last);
  EXPECT_FALSE(seq[11].last);
  EXPECT_TRUE(seq[23].last);
  for (int* f : {&g.batch, &g.m_total, &g.m_block, &g.k_chunks}) {
    const int keep = *f;
    *f = 0;
    EXPECT_TRUE(gather_sequence(g, 2).empty());
    *f = keep;
  }
  g.r_total = 0;  // no valid element, but the array still consumes the vectors
  const auto zs = gather_sequence(g, 2);
  ASSERT_EQ(zs.size(), 24u);
  for (const auto& e : zs) EXPECT_TRUE(e.zero);
}

TEST(GatherSemantics, EncodeConvDerivedFields) {
  const GatherDescriptor d = encode_gather(conv_4x4(5), 4);
  EXPECT_TRUE(d.conv);
  EXPECT_EQ(d.pad_off, static_cast<std::uint32_t>(-5));  // -(1*4 + 1)
  EXPECT_EQ(d.ky_step, 2u);                              // 4 - (3 - 1)
  EXPECT_EQ(d.c_step, 6u);                               // 16 - 2*4 - 2
  EXPECT_EQ(d.y_step, 1u);                               // 1*4 - 3*1
  Gemm big = conv_4x4(5);
  big.m_total = 70000;
  EXPECT_THROW(encode_gather(big, 4), std::invalid_argument);
}
