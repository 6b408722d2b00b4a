// Accelerator presets: the bundled configs/*.yaml, and every class of error with file, line, field.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "config/accel_config.hpp"
#include "core/input_error.hpp"
#include "test_helpers.hpp"

namespace capsgen {
namespace {

using test::expect_input_error;
using test::line_of;
using test::replace;

const std::string kRepo = CAPSGEN_REPO_ROOT;
constexpr const char* kFile = "configs/t.yaml";

// A valid preset; tests edit one line and check the error points at it.
const std::string kBase = R"(name: test-preset
description: unit test preset
array:
  rows: 16
  cols: 16
widths:
  data: 8
  weight: 8
  psum: 25
  act: 8
norm:
  sqrt_in_bits: 12
  sqrt_out_bits: 8
squash:
  elem_bits: 6
  norm_bits: 5
  out_bits: 8
  in_frac: 5
  norm_shift: 2
softmax:
  exp_in_bits: 8
  exp_out_bits: 8
  in_frac: 5
accumulator:
  depth: 256
scratchpad:
  organization: sep
  power_gating: true
  wakeup_cycles: 4
  data:
    size_kib: 25
    banks: 16
    sectors: 2
    width_bits: 64
  weight: {size_kib: 64, banks: 16, sectors: 8, width_bits: 64}
  acc: {size_kib: 32, banks: 16, sectors: 2, width_bits: 32}
offchip:
  bus_bits: 64
  max_burst: 16
  latency_cycles: 20
clock:
  target_mhz: 250
)";

AccelConfig parse(const std::string& text) { return parse_accel_config(text, kFile); }

// Replaces `from` by `to` in the base preset and expects an error on the line that holds `to` (or
// `marker`, for a multi-line `to` whose later line is the culprit).
void expect_edit_error(const std::string& from, const std::string& to, const std::string& field,
                       const std::string& fragment, const std::string& marker = "") {
  const std::string text = replace(kBase, from, to);
  expect_input_error([&] { parse(text); }, kFile, line_of(text, marker.empty() ? to : marker), field, fragment);
}

TEST(AccelConfig, BaseParses) {
  const AccelConfig c = parse(kBase);
  EXPECT_EQ(c.name, "test-preset");
  EXPECT_EQ(c.description, "unit test preset");
  EXPECT_EQ(c.source_path, kFile);
  EXPECT_FALSE(c.array.pe_pipeline);
  EXPECT_EQ(c.scratchpad.data.size_kib, 25);
  EXPECT_EQ(c.scratchpad.weight.sectors, 8);
  EXPECT_EQ(c.scratchpad.acc.width_bits, 32);
  EXPECT_FALSE(c.scratchpad.shared.present);
  EXPECT_EQ(c.locations.at("widths.psum").line, line_of(kBase, "psum:"));
  EXPECT_EQ(c.locations.at("scratchpad.data").line, line_of(kBase, "  data:\n"));
}

// Data widths of 14-16 bits used to pass validation and fail in generate (a port wider than its
// descriptor field): the activation unit's norm shift must fit 5 bits.
TEST(AccelConfig, DataWidthFitsTheNormShiftField) {
  const std::string widths = "  data: 8\n  weight: 8\n  psum: 25\n  act: 8";
  for (int d : {14, 16})
    expect_edit_error(widths, fmt::format("  data: {}\n  weight: 16\n  psum: 40\n  act: {}", d, d), "widths.data",
                      fmt::format("{} bits: the activation unit's sum of 32 squares is {} bits wide", d, 2 * d - 1 + 5),
                      fmt::format("  data: {}", d));
  EXPECT_EQ(parse(replace(kBase, widths, "  data: 13\n  weight: 16\n  psum: 40\n  act: 13")).widths.data, 13);
}

TEST(AccelConfig, OptionalFields) {
  std::string text = replace(kBase, "description: unit test preset\n", "");
  text = replace(text, "  cols: 16\n", "  cols: 16\n  pe_pipeline: true\n");
  const AccelConfig c = parse(text);
  EXPECT_EQ(c.description, "");
  EXPECT_TRUE(c.array.pe_pipeline);
}

// offchip.dram names a DRAM description relative to the preset's directory (or absolute); the file
// must exist. Its contents are checked where it is read (dram::load_dram_spec).
TEST(AccelConfig, OffchipDram) {
  EXPECT_EQ(parse(kBase).offchip.dram, "");
  const std::string preset = kRepo + "/configs/throughput/x.yaml";
  const std::string text = replace(kBase, "  latency_cycles: 20\n",
                                   "  latency_cycles: 20\n  dram: ../dram/micron-mt41j256m8-ddr3-1600-x64.yaml\n");
  EXPECT_EQ(parse_accel_config(text, preset).offchip.dram,
            std::filesystem::path(kRepo + "/configs/dram/micron-mt41j256m8-ddr3-1600-x64.yaml").lexically_normal().string());
  const std::string missing = replace(kBase, "  latency_cycles: 20\n", "  latency_cycles: 20\n  dram: no-such.yaml\n");
  expect_input_error([&] { parse(missing); }, kFile, line_of(missing, "  dram: no-such.yaml"), "offchip.dram",
                     "no DRAM description at 'no-such.yaml'");
  expect_edit_error("  latency_cycles: 20", "  latency_cycles: 20\n  dram: ''", "offchip.dram", "expected the path",
                    "  dram: ''");
}

TEST(AccelConfig, CapsAcc16x16Preset) {
  const AccelConfig c = load_accel_config(kRepo + "/configs/capsacc-16x16.yaml");
  EXPECT_EQ(c.name, "capsacc-16x16");
  EXPECT_EQ(c.array.rows, 16);
  EXPECT_EQ(c.array.cols, 16);
  EXPECT_EQ(c.widths.data, 8);
  EXPECT_EQ(c.widths.weight, 8);
  EXPECT_EQ(c.widths.psum, 25);
  EXPECT_EQ(c.widths.act, 8);
  EXPECT_EQ(c.norm.sqrt_in_bits, 12);
  EXPECT_EQ(c.norm.sqrt_out_bits, 8);
  // The gain squash (docs/config.md: the one deliberate difference from CapsAcc's 6+5-bit table).
  EXPECT_EQ(c.squash.kind, SquashKind::kGain);
  EXPECT_EQ(c.squash.gain_bits, 8);
  EXPECT_EQ(c.squash.norm_bits, 8);
  EXPECT_EQ(c.squash.out_bits, 8);
  EXPECT_EQ(c.squash.in_frac, 3);
  EXPECT_EQ(c.softmax.exp_in_bits, 8);
  EXPECT_EQ(c.softmax.exp_out_bits, 8);
  EXPECT_EQ(c.scratchpad.organization, SpmOrganization::Sep);
  EXPECT_TRUE(c.scratchpad.power_gating);
  EXPECT_TRUE(c.scratchpad.data.present && c.scratchpad.weight.present && c.scratchpad.acc.present);
  EXPECT_FALSE(c.scratchpad.shared.present);
  // DESCNet Table I, SEP-PG for CapsNet-MNIST.
  EXPECT_EQ(c.scratchpad.data.size_kib, 25);
  EXPECT_EQ(c.scratchpad.data.sectors, 2);
  EXPECT_EQ(c.scratchpad.weight.size_kib, 64);
  EXPECT_EQ(c.scratchpad.weight.sectors, 8);
  EXPECT_EQ(c.scratchpad.acc.size_kib, 32);
  EXPECT_EQ(c.scratchpad.acc.sectors, 2);
  EXPECT_EQ(c.scratchpad.data.banks, 16);
  EXPECT_DOUBLE_EQ(c.clock.target_mhz, 250.0);
  EXPECT_EQ(c.source_path, kRepo + "/configs/capsacc-16x16.yaml");
}

TEST(AccelConfig, Small4x4Preset) {
  const AccelConfig c = load_accel_config(kRepo + "/configs/small-4x4.yaml");
  EXPECT_EQ(c.name, "small-4x4");
  EXPECT_EQ(c.array.rows, 4);
  EXPECT_EQ(c.array.cols, 4);
  EXPECT_EQ(c.widths.data, 8);
  EXPECT_EQ(c.widths.psum, 25);
  EXPECT_EQ(c.scratchpad.organization, SpmOrganization::Sep);
  EXPECT_LE(c.scratchpad.data.size_kib, 16);
}

TEST(AccelConfig, Tiny2x2Preset) {
  const AccelConfig c = load_accel_config(kRepo + "/configs/tiny-2x2.yaml");
  EXPECT_EQ(c.name, "tiny-2x2");
  EXPECT_EQ(c.array.rows, 2);
  EXPECT_EQ(c.array.cols, 2);
  EXPECT_EQ(c.widths.psum, 20);
  EXPECT_LE(c.scratchpad.weight.size_kib, 8);
}

TEST(AccelConfig, OrganizationNames) {
  EXPECT_STREQ(to_string(SpmOrganization::Sep), "sep");
  EXPECT_STREQ(to_string(SpmOrganization::Smp), "smp");
  EXPECT_STREQ(to_string(SpmOrganization::Hy), "hy");
}

TEST(AccelConfig, ExampleMessageFormat) {
  const std::string text = replace(kBase, "  rows: 16", "  rows: sixteen");
  try {
    parse(text);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "configs/t.yaml:4:9: array.rows: expected an integer in [1, 64], got 'sixteen'");
  }
}

