// Activation unit (CapsAcc Fig. 11d-g): one per array column, fed with the column accumulator's
// psum-width results. Reduction to act bits (round-half-up shift by a run-time amount, saturation),
// then one of: identity, ReLU, Norm, Squash, Softmax. The LUT ROMs (sqrt, squash, exp) are written
// from the numerics LUT builders -- the only place golden-side code feeds the RTL (docs/architecture.md);
// everything around them (shifts, rounding, saturation, sums, max, divider) is implemented here.
// Interface and timing contract: docs/rtl-activation.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/accel_config.hpp"
#include "emit/design.hpp"

namespace capsgen::emit {

inline constexpr const char* kActivationModule = "capsgen_activation";
inline constexpr const char* kActivationBankModule = "capsgen_activation_bank";
inline constexpr const char* kActFifoModule = "capsgen_act_fifo";
inline constexpr const char* kActDividerModule = "capsgen_act_divider";
inline constexpr const char* kActSqrtRomModule = "capsgen_act_sqrt_rom";
inline constexpr const char* kActSquashRomModule = "capsgen_act_squash_rom";
inline constexpr const char* kActExpRomModule = "capsgen_act_exp_rom";
// PIM-CapsNet drop-ins for the exp ROM (softmax.exp_kind: pim-shift) and the sqrt ROM
// (norm.sqrt_kind: pim-rsqrt): same ports and timing (emit/activation_pim.cpp).
inline constexpr const char* kActPimExpModule = "capsgen_act_pim_exp";
inline constexpr const char* kActPimRsqrtModule = "capsgen_act_pim_rsqrt";
// PIM-CapsNet drop-in for the softmax divider (softmax.divide_kind: pim-reciprocal): same ports and
// latency (emit/activation_pim.cpp).
inline constexpr const char* kActPimRecipModule = "capsgen_act_pim_recip";
// JSON summary of the activation unit for the testbenches (raw preset values plus the generator's
// choices: max vector length, ROM forms, PIM-CapsNet units; schemas/activation.schema.json).
inline constexpr const char* kActivationSummaryName = "activation.json";

// func_i encoding.
enum class ActFunc : int { kNone = 0, kRelu = 1, kNorm = 2, kSquash = 3, kSoftmax = 4 };
inline constexpr int kActFunctionBits = 3;  // an ActFunc code on the func_i ports

// ROMs with at most 2^kCaseRomMaxAddrBits entries are emitted as `case` ROMs. A larger sqrt table
// (norm.sqrt_in_bits up to 20) is computed instead of stored: an exact integer square root
// that produces the same table in the same cycle (docs/rtl-activation.md, "ROMs").
inline constexpr int kCaseRomMaxAddrBits = 16;

// Derived sizes of one activation unit (all from the preset).
struct ActGeometry {
  int psum = 0, act = 0;
  int max_len = 0;       // longest vector (n) for Norm/Squash/Softmax
  int len_bits = 0;      // len_i width: clog2(max_len + 1)
  int shift_bits = 0;    // shift_i width: clog2(psum + 1)
  int sum_bits = 0;      // exact sum of max_len squares: 2*act - 1 + clog2(max_len)
  int nshift_bits = 0;   // norm_shift_i width: clog2(sum_bits + 1)
  int sqrt_in = 0, sqrt_out = 0;
  int sq_elem = 0, sq_norm = 0, sq_out = 0;
  bool sq_gain = false;  // squash kind gain: ROM of g(norm) x element (else the 2-D table)
  int sq_gain_bits = 0, sq_gain_shift = 0;  // gain kind: ROM width, rounding shift of the product
  int sq_rom_addr = 0, sq_rom_data = 0;     // squash ROM address / data widths
  int exp_in = 0, exp_out = 0;
  int exp_sum_bits = 0;  // exact sum of max_len exp values: exp_out + clog2(max_len)
  int out_bits = 0;      // out_data_o width: max(act, sqrt_out)
  int fifo_depth = 0;    // element / descriptor FIFO entries: max_len + 8
  int desc_bits = 0;     // descriptor FIFO width: max(act, squash norm bits)
  int div_stages = 0;    // divider pipeline registers (= quotient bits = act)
  bool sqrt_computed = false;  // sqrt table computed (sqrt_in > kCaseRomMaxAddrBits), not a case ROM
};
ActGeometry act_geometry(const AccelConfig& cfg);

// Timing contract (cycles; docs/rtl-activation.md). An element presented in cycle t:
inline constexpr int kActElemLatency = 2;           // identity/ReLU output in cycle t + 2
inline constexpr int kActNormLatency = 6;           // Norm output in cycle t_last + 6
inline constexpr int kActSquashDescDelay = 5;       // Squash: vector may start streaming at t_last + 5
inline constexpr int kActSquashStreamLatency = 2;   // ... element k out at P + k + 2
inline constexpr int kActSoftmaxDescDelay = 2;      // Softmax: exp pass may start at t_last + 2
inline constexpr int kActSoftmaxSumDelay = 1;       // divide pass may start at P + n + 1
// Softmax element k out at C + k + div_stages + 1.

// ROM contents (address -> value), from the numerics LUT builders.
std::vector<std::uint32_t> act_sqrt_table(const AccelConfig& cfg);
std::vector<std::uint32_t> act_squash_table(const AccelConfig& cfg);
std::vector<std::uint32_t> act_exp_table(const AccelConfig& cfg);
// $readmemh image of a table: one hex word per line, address order.
std::string rom_hex(const std::vector<std::uint32_t>& table, int data_bits);

Module build_act_rom(const std::string& name, const std::string& what, const std::vector<std::uint32_t>& table,
                     int addr_bits, int data_bits);
Module build_act_sqrt_computed(const AccelConfig& cfg);  // the computed sqrt table (large sqrt_in)
Module build_act_fifo(const AccelConfig& cfg);
Module build_act_pim_exp(const AccelConfig& cfg);    // fx::pim::exp_shift (with the preset's recovery)
Module build_act_pim_rsqrt(const AccelConfig& cfg);  // fx::pim::sqrt_rsqrt
Module build_act_pim_recip(const AccelConfig& cfg);  // fx::pim::divide_recip, in the divider's place
Module build_act_divider(const AccelConfig& cfg);
Module build_activation(const AccelConfig& cfg);
Module build_activation_bank(const AccelConfig& cfg);
nlohmann::json activation_summary(const AccelConfig& cfg);

// All modules, the .hex images of the three tables and activation.json.
void emit_activation(const AccelConfig& cfg, Design& design);

}  // namespace capsgen::emit
