// Writing .npy/.npz: byte-compatibility with numpy.save, round trips and atomic replacement.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/input_error.hpp"
#include "weights/npy.hpp"

#include "fixtures.hpp"

namespace capsgen {
namespace {

namespace fs = std::filesystem;

using test::fixture;
using test::slurp;

// A fresh directory per test, removed afterwards.
class NpyWriteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(::testing::TempDir()) / (std::string("capsgen_npy_") + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
};

// Bitwise comparison, so NaN and -0.0 round trips are checked too.
void expect_same_bits(const FloatTensor& a, const FloatTensor& b) {
  EXPECT_EQ(a.shape, b.shape);
  ASSERT_EQ(a.data.size(), b.data.size());
  if (!a.data.empty()) {
    EXPECT_EQ(std::memcmp(a.data.data(), b.data.data(), a.data.size() * sizeof(float)), 0);
  }
}

std::vector<FloatTensor> sample_tensors() {
  FloatTensor special({2, 4});
  special.data = {0.1f,
                  -0.0f,
                  std::numeric_limits<float>::infinity(),
                  -std::numeric_limits<float>::infinity(),
                  std::numeric_limits<float>::quiet_NaN(),
                  std::numeric_limits<float>::denorm_min(),
                  std::numeric_limits<float>::max(),
                  -1e-30f};
  FloatTensor big({3, 5, 7, 2});
  for (std::size_t i = 0; i < big.size(); ++i) big.data[i] = static_cast<float>(i) * 0.37f - 50.0f;
  return {FloatTensor({}, 42.5f),    FloatTensor({5}, 1.0f), FloatTensor({0, 3}), special, big,
          FloatTensor({1000}, -3.0f)};
}

TEST(NpySerialize, MatchesNumpySaveByteForByte) {
  FloatTensor f4({2, 3});
  f4.data = {0.1f, -2.5f, 3.0f, 1e-7f, -0.0f, 65504.0f};
  EXPECT_EQ(serialize_npy(f4), slurp(fixture("f4.npy")));
  FloatTensor vec({5});
  vec.data = {1, 2, 3, 4, 5};
  EXPECT_EQ(serialize_npy(vec), slurp(fixture("vec.npy")));
  EXPECT_EQ(serialize_npy(FloatTensor({}, 42.5f)), slurp(fixture("scalar.npy")));
  EXPECT_EQ(serialize_npy(FloatTensor({0, 3})), slurp(fixture("empty.npy")));
  FloatTensor fortran({2, 3, 4});  // numpy writes C order for this shape; data 0..23
  for (std::size_t i = 0; i < fortran.size(); ++i) fortran.data[i] = static_cast<float>(i);
  EXPECT_EQ(parse_npy(serialize_npy(fortran), "x").data, read_npy(fixture("fortran.npy")).data);
}

TEST(NpySerialize, HeaderIsAlignedTo64) {
  for (const FloatTensor& t : sample_tensors()) {
    const std::string bytes = serialize_npy(t);
    const std::size_t header_end =
        10 + static_cast<unsigned char>(bytes[8]) + 256u * static_cast<unsigned char>(bytes[9]);
    EXPECT_EQ(header_end % 64, 0u);
    EXPECT_EQ(bytes[header_end - 1], '\n');
    EXPECT_EQ(bytes.size(), header_end + 4 * t.size());
  }
}

TEST(NpySerialize, RejectsInconsistentTensor) {
  FloatTensor bad({2, 3});
  bad.data.pop_back();
  EXPECT_THROW(serialize_npy(bad), std::invalid_argument);
  EXPECT_THROW(serialize_npz({{"", FloatTensor({1})}}), std::invalid_argument);
}

TEST_F(NpyWriteTest, NpyRoundTrip) {
  for (const FloatTensor& t : sample_tensors()) {
    write_npy(path("t.npy"), t);
    expect_same_bits(read_npy(path("t.npy")), t);
  }
  EXPECT_FALSE(fs::exists(path("t.npy.tmp")));
}

TEST_F(NpyWriteTest, NpzRoundTrip) {
  std::map<std::string, FloatTensor> arrays;
  int n = 0;
  for (const FloatTensor& t : sample_tensors()) arrays["layer" + std::to_string(n++) + ".weight"] = t;
  arrays["nested/name"] = FloatTensor({2}, 9.0f);
  write_npz(path("w.npz"), arrays);
  EXPECT_FALSE(fs::exists(path("w.npz.tmp")));
  const auto back = read_npz(path("w.npz"));
  ASSERT_EQ(back.size(), arrays.size());
  for (const auto& [key, t] : arrays) {
    ASSERT_EQ(back.count(key), 1u) << key;
    expect_same_bits(back.at(key), t);
  }
  EXPECT_TRUE(parse_npz(serialize_npz({}), "w.npz").empty());
}

TEST_F(NpyWriteTest, ReplacesExistingFile) {
  write_npy(path("t.npy"), FloatTensor({3}, 1.0f));
  write_npy(path("t.npy"), FloatTensor({2}, 2.0f));
  EXPECT_EQ(read_npy(path("t.npy")).data, (std::vector<float>{2.0f, 2.0f}));
}

TEST_F(NpyWriteTest, UnwritableDirectoryIsAnInputErrorNamingThePath) {
  const std::string target = path("missing_dir/t.npy");
  try {
    write_npy(target, FloatTensor({1}));
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(target), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(target + ".tmp"));
  EXPECT_THROW(write_npz(path("missing_dir/w.npz"), {{"a", FloatTensor({1})}}), InputError);
}

TEST_F(NpyWriteTest, FailedRenameRemovesTemporary) {
  fs::create_directories(path("occupied"));  // a directory with content cannot be replaced by a file
  std::ofstream(path("occupied/x")) << "x";
  EXPECT_THROW(write_npy(path("occupied"), FloatTensor({1})), InputError);
  EXPECT_FALSE(fs::exists(path("occupied.tmp")));
}

}  // namespace
}  // namespace capsgen
