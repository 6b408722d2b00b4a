// Shared by the emitter tests: load a bundled preset, find a generated file in a Design.
#pragma once

#include <string>
#include <vector>

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

// The presets and odd shapes the engine-level emitter tests sweep: 1x1, and 3x5 with pipelined PEs
// and an accumulator depth that is not a power of two.
inline std::vector<AccelConfig> engine_shapes() {
  std::vector<AccelConfig> v = {preset("tiny-2x2"), preset("small-4x4"), preset("capsacc-16x16")};
  AccelConfig c = preset("tiny-2x2");
  c.array.rows = c.array.cols = 1;
  c.name = "1x1";
  v.push_back(c);
  c = preset("small-4x4");
  c.array.rows = 3;
  c.array.cols = 5;
  c.array.pe_pipeline = true;
  c.accumulator.depth = 100;
  c.name = "3x5-pipe-depth100";
  v.push_back(c);
  return v;
}

inline const OutputFile* find(const Design& d, const std::string& name) {
  for (const OutputFile& f : d.files())
    if (f.name == name) return &f;
  return nullptr;
}

}  // namespace capsgen::emit::test
