// Shared by capsgen accuracy and capsgen golden --dataset: a workload whose calibration images come
// from the training split of a real data set, and the squash-input format choice from calibration.
#pragma once

#include <string>

#include "data/dataset.hpp"
#include "golden/workload.hpp"

namespace capsgen::cli {

struct DatasetWorkloadSpec {
  std::string config_path, model_path, weights_path;
  std::string dataset;     // mnist | fashion
  std::string data_dir;    // empty: default location
  int calib_count = kDatasetCalibImages;  // training images used for calibration (evenly spaced)
  std::string squash_in_frac = "preset";  // preset | auto | maxabs | an integer
};

// check_images_fit for a network: the data set's images must be the network's [C,H,W] input.
inline void check_dataset_fits(const Dataset& ds, const Network& net) {
  check_images_fit(ds, {std::size_t(net.input.channels), std::size_t(net.input.height), std::size_t(net.input.width)},
                   "'" + net.name + "' (" + net.source_path + ")");
}

// Loads preset, network, weights and calibration images; quantizes. Returns the workload and
// writes a one-line description of the calibration choices to *note.
Workload prepare_dataset_workload(const DatasetWorkloadSpec& spec, std::string* note);

// The squash input format from calibration, "maxabs": the largest fraction bit count such that the
// largest squash input seen (primary capsules and every routing iteration) fits widths.act bits.
int maxabs_squash_in_frac(const Workload& w);
// "auto": of maxabs .. maxabs+4, the format whose fixed-point class norms are closest to the float
// model's (mean over the calibration images of the summed |difference|). *why lists the candidates
// with that error and their agreement with the float prediction.
int auto_squash_in_frac(const Workload& w, std::string* why);

}  // namespace capsgen::cli
