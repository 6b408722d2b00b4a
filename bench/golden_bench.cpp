// Golden-model throughput: fixed-point images per second at batch 1 (one image at a time, each
// convolution split over T threads) and batched (one image per thread), for each thread count of
// --threads; optionally the float reference's. Prints and writes machine-readable JSON.
//   build/bench/golden_bench [--config F] [--model F] [--runs N] [--threads 1,2] [--no-float] [--json out.json]
// bench/golden_vs_pytorch.sh runs it interleaved with PyTorch on the same network.
#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

#include "core/version.hpp"
#include "golden/fixed_model.hpp"
#include "golden/float_model.hpp"
#include "golden/workload.hpp"

using namespace capsgen;

namespace {

struct Options {
  std::string config = "configs/capsacc-16x16.yaml", model = "models/capsnet-mnist.yaml", json_path;
  int runs = 10;
  std::vector<int> threads{1, 2};
  bool with_float = true;
};

std::vector<int> parse_int_list(const std::string& text) {
  std::vector<int> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) out.push_back(std::stoi(item));
  return out;
}

bool parse_options(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error("missing value for " + a);
      return argv[++i];
    };
    if (a == "--config") o.config = next();
    else if (a == "--model") o.model = next();
    else if (a == "--runs") o.runs = std::stoi(next());
    else if (a == "--threads") o.threads = parse_int_list(next());
    else if (a == "--no-float") o.with_float = false;
    else if (a == "--json") o.json_path = next();
    else return false;
  }
  return o.runs > 0 && !o.threads.empty();
}

template <typename Fn>
double seconds_of(const Fn& fn) {
  const auto t0 = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string load_average() {
  std::ifstream f("/proc/loadavg");
  std::string one, five, fifteen;
  f >> one >> five >> fifteen;
  return one + " " + five + " " + fifteen;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse_options(argc, argv, o)) {
    fmt::print(stderr,
               "usage: golden_bench [--config F] [--model F] [--runs N] [--threads 1,2] [--no-float] [--json out.json]\n");
    return 2;
  }
  WorkloadSpec spec{o.config, o.model, std::nullopt, 1, std::nullopt, 2};
  const Workload w = prepare_workload(spec);
  std::vector<IntTensor> inputs;
  std::vector<FloatTensor> finputs;
  for (int k = 0; k < o.runs; ++k) {
    finputs.push_back(random_input(w.net, 100 + k));
    inputs.push_back(quantize_input(w.cfg, w.qm, w.net, finputs.back()));
  }
  nlohmann::ordered_json j;
  j["benchmark"] = "golden_model";
  j["capsgen_version"] = kVersion;
  j["network"] = w.net.name;
  j["preset"] = w.cfg.name;
  j["runs"] = o.runs;
  j["load_average_before"] = load_average();

  GoldenStats st;
  const GoldenModel model(w.cfg, w.net, w.qm);
  model.run(inputs[0], &st);  // warm-up
  j["macs_per_inference"] = st.macs;
  int checksum = 0;
  nlohmann::ordered_json fixed = nlohmann::ordered_json::array();
  for (const int t : o.threads) {
    const double batch1 = seconds_of([&] {
      for (const IntTensor& in : inputs) checksum += model.run(in, nullptr, t).prediction;
    });
    const double batched = seconds_of([&] {
      for (const FixedTrace& tr : model.run_batch(inputs, nullptr, t)) checksum += tr.prediction;
    });
    fixed.push_back({{"threads", t},
                     {"batch1_images_per_second", o.runs / batch1},
                     {"batch1_gmacs_per_second", double(st.macs) * o.runs / batch1 * 1e-9},
                     {"batched_images_per_second", o.runs / batched}});
  }
  j["fixed"] = fixed;
  // run_golden() packs the weights on every call (what one-off callers pay).
  const int unpacked_runs = std::max(1, o.runs / 2);
  const double unpacked = seconds_of([&] {
    for (int k = 0; k < unpacked_runs; ++k) checksum += run_golden(w.cfg, w.net, w.qm, inputs[std::size_t(k)]).prediction;
  });
  j["run_golden_images_per_second"] = unpacked_runs / unpacked;
  if (o.with_float) {
    const int float_runs = std::max(1, o.runs / 2);
    const double float_s = seconds_of([&] {
      for (int k = 0; k < float_runs; ++k) checksum += run_float(w.net, w.weights, finputs[std::size_t(k)]).prediction;
    });
    j["float_seconds_per_inference"] = float_s / float_runs;
    j["float_inferences_per_second"] = float_runs / float_s;
  }
  j["hardware_concurrency"] = std::thread::hardware_concurrency();
  j["load_average_after"] = load_average();
  j["prediction_checksum"] = checksum;
  const std::string text = j.dump(2) + "\n";
  fmt::print("{}", text);
  if (!o.json_path.empty()) std::ofstream(o.json_path) << text;
  return 0;
}
