#include "golden/quant.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>

#include "core/bits.hpp"
#include "core/input_error.hpp"
#include "numerics/fixed.hpp"

namespace capsgen {

void CalibrationStats::observe(const FloatTrace& tr) {
  for (const auto& [name, t] : tr.tensors) {
    double m = 0;
    for (float v : t.data) m = std::max(m, double(std::fabs(v)));
    auto it = std::find_if(max_abs.begin(), max_abs.end(), [&](const auto& p) { return p.first == name; });
    if (it == max_abs.end())
      max_abs.emplace_back(name, m);
    else
      it->second = std::max(it->second, m);
  }
}

double CalibrationStats::get(const std::string& name) const {
  for (const auto& [n, m] : max_abs)
    if (n == name) return m;
  return 0.0;
}

int choose_frac(double max_abs, int bits, int lo, int hi) {
  if (lo > hi) return lo;
  if (!(max_abs > 0)) return hi;
  // max_abs * 2^f <= smax(bits)  <=>  f <= log2(smax / max_abs)
  const int f = static_cast<int>(std::floor(std::log2(double(fx::smax(bits)) / max_abs)));
  return std::clamp(f, lo, hi);
}

namespace {

IntTensor quantize_tensor(const FloatTensor& t, int frac, int bits) {
  IntTensor q(t.shape);
  for (std::size_t i = 0; i < t.size(); ++i) q[i] = std::int32_t(fx::quantize(t[i], frac, bits));
  return q;
}

double max_abs_of(const FloatTensor& t) {
  double m = 0;
  for (float v : t.data) m = std::max(m, double(std::fabs(v)));
  return m;
}

}  // namespace

QuantizedModel quantize_model(const AccelConfig& cfg, const Network& net, const WeightSet& weights,
                              const CalibrationStats& stats) {
  QuantizedModel qm;
  require_capsnet_layers(net, "the quantizer");
  qm.act = fx::ActParams::from_config(cfg);
  qm.sqrt_lut = fx::build_sqrt_lut(qm.act);
  qm.squash_lut = fx::build_squash_lut(qm.act);
  qm.exp_lut = fx::build_exp_lut(qm.act);
  qm.input_frac = cfg.widths.act - 1;

  const int A = cfg.widths.act, Wb = cfg.widths.weight, P = cfg.widths.psum;
  auto frac_of = [&](int k) { return k < 0 ? qm.input_frac : qm.layers[std::size_t(k)].next_frac; };
  for (std::size_t li = 0; li < net.layers.size(); ++li) {
    const Layer& L = net.layers[li];
    LayerQuant q;
    q.name = L.name;
    const std::vector<int> srcs = L.input_layers.empty() ? std::vector<int>{int(li) - 1} : L.input_layers;
    q.in_frac = frac_of(srcs[0]);
    if (L.kind == LayerKind::CapsAdd || L.kind == LayerKind::FlattenCaps) {
      int lo = INT_MAX, hi = INT_MIN;
      for (int k : srcs) {
        lo = std::min(lo, frac_of(k));
        hi = std::max(hi, frac_of(k));
      }
      // A sum of n inputs that fit their formats fits one of ceil(log2 n) fewer fraction bits than the
      // coarsest; calibration may allow more, up to the finest. A concatenation takes the coarsest.
      const int grow = clog2(static_cast<long long>(srcs.size()));
      q.out_frac = L.kind == LayerKind::CapsAdd ? choose_frac(stats.get(L.name + ".out"), A, lo - grow, hi) : lo;
      q.next_frac = q.out_frac;
      qm.layers.push_back(std::move(q));
      continue;
    }
    const std::string wkey = L.name + (L.kind == LayerKind::ClassCaps ? ".W" : ".weight");
    const FloatTensor& w = weights.at(wkey);
    // Weight formats may go negative (weights larger than the code range) or deep (tiny weights);
    // the bound keeps in+w fraction bits inside the accumulator.
    q.w_frac = choose_frac(max_abs_of(w), Wb, -16, std::max(0, P - 2 - q.in_frac));
    q.weight = quantize_tensor(w, q.w_frac, Wb);
    const int acc_frac = q.in_frac + q.w_frac;
    // Output formats: largest fraction that holds the calibrated maximum, but no left shift.
    const int lo = acc_frac - (P - 1);
    switch (L.kind) {
      default:  // pools, fc, grouped conv2d: rejected by require_capsnet_layers() above
        break;
      case LayerKind::Conv2d:
        q.out_frac = choose_frac(stats.get(L.name + ".out"), A, lo, acc_frac);
        break;
      case LayerKind::PrimaryCaps:
      case LayerKind::ConvCaps2d:
        q.out_frac = qm.act.sq_in_frac;  // fixed by the squash LUT
        if (q.out_frac > acc_frac)
          throw InputError(net.source_path, L.line, 0, L.name,
                           fmt::format("squash input needs {} fraction bits but the layer only produces {} "
                                       "(weights too large for {}-bit codes?)",
                                       q.out_frac, acc_frac, Wb));
        break;
      case LayerKind::ClassCaps:
      case LayerKind::ConvCaps3d: {
        // u_hat feeds s = sum c*u_hat (c: Q0.(A-1)) and b += u_hat . v (v: Q0.(out-1)):
        // both reductions must be right shifts.
        const int need = std::max(qm.act.sq_in_frac - qm.act.coupling_frac(),
                                  qm.act.sm_in_frac - qm.act.squash_out_frac());
        q.out_frac = choose_frac(stats.get(L.name + ".u_hat"), A, std::max(lo, need), acc_frac);
        if (q.out_frac < need || q.out_frac > acc_frac)
          throw InputError(net.source_path, L.line, 0, L.name,
                           fmt::format("no prediction-vector format fits: need >= {} and <= {} fraction bits",
                                       need, acc_frac));
        q.u_frac = q.out_frac;
        q.s_shift = qm.act.coupling_frac() + q.u_frac - qm.act.sq_in_frac;
        q.b_shift = q.u_frac + qm.act.squash_out_frac() - qm.act.sm_in_frac;
        // |v| < 1: sum of squares < 2^(2*(out-1)); shift it into the sqrt LUT's address range.
        const int excess = std::max(0, 2 * qm.act.squash_out_frac() - qm.act.sqrt_in_bits);
        q.norm_shift = excess + (excess & 1);
        q.norm_frac = qm.act.norm_frac(qm.act.squash_out_frac(), q.norm_shift);
        break;
      }
    }
    q.shift = acc_frac - q.out_frac;
    if (L.kind == LayerKind::ConvCaps3d && L.bias) {
      // Added to s = sum_i c * u_hat: accumulator format coupling + u, repeated over the positions.
      const FloatTensor& b = weights.at(L.name + ".bias");
      const std::size_t T = std::size_t(L.capsule_types), D = std::size_t(L.capsule_dim);
      const std::size_t Pos = std::size_t(L.out.height) * std::size_t(L.out.width);
      for (std::size_t t = 0; t < T; ++t)
        for (std::size_t p = 0; p < Pos; ++p)
          for (std::size_t d = 0; d < D; ++d)
            q.bias.push_back(fx::quantize(b[t * D + d], qm.act.coupling_frac() + q.u_frac, P));
    } else if (L.kind != LayerKind::ClassCaps && L.bias) {
      const FloatTensor& b = weights.at(L.name + ".bias");
      for (float v : b.data) q.bias.push_back(fx::quantize(v, acc_frac, P));
    }
    // The format this layer hands on.
    q.next_frac = L.kind == LayerKind::Conv2d ? q.out_frac : qm.act.squash_out_frac();
    qm.layers.push_back(std::move(q));
  }
  return qm;
}

IntTensor quantize_input(const AccelConfig& cfg, const QuantizedModel& qm, const Network& net,
                         const FloatTensor& input) {
  FloatTensor x = input;
  if (x.shape.size() == 2) x.shape.insert(x.shape.begin(), 1);
  const Shape want{std::size_t(net.input.channels), std::size_t(net.input.height), std::size_t(net.input.width)};
  if (x.shape != want)
    throw InputError("", 0, 0, "input",
                     fmt::format("shape {} does not match the network input {}", shape_str(input.shape), shape_str(want)));
  return quantize_tensor(x, qm.input_frac, cfg.widths.act);
}

}  // namespace capsgen
