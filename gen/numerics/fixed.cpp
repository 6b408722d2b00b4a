#include "numerics/fixed.hpp"

#include <cmath>

namespace capsgen::fx {

std::int64_t quantize(double value, int frac, int bits) {
  if (std::isnan(value)) return 0;
  const double scaled = std::ldexp(value, frac);
  const double lo = static_cast<double>(smin(bits));
  const double hi = static_cast<double>(smax(bits));
  if (scaled <= lo) return smin(bits);
  if (scaled >= hi) return smax(bits);
  return static_cast<std::int64_t>(std::nearbyint(scaled));  // ties to even (default FP rounding mode)
}

double dequantize(std::int64_t code, int frac) { return std::ldexp(static_cast<double>(code), -frac); }

}  // namespace capsgen::fx
