// Checked integer arithmetic for sizes read from input files: a product or sum that does not fit
// is reported (false / nullopt), never wrapped around.
#pragma once

#include <optional>

namespace capsgen {

inline std::optional<long long> checked_mul(long long a, long long b) {
  long long r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

inline std::optional<long long> checked_add(long long a, long long b) {
  long long r = 0;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

}  // namespace capsgen
