// Reading .npy files: the NumPy-made fixtures of tests/data/npy, header variants and errors.
#include "weights/npy.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

#include "core/input_error.hpp"

#include "fixtures.hpp"

namespace capsgen {
namespace {

using test::fixture;
using test::slurp;

// Builds a .npy file from a raw header text (padding it as NumPy does) and raw data bytes.
std::string make_npy(const std::string& header, const std::string& data, int version = 1) {
  std::string h = header;
  const std::size_t prefix = version == 1 ? 10 : 12;
  while ((prefix + h.size() + 1) % 64 != 0) h += ' ';
  h += '\n';
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(version);
  out += '\0';
  for (std::size_t i = 0; i < prefix - 8; ++i) out += static_cast<char>((h.size() >> (8 * i)) & 0xff);
  return out + h + data;
}

std::string f32_bytes(std::initializer_list<float> values) {
  std::string out;
  for (float v : values) out.append(reinterpret_cast<const char*>(&v), 4);
  return out;
}

// Runs f, which must throw InputError whose message contains every string of parts.
template <typename F>
void expect_input_error(F f, std::initializer_list<std::string> parts) {
  try {
    f();
    ADD_FAILURE() << "no InputError thrown";
  } catch (const InputError& e) {
    for (const auto& p : parts)
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what() << "\n  lacks: " << p;
  }
}

void expect_values(const FloatTensor& t, const Shape& shape, const std::vector<float>& values) {
  EXPECT_EQ(t.shape, shape);
  ASSERT_EQ(t.data.size(), values.size());
  for (std::size_t i = 0; i < values.size(); ++i) EXPECT_EQ(t.data[i], values[i]) << "element " << i;
}

TEST(NpyRead, Float32) {
  const FloatTensor t = read_npy(fixture("f4.npy"));
  expect_values(t, {2, 3}, {0.1f, -2.5f, 3.0f, 1e-7f, -0.0f, 65504.0f});
  EXPECT_TRUE(std::signbit(t.data[4]));
}

TEST(NpyRead, Float64RoundsToNearestFloat) {
  expect_values(read_npy(fixture("f8.npy")), {4},
                {static_cast<float>(1.0 / 3.0), -2.5f, static_cast<float>(0.1), 0.0f});
}

TEST(NpyRead, Float16) {
  expect_values(read_npy(fixture("f2.npy")), {4}, {1.5f, -0.25f, 65504.0f, std::ldexp(1.0f, -24)});
}

TEST(NpyRead, SignedIntegers) {
  expect_values(read_npy(fixture("i1.npy")), {5}, {-128, -1, 0, 1, 127});
  expect_values(read_npy(fixture("i2.npy")), {3}, {-32768, -2, 32767});
  expect_values(read_npy(fixture("i4.npy")), {2, 2}, {-2147483648.0f, 16777216, -7, 123456});
  expect_values(read_npy(fixture("i8.npy")), {3}, {-1099511627776.0f, 5, 9007199254740992.0f});
}

TEST(NpyRead, UnsignedIntegersAndBool) {
  expect_values(read_npy(fixture("u1.npy")), {4}, {0, 1, 128, 255});
  expect_values(read_npy(fixture("u2.npy")), {2}, {0, 65535});
  expect_values(read_npy(fixture("u4.npy")), {2}, {4294967296.0f, 7});  // nearest float
  expect_values(read_npy(fixture("b1.npy")), {3}, {1, 0, 1});
}

TEST(NpyRead, BigEndianIsByteSwapped) {
  expect_values(read_npy(fixture("be_f4.npy")), {3}, {1.5f, -2.0f, 0.1f});
  expect_values(read_npy(fixture("be_i2.npy")), {2}, {-2, 258});
}

TEST(NpyRead, FortranOrderBecomesRowMajor) {
  const FloatTensor t = read_npy(fixture("fortran.npy"));
  ASSERT_EQ(t.shape, (Shape{2, 3, 4}));
  for (std::size_t i = 0; i < t.size(); ++i) EXPECT_EQ(t.data[i], static_cast<float>(i));
  EXPECT_EQ(t.at({1, 2, 3}), 23.0f);
  EXPECT_EQ(t.at({0, 1, 2}), 6.0f);
}

TEST(NpyRead, ScalarVectorAndEmpty) {
  expect_values(read_npy(fixture("scalar.npy")), {}, {42.5f});
  expect_values(read_npy(fixture("vec.npy")), {5}, {1, 2, 3, 4, 5});
  expect_values(read_npy(fixture("empty.npy")), {0, 3}, {});
}

TEST(NpyRead, Version2And3Headers) {
  expect_values(read_npy(fixture("v2.npy")), {2, 2}, {1, 2, 3, 4});
  expect_values(read_npy(fixture("v3.npy")), {2}, {-1.0f, 0.5f});
}

TEST(NpyRead, HeaderKeysInAnyOrderWithoutTrailingComma) {
  const std::string data = f32_bytes({1, 2});
  for (const std::string& header : {
           std::string("{'shape': (2,), 'fortran_order': False, 'descr': '<f4'}"),
           std::string("{\"descr\": \"<f4\", \"shape\": (2, ), \"fortran_order\": False,}"),
           std::string("{ 'fortran_order' : False ,\n 'descr':'<f4','shape':(2L,) , }"),
       }) {
    expect_values(parse_npy(make_npy(header, data), "x.npy"), {2}, {1, 2});
    expect_values(parse_npy(make_npy(header, data, 2), "x.npy"), {2}, {1, 2});
  }
  expect_values(parse_npy(make_npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 1, 1, ), }", data), "x"),
                {2, 1, 1}, {1, 2});
}

TEST(NpyRead, FortranOrder2D) {
  // Column-major [[1, 2, 3], [4, 5, 6]] is stored 1 4 2 5 3 6.
  const std::string bytes =
      make_npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", f32_bytes({1, 4, 2, 5, 3, 6}));
  expect_values(parse_npy(bytes, "x.npy"), {2, 3}, {1, 2, 3, 4, 5, 6});
}

// --- errors ---------------------------------------------------------------------------------

TEST(NpyErrors, BadMagic) {
  std::string bytes = slurp(fixture("f4.npy"));
  bytes[1] = 'X';
  expect_input_error([&] { parse_npy(bytes, "x.npy"); }, {"x.npy: header: not a .npy file (bad magic)"});
  expect_input_error([&] { parse_npy("", "x.npy"); }, {"x.npy: header: not a .npy file (bad magic)"});
}

TEST(NpyErrors, UnsupportedVersion) {
  std::string bytes = slurp(fixture("f4.npy"));
  bytes[6] = 4;
  expect_input_error([&] { parse_npy(bytes, "x.npy"); }, {"x.npy", "header", "version 4.0"});
}

TEST(NpyErrors, TruncatedHeader) {
  const std::string bytes = slurp(fixture("f4.npy")).substr(0, 40);
  expect_input_error([&] { parse_npy(bytes, "x.npy"); }, {"x.npy: header: truncated header"});
  expect_input_error([&] { parse_npy(bytes.substr(0, 9), "x.npy"); }, {"x.npy: header: truncated header"});
}

TEST(NpyErrors, TruncatedData) {
  const std::string bytes = slurp(fixture("f4.npy"));
  expect_input_error([&] { parse_npy(bytes.substr(0, bytes.size() - 4), "x.npy"); },
                     {"x.npy: data: truncated: header says 24 bytes of float32", "file has 20"});
}

TEST(NpyErrors, TrailingBytes) {
  const std::string bytes = slurp(fixture("f4.npy")) + "xx";
  expect_input_error([&] { parse_npy(bytes, "x.npy"); }, {"x.npy: data: 2 unexpected bytes"});
}

TEST(NpyErrors, UnsupportedDtypeIsNamed) {
  expect_input_error([&] { read_npy(fixture("c8.npy")); }, {"c8.npy: header.descr: unsupported dtype '<c8'"});
  for (const char* descr : {"'|f4'", "'<U3'", "'<f16'", "'O'", "'<i3'", "'=f4'"}) {
    const std::string bytes =
        make_npy(std::string("{'descr': ") + descr + ", 'fortran_order': False, 'shape': (1,), }", "abcd");
    expect_input_error([&] { parse_npy(bytes, "x.npy"); }, {"x.npy: header.descr: unsupported dtype"});
  }
  const std::string structured = make_npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", "abcd");
  expect_input_error([&] { parse_npy(structured, "x.npy"); }, {"x.npy: header.descr: structured dtypes"});
}

TEST(NpyErrors, BadShapeText) {
  auto with_shape = [](const std::string& shape) {
    return make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }", f32_bytes({1, 2}));
  };
  expect_input_error([&] { parse_npy(with_shape("(2, x)"), "x.npy"); },
                     {"x.npy: header.shape: bad shape text '(2, x)'"});
  expect_input_error([&] { parse_npy(with_shape("(-2,)"), "x.npy"); }, {"x.npy: header.shape", "(-2,)"});
  expect_input_error([&] { parse_npy(with_shape("(2)"), "x.npy"); }, {"x.npy: header.shape", "trailing comma"});
  expect_input_error([&] { parse_npy(with_shape("[2]"), "x.npy"); }, {"x.npy: header.shape", "tuple"});
  expect_input_error([&] { parse_npy(with_shape("(2, 3"), "x.npy"); }, {"x.npy: header.shape"});
  expect_input_error([&] { parse_npy(with_shape("(99999999999999999999999,)"), "x.npy"); },
                     {"x.npy: header.shape", "too large"});
  // Overflowing element count: must not allocate.
  expect_input_error([&] { parse_npy(with_shape("(4294967296, 4294967296, 4294967296)"), "x.npy"); },
                     {"x.npy: header.shape", "too large"});
  expect_input_error([&] { parse_npy(with_shape("(1000000000, 1000000000)"), "x.npy"); }, {"x.npy: data: truncated"});
}

