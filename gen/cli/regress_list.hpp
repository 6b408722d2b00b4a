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
//       weights: models/weights/capsnet-small-mnist.npz   # optional, with dataset and indices
//       dataset: mnist
//       indices: [0, 7]
//       fault: flip-pe-bit        # optional: a deliberately broken RTL
//       expect: fail              # optional: pass (default) or fail
//
// Every error names the file, the line and the field; paths are relative to `base_dir` and must exist.
#pragma once

#include <string>
#include <vector>

#include "cli/regress_job.hpp"

namespace capsgen::cli::regress {

struct Entry {
  std::vector<std::string> configs;
  std::vector<long long> random_configs;
  std::vector<std::string> networks;
  std::vector<long long> seeds{1};
  std::vector<std::string> fetch{"latency1"};
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
};

// Expands the entries in order (configs, then random configs) x networks x seeds x indices x fetch.
// Throws InputError naming the list's entry when two jobs would have the same name.
std::vector<Job> expand_jobs(const RegressList& list, const Names& names);

}  // namespace capsgen::cli::regress
