// Bit fields of Verilator ports (CData/SData/IData/QData or VlWide) and of plain bit vectors.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "verilated.h"

namespace tb {

// Bits to index n things (ceil(log2 n); 0 for n <= 1), as the emitters size their fields.
inline int clog2(long long n) {
  int k = 0;
  while ((1LL << k) < n) ++k;
  return k;
}

inline std::uint64_t mask64(int width) { return width >= 64 ? ~std::uint64_t{0} : ((std::uint64_t{1} << width) - 1); }

inline std::int64_t sign_extend(std::uint64_t v, int width) {
  if (width >= 64) return static_cast<std::int64_t>(v);
  v &= mask64(width);
  if ((v >> (width - 1)) & 1u) v |= ~mask64(width);
  return static_cast<std::int64_t>(v);
}

// 32-bit word access, shared by VlWide and BitVec.
template <class Words>
void put_words(Words& w, int lsb, int width, std::uint64_t value) {
  value &= mask64(width);
  for (int i = 0; i < width;) {
    const int bit = lsb + i, word = bit / 32, off = bit % 32;
    const int take = std::min(32 - off, width - i);
    const std::uint32_t m = static_cast<std::uint32_t>(mask64(take) << off);
    w[word] = (w[word] & ~m) | (static_cast<std::uint32_t>((value >> i) << off) & m);
    i += take;
  }
}

template <class Words>
std::uint64_t get_words(const Words& w, int lsb, int width) {
  std::uint64_t v = 0;
  for (int i = 0; i < width;) {
    const int bit = lsb + i, word = bit / 32, off = bit % 32;
    const int take = std::min(32 - off, width - i);
    v |= ((static_cast<std::uint64_t>(w[word]) >> off) & mask64(take)) << i;
    i += take;
  }
  return v;
}

template <class T>
void put(T& port, int lsb, int width, std::uint64_t value) {
  if constexpr (std::is_integral_v<T>) {
    const std::uint64_t m = mask64(width) << lsb;
    port = static_cast<T>((static_cast<std::uint64_t>(port) & ~m) | ((value << lsb) & m));
  } else {
    put_words(port, lsb, width, value);
  }
}

template <class T>
std::uint64_t get(const T& port, int lsb, int width) {
  if constexpr (std::is_integral_v<T>) {
    return (static_cast<std::uint64_t>(port) >> lsb) & mask64(width);
  } else {
    return get_words(port, lsb, width);
  }
}

template <class T>
std::int64_t get_signed(const T& port, int lsb, int width) {
  return sign_extend(get(port, lsb, width), width);
}

// A plain bit vector (for vector files read by the Icarus testbenches).
class BitVec {
 public:
  // A disabled BitVec ignores put() (no cost when vectors are not being recorded).
  explicit BitVec(int width, bool enabled = true)
      : width_(width), w_(enabled ? static_cast<std::size_t>((width + 31) / 32) : 0u, 0u) {}
  void put(int lsb, int width, std::uint64_t v) {
    if (!w_.empty()) put_words(w_, lsb, width, v);
  }
  std::uint64_t get(int lsb, int width) const { return get_words(w_, lsb, width); }
  // Hex, most significant digit first, ceil(width/4) digits ($readmemh format).
  std::string hex() const {
    static const char* d = "0123456789abcdef";
    std::string s;
    for (int nib = (width_ + 3) / 4 - 1; nib >= 0; --nib) s += d[get(nib * 4, std::min(4, width_ - nib * 4))];
    return s;
  }

 private:
  int width_;
  std::vector<std::uint32_t> w_;
};

}  // namespace tb
