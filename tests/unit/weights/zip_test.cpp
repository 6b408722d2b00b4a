// The ZIP container layer under .npz: writer/reader round trip, error labelling, zip64 limits.
#include "weights/zip.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/input_error.hpp"
#include "weights/npy.hpp"

namespace capsgen {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(std::string(CAPSGEN_TEST_DATA) + "/npy/" + path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::uint64_t le(const std::string& b, std::size_t off, int n) {
  std::uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<std::uint8_t>(b[off + i]);
  return v;
}

TEST(Zip, RoundTripKeepsOrderDuplicatesAndBinaryData) {
  const std::vector<ZipEntry> entries = {
      {"b.bin", std::string("\0\x01\xff", 3)}, {"a", ""}, {"b.bin", "again"}, {"\xc3\xa9t\xc3\xa9", "utf8"}};
  const std::vector<ZipEntry> back = read_zip(write_zip(entries), "t.zip");
  ASSERT_EQ(back.size(), entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    EXPECT_EQ(back[i].name, entries[i].name);
    EXPECT_EQ(back[i].data, entries[i].data);
  }
}

TEST(Zip, WriterLayoutIsStoredWithFixedTimestamp) {
  const std::string zip = write_zip({{"a", "xyz"}, {"\xc3\xa9", ""}});
  // Two local headers (30 + name + data), two central entries (46 + name), one end record (22).
  ASSERT_EQ(zip.size(), (30u + 1 + 3) + (30 + 2) + (46 + 1) + (46 + 2) + 22);
  EXPECT_EQ(le(zip, 0, 4), 0x04034b50u);
  EXPECT_EQ(le(zip, 6, 2), 0u);           // flags: ASCII name
  EXPECT_EQ(le(zip, 8, 2), 0u);           // method: stored
  EXPECT_EQ(le(zip, 10, 2), 0u);          // DOS time 00:00
  EXPECT_EQ(le(zip, 12, 2), 0x21u);       // DOS date 1980-01-01
  EXPECT_EQ(le(zip, 34 + 6, 2), 0x800u);  // second member: UTF-8 name flag
  EXPECT_EQ(le(zip, zip.size() - 22, 4), 0x06054b50u);
  EXPECT_EQ(le(zip, zip.size() - 10, 4), 46u + 1 + 46 + 2);     // central directory size
  EXPECT_EQ(write_zip({{"a", "xyz"}, {"\xc3\xa9", ""}}), zip);  // reproducible
  EXPECT_EQ(write_zip({}).size(), 22u);
  EXPECT_TRUE(read_zip(write_zip({}), "t.zip").empty());
}

TEST(Zip, ReadsNumpyArchivesIncludingDeflateAndZip64) {
  for (const char* name : {"savez.npz", "savez_compressed.npz", "zip64.npz"}) {
    const std::vector<ZipEntry> entries = read_zip(slurp(name), name);
    ASSERT_EQ(entries.size(), 4u) << name;
    EXPECT_EQ(entries[0].name, "conv1.weight.npy") << name;
    EXPECT_EQ(parse_npy(entries[0].data, name).shape, (Shape{2, 3})) << name;
  }
}

TEST(Zip, DirectoryErrorsAtConstructionMemberErrorsAtExtractWithCallerLabel) {
  std::string zip = write_zip({{"w.npy", "payload"}});
  zip[30 + 5] ^= 0x40;  // first data byte: the directory is intact, the CRC is not
  const ZipReader reader(zip, "t.zip");
  ASSERT_EQ(reader.size(), 1u);
  EXPECT_EQ(reader.name(0), "w.npy");
  try {
    reader.extract(0, "my label");
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "t.zip");
    EXPECT_EQ(e.field(), "my label");
    EXPECT_NE(std::string(e.what()).find("CRC-32 mismatch"), std::string::npos) << e.what();
  }
  try {
    read_zip(zip, "t.zip");
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "w.npy");  // read_zip labels members by name
  }
  try {
    ZipReader(zip.substr(0, zip.size() - 1), "t.zip");
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "");
    EXPECT_NE(std::string(e.what()).find("not a zip archive"), std::string::npos) << e.what();
  }
}

TEST(Zip, WriterRejectsWhatNeedsZip64AndStaysUsable) {
  ZipWriter writer;
  writer.add("ok", "1");
  EXPECT_THROW(writer.add(std::string(0x10000, 'n'), "x"), ZipLimitError);  // name longer than 65535 bytes
  writer.add("ok2", "2");
  const std::vector<ZipEntry> back = read_zip(writer.finish(), "t.zip");
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[1].name, "ok2");
  EXPECT_EQ(writer.finish(), write_zip({}));  // finish() leaves the writer empty
}

}  // namespace
}  // namespace capsgen
