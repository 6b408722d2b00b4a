#include "golden/fixed_model.hpp"

#include <fmt/format.h>

#include <atomic>
#include <stdexcept>
#include <thread>

#include "golden/chunked_dot.hpp"
#include "numerics/activation.hpp"
#include "numerics/fixed.hpp"

namespace capsgen {
namespace {

ChunkContract chunk_contract(const AccelConfig& cfg, int shift) {
  ChunkContract cc;
  cc.rows = cfg.array.rows, cc.psum_bits = cfg.widths.psum, cc.out_bits = cfg.widths.act, cc.shift = shift;
  cc.data_bits = cfg.widths.data, cc.weight_bits = cfg.widths.weight;
  return cc;
}

bool is_convolution(LayerKind k) {
  return k == LayerKind::Conv2d || k == LayerKind::PrimaryCaps || k == LayerKind::ConvCaps2d ||
         k == LayerKind::ConvCaps3d;
}

// The convolution of layer L over `in` [C,H,W] (docs/numerics.md, "Fast convolution kernel").
IntTensor conv_fixed(const AccelConfig& cfg, const Layer& L, const IntTensor& weight,
                     const std::vector<std::int64_t>& bias, int shift, const IntTensor& in, int Ho, int Wo,
                     const PackedConvWeights& packed, int threads, GoldenStats& st) {
  ConvShape s;
  s.in_channels = int(in.shape[0]), s.in_height = int(in.shape[1]), s.in_width = int(in.shape[2]);
  s.kernel_h = L.kernel_h, s.kernel_w = L.kernel_w, s.stride = L.stride, s.padding = L.padding;
  s.out_channels = int(weight.shape[0]), s.out_height = Ho, s.out_width = Wo;
  const ChunkContract cc = chunk_contract(cfg, shift);
  return conv_chunked(s, cc, weight, bias, in, st, threads, ConvPath::Auto, packed.codes.empty() ? nullptr : &packed);
}

// Capsule grid [T*H*W, D] -> [T*D, H, W] channels (channel t*D + d); feature maps pass unchanged.
IntTensor grid_to_channels(const IntTensor& x, const TensorShape& s) {
  if (!s.capsules) return x;
  const std::size_t T = std::size_t(s.grid_types), D = std::size_t(s.dim), H = std::size_t(s.height),
                    W = std::size_t(s.width);
  IntTensor out({T * D, H, W});
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t y = 0; y < H; ++y)
      for (std::size_t xx = 0; xx < W; ++xx)
        for (std::size_t d = 0; d < D; ++d) out[((t * D + d) * H + y) * W + xx] = x[((t * H + y) * W + xx) * D + d];
  return out;
}

// Conv output [T*D, Ho, Wo] -> capsules [T*Ho*Wo, D] (capsule (t*Ho + y)*Wo + x, element channel t*D + d).
IntTensor channels_to_grid(const IntTensor& conv, int T, int D) {
  const std::size_t Ho = conv.shape[1], Wo = conv.shape[2];
  IntTensor s({std::size_t(T) * Ho * Wo, std::size_t(D)});
  for (std::size_t t = 0; t < std::size_t(T); ++t)
    for (std::size_t y = 0; y < Ho; ++y)
      for (std::size_t xx = 0; xx < Wo; ++xx)
        for (std::size_t d = 0; d < std::size_t(D); ++d)
          s[((t * Ho + y) * Wo + xx) * D + d] = conv[((t * D + d) * Ho + y) * Wo + xx];
  return s;
}

void squash_rows(const fx::ActParams& ap, const QuantizedModel& qm, const IntTensor& s, IntTensor& u) {
  const std::size_t D = s.shape[1];
  std::vector<std::int64_t> in(D), o(D);
  for (std::size_t i = 0; i < s.shape[0]; ++i) {
    for (std::size_t d = 0; d < D; ++d) in[d] = s[i * D + d];
    fx::squash(ap, qm.sqrt_lut, qm.squash_lut, in.data(), int(D), o.data());
    for (std::size_t d = 0; d < D; ++d) u[i * D + d] = std::int32_t(o[d]);
  }
}

// s_j = reduce(bias_j + sum_i c_ij * u_hat_j|i) for every element o = j*D + d: the terms, order and
// chunks of one dot_chunked() over i per element, but all elements at once, so that u_hat is read
// row by row. c [I, J], u_hat [I, J, D]; writes s [J, D].
void routing_sums(const IntTensor& c, const IntTensor& uhat, const std::vector<std::int64_t>& bias, int rows,
                  int psum_bits, int shift, int out_bits, IntTensor& s, GoldenStats& st) {
  const std::size_t I = uhat.shape[0], J = uhat.shape[1], D = uhat.shape[2], O = J * D;
  std::vector<std::int64_t> acc(O), part(O);
  for (std::size_t o = 0; o < O; ++o) acc[o] = fx::sat_s(bias.empty() ? 0 : bias[o], psum_bits);
  for (std::size_t base = 0; base < I; base += std::size_t(rows)) {
    std::fill(part.begin(), part.end(), 0);
    for (std::size_t i = base; i < std::min(I, base + std::size_t(rows)); ++i)
      for (std::size_t j = 0; j < J; ++j) {
        const std::int64_t cij = c[i * J + j];
        for (std::size_t d = 0; d < D; ++d) part[j * D + d] += cij * uhat[i * O + j * D + d];
      }
    for (std::size_t o = 0; o < O; ++o) {
      const std::int64_t sum = acc[o] + part[o];
      if (!fx::fits_s(sum, psum_bits)) ++st.psum_saturations;
      acc[o] = fx::sat_s(sum, psum_bits);
    }
  }
  st.macs += static_cast<long long>(I * O);
  for (std::size_t o = 0; o < O; ++o) s[o] = reduce_out(acc[o], shift, out_bits, st);
}

// Dynamic routing of K inputs with one set of logits b [I, J] (docs/numerics.md, "Dynamic routing";
// K > 1: PIM-CapsNet's batch-shared routing, golden/shared_routing.hpp). Softmax over the J outputs of
// each input capsule i, shared by the inputs; per input k s^k_j = reduce(bias_j + sum_i c_ij *
// uhat^k_ij, s_shift) and v^k_j = squash(s^k_j); b_ij = reduce(b_ij << b_shift + the dot product of the
// K inputs' uhat^k_ij with their v^k_j, b_shift): one accumulation over D*K terms in the array's chunks,
// term d*K + k the product of atom d of input k (the compiler's interleaved u_hat and v; for K = 1 the
// per-input update). `bias` holds [J*D] accumulator codes (frac
// coupling + u) or is empty. With `tr`, records c, s, v, b per iteration (K = 1). Returns each v [J, D].
std::vector<IntTensor> routing_fixed_batch(const AccelConfig& cfg, const QuantizedModel& qm, const std::string& name,
                                           const std::vector<const IntTensor*>& uhats, int iterations,
                                           const std::vector<std::int64_t>& bias, int s_shift, int b_shift,
                                           FixedTrace* tr, GoldenStats& st) {
  const fx::ActParams& ap = qm.act;
  const int A = cfg.widths.act, P = cfg.widths.psum, rows = cfg.array.rows;
  const std::size_t K = uhats.size();
  const int I = int(uhats[0]->shape[0]), J = int(uhats[0]->shape[1]), D = int(uhats[0]->shape[2]);
  IntTensor b({std::size_t(I), std::size_t(J)}, 0), c({std::size_t(I), std::size_t(J)});
  IntTensor s({std::size_t(J), std::size_t(D)});
  std::vector<IntTensor> v(K, IntTensor({std::size_t(J), std::size_t(D)}));
  std::vector<std::int64_t> vin(std::size_t(std::max(J, D))), vout(vin.size());
  std::vector<std::int32_t> cat_u(K * std::size_t(D)), cat_v(K * std::size_t(D));
  // CapsAcc's shortcut: with b = 0 the first softmax is the same for every input capsule, so the
  // accelerator loads it as a constant instead of computing it. It is the softmax unit's output
  // for an all-zero vector, so the shortcut is exact.
  std::vector<std::int64_t> zeros(static_cast<std::size_t>(J), 0), c_init(static_cast<std::size_t>(J));
  fx::softmax(ap, qm.exp_lut, zeros.data(), J, c_init.data());
  for (int r = 0; r < iterations; ++r) {
    for (int i = 0; i < I; ++i) {
      if (r == 0) {
        for (int j = 0; j < J; ++j) c[std::size_t(i) * J + j] = std::int32_t(c_init[std::size_t(j)]);
      } else {
        for (int j = 0; j < J; ++j) vin[std::size_t(j)] = b[std::size_t(i) * J + j];
        fx::softmax(ap, qm.exp_lut, vin.data(), J, vout.data());
        for (int j = 0; j < J; ++j) c[std::size_t(i) * J + j] = std::int32_t(vout[std::size_t(j)]);
      }
    }
    if (tr) tr->add(fmt::format("{}.iter{}.c", name, r), c);
    for (std::size_t k = 0; k < K; ++k) {
      routing_sums(c, *uhats[k], bias, rows, P, s_shift, A, s, st);
      if (tr) tr->add(fmt::format("{}.iter{}.s", name, r), s);
      for (int j = 0; j < J; ++j) {
        for (int d = 0; d < D; ++d) vin[std::size_t(d)] = s[std::size_t(j) * D + d];
        fx::squash(ap, qm.sqrt_lut, qm.squash_lut, vin.data(), D, vout.data());
        for (int d = 0; d < D; ++d) v[k][std::size_t(j) * D + d] = std::int32_t(vout[std::size_t(d)]);
      }
      if (tr) tr->add(fmt::format("{}.iter{}.v", name, r), v[k]);
    }
    if (r + 1 < iterations) {
      // b_ij += sum_k u_hat^k_j|i . v^k_j: the accumulator is loaded with b_ij << b_shift, then reduced.
      for (int i = 0; i < I; ++i)
        for (int j = 0; j < J; ++j) {
          const std::int64_t init = std::int64_t(b[std::size_t(i) * J + j]) << b_shift;
          const std::size_t at = (std::size_t(i) * J + j) * D;
          std::int64_t acc;
          if (K == 1) {
            acc = dot_chunked(&(*uhats[0])[at], &v[0][std::size_t(j) * D], D, rows, P, init, st);
          } else {
            for (std::size_t k = 0; k < K; ++k)
              for (int d = 0; d < D; ++d) {
                cat_u[std::size_t(d) * K + k] = (*uhats[k])[at + d];
                cat_v[std::size_t(d) * K + k] = v[k][std::size_t(j) * D + d];
              }
            acc = dot_chunked(cat_u.data(), cat_v.data(), int(K) * D, rows, P, init, st);
          }
          b[std::size_t(i) * J + j] = reduce_out(acc, b_shift, A, st);
        }
      if (tr) tr->add(fmt::format("{}.iter{}.b", name, r), b);
    }
  }
  return v;
}

IntTensor routing_fixed(const AccelConfig& cfg, const QuantizedModel& qm, const std::string& name,
                        const IntTensor& uhat, int iterations, const std::vector<std::int64_t>& bias, int s_shift,
                        int b_shift, FixedTrace& tr, GoldenStats& st) {
  return routing_fixed_batch(cfg, qm, name, {&uhat}, iterations, bias, s_shift, b_shift, &tr, st)[0];
}

// The class norms of v [J, D] (fx::norm with the layer's shift) and the largest one's class (ties:
// the lowest index): codes, real values and the prediction.
struct ClassNorms {
  IntTensor codes;
  std::vector<double> real;
  int prediction = 0;
};

ClassNorms class_norms_fixed(const QuantizedModel& qm, const LayerQuant& q, const IntTensor& v) {
  const int J = int(v.shape[0]), D = int(v.shape[1]);
  std::vector<std::int64_t> vin(static_cast<std::size_t>(D));
  ClassNorms out{IntTensor({std::size_t(J)}), std::vector<double>(std::size_t(J), 0.0), 0};
  for (int j = 0; j < J; ++j) {
    for (int d = 0; d < D; ++d) vin[std::size_t(d)] = v[std::size_t(j) * D + d];
    const fx::NormResult nr = fx::norm(qm.act, qm.sqrt_lut, vin.data(), D, q.norm_shift);
    out.codes[std::size_t(j)] = std::int32_t(nr.norm);
    out.real[std::size_t(j)] = fx::dequantize(nr.norm, q.norm_frac);
    if (nr.norm > out.codes[std::size_t(out.prediction)]) out.prediction = j;
  }
  return out;
}

// Format of layer k's output activations (k = -1: the network input).
int act_frac_of(const QuantizedModel& qm, int k) { return k < 0 ? qm.input_frac : qm.layers[std::size_t(k)].next_frac; }

}  // namespace

