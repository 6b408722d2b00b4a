// Everything one inference run needs, prepared the same way by every command, test and benchmark:
// preset + network + float weights (file or seeded random) + calibration + quantized model.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/accel_config.hpp"
#include "golden/quant.hpp"
#include "model/network.hpp"
#include "weights/weight_set.hpp"

namespace capsgen {

// The calibration rule every command shares for the same inputs, so that golden, compile and sim
// quantize a network identically and agree tensor for tensor: synthetic calibration images (seeded
// from --seed) unless a data set is given, then evenly spaced images of its training split.
constexpr int kSyntheticCalibImages = 4;
constexpr int kDatasetCalibImages = 32;

struct WorkloadSpec {
  std::string config_path;
  std::string model_path;
  std::optional<std::string> weights_path;  // .npz; seeded random weights when absent
  std::uint64_t seed = 1;                   // random weights and synthetic inputs
  std::optional<std::string> calib_path;    // .npy calibration images; synthetic ones when absent
  int calib_count = kSyntheticCalibImages;  // images used for calibration
};

struct Workload {
  AccelConfig cfg;
  Network net;
  WeightSet weights;
  std::string weights_source;  // file name or "random(seed=N)"
  std::vector<FloatTensor> calib;
  CalibrationStats stats;
  QuantizedModel qm;
};

// The loaders' InputErrors pass through (they name file, line and field).
Workload prepare_workload(const WorkloadSpec& spec);

// Same, from already-loaded parts (tests build configs in memory).
Workload prepare_workload(AccelConfig cfg, Network net, WeightSet weights, std::string weights_source,
                          std::vector<FloatTensor> calib);

}  // namespace capsgen
