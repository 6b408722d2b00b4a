// capsgen regress: coverage of a regression (docs/regress.md).
//  - Verilator line and toggle coverage: the runs' coverage.dat files are merged with
//    `verilator_coverage --write`; the merged file is parsed here and aggregated per module.
//  - Functional coverage: the testbench's "fcov" bins (tb/engine_tb.hpp; --memory dram: tb/chip_tb.cpp's
//    per-sector sleep/wake bins pmu.<memory>.s<k>.sleep/wake), summed over the runs.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

namespace capsgen::cli::regress {

// One coverage point of a verilator_coverage data file ("C '<key>\x02<value>\x01...' count" lines).
struct CovPoint {
  std::string type;       // "line", "toggle", "branch", ... (from the page "v_<type>/<module>")
  std::string module;     // the Verilog module (Verilator's parameterized copies "m__W9" folded into "m")
  std::string file;       // its source file
  int line = 0;
  std::string comment;    // 'o': "block", "if", the toggled signal and bit ...
  std::string hier;       // 'h': the instance
  long long count = 0;
};

// Parses the text of a .dat file; lines that are not points are skipped. Throws std::runtime_error
// naming the line for a malformed point.
std::vector<CovPoint> parse_coverage_dat(const std::string& text);

// Per module: a source line (file and line; line coverage) or a signal bit (toggle coverage) counts
// as covered when any of its points, in any instance of the module, was hit at least once. Several
// configurations' RTL directories add up (each file's lines count).
struct ModuleCoverage {
  std::set<std::string> files;      // its source files (one per generated RTL directory)
  std::set<std::string> instances;
  long long lines = 0, lines_hit = 0;
  long long toggles = 0, toggles_hit = 0;
  std::map<std::string, std::vector<int>> uncovered_lines;  // file -> lines without a hit, sorted
};
std::map<std::string, ModuleCoverage> coverage_by_module(const std::vector<CovPoint>& points);

double percent(long long hit, long long total);  // 100 when total is 0

// Functional coverage summed over runs. Bins a run reports as "na" (hardware not in this RTL) are
// kept apart from bins that were never hit; a bin stays "na" only while no run measured it (runs on
// different top levels: capsgen_accel reports the PMU bins "na", capsgen_chip measures its sectors').
struct FunctionalCoverage {
  std::map<std::string, long long> bins;  // bin -> total count
  std::map<std::string, long long> runs;  // bin -> runs that hit it
  std::set<std::string> na;               // reported "na" by some run and measured by none
  std::set<std::string> measured;         // reported (not "na") by at least one run
  std::vector<std::string> order;         // bins in first-seen order
  void add(const std::map<std::string, long long>& run_bins, const std::vector<std::string>& run_na,
           const std::vector<std::string>& run_order);
  std::vector<std::string> never_hit() const;  // bins with a 0 total that are not "na"
};

}  // namespace capsgen::cli::regress
