// Element-level reference for the ROMANet access counts: walks every tile step of a schedule and
// counts every element moved between DRAM and the buffers, with sets of on-chip elements. Shares no
// code with gen/romanet/tiling.cpp (tile ranges come from the convolution's definition).
#pragma once

#include <algorithm>
#include <array>
#include <functional>
#include <vector>

#include "romanet/layer_model.hpp"
#include "romanet/tiling.hpp"

namespace capsgen::romanet::test {

struct BruteCounts {
  long long ifmap_rd = 0, weight_rd = 0, ofmap_rd = 0, ofmap_wr = 0;
};

struct Box {  // element set as a bounding box of ranges [lo, hi) per axis (empty if any is empty)
  std::vector<std::array<int, 2>> r;
};

inline BruteCounts brute_force(const LayerGeometry& g, const Tiling& t, const std::array<int, 4>& loops,
                               bool overlap_reuse) {
  const int C = g.depthwise() ? g.J : g.I;  // ifmap channels
  const int Ii = g.depthwise() ? 1 : g.I;   // extent of the i loop
  const int Ti = g.depthwise() ? 1 : t.Ti;
  auto ntiles = [](int e, int T) { return (e + T - 1) / T; };
  const std::array<int, 4> n{ntiles(g.M, t.Tm), ntiles(g.N, t.Tn), ntiles(Ii, Ti), ntiles(g.J, t.Tj)};
  auto range = [](int k, int T, int e) { return std::array<int, 2>{k * T, std::min(e, (k + 1) * T)}; };

  // Input rows an ofmap row range needs, from the convolution: r = m*stride + p - pad inside [0, H).
  auto needed = [&](std::array<int, 2> out, int kernel, int extent) {
    int lo = extent, hi = 0;
    for (int m = out[0]; m < out[1]; ++m)
      for (int p = 0; p < kernel; ++p) {
        const int r = m * g.stride + p - g.pad;
        if (r < 0 || r >= extent) continue;
        lo = std::min(lo, r);
        hi = std::max(hi, r + 1);
      }
    return hi > lo ? std::array<int, 2>{lo, hi} : std::array<int, 2>{0, 0};
  };

  std::vector<char> ifmap_on(std::size_t(g.H) * g.W * C, 0), ifmap_new(ifmap_on.size(), 0);
  std::vector<char> ofmap_in_dram(std::size_t(g.M) * g.N * g.J, 0);
  BruteCounts c;
  bool have_w = false, have_o = false;
  std::vector<int> cur_w, cur_o;  // tile indices on chip
  std::array<int, 4> idx{};

  auto ofmap_elems = [&](const std::vector<int>& o, const std::function<void(std::size_t)>& f) {
    const auto rm = range(o[0], t.Tm, g.M), rn = range(o[1], t.Tn, g.N), rj = range(o[2], t.Tj, g.J);
    for (int m = rm[0]; m < rm[1]; ++m)
      for (int x = rn[0]; x < rn[1]; ++x)
        for (int j = rj[0]; j < rj[1]; ++j) f((std::size_t(m) * g.N + x) * g.J + j);
  };

  auto body = [&]() {
    const int th = idx[kDimH], tw = idx[kDimW], ti = idx[kDimI], tj = idx[kDimJ];
    // Ofmaps.
    const std::vector<int> o{th, tw, tj};
    if (!have_o || o != cur_o) {
      if (have_o)
        ofmap_elems(cur_o, [&](std::size_t e) {
          ++c.ofmap_wr;
          ofmap_in_dram[e] = 1;
        });
      ofmap_elems(o, [&](std::size_t e) { c.ofmap_rd += ofmap_in_dram[e]; });
      cur_o = o;
      have_o = true;
    }
    // Ifmaps: the elements the ofmap tile's receptive field covers (bounding box), channels of the tile.
    const auto rows = needed(range(th, t.Tm, g.M), g.P, g.H), cols = needed(range(tw, t.Tn, g.N), g.Q, g.W);
    const auto ch = g.depthwise() ? range(tj, t.Tj, g.J) : range(ti, Ti, Ii);
    std::fill(ifmap_new.begin(), ifmap_new.end(), 0);
    for (int y = rows[0]; y < rows[1]; ++y)
      for (int x = cols[0]; x < cols[1]; ++x)
        for (int k = ch[0]; k < ch[1]; ++k) ifmap_new[(std::size_t(y) * g.W + x) * C + k] = 1;
    if (ifmap_new != ifmap_on) {
      for (std::size_t e = 0; e < ifmap_new.size(); ++e)
        if (ifmap_new[e] && (!overlap_reuse || !ifmap_on[e])) ++c.ifmap_rd;
      ifmap_on = ifmap_new;
    }
    // Weights.
    std::vector<int> w;
    long long size = 0;
    switch (g.op) {
      case OpKind::Depthwise: {
        w = {tj};
        const auto rj = range(tj, t.Tj, g.J);
        size = static_cast<long long>(rj[1] - rj[0]) * g.P * g.Q;
        break;
      }
      case OpKind::CapsPredict: {
        w = {th, tw, ti, tj};
        const auto rm = range(th, t.Tm, g.M), rn = range(tw, t.Tn, g.N), ri = range(ti, Ti, Ii), rj = range(tj, t.Tj, g.J);
        size = static_cast<long long>(rm[1] - rm[0]) * (rn[1] - rn[0]) * (ri[1] - ri[0]) * (rj[1] - rj[0]);
        break;
      }
      default: {
        w = {ti, tj};
        const auto ri = range(ti, Ti, Ii), rj = range(tj, t.Tj, g.J);
        size = static_cast<long long>(ri[1] - ri[0]) * (rj[1] - rj[0]) * g.P * g.Q;
        break;
      }
    }
    if (!have_w || w != cur_w) {
      c.weight_rd += size;
      cur_w = w;
      have_w = true;
    }
  };

  std::function<void(int)> loop = [&](int level) {
    if (level == 4) {
      body();
      return;
    }
    const int d = loops[std::size_t(level)];
    for (idx[std::size_t(d)] = 0; idx[std::size_t(d)] < n[std::size_t(d)]; ++idx[std::size_t(d)]) loop(level + 1);
  };
  loop(0);
  if (have_o) ofmap_elems(cur_o, [&](std::size_t) { ++c.ofmap_wr; });
  return c;
}

}  // namespace capsgen::romanet::test
