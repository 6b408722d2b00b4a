// Reading .npz archives: numpy.savez / savez_compressed fixtures, zip64, and corrupt archives.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <fstream>
#include <initializer_list>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/input_error.hpp"
#include "weights/npy.hpp"

#include "fixtures.hpp"

namespace capsgen {
namespace {

using test::fixture;
using test::slurp;

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

void put_le(std::string& out, std::uint64_t v, int n) {
  for (int i = 0; i < n; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// A minimal ZIP writer for hand-made defects: stored members with correct CRCs.
std::string make_zip(const std::vector<std::pair<std::string, std::string>>& members) {
  std::string out, central;
  for (const auto& [name, data] : members) {
    const std::uint32_t crc = crc32(0, reinterpret_cast<const Bytef*>(data.data()), static_cast<uInt>(data.size()));
    auto common = [&](std::string& h) {
      put_le(h, 20, 2);
      put_le(h, 0, 2);
      put_le(h, 0, 2);  // stored
      put_le(h, 0, 4);  // time, date
      put_le(h, crc, 4);
      put_le(h, data.size(), 4);
      put_le(h, data.size(), 4);
      put_le(h, name.size(), 2);
      put_le(h, 0, 2);
    };
    const std::size_t offset = out.size();
    put_le(out, 0x04034b50, 4);
    common(out);
    out += name + data;
    put_le(central, 0x02014b50, 4);
    put_le(central, 20, 2);
    common(central);
    put_le(central, 0, 6);  // comment length, disk, internal attributes
    put_le(central, 0, 4);  // external attributes
    put_le(central, offset, 4);
    central += name;
  }
  const std::size_t cd_offset = out.size();
  out += central;
  put_le(out, 0x06054b50, 4);
  put_le(out, 0, 4);
  put_le(out, members.size(), 2);
  put_le(out, members.size(), 2);
  put_le(out, central.size(), 4);
  put_le(out, cd_offset, 4);
  put_le(out, 0, 2);
  return out;
}

void expect_fixture_arrays(const std::map<std::string, FloatTensor>& arrays) {
  ASSERT_EQ(arrays.size(), 4u);
  const FloatTensor& w = arrays.at("conv1.weight");
  EXPECT_EQ(w.shape, (Shape{2, 3}));
  EXPECT_EQ(w.data, (std::vector<float>{-1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 1.5f}));
  EXPECT_EQ(arrays.at("conv1.bias").shape, (Shape{2}));
  EXPECT_EQ(arrays.at("conv1.bias").data, (std::vector<float>{0.25f, -0.75f}));
  EXPECT_EQ(arrays.at("int8").data, (std::vector<float>{-3.0f, 4.0f}));
  EXPECT_EQ(arrays.at("scale").shape, Shape{});
  EXPECT_EQ(arrays.at("scale").data, (std::vector<float>{0.125f}));
}

TEST(NpzRead, Savez) { expect_fixture_arrays(read_npz(fixture("savez.npz"))); }

TEST(NpzRead, SavezCompressed) { expect_fixture_arrays(read_npz(fixture("savez_compressed.npz"))); }

TEST(NpzRead, Zip64EndRecordAndExtraFields) { expect_fixture_arrays(read_npz(fixture("zip64.npz"))); }

TEST(NpzRead, ArchiveCommentAndNonNpyNames) {
  std::string zip = make_zip({{"plain", serialize_npy(FloatTensor({1}, 7.0f))}});
  zip[zip.size() - 2] = 5;  // comment length
  zip += "hello";
  const auto arrays = parse_npz(zip, "w.npz");
  ASSERT_EQ(arrays.count("plain"), 1u);
  EXPECT_EQ(arrays.at("plain").data, std::vector<float>{7.0f});
}

TEST(NpzRead, EmptyArchive) { EXPECT_TRUE(parse_npz(make_zip({}), "w.npz").empty()); }

// --- errors ---------------------------------------------------------------------------------

TEST(NpzErrors, NotAZip) {
  const std::string message = "w.npz: not a zip archive (no end-of-central-directory record)";
  expect_input_error([&] { parse_npz(slurp(fixture("f4.npy")), "w.npz"); }, {message});
  expect_input_error([&] { parse_npz("", "w.npz"); }, {message});
  const std::string zip = slurp(fixture("savez.npz"));
  expect_input_error([&] { parse_npz(zip.substr(0, zip.size() - 1), "w.npz"); }, {message});
}

TEST(NpzErrors, MissingFile) {
  expect_input_error([] { read_npz("/nonexistent/capsgen/w.npz"); }, {"/nonexistent/capsgen/w.npz: cannot open file"});
}

TEST(NpzErrors, CorruptCrcNamesTheMember) {
  std::string zip = slurp(fixture("savez.npz"));
  // The first member (conv1.weight.npy, 152 bytes) ends at 30 + 16 + 20 (zip64 extra) + 152.
  zip[217] ^= 0x40;
  expect_input_error([&] { parse_npz(zip, "w.npz"); }, {"w.npz: conv1.weight: CRC-32 mismatch"});
}

TEST(NpzErrors, CorruptDeflateNamesTheMember) {
  std::string zip = slurp(fixture("savez_compressed.npz"));
  // conv1.weight's deflate stream starts at 30 + 16 (name) + 20 (zip64 extra) = 66.
  for (std::size_t i = 70; i < 90; ++i) zip[i] = static_cast<char>(0xff);  // inside conv1.weight's stream
  expect_input_error([&] { parse_npz(zip, "w.npz"); }, {"w.npz: conv1.weight: "});
}

TEST(NpzErrors, MemberErrorsNameFileMemberAndField) {
  const std::string npy = serialize_npy(FloatTensor({2, 3}, 1.0f));
  expect_input_error(
      [&] {
        parse_npz(make_zip({{"conv1.weight.npy", npy.substr(0, npy.size() - 4)}}), "w.npz");
      },
      {"w.npz: conv1.weight: data: truncated: header says 24 bytes of float32", "file has 20"});
  std::string c8 = npy;
  c8.replace(c8.find("<f4"), 3, "<c8");
  expect_input_error(
      [&] {
        parse_npz(make_zip({{"conv1.weight.npy", c8}}), "w.npz");
      },
      {"w.npz: conv1.weight: header.descr: unsupported dtype '<c8'"});
  expect_input_error(
      [&] {
        parse_npz(make_zip({{"notes.txt", "hello"}}), "w.npz");
      },
      {"w.npz: notes.txt: header: not a .npy file (bad magic)"});
  expect_input_error(
      [&] {
        parse_npz(make_zip({{"a.npy", npy}, {"a", npy}}), "w.npz");
      },
      {"w.npz: a: duplicate member"});
}

TEST(NpzErrors, UnsupportedMethodAndEncryption) {
  const std::string npy = serialize_npy(FloatTensor({1}, 1.0f));
  const std::string zip = make_zip({{"w.npy", npy}});
  const std::size_t cd = zip.size() - 22 - (46 + 5);
  std::string method = zip;
  method[cd + 10] = 12;  // bzip2
  expect_input_error([&] { parse_npz(method, "w.npz"); }, {"w.npz: w: unsupported compression method 12"});
  std::string encrypted = zip;
  encrypted[cd + 8] = 1;
  expect_input_error([&] { parse_npz(encrypted, "w.npz"); }, {"w.npz: w: encrypted"});
}

TEST(NpzErrors, BrokenDirectory) {
  const std::string zip = make_zip({{"w.npy", serialize_npy(FloatTensor({1}, 1.0f))}});
  const std::size_t eocd = zip.size() - 22;
  std::string far = zip;
  far[eocd + 19] = 0x7f;  // central directory offset past the end
  expect_input_error([&] { parse_npz(far, "w.npz"); }, {"w.npz: central directory:"});
  std::string count = zip;
  count[eocd + 8] = count[eocd + 10] = 9;  // more entries than fit
  expect_input_error([&] { parse_npz(count, "w.npz"); }, {"w.npz: central directory:", "9 entries"});
  std::string local = zip;
  local[0] = 'X';  // local header signature
  expect_input_error([&] { parse_npz(local, "w.npz"); }, {"w.npz: w: no local file header"});
}

TEST(NpzErrors, FieldIsTheMemberKey) {
  std::string zip = slurp(fixture("savez.npz"));
  zip[217] ^= 0x40;
  try {
    parse_npz(zip, "w.npz");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "w.npz");
    EXPECT_EQ(e.field(), "conv1.weight");
  }
}

}  // namespace
}  // namespace capsgen
