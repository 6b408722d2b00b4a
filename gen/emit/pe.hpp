// Processing element of the systolic array (CapsAcc Fig. 11b), see docs/rtl-datapath.md.
#pragma once

#include "config/accel_config.hpp"
#include "emit/design.hpp"

namespace capsgen::emit {

inline constexpr const char* kPeModule = "capsgen_pe";

Module build_pe(const AccelConfig& cfg);
void emit_pe(const AccelConfig& cfg, Design& design);

}  // namespace capsgen::emit
