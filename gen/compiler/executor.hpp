// Functional executor of an accelerator program: runs each descriptor on a flat memory exactly as
// the hardware is specified to (array passes chunk by chunk, saturating accumulators, the
// activation operators of gen/numerics). It checks the compiler's mapping — tile and data
// addressing, loop order, chunk order, output placement — against the golden model before any
// RTL runs, and is the reference the controller RTL must follow.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "config/accel_config.hpp"
#include "isa/program.hpp"

namespace capsgen {

struct ExecStats {
  long long vectors = 0;
  long long psum_saturations = 0;
};

// Runs every instruction in order on `mem` (one int32 per element). After each instruction
// `after` (if set) is called with its index.
ExecStats execute_program(const AccelConfig& cfg, const isa::Program& prog, std::vector<std::int32_t>& mem,
                          const std::function<void(std::size_t)>& after = {});

}  // namespace capsgen