TEST(NpyErrors, BadDictionary) {
  const std::string data = f32_bytes({1});
  auto parse = [&](const std::string& header) { parse_npy(make_npy(header, data), "x.npy"); };
  expect_input_error([&] { parse("{'descr': '<f4', 'shape': (1,)}"); }, {"x.npy: header: missing key 'fortran_order'"});
  expect_input_error([&] { parse("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}"); },
                     {"x.npy: header: unexpected key 'x'"});
  expect_input_error([&] { parse("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}"); },
                     {"x.npy: header: duplicate key 'descr'"});
  expect_input_error([&] { parse("{'descr': '<f4', 'fortran_order': 0, 'shape': (1,)}"); },
                     {"x.npy: header.fortran_order: expected True or False"});
  expect_input_error([&] { parse("{'descr': '<f4' 'fortran_order': False, 'shape': (1,)}"); }, {"x.npy: header:"});
  expect_input_error([&] { parse("{'descr': '<f4, 'fortran_order': False, 'shape': (1,)}"); }, {"x.npy: header"});
  expect_input_error([&] { parse("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} junk"); },
                     {"x.npy: header: unexpected text after the dictionary"});
  expect_input_error([&] { parse("'descr': '<f4'"); }, {"x.npy: header: expected the header dictionary"});
}