GoldenModel::GoldenModel(const AccelConfig& cfg, const Network& net, const QuantizedModel& qm)
    : cfg_(cfg), net_(net), qm_(qm), packed_(net.layers.size()), matvec_(net.layers.size()) {
  if (qm.layers.size() != net.layers.size()) throw std::logic_error("run_golden: model/network mismatch");
  require_capsnet_layers(net, "the golden model");
  if (!fits_fast_path(cfg.widths.data, cfg.widths.weight, cfg.array.rows)) return;
  for (std::size_t li = 0; li < net.layers.size(); ++li) {
    const Layer& L = net.layers[li];
    const LayerQuant& q = qm.layers[li];
    if (L.kind == LayerKind::ClassCaps) {
      const int J = L.num_capsules, D = L.capsule_dim, I = L.in.count, Din = L.in.dim;
      matvec_[li] = pack_matvec_weights(q.weight, I, J * D, Din);
    }
    if (!is_convolution(L.kind)) continue;
    const std::vector<std::int64_t> no_bias;
    packed_[li] = pack_conv_weights(q.weight, L.kind == LayerKind::ConvCaps3d ? no_bias : q.bias,
                                    chunk_contract(cfg, q.shift));
  }
}

FixedTrace run_golden(const AccelConfig& cfg, const Network& net, const QuantizedModel& qm, const IntTensor& input,
                      GoldenStats* stats, int threads) {
  return GoldenModel(cfg, net, qm).run(input, stats, threads);
}

