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

// Dynamic routing (Sabour et al. 2017, procedure 1) of K inputs with one set of logits b [I, J]:
// K = 1 is the paper's procedure; K > 1 is PIM-CapsNet's batched routing (Algorithm 1), where the
// coupling coefficients are shared by the batch and b_ij += sum over the inputs k of uhat^k_j|i . v^k_j.
// uhats[k] is input k's prediction vectors [I, J, D]; the softmax runs over the J output capsules of
// each input capsule i; `bias` ([J, D], may be null) is added to every s_j. With `tr`, records c, s,
// v, b per iteration as "<name>.iter<r>.*" (K = 1). Returns each input's v [J, D].
std::vector<FloatTensor> routing_batch(const std::string& name, const std::vector<const FloatTensor*>& uhats,
                                       int iterations, const FloatTensor* bias, const FloatOptions& opt,
                                       FloatTrace* tr) {
  const std::size_t K = uhats.size(), I = uhats[0]->shape[0], J = uhats[0]->shape[1], D = uhats[0]->shape[2];
  FloatTensor b({I, J}, 0.0f), c({I, J}), s({J, D});
  std::vector<FloatTensor> v(K, FloatTensor({J, D}));
  for (int r = 0; r < iterations; ++r) {
    for (std::size_t i = 0; i < I; ++i) {
      double mx = opt.leaky_routing ? 0.0 : -1e300;
      for (std::size_t j = 0; j < J; ++j) mx = std::max(mx, double(b[i * J + j]));
      double sum = opt.leaky_routing ? std::exp(-mx) : 0.0;
      for (std::size_t j = 0; j < J; ++j) sum += std::exp(double(b[i * J + j]) - mx);
      for (std::size_t j = 0; j < J; ++j) c[i * J + j] = float(std::exp(double(b[i * J + j]) - mx) / sum);
    }
    if (tr) tr->add(fmt::format("{}.iter{}.c", name, r), c);
    for (std::size_t k = 0; k < K; ++k) {
      const FloatTensor& uhat = *uhats[k];
      for (std::size_t j = 0; j < J; ++j)
        for (std::size_t d = 0; d < D; ++d) {
          double acc = bias ? (*bias)[j * D + d] : 0.0;
          for (std::size_t i = 0; i < I; ++i) acc += double(c[i * J + j]) * uhat[(i * J + j) * D + d];
          s[j * D + d] = float(acc);
        }
      if (tr) tr->add(fmt::format("{}.iter{}.s", name, r), s);
      v[k] = s;
      for (std::size_t j = 0; j < J; ++j) squash_inplace(&v[k][j * D], int(D), opt);
      if (tr) tr->add(fmt::format("{}.iter{}.v", name, r), v[k]);
    }
    if (r + 1 < iterations) {
      for (std::size_t i = 0; i < I; ++i)
        for (std::size_t j = 0; j < J; ++j) {
          double a = 0;
          for (std::size_t k = 0; k < K; ++k)
            for (std::size_t d = 0; d < D; ++d) a += double((*uhats[k])[(i * J + j) * D + d]) * v[k][j * D + d];
          b[i * J + j] = float(b[i * J + j] + a);
        }
      if (tr) tr->add(fmt::format("{}.iter{}.b", name, r), b);
    }
  }
  return v;
}

FloatTensor routing(const std::string& name, const FloatTensor& uhat, int iterations, const FloatTensor* bias,
                    const FloatOptions& opt, FloatTrace& tr) {
  return routing_batch(name, {&uhat}, iterations, bias, opt, &tr)[0];
}

// ||v_j|| of every output capsule of v [J, D].
std::vector<double> capsule_norms(const FloatTensor& v) {
  const std::size_t J = v.shape[0], D = v.shape[1];
  std::vector<double> norms(J);
  for (std::size_t j = 0; j < J; ++j) {
    double sq = 0;
    for (std::size_t d = 0; d < D; ++d) sq += double(v[j * D + d]) * v[j * D + d];
    norms[j] = double(float(std::sqrt(sq)));
  }
  return norms;
}

int argmax(const std::vector<double>& x) { return int(std::max_element(x.begin(), x.end()) - x.begin()); }

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
        tr.class_norms = capsule_norms(v);
        FloatTensor norms({J});
        for (std::size_t j = 0; j < J; ++j) norms[j] = float(tr.class_norms[j]);
        tr.add(L.name + ".norm", norms);
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
  if (!tr.class_norms.empty()) tr.prediction = argmax(tr.class_norms);
  return tr;
}

std::vector<SharedRoutingResult> run_float_shared_routing(const Network& net, const WeightSet& weights,
                                                          const std::vector<FloatTensor>& inputs,
                                                          const FloatOptions& opt) {
  const Layer& L = shared_routing_layer(net);
  std::vector<FloatTrace> prefix;
  prefix.reserve(inputs.size());
  std::vector<const FloatTensor*> uhats;
  for (const FloatTensor& in : inputs) {
    prefix.push_back(run_float(net, weights, in, opt));
    uhats.push_back(&prefix.back().get(L.name + ".u_hat"));
  }
  std::vector<SharedRoutingResult> out;
  if (inputs.empty()) return out;
  for (const FloatTensor& v : routing_batch(L.name, uhats, L.routing_iterations, nullptr, opt, nullptr)) {
    SharedRoutingResult r;
    r.class_norms = capsule_norms(v);
    r.prediction = argmax(r.class_norms);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace capsgen
