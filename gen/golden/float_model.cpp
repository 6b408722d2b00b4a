#include "golden/float_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/input_error.hpp"

namespace capsgen {
namespace {

// Convolution of a [C,H,W] tensor with weights [K,C,kh,kw] (kernel, stride and padding of L).
FloatTensor conv2d(const Layer& L, const FloatTensor& in, const FloatTensor& w, const FloatTensor* bias) {
  const int C = int(in.shape[0]), H = int(in.shape[1]), W = int(in.shape[2]);
  const int K = int(w.shape[0]);
  const int Ho = (H + 2 * L.padding - L.kernel_h) / L.stride + 1;
  const int Wo = (W + 2 * L.padding - L.kernel_w) / L.stride + 1;
  FloatTensor out({std::size_t(K), std::size_t(Ho), std::size_t(Wo)});
  for (int k = 0; k < K; ++k)
    for (int y = 0; y < Ho; ++y)
      for (int x = 0; x < Wo; ++x) {
        double acc = bias ? (*bias)[std::size_t(k)] : 0.0;
        for (int c = 0; c < C; ++c)
          for (int ky = 0; ky < L.kernel_h; ++ky) {
            const int iy = y * L.stride + ky - L.padding;
            if (iy < 0 || iy >= H) continue;
            for (int kx = 0; kx < L.kernel_w; ++kx) {
              const int ix = x * L.stride + kx - L.padding;
              if (ix < 0 || ix >= W) continue;
              acc += double(w[((std::size_t(k) * C + c) * L.kernel_h + ky) * L.kernel_w + kx]) *
                     in[(std::size_t(c) * H + iy) * W + ix];
            }
          }
        out[(std::size_t(k) * Ho + y) * Wo + x] = float(acc);
      }
  return out;
}

void squash_inplace(float* v, int n, const FloatOptions& opt) {
  double sq = 0;
  for (int i = 0; i < n; ++i) sq += double(v[i]) * v[i];
  const double norm = opt.eps_inside_sqrt ? std::sqrt(sq + opt.squash_eps) : std::sqrt(sq) + opt.squash_eps;
  const double scale = norm > 0 ? sq / ((1.0 + sq) * norm) : 0.0;
  for (int i = 0; i < n; ++i) v[i] = float(v[i] * scale);
}

// Primary capsules from a conv output [T*D, H, W]: capsule i = t*H*W + y*W + x, element d from channel t*D + d.
FloatTensor to_capsules(const FloatTensor& conv, int types, int dim) {
  const std::size_t H = conv.shape[1], W = conv.shape[2];
  FloatTensor caps({std::size_t(types) * H * W, std::size_t(dim)});
  for (int t = 0; t < types; ++t)
    for (std::size_t y = 0; y < H; ++y)
      for (std::size_t x = 0; x < W; ++x)
        for (int d = 0; d < dim; ++d)
          caps[((t * H + y) * W + x) * dim + d] = conv[((std::size_t(t) * dim + d) * H + y) * W + x];
  return caps;
}

// A capsule grid [T*H*W, D] (capsule (t*H + y)*W + x) as the [T*D, H, W] tensor a convolution reads:
// channel t*D + d. A feature map [C,H,W] is already one (C types of one atom).
FloatTensor grid_to_channels(const FloatTensor& x, const TensorShape& s) {
  if (!s.capsules) return x;
  const std::size_t T = std::size_t(s.grid_types), D = std::size_t(s.dim), H = std::size_t(s.height),
                    W = std::size_t(s.width);
  FloatTensor out({T * D, H, W});
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t y = 0; y < H; ++y)
      for (std::size_t xx = 0; xx < W; ++xx)
        for (std::size_t d = 0; d < D; ++d) out[((t * D + d) * H + y) * W + xx] = x[((t * H + y) * W + xx) * D + d];
  return out;
}

// Dynamic routing (Sabour et al. 2017, procedure 1) over prediction vectors uhat [I, J, D]: the
// softmax runs over the J output capsules of each input capsule i. `bias` ([J, D], may be null) is
// added to every s_j. Records c, s, v, b per iteration as "<name>.iter<r>.*" and returns v [J, D].
FloatTensor routing(const std::string& name, const FloatTensor& uhat, int iterations, const FloatTensor* bias,
                    const FloatOptions& opt, FloatTrace& tr) {
  const std::size_t I = uhat.shape[0], J = uhat.shape[1], D = uhat.shape[2];
  FloatTensor b({I, J}, 0.0f), c({I, J}), s({J, D}), v({J, D});
  for (int r = 0; r < iterations; ++r) {
    for (std::size_t i = 0; i < I; ++i) {
      double mx = opt.leaky_routing ? 0.0 : -1e300;
      for (std::size_t j = 0; j < J; ++j) mx = std::max(mx, double(b[i * J + j]));
      double sum = opt.leaky_routing ? std::exp(-mx) : 0.0;
      for (std::size_t j = 0; j < J; ++j) sum += std::exp(double(b[i * J + j]) - mx);
      for (std::size_t j = 0; j < J; ++j) c[i * J + j] = float(std::exp(double(b[i * J + j]) - mx) / sum);
    }
    tr.add(fmt::format("{}.iter{}.c", name, r), c);
    for (std::size_t j = 0; j < J; ++j)
      for (std::size_t d = 0; d < D; ++d) {
        double acc = bias ? (*bias)[j * D + d] : 0.0;
        for (std::size_t i = 0; i < I; ++i) acc += double(c[i * J + j]) * uhat[(i * J + j) * D + d];
        s[j * D + d] = float(acc);
      }
    tr.add(fmt::format("{}.iter{}.s", name, r), s);
    v = s;
    for (std::size_t j = 0; j < J; ++j) squash_inplace(&v[j * D], int(D), opt);
    tr.add(fmt::format("{}.iter{}.v", name, r), v);
    if (r + 1 < iterations) {
      for (std::size_t i = 0; i < I; ++i)
        for (std::size_t j = 0; j < J; ++j) {
          double a = 0;
          for (std::size_t d = 0; d < D; ++d) a += double(uhat[(i * J + j) * D + d]) * v[j * D + d];
          b[i * J + j] = float(b[i * J + j] + a);
        }
      tr.add(fmt::format("{}.iter{}.b", name, r), b);
    }
  }
  return v;
}

}  // namespace