TEST(NpyErrors, Float64OutOfFloatRange) {
  double values[2] = {1.0, 1e300};
  const std::string bytes = make_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }",
                                     std::string(reinterpret_cast<const char*>(values), sizeof values));
  expect_input_error([&] { parse_npy(bytes, "x.npy"); }, {"x.npy: data: element [1]", "does not fit in float32"});
}

TEST(NpyErrors, MissingFileAndDirectory) {
  expect_input_error([] { read_npy("/nonexistent/capsgen/x.npy"); }, {"/nonexistent/capsgen/x.npy: cannot open file"});
  expect_input_error([] { read_npy(CAPSGEN_TEST_DATA); }, {CAPSGEN_TEST_DATA, "directory"});
}

TEST(NpyErrors, FileNameComesFromThePath) {
  const std::string path = ::testing::TempDir() + "capsgen_npy_bad_magic.npy";
  std::ofstream(path, std::ios::binary) << "not numpy at all";
  expect_input_error([&] { read_npy(path); }, {path + ": header: not a .npy file (bad magic)"});
  std::filesystem::remove(path);
}

TEST(NpyErrors, FieldAccessors) {
  try {
    parse_npy(slurp(fixture("c8.npy")), "c8.npy");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "c8.npy");
    EXPECT_EQ(e.field(), "header.descr");
    EXPECT_EQ(e.line(), 0);
  }
}

}  // namespace
}  // namespace capsgen
