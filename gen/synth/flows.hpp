// capsgen synth: synthesis, timing and FPGA flows on a generated RTL directory.
//
//   asic-osu018      Yosys -> OSU018 cells (dfflibmap + abc -D -constr), OpenSTA with the generated
//                    SDC; area (um^2, kGE), cells, flip-flops, RAMs, critical paths, Fmax; netlists
//                    for gate-level simulation (netlist/ with files.f, config.json, cell models).
//   ice40            synth_ice40 + nextpnr-ice40 on UP5K (with DSPs) or HX8K, through the serial I/O
//                    harness; DUT resources, device utilization, Fmax from the router.
//   xilinx-estimate  synth_xilinx resource counts (LUT, FF, CARRY4, DSP48E1, BRAM, LUTRAM, SRL).
//   check            verilator --lint-only -Wall, a Yosys elaboration/synthesis check and a scan for
//                    simulation-only constructs: the generated RTL must be plain synthesizable Verilog.
//
// Every number in the reports is parsed from the tools' outputs (and the Liberty file).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "config/accel_config.hpp"
#include "synth/activity.hpp"
#include "synth/rtl_info.hpp"

namespace capsgen::synth {

inline constexpr const char* kDefaultLiberty = "/usr/share/qflow/tech/osu018/osu018_stdcells.lib";

struct SynthOptions {
  std::string target;                 // asic-osu018 | ice40 | xilinx-estimate | check
  std::vector<std::string> tops;      // empty: the root modules; {"all"}: every module
  std::filesystem::path out_dir;      // results go to out_dir/<target>/
  std::string liberty = kDefaultLiberty;
  std::string ge_cell = "NAND2X1";    // gate-equivalent reference cell (its area is 1 GE)
  std::string ram = "macro";          // macro: RAMs kept as Verilog memories, counted apart; flops: mapped to cells
  std::string rom = "logic";          // logic: ROMs (no write port) synthesized to cells; macro: kept like RAMs
  bool breakdown = true;              // asic: hierarchical run for the per-module table
  double io_delay_frac = 0.0;         // SDC input/output delay as a fraction of the period
  std::string driving_cell = "BUFX4";  // SDC and ABC: cell driving the inputs
  double output_load = 0.02;          // SDC and ABC: load on the outputs (library units, pF)
  std::string ice40_device = "auto";  // auto | up5k | hx8k
  std::string xilinx_family = "xc7";
  bool quiet = false;                 // no progress lines on stdout
  std::string activity;               // asic: a capsgen.activity/1 file; power of every top it instantiates
  std::optional<ActivityDoc> activity_doc;  // its contents (read_activity_of_preset), read before any output is written
};

struct SynthResult {
  std::string json;      // report.json contents
  std::string markdown;  // report.md contents
  std::filesystem::path report_dir;
  bool ok = true;        // false: a tool failed or a check did not pass (details in the reports)
  std::string summary;   // a few lines for the terminal
};

inline const std::vector<std::string>& synth_targets() {
  static const std::vector<std::string> t = {"asic-osu018", "ice40", "xilinx-estimate", "check"};
  return t;
}

// Runs one target. Throws InputError for bad options (unknown top, missing tool or liberty).
SynthResult run_synth(const AccelConfig& cfg, const RtlInfo& rtl, const SynthOptions& opt);

// The tops a run uses: opt.tops resolved against the RTL (roots by default, "all" = every module).
std::vector<std::string> resolve_tops(const RtlInfo& rtl, const std::vector<std::string>& tops);

}  // namespace capsgen::synth
