// Staging buffer (docs/accelerator.md section 8.1, docs/rtl-staging.md): the double buffer between
// the gather unit and the array's data input. The gather side writes one element per cycle into the
// RAM of its array row at (write buffer, vector); the array side reads all `rows` RAMs at one
// (read buffer, vector) per cycle, so a block of vectors is gathered while the previous block is
// streamed n_tiles times. Two buffers of `accumulator.depth` vectors (the largest m_block); buffer
// ownership is a full flag per buffer (commit by the writer, release by the reader).
#pragma once

#include "config/accel_config.hpp"
#include "emit/design.hpp"

namespace capsgen::emit {

inline constexpr const char* kStagingModule = "capsgen_staging";
inline constexpr const char* kStagingRamModule = "capsgen_staging_ram";

// Bits of the vector index within a buffer: max(1, clog2(accumulator.depth)).
int staging_vec_bits(const AccelConfig& cfg);
Module build_staging_ram();
Module build_staging(const AccelConfig& cfg);
void emit_staging(const AccelConfig& cfg, Design& design);

}  // namespace capsgen::emit
