// `capsgen sim --memory dram`: one inference on capsgen_chip (frame sequencer, engine, scratchpads,
// DMA, PMUs) with the network in an off-chip memory (tb/chip_tb.cpp), and its report.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "cli/chip_energy.hpp"
#include "cli/workload_input.hpp"
#include "emit/design.hpp"

namespace capsgen::cli {

struct ChipSimRun {
  std::filesystem::path work, rtl, build, report_md, report_json;
  std::optional<std::string> trace;
  bool stress = false;    // --fetch random: random latency and back-pressure on every off-chip channel
  bool coverage = false;  // write WORK/coverage.dat
  std::string seed, fault, weights;
  double build_s = 0;
  EnergyOptions energy;                 // the report's energy section (docs/energy.md)
  std::optional<std::string> activity;  // --activity FILE: the run's toggles (capsgen.activity/1; needs coverage)
};

// Streams the compiled program (cli/stream_dump.hpp) into WORK/stream, runs tb_chip of r.build on it,
// prints and writes the report. Returns the exit status (0: every check passed).
int run_chip_sim(const WorkloadInput& in, const ChipSimRun& r);

}  // namespace capsgen::cli
