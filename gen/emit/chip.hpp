// The whole accelerator behind its off-chip port (docs/rtl-chip.md, docs/memory-system.md sections 2-6):
//   capsgen_frame_seq  fetches a frame program (isa/frames.hpp: engine, DMA, PMU and end frames) one
//                      frame at a time and issues each to its unit when the frame's dependency fields
//                      allow it (wait_dma: DMA frames still outstanding; wait_engine: the engine idle;
//                      a PMU barrier: its sectors usable), with stall counters by cause
//   capsgen_chip       the frame sequencer, the compute engine, capsgen_memsys (SEP scratchpads), the
//                      DMA and one PMU per memory (with power gating): the chip's pins are the program
//                      fetch port, the DMA's off-chip burst port, start/done and the counters
// The DMA and PMU payloads are sliced out of the fetched words with isa::dma_frame_layout and
// isa::pmu_frame_layout, the tables the compiler packs with, so program and RTL cannot disagree.
#pragma once

#include <string>

#include "config/accel_config.hpp"
#include "emit/design.hpp"
#include "isa/frames.hpp"

namespace capsgen::emit {

inline constexpr const char* kFrameSequencerModule = "capsgen_frame_seq";
inline constexpr const char* kChipModule = "capsgen_chip";
// JSON summary for the testbenches (schemas/chip.schema.json; always written: `"supported": false`
// and a reason without memsys).
inline constexpr const char* kChipSummaryName = "chip.json";

// "" when capsgen_chip can be generated, else the reason naming the field: capsgen_memsys's
// (memsys_unsupported_reason), or a power-gated memory with more sectors than a PMU frame's 32-bit
// awake field holds.
std::string chip_unsupported_reason(const AccelConfig& cfg);

Module build_frame_sequencer(const AccelConfig& cfg);
Module build_chip(const AccelConfig& cfg);
nlohmann::json chip_summary(const AccelConfig& cfg);
// capsgen_frame_seq, capsgen_chip and chip.json where chip_unsupported_reason() is empty; otherwise chip.json with the reason.
void emit_chip(const AccelConfig& cfg, Design& design);

}  // namespace capsgen::emit
