// The array-data cap (core/limits.hpp, --max-array-mib): checked from the central directory before
// anything is inflated, so a small archive cannot expand into gigabytes.
#include <gtest/gtest.h>

#include <string>

#include "core/input_error.hpp"
#include "core/limits.hpp"
#include "weights/npy.hpp"

#include "fixtures.hpp"

namespace capsgen {
namespace {

struct CapGuard {
  std::uint64_t saved = input_limits().max_array_bytes;
  ~CapGuard() { input_limits().max_array_bytes = saved; }
};

TEST(ArrayLimit, StoredArchiveBeyondTheCapIsRefused) {
  CapGuard guard;
  const std::string npz = serialize_npz({{"a", FloatTensor({1024})}, {"big", FloatTensor({512 * 1024})}});  // 4 KiB + 2 MiB
  input_limits().max_array_bytes = std::uint64_t(1) << 20;
  try {
    parse_npz(npz, "w.npz");
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "w.npz");
    EXPECT_EQ(e.field(), "big.npy");
    EXPECT_NE(e.message().find("more than 1 MiB"), std::string::npos) << e.what();
    EXPECT_NE(e.message().find("--max-array-mib"), std::string::npos) << e.what();
  }
  input_limits().max_array_bytes = std::uint64_t(4) << 20;
  EXPECT_EQ(parse_npz(npz, "w.npz").size(), 2u);
}

TEST(ArrayLimit, CompressedMembersCountTheirInflatedSize) {
  CapGuard guard;
  const std::string bytes = test::slurp(test::fixture("savez_compressed.npz"));
  EXPECT_FALSE(parse_npz(bytes, "c.npz").empty());
  input_limits().max_array_bytes = 16;  // below what the members inflate to
  EXPECT_THROW(parse_npz(bytes, "c.npz"), InputError);
}

}  // namespace
}  // namespace capsgen