TEST(AccelConfig, MissingFields) {
  // Missing keys are reported at the line of the key that opens their mapping.
  std::string text = replace(kBase, "  cols: 16\n", "");
  expect_input_error([&] { parse(text); }, kFile, line_of(text, "array:"), "array.cols", "missing required field");
  text = replace(kBase, "    banks: 16\n", "");
  expect_input_error([&] { parse(text); }, kFile, line_of(text, "  data:\n"), "scratchpad.data.banks",
                     "missing required field");
  text = replace(kBase, "clock:\n  target_mhz: 250\n", "");
  expect_input_error([&] { parse(text); }, kFile, 1, "clock", "missing required field");
  text = replace(kBase, "name: test-preset\n", "");
  expect_input_error([&] { parse(text); }, kFile, 1, "name", "missing required field");
}

TEST(AccelConfig, WrongTypes) {
  expect_edit_error("  rows: 16", "  rows: sixteen", "array.rows", "expected an integer in [1, 64], got 'sixteen'");
  expect_edit_error("  power_gating: true", "  power_gating: maybe", "scratchpad.power_gating",
                    "expected true or false, got 'maybe'");
  expect_edit_error("  target_mhz: 250", "  target_mhz: fast", "clock.target_mhz",
                    "expected a number in (0, 2000], got 'fast'");
  expect_edit_error("  psum: 25", "  psum: \"25\"", "widths.psum", "expected an integer, got the quoted string");
  expect_edit_error("array:\n  rows: 16\n  cols: 16\n", "array: 4\n", "array", "expected a mapping, got '4'");
  expect_edit_error("name: test-preset", "name: [a, b]", "name", "expected a string, got a list");
  expect_edit_error("name: test-preset", "name: my preset", "name", "expected letters, digits");
}

