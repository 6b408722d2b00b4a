// capsgen synth: ASIC (Yosys + OSU018 + OpenSTA) and FPGA (iCE40 place and route, Xilinx estimate)
// flows on the RTL of a preset, and the RTL checks. See docs/flows.md.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "config/accel_config.hpp"
#include "core/input_error.hpp"
#include "emit/generate.hpp"
#include "synth/flows.hpp"
#include "synth/rtl_info.hpp"

namespace capsgen::cli {
namespace fs = std::filesystem;

namespace {

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

double parse_double(const Args& args, const std::string& name, double lo, double hi) {
  const std::string v = args.get(name);
  std::size_t pos = 0;
  double d = 0;
  try {
    d = std::stod(v, &pos);
  } catch (...) {
    pos = 0;
  }
  if (pos != v.size() || !(d >= lo && d <= hi))
    throw InputError("capsgen synth", 0, 0, "--" + name, fmt::format("expected a number in [{:g}, {:g}], got '{}'", lo, hi, v));
  return d;
}

}  // namespace

int cmd_synth(const std::vector<std::string>& argv) {
  Args args("synth", "--config FILE --target TARGET[,TARGET...] [--top MODULE[,MODULE...]|all] [--out DIR]",
            "Synthesizes the RTL of an accelerator preset and reports what it costs and how fast it clocks.\n"
            "Targets:\n"
            "  asic-osu018      Yosys mapped to the OSU018 standard cells + OpenSTA with the generated SDC:\n"
            "                   area (um^2, kGE), cells, flip-flops, RAM bits, critical path, Fmax; gate-level\n"
            "                   netlists with cell models in <out>/asic-osu018/netlist (files.f) for simulation\n"
            "  ice40            synth_ice40 + nextpnr-ice40 (UP5K with DSPs, else HX8K) through a serial I/O\n"
            "                   harness: utilization and Fmax from the router\n"
            "  xilinx-estimate  synth_xilinx resource counts (LUT, FF, DSP, BRAM)\n"
            "  check            verilator --lint-only -Wall, Yosys elaboration/synthesis check, scan for\n"
            "                   simulation-only constructs (exit code 1 when anything is found)\n"
            "The RTL is generated into <out>/rtl (or taken from --rtl DIR). Reports: <out>/<target>/report.md\n"
            "and report.json; constraints (SDC, PCF) in <out>/constraints. Every number is parsed from the\n"
            "tools' own reports. Needs yosys, opensta, qflow-tech-osu018, nextpnr-ice40 (scripts/bootstrap.sh).");
  args.option("config", "FILE", "accelerator preset (YAML), e.g. configs/small-4x4.yaml")
      .option("target", "TARGETS", "asic-osu018, ice40, xilinx-estimate, check (comma-separated list)")
      .option("top", "MODULES",
              "top module(s), comma-separated, or 'all' for every module (default: the modules no other module "
              "instantiates)")
      .option("out", "DIR", "output directory (default build/synth/<preset>[-pipe])")
      .option("rtl", "DIR", "use this 'capsgen generate' output instead of generating the RTL")
      .option("pe-pipeline", "on|off", "override array.pe_pipeline of the preset")
      .option("ram", "macro|flops",
              "asic: behavioral RAMs kept as memories and counted apart (macro), or mapped to flip-flops (flops)",
              "macro")
      .option("rom", "logic|macro", "asic: LUT ROMs synthesized to cells (logic) or kept as macros like the RAMs",
              "logic")
      .option("liberty", "FILE", "asic: Liberty file", synth::kDefaultLiberty)
      .option("io-delay", "FRAC", "asic: SDC input/output delay as a fraction of the clock period", "0")
      .option("device", "auto|up5k|hx8k", "ice40: device (auto: UP5K with DSPs if it fits, else HX8K)", "auto")
      .option("family", "FAMILY", "xilinx-estimate: synth_xilinx -family", "xc7")
      .flag("no-breakdown", "asic: skip the hierarchical run (per-module area table)")
      .option("activity", "FILE", "asic: the switching activity of a simulated inference (capsgen sim --memory dram\n"
              "--activity FILE): OpenSTA power and energy per inference of every top it instantiates, written to\n"
              "<out>/asic-osu018/energy.json (docs/energy.md)")
      .flag("quiet", "print only the summary");
  if (!args.parse(argv)) {
    fmt::print("{}", args.help());
    return 0;
  }
  if (!args.positional().empty())
    throw InputError("capsgen synth", 0, 0, args.positional()[0], "unexpected argument");
  AccelConfig cfg = load_accel_config(args.get("config"));
  if (args.has("pe-pipeline") && args.has("rtl"))
    throw InputError("capsgen synth", 0, 0, "--pe-pipeline", "cannot override the preset of an existing --rtl directory");
  if (auto p = args.get_opt("pe-pipeline")) {
    if (*p != "on" && *p != "off")
      throw InputError("capsgen synth", 0, 0, "--pe-pipeline", "expected on or off, got '" + *p + "'");
    cfg.array.pe_pipeline = *p == "on";
    validate_accel_config(cfg);
  }
  const std::vector<std::string> targets = split_commas(args.get("target"));
  if (targets.empty()) throw InputError("capsgen synth", 0, 0, "--target", "no target given");
  for (const std::string& t : targets)
    if (std::find(synth::synth_targets().begin(), synth::synth_targets().end(), t) == synth::synth_targets().end())
      throw InputError("capsgen synth", 0, 0, "--target",
                       fmt::format("unknown target '{}' (asic-osu018, ice40, xilinx-estimate, check)", t));

  std::string activity_file;
  std::optional<synth::ActivityDoc> activity_doc;
  if (auto a = args.get_opt("activity")) {
    if (std::find(targets.begin(), targets.end(), "asic-osu018") == targets.end())
      throw InputError("capsgen synth", 0, 0, "--activity", "needs --target asic-osu018");
    activity_file = *a;
    activity_doc = synth::read_activity_of_preset(*a, cfg.name);  // bad input: nothing written yet
  }

  const fs::path out = args.has("out") ? fs::path(args.get("out"))
                                       : fs::path("build/synth") / (cfg.name + (cfg.array.pe_pipeline ? "-pipe" : ""));
  fs::create_directories(out);
  fs::path rtl_dir;
  if (args.has("rtl")) {
    rtl_dir = args.get("rtl");
  } else {
    rtl_dir = out / "rtl";
    emit::generate_rtl(cfg, rtl_dir);
  }
  const synth::RtlInfo rtl = synth::load_rtl_info(rtl_dir);
  if (!rtl.preset.empty() && rtl.preset != cfg.name)
    throw InputError((rtl_dir / emit::kConfigSummaryName).string(), 0, 0, "--rtl",
                     fmt::format("RTL of preset '{}', not of --config preset '{}'", rtl.preset, cfg.name));

  synth::SynthOptions opt;
  if (args.has("top")) opt.tops = split_commas(args.get("top"));
  opt.out_dir = out;
  opt.liberty = args.get("liberty");
  opt.ram = args.get("ram");
  opt.rom = args.get("rom");
  opt.breakdown = !args.has("no-breakdown");
  opt.io_delay_frac = parse_double(args, "io-delay", 0, 0.9);
  opt.ice40_device = args.get("device");
  opt.xilinx_family = args.get("family");
  opt.quiet = args.has("quiet");
  opt.activity = activity_file;
  opt.activity_doc = activity_doc;
  bool ok = true;
  for (const std::string& t : targets) {
    opt.target = t;
    try {
      const synth::SynthResult r = synth::run_synth(cfg, rtl, opt);
      fmt::print("capsgen synth {} ({}{}): {} -> {}\n{}", t, cfg.name, cfg.array.pe_pipeline ? ", pe_pipeline" : "",
                 r.ok ? "ok" : "FAILED", (r.report_dir / "report.md").string(), r.summary);
      ok = ok && r.ok;
    } catch (const InputError&) {
      throw;
    } catch (const std::exception& e) {
      fmt::print(stderr, "capsgen synth {}: tool failure: {}\n", t, e.what());
      ok = false;
    }
  }
  return ok ? 0 : 1;
}

}  // namespace capsgen::cli
