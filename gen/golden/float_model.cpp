#include "golden/float_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/input_error.hpp"

namespace capsgen {
namespace {

FloatTensor conv2d(const Layer& L, const FloatTensor& in, const FloatTensor& w, const FloatTensor* bias) {
  const int C = L.in.channels, H = L.in.height, W = L.in.width;
  const int K = L.out.capsules ? L.out_channels : L.out.channels;
  const int Ho = L.out.capsules ? (H + 2 * L.padding - L.kernel_h) / L.stride + 1 : L.out.height;
  const int Wo = L.out.capsules ? (W + 2 * L.padding - L.kernel_w) / L.stride + 1 : L.out.width;
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

  for (const Layer& L : net.layers) {
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
        FloatTensor b({I, J}, 0.0f), c({I, J}), s({J, D}), v({J, D});
        for (int r = 0; r < L.routing_iterations; ++r) {
          for (std::size_t i = 0; i < I; ++i) {
            double mx = opt.leaky_routing ? 0.0 : -1e300;
            for (std::size_t j = 0; j < J; ++j) mx = std::max(mx, double(b[i * J + j]));
            double sum = opt.leaky_routing ? std::exp(-mx) : 0.0;
            for (std::size_t j = 0; j < J; ++j) sum += std::exp(double(b[i * J + j]) - mx);
            for (std::size_t j = 0; j < J; ++j) c[i * J + j] = float(std::exp(double(b[i * J + j]) - mx) / sum);
          }
          tr.add(fmt::format("{}.iter{}.c", L.name, r), c);
          for (std::size_t j = 0; j < J; ++j)
            for (std::size_t d = 0; d < D; ++d) {
              double acc = 0;
              for (std::size_t i = 0; i < I; ++i) acc += double(c[i * J + j]) * uhat[(i * J + j) * D + d];
              s[j * D + d] = float(acc);
            }
          tr.add(fmt::format("{}.iter{}.s", L.name, r), s);
          v = s;
          for (std::size_t j = 0; j < J; ++j) squash_inplace(&v[j * D], int(D), opt);
          tr.add(fmt::format("{}.iter{}.v", L.name, r), v);
          if (r + 1 < L.routing_iterations) {
            for (std::size_t i = 0; i < I; ++i)
              for (std::size_t j = 0; j < J; ++j) {
                double a = 0;
                for (std::size_t d = 0; d < D; ++d) a += double(uhat[(i * J + j) * D + d]) * v[j * D + d];
                b[i * J + j] = float(b[i * J + j] + a);
              }
            tr.add(fmt::format("{}.iter{}.b", L.name, r), b);
          }
        }
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
    }
  }
  if (!tr.class_norms.empty())
    tr.prediction = int(std::max_element(tr.class_norms.begin(), tr.class_norms.end()) - tr.class_norms.begin());
  return tr;
}

}  // namespace capsgen
