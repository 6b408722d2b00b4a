// Shared workload and input options of capsgen compile and capsgen sim; see workload_input.hpp.
#include "cli/workload_input.hpp"

#include <fmt/format.h>

#include "cli/accuracy.hpp"
#include "compiler/compiler.hpp"
#include "core/input_error.hpp"
#include "dram/dram_spec.hpp"

namespace capsgen::cli {

void add_workload_options(Args& args, const std::string& index_help) {
  args.option("config", "FILE", "accelerator preset", "configs/capsacc-16x16.yaml")
      .option("model", "FILE", "network description", "models/capsnet-mnist.yaml")
      .option("weights", "FILE", "float weights (.npz); seeded random weights when absent")
      .option("seed", "N", "seed of the random weights and the synthetic input", "1")
      .option("dataset", "NAME",
              "input: test image --index of mnist or fashion (needs --weights; calibration on its training\n"
              "split, as capsgen golden --dataset, the preset's squash format); default: a synthetic image")
      .option("index", "K|A-B[:S]", index_help, "0")
      .option("data-dir", "DIR", "where the --dataset files are (default: where bootstrap installs them)")
      .option("dram", "FILE",
              "DRAM behind the off-chip port (configs/dram/*.yaml) instead of the preset's offchip.dram: the\n"
              "stream compiler plans for its bandwidth and the chip's testbench times it");
}

WorkloadInput load_workload_input(const Args& args, const std::string& cmd, bool allow_range, const char* range_error) {
  WorkloadInput r;
  Workload& w = r.w;
  Dataset& test = r.test;
  long long& first = r.first;
  long long& last = r.last;
  long long& step = r.step;
  std::string& input_name = r.input_name;
  int& label = r.label;
  // Before the workload's calibration: exit 2 naming the DRAM file, line and field when it is not valid.
  const auto dram_file = args.get_opt("dram");
  if (dram_file) dram::load_dram_spec(*dram_file);
  WorkloadSpec spec;
  spec.config_path = args.get("config");
  spec.model_path = args.get("model");
  spec.weights_path = args.get_opt("weights");
  spec.seed = std::uint64_t(args.get_int("seed", 0, (1LL << 62)));
  r.seed = spec.seed;
  // Calibration follows the shared rule (golden/workload.hpp): golden --seed N agrees with compile/sim.
  // The input of --dump-engine and --check: a test image of a data set (with that data set's
  // calibration, the preset's squash format: the RTL's LUTs), or a synthetic one.
  const auto dataset = args.get_opt("dataset");
  if (dataset && *dataset != "mnist" && *dataset != "fashion")
    throw InputError(cmd, 0, 0, "--dataset", fmt::format("expected mnist or fashion, got '{}'", *dataset));
  if (dataset && !spec.weights_path) throw InputError(cmd, 0, 0, "--dataset", "needs --weights");
  if (!dataset && args.has("index")) throw InputError(cmd, 0, 0, "--index", "needs --dataset");
  FloatTensor input_image;
  input_name = fmt::format("synthetic(seed={})", spec.seed);
  if (dataset) {
    DatasetWorkloadSpec ds;
    ds.config_path = spec.config_path;
    ds.model_path = spec.model_path;
    ds.weights_path = *spec.weights_path;
    ds.dataset = *dataset;
    ds.data_dir = args.get_opt("data-dir").value_or("");
    test = load_dataset(*dataset, Split::Test, ds.data_dir);
    if (test.images.empty()) check_images_fit(test, {}, "");  // names the empty split's source
    std::string is = args.get("index");
    const auto colon = is.find(':');
    const std::string range = is.substr(0, colon);
    const auto dash = range.find('-');
    auto parse = [&](const std::string& t) {
      if (t.empty() || t.size() > 9 || t.find_first_not_of("0123456789") != std::string::npos)
        throw InputError(cmd, 0, 0, "--index", fmt::format("expected K, A-B or A-B:S, got '{}'", is));
      const long long v = std::stoll(t);
      if (v >= (long long)test.images.size())
        throw InputError(cmd, 0, 0, "--index",
                         fmt::format("{} is past the last test image ({})", v, test.images.size() - 1));
      return v;
    };
    first = parse(dash == std::string::npos ? range : range.substr(0, dash));
    last = dash == std::string::npos ? first : parse(range.substr(dash + 1));
    if (colon != std::string::npos) {
      const std::string st = is.substr(colon + 1);
      if (dash == std::string::npos || st.empty() || st.size() > 9 || st.find_first_not_of("0123456789") != std::string::npos ||
          std::stoll(st) < 1)
        throw InputError(cmd, 0, 0, "--index", fmt::format("expected A-B:S with S >= 1, got '{}'", is));
      step = std::stoll(st);
    }
    if (last < first) throw InputError(cmd, 0, 0, "--index", fmt::format("empty range '{}'", is));
    if (last > first && !allow_range)
      throw InputError(cmd, 0, 0, "--index", range_error ? range_error : "expected one image K");
    std::string note;
    w = prepare_dataset_workload(ds, &note);  // after the index checks: calibration takes seconds
    check_dataset_fits(test, w.net);
    input_image = test.images[std::size_t(first)];
    label = test.labels[std::size_t(first)];
    input_name = fmt::format("{}[{}]", test.name, first);
  } else {
    w = prepare_workload(spec);
    input_image = random_input(w.net, spec.seed);
  }
  r.input = quantize_input(w.cfg, w.qm, w.net, input_image);
  if (dram_file) w.cfg.offchip.dram = *dram_file;
  return r;
}

void add_routing_batch_option(Args& args) {
  args.option("routing-batch", "K",
              "PIM-CapsNet's batch-shared routing (docs/pim-capsnet.md): one program for K inputs (test images\n"
              "--index .. --index+K-1, or synthetic seeds --seed .. --seed+K-1) whose class-capsule routing\n"
              "shares its logits; checked against the golden model's shared routing",
              "1");
}

int routing_batch_option(const Args& args) { return int(args.get_int("routing-batch", 1, kMaxRoutingBatch)); }

BatchInputs routing_batch_inputs(const WorkloadInput& in, int batch, const std::string& cmd) {
  BatchInputs b;
  for (int k = 0; k < batch; ++k) {
    if (k == 0) {
      b.codes.push_back(in.input);
      b.names.push_back(in.input_name);
      b.labels.push_back(in.label);
    } else if (!in.test.images.empty()) {
      const long long at = in.first + k;
      if (at >= (long long)in.test.images.size())
        throw InputError(cmd, 0, 0, "--routing-batch",
                         fmt::format("{} images from --index {} run past the last test image ({})", batch, in.first,
                                     in.test.images.size() - 1));
      b.codes.push_back(quantize_input(in.w.cfg, in.w.qm, in.w.net, in.test.images[std::size_t(at)]));
      b.names.push_back(fmt::format("{}[{}]", in.test.name, at));
      b.labels.push_back(in.test.labels[std::size_t(at)]);
    } else {
      b.codes.push_back(
          quantize_input(in.w.cfg, in.w.qm, in.w.net, random_input(in.w.net, in.seed + std::uint64_t(k))));
      b.names.push_back(fmt::format("synthetic(seed={})", in.seed + std::uint64_t(k)));
      b.labels.push_back(-1);
    }
  }
  return b;
}

}  // namespace capsgen::cli
