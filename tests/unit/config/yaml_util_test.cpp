// The strict YAML layer: conversions, locations, unknown/duplicate keys, syntax errors, files.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "config/text_file.hpp"
#include "config/yaml_util.hpp"
#include "core/input_error.hpp"
#include "test_helpers.hpp"

namespace capsgen {
namespace {

using test::expect_input_error;

constexpr const char* kFile = "t.yaml";

yaml::MapReader root(const std::string& text) { return yaml::MapReader::root(yaml::parse(text, kFile), kFile); }

TEST(YamlUtil, ReadsTypedValues) {
  const auto r = root(
      "i: -12\n"
      "p: +7\n"
      "b1: true\n"
      "b2: False\n"
      "d: 2.5e2\n"
      "di: 100\n"
      "s: 'hello world'\n"
      "e: smp\n"
      "m: {x: 1}\n"
      "l: [1, 2, 3]\n");
  r.allow_only({"i", "p", "b1", "b2", "d", "di", "s", "e", "m", "l"});
  EXPECT_EQ(r.get_int("i"), -12);
  EXPECT_EQ(r.get_int("p", 0, 10), 7);
  EXPECT_TRUE(r.get_bool("b1"));
  EXPECT_FALSE(r.get_bool("b2"));
  EXPECT_DOUBLE_EQ(r.get("d").as_double(0, 1000), 250.0);
  EXPECT_DOUBLE_EQ(r.get("di").as_double(0, 1000), 100.0);
  EXPECT_EQ(r.get_string("s"), "hello world");
  EXPECT_EQ(r.get("e").as_enum({"sep", "smp", "hy"}), 1);
  EXPECT_EQ(r.get_map("m").get_int("x"), 1);
  const auto items = r.get("l").as_seq();
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[2].as_int(), 3);
  EXPECT_EQ(items[2].field(), "l[2]");
}

TEST(YamlUtil, DefaultsForOptionalKeys) {
  const auto r = root("a: 1\n");
  EXPECT_EQ(r.get_int("b", 0, 10, 4), 4);
  EXPECT_TRUE(r.get_bool("c", true));
  EXPECT_EQ(r.get_string("d", "x"), "x");
  EXPECT_FALSE(r.find("d").has_value());
  EXPECT_TRUE(r.has("a"));
}

TEST(YamlUtil, RejectsLenientConversions) {
  const std::string text =
      "quoted: \"16\"\n"
      "word: sixteen\n"
      "frac: 1.5\n"
      "yes_: yes\n"
      "inf: .inf\n"
      "big: 99999999999999999999999\n";
  const auto r = root(text);
  expect_input_error([&] { r.get_int("quoted"); }, kFile, 1, "quoted", "expected an integer, got the quoted string \"16\"");
  expect_input_error([&] { r.get_int("word", 1, 64); }, kFile, 2, "word", "expected an integer in [1, 64], got 'sixteen'");
  expect_input_error([&] { r.get_int("frac", 0); }, kFile, 3, "frac", "expected an integer >= 0, got '1.5'");
  expect_input_error([&] { r.get_bool("yes_"); }, kFile, 4, "yes_", "expected true or false, got 'yes'");
  expect_input_error([&] { r.get("inf").as_double(0, 10); }, kFile, 5, "inf", "expected a number in [0, 10], got '.inf'");
  expect_input_error([&] { r.get_int("big", 0, 10); }, kFile, 6, "big", "expected an integer in [0, 10], got 9999");
}

TEST(YamlUtil, RangeAndSetChecksReportTheValueColumn) {
  const auto r = root("a:\n  rows: 100\n  banks: 12\n  width: 48\n  f: 0\n");
  const auto a = r.get_map("a");
  try {
    a.get_int("rows", 1, 64);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(e.column(), 9);
    EXPECT_STREQ(e.what(), "t.yaml:2:9: a.rows: expected an integer in [1, 64], got 100");
  }
  expect_input_error([&] { a.get("banks").as_pow2(1, 64); }, kFile, 3, "a.banks", "expected a power of 2 in [1, 64], got 12");
  expect_input_error([&] { a.get("width").as_int_in({8, 16, 32}); }, kFile, 4, "a.width", "expected one of 8, 16, 32, got 48");
  expect_input_error([&] { a.get("f").as_double(0, 2000, true); }, kFile, 5, "a.f", "expected a number in (0, 2000], got 0");
}

TEST(YamlUtil, EnumAndShapeMismatches) {
  const auto r = root("org: spm\nm: 3\nl: {a: 1}\ns: [1]\nempty:\nnext: 1\n");
  expect_input_error([&] { r.get("org").as_enum({"sep", "smp", "hy"}); }, kFile, 1, "org",
                     "expected one of sep, smp, hy, got 'spm'");
  expect_input_error([&] { r.get_map("m"); }, kFile, 2, "m", "expected a mapping, got '3'");
  expect_input_error([&] { r.get("l").as_seq(); }, kFile, 3, "l", "expected a list, got a mapping");
  expect_input_error([&] { r.get_string("s"); }, kFile, 4, "s", "expected a string, got a list");
  // An empty value is reported at its key, not at the next token (line 6).
  expect_input_error([&] { r.get_int("empty"); }, kFile, 5, "empty", "expected an integer, got nothing");
}

TEST(YamlUtil, MissingKeyUsesTheParentLine) {
  const std::string text = "# comment\ntop: 1\nouter:\n  inner:\n    a: 1\n";
  const auto r = root(text);
  expect_input_error([&] { r.get("nope"); }, kFile, 2, "nope", "missing required field");
  const auto inner = r.get_map("outer").get_map("inner");
  expect_input_error([&] { inner.get("b"); }, kFile, 4, "outer.inner.b", "missing required field");
}

TEST(YamlUtil, UnknownKeysAreNamedWithSuggestionAndAllowedList) {
  const auto r = root("a:\n  size_kib: 1\n  bnaks: 4\n");
  const auto a = r.get_map("a");
  try {
    a.allow_only({"size_kib", "banks", "sectors"});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "t.yaml:3:3: a: unknown key 'bnaks' (did you mean 'banks'? allowed: size_kib, banks, sectors)");
  }
  // No suggestion for a word unlike any allowed key.
  const auto top = root("zzzzzz: 1\n");
  expect_input_error([&] { top.allow_only({"name", "array"}); }, kFile, 1, "", "unknown key 'zzzzzz' (allowed: name, array)");
}

