// capsgen regress: one job of a regression (a `capsgen sim` run) and its result (docs/regress.md).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace capsgen::cli::regress {

// One whole inference on the RTL: preset x network x seed (x test image x fetch model x memory x fault).
struct Job {
  std::string name;          // unique, usable as a file name: "small-4x4.capsnet-tiny.s1"
  std::string config_path;   // preset file; for a random config the file the runner writes
  std::string config_name;   // the preset's name ("random-7" for --random-config 7)
  long long random_seed = -1;  // >= 0: a seeded random config (capsgen generate --random-config)
  std::string network_path;
  std::string network_name;  // the network's name
  long long seed = 1;        // capsgen sim --seed (random weights, synthetic input, fetch model)
  std::optional<long long> index;  // --index K of --dataset
  std::string weights, dataset;    // --weights, --dataset (empty: none)
  std::string fetch = "latency1";  // --fetch
  std::string memory = "ideal";    // --memory: "ideal" (capsgen_accel) or "dram" (capsgen_chip, DDR3 model)
  std::string fault;         // --fault (empty: the RTL as generated)
  bool expect_fail = false;  // expect: fail (the regression passes only if the run is caught failing)
  int line = 0;              // the list entry's line, for messages
  bool dram() const { return memory == "dram"; }
  // The model this job runs on: one build per distinct config, memory and fault (shared by its seeds):
  // "small-4x4", "small-4x4+flip-pe-bit", "tiny-2x2+dram", "tiny-2x2+dram+ignore-wait-dma".
  std::string build_key() const {
    return config_name + (dram() ? "+dram" : "") + (fault.empty() ? "" : "+" + fault);
  }
};

// What became of a job.
enum class Status { kPass, kFail, kError, kTimeout, kInterrupted, kNotRun };
const char* status_name(Status s);

struct JobResult {
  Job job;
  Status status = Status::kNotRun;
  double seconds = 0;
  std::string message;                // one line: the first problem, or the error's reason
  std::vector<std::string> problems;  // the testbench's MISMATCH/FAIL lines
  std::string log;                    // the run's log
  std::string repro;                  // the command that reproduces the run alone
  std::map<std::string, long long> fcov;  // functional coverage bins of the run
  std::vector<std::string> fcov_order;    // the bins in the testbench's order
  std::vector<std::string> fcov_na;       // bins whose hardware is not in this RTL
  std::string coverage_dat;               // the run's Verilator coverage file (empty: none)
  long long cycles = 0;                   // the program's cycles on the RTL
  // Counts as passed in the regression: a pass, or a caught failure when one was expected.
  bool ok() const { return job.expect_fail ? status == Status::kFail : status == Status::kPass; }
};

}  // namespace capsgen::cli::regress