TEST(AccelConfig, OutOfRange) {
  expect_edit_error("  rows: 16", "  rows: 65", "array.rows", "expected an integer in [1, 64], got 65");
  expect_edit_error("  cols: 16", "  cols: 0", "array.cols", "expected an integer in [1, 64], got 0");
  expect_edit_error("  data: 8", "  data: 17", "widths.data", "expected an integer in [2, 16], got 17");
  expect_edit_error("  sqrt_in_bits: 12", "  sqrt_in_bits: 3", "norm.sqrt_in_bits", "in [4, 20], got 3");
  expect_edit_error("  depth: 256", "  depth: 0", "accumulator.depth", "in [1, 65536], got 0");
  expect_edit_error("  wakeup_cycles: 4", "  wakeup_cycles: 1001", "scratchpad.wakeup_cycles", "in [0, 1000]");
  expect_edit_error("    banks: 16", "    banks: 12", "scratchpad.data.banks", "expected a power of 2 in [1, 64], got 12");
  expect_edit_error("    sectors: 2", "    sectors: 512", "scratchpad.data.sectors",
                    "expected a power of 2 in [1, 256], got 512");
  expect_edit_error("    width_bits: 64", "    width_bits: 48", "scratchpad.data.width_bits",
                    "expected one of 8, 16, 32, 64, 128, 256, got 48");
  expect_edit_error("    size_kib: 25", "    size_kib: 0", "scratchpad.data.size_kib", "in [1, 65536], got 0");
  expect_edit_error("  bus_bits: 64", "  bus_bits: 4", "offchip.bus_bits", "expected a power of 2 in [8, 512], got 4");
  expect_edit_error("  max_burst: 16", "  max_burst: 300", "offchip.max_burst", "in [1, 256], got 300");
  expect_edit_error("  latency_cycles: 20", "  latency_cycles: -1", "offchip.latency_cycles", "in [0, 10000], got -1");
  expect_edit_error("  target_mhz: 250", "  target_mhz: 2500", "clock.target_mhz", "in (0, 2000], got 2500");
  expect_edit_error("  target_mhz: 250", "  target_mhz: 0", "clock.target_mhz", "in (0, 2000], got 0");
}

