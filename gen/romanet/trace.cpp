#include "romanet/trace.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace capsgen::romanet {

long long TraceTotals::words() const {
  long long s = 0;
  for (int k = 0; k < 4; ++k) s += read_words[std::size_t(k)] + write_words[std::size_t(k)];
  return s;
}

long long TraceTotals::elements() const {
  long long s = 0;
  for (int k = 0; k < 4; ++k) s += read_elements[std::size_t(k)] + write_elements[std::size_t(k)];
  return s;
}

namespace {

template <class T>
long long ll(T x) {
  return static_cast<long long>(x);
}

// Boundaries of the pieces that the overlapping tiles of one direction cut an extent into.
struct Segments {
  std::vector<int> bound;              // sorted, unique
  std::vector<int> first, last;        // per tile: segment range [first, last)
  int count() const { return int(bound.size()) - 1; }
  int size(int k) const { return bound[std::size_t(k) + 1] - bound[std::size_t(k)]; }
};

Segments segments_of(const std::vector<Interval>& tiles) {
  Segments s;
  for (const Interval& t : tiles) {
    s.bound.push_back(t.lo);
    s.bound.push_back(t.hi);
  }
  std::sort(s.bound.begin(), s.bound.end());
  s.bound.erase(std::unique(s.bound.begin(), s.bound.end()), s.bound.end());
  for (const Interval& t : tiles) {
    s.first.push_back(int(std::lower_bound(s.bound.begin(), s.bound.end(), t.lo) - s.bound.begin()));
    s.last.push_back(int(std::lower_bound(s.bound.begin(), s.bound.end(), t.hi) - s.bound.begin()));
  }
  return s;
}

bool inside(int lo, int hi, const Interval& box) { return lo >= box.lo && hi <= box.hi; }

Interval intersect(const Interval& a, const Interval& b) {
  const int lo = std::max(a.lo, b.lo), hi = std::min(a.hi, b.hi);
  return hi > lo ? Interval{lo, hi} : Interval{0, 0};
}

class Walker {
 public:
  Walker(const LayerGeometry& g, const Tiling& t, const TraceConfig& cfg, dram::TileAllocator& alloc,
         AccessSink& sink)
      : g_(g), cfg_(cfg), alloc_(alloc), sink_(sink) {
    oh_ = split(g.M, t.Tm);
    ow_ = split(g.N, t.Tn);
    ih_ = input_span(g.M, t.Tm, g.stride, g.P, g.pad, g.H);
    iw_ = input_span(g.N, t.Tn, g.stride, g.Q, g.pad, g.W);
    ci_ = split(g.loop_i(), g.depthwise() ? 1 : t.Ti);
    cj_ = split(g.J, t.Tj);
    n_ = {ll(oh_.size()), ll(ow_.size()), ll(ci_.size()), ll(cj_.size())};
    depth_ = g.depthwise() ? &cj_ : &ci_;
    pq_ = g.op == OpKind::CapsPredict ? 1 : static_cast<long long>(g.P) * g.Q;
  }

  TraceTotals run(const Schedule& s) {
    alloc_.reset();
    setup_regions();
    std::array<long long, 4> idx{};  // by dimension
    const long long steps = n_[0] * n_[1] * n_[2] * n_[3];
    for (long long k = 0; k < steps; ++k) {
      if (k > 0) {  // odometer over the loops, innermost fastest
        for (int l = 3; l >= 0; --l) {
          const int d = s.loops[std::size_t(l)];
          if (++idx[std::size_t(d)] < n_[std::size_t(d)]) break;
          idx[std::size_t(d)] = 0;
        }
      }
      step(idx);
    }
    if (have_ofmap_) write_ofmap(cur_ofmap_);
    routing();
    return totals_;
  }

 private:
  long long words_of(long long elements, int eb) const {
    return (elements * eb + cfg_.word_bytes - 1) / cfg_.word_bytes;
  }

