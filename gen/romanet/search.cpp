#include "romanet/search.hpp"

#include <algorithm>

namespace capsgen::romanet {

std::vector<int> tile_values(int extent, int step) {
  std::vector<int> v;
  if (extent < 1) return v;
  step = std::max(1, step);
  for (int x = 1; x <= extent; x += step) v.push_back(x);
  if (v.back() != extent) v.push_back(extent);
  return v;
}

namespace {

long long tile_iterations(const LayerDims& d) { return d.n[0] * d.n[1] * d.n[2] * d.n[3]; }

// The largest Tj for which some tiling fits (1x1 ofmap tiles, one input channel).
int largest_tj(const LayerGeometry& g, const SearchOptions& opt) {
  for (int tj = g.J; tj >= 1; --tj) {
    if (ofmap_tile_bytes(g, Tiling{1, 1, 1, tj}, opt.bytes) > opt.buffers.ofmap) continue;
    if (max_ti(g, 1, 1, tj, opt.buffers, opt.bytes) >= 1) return tj;
  }
  return 0;
}

}  // namespace

SearchResult search_layer(const LayerGeometry& g, const SearchOptions& opt) {
  SearchResult best;
  const std::vector<int> ms = tile_values(g.M, opt.step_m), ns = tile_values(g.N, opt.step_n);
  std::vector<int> js = tile_values(g.J, opt.step_j);
  if (opt.maximize_tj) {
    const int tj = largest_tj(g, opt);
    if (tj == 0) return best;
    js = {tj};
  }
  // Per-dimension stats depend on one factor each: precompute them for every Tm and Tn.
  std::vector<DimStats> ih(ms.size()), oh(ms.size()), iw(ns.size()), ow(ns.size());
  for (std::size_t k = 0; k < ms.size(); ++k) {
    ih[k] = dim_stats(input_span(g.M, ms[k], g.stride, g.P, g.pad, g.H));
    oh[k] = dim_stats(split(g.M, ms[k]));
  }
  for (std::size_t k = 0; k < ns.size(); ++k) {
    iw[k] = dim_stats(input_span(g.N, ns[k], g.stride, g.Q, g.pad, g.W));
    ow[k] = dim_stats(split(g.N, ns[k]));
  }
  auto channel_stats = [](int extent, int T) {
    DimStats s;
    s.n = (extent + T - 1) / T;
    s.first = std::min(extent, T);
    s.max = s.first;
    s.sum = extent;
    s.sum_adj_ov = 0;
    s.ov_last_first = s.n == 1 ? extent : 0;
    return s;
  };
  LayerDims d;
  for (int type = 0; type < 3; ++type)
    for (int dim = 0; dim < 4; ++dim) d.dep[std::size_t(type)][std::size_t(dim)] = g.depends(type, dim);
  d.mult = {1, (g.op == OpKind::CapsPredict) ? 1LL : static_cast<long long>(g.P) * g.Q, 1};

  for (std::size_t a = 0; a < ms.size(); ++a) {
    for (std::size_t b = 0; b < ns.size(); ++b) {
      const int Tm = ms[a], Tn = ns[b];
      for (int Tj : js) {
        if (ofmap_tile_bytes(g, Tiling{Tm, Tn, 1, Tj}, opt.bytes) > opt.buffers.ofmap) break;  // grows with Tj
        const int Ti = max_ti(g, Tm, Tn, Tj, opt.buffers, opt.bytes);
        if (Ti < 1) break;  // the weight (and depthwise ifmap) tile grows with Tj
        const DimStats si = channel_stats(g.loop_i(), g.depthwise() ? 1 : Ti), sj = channel_stats(g.J, Tj);
        d.st[kIfmap] = {ih[a], iw[b], si, sj};
        d.st[kWeight] = {oh[a], ow[b], si, sj};
        d.st[kOfmap] = {oh[a], ow[b], si, sj};
        d.n = {oh[a].n, ow[b].n, si.n, sj.n};
        const long long iters = tile_iterations(d);
        for (const Schedule& s : opt.schedules) {
          const AccessCounts c = analytic_counts(d, g, s.loops, opt.overlap_reuse);
          ++best.evaluated;
          const bool better = !best.found || c.total() < best.counts.total() ||
                              (c.total() == best.counts.total() && iters < best.tiles);
          if (better) {
            best.found = true;
            best.tiling = Tiling{Tm, Tn, g.depthwise() ? 1 : Ti, Tj};
            best.schedule = s;
            best.counts = c;
            best.tiles = iters;
          }
        }
      }
    }
  }
  return best;
}

SearchOptions romanet_options(const std::vector<LayerGeometry>& layers, const Buffers& b, const ElementBytes& eb,
                              bool all_orders) {
  SearchOptions o;
  o.buffers = b;
  o.bytes = eb;
  o.overlap_reuse = true;
  std::vector<int> orders = all_orders ? std::vector<int>{1, 2, 3, 4, 5, 6} : network_orders(layers);
  for (int k : orders) o.schedules.push_back(schedule_for_order(k));
  return o;
}

SearchOptions baseline_options(const Buffers& b, const ElementBytes& eb) {
  SearchOptions o;
  o.buffers = b;
  o.bytes = eb;
  o.overlap_reuse = false;
  o.maximize_tj = true;
  o.schedules = {schedule_for_order(6), schedule_for_order(4)};
  return o;
}

}  // namespace capsgen::romanet
