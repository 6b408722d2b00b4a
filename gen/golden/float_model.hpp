// Float reference model of a capsule network (Sabour et al. 2017 semantics by default).
// Used for calibration and for accuracy comparisons against the fixed-point golden model.
#pragma once

#include <map>
#include <string>

#include "core/tensor.hpp"
#include "golden/shared_routing.hpp"
#include "golden/trace.hpp"
#include "model/network.hpp"
#include "weights/weight_set.hpp"

namespace capsgen {

// Where published CapsNet implementations differ, these select the variant (docs/golden.md).
struct FloatOptions {
  // Squash: v = s * |s|^2 / ((1 + |s|^2) * (|s| + eps)). eps = 0 is the paper's formula
  // (v = 0 for s = 0); common PyTorch ports use 1e-8 inside a sqrt, TensorFlow ports 1e-7 / 1e-9.
  double squash_eps = 0.0;
  bool eps_inside_sqrt = false;  // |s| computed as sqrt(|s|^2 + eps) instead of |s| + eps
  bool use_bias = true;          // conv biases (the paper's Conv1 and PrimaryCaps have them)
  // Leaky routing (Sabour et al. 2018 'Matrix capsules' / many ports): softmax over J+1 logits,
  // the extra one fixed at 0, whose share is dropped.
  bool leaky_routing = false;
};

// Runs one inference. `input` is [C,H,W] (or [H,W] for one channel).
FloatTrace run_float(const Network& net, const WeightSet& weights, const FloatTensor& input,
                     const FloatOptions& opt = {});

// The inputs as one batch with PIM-CapsNet's shared routing logits (golden/shared_routing.hpp): each
// input's class norms and prediction. An empty batch gives no results.
std::vector<SharedRoutingResult> run_float_shared_routing(const Network& net, const WeightSet& weights,
                                                          const std::vector<FloatTensor>& inputs,
                                                          const FloatOptions& opt = {});

}  // namespace capsgen