  void setup_regions() {
    const long long ni = n_[0] * n_[1] * ll(depth_->size());
    if (cfg_.overlap_reuse) {
      sh_ = segments_of(ih_);
      sw_ = segments_of(iw_);
      long long max_h = 0, max_w = 0, max_d = 0;
      for (int k = 0; k < sh_.count(); ++k) max_h = std::max<long long>(max_h, sh_.size(k));
      for (int k = 0; k < sw_.count(); ++k) max_w = std::max<long long>(max_w, sw_.size(k));
      for (const Interval& d : *depth_) max_d = std::max<long long>(max_d, d.size());
      const long long nblocks = ll(sh_.count()) * sw_.count() * ll(depth_->size());
      if (nblocks > 200'000'000LL) throw std::length_error("too many ifmap blocks for the trace");
      ifmap_place_.assign(std::size_t(nblocks), dram::Placement{});
      const long long depth_total = g_.depthwise() ? g_.J : g_.I;
      region_ifmap_ = alloc_.add_region(
          std::uint64_t(words_of(static_cast<long long>(g_.H) * g_.W * depth_total, cfg_.bytes.ifmap) + nblocks),
          std::uint64_t(nblocks), std::uint64_t(words_of(max_h * max_w * max_d, cfg_.bytes.ifmap)));
    } else {
      // Every ifmap tile stored whole: the sum of all tile sizes.
      const DimStats a = dim_stats(ih_), b = dim_stats(iw_), c = dim_stats(*depth_);
      const long long sum = a.sum * b.sum * c.sum, mx = a.max * b.max * c.max;
      ifmap_place_.assign(std::size_t(ni), dram::Placement{});
      region_ifmap_ = alloc_.add_region(std::uint64_t(words_of(sum, cfg_.bytes.ifmap) + ni), std::uint64_t(ni),
                                        std::uint64_t(words_of(mx, cfg_.bytes.ifmap)));
    }
    // Weights.
    long long nw = 1;
    for (int d = 0; d < 4; ++d)
      if (g_.depends(kWeight, d)) nw *= n_[std::size_t(d)];
    weight_place_.assign(std::size_t(nw), dram::Placement{});
    const long long wmax = weight_tile_elements(0, 0, 0, 0, true);
    region_weight_ = alloc_.add_region(std::uint64_t(words_of(g_.weight_elements(), cfg_.bytes.weight) + nw),
                                       std::uint64_t(nw), std::uint64_t(words_of(wmax, cfg_.bytes.weight)));
    // Ofmaps.
    const long long no = n_[0] * n_[1] * n_[3];
    ofmap_place_.assign(std::size_t(no), dram::Placement{});
    ofmap_visits_.assign(std::size_t(no), 0);
    const long long omax = ll(oh_[0].size()) * ow_[0].size() * cj_[0].size();
    region_ofmap_ = alloc_.add_region(std::uint64_t(words_of(g_.ofmap_elements(), cfg_.bytes.ofmap) + no),
                                      std::uint64_t(no), std::uint64_t(words_of(omax, cfg_.bytes.ofmap)));
    if (g_.op == OpKind::CapsPredict && g_.routing_iterations > 0) {
      region_routing_ = alloc_.add_region(std::uint64_t(words_of(g_.routing_out, cfg_.bytes.ofmap) + 1), 1,
                                          std::uint64_t(words_of(g_.routing_out, cfg_.bytes.ofmap)));
    }
  }

  long long weight_tile_elements(long long th, long long tw, long long ti, long long tj, bool largest = false) const {
    auto sz = [&](const std::vector<Interval>& v, long long k) {
      return largest ? ll(v[0].size()) : ll(v[std::size_t(k)].size());
    };
    switch (g_.op) {
      case OpKind::Depthwise:
        return pq_ * sz(cj_, tj);
      case OpKind::CapsPredict:
        return sz(oh_, th) * sz(ow_, tw) * sz(ci_, ti) * sz(cj_, tj);
      case OpKind::Conv:
      case OpKind::FullyConnected:
        break;
    }
    return pq_ * sz(ci_, ti) * sz(cj_, tj);
  }

