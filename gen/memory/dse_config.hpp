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

// Memory m (shared, data, weight, acc: memory::Mem) of a scratchpad.
const MemoryConfig& memory_config(const ScratchpadConfig& sp, int m);
MemoryConfig& memory_config(ScratchpadConfig& sp, int m);

// Memory m of the preset or, where the preset lacks it, the one whose banks and word width a
// configuration's memory m takes: the data memory's, else the shared memory's.
const MemoryConfig& stand_in_memory(const ScratchpadConfig& sp, int m);

}  // namespace capsgen::memory
