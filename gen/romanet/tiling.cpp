#include "romanet/tiling.hpp"

#include <algorithm>
#include <stdexcept>

namespace capsgen::romanet {

std::vector<Interval> split(int extent, int T) {
  if (T < 1) throw std::invalid_argument("tile size must be >= 1");
  std::vector<Interval> v;
  for (int lo = 0; lo < extent; lo += T) v.push_back({lo, std::min(extent, lo + T)});
  return v;
}

std::vector<Interval> input_span(int out_extent, int T, int stride, int kernel, int pad, int in_extent) {
  std::vector<Interval> v;
  for (const Interval& o : split(out_extent, T)) {
    const long long lo = static_cast<long long>(o.lo) * stride - pad;
    const long long hi = static_cast<long long>(o.hi - 1) * stride + kernel - pad;
    v.push_back({int(std::clamp<long long>(lo, 0, in_extent)), int(std::clamp<long long>(hi, 0, in_extent))});
  }
  return v;
}

namespace {
long long overlap(const Interval& a, const Interval& b) {
  return std::max(0, std::min(a.hi, b.hi) - std::max(a.lo, b.lo));
}
}  // namespace

DimStats dim_stats(const std::vector<Interval>& t) {
  DimStats s;
  s.n = static_cast<long long>(t.size());
  if (t.empty()) return s;
  s.first = t.front().size();
  for (std::size_t k = 0; k < t.size(); ++k) {
    s.sum += t[k].size();
    s.max = std::max<long long>(s.max, t[k].size());
    if (k + 1 < t.size()) s.sum_adj_ov += overlap(t[k], t[k + 1]);
  }
  s.ov_last_first = overlap(t.back(), t.front());
  return s;
}

AccessCounts& AccessCounts::operator+=(const AccessCounts& o) {
  ifmap_rd += o.ifmap_rd;
  weight_rd += o.weight_rd;
  ofmap_rd += o.ofmap_rd;
  ofmap_wr += o.ofmap_wr;
  routing_rd += o.routing_rd;
  routing_wr += o.routing_wr;
  return *this;
}

LayerDims layer_dims(const LayerGeometry& g, const Tiling& t) {
  LayerDims d;
  const std::vector<Interval> oh = split(g.M, t.Tm), ow = split(g.N, t.Tn);
  const std::vector<Interval> ih = input_span(g.M, t.Tm, g.stride, g.P, g.pad, g.H);
  const std::vector<Interval> iw = input_span(g.N, t.Tn, g.stride, g.Q, g.pad, g.W);
  const std::vector<Interval> ci = split(g.loop_i(), g.depthwise() ? 1 : t.Ti), cj = split(g.J, t.Tj);
  const DimStats s_oh = dim_stats(oh), s_ow = dim_stats(ow), s_ih = dim_stats(ih), s_iw = dim_stats(iw);
  const DimStats s_ci = dim_stats(ci), s_cj = dim_stats(cj);
  d.n = {s_oh.n, s_ow.n, s_ci.n, s_cj.n};
  for (int type = 0; type < 3; ++type)
    for (int dim = 0; dim < 4; ++dim) d.dep[std::size_t(type)][std::size_t(dim)] = g.depends(type, dim);
  // ifmaps: input spans in h and w, channels in i (j for depthwise).
  d.st[kIfmap] = {s_ih, s_iw, s_ci, s_cj};
  // weights: ofmap positions in h, w (class_caps), channels.
  d.st[kWeight] = {s_oh, s_ow, s_ci, s_cj};
  d.st[kOfmap] = {s_oh, s_ow, s_ci, s_cj};
  d.mult = {1, (g.op == OpKind::CapsPredict) ? 1LL : static_cast<long long>(g.P) * g.Q, 1};
  return d;
}

long long fetched_elements(const LayerDims& d, int type, const std::array<int, 4>& loops, bool reuse) {
  const auto& st = d.st[std::size_t(type)];
  const auto& dep = d.dep[std::size_t(type)];
  const long long mult = d.mult[std::size_t(type)];
  long long total = mult;  // the first tile
  for (int dim = 0; dim < 4; ++dim)
    if (dep[std::size_t(dim)]) total *= st[std::size_t(dim)].first;
  for (int l = 0; l < 4; ++l) {
    // Steps where loop l advances and the loops inside it wrap around.
    long long S = mult, O = mult;  // sizes of the new tiles; what they share with the tile on chip
    for (int k = 0; k < 4; ++k) {
      const int dim = loops[std::size_t(k)];
      const long long n = d.n[std::size_t(dim)];
      if (!dep[std::size_t(dim)]) {
        const long long f = k < l ? n : (k == l ? n - 1 : 1);
        S *= f;
        O *= f;
        continue;
      }
      const DimStats& s = st[std::size_t(dim)];
      if (k < l) {  // same tile before and after
        S *= s.sum;
        O *= s.sum;
      } else if (k == l) {  // tile x -> x+1
        S *= s.sum - s.first;
        O *= reuse ? s.sum_adj_ov : 0;
      } else {  // last tile -> first tile
        S *= s.first;
        O *= s.n == 1 ? s.first : (reuse ? s.ov_last_first : 0);
      }
      if (S == 0 && O == 0) break;
    }
    total += S - O;
  }
  return total;
}

AccessCounts analytic_counts(const LayerDims& d, const LayerGeometry& g, const std::array<int, 4>& loops,
                             bool overlap_reuse) {
  AccessCounts c;
  c.ifmap_rd = fetched_elements(d, kIfmap, loops, overlap_reuse);
  c.weight_rd = fetched_elements(d, kWeight, loops, false);
  c.ofmap_wr = fetched_elements(d, kOfmap, loops, false);  // one write per visit of an ofmap tile
  c.ofmap_rd = c.ofmap_wr - g.ofmap_elements();           // every visit but the first reads partial sums
  return c;
}

AccessCounts analytic_counts(const LayerGeometry& g, const Tiling& t, const Schedule& s, bool overlap_reuse) {
  return analytic_counts(layer_dims(g, t), g, s.loops, overlap_reuse);
}

AccessCounts routing_counts(const LayerGeometry& g) {
  AccessCounts c;
  if (g.op != OpKind::CapsPredict) return c;
  c.routing_rd = static_cast<long long>(g.routing_iterations) * g.ofmap_elements();
  c.routing_wr = g.routing_out;
  return c;
}

long long ifmap_rows(const LayerGeometry& g, int Tm) { return static_cast<long long>(Tm - 1) * g.stride + g.P; }
long long ifmap_cols(const LayerGeometry& g, int Tn) { return static_cast<long long>(Tn - 1) * g.stride + g.Q; }

long long ifmap_tile_bytes(const LayerGeometry& g, const Tiling& t, const ElementBytes& eb) {
  const long long depth = g.depthwise() ? t.Tj : t.Ti;
  return ifmap_rows(g, t.Tm) * ifmap_cols(g, t.Tn) * depth * eb.ifmap;
}

long long weight_tile_bytes(const LayerGeometry& g, const Tiling& t, const ElementBytes& eb) {
  switch (g.op) {
    case OpKind::Depthwise:
      return static_cast<long long>(g.P) * g.Q * t.Tj * eb.weight;
    case OpKind::CapsPredict:
      return static_cast<long long>(t.Tm) * t.Tn * t.Ti * t.Tj * eb.weight;
    case OpKind::Conv:
    case OpKind::FullyConnected:
      break;
  }
  return static_cast<long long>(g.P) * g.Q * t.Ti * t.Tj * eb.weight;
}

long long ofmap_tile_bytes(const LayerGeometry&, const Tiling& t, const ElementBytes& eb) {
  return static_cast<long long>(t.Tm) * t.Tn * t.Tj * eb.ofmap;
}

bool fits(const LayerGeometry& g, const Tiling& t, const Buffers& b, const ElementBytes& eb) {
  return t.Tm >= 1 && t.Tn >= 1 && t.Ti >= 1 && t.Tj >= 1 && t.Tm <= g.M && t.Tn <= g.N && t.Ti <= g.loop_i() &&
         t.Tj <= g.J && ifmap_tile_bytes(g, t, eb) <= b.ifmap && weight_tile_bytes(g, t, eb) <= b.weight &&
         ofmap_tile_bytes(g, t, eb) <= b.ofmap;
}

int max_ti(const LayerGeometry& g, int Tm, int Tn, int Tj, const Buffers& b, const ElementBytes& eb) {
  const long long area = ifmap_rows(g, Tm) * ifmap_cols(g, Tn);
  if (g.depthwise()) {
    const Tiling t{Tm, Tn, 1, Tj};
    return ifmap_tile_bytes(g, t, eb) <= b.ifmap && weight_tile_bytes(g, t, eb) <= b.weight ? 1 : 0;
  }
  long long ti = std::min<long long>(g.I, b.ifmap / (area * eb.ifmap));
  const long long per_ti = (g.op == OpKind::CapsPredict ? static_cast<long long>(Tm) * Tn
                                                        : static_cast<long long>(g.P) * g.Q) *
                           Tj * eb.weight;
  ti = std::min(ti, b.weight / per_ti);
  return int(std::max(0LL, ti));
}

Partition partition(const LayerGeometry& g, const Tiling& t) {
  Partition p;
  auto direction = [](long long padded_in, long long out, long long T, long long stride, long long kernel) {
    DirectionPartition d;
    d.n_tiles = (out + T - 1) / T;
    d.base = (T - 1) * stride + kernel;
    d.overlap = std::max(0LL, kernel - stride);
    d.intermediate = d.base - d.overlap;
    d.n_intermediate = std::max(0LL, d.n_tiles - 2);
    // The input rows the ofmaps use: (out - 1) * stride + kernel <= padded_in.
    const long long used = std::min(padded_in, (out - 1) * stride + kernel);
    d.last = d.n_tiles == 1 ? used : used - d.base - d.n_intermediate * d.intermediate;  // Eq. 7-8
    return d;
  };
  p.h = direction(g.H + 2LL * g.pad, g.M, t.Tm, g.stride, g.P);
  p.w = direction(g.W + 2LL * g.pad, g.N, t.Tn, g.stride, g.Q);
  const int ti = g.depthwise() ? t.Tj : t.Ti;
  const int iext = g.depthwise() ? g.J : g.I;
  p.n_ti = (iext + ti - 1) / ti;
  p.ti_base = ti;
  p.ti_last = iext - (p.n_ti - 1) * ti;  // Eq. 9 / 11 (the last tile when I is not a multiple of Ti)
  p.n_tj = (g.J + t.Tj - 1) / t.Tj;
  p.tj_base = t.Tj;
  p.tj_last = g.J - (p.n_tj - 1) * t.Tj;  // Eq. 10
  p.tm_base = t.Tm;
  p.tm_last = g.M - ((g.M + t.Tm - 1) / t.Tm - 1) * t.Tm;  // Eq. 12 on the last ifmap tile
  p.tn_base = t.Tn;
  p.tn_last = g.N - ((g.N + t.Tn - 1) / t.Tn - 1) * t.Tn;  // Eq. 13
  return p;
}

}  // namespace capsgen::romanet
