// PIM-CapsNet's batched routing (its Algorithm 1, docs/pim-capsnet.md "Batch-shared routing"): the
// inputs of a batch share one set of routing logits b_ij, so every input's coupling coefficients
// depend on the whole batch: b_ij += sum over the batch's inputs k of uhat^k_j|i . v^k_j. The float
// and the fixed-point models implement it for the routing of the network's last layer, a class-capsule
// layer (run_float_shared_routing, GoldenModel::run_shared_routing); every layer before it runs per
// input. With a batch of one it is the per-input routing.
#pragma once

#include <vector>

#include "core/tensor.hpp"
#include "model/network.hpp"

namespace capsgen {

struct SharedRoutingResult {
  std::vector<double> class_norms;  // real-valued ||v_j|| of the class capsules
  int prediction = -1;              // the largest norm's class (ties: the lowest index)
  IntTensor norm_codes;             // the class norms as codes (fixed point; empty for the float model)
};

// The layer whose routing is shared: the network's last layer, which must be a class-capsule layer
// (InputError naming the network otherwise).
const Layer& shared_routing_layer(const Network& net);

}  // namespace capsgen