FloatTrace run_float(const Network& net, const WeightSet& weights, const FloatTensor& input_raw,
                     const FloatOptions& opt) {
  FloatTrace tr;
  require_capsnet_layers(net, "the float model");
  FloatTensor x = input_raw;
  if (x.shape.size() == 2) x.shape.insert(x.shape.begin(), 1);
  const Shape want{std::size_t(net.input.channels), std::size_t(net.input.height), std::size_t(net.input.width)};
  if (x.shape != want)
    throw InputError("", 0, 0, "input", fmt::format("shape {} does not match the network input {}",
                                                    shape_str(input_raw.shape), shape_str(want)));
  tr.add("input", x);
  auto w = [&](const Layer& L, const char* p) -> const FloatTensor& { return weights.at(L.name + "." + p); };

  // Every layer's output, for the layers that name their inputs (skips, concatenation).
  const FloatTensor net_input = x;
  std::vector<FloatTensor> outs(net.layers.size());
  auto produced = [&](int k) -> const FloatTensor& { return k < 0 ? net_input : outs[std::size_t(k)]; };
  for (std::size_t li = 0; li < net.layers.size(); ++li) {
    const Layer& L = net.layers[li];
    x = produced(L.input_layers.empty() ? int(li) - 1 : L.input_layers[0]);
    switch (L.kind) {
      default:  // pools, fc, grouped conv2d: rejected by require_capsnet_layers() above
        break;
      case LayerKind::Conv2d: {
        const FloatTensor* b = (L.bias && opt.use_bias) ? &w(L, "bias") : nullptr;
        x = conv2d(L, x, w(L, "weight"), b);
        if (L.activation == Activation::Relu)
          for (auto& v : x.data) v = std::max(v, 0.0f);
        tr.add(L.name + ".out", x);
        break;
      }
      case LayerKind::PrimaryCaps: {
        const FloatTensor* b = (L.bias && opt.use_bias) ? &w(L, "bias") : nullptr;
        FloatTensor s = to_capsules(conv2d(L, x, w(L, "weight"), b), L.capsule_types, L.capsule_dim);
        tr.add(L.name + ".s", s);
        for (std::size_t i = 0; i < s.shape[0]; ++i) squash_inplace(&s[i * s.shape[1]], L.capsule_dim, opt);
        x = s;
        tr.add(L.name + ".out", x);
        break;
      }
      case LayerKind::ClassCaps: {
        const FloatTensor& W = w(L, "W");
        const std::size_t I = x.shape[0], Din = x.shape[1], J = L.num_capsules, D = L.capsule_dim;
        FloatTensor uhat({I, J, D});
        for (std::size_t i = 0; i < I; ++i)
          for (std::size_t j = 0; j < J; ++j)
            for (std::size_t d = 0; d < D; ++d) {
              double acc = 0;
              for (std::size_t e = 0; e < Din; ++e) acc += double(W[((i * J + j) * D + d) * Din + e]) * x[i * Din + e];
              uhat[(i * J + j) * D + d] = float(acc);
            }
        tr.add(L.name + ".u_hat", uhat);
        const FloatTensor v = routing(L.name, uhat, L.routing_iterations, nullptr, opt, tr);
        x = v;
        tr.add(L.name + ".out", x);
        FloatTensor norms({J});
        for (std::size_t j = 0; j < J; ++j) {
          double sq = 0;
          for (std::size_t d = 0; d < D; ++d) sq += double(v[j * D + d]) * v[j * D + d];
          norms[j] = float(std::sqrt(sq));
        }
        tr.add(L.name + ".norm", norms);
        tr.class_norms.assign(norms.data.begin(), norms.data.end());
        break;
      }
      case LayerKind::ConvCaps2d: {
        // The capsule grid read as T_in*D_in channels, convolved, cut into capsules, squashed.
        const FloatTensor* b = (L.bias && opt.use_bias) ? &w(L, "bias") : nullptr;
        FloatTensor s = to_capsules(conv2d(L, grid_to_channels(x, L.in), w(L, "weight"), b), L.capsule_types,
                                    L.capsule_dim);
        tr.add(L.name + ".s", s);
        for (std::size_t i = 0; i < s.shape[0]; ++i) squash_inplace(&s[i * s.shape[1]], L.capsule_dim, opt);
        x = s;
        tr.add(L.name + ".out", x);
        break;
      }
      case LayerKind::ConvCaps3d: {
        // Votes: the one [T*D, D_in, kh, kw] kernel convolved over each input type's D_in atoms.
        // uhat[i][(t*Ho + y)*Wo + x][d]: input type i's vote for output capsule (t, y, x).
        const FloatTensor ch = grid_to_channels(x, L.in);
        const std::size_t I = L.in.capsules ? std::size_t(L.in.grid_types) : ch.shape[0];
        const std::size_t Din = ch.shape[0] / I, H = ch.shape[1], W = ch.shape[2];
        const std::size_t T = std::size_t(L.capsule_types), D = std::size_t(L.capsule_dim);
        const std::size_t P = std::size_t(L.out.height) * std::size_t(L.out.width);
        FloatTensor uhat({I, T * P, D});
        for (std::size_t i = 0; i < I; ++i) {
          FloatTensor slice({Din, H, W});
          std::copy(ch.data.begin() + std::ptrdiff_t(i * Din * H * W),
                    ch.data.begin() + std::ptrdiff_t((i + 1) * Din * H * W), slice.data.begin());
          const FloatTensor votes = to_capsules(conv2d(L, slice, w(L, "weight"), nullptr), int(T), int(D));
          std::copy(votes.data.begin(), votes.data.end(), uhat.data.begin() + std::ptrdiff_t(i * T * P * D));
        }
        tr.add(L.name + ".u_hat", uhat);
        // The bias [T, D] of each output type, repeated over the positions.
        FloatTensor bias({T * P, D}, 0.0f);
        const bool has_bias = L.bias && opt.use_bias;
        if (has_bias) {
          const FloatTensor& bt = w(L, "bias");
          for (std::size_t t = 0; t < T; ++t)
            for (std::size_t p = 0; p < P; ++p)
              for (std::size_t d = 0; d < D; ++d) bias[(t * P + p) * D + d] = bt[t * D + d];
        }
        x = routing(L.name, uhat, L.routing_iterations, has_bias ? &bias : nullptr, opt, tr);
        tr.add(L.name + ".out", x);
        break;
      }
      case LayerKind::CapsAdd: {
        FloatTensor sum = x;
        for (std::size_t r = 1; r < L.input_layers.size(); ++r) {
          const FloatTensor& o = produced(L.input_layers[r]);
          for (std::size_t k = 0; k < sum.size(); ++k) sum[k] += o[k];
        }
        x = sum;
        tr.add(L.name + ".out", x);
        break;
      }
      case LayerKind::FlattenCaps: {
        // Concatenation in the listed order; each input keeps its capsule order (type-major grids).
        FloatTensor cat({std::size_t(L.out.count), std::size_t(L.out.dim)});
        std::size_t at = 0;
        for (int k : L.input_layers) {
          const FloatTensor& o = produced(k);
          std::copy(o.data.begin(), o.data.end(), cat.data.begin() + std::ptrdiff_t(at));
          at += o.size();
        }
        x = cat;
        tr.add(L.name + ".out", x);
        break;
      }
    }
    outs[li] = x;
  }
  if (!tr.class_norms.empty())
    tr.prediction = int(std::max_element(tr.class_norms.begin(), tr.class_norms.end()) - tr.class_norms.begin());
  return tr;
}

}  // namespace capsgen