  void emit(dram::Placement& p, int region, long long elements, int eb, bool write, int stream) {
    if (elements <= 0) return;
    const long long words = words_of(elements, eb);
    if (p.words == 0) p = alloc_.allocate(region, std::uint64_t(words));
    const long long beats = cfg_.beats_per_request;
    for (long long k = 0; k < words; k += beats) {
      const int b = int(std::min(beats, words - k));
      sink_.on_request(alloc_.address(p, std::uint64_t(k)), write, b, stream);
      ++totals_.requests;
    }
    if (write) {
      totals_.write_elements[std::size_t(stream)] += elements;
      totals_.write_words[std::size_t(stream)] += words;
    } else {
      totals_.read_elements[std::size_t(stream)] += elements;
      totals_.read_words[std::size_t(stream)] += words;
    }
  }

  long long ofmap_key(long long th, long long tw, long long tj) const { return (th * n_[1] + tw) * n_[3] + tj; }

  void write_ofmap(long long key) {
    const long long tj = key % n_[3], tw = (key / n_[3]) % n_[1], th = key / (n_[3] * n_[1]);
    const long long e = ll(oh_[std::size_t(th)].size()) * ow_[std::size_t(tw)].size() * cj_[std::size_t(tj)].size();
    const bool first_touch = ofmap_place_[std::size_t(key)].words == 0;
    emit(ofmap_place_[std::size_t(key)], region_ofmap_, e, cfg_.bytes.ofmap, true, kStreamOfmap);
    if (first_touch && e > 0) ofmap_order_.push_back(key);
    ++ofmap_visits_[std::size_t(key)];
  }

  void step(const std::array<long long, 4>& idx) {
    const long long th = idx[kDimH], tw = idx[kDimW], ti = idx[kDimI], tj = idx[kDimJ];
    // 1. Ofmaps / partial sums: write back the tile that leaves, read the partial sums of the one that comes.
    const long long ok = ofmap_key(th, tw, tj);
    if (!have_ofmap_ || ok != cur_ofmap_) {
      if (have_ofmap_) write_ofmap(cur_ofmap_);
      if (ofmap_visits_[std::size_t(ok)] > 0) {
        const long long e = ll(oh_[std::size_t(th)].size()) * ow_[std::size_t(tw)].size() * cj_[std::size_t(tj)].size();
        emit(ofmap_place_[std::size_t(ok)], region_ofmap_, e, cfg_.bytes.ofmap, false, kStreamOfmap);
      }
      cur_ofmap_ = ok;
      have_ofmap_ = true;
    }
    // 2. Ifmaps.
    const long long td = g_.depthwise() ? tj : ti;
    if (!have_ifmap_ || th != ih_cur_[0] || tw != ih_cur_[1] || td != ih_cur_[2]) {
      fetch_ifmap(th, tw, td);
      ih_cur_ = {th, tw, td};
      have_ifmap_ = true;
    }
    // 3. Weights.
    long long wk = 0;
    switch (g_.op) {
      case OpKind::Depthwise:
        wk = tj;
        break;
      case OpKind::CapsPredict:
        wk = ((th * n_[1] + tw) * n_[2] + ti) * n_[3] + tj;
        break;
      case OpKind::Conv:
      case OpKind::FullyConnected:
        wk = ti * n_[3] + tj;
        break;
    }
    if (!have_weight_ || wk != cur_weight_) {
      emit(weight_place_[std::size_t(wk)], region_weight_, weight_tile_elements(th, tw, ti, tj), cfg_.bytes.weight,
           false, kStreamWeight);
      cur_weight_ = wk;
      have_weight_ = true;
    }
  }