TEST(YamlUtil, DuplicateKeys) {
  const auto r = root("a: 1\nb: 2\na: 3\n");
  expect_input_error([&] { r.allow_only({"a", "b"}); }, kFile, 3, "", "duplicate key 'a' (first given at line 1)");
}

TEST(YamlUtil, SyntaxErrorsKeepTheLine) {
  expect_input_error([] { yaml::parse("a: 1\nb: [1, 2\nc: 3\n", kFile); }, kFile, 3, "", "YAML syntax error");
  expect_input_error([] { yaml::parse("a: 1\n b: 2\n", kFile); }, kFile, 2, "", "YAML syntax error: illegal map value");
}

TEST(YamlUtil, DocumentMustBeAMapping) {
  expect_input_error([] { root(""); }, kFile, 0, "", "the file is empty");
  expect_input_error([] { root("# nothing\n"); }, kFile, 0, "", "the file is empty");
  expect_input_error([] { root("- 1\n- 2\n"); }, kFile, 1, "", "expected a mapping at the top level, got a list");
  expect_input_error([] { root("[a: 1]\n"); }, kFile, 1, "", "expected a mapping at the top level");
}

// A second document used to be ignored silently.
TEST(YamlUtil, OneDocumentPerFile) {
  expect_input_error([] { yaml::parse("a: 1\n---\nb: 2\n", kFile); }, kFile, 2, "", "a second YAML document");
  expect_input_error([] { yaml::parse("---\na: 1\n---\n", kFile); }, kFile, 3, "", "a second YAML document");
  expect_input_error([] { yaml::parse("a: 1\n---\n", kFile); }, kFile, 2, "", "a second YAML document");
  EXPECT_EQ(yaml::parse("---\na: 1\n", kFile)["a"].as<int>(), 1);  // an explicit start of the one document
  EXPECT_EQ(yaml::parse("a: 1\n...\n", kFile)["a"].as<int>(), 1);
}

// Found by fuzz_network: yaml-cpp's LoadAll did not return on this input (documents are now counted
// on the text). It must end, with a result or an InputError.
TEST(YamlUtil, MalformedMultiDocumentInputEnds) {
  const std::string text("," + std::string(6, '\0') + "et sm# A redN" + std::string(2, '\0') + "," + std::string(6, '\0') +
                         "et sma" + std::string(2, '\0'));
  try {
    (void)yaml::parse(text, kFile);
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), kFile);
  }
}

TEST(YamlUtil, NonScalarKeysAreRejected) {
  expect_input_error([] { root("? [a, b]\n: 1\n"); }, kFile, 1, "", "keys must be plain names");
}

TEST(YamlUtil, ReadFile) {
  const auto dir = std::filesystem::temp_directory_path() / "capsgen_test_yaml_util";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "x.yaml").string();
  {
    std::ofstream out(path);
    out << "a: 1\n";
  }
  EXPECT_EQ(yaml::read_file(path), "a: 1\n");
  const std::string missing = (dir / "missing.yaml").string();
  expect_input_error([&] { yaml::read_file(missing); }, missing, 0, "", "cannot open file");
  expect_input_error([&] { yaml::read_file(dir.string()); }, dir.string(), 0, "", "cannot open file");
  // Bounded: reading stops at the limit (/dev/zero would otherwise fill the memory).
  expect_input_error([&] { read_text_file(path, 4); }, path, 0, "", "larger than 4 bytes");
  EXPECT_EQ(read_text_file(path, 5), "a: 1\n");
  expect_input_error([] { read_text_file("/dev/zero", 1 << 20); }, "/dev/zero", 0, "", "larger than 1048576 bytes");
  std::filesystem::remove_all(dir);
}

TEST(YamlUtil, LocationSinkSeesEveryValueRead) {
  std::map<std::string, yaml::Location> seen;
  auto sink = [&](const std::string& f, yaml::Location l) { seen[f] = l; };
  const auto r = yaml::MapReader::root(yaml::parse("a:\n  b: 5\nl:\n  - x: 1\n", kFile), kFile, sink);
  r.get_map("a").get_int("b");
  r.get("l").as_seq()[0].as_map().get_int("x");
  EXPECT_EQ(seen.at("a").line, 1);
  EXPECT_EQ(seen.at("a.b").line, 2);
  EXPECT_EQ(seen.at("a.b").column, 6);
  EXPECT_EQ(seen.at("l[0]").line, 4);
  EXPECT_EQ(seen.at("l[0].x").line, 4);
}

}  // namespace
}  // namespace capsgen