std::vector<FixedTrace> run_golden_batch(const AccelConfig& cfg, const Network& net, const QuantizedModel& qm,
                                         const std::vector<IntTensor>& inputs, std::vector<GoldenStats>* stats,
                                         int threads) {
  return GoldenModel(cfg, net, qm).run_batch(inputs, stats, threads);
}

std::vector<FixedTrace> GoldenModel::run_batch(const std::vector<IntTensor>& inputs, std::vector<GoldenStats>* stats,
                                               int threads) const {
  std::vector<FixedTrace> traces(inputs.size());
  std::vector<GoldenStats> per_image(inputs.size());
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i = next++; i < inputs.size(); i = next++) traces[i] = run(inputs[i], &per_image[i], 1);
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < std::min<int>(threads, int(inputs.size())); ++t) pool.emplace_back(worker);
  worker();
  for (auto& th : pool) th.join();
  if (stats) *stats = std::move(per_image);
  return traces;
}

std::vector<SharedRoutingResult> GoldenModel::run_shared_routing(const std::vector<IntTensor>& inputs,
                                                                 GoldenStats* routing_stats, int threads) const {
  const Layer& L = shared_routing_layer(net_);
  const std::size_t li = std::size_t(&L - net_.layers.data());
  const LayerQuant& q = qm_.layers[li];
  const std::vector<FixedTrace> prefix = run_batch(inputs, nullptr, threads);
  std::vector<SharedRoutingResult> out;
  if (inputs.empty()) return out;
  std::vector<const IntTensor*> uhats;
  for (const FixedTrace& t : prefix) uhats.push_back(&t.get(L.name + ".u_hat"));
  GoldenStats st;
  for (const IntTensor& v :
       routing_fixed_batch(cfg_, qm_, L.name, uhats, L.routing_iterations, {}, q.s_shift, q.b_shift, nullptr, st)) {
    ClassNorms cn = class_norms_fixed(qm_, q, v);
    out.push_back({std::move(cn.real), cn.prediction, std::move(cn.codes)});
  }
  if (routing_stats) *routing_stats = st;
  return out;
}

