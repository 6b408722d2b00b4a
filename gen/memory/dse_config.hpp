// A configuration of the memory exploration applied to a preset (docs/dse-memory.md section 6): the
// organization, power gating, memory sizes and sector counts of the configuration; banks and word
// widths stay the preset's (a memory the preset lacks takes the data memory's, the shared memory's
// when there is no data memory). Used by `capsgen generate --dse` and by the streamed evaluation.
#pragma once

#include "config/accel_config.hpp"
#include "memory/dse.hpp"

namespace capsgen::memory {

// Not validated: validate_accel_config() says whether the preset's memories can be built so.
AccelConfig configured_preset(const AccelConfig& base, const ConfigPoint& p);

}  // namespace capsgen::memory
