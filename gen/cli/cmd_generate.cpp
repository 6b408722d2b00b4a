// capsgen generate: Verilog (and later LUT ROM images) for one accelerator preset.
#include <fmt/format.h>

#include <fstream>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "cli/dse_pick.hpp"
#include "config/accel_config.hpp"
#include "core/input_error.hpp"
#include "emit/chip.hpp"
#include "emit/generate.hpp"
#include "emit/memsys.hpp"
#include "emit/random_config.hpp"

namespace capsgen::cli {

int cmd_generate(const std::vector<std::string>& argv) {
  Args args("generate", "--config FILE --out DIR",
            "Writes the RTL of an accelerator preset into DIR: one Verilog file per module, files.f (the\n"
            "sources in dependency order) and config.txt. The output is deterministic (same inputs, same\n"
            "bytes) and atomic (DIR is replaced only when everything was written).\n"
            "With --random-config SEED, a random valid preset is first written to the --config FILE.\n"
            "With --dse FILE --dse-id N, configuration N of `capsgen dse memory`'s configs.csv.gz or pareto.csv\n"
            "(organization, power gating, memory sizes and sectors) is applied to the preset first; the derived\n"
            "preset is written to DIR/preset.yaml (use it with capsgen compile/sim).");
  args.option("config", "FILE", "accelerator preset (YAML), e.g. configs/small-4x4.yaml")
      .option("out", "DIR", "output directory (created or replaced)")
      .option("random-config", "SEED", "write a seeded random preset to --config FILE first (RTL test sweep)")
      .option("dse", "FILE", "exploration results (capsgen dse memory: configs.csv.gz or pareto.csv)")
      .option("dse-id", "N", "the configuration of --dse to build (its id column)")
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
  if (args.has("dse") != args.has("dse-id"))
    throw InputError("capsgen generate", 0, 0, args.has("dse") ? "--dse-id" : "--dse", "--dse and --dse-id go together");
  AccelConfig cfg;
  std::vector<emit::OutputFile> extra;
  if (args.has("dse")) {
    const DsePick pick = read_dse_pick(args.get("dse"), args.get_int("dse-id", 0, 1LL << 62));
    const std::string yaml = dse_preset_yaml(config_path, pick);
    cfg = parse_accel_config(yaml, out + "/preset.yaml");
    extra.push_back({"preset.yaml", yaml});
    if (!args.has("quiet"))
      fmt::print("capsgen generate: configuration {} ({}) of {} applied to {}\n", pick.point.id, memory::option_name(pick.point.option),
                 pick.file, config_path);
  } else {
    cfg = load_accel_config(config_path);
  }
  require_rtl_support(cfg);
  const auto files = emit::generate_rtl(cfg, out, extra);
  if (!args.has("quiet")) fmt::print("capsgen generate: {} files for '{}' written to {}\n", files.size(), cfg.name, out);
  if (!args.has("quiet")) {
    const std::string why = emit::memsys_unsupported_reason(cfg);
    if (!why.empty()) fmt::print("capsgen generate: note: capsgen_memsys not generated ({}); see memsys.txt\n", why);
    else if (const std::string chip = emit::chip_unsupported_reason(cfg); !chip.empty())
      fmt::print("capsgen generate: note: capsgen_chip not generated ({}); see chip.txt\n", chip);
  }
  return 0;
}

}  // namespace capsgen::cli
