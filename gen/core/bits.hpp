// Bit-width arithmetic shared by the config checks, the compiler, the ISA and the emitters.
#pragma once

namespace capsgen {

// ceil(log2(n)): the bits that index n things; 0 for n <= 1.
constexpr int clog2(long long n) {
  int bits = 0;
  while ((1LL << bits) < n) ++bits;
  return bits;
}

}  // namespace capsgen