FixedTrace GoldenModel::run(const IntTensor& input, GoldenStats* stats_out, int threads) const {
  const AccelConfig& cfg = cfg_;
  const Network& net = net_;
  const QuantizedModel& qm = qm_;
  GoldenStats st;
  FixedTrace tr;
  const fx::ActParams& ap = qm.act;
  const int A = cfg.widths.act, P = cfg.widths.psum, rows = cfg.array.rows;
  tr.add("input", input);
  IntTensor x = input;
  std::vector<IntTensor> outs(net.layers.size());
  auto produced = [&](int k) -> const IntTensor& { return k < 0 ? input : outs[std::size_t(k)]; };

  for (std::size_t li = 0; li < net.layers.size(); ++li) {
    const Layer& L = net.layers[li];
    const LayerQuant& q = qm.layers[li];
    x = produced(L.input_layers.empty() ? int(li) - 1 : L.input_layers[0]);
    switch (L.kind) {
      default:  // pools, fc, grouped conv2d: rejected by require_capsnet_layers() above
        break;
      case LayerKind::Conv2d: {
        x = conv_fixed(cfg, L, q.weight, q.bias, q.shift, x, L.out.height, L.out.width, packed_[li], threads, st);
        if (L.activation == Activation::Relu)
          for (auto& v : x.data) v = std::int32_t(fx::relu(v));
        tr.add(L.name + ".out", x);
        break;
      }
      case LayerKind::PrimaryCaps: {
        const int Ho = (L.in.height + 2 * L.padding - L.kernel_h) / L.stride + 1;
        const int Wo = (L.in.width + 2 * L.padding - L.kernel_w) / L.stride + 1;
        const IntTensor conv = conv_fixed(cfg, L, q.weight, q.bias, q.shift, x, Ho, Wo, packed_[li], threads, st);
        const int T = L.capsule_types, D = L.capsule_dim;
        IntTensor s({std::size_t(T) * Ho * Wo, std::size_t(D)});
        for (int t = 0; t < T; ++t)
          for (int y = 0; y < Ho; ++y)
            for (int xx = 0; xx < Wo; ++xx)
              for (int d = 0; d < D; ++d)
                s[((std::size_t(t) * Ho + y) * Wo + xx) * D + d] = conv[((std::size_t(t) * D + d) * Ho + y) * Wo + xx];
        tr.add(L.name + ".s", s);
        IntTensor u(s.shape);
        std::vector<std::int64_t> in(static_cast<std::size_t>(D)), o(static_cast<std::size_t>(D));
        for (std::size_t i = 0; i < s.shape[0]; ++i) {
          for (int d = 0; d < D; ++d) in[std::size_t(d)] = s[i * D + d];
          fx::squash(ap, qm.sqrt_lut, qm.squash_lut, in.data(), D, o.data());
          for (int d = 0; d < D; ++d) u[i * D + d] = std::int32_t(o[std::size_t(d)]);
        }
        x = u;
        tr.add(L.name + ".out", x);
        break;
      }
      case LayerKind::ClassCaps: {
        const int I = int(x.shape[0]), Din = int(x.shape[1]), J = L.num_capsules, D = L.capsule_dim;
        // Prediction vectors u_hat[i][j] = W[i][j] (D x Din) . u_i, reduced over Din.
        IntTensor uhat({std::size_t(I), std::size_t(J), std::size_t(D)});
        const PackedMatvecWeights& mv = matvec_[li];
        if (!mv.codes.empty() && mv.inputs == I && mv.depth == Din) {
          chunked_matvecs(mv, x, chunk_contract(cfg, q.shift), uhat, st, threads);
        } else {
          for (int i = 0; i < I; ++i)
            for (int j = 0; j < J; ++j)
              for (int d = 0; d < D; ++d) {
                const std::int64_t acc = dot_chunked(&q.weight[((std::size_t(i) * J + j) * D + d) * Din],
                                                     &x[std::size_t(i) * Din], Din, rows, P, 0, st);
                uhat[(std::size_t(i) * J + j) * D + d] = reduce_out(acc, q.shift, A, st);
              }
        }
        tr.add(L.name + ".u_hat", uhat);
        const IntTensor v = routing_fixed(cfg, qm, L.name, uhat, L.routing_iterations, {}, q.s_shift, q.b_shift, tr, st);
        x = v;
        tr.add(L.name + ".out", x);
        ClassNorms cn = class_norms_fixed(qm, q, v);
        tr.class_norms = std::move(cn.real);
        tr.add(L.name + ".norm", std::move(cn.codes));
        tr.prediction = cn.prediction;
        break;
      }
      case LayerKind::ConvCaps2d: {
        const IntTensor conv = conv_fixed(cfg, L, q.weight, q.bias, q.shift, grid_to_channels(x, L.in), L.out.height,
                                          L.out.width, packed_[li], threads, st);
        const IntTensor s = channels_to_grid(conv, L.capsule_types, L.capsule_dim);
        tr.add(L.name + ".s", s);
        IntTensor u(s.shape);
        squash_rows(ap, qm, s, u);
        x = u;
        tr.add(L.name + ".out", x);
        break;
      }
      case LayerKind::ConvCaps3d: {
        // Votes of each input type i: the shared kernel over its D_in atoms, reduced to u_frac.
        const IntTensor ch = grid_to_channels(x, L.in);
        const std::size_t I = L.in.capsules ? std::size_t(L.in.grid_types) : ch.shape[0];
        const std::size_t Din = ch.shape[0] / I, H = ch.shape[1], W = ch.shape[2];
        const int T = L.capsule_types, D = L.capsule_dim;
        const std::size_t per = std::size_t(T) * L.out.height * L.out.width * D;
        IntTensor uhat({I, per / std::size_t(D), std::size_t(D)});
        for (std::size_t i = 0; i < I; ++i) {
          IntTensor slice({Din, H, W});
          std::copy(ch.data.begin() + std::ptrdiff_t(i * Din * H * W),
                    ch.data.begin() + std::ptrdiff_t((i + 1) * Din * H * W), slice.data.begin());
          const IntTensor votes =
              channels_to_grid(conv_fixed(cfg, L, q.weight, {}, q.shift, slice, L.out.height, L.out.width, packed_[li], threads, st),
                  T, D);
          std::copy(votes.data.begin(), votes.data.end(), uhat.data.begin() + std::ptrdiff_t(i * per));
        }
        tr.add(L.name + ".u_hat", uhat);
        x = routing_fixed(cfg, qm, L.name, uhat, L.routing_iterations, q.bias, q.s_shift, q.b_shift, tr, st);
        tr.add(L.name + ".out", x);
        break;
      }
      case LayerKind::CapsAdd:
      case LayerKind::FlattenCaps: {
        // Each input requantized to out_frac (fx::align_sum): added element-wise, or concatenated.
        const std::size_t n = L.input_layers.size();
        std::vector<std::int64_t> codes(n);
        std::vector<int> fracs(n);
        for (std::size_t r = 0; r < n; ++r) fracs[r] = act_frac_of(qm, L.input_layers[r]);
        if (L.kind == LayerKind::CapsAdd) {
          IntTensor sum(x.shape);
          for (std::size_t k = 0; k < sum.size(); ++k) {
            for (std::size_t r = 0; r < n; ++r) codes[r] = produced(L.input_layers[r])[k];
            const std::int64_t v = fx::align_sum(codes.data(), fracs.data(), int(n), q.out_frac, A);
            const std::int64_t exact = fx::align_sum(codes.data(), fracs.data(), int(n), q.out_frac, 62);
            if (v != exact) ++st.output_saturations;
            sum[k] = std::int32_t(v);
          }
          x = sum;
        } else {
          IntTensor cat({std::size_t(L.out.count), std::size_t(L.out.dim)});
          std::size_t at = 0;
          for (std::size_t r = 0; r < n; ++r) {
            const IntTensor& o = produced(L.input_layers[r]);
            for (std::size_t k = 0; k < o.size(); ++k) {
              const std::int64_t c0 = o[k];
              cat[at + k] = std::int32_t(fx::align_sum(&c0, &fracs[r], 1, q.out_frac, A));
            }
            at += o.size();
          }
          x = cat;
        }
        tr.add(L.name + ".out", x);
        break;
      }
    }
    outs[li] = x;
  }
  if (stats_out) *stats_out = st;
  return tr;
}

