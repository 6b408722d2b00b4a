#include "weights/weight_set.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/input_error.hpp"
#include "core/rng.hpp"
#include "weights/npy.hpp"

namespace capsgen {

void check_weights(const Network& net, const WeightSet& weights, const std::string& weights_file) {
  for (const auto& spec : expected_weights(net)) {
    auto it = weights.find(spec.key);
    if (it == weights.end())
      throw InputError(weights_file, 0, 0, spec.key,
                       fmt::format("missing (layer '{}' needs shape {})", spec.layer->name, shape_str(spec.shape)));
    if (it->second.shape != spec.shape)
      throw InputError(weights_file, 0, 0, spec.key,
                       fmt::format("shape {} does not match layer '{}' (expected {})", shape_str(it->second.shape),
                                   spec.layer->name, shape_str(spec.shape)));
    for (std::size_t i = 0; i < it->second.size(); ++i)
      if (!std::isfinite(it->second[i]))
        throw InputError(weights_file, 0, 0, spec.key,
                         fmt::format("non-finite value {} at index {}", it->second[i], index_str(spec.shape, i)));
  }
}

std::vector<std::string> unused_weights(const Network& net, const WeightSet& weights) {
  const auto specs = expected_weights(net);
  std::vector<std::string> out;
  for (const auto& [key, t] : weights)
    if (std::none_of(specs.begin(), specs.end(), [&](const WeightSpec& s) { return s.key == key; }))
      out.push_back(key);
  return out;
}

WeightSet load_weights(const std::string& npz_path, const Network& net) {
  WeightSet w = read_npz(npz_path);
  check_weights(net, w, npz_path);
  return w;
}

std::vector<FloatTensor> load_inputs(const std::string& npy_path, const Network& net) {
  FloatTensor t = read_npy(npy_path);
  const std::size_t C = net.input.channels, H = net.input.height, W = net.input.width;
  std::size_t n = 0;
  if (t.shape == Shape{C, H, W} || (C == 1 && t.shape == Shape{H, W}))
    n = 1;
  else if (t.shape.size() == 4 && t.shape[1] == C && t.shape[2] == H && t.shape[3] == W)
    n = t.shape[0];
  else if (C == 1 && t.shape.size() == 3 && t.shape[1] == H && t.shape[2] == W)
    n = t.shape[0];
  else
    throw InputError(npy_path, 0, 0, "shape",
                     fmt::format("{} does not hold inputs of the network '{}' ([N,{},{},{}] or [N,{},{}] expected)",
                                 shape_str(t.shape), net.name, C, H, W, H, W));
  std::vector<FloatTensor> out;
  const std::size_t per = C * H * W;
  for (std::size_t k = 0; k < n; ++k) {
    FloatTensor img({C, H, W});
    std::copy(t.data.begin() + std::ptrdiff_t(k * per), t.data.begin() + std::ptrdiff_t((k + 1) * per), img.data.begin());
    for (std::size_t i = 0; i < per; ++i)
      if (!std::isfinite(img[i]))
        throw InputError(npy_path, 0, 0, fmt::format("image {}", k), fmt::format("non-finite pixel at index {}", i));
    out.push_back(std::move(img));
  }
  return out;
}

WeightSet random_weights(const Network& net, std::uint64_t seed) {
  Rng rng(seed);
  WeightSet w;
  for (const auto& spec : expected_weights(net)) {
    FloatTensor t(spec.shape);
    const Layer& L = *spec.layer;
    double sigma = 0.0;
    if (spec.key == L.name + ".bias") {
      sigma = 0.02;
    } else if (L.kind == LayerKind::ClassCaps) {
      // u_i has |u| < 1; s_j sums I predictions weighted by c ~ 1/J. Scaling by sqrt(J / I)
      // keeps |s_j| around 1, where squash is most sensitive.
      const double I = double(spec.shape[0]), J = double(spec.shape[1]), D = double(spec.shape[2]);
      sigma = 0.5 * J / (std::sqrt(I) * 0.5 * std::sqrt(D));
    } else if (L.kind == LayerKind::ConvCaps2d || L.kind == LayerKind::ConvCaps3d) {
      // A chain of squashed layers keeps its scale only if |s| = g |u| |s|^2 / (1 + |s|^2) has a
      // stable fixed point, i.e. for gain g > 2 (He's sqrt(2) lets capsules shrink to zero over the
      // 16 layers of DeepCaps): g = 3 settles at |s| ~ 2.6, |v| ~ 0.87.
      const double fan_in = double(spec.shape[1] * spec.shape[2] * spec.shape[3]);
      sigma = 3.0 / std::sqrt(fan_in);
      // conv_caps3d votes use the same gain: scaling them up to make the first iteration's s (spread
      // over T*H'*W' outputs) of order one drives the logits b = u_hat . v far outside the softmax
      // unit's input range within one update.
    } else {
      double fan_in = 1.0;  // conv [out, in, kh, kw] and fc [out, in] weights
      for (std::size_t d = 1; d < spec.shape.size(); ++d) fan_in *= double(spec.shape[d]);
      sigma = std::sqrt(2.0 / fan_in);
    }
    for (auto& v : t.data) v = float(sigma * rng.normal());
    w[spec.key] = std::move(t);
  }
  return w;
}

FloatTensor random_input(const Network& net, std::uint64_t seed) {
  Rng rng(seed ^ 0x5eedf00dULL);
  const int C = net.input.channels, H = net.input.height, W = net.input.width;
  FloatTensor img({std::size_t(C), std::size_t(H), std::size_t(W)}, 0.0f);
  const int strokes = 2 + int(rng.range(0, 2));
  const double thick = std::max(0.8, std::min(H, W) / 14.0);
  for (int s = 0; s < strokes; ++s) {
    double x0 = rng.uniform(0.2, 0.8) * W, y0 = rng.uniform(0.15, 0.85) * H;
    double x1 = rng.uniform(0.2, 0.8) * W, y1 = rng.uniform(0.15, 0.85) * H;
    for (int c = 0; c < C; ++c)
      for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x) {
          // Distance from pixel centre to the segment; intensity falls off past `thick`.
          const double px = x + 0.5, py = y + 0.5, dx = x1 - x0, dy = y1 - y0;
          const double len2 = dx * dx + dy * dy;
          const double u = len2 > 0 ? std::clamp(((px - x0) * dx + (py - y0) * dy) / len2, 0.0, 1.0) : 0.0;
          const double d = std::hypot(px - (x0 + u * dx), py - (y0 + u * dy));
          const double v = std::clamp(1.5 - d / thick, 0.0, 1.0);
          float& p = img[(std::size_t(c) * H + y) * W + x];
          p = std::max(p, float(v));
        }
  }
  return img;
}

}  // namespace capsgen
