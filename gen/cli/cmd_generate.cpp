// capsgen generate: Verilog (and later LUT ROM images) for one accelerator preset.
#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "cli/dse_pick.hpp"
#include "config/accel_config.hpp"
#include "core/atomic_file.hpp"
#include "core/input_error.hpp"
#include "emit/chip.hpp"
#include "emit/generate.hpp"
#include "emit/memsys.hpp"
#include "emit/random_config.hpp"

namespace capsgen::cli {
namespace {

// An interrupted generate leaves ".NAME.tmp-XXXXXX" (or ".NAME.old-XXXXXX", the previous output
// moved aside) next to NAME. Those older than an hour hold no file but plain files are removed
// before a new run: a live run finishes in seconds, and anything else (subdirectories, a
// different name) is not generate's and is left alone.
void remove_stale_temporaries(const std::string& out) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path target = fs::absolute(out, ec).lexically_normal();
  const fs::path t = target.has_filename() ? target : target.parent_path();
  if (ec || t.filename().empty()) return;
  const std::string base = "." + t.filename().string();
  const auto now = fs::file_time_type::clock::now();
  for (fs::directory_iterator it(t.parent_path(), ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const bool ours = name.size() == base.size() + 11 && name.rfind(base, 0) == 0 &&
                      (name.compare(base.size(), 5, ".tmp-") == 0 || name.compare(base.size(), 5, ".old-") == 0);
    std::error_code e2;
    if (!ours || !it->is_directory(e2) || it->is_symlink(e2)) continue;
    if (now - fs::last_write_time(it->path(), e2) < std::chrono::hours(1) || e2) continue;
    bool plain = true;
    for (fs::directory_iterator f(it->path(), e2), fend; !e2 && f != fend; f.increment(e2))
      plain = plain && f->is_regular_file() && !f->is_symlink();
    if (plain && !e2) fs::remove_all(it->path(), e2);
  }
}

}  // namespace

int cmd_generate(const std::vector<std::string>& argv) {
  Args args("generate", "--config FILE --out DIR",
            "Writes the RTL of an accelerator preset into DIR: one Verilog file per module, files.f (the\n"
            "sources in dependency order) and JSON summaries of the blocks for the testbenches (config.json,\n"
            "activation.json, scratchpad.json, dma.json, memsys.json, chip.json, pmu.json; schemas/*.schema.json).\n"
            "The output is deterministic (same inputs, same bytes) and atomic (DIR is replaced only when\n"
            "everything was written).\n"
            "With --random-config SEED, a seeded random valid preset is built and written to the --config FILE\n"
            "once the RTL was written; FILE must not exist or be a random preset written earlier this way.\n"
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
  // --random-config never rewrites a user's file: FILE is new, or an earlier random preset (its first
  // line is random_config's header). It is written only after the RTL was.
  std::optional<std::string> random_yaml;
  if (args.has("random-config")) {
    if (args.has("dse"))
      throw InputError("capsgen generate", 0, 0, "--random-config", "cannot be combined with --dse");
    const auto seed = static_cast<std::uint64_t>(args.get_int("random-config", 0, (1LL << 62)));
    std::error_code ec;
    if (std::filesystem::exists(config_path, ec)) {
      std::ifstream in(config_path, std::ios::binary);
      std::string first;
      std::getline(in, first);
      if (first.rfind("# Random accelerator config, seed ", 0) != 0)
        throw InputError(config_path, 0, 0, "--config",
                         "exists and is not a random preset written by --random-config; it is not overwritten (give a new file)");
    }
    random_yaml = emit::random_accel_config_yaml(seed);
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
  } else if (random_yaml) {
    cfg = parse_accel_config(*random_yaml, config_path);
  } else {
    cfg = load_accel_config(config_path);
  }
  remove_stale_temporaries(out);
  const auto files = emit::generate_rtl(cfg, out, extra);
  if (random_yaml) write_file_atomic(config_path, *random_yaml);
  if (!args.has("quiet")) fmt::print("capsgen generate: {} files for '{}' written to {}\n", files.size(), cfg.name, out);
  if (!args.has("quiet")) {
    const std::string why = emit::memsys_unsupported_reason(cfg);
    if (!why.empty()) fmt::print("capsgen generate: note: capsgen_memsys not generated ({}); see {}\n", why, emit::kMemsysSummaryName);
    else if (const std::string chip = emit::chip_unsupported_reason(cfg); !chip.empty())
      fmt::print("capsgen generate: note: capsgen_chip not generated ({}); see {}\n", chip, emit::kChipSummaryName);
  }
  return 0;
}

}  // namespace capsgen::cli