TEST(AccelConfig, UnknownKeys) {
  expect_edit_error("name: test-preset", "name: test-preset\nclk: 3", "", "unknown key 'clk' (did you mean 'clock'?",
                    "clk: 3");
  expect_edit_error("    banks: 16", "    bnaks: 16", "scratchpad.data",
                    "unknown key 'bnaks' (did you mean 'banks'? allowed: size_kib, banks, sectors, width_bits)");
  expect_edit_error("  power_gating: true", "  power_gating: true\n  gating_style: fine", "scratchpad",
                    "unknown key 'gating_style'", "gating_style");
  expect_edit_error("  psum: 25", "  psum: 25\n  accum: 25", "widths", "allowed: data, weight, psum, act", "accum");
  expect_edit_error("  rows: 16", "  rows: 16\n  rows: 8", "array", "duplicate key 'rows' (first given at line 4)", "rows: 8");
}

TEST(AccelConfig, BadEnum) {
  expect_edit_error("  organization: sep", "  organization: separate", "scratchpad.organization",
                    "expected one of sep, smp, hy, got 'separate'");
}

TEST(AccelConfig, OrganizationMemoryMismatch) {
  // sep forbids a shared memory...
  expect_edit_error("  acc: {", "  shared: {size_kib: 64, banks: 16, sectors: 2, width_bits: 64}\n  acc: {",
                    "scratchpad.shared", "not allowed with organization 'sep' (it uses data, weight and acc)");
  // ... and requires all three separate memories.
  std::string text = replace(kBase, "  weight: {size_kib: 64, banks: 16, sectors: 8, width_bits: 64}\n", "");
  expect_input_error([&] { parse(text); }, kFile, line_of(text, "scratchpad:"), "scratchpad.weight",
                     "missing required field (organization 'sep' uses data, weight and acc)");
  // smp: shared only.
  text = replace(kBase, "organization: sep", "organization: smp");
  expect_input_error([&] { parse(text); }, kFile, line_of(text, "  data:\n"), "scratchpad.data",
                     "not allowed with organization 'smp'");
  // hy: all four.
  text = replace(kBase, "organization: sep", "organization: hy");
  expect_input_error([&] { parse(text); }, kFile, line_of(text, "scratchpad:"), "scratchpad.shared",
                     "missing required field (organization 'hy' uses data, weight, acc and shared)");
}

TEST(AccelConfig, SmpAndHyParse) {
  const std::string smp = R"(
  organization: smp
  power_gating: false
  wakeup_cycles: 0
  shared: {size_kib: 108, banks: 16, sectors: 2, width_bits: 64}
offchip:)";
  const auto begin = kBase.find("\n  organization");
  const auto end = kBase.find("\noffchip:") + std::string("\noffchip:").size();
  std::string text = kBase.substr(0, begin) + smp + kBase.substr(end);
  AccelConfig c = parse(text);
  EXPECT_EQ(c.scratchpad.organization, SpmOrganization::Smp);
  EXPECT_TRUE(c.scratchpad.shared.present);
  EXPECT_FALSE(c.scratchpad.data.present);
  EXPECT_EQ(c.scratchpad.shared.size_kib, 108);

  text = replace(kBase, "organization: sep", "organization: hy");
  text = replace(text, "  acc: {", "  shared: {size_kib: 32, banks: 16, sectors: 2, width_bits: 64}\n  acc: {");
  c = parse(text);
  EXPECT_EQ(c.scratchpad.organization, SpmOrganization::Hy);
  EXPECT_TRUE(c.scratchpad.shared.present && c.scratchpad.data.present);
}