  void fetch_ifmap(long long th, long long tw, long long td) {
    const Interval& dd = (*depth_)[std::size_t(td)];
    if (!cfg_.overlap_reuse) {
      const long long key = (th * n_[1] + tw) * ll(depth_->size()) + td;
      const long long e = ll(ih_[std::size_t(th)].size()) * iw_[std::size_t(tw)].size() * dd.size();
      emit(ifmap_place_[std::size_t(key)], region_ifmap_, e, cfg_.bytes.ifmap, false, kStreamIfmap);
      return;
    }
    // The part of the tile already on chip: the intersection with the previous tile (same channels).
    Interval keep_h{0, 0}, keep_w{0, 0};
    if (have_ifmap_ && ih_cur_[2] == td) {
      keep_h = intersect(ih_[std::size_t(ih_cur_[0])], ih_[std::size_t(th)]);
      keep_w = intersect(iw_[std::size_t(ih_cur_[1])], iw_[std::size_t(tw)]);
    }
    const long long nd = ll(depth_->size());
    for (int hs = sh_.first[std::size_t(th)]; hs < sh_.last[std::size_t(th)]; ++hs) {
      const int h0 = sh_.bound[std::size_t(hs)], h1 = sh_.bound[std::size_t(hs) + 1];
      const bool h_kept = keep_h.size() > 0 && inside(h0, h1, keep_h);
      for (int ws = sw_.first[std::size_t(tw)]; ws < sw_.last[std::size_t(tw)]; ++ws) {
        const int w0 = sw_.bound[std::size_t(ws)], w1 = sw_.bound[std::size_t(ws) + 1];
        if (h_kept && keep_w.size() > 0 && inside(w0, w1, keep_w)) continue;
        const long long key = (ll(hs) * sw_.count() + ws) * nd + td;
        emit(ifmap_place_[std::size_t(key)], region_ifmap_, ll(h1 - h0) * (w1 - w0) * dd.size(),
             cfg_.bytes.ifmap, false, kStreamIfmap);
      }
    }
  }

  // class_caps: u_hat streamed from DRAM once per routing iteration (in the order it was written),
  // then v written.
  void routing() {
    if (g_.op != OpKind::CapsPredict || g_.routing_iterations <= 0) return;
    for (int r = 0; r < g_.routing_iterations; ++r) {
      for (long long key : ofmap_order_) {
        dram::Placement& p = ofmap_place_[std::size_t(key)];
        const long long tj = key % n_[3], tw = (key / n_[3]) % n_[1], th = key / (n_[3] * n_[1]);
        const long long e = ll(oh_[std::size_t(th)].size()) * ow_[std::size_t(tw)].size() * cj_[std::size_t(tj)].size();
        emit(p, region_ofmap_, e, cfg_.bytes.ofmap, false, kStreamRouting);
      }
    }
    dram::Placement v;
    emit(v, region_routing_, g_.routing_out, cfg_.bytes.ofmap, true, kStreamRouting);
  }

  const LayerGeometry& g_;
  const TraceConfig& cfg_;
  dram::TileAllocator& alloc_;
  AccessSink& sink_;
  std::vector<Interval> oh_, ow_, ih_, iw_, ci_, cj_;
  const std::vector<Interval>* depth_ = nullptr;
  std::array<long long, 4> n_{};
  long long pq_ = 1;
  Segments sh_, sw_;
  std::vector<dram::Placement> ifmap_place_, weight_place_, ofmap_place_;
  std::vector<int> ofmap_visits_;
  std::vector<long long> ofmap_order_;
  int region_ifmap_ = -1, region_weight_ = -1, region_ofmap_ = -1, region_routing_ = -1;
  bool have_ofmap_ = false, have_ifmap_ = false, have_weight_ = false;
  long long cur_ofmap_ = 0, cur_weight_ = 0;
  std::array<long long, 3> ih_cur_{};
  TraceTotals totals_;
};

}  // namespace

TraceTotals generate_trace(const LayerGeometry& g, const Tiling& t, const Schedule& s, const TraceConfig& cfg,
                           dram::TileAllocator& alloc, AccessSink& sink) {
  if (cfg.word_bytes < 1 || cfg.beats_per_request < 1) throw std::invalid_argument("generate_trace: bad config");
  Walker w(g, t, cfg, alloc, sink);
  return w.run(s);
}

}  // namespace capsgen::romanet
