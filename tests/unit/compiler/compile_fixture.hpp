// Shared by the compiler's unit tests: presets and networks of the repository, and a network
// compiled with seeded random weights and input (its program and memory image).
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/compiler.hpp"
#include "compiler/executor.hpp"
#include "golden/workload.hpp"

namespace capsgen::test {

// (fmt::format, not operator+: GCC 12 reports a false -Warray-bounds on the inlined concatenation.)
inline AccelConfig preset(const std::string& n) {
  return load_accel_config(fmt::format("{}/configs/{}.yaml", CAPSGEN_REPO_ROOT, n));
}
// A network of models/ by name, or by its path from the repository's root (with a '/').
inline Network model(const std::string& n) {
  return load_network(n.find('/') == std::string::npos ? fmt::format("{}/models/{}.yaml", CAPSGEN_REPO_ROOT, n)
                                                        : fmt::format("{}/{}.yaml", CAPSGEN_REPO_ROOT, n));
}

struct Compiled {
  Workload w;
  isa::Program prog;
  std::vector<std::int32_t> image;
};

inline Compiled compile(const std::string& p, const std::string& m, int seed) {
  const AccelConfig cfg = preset(p);
  const Network net = model(m);
  Workload w = prepare_workload(cfg, net, random_weights(net, std::uint64_t(seed)), "random",
                                {random_input(net, 77), random_input(net, 78)});
  const IntTensor input = quantize_input(w.cfg, w.qm, w.net, random_input(w.net, std::uint64_t(seed)));
  isa::Program prog = compile_program(w.cfg, w.net, w.qm);
  std::vector<std::int32_t> image = build_image(prog, w.net, w.qm, input);
  return {std::move(w), std::move(prog), std::move(image)};
}

// The memory the flat program leaves: what every streamed or framed run must reproduce.
inline std::vector<std::int32_t> run_flat(const Compiled& c) {
  std::vector<std::int32_t> flat = c.image;
  execute_program(c.w.cfg, c.prog, flat);
  return flat;
}

}  // namespace capsgen::test
