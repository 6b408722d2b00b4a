// capsgen regress: the regression list (YAML) and its expansion into jobs (docs/regress.md).
//
//   name: ci                      # optional (default: the file's stem)
//   coverage: true                # Verilator line/toggle coverage for every run (default false)
//   timeout: 900                  # seconds per run (default 1200)
//   entries:
//     - configs: [configs/tiny-2x2.yaml, configs/small-4x4.yaml]   # presets
//       random_configs: [3, 12]   # seeded random presets (capsgen generate --random-config N)
//       networks: [models/capsnet-tiny.yaml]
//       seeds: [1, 2, 3]          # or a range "1-8"
//       fetch: [latency1, random] # optional (default latency1)
//       memory: [ideal, dram]     # optional (default ideal): capsgen sim --memory (dram: capsgen_chip)
//       weights: models/weights/capsnet-small-mnist.npz   # optional, with dataset and indices
//       dataset: mnist
//       indices: [0, 7]
//       fault: flip-pe-bit        # optional: a deliberately broken RTL (ignore-wait-dma: memory dram only)
//       expect: fail              # optional: pass (default) or fail
//
// Every error names the file, the line and the field; paths are relative to `base_dir` and must exist.
#pragma once

#include <string>
#include <vector>

#include "regress/job.hpp"

namespace capsgen::cli::regress {

struct Entry {
  std::vector<std::string> configs;
  std::vector<long long> random_configs;
  std::vector<std::string> networks;
  std::vector<long long> seeds{1};
  std::vector<std::string> fetch{"latency1"};
  std::vector<std::string> memory{"ideal"};
  // Where the entry's `memory` key is (its value's line, column and field path; the entry when absent),
  // for errors found while expanding (a preset without capsgen_chip).
  int memory_line = 0, memory_column = 0;
  std::string memory_field;
  std::string weights, dataset;
  std::vector<long long> indices;
  std::string fault;
  bool expect_fail = false;
  int line = 0;
};

struct RegressList {
  std::string file;
  std::string name;
  bool coverage = false;
  int timeout_s = 1200;
  std::vector<Entry> entries;
};

// Parses and checks a list (text of `file`; relative paths against base_dir). Throws InputError.
RegressList parse_regress_list(const std::string& text, const std::string& file, const std::string& base_dir);
RegressList load_regress_list(const std::string& path, const std::string& base_dir);

// The names of presets and networks, as the jobs use them.
struct Names {
  virtual ~Names() = default;
  virtual std::string config_name(const std::string& path) const = 0;
  virtual std::string network_name(const std::string& path) const = 0;
  // The path of random config N's preset file (written by the runner).
  virtual std::string random_config_path(long long seed) const = 0;
  // Why `capsgen sim --memory dram` cannot run the preset at `path` (random config `random_seed` when
  // >= 0; emit::memsys_unsupported_reason): empty when capsgen_chip exists for it.
  virtual std::string dram_unsupported_reason(const std::string& path, long long random_seed) const {
    (void)path;
    (void)random_seed;
    return "";
  }
};

// Expands the entries in order (configs, then random configs) x networks x seeds x indices x fetch
// x memory. Throws InputError naming the list's entry when two jobs would have the same name, and
// naming the entry's `memory` when a dram job's preset has no capsgen_chip, and naming the first
// entry at which the count passes max_jobs (counted before any job is built).
// Largest number of jobs a list may expand to unless raised (capsgen regress --max-jobs).
constexpr long long kDefaultMaxJobs = 10000;

std::vector<Job> expand_jobs(const RegressList& list, const Names& names, long long max_jobs = kDefaultMaxJobs);

}  // namespace capsgen::cli::regress
