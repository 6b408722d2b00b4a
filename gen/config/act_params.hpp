// The activation unit's widths and formats (numerics/activation.hpp) as one preset sets them.
#pragma once

#include "config/accel_config.hpp"
#include "numerics/activation.hpp"

namespace capsgen {

fx::ActParams act_params(const AccelConfig& cfg);

}  // namespace capsgen
