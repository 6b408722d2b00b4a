// Shared by the libFuzzer harnesses: every input must parse or end in InputError. Any other
// exception escapes and libFuzzer reports it as a crash (as it does sanitizer findings).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/input_error.hpp"

namespace capsgen::fuzz {

template <typename F>
int run(const std::uint8_t* data, std::size_t size, F&& parse) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    parse(bytes);
  } catch (const InputError&) {
  }
  return 0;
}

}  // namespace capsgen::fuzz
