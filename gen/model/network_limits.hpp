// Caps on network descriptions (docs/limits.md).
#pragma once

#include <string>

#include "model/network.hpp"

namespace capsgen {

// Caps every description is held to when it is read: they keep every size product inside int and
// every layer's weights countable, whatever the later use.
constexpr int kMaxFeatureDim = 65536;          // input/output height, width and channels; kernel sides
constexpr int kMaxCapsuleDim = 256;            // capsule_dim
constexpr int kMaxRoutingIterations = 32;      // routing_iterations
constexpr int kMaxCount = 1 << 24;             // out_features, num_capsules, capsule_types
constexpr long long kMaxElements = 1LL << 31;  // elements of any one tensor (exclusive)

// What the golden model, compile and sim allocate for a network: its weights and its largest
// tensor, in elements. Capped by input_limits().max_model_elements (--max-model-elements), and
// capsnet layers only (require_capsnet_layers). Throws InputError naming the file, the layer's line
// and the field; called by capsgen validate and before any weight is allocated.
void check_runnable_network(const Network& net, const std::string& who);

}  // namespace capsgen
