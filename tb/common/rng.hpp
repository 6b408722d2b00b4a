// Seeded PRNG for the block testbenches (Verilator 5.006's $random is broken, and std::
// distributions differ between standard libraries; this one is the same everywhere).
#pragma once

#include <cstdint>

#include "numerics/fixed.hpp"

namespace tb {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : s_(seed ^ 0x6A09E667F3BCC909ull) {}
  std::uint64_t next() {  // splitmix64
    std::uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform integer in [lo, hi].
  std::int64_t uniform(std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(hi - lo + 1));
  }
  bool chance(int percent) { return uniform(0, 99) < percent; }
  // A signed `bits`-wide value: uniform, with the corners (min, max, -1, 0, 1) 1 time in 8.
  std::int64_t signed_value(int bits) {
    if (chance(12)) {
      switch (uniform(0, 4)) {
        case 0: return capsgen::fx::smin(bits);
        case 1: return capsgen::fx::smax(bits);
        case 2: return -1;
        case 3: return 0;
        default: return 1;
      }
    }
    return uniform(capsgen::fx::smin(bits), capsgen::fx::smax(bits));
  }

 private:
  std::uint64_t s_;
};

}  // namespace tb
