#include "core/tensor.hpp"

namespace capsgen {

std::string shape_str(const Shape& s) {
  std::string out = "[";
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i) out += ",";
    out += std::to_string(s[i]);
  }
  return out + "]";
}

std::string index_str(const Shape& s, std::size_t flat) {
  std::vector<std::size_t> pos(s.size());
  for (std::size_t i = s.size(); i-- > 0;) {
    pos[i] = s[i] ? flat % s[i] : 0;
    flat = s[i] ? flat / s[i] : 0;
  }
  return shape_str(pos);
}

}  // namespace capsgen
