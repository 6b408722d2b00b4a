// capsgen regress: the summary (Markdown table and JSON) and the coverage report of a regression.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "regress/coverage.hpp"
#include "regress/job.hpp"

namespace capsgen::cli::regress {

struct RunInfo {
  std::string list_file, list_name, out_dir;
  int slots = 1;
  double seconds = 0;
  bool interrupted = false;
  bool coverage = false;
  int builds = 0, builds_failed = 0;
  int dram_runs = 0;
  bool slurm = false;  // the builds and runs were Slurm jobs (--slurm), not local processes  // coverage: the runs summed that were --memory dram (capsgen_chip: sector sleep/wake bins)
};

// Counts: passed (ok), failed (not ok: mismatch, uncaught fault), errors (could not run, timeout),
// not run (interrupted or never started).
struct Totals {
  int jobs = 0, passed = 0, failed = 0, errors = 0, not_run = 0;
};
Totals totals(const std::vector<JobResult>& results);

// The one-line verdict of a job in the summary: "pass", "FAIL", "caught (expected fail)", ...
std::string verdict(const JobResult& r);

std::string summary_markdown(const RunInfo& info, const std::vector<JobResult>& results);
std::string summary_json(const RunInfo& info, const std::vector<JobResult>& results);

// Coverage report: Verilator coverage per module (empty map: none) and functional coverage.
std::string coverage_markdown(const RunInfo& info, const std::map<std::string, ModuleCoverage>& modules,
                              const FunctionalCoverage& fcov, int runs, const std::string& note);
std::string coverage_json(const std::map<std::string, ModuleCoverage>& modules, const FunctionalCoverage& fcov,
                          int runs, const std::string& note);

}  // namespace capsgen::cli::regress
