// capsgen golden: one inference through the bit-exact fixed-point golden model and the float
// reference, with a per-tensor report.
#include <fmt/format.h>

#include <chrono>

#include "cli/accuracy.hpp"
#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "core/atomic_file.hpp"
#include "core/input_error.hpp"
#include "golden/fixed_model.hpp"
#include "golden/float_model.hpp"
#include "golden/report.hpp"
#include "golden/workload.hpp"
#include "weights/npy.hpp"

namespace capsgen::cli {

int cmd_golden(const std::vector<std::string>& argv) {
  Args args("golden", "--config PRESET.yaml --model NET.yaml [options]",
            "Quantizes the network for the preset (per-layer formats from calibration images), runs one\n"
            "inference through the fixed-point golden model and the float reference, and prints every\n"
            "intermediate tensor's format, range, checksum and error against float, the class norms and\n"
            "the prediction. Without --weights, seeded random weights are used; without --input, a seeded\n"
            "synthetic stroke image.");
  args.option("config", "FILE", "accelerator preset", "configs/capsacc-16x16.yaml")
      .option("model", "FILE", "network description", "models/capsnet-mnist.yaml")
      .option("weights", "FILE", "float weights (.npz, docs/weights.md)")
      .option("seed", "N", "seed of the random weights and the synthetic input", "1")
      .option("input", "FILE", "input images (.npy, [N,C,H,W] or [N,H,W], values in [0,1])")
      .option("index", "K", "which image of --input (or of the --dataset test split) to run", "0")
      .option("dataset", "NAME", "run test image --index of mnist or fashion (label printed); with --weights, calibrate on its training split")
      .option("data-dir", "DIR", "where the --dataset files are (default: where bootstrap installs them)")
      .option("squash-in-frac", "F", "with --dataset and --weights: preset, auto or maxabs (from calibration, see accuracy --help) or an integer", "preset")
      .option("label", "L", "true class of the input, printed beside the prediction")
      .option("calib", "FILE", "calibration images (.npy); default: synthetic images")
      .option("calib-count", "N", fmt::format("number of calibration images (default {}; {} with --dataset)",
                                               kSyntheticCalibImages, kDatasetCalibImages))
      .option("report", "FILE", "also write the report as Markdown to FILE")
      .option("json", "FILE", "also write the report as JSON to FILE")
      .option("dump", "FILE", "write every intermediate tensor (codes) to an .npz")
      .option("threads", "N", "threads splitting each convolution of the fixed-point model (results do not depend on it)", "1")
      .flag("quiet", "print only the prediction line");
  if (!args.parse(argv)) {
    fmt::print("{}", args.help());
    return 0;
  }
  if (!args.positional().empty())
    throw InputError("capsgen golden", 0, 0, args.positional().front(), "unexpected argument");

  if (args.has("index") && !args.has("input") && !args.has("dataset"))
    throw InputError("capsgen golden", 0, 0, "--index", "needs --input or --dataset (the synthetic input is one image)");

  WorkloadSpec spec;
  spec.config_path = args.get("config");
  spec.model_path = args.get("model");
  spec.weights_path = args.get_opt("weights");
  spec.seed = std::uint64_t(args.get_int("seed", 0, (1LL << 62)));
  spec.calib_path = args.get_opt("calib");
  const auto dataset = args.get_opt("dataset");
  if (dataset && args.has("input"))
    throw InputError("capsgen golden", 0, 0, "--dataset", "give either --dataset or --input, not both");
  if (dataset && *dataset != "mnist" && *dataset != "fashion")
    throw InputError("capsgen golden", 0, 0, "--dataset", fmt::format("expected mnist or fashion, got '{}'", *dataset));
  if (args.has("squash-in-frac") && !(dataset && spec.weights_path))
    throw InputError("capsgen golden", 0, 0, "--squash-in-frac", "needs --dataset and --weights");
  const bool dataset_calib = dataset && spec.weights_path && !spec.calib_path;
  spec.calib_count = int(args.has("calib-count") ? args.get_int("calib-count", 1, 100000) : dataset_calib ? kDatasetCalibImages : kSyntheticCalibImages);
  const auto t0 = std::chrono::steady_clock::now();
  std::string calib_note;
  Workload w;
  if (dataset_calib) {
    DatasetWorkloadSpec ds;
    ds.config_path = spec.config_path;
    ds.model_path = spec.model_path;
    ds.weights_path = *spec.weights_path;
    ds.dataset = *dataset;
    ds.data_dir = args.get_opt("data-dir").value_or("");
    ds.calib_count = spec.calib_count;
    ds.squash_in_frac = args.get("squash-in-frac");
    w = prepare_dataset_workload(ds, &calib_note);
  } else {
    w = prepare_workload(spec);
  }

  GoldenRun run;
  run.workload = &w;
  FloatTensor input;
  if (dataset) {
    const Dataset test = load_dataset(*dataset, Split::Test, args.get_opt("data-dir").value_or(""));
    check_dataset_fits(test, w.net);
    const long long idx = args.get_int("index", 0, (long long)test.images.size() - 1);
    input = test.images[std::size_t(idx)];
    run.label = test.labels[std::size_t(idx)];
    run.input_source = fmt::format("{}[{}]", test.name, idx);
  } else if (auto path = args.get_opt("input")) {
    const auto images = load_inputs(*path, w.net);
    const long long idx = args.get_int("index", 0, (long long)images.size() - 1);
    input = images[std::size_t(idx)];
    run.input_source = fmt::format("{}[{}]", *path, idx);
  } else {
    input = random_input(w.net, spec.seed);
    run.input_source = fmt::format("synthetic(seed={})", spec.seed);
  }
  if (args.has("label")) run.label = int(args.get_int("label", 0, 1 << 20));
  const IntTensor codes = quantize_input(w.cfg, w.qm, w.net, input);
  const auto t1 = std::chrono::steady_clock::now();
  run.fixed = run_golden(w.cfg, w.net, w.qm, codes, &run.stats, int(args.get_int("threads", 1, 256)));
  const auto t2 = std::chrono::steady_clock::now();
  run.flt = run_float(w.net, w.weights, input);

  if (args.has("quiet")) {
    fmt::print("prediction {} (float {}){}\n", run.fixed.prediction, run.flt.prediction,
               run.label >= 0 ? fmt::format(", label {}", run.label) : "");
  } else {
    fmt::print("{}", golden_report_markdown(run));
    if (!calib_note.empty()) fmt::print("\n{}\n", calib_note);
    if (dataset)
      fmt::print("\n{} test image {}: predicted {} ({}), float {} ({}), true label {} ({}) -> {}\n", *dataset,
                 args.get("index"), run.fixed.prediction, class_name(*dataset, run.fixed.prediction), run.flt.prediction,
                 class_name(*dataset, run.flt.prediction), run.label, class_name(*dataset, run.label),
                 run.fixed.prediction == run.label ? "correct" : "WRONG");
    fmt::print("\ntime: prepare+calibrate {:.2f} s, golden inference {:.3f} s\n",
               std::chrono::duration<double>(t1 - t0).count(), std::chrono::duration<double>(t2 - t1).count());
  }
  // All reports or none (a bad --json path must not leave the --report behind).
  std::vector<std::pair<std::string, std::string>> outputs;
  if (auto path = args.get_opt("report")) outputs.emplace_back(*path, golden_report_markdown(run));
  if (auto path = args.get_opt("json")) outputs.emplace_back(*path, golden_report_json(run));
  if (auto path = args.get_opt("dump")) {
    std::map<std::string, FloatTensor> arrays;
    for (const auto& [name, t] : run.fixed.tensors) {
      FloatTensor f(t.shape);
      for (std::size_t i = 0; i < t.size(); ++i) f[i] = float(t[i]);
      arrays[name] = std::move(f);
    }
    outputs.emplace_back(*path, serialize_npz(arrays));
  }
  write_files_atomic(outputs);
  return 0;
}

}  // namespace capsgen::cli