TEST(AccelConfig, MemoryGeometry) {
  // 25 KiB over 16 banks x 16 sectors of 64-bit words: 25600 is not a multiple of 2048 bytes.
  std::string text = replace(kBase, "    sectors: 2", "    sectors: 16");
  expect_input_error([&] { parse(text); }, kFile, line_of(text, "  data:\n"), "scratchpad.data",
                     "25 KiB cannot be split into 16 banks x 16 sectors of whole 64-bit words "
                     "(the size must be a multiple of 2048 bytes)");
  // 1 KiB over 64 banks x 256 sectors: not even one 8-bit word per sector.
  expect_edit_error("  acc: {size_kib: 32, banks: 16, sectors: 2, width_bits: 32}",
                    "  acc: {size_kib: 1, banks: 64, sectors: 256, width_bits: 8}", "scratchpad.acc",
                    "1 KiB cannot be split into 64 banks x 256 sectors");
}

TEST(AccelConfig, WidthRelations) {
  expect_edit_error("  act: 8", "  act: 6", "widths.act", "must equal widths.data (8)");
  // act == data but wider than weight.
  std::string text = replace(kBase, "  data: 8", "  data: 10");
  text = replace(text, "  act: 8", "  act: 10");
  text = replace(text, "  psum: 25", "  psum: 30");
  expect_input_error([&] { parse(text); }, kFile, line_of(text, "act: 10"), "widths.act",
                     "10 bits exceed widths.weight (8)");
  expect_edit_error("  psum: 25", "  psum: 18", "widths.psum",
                    "18 bits cannot hold the sum of 16 products of 8x8 bits; need at least 20");
  expect_edit_error("  psum: 25", "  psum: 49", "widths.psum", "expected at most 48 bits, got 49");
  // 20 bits is exactly enough for 16 rows.
  EXPECT_NO_THROW(parse(replace(kBase, "  psum: 25", "  psum: 20")));
  // Fewer rows need fewer bits: 8+8+ceil(log2(5)) = 19.
  text = replace(replace(kBase, "  rows: 16", "  rows: 5"), "  psum: 25", "  psum: 18");
  expect_input_error([&] { parse(text); }, kFile, line_of(text, "psum: 18"), "widths.psum",
                     "the sum of 5 products of 8x8 bits; need at least 19");
}

TEST(AccelConfig, NormRelations) {
  // act = 4 (with data = 4) allows at most 2*4+6 = 14 sqrt input bits.
  std::string text = replace(kBase, "  data: 8", "  data: 4");
  text = replace(text, "  act: 8", "  act: 4");
  text = replace(text, "  elem_bits: 6", "  elem_bits: 4");
  text = replace(text, "  out_bits: 8", "  out_bits: 4");
  text = replace(text, "  exp_in_bits: 8", "  exp_in_bits: 4");
  EXPECT_NO_THROW(parse(text));
  const std::string bad = replace(text, "  sqrt_in_bits: 12", "  sqrt_in_bits: 16");
  expect_input_error([&] { parse(bad); }, kFile, line_of(bad, "sqrt_in_bits: 16"), "norm.sqrt_in_bits",
                     "expected an integer in [4, 14] (2*widths.act+6 = 14), got 16");
  expect_edit_error("  sqrt_out_bits: 8", "  sqrt_out_bits: 17", "norm.sqrt_out_bits", "in [2, 16], got 17");
}

TEST(AccelConfig, SquashRelations) {
  expect_edit_error("  elem_bits: 6", "  elem_bits: 9", "squash.elem_bits", "in [2, 8] (widths.act = 8), got 9");
  expect_edit_error("  elem_bits: 6", "  elem_bits: 1", "squash.elem_bits", "in [2, 8]");
  expect_edit_error("  norm_bits: 5", "  norm_bits: 9", "squash.norm_bits",
                    "in [1, 8] (norm.sqrt_out_bits = 8), got 9");
  expect_edit_error("  out_bits: 8", "  out_bits: 9", "squash.out_bits", "in [2, 8] (widths.act = 8), got 9");
  expect_edit_error("  in_frac: 5\n  norm_shift", "  in_frac: 17\n  norm_shift", "squash.in_frac",
                    "in [0, 16] (widths.act+8 = 16), got 17");
  expect_edit_error("  norm_shift: 2", "  norm_shift: 3", "squash.norm_shift", "must be even");
  expect_edit_error("  norm_shift: 2", "  norm_shift: 24", "squash.norm_shift", "in [0, 22] (2*widths.act+6 = 22)");
  // elem_bits + norm_bits <= 16: 8 + 9 with a 9-bit norm code.
  std::string text = replace(kBase, "  sqrt_out_bits: 8", "  sqrt_out_bits: 9");
  text = replace(text, "  elem_bits: 6", "  elem_bits: 8");
  text = replace(text, "  norm_bits: 5", "  norm_bits: 9");
  expect_input_error([&] { parse(text); }, kFile, line_of(text, "norm_bits: 9"), "squash.norm_bits",
                     "elem_bits + norm_bits = 17 exceeds 16");
}

