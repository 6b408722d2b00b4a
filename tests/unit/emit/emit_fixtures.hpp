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

// Occurrences of `what` in `text` (overlapping ones counted).
inline int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (std::size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

inline const OutputFile* find(const Design& d, const std::string& name) {
  for (const OutputFile& f : d.files())
    if (f.name == name) return &f;
  return nullptr;
}

}  // namespace capsgen::emit::test
