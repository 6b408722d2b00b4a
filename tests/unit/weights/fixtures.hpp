// Shared by the weights tests: where the NumPy-made fixtures live and how to read one whole.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace capsgen::test {

inline std::string fixture(const std::string& name) { return std::string(CAPSGEN_TEST_DATA) + "/npy/" + name; }

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace capsgen::test
