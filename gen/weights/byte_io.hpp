// Internal helpers shared by the .npy codec (npy.cpp) and the ZIP container (zip.cpp): little-endian
// loads/stores, printable excerpts of untrusted bytes, and the InputError location helper. Not part
// of the weights API; include only from gen/weights/*.cpp.
#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/input_error.hpp"

namespace capsgen::weights_detail {

// Where a problem is: the file and, for .npz, the member key. A .npy field ("header.shape",
// "data") becomes the InputError field of a plain .npy and a message prefix inside a .npz, so the
// message always names the file, the member and the field.
struct Where {
  std::string file;
  std::string member;

  [[noreturn]] void fail(const std::string& field, const std::string& message) const {
    if (member.empty()) throw InputError(file, 0, 0, field, message);
    throw InputError(file, 0, 0, member, field.empty() ? message : field + ": " + message);
  }
};

// Little-endian unsigned load of n <= 8 bytes; the caller has checked the bounds.
inline std::uint64_t load_le(std::string_view b, std::size_t off, int n) {
  std::uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<std::uint8_t>(b[off + i]);
  return v;
}

// Appends the low n bytes of v, little-endian.
inline void put_le(std::string& out, std::uint64_t v, int n) {
  for (int i = 0; i < n; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// Printable excerpt of untrusted text for messages (headers and names may hold binary garbage).
inline std::string excerpt(std::string_view s, std::size_t max_len = 60) {
  std::string out;
  for (std::size_t i = 0; i < s.size() && i < max_len; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    out += (c >= 0x20 && c < 0x7f) ? std::string(1, static_cast<char>(c)) : fmt::format("\\x{:02x}", c);
  }
  if (s.size() > max_len) out += "...";
  return out;
}

}  // namespace capsgen::weights_detail