TEST(AccelConfig, SquashKind) {
  EXPECT_EQ(parse(kBase).squash.kind, SquashKind::kTable);  // kind is optional: CapsAcc's 2-D table
  const std::string gain = replace(kBase, "  elem_bits: 6", "  kind: gain\n  gain_bits: 9");
  const AccelConfig c = parse(gain);
  EXPECT_EQ(c.squash.kind, SquashKind::kGain);
  EXPECT_EQ(c.squash.gain_bits, 9);
  // Both keys of the two kinds are refused where they mean nothing, naming the key's line.
  const std::string both = replace(kBase, "  elem_bits: 6", "  kind: gain\n  gain_bits: 9\n  elem_bits: 6");
  expect_input_error([&] { parse(both); }, kFile, line_of(both, "elem_bits: 6"), "squash.elem_bits",
                     "only with kind: table");
  const std::string table_gain = replace(kBase, "  elem_bits: 6", "  elem_bits: 6\n  gain_bits: 9");
  expect_input_error([&] { parse(table_gain); }, kFile, line_of(table_gain, "gain_bits: 9"), "squash.gain_bits",
                     "only with kind: gain");
  expect_edit_error("  elem_bits: 6", "  kind: cubic\n  elem_bits: 6", "squash.kind", "cubic");
  // gain_bits >= out_bits - 1 (the product's rounding shift stays >= 1).
  expect_edit_error("  elem_bits: 6", "  kind: gain\n  gain_bits: 6", "squash.gain_bits", "got 6", "gain_bits: 6");
  expect_edit_error("  elem_bits: 6", "  kind: gain\n  gain_bits: 17", "squash.gain_bits", "got 17", "gain_bits: 17");
  // A missing gain_bits is named.
  expect_edit_error("  elem_bits: 6", "  kind: gain", "squash.gain_bits", "missing required field", "squash:");
  // With a gain LUT the 16-address-bit limit of the 2-D table does not apply: 9-bit norms are fine.
  std::string wide = replace(gain, "  sqrt_out_bits: 8", "  sqrt_out_bits: 9");
  wide = replace(wide, "  norm_bits: 5", "  norm_bits: 9");
  EXPECT_NO_THROW(parse(wide));
}

TEST(AccelConfig, SoftmaxRelations) {
  expect_edit_error("  exp_in_bits: 8", "  exp_in_bits: 9", "softmax.exp_in_bits", "in [2, 8] (widths.act = 8), got 9");
  expect_edit_error("  exp_out_bits: 8", "  exp_out_bits: 1", "softmax.exp_out_bits", "in [2, 16], got 1");
  expect_edit_error("  exp_out_bits: 8\n  in_frac: 5", "  exp_out_bits: 8\n  in_frac: -1", "softmax.in_frac",
                    "in [0, 16] (widths.act+8 = 16), got -1", "in_frac: -1");
}

