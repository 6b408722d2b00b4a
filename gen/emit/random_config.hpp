// Seeded random accelerator configs for the RTL test sweep (tests/rtl): the YAML text of a valid
// preset, so the config goes through the normal loader and can be kept and reloaded.
#pragma once

#include <cstdint>
#include <string>

namespace capsgen::emit {

// YAML text of a random valid preset named "random-<seed>". Arrays are 1x1..32x32 but mostly
// small (to keep Verilator builds short); data/weight widths 4..12; psum from its lower bound
// (data + weight + ceil(log2(rows))) to +6; accumulator depth, LUT widths, SPM organization,
// banks and sectors all vary; PIM-CapsNet's exp, divide and sqrt approximations are drawn from a
// separate stream, so the other fields do not depend on them. The same seed always gives the same text.
std::string random_accel_config_yaml(std::uint64_t seed);

}  // namespace capsgen::emit
