// Quantization of a float network to the accelerator's fixed-point formats: per-layer fraction bits
// chosen from the weights and from calibration inputs, and the scaling shifts the hardware applies.
// The resulting QuantizedModel is everything the golden model (and later the compiler) needs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/accel_config.hpp"
#include "core/tensor.hpp"
#include "golden/float_model.hpp"
#include "model/network.hpp"
#include "numerics/activation.hpp"

namespace capsgen {

// Formats of one layer. "frac" = fraction bits of a two's-complement code (value = code / 2^frac).
struct LayerQuant {
  std::string name;
  int in_frac = 0;   // format of this layer's input activations
  int w_frac = 0;    // format of its weights
  int out_frac = 0;  // format of its output activations (conv2d, primary_caps: pre-squash s)
  int shift = 0;     // reduction shift: in_frac + w_frac - out_frac (>= 0)
  int next_frac = 0; // format of the activations the layer hands on (its ".out" tensor)
  IntTensor weight;                 // weight codes, shape of the float weights
  std::vector<std::int64_t> bias;   // bias codes in the accumulator format (frac in+w), may be empty;
                                    // conv_caps3d: [T*D] codes of the s accumulator (frac coupling+u)
  // caps_add, flatten_caps: out_frac is the format of the sum / concatenation; no weights.

  // class_caps and conv_caps3d (docs/numerics.md, "Dynamic routing")
  int u_frac = 0;        // prediction vectors u_hat (== out_frac)
  int s_shift = 0;       // s = reduce(sum_i c*u_hat, s_shift) -> squash input format
  int b_shift = 0;       // b = reduce(b << b_shift + u_hat . v, b_shift) -> softmax input format
  int norm_shift = 0;    // sum-of-squares shift of the final norm (even)
  int norm_frac = 0;     // fraction bits of the final norm codes
};

struct QuantizedModel {
  int input_frac = 7;
  std::vector<LayerQuant> layers;  // one per network layer, same order
  fx::ActParams act;
  std::vector<std::uint32_t> sqrt_lut, squash_lut, exp_lut;
};

// Largest absolute value of each calibrated tensor, over a set of float inferences.
struct CalibrationStats {
  std::vector<std::pair<std::string, double>> max_abs;
  void observe(const FloatTrace& tr);
  double get(const std::string& name) const;  // 0 if never observed
};

// Largest fraction bit count f such that max_abs * 2^f fits `bits` signed bits, clamped to [lo, hi].
int choose_frac(double max_abs, int bits, int lo, int hi);

// Builds the fixed-point model: weight codes, bias codes, per-layer formats and shifts, LUTs.
QuantizedModel quantize_model(const AccelConfig& cfg, const Network& net, const WeightSet& weights,
                              const CalibrationStats& stats);

// Input image codes: value in [0,1] (or [-1,1)) with input_frac fraction bits, act-width.
IntTensor quantize_input(const AccelConfig& cfg, const QuantizedModel& qm, const Network& net,
                         const FloatTensor& input);

}  // namespace capsgen