// PIM-CapsNet approximations: optional kinds beside the LUT units, strict values, recovery only with
// the shift-based exp.
TEST(AccelConfig, PimApproximationKinds) {
  const AccelConfig base = parse(kBase);
  EXPECT_EQ(base.norm.sqrt_kind, SqrtKind::kLut);
  EXPECT_EQ(base.softmax.exp_kind, ExpKind::kLut);
  EXPECT_EQ(base.softmax.divide_kind, DivideKind::kDivider);
  EXPECT_FALSE(base.softmax.exp_recovery);

  std::string pim = replace(kBase, "  sqrt_out_bits: 8", "  sqrt_out_bits: 8\n  sqrt_kind: pim-rsqrt");
  pim = replace(pim, "  exp_out_bits: 8", "  exp_out_bits: 8\n  exp_kind: pim-shift\n  exp_recovery: true\n"
                                          "  divide_kind: pim-reciprocal");
  const AccelConfig c = parse(pim);
  EXPECT_EQ(c.norm.sqrt_kind, SqrtKind::kPimRsqrt);
  EXPECT_EQ(c.softmax.exp_kind, ExpKind::kPimShift);
  EXPECT_TRUE(c.softmax.exp_recovery);
  EXPECT_EQ(c.softmax.divide_kind, DivideKind::kPimReciprocal);
  EXPECT_STREQ(to_string(c.norm.sqrt_kind), "pim-rsqrt");
  EXPECT_STREQ(to_string(c.softmax.exp_kind), "pim-shift");
  EXPECT_STREQ(to_string(c.softmax.divide_kind), "pim-reciprocal");
  const std::string only_div = replace(kBase, "  exp_out_bits: 8", "  exp_out_bits: 8\n  divide_kind: pim-reciprocal");
  EXPECT_EQ(parse(only_div).softmax.divide_kind, DivideKind::kPimReciprocal);
  const std::string only_exp =
      replace(kBase, "  exp_out_bits: 8", "  exp_out_bits: 8\n  exp_kind: pim-shift\n  exp_recovery: false");
  EXPECT_FALSE(parse(only_exp).softmax.exp_recovery);

  // Bad values and misplaced keys name their line.
  expect_edit_error("  sqrt_out_bits: 8", "  sqrt_out_bits: 8\n  sqrt_kind: newton", "norm.sqrt_kind", "newton",
                    "sqrt_kind");
  expect_edit_error("  exp_out_bits: 8", "  exp_out_bits: 8\n  exp_kind: taylor", "softmax.exp_kind", "taylor",
                    "exp_kind");
  expect_edit_error("  exp_out_bits: 8", "  exp_out_bits: 8\n  divide_kind: lut", "softmax.divide_kind", "lut",
                    "divide_kind");
  expect_edit_error("  exp_out_bits: 8", "  exp_out_bits: 8\n  exp_recovery: true", "softmax.exp_recovery",
                    "only with exp_kind: pim-shift", "exp_recovery");
  expect_edit_error("  exp_out_bits: 8", "  exp_out_bits: 8\n  exp_kind: pim-shift", "softmax.exp_recovery",
                    "missing required field", "softmax:");
  expect_edit_error("  exp_out_bits: 8", "  exp_out_bits: 8\n  exp_kind: pim-shift\n  exp_recovery: maybe",
                    "softmax.exp_recovery", "maybe", "exp_recovery");
  // Configs built in code are checked too.
  AccelConfig bad = base;
  bad.softmax.exp_recovery = true;
  EXPECT_THROW(validate_accel_config(bad), InputError);
}

TEST(AccelConfig, SyntaxError) {
  const std::string text = replace(kBase, "  weight: {size_kib: 64,", "  weight: {size_kib: 64 banks: [,");
  expect_input_error([&] { parse(text); }, kFile, line_of(text, "weight: {"), "", "YAML syntax error");
  expect_input_error([&] { parse("name: x\n  array: 1\n"); }, kFile, 2, "", "YAML syntax error");
}

TEST(AccelConfig, MissingFile) {
  const std::string path = kRepo + "/configs/no-such-preset.yaml";
  expect_input_error([&] { load_accel_config(path); }, path, 0, "", "cannot open file");
}

TEST(AccelConfig, ValidateProgrammaticChanges) {
  // Explorations edit loaded configs in code; validation still names the field and its line.
  AccelConfig c = load_accel_config(kRepo + "/configs/capsacc-16x16.yaml");
  EXPECT_NO_THROW(validate_accel_config(c));
  c.widths.psum = 19;
  try {
    validate_accel_config(c);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "widths.psum");
    EXPECT_GT(e.line(), 0);
  }
  c.widths.psum = 25;
  c.scratchpad.organization = SpmOrganization::Smp;
  expect_input_error([&] { validate_accel_config(c); }, c.source_path, c.locations.at("scratchpad.data").line,
                     "scratchpad.data", "not allowed with organization 'smp'");
  // A config built from scratch has no locations: line 0, field still named.
  AccelConfig fresh;
  fresh.name = "fresh";
  fresh.scratchpad.data.present = fresh.scratchpad.weight.present = fresh.scratchpad.acc.present = true;
  fresh.scratchpad.data.size_kib = fresh.scratchpad.weight.size_kib = fresh.scratchpad.acc.size_kib = 16;
  EXPECT_NO_THROW(validate_accel_config(fresh));
  fresh.array.rows = 0;
  expect_input_error([&] { validate_accel_config(fresh); }, "", 0, "array.rows", "expected an integer in [1, 64], got 0");
}

}  // namespace
}  // namespace capsgen
