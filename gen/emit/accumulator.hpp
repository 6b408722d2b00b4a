// Column accumulators (CapsAcc Fig. 11c): partial-sum RAM plus saturating adder, one per array
// column, and the bank of `cols` of them. Timing contract: docs/rtl-datapath.md.
#pragma once

#include "config/accel_config.hpp"
#include "emit/design.hpp"

namespace capsgen::emit {

inline constexpr const char* kAccumulatorModule = "capsgen_accumulator";
inline constexpr const char* kAccumulatorBankModule = "capsgen_accumulator_bank";

// Address bits of the partial-sum RAM: ceil(log2(depth)), at least 1.
int accumulator_addr_bits(const AccelConfig& cfg);
inline constexpr int kAccumulatorLatency = 2;  // in_* -> out_* cycles
inline constexpr int kAccumulatorReadLatency = 1;  // rd_en_i -> rd_valid_o cycles

Module build_accumulator(const AccelConfig& cfg);
Module build_accumulator_bank(const AccelConfig& cfg);
void emit_accumulator(const AccelConfig& cfg, Design& design);  // both modules

}  // namespace capsgen::emit
