// Golden-model throughput: fixed-point inferences per second (and the float reference's) for one
// network on one preset. Prints and writes machine-readable JSON.
//   build/bench/golden_bench [--config F] [--model F] [--runs N] [--json out.json]
#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "core/version.hpp"
#include "golden/fixed_model.hpp"
#include "golden/float_model.hpp"
#include "golden/workload.hpp"

using namespace capsgen;

int main(int argc, char** argv) {
  std::string config = "configs/capsacc-16x16.yaml", model = "models/capsnet-mnist.yaml", json_path;
  int runs = 10;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error("missing value for " + a);
      return argv[++i];
    };
    if (a == "--config") config = next();
    else if (a == "--model") model = next();
    else if (a == "--runs") runs = std::stoi(next());
    else if (a == "--json") json_path = next();
    else {
      fmt::print(stderr, "usage: golden_bench [--config F] [--model F] [--runs N] [--json out.json]\n");
      return 2;
    }
  }
  WorkloadSpec spec{config, model, std::nullopt, 1, std::nullopt, 2};
  const Workload w = prepare_workload(spec);
  std::vector<IntTensor> inputs;
  std::vector<FloatTensor> finputs;
  for (int k = 0; k < runs; ++k) {
    finputs.push_back(random_input(w.net, 100 + k));
    inputs.push_back(quantize_input(w.cfg, w.qm, w.net, finputs.back()));
  }
  using clock = std::chrono::steady_clock;
  GoldenStats st;
  int checksum = 0;
  run_golden(w.cfg, w.net, w.qm, inputs[0], &st);  // warm-up
  auto t0 = clock::now();
  for (int k = 0; k < runs; ++k) checksum += run_golden(w.cfg, w.net, w.qm, inputs[std::size_t(k)]).prediction;
  const double fixed_s = std::chrono::duration<double>(clock::now() - t0).count();
  t0 = clock::now();
  const int float_runs = std::max(1, runs / 2);
  for (int k = 0; k < float_runs; ++k) checksum += run_float(w.net, w.weights, finputs[std::size_t(k)]).prediction;
  const double float_s = std::chrono::duration<double>(clock::now() - t0).count();

  nlohmann::ordered_json j;
  j["benchmark"] = "golden_model";
  j["capsgen_version"] = kVersion;
  j["network"] = w.net.name;
  j["preset"] = w.cfg.name;
  j["runs"] = runs;
  j["macs_per_inference"] = st.macs;
  j["fixed_seconds_per_inference"] = fixed_s / runs;
  j["fixed_inferences_per_second"] = runs / fixed_s;
  j["fixed_gmacs_per_second"] = double(st.macs) * runs / fixed_s * 1e-9;
  j["float_seconds_per_inference"] = float_s / float_runs;
  j["float_inferences_per_second"] = float_runs / float_s;
  j["threads"] = 1;
  j["hardware_concurrency"] = std::thread::hardware_concurrency();
  j["prediction_checksum"] = checksum;
  const std::string text = j.dump(2) + "\n";
  fmt::print("{}", text);
  if (!json_path.empty()) std::ofstream(json_path) << text;
  return 0;
}
