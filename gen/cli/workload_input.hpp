// The workload and input options that `capsgen compile` and `capsgen sim` share: preset, network,
// weights (.npz or seeded random), and the input (a seeded synthetic image, or a test image of a data
// set with that data set's calibration and the preset's squash format, so that the RTL's LUTs apply).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cli/args.hpp"
#include "core/tensor.hpp"
#include "data/dataset.hpp"
#include "golden/workload.hpp"

namespace capsgen::cli {

struct WorkloadInput {
  Workload w;
  IntTensor input;          // the quantized input of the first (or only) image
  std::string input_name;   // "synthetic(seed=N)" or "mnist-test[K]"
  int label = -1;           // true class of a data set image, -1 for a synthetic one
  Dataset test;             // the test split with --dataset
  long long first = 0, last = 0, step = 1;  // --index K or A-B[:S]
  std::uint64_t seed = 0;                   // --seed: of the weights and of the synthetic input
};

// Declares --config, --model, --weights, --seed, --dataset, --index, --data-dir, --dram.
void add_workload_options(Args& args, const std::string& index_help);
// Reads them. `cmd` names the command in errors. allow_range: --index may be a range A-B[:S]; when
// false, a range is an error whose message is `range_error` (e.g. "a range needs --dump-engine").
WorkloadInput load_workload_input(const Args& args, const std::string& cmd, bool allow_range,
                                  const char* range_error = nullptr);

// The inputs of a routing batch (compile and sim --routing-batch K, CompileOptions::routing_batch):
// test images --index, --index + 1, ..., --index + K - 1 of --dataset, or the synthetic inputs of
// seeds --seed, --seed + 1, ... For K = 1 the input itself.
struct BatchInputs {
  std::vector<IntTensor> codes;
  std::vector<std::string> names;
  std::vector<int> labels;
};
void add_routing_batch_option(Args& args);
int routing_batch_option(const Args& args);
BatchInputs routing_batch_inputs(const WorkloadInput& in, int batch, const std::string& cmd);

}  // namespace capsgen::cli
