// Truncated and corrupted inputs must end in InputError (or a successful parse), never in a crash,
// another exception type or an out-of-bounds read (run under ASan to check the latter).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <exception>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "core/input_error.hpp"
#include "weights/npy.hpp"

#include "fixtures.hpp"

namespace capsgen {
namespace {

using test::fixture;
using test::slurp;

bool is_npz(const std::string& name) { return name.size() > 4 && name.compare(name.size() - 4, 4, ".npz") == 0; }

enum class Outcome { kParsed, kInputError };

// Parses bytes as the fixture's format; any exception but InputError fails the test.
Outcome parse(const std::string& name, const std::string& bytes, const std::string& what) {
  try {
    if (is_npz(name)) {
      parse_npz(bytes, name);
    } else {
      parse_npy(bytes, name);
    }
    return Outcome::kParsed;
  } catch (const InputError& e) {
    // Every message names the file.
    EXPECT_EQ(std::string(e.what()).rfind(name + ": ", 0), 0u) << what << ": " << e.what();
    return Outcome::kInputError;
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": unexpected exception: " << e.what();
  } catch (...) {
    ADD_FAILURE() << what << ": unexpected non-standard exception";
  }
  return Outcome::kInputError;
}

class Robustness : public ::testing::TestWithParam<const char*> {};

TEST_P(Robustness, EveryTruncationIsAnInputError) {
  const std::string name = GetParam();
  const std::string bytes = slurp(fixture(name));
  ASSERT_FALSE(bytes.empty());
  ASSERT_EQ(parse(name, bytes, "intact"), Outcome::kParsed);
  for (std::size_t len = 0; len < bytes.size(); ++len) {
    EXPECT_EQ(parse(name, bytes.substr(0, len), "truncated to " + std::to_string(len)), Outcome::kInputError)
        << "truncated to " << len << " bytes was accepted";
  }
}

TEST_P(Robustness, RandomByteFlipsNeverCrash) {
  const std::string name = GetParam();
  const std::string bytes = slurp(fixture(name));
  std::mt19937 rng(12345);
  std::uniform_int_distribution<std::size_t> pos(0, bytes.size() - 1);
  std::uniform_int_distribution<int> count(1, 4);
  std::uniform_int_distribution<int> byte(0, 255);
  for (int iter = 0; iter < 3000; ++iter) {
    std::string corrupt = bytes;
    for (int n = count(rng); n > 0; --n) corrupt[pos(rng)] = static_cast<char>(byte(rng));
    parse(name, corrupt, "flip iteration " + std::to_string(iter));
  }
}

// Header-focused corruption: syntax characters in the first 128 bytes, where the dictionary is.
TEST_P(Robustness, HeaderSyntaxCorruptionNeverCrashes) {
  const std::string name = GetParam();
  const std::string bytes = slurp(fixture(name));
  static const char kAlphabet[] = "(){}[],:'\" 0123456789L\n\x00\xff<>|fiub";
  const std::string alphabet(kAlphabet, sizeof kAlphabet - 1);
  std::mt19937 rng(777);
  std::uniform_int_distribution<std::size_t> pos(0, std::min<std::size_t>(bytes.size(), 128) - 1);
  std::uniform_int_distribution<std::size_t> pick(0, alphabet.size() - 1);
  for (int iter = 0; iter < 3000; ++iter) {
    std::string corrupt = bytes;
    corrupt[pos(rng)] = alphabet[pick(rng)];
    if (iter % 2) corrupt[pos(rng)] = alphabet[pick(rng)];
    parse(name, corrupt, "header flip iteration " + std::to_string(iter));
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Robustness,
                         ::testing::Values("f4.npy", "f8.npy", "i2.npy", "be_f4.npy", "fortran.npy", "scalar.npy",
                                           "v2.npy", "v3.npy", "savez.npz", "savez_compressed.npz", "zip64.npz"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           std::string s = info.param;
                           for (char& c : s) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return s;
                         });

TEST(RobustnessRandom, GarbageNeverCrashes) {
  std::mt19937 rng(99);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<std::size_t> len(0, 300);
  for (int iter = 0; iter < 2000; ++iter) {
    std::string garbage(len(rng), '\0');
    for (char& c : garbage) c = static_cast<char>(byte(rng));
    // Seed some with real prefixes so parsing gets past the magic numbers.
    if (iter % 3 == 1 && garbage.size() >= 10) garbage.replace(0, 8, std::string("\x93NUMPY\x01\x00", 8));
    if (iter % 3 == 2 && garbage.size() >= 22) garbage.replace(garbage.size() - 22, 4, "PK\x05\x06");
    parse(iter % 3 == 2 ? "g.npz" : "g.npy", garbage, "garbage iteration " + std::to_string(iter));
  }
}

}  // namespace
}  // namespace capsgen
