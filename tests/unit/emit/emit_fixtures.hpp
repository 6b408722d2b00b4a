// Shared by the emitter tests: load a bundled preset, find a generated file in a Design.
#pragma once

#include <string>

#include "config/accel_config.hpp"
#include "emit/design.hpp"

namespace capsgen::emit::test {

// configs/<name>.yaml, with the repo-relative source path the generated headers name.
inline AccelConfig preset(const std::string& name) {
  AccelConfig cfg = load_accel_config(std::string(CAPSGEN_REPO_ROOT) + "/configs/" + name + ".yaml");
  cfg.source_path = "configs/" + name + ".yaml";
  return cfg;
}

inline const OutputFile* find(const Design& d, const std::string& name) {
  for (const OutputFile& f : d.files())
    if (f.name == name) return &f;
  return nullptr;
}

}  // namespace capsgen::emit::test
