// The off-chip port (gen/dram/offchip_port.hpp): read data due at the DRAM model's completion in
// accelerator cycles, never before the minimum latency; write data refused while the model's backlog
// exceeds the latency plus a burst.
#include <gtest/gtest.h>

#include <cmath>

#include "dram/offchip_port.hpp"

namespace capsgen::dram {
namespace {

// DDR3-1600 (800 MHz) behind a 100 MHz accelerator: 8 DRAM clocks per cycle.
TEST(OffchipPort, ReadIsDueAtCompletionButNotBeforeTheLatency) {
  const DramSpec spec = ddr3_1600_2gb_x8();
  OffchipPort slow(spec, 100.0, 40, 8), fast(spec, 100.0, 1, 8);
  DramModel alone(spec);
  const AddressMapping mapping(spec.org);
  const double ratio = (1000.0 / spec.timing.tck_ns) / 100.0;
  const AccessResult r = alone.request(4096, false, 32, std::uint64_t(std::llround(10 * ratio)), mapping);
  const long long completion = (long long)std::ceil(double(r.done) / ratio);
  ASSERT_LT(completion, 10 + 40);
  EXPECT_EQ(slow.read(10, 4096, 32), 10 + 40);  // the latency decides
  EXPECT_EQ(fast.read(10, 4096, 32), completion);  // the DRAM decides
  EXPECT_GT(completion, 10 + 1);
}

TEST(OffchipPort, WritesWaitForTheBacklog) {
  const DramSpec spec = ddr3_1600_2gb_x8();
  OffchipPort port(spec, 100.0, 2, 1);
  EXPECT_TRUE(port.write_ready(0));
  // Posted writes of 64 bytes each at cycle 0 pile up in the model (8 column accesses of 4 DRAM
  // clocks each = 4 accelerator cycles per write) until the backlog passes latency + burst = 3 cycles.
  int taken = 0;
  while (port.write_ready(0) && taken < 100) {
    port.write(0, 4096 + 64 * std::uint64_t(taken), 64);
    ++taken;
  }
  EXPECT_GE(taken, 1);
  EXPECT_LT(taken, 100);
  EXPECT_FALSE(port.write_ready(0));
  // The backlog drains with time.
  EXPECT_TRUE(port.write_ready((long long)(double(port.model().now()) / 8.0)));
}

}  // namespace
}  // namespace capsgen::dram
