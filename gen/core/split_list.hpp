// Splitting a comma-separated option value (command-line lists of presets, models, sizes).
#pragma once

#include <string>
#include <vector>

namespace capsgen {

// The items of a comma-separated list ("a,b,,c" -> a, b, "", c; "" -> one empty item).
inline std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (true) {
    const std::size_t c = s.find(',', pos);
    out.push_back(s.substr(pos, c == std::string::npos ? std::string::npos : c - pos));
    if (c == std::string::npos) break;
    pos = c + 1;
  }
  return out;
}

}  // namespace capsgen
