// Float weights of a network keyed "<layer>.<param>" (docs/weights.md), and the inputs it runs on:
// loading from .npz/.npy with shape checks, and seeded random generation for tests.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "core/tensor.hpp"
#include "model/network.hpp"

namespace capsgen {

using WeightSet = std::map<std::string, FloatTensor>;

// Checks that `weights` holds every tensor the network expects, with the right shape, and finite
// values. Throws InputError naming `weights_file` and the key. Extra keys are allowed (a training
// checkpoint may carry a decoder) and listed by unused_weights().
void check_weights(const Network& net, const WeightSet& weights, const std::string& weights_file);
std::vector<std::string> unused_weights(const Network& net, const WeightSet& weights);

// Reads an .npz and checks it against the network.
WeightSet load_weights(const std::string& npz_path, const Network& net);

// Reads inputs from .npy: [N,C,H,W], [N,H,W] (one channel), [C,H,W] or [H,W]; returns one [C,H,W]
// tensor per image. Throws InputError naming the file if the shape does not fit the network.
std::vector<FloatTensor> load_inputs(const std::string& npy_path, const Network& net);

// Seeded random weights with per-layer scales that keep activations in a useful range
// (He-style conv init, class-capsule transforms scaled so that routing sums are O(1)).
WeightSet random_weights(const Network& net, std::uint64_t seed);

// Seeded synthetic input in [0,1]: a few thick random strokes on a dark background, so that the
// network sees image-like sparsity rather than white noise.
FloatTensor random_input(const Network& net, std::uint64_t seed);

}  // namespace capsgen
