// Rounding, saturation and accumulation-order corners of gen/numerics/fixed.hpp.
#include <gtest/gtest.h>

#include <cmath>

#include "numerics/fixed.hpp"

namespace capsgen::fx {
namespace {

TEST(Fixed, Ranges) {
  EXPECT_EQ(smax(8), 127);
  EXPECT_EQ(smin(8), -128);
  EXPECT_EQ(umax(12), 4095);
  EXPECT_EQ(smax(25), 16777215);
  EXPECT_EQ(smin(25), -16777216);
}

TEST(Fixed, SaturateCorners) {
  EXPECT_EQ(sat_s(127, 8), 127);
  EXPECT_EQ(sat_s(128, 8), 127);
  EXPECT_EQ(sat_s(-128, 8), -128);
  EXPECT_EQ(sat_s(-129, 8), -128);
  EXPECT_EQ(sat_s(1LL << 40, 25), smax(25));
  EXPECT_EQ(sat_s(-(1LL << 40), 25), smin(25));
  EXPECT_EQ(sat_u(-1, 8), 0);
  EXPECT_EQ(sat_u(256, 8), 255);
  EXPECT_EQ(sat_u(255, 8), 255);
}

TEST(Fixed, WrapIsTwosComplement) {
  EXPECT_EQ(wrap_s(128, 8), -128);
  EXPECT_EQ(wrap_s(-129, 8), 127);
  EXPECT_EQ(wrap_s(255, 8), -1);
  EXPECT_EQ(wrap_s(1 << 24, 25), -(1 << 24));
  EXPECT_EQ(wrap_s(-5, 64), -5);
}

// Round half up: ties go toward +infinity, for negative values too.
TEST(Fixed, RoundShiftTiesTowardPlusInfinity) {
  EXPECT_EQ(round_shift(5, 0), 5);
  EXPECT_EQ(round_shift(3, 1), 2);    // 1.5 -> 2
  EXPECT_EQ(round_shift(-3, 1), -1);  // -1.5 -> -1
  EXPECT_EQ(round_shift(-1, 1), 0);   // -0.5 -> 0
  EXPECT_EQ(round_shift(1, 1), 1);    // 0.5 -> 1
  EXPECT_EQ(round_shift(5, 2), 1);    // 1.25 -> 1
  EXPECT_EQ(round_shift(6, 2), 2);    // 1.5 -> 2
  EXPECT_EQ(round_shift(-6, 2), -1);  // -1.5 -> -1
  EXPECT_EQ(round_shift(-7, 2), -2);  // -1.75 -> -2
  // Exhaustive against the real-number definition for a range of values and shifts.
  for (int s = 1; s <= 10; ++s)
    for (std::int64_t v = -5000; v <= 5000; ++v) {
      const double exact = double(v) / double(1 << s);
      ASSERT_EQ(round_shift(v, s), std::int64_t(std::floor(exact + 0.5))) << v << " >> " << s;
    }
}

TEST(Fixed, ReduceCorners) {
  // The 25 -> 8 bit reduction at the extremes of the accumulator.
  EXPECT_EQ(reduce(smax(25), 9, 8), 127);
  EXPECT_EQ(reduce(smin(25), 9, 8), -128);
  EXPECT_EQ(reduce(127 << 9, 9, 8), 127);
  EXPECT_EQ(reduce((127 << 9) + 255, 9, 8), 127);  // 127.498 -> 127
  EXPECT_EQ(reduce((127 << 9) + 256, 9, 8), 127);  // 127.5 -> 128 -> saturates
  EXPECT_EQ(reduce(-(128 << 9), 9, 8), -128);
  EXPECT_EQ(reduce(-(128 << 9) - 256, 9, 8), -128);  // -128.5 -> -128 (ties up)
  EXPECT_EQ(reduce(-(128 << 9) - 257, 9, 8), -128);  // -128.502 -> -129 -> saturates
  EXPECT_EQ(reduce(0, 0, 8), 0);
  EXPECT_EQ(reduce(200, 0, 8), 127);
}

TEST(Fixed, ChunkedAccumulatorSaturatesPerChunkInOrder) {
  // psum 8 bits, chunks of 2: [100, 100 | -100, -100]: chunk 1 = 200 saturates to 127,
  // chunk 2 = -200 gives 127 - 200 = -73 (the exact sum would be 0).
  ChunkedAccumulator acc(2, 8);
  for (int t : {100, 100, -100, -100}) acc.add_term(t);
  EXPECT_EQ(acc.finish(), -73);
  EXPECT_TRUE(acc.saturated());
  // Same terms in chunks of 4: exact.
  ChunkedAccumulator acc4(4, 8);
  for (int t : {100, 100, -100, -100}) acc4.add_term(t);
  EXPECT_EQ(acc4.finish(), 0);
  EXPECT_FALSE(acc4.saturated());
  // Bias is the starting value and is saturated itself.
  ChunkedAccumulator b(3, 8, 1000);
  b.add_term(-10);
  EXPECT_EQ(b.finish(), 117);
  // A partial last chunk is flushed by finish().
  ChunkedAccumulator p(4, 25, 5);
  for (int t : {1, 2, 3, 4, 5}) p.add_term(t);
  EXPECT_EQ(p.finish(), 20);
  EXPECT_THROW(ChunkedAccumulator(0, 8), std::invalid_argument);
}

TEST(Fixed, QuantizeTiesToEvenAndSaturates) {
  EXPECT_EQ(quantize(0.5, 0, 8), 0);
  EXPECT_EQ(quantize(1.5, 0, 8), 2);
  EXPECT_EQ(quantize(-0.5, 0, 8), 0);
  EXPECT_EQ(quantize(1.0, 7, 8), 127);  // 128 saturates
  EXPECT_EQ(quantize(-1.0, 7, 8), -128);
  EXPECT_EQ(quantize(0.25, 3, 8), 2);
  EXPECT_EQ(quantize(1e30, 3, 8), 127);
  EXPECT_EQ(quantize(-1e30, 3, 8), -128);
  EXPECT_EQ(quantize(std::nan(""), 3, 8), 0);
  EXPECT_EQ(quantize(3.0, -1, 8), 2);  // 1.5 at scale 2 -> 2 (ties to even)
  EXPECT_DOUBLE_EQ(dequantize(-3, 2), -0.75);
}

}  // namespace
}  // namespace capsgen::fx
