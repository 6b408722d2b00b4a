// capsgen generate: Verilog (and later LUT ROM images) for one accelerator preset.
#include <fmt/format.h>

#include <fstream>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "config/accel_config.hpp"
#include "core/input_error.hpp"
#include "emit/generate.hpp"
#include "emit/memsys.hpp"
#include "emit/random_config.hpp"

namespace capsgen::cli {

int cmd_generate(const std::vector<std::string>& argv) {
  Args args("generate", "--config FILE --out DIR",
            "Writes the RTL of an accelerator preset into DIR: one Verilog file per module, files.f (the\n"
            "sources in dependency order) and config.txt. The output is deterministic (same inputs, same\n"
            "bytes) and atomic (DIR is replaced only when everything was written).\n"
            "With --random-config SEED, a random valid preset is first written to the --config FILE.");
  args.option("config", "FILE", "accelerator preset (YAML), e.g. configs/small-4x4.yaml")
      .option("out", "DIR", "output directory (created or replaced)")
      .option("random-config", "SEED", "write a seeded random preset to --config FILE first (RTL test sweep)")
      .flag("quiet", "print nothing on success");
  if (!args.parse(argv)) {
    fmt::print("{}", args.help());
    return 0;
  }
  const std::string config_path = args.get("config");
  const std::string out = args.get("out");
  if (args.has("random-config")) {
    const auto seed = static_cast<std::uint64_t>(args.get_int("random-config", 0, (1LL << 62)));
    const std::string yaml = emit::random_accel_config_yaml(seed);
    std::ofstream f(config_path, std::ios::binary | std::ios::trunc);
    f << yaml;
    f.close();
    if (!f) throw InputError(config_path, 0, 0, "--config", "cannot write the random preset");
  }
  const AccelConfig cfg = load_accel_config(config_path);
  const auto files = emit::generate_rtl(cfg, out);
  if (!args.has("quiet")) fmt::print("capsgen generate: {} files for '{}' written to {}\n", files.size(), cfg.name, out);
  if (!args.has("quiet")) {
    const std::string why = emit::memsys_unsupported_reason(cfg);
    if (!why.empty()) fmt::print("capsgen generate: note: capsgen_memsys not generated ({}); see memsys.txt\n", why);
  }
  return 0;
}

}  // namespace capsgen::cli
