// Systolic array of rows x cols PEs with input skew, output de-skew and weight-tile switching
// (CapsAcc Fig. 11a). Timing contract: docs/rtl-datapath.md.
#pragma once

#include "config/accel_config.hpp"
#include "emit/design.hpp"

namespace capsgen::emit {

inline constexpr const char* kSystolicArrayModule = "capsgen_systolic_array";

// Cycles from a data vector at data_i to its dot products at result_o.
int systolic_array_latency(const AccelConfig& cfg);

Module build_systolic_array(const AccelConfig& cfg);
void emit_systolic_array(const AccelConfig& cfg, Design& design);

}  // namespace capsgen::emit