int trace_frac(const Network& net, const QuantizedModel& qm, const std::string& name) {
  if (name == "input") return qm.input_frac;
  for (std::size_t li = 0; li < net.layers.size(); ++li) {
    const Layer& L = net.layers[li];
    const LayerQuant& q = qm.layers[li];
    if (name.rfind(L.name + ".", 0) != 0) continue;
    const std::string t = name.substr(L.name.size() + 1);
    if (L.kind == LayerKind::Conv2d || L.kind == LayerKind::CapsAdd || L.kind == LayerKind::FlattenCaps)
      return q.out_frac;
    if (L.kind == LayerKind::ConvCaps2d) return t == "s" ? q.out_frac : qm.act.squash_out_frac();
    if (L.kind == LayerKind::PrimaryCaps) return t == "s" ? q.out_frac : qm.act.squash_out_frac();
    if (t == "u_hat") return q.u_frac;
    if (t == "norm") return q.norm_frac;
    if (t == "out") return qm.act.squash_out_frac();
    const char k = t.back();
    if (k == 'c') return qm.act.coupling_frac();
    if (k == 's') return qm.act.sq_in_frac;
    if (k == 'v') return qm.act.squash_out_frac();
    if (k == 'b') return qm.act.sm_in_frac;
  }
  throw std::out_of_range("trace_frac: unknown tensor '" + name + "'");
}

}  // namespace capsgen
