#include "golden/workload.hpp"

#include <fmt/format.h>

#include "golden/float_model.hpp"
#include "model/network_limits.hpp"

namespace capsgen {

Workload prepare_workload(AccelConfig cfg, Network net, WeightSet weights, std::string weights_source,
                          std::vector<FloatTensor> calib) {
  Workload w;
  w.cfg = std::move(cfg);
  w.net = std::move(net);
  w.weights = std::move(weights);
  w.weights_source = std::move(weights_source);
  w.calib = std::move(calib);
  for (const auto& img : w.calib) w.stats.observe(run_float(w.net, w.weights, img));
  w.qm = quantize_model(w.cfg, w.net, w.weights, w.stats);
  return w;
}

Workload prepare_workload(const WorkloadSpec& spec) {
  AccelConfig cfg = load_accel_config(spec.config_path);
  Network net = load_network(spec.model_path);
  check_runnable_network(net, "the golden model");  // before any weight is allocated
  WeightSet weights;
  std::string source;
  if (spec.weights_path) {
    weights = load_weights(*spec.weights_path, net);
    source = *spec.weights_path;
  } else {
    weights = random_weights(net, spec.seed);
    source = fmt::format("random(seed={})", spec.seed);
  }
  std::vector<FloatTensor> calib;
  if (spec.calib_path) {
    calib = load_inputs(*spec.calib_path, net);
    if (int(calib.size()) > spec.calib_count) calib.resize(std::size_t(spec.calib_count));
  } else {
    // Synthetic calibration images come from seeds the default test input (seed) does not use.
    for (int k = 0; k < spec.calib_count; ++k) calib.push_back(random_input(net, spec.seed * 1000003ULL + 17 + k));
  }
  return prepare_workload(std::move(cfg), std::move(net), std::move(weights), std::move(source), std::move(calib));
}

}  // namespace capsgen
