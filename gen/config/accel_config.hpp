// Accelerator preset: everything a configs/<preset>.yaml describes.
// Parsed and validated by load_accel_config(); every field documented in docs/config.md.
#pragma once

#include <map>
#include <string>

namespace capsgen {

struct ArrayConfig {
  int rows = 16;             // PE rows: the reduction dimension of one pass
  int cols = 16;             // PE columns: independent outputs per cycle
  bool pe_pipeline = false;  // extra register between multiplier and adder in each PE
};

struct WidthConfig {
  int data = 8;     // signed data entering the array from the left
  int weight = 8;   // signed weights entering from the top
  int psum = 25;    // signed partial sums in the array and the accumulators (saturating in the accumulator)
  int act = 8;      // signed activation outputs (== data: activations are the next layer's data)
};

// PIM-CapsNet approximations (docs/pim-capsnet.md), selectable beside the LUT units. The golden
// model computes them (gen/numerics/pim_approx.hpp); the RTL does not have them yet.
enum class SqrtKind { kLut, kPimRsqrt };        // norm.sqrt_kind: lut | pim-rsqrt
enum class ExpKind { kLut, kPimShift };         // softmax.exp_kind: lut | pim-shift
enum class DivideKind { kDivider, kPimReciprocal };  // softmax.divide_kind: divider | pim-reciprocal
const char* to_string(SqrtKind k);
const char* to_string(ExpKind k);
const char* to_string(DivideKind k);

struct NormConfig {
  int sqrt_in_bits = 12;   // sqrt LUT address width (sum of squares after rounding shift, saturated)
  int sqrt_out_bits = 8;   // sqrt LUT output width (unsigned norm code)
  SqrtKind sqrt_kind = SqrtKind::kLut;  // the sqrt LUT, or the LUT-free inverse-square-root sqrt
};

// How the squash unit maps (element, norm) to its output (docs/numerics.md, "Squash"):
//  - kTable: CapsAcc's two-dimensional LUT addressed by the top elem_bits of the element and the
//    top norm_bits of the norm code;
//  - kGain: a one-dimensional LUT of the gain g(n) = n / (1 + n^2) addressed by the top norm_bits
//    of the norm code, times the whole element (one multiplier per unit).
enum class SquashKind { kTable, kGain };
const char* to_string(SquashKind k);

struct SquashConfig {
  SquashKind kind = SquashKind::kTable;
  int elem_bits = 6;    // kTable: squash LUT element address (top bits of the act-width element)
  int gain_bits = 8;    // kGain: gain LUT output width, unsigned, format Q0.(gain_bits+1)
  int norm_bits = 5;    // squash LUT norm address (top bits of the norm code)
  int out_bits = 8;     // squash output width, format Q0.(out_bits-1)
  int in_frac = 5;      // fraction bits of the act-width squash input s
  int norm_shift = 2;   // even right shift of the sum of squares before the sqrt LUT
};

struct SoftmaxConfig {
  int exp_in_bits = 8;   // exp LUT address width (top bits of the act-width logit b)
  int exp_out_bits = 8;  // exp LUT output width (unsigned)
  int in_frac = 5;       // fraction bits of the act-width logits b
  ExpKind exp_kind = ExpKind::kLut;             // the exp LUT, or the shift-based exp
  bool exp_recovery = false;                    // kPimShift: the accuracy-recovery multiply
  DivideKind divide_kind = DivideKind::kDivider;  // the divider, or reciprocal + multiply
  // Longest vector the activation units take (softmax over J outputs, squash and norm over D atoms);
  // 0: max(32, rows, cols). DeepCaps' 3D routing needs J = types x positions (128).
  int max_len = 0;
};

struct AccumulatorConfig {
  int depth = 256;  // partial-sum entries per column accumulator (FIFO/RAM)
};

enum class SpmOrganization { Sep, Smp, Hy };

const char* to_string(SpmOrganization org);  // "sep", "smp", "hy"

// One on-chip memory: banks x sectors of behavioral RAM.
struct MemoryConfig {
  bool present = false;
  int size_kib = 0;     // total capacity in KiB (1024 bytes)
  int banks = 1;        // independently addressable banks
  int sectors = 1;      // power-gating sectors per bank (one sleep signal per sector index)
  int width_bits = 64;  // word width of one bank
};

struct ScratchpadConfig {
  SpmOrganization organization = SpmOrganization::Sep;
  MemoryConfig data;    // SEP / HY
  MemoryConfig weight;  // SEP / HY
  MemoryConfig acc;     // SEP / HY
  MemoryConfig shared;  // SMP / HY
  bool power_gating = true;
  int wakeup_cycles = 4;  // sleep-acknowledge to usable, in clock cycles
};

// HY (docs/memory-system.md 2.1): whether the shared memory also serves as 32-bit psum lanes (the
// `lanes` range, where acc buffers that do not fit the acc memory go): its words hold at least one
// lane, and a bias row of array.cols lanes spans at most scratchpad.shared.banks words (memsys reads
// it in one cycle). False for other organizations.
bool hy_shared_lanes(const ScratchpadConfig& s, int cols);

// Largest number of consecutive words n consecutive elements can span with `lanes` per word (an access
// may start in any lane): what memsys reads in one cycle, one bank per word.
long long spm_words_spanned(long long n, int lanes);

struct OffchipConfig {
  int bus_bits = 64;        // data width of the valid/ready burst port
  int max_burst = 16;       // beats per burst
  int latency_cycles = 20;  // default latency of the testbench memory model
  // The DRAM behind the port (a configs/dram/*.yaml description, the path as resolved against the
  // preset's directory); empty: the built-in DDR3-1600 x8 chip (dram::offchip_dram).
  std::string dram;
};

struct ClockConfig {
  double target_mhz = 250.0;
};

// 1-based position of a field in the preset file (0 = unknown).
struct SourceLocation {
  int line = 0;
  int column = 0;
};

struct AccelConfig {
  std::string name;
  std::string description;
  std::string source_path;  // file it was loaded from ("" for built-in defaults)
  // Where each field was read, keyed by dotted path ("widths.psum", "scratchpad.data"), so that
  // validate_accel_config() can point at the right line. Empty for configs built in code.
  std::map<std::string, SourceLocation> locations;
  ArrayConfig array;
  WidthConfig widths;
  NormConfig norm;
  SquashConfig squash;
  SoftmaxConfig softmax;
  AccumulatorConfig accumulator;
  ScratchpadConfig scratchpad;
  OffchipConfig offchip;
  ClockConfig clock;
};
// The activation units' longest vector (SoftmaxConfig::max_len, or its default).
int activation_max_len(const AccelConfig& cfg);


// Loads and validates a preset. Throws InputError naming file, line and field.
AccelConfig load_accel_config(const std::string& path);

// Same, from YAML text (file name used in messages only).
AccelConfig parse_accel_config(const std::string& yaml_text, const std::string& file_name);

// Cross-field checks (also run by the loaders). Throws InputError naming the field.
void validate_accel_config(const AccelConfig& cfg);

}  // namespace capsgen
