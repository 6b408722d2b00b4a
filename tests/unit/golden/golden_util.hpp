// Shared set-up for the golden-model tests: presets from configs/, networks from inline YAML.
#pragma once

#include <string>

#include "config/accel_config.hpp"
#include "model/network.hpp"

namespace capsgen::test {

inline AccelConfig preset(const std::string& name) {
  return load_accel_config(std::string(CAPSGEN_REPO_ROOT) + "/configs/" + name + ".yaml");
}
inline Network model(const std::string& name) {
  return load_network(std::string(CAPSGEN_REPO_ROOT) + "/models/" + name + ".yaml");
}

}  // namespace capsgen::test
