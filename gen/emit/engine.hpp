// The compute engine (docs/rtl-engine.md, docs/accelerator.md section 8 step 1): one Gemm descriptor
// run end to end with its operands in memory: the gather unit fills the staging buffer, the tile
// reader loads weight tiles into the array, the streamer sends each staged block through the array
// once per tile, the column accumulators sum the chunks (bias on chunk 0), the activation bank
// reduces (shift, saturate, ReLU) and the output writer stores each result at its address.
//   capsgen_tile_reader  weight tiles, one row of `cols` elements per cycle, bottom row first
//   capsgen_out_writer   results to memory, one element per cycle, in the order of the output pattern
//   capsgen_act_pass     Activate (squash, softmax, norm of vectors in memory) and Fill descriptors
//   capsgen_engine       the controller of one Gemm and the datapath around the array
#pragma once

#include "config/accel_config.hpp"
#include "emit/design.hpp"
#include "isa/engine_timing.hpp"

namespace capsgen::emit {

inline constexpr const char* kTileReaderModule = "capsgen_tile_reader";
inline constexpr const char* kOutWriterModule = "capsgen_out_writer";
inline constexpr const char* kActPassModule = "capsgen_act_pass";
inline constexpr const char* kEngineModule = "capsgen_engine";

// Output FIFO entries between the activation bank and the writer (result vectors of `cols` codes):
// isa::engine_out_fifo_depth of the array latency (defined with the cycle model, which depends on it).
// The streamer holds back last-chunk vectors unless a FIFO entry is reserved for each (credits).

Module build_tile_reader(const AccelConfig& cfg);
Module build_out_writer(const AccelConfig& cfg);
Module build_act_pass(const AccelConfig& cfg);
Module build_engine(const AccelConfig& cfg);
void emit_engine(const AccelConfig& cfg, Design& design);

}  // namespace capsgen::emit
