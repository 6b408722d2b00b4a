// Process-wide caps on what an input file may make capsgen read or allocate (docs/limits.md).
// Defaults hold every file in the repository many times over; the capsgen command line raises
// them with the options named below.
#pragma once

#include <cstdint>

namespace capsgen {

struct InputLimits {
  // Bytes of array data an .npy file or an .npz archive may hold, summed over the archive's members
  // after decompression (--max-array-mib).
  std::uint64_t max_array_bytes = std::uint64_t(256) << 20;
  // Weight elements of a network the golden model, compile and sim run (summed over its layers),
  // and elements of its largest tensor (--max-model-elements).
  std::uint64_t max_model_elements = std::uint64_t(1) << 26;
};

InputLimits& input_limits();

}  // namespace capsgen
