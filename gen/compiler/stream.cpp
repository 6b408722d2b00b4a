#include "compiler/stream.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "compiler/compiler.hpp"
#include "config/act_params.hpp"
#include "dram/dram_spec.hpp"
#include "isa/engine_timing.hpp"
#include "isa/gemm_ref.hpp"
#include "numerics/activation.hpp"

namespace capsgen {

double offchip_bytes_per_cycle(const AccelConfig& cfg) {
  const double dram = dram::offchip_dram(cfg.offchip.dram).peak_gbps() * 1e3 / cfg.clock.target_mhz;
  return std::min(cfg.offchip.bus_bits / 8.0, dram);
}

SectorMap::SectorMap(const AccelConfig& cfg, const OnchipMap& m) : map(m) {
  const ScratchpadConfig& s = cfg.scratchpad;
  gating = s.power_gating;
  const MemoryConfig* mems[kOnchipMemories] = {&s.data, &s.weight, &s.acc, &s.shared, &s.shared};
  for (int i = 0; i < kOnchipMemories; ++i) {
    const MemoryConfig& mc = *mems[m.phys(i)];
    if (!mc.present || m.elements[i] == 0) continue;
    banks[i] = std::max(1, mc.banks);
    sectors[i] = std::max(1, mc.sectors);
    const std::int64_t sector_bytes = std::int64_t(banks[i]) * sectors[i] * (mc.width_bits / 8);
    wps[i] = std::max<std::int64_t>(1, std::int64_t(mc.size_kib) * 1024 / sector_bytes);
  }
}

int SectorMap::memory_of(std::int64_t a) const {
  for (int m = 0; m < kOnchipMemories; ++m)
    if (a >= map.base[m] && a < map.base[m] + map.elements[m]) return m;
  return -1;
}

bool SectorMap::of(std::int64_t a, int& mem, int& sector) const {
  const int view = memory_of(a);
  if (view < 0) return false;
  sector = sector_of_word(view, word_of(view, a));
  mem = map.phys(view);
  return true;
}

std::int64_t Move::elements() const {
  std::int64_t n = 1;
  for (const MoveDim& d : dims) n *= d.count;
  return n;
}

std::pair<std::int64_t, std::int64_t> Move::extent(bool on_chip) const {
  std::int64_t lo = on_chip ? chip : dram, hi = lo;
  for (const MoveDim& d : dims) {
    const std::int64_t step = (d.count - 1) * (on_chip ? d.chip_stride : d.dram_stride);
    (step < 0 ? lo : hi) += step;
  }
  return {lo, hi};
}

bool Move::operator==(const Move& o) const {
  return store == o.store && mem == o.mem && dram == o.dram && chip == o.chip && dims == o.dims && widen == o.widen;
}

namespace {

// One index of an access pattern: extent and DRAM stride (elements).
struct Axis {
  std::int64_t n = 1, s = 0;
};

// A buffer: the box an access pattern covers, laid out densely on chip in the order of its
// normalized dimensions (ascending DRAM stride).
struct Box {
  std::int64_t dram = 0;
  std::vector<MoveDim> dims;  // count, DRAM stride, chip stride (dense)
  std::int64_t size() const {
    std::int64_t n = 1;
    for (const MoveDim& d : dims) n *= d.count;
    return n;
  }
  // On-chip stride of a pattern axis of extent n and DRAM stride s (an axis the box was made of);
  // an axis of extent 1 contributes nothing and gets 0.
  std::int64_t chip_stride(std::int64_t n, std::int64_t s) const {
    if (s == 0 || n <= 1) return 0;
    for (auto it = dims.rbegin(); it != dims.rend(); ++it)
      if (it->dram_stride <= s && s % it->dram_stride == 0) return s / it->dram_stride * it->chip_stride;
    throw std::logic_error("stream: axis stride outside its box");
  }
};

// The box of base + sum_i idx_i * s_i: axes of extent 1 or stride 0 vanish; axes that continue one
// another merge; overlapping ones (conv windows) merge into their hull.
Box make_box(std::int64_t base, std::vector<Axis> axes) {
  std::vector<Axis> a;
  for (const Axis& x : axes) {
    if (x.n <= 1 || x.s == 0) continue;
    if (x.s < 0) throw StreamError("stream: negative strides are not supported");
    a.push_back(x);
  }
  std::sort(a.begin(), a.end(), [](const Axis& l, const Axis& r) { return l.s < r.s; });
  std::vector<Axis> merged;
  for (const Axis& x : a) {
    if (merged.empty()) {
      merged.push_back(x);
      continue;
    }
    Axis& c = merged.back();
    if (x.s % c.s == 0 && x.s <= c.n * c.s) {
      c.n = (x.n - 1) * (x.s / c.s) + c.n;  // continues (x.s == c.n*c.s) or overlaps: the hull
    } else if (x.s % c.s == 0) {
      merged.push_back(x);
    } else {
      const std::int64_t g = std::gcd(c.s, x.s);
      c = {((c.n - 1) * c.s + (x.n - 1) * x.s) / g + 1, g};
    }
  }
  Box b;
  b.dram = base;
  std::int64_t chip = 1;
  for (const Axis& x : merged) {
    b.dims.push_back({x.n, x.s, chip});
    chip *= x.n;
  }
  return b;
}

// The DMA moves of a box at chip address `chip` (at most 3 levels each: outer levels become moves).
void add_moves(const Box& b, std::int64_t chip, Onchip mem, bool store, bool widen, std::vector<Move>& out) {
  if (b.dims.size() <= 3) {
    Move m;
    m.store = store;
    m.mem = mem;
    m.dram = b.dram;
    m.chip = chip;
    m.dims = b.dims;
    if (m.dims.empty()) m.dims.push_back({1, 1, 1});
    m.widen = widen;
    out.push_back(m);
    return;
  }
  Box inner = b;
  const MoveDim outer = inner.dims.back();
  inner.dims.pop_back();
  for (std::int64_t i = 0; i < outer.count; ++i) {
    inner.dram = b.dram + i * outer.dram_stride;
    add_moves(inner, chip + i * outer.chip_stride, mem, store, widen, out);
  }
}

std::int64_t align_up(std::int64_t x, std::int64_t a) { return (x + a - 1) / a * a; }

// Buffers of one part in one memory: each starts on a scratchpad word. With HY (docs/memory-system.md
// section 2.1) the data and weight placers overflow into the shared memory: a buffer that does not fit
// what is left of the separate memory's half goes to the shared memory's half (DESCNet Fig. 29, per
// buffer: an engine access never spans two memories).
// With SMP (section 2.2) data and weight have no memory of their own (every buffer spills into the
// shared memory) and the acc placer takes its psum lanes from the shared placer's bytes (4 per lane,
// from a word boundary), so the buffers of a part never share a byte of the one memory.
// `tail`: elements an engine access may read past a buffer's last element (brd reads rows of `cols`
// psum lanes, also for a per-output init that uses lane 0 only, so a buffer of psum lanes needs
// cols - 1 lanes after it inside its range: memsys drops a row that leaves the range). A buffer that
// would end too close to the range's end spills like one that does not fit, or the part does not fit.
// The rule is the second half's (it ends where the range ends) whichever half the part uses, so the
// split search, which builds its candidate parts in the first half, judges every part of a split alike.
class Placer {
 public:
  Placer(const OnchipMap& map, Onchip m, int half, Placer* overflow = nullptr, std::int64_t tail = 0)
      : map_(map), m_(m), overflow_(overflow), tail_(tail) {
    begin_ = map.base[int(m)] + half * map.half(m);
    next_ = begin_;
    if (map.phys(int(m)) != int(m)) {
      if (!overflow) throw std::logic_error("stream: a lane view needs the shared placer");
      view_of_ = overflow;
      overflow_ = nullptr;
    }
  }
  std::int64_t place(std::int64_t size) {
    std::int64_t at = next_;
    if (view_of_) {
      const std::int64_t byte = view_of_->place(4 * size) - map_.base[int(Onchip::kShared)];
      at = map_.base[int(m_)] + byte / 4;
    } else {
      next_ = align_up(next_ + size, map_.word_elements[int(m_)]);
    }
    end_ = std::max(end_, at + size);
    return at;
  }
  bool fits() const {
    if (end_ > 0 && end_ - begin_ + tail_ > room()) return false;
    return view_of_ ? view_of_->fits() : next_ - begin_ <= map_.half(m_);
  }
  // An input buffer: placed, and brought in by DMA moves before the part.
  std::int64_t load(const Box& b, Part& part, bool widen = false) {
    if (Placer* o = spill(b.size())) return o->load(b, part, widen);
    const std::int64_t at = place(b.size());
    add_moves(b, at, m_, false, widen, part.loads);
    return at;
  }
  // An output buffer of which the part writes `written` elements: taken out by DMA moves after the
  // part. A box the part does not write completely is loaded first (read-modify-write), so the
  // store returns the elements it did not write unchanged.
  std::int64_t store(const Box& b, std::int64_t written, Part& part) {
    if (Placer* o = spill(b.size())) return o->store(b, written, part);
    const std::int64_t at = place(b.size());
    if (b.size() != written) add_moves(b, at, m_, false, false, part.loads);
    add_moves(b, at, m_, true, false, part.stores);
    return at;
  }

 private:
  // The overflow placer when a buffer of `size` elements does not fit the rest of this half.
  Placer* spill(std::int64_t size) const {
    const bool over = next_ + size - begin_ > map_.half(m_) || next_ + size - begin_ + tail_ > room();
    return overflow_ && over ? overflow_ : nullptr;
  }
  // Elements from a half's start to the range's end in the second half (an odd range's extra one included).
  std::int64_t room() const { return map_.elements[int(m_)] - map_.half(m_); }
  const OnchipMap& map_;
  Onchip m_;
  Placer* overflow_ = nullptr;
  Placer* view_of_ = nullptr;  // a lane view (SMP's acc, HY's lanes): the shared placer it takes bytes from
  std::int64_t tail_ = 0;
  std::int64_t begin_ = 0, next_ = 0, end_ = 0;  // end_: past the last element placed (0: none)
};

// The region holding DRAM element a: the program's, or one of `extra`.
const isa::Region* region_at(const isa::Program& prog, const std::vector<isa::Region>& extra, std::int64_t a) {
  for (const auto* list : {&prog.regions, &extra})
    for (const isa::Region& r : *list)
      if (a >= r.base && a < r.base + r.stored_size()) return &r;
  return nullptr;
}

long long move_bytes(const isa::Program& prog, const std::vector<isa::Region>& extra, const std::vector<Move>& moves) {
  long long bytes = 0;
  for (const Move& m : moves) {
    const isa::Region* r = region_at(prog, extra, m.dram);
    bytes += m.elements() * (((r ? r->bits : 8) + 7) / 8);
  }
  return bytes;
}

// A part of a Gemm: batch items [b0, b0+nb), vectors [m0, m0+nm), tiles [n0, n0+nn), reduction
// chunks [k0, k0+nk). The parts of a split reduction are one accumulator block each (nb = 1, nm x nn
// entries) and run back to back: one that does not end the reduction holds its sums in the
// accumulators (Gemm::acc_hold: no outputs), one that does not start it continues from them
// (acc_continue: no init).
struct GemmPartSpec {
  int b0 = 0, nb = 1, m0 = 0, nm = 1, n0 = 0, nn = 1, k0 = 0, nk = 1;
};

struct Built {
  Part part;
  bool fits = true;
};

Built build_gemm_part(const isa::Program& prog, const OnchipMap& map, const AccelConfig& cfg, const isa::Gemm& g,
                      int half, const GemmPartSpec& ps) {
  const int R = cfg.array.rows, C = cfg.array.cols;
  const auto [b0, nb, m0, nm, n0, nn, k0, nk] = ps;
  const bool first_k = k0 == 0, last_k = k0 + nk == g.k_chunks;
  Built out;
  isa::Gemm p = g;
  p.batch = nb;
  p.m_total = nm;
  // A split reduction's part is one block (its accumulators carry over to the next part).
  p.m_block = first_k && last_k ? std::min(g.m_block, nm) : nm;
  // A Gemm that is itself a part of a split reduction (caps_add's inputs) runs as one part.
  p.acc_continue = g.acc_continue || !first_k;
  p.acc_hold = g.acc_hold || !last_k;
  p.n_tiles = nn;
  p.k_chunks = nk;
  p.r_total = std::min(g.r_total - k0 * R, nk * R);
  const int o_lo = n0 * C, o_hi = std::min((n0 + nn) * C, g.n_total);
  p.n_total = o_hi - o_lo;
  Placer shared(map, Onchip::kShared, half);
  Placer* spill = map.has_shared() ? &shared : nullptr;
  Placer data(map, Onchip::kData, half, spill), weight(map, Onchip::kWeight, half, spill);
  // HY: acc buffers that do not fit the acc memory's half take psum lanes of the shared memory's half.
  Placer lanes(map, Onchip::kLanes, half, map.has_lanes() ? &shared : nullptr, C - 1);
  Placer acc(map, Onchip::kAcc, half, map.smp ? &shared : map.has_lanes() ? &lanes : nullptr, C - 1);

  // Tiles (b, k, n) of the part's ranges.
  {
    const isa::TileSource& t = g.tile;
    const int rows = t.diag_groups > 1 ? R / t.diag_groups : R;
    const Box b = make_box(t.base + b0 * t.s_b + std::int64_t(k0) * t.s_k + n0 * t.s_n,
                           {{nb, t.s_b}, {nk, t.s_k}, {nn, t.s_n}, {rows, t.s_r}, {C, t.s_c}});
    const std::int64_t at = weight.load(b, out.part);
    p.tile = {at, b.chip_stride(nb, t.s_b), b.chip_stride(nk, t.s_k), b.chip_stride(nn, t.s_n),
              b.chip_stride(rows, t.s_r), b.chip_stride(C, t.s_c), t.diag_groups};
  }
  // Data vectors.
  {
    const isa::DataSource& d = g.data;
    if (d.kind == isa::DataSource::Kind::kConv) {
      // Whole output rows (stream_gemm's m_unit): the part reads the band of input rows its windows
      // cover. A band below the padded map's top has no zero rows above it (DataSource::band); the
      // first part keeps the map's top padding. Reduction parts are whole channels (k_unit).
      const bool whole = (m0 == 0 && nm == g.m_total);
      if (!whole && (m0 % d.out_w != 0 || nm % d.out_w != 0))
        throw std::logic_error("stream: conv part not on whole output rows");
      // The part's reduction indices [R0, R1) cover channels [c0, c1); r_offset starts it inside c0.
      const int window = d.kernel_h * d.kernel_w;
      const int R0 = d.r_offset + k0 * R, R1 = d.r_offset + std::min(g.r_total, (k0 + nk) * R);
      const int c0 = R0 / window, nc = (R1 + window - 1) / window - c0;
      p.data.r_offset = R0 - c0 * window;
      const int y0 = m0 / d.out_w, ny = nm / d.out_w;
      const int pad_top = d.band ? 0 : d.padding, top = y0 * d.stride - pad_top;  // first row the windows touch
      if (!whole && top < 0 && y0 > 0) throw std::logic_error("stream: conv part starts inside the top padding");
      const int row0 = whole ? 0 : std::max(0, top);
      const int band = whole ? d.height
                             : std::min(d.height, (y0 + ny - 1) * d.stride - pad_top + d.kernel_h) - row0;
      p.data.band = d.band || (!whole && pad_top > 0 && top >= 0);
      const std::int64_t plane = std::int64_t(d.height) * d.width;
      const Box b = make_box(d.base + b0 * d.s_b + c0 * plane + std::int64_t(row0) * d.width,
                             {{d.width, 1}, {band, d.width}, {nc, plane}, {nb, d.s_b}});
      const std::int64_t at = data.load(b, out.part);
      p.data.base = at;
      p.data.s_b = b.chip_stride(nb, d.s_b);
      p.data.height = band;
      p.data.channels = nc;
      if (nc > 1 && b.chip_stride(nc, plane) != std::int64_t(band) * d.width)
        throw std::logic_error("stream: conv band layout");
    } else {
      const Box b = make_box(d.base + b0 * d.s_b + m0 * d.s_m + std::int64_t(k0) * d.s_k,
                             {{nb, d.s_b}, {nm, d.s_m}, {nk, d.s_k}, {R, d.s_r}});
      const std::int64_t at = data.load(b, out.part);
      p.data.base = at;
      p.data.s_b = b.chip_stride(nb, d.s_b);
      p.data.s_m = b.chip_stride(nm, d.s_m);
      p.data.s_k = b.chip_stride(nk, d.s_k);
      p.data.s_r = b.chip_stride(R, d.s_r);
    }
  }
  // Accumulator init (a part that continues a reduction starts from the accumulators).
  if (p.acc_continue) {
    p.init = {};
  } else if (g.init.kind == isa::AccInit::Kind::kPerColumn) {
    const Box b = make_box(g.init.base + o_lo, {{o_hi - o_lo, 1}});
    const std::int64_t at = acc.load(b, out.part);
    p.init.base = at;
  } else if (g.init.kind == isa::AccInit::Kind::kPerOutput) {
    const Box b = make_box(g.init.base + b0 * g.init.s_b + m0 * g.init.s_m, {{nb, g.init.s_b}, {nm, g.init.s_m}});
    const isa::Region* r = region_at(prog, {}, b.dram);
    const std::int64_t at = acc.load(b, out.part, !r || r->bits <= 8);
    p.init.base = at;
    p.init.s_b = b.chip_stride(nb, g.init.s_b);
    p.init.s_m = b.chip_stride(nm, g.init.s_m);
  }
  // Outputs: none while the accumulators hold the sums; the reduced outputs into the data memory.
  if (p.acc_hold) {
    p.out = {};
  } else {
    const isa::OutTarget& o = g.out;
    std::vector<Axis> axes = {{nb, o.s_b}, {nm, o.s_m}};
    std::int64_t base = o.base + b0 * o.s_b + m0 * o.s_m;
    std::int64_t written = std::int64_t(nb) * nm;
    std::int64_t o1_n = 1, o2_n = 1;
    if (o.select_mod == 0) {
      if (o.o_div == 1) {
        o1_n = o_hi - o_lo;
        axes.push_back({o1_n, o.s_o1});
        base += std::int64_t(o_lo) * o.s_o1;
      } else {
        if (o_lo % o.o_div != 0) throw std::logic_error("stream: output part not aligned to o_div");
        o1_n = (o_hi - o_lo + o.o_div - 1) / o.o_div;
        o2_n = std::min(o.o_div, o_hi - o_lo);
        axes.push_back({o1_n, o.s_o1});
        axes.push_back({o2_n, o.s_o2});
        base += std::int64_t(o_lo / o.o_div) * o.s_o1;
      }
      written *= (o_hi - o_lo);
    }
    const Box b = make_box(base, axes);
    const std::int64_t at = data.store(b, written, out.part);
    p.out.base = at;
    p.out.s_b = b.chip_stride(nb, o.s_b);
    p.out.s_m = b.chip_stride(nm, o.s_m);
    p.out.s_o1 = b.chip_stride(o1_n, o.s_o1);
    p.out.s_o2 = b.chip_stride(o2_n, o.s_o2);
  }
  out.part.op = p;
  out.part.half = half;
  out.fits = data.fits() && weight.fits() && acc.fits() && lanes.fits() && shared.fits();
  return out;
}

std::vector<int> sizes_upto(int total, int unit) {
  std::vector<int> s;
  for (long long n = unit; n < total; n *= 2) s.push_back(int(n));
  s.push_back(total);
  return s;
}

// The part as the engine times it: a conv reduction offset changes addresses, not cycles (the engine
// times held and continued parts like any Gemm: the writer steps through the outputs it does not write).
isa::Instr timing_view(const isa::Gemm& g) {
  isa::Gemm t = g;
  t.data.r_offset = 0;
  return t;
}

// The engine can run the part (isa::encode_engine accepts it; a conv reduction part that starts
// inside a window needs the gather's r_offset, which the engine does not have yet).
bool encodable(const AccelConfig& cfg, const isa::Gemm& g) {
  try {
    isa::encode_engine(g, cfg.array.rows, cfg.array.cols, cfg.accumulator.depth);
    return true;
  } catch (const std::invalid_argument&) {
    return false;
  }
}

void stream_gemm(const AccelConfig& cfg, const isa::Program& prog, const OnchipMap& map, std::size_t index,
                 const isa::Gemm& g, StreamedProgram& sp) {
  const int C = cfg.array.cols;
  const bool conv = g.data.kind == isa::DataSource::Kind::kConv;
  // Vectors per part: whole output rows for convolutions, enough of them that every part but the first
  // starts below the top padding (its band has none: DataSource::band); multiples of select_mod.
  int m_unit = 1;
  if (conv) {
    const int pad_top = g.data.band ? 0 : g.data.padding;
    m_unit = g.data.out_w * std::max(1, (pad_top + g.data.stride - 1) / g.data.stride);
  }
  if (g.out.select_mod > 0) m_unit = std::lcm(m_unit, g.out.select_mod);
  m_unit = std::min(m_unit, g.m_total);
  // Reduction chunks per part: any (a conv part may start inside a window: DataSource::r_offset, the
  // gather's start position; parts the engine cannot encode are not chosen); block-diagonal tiles are
  // not split.
  int k_unit = 1;
  if (g.tile.diag_groups > 1) k_unit = g.k_chunks;
  k_unit = std::min(k_unit, g.k_chunks);
  std::vector<int> n_sizes;
  for (int nn = 1; nn <= g.n_tiles; ++nn) {
    if (nn < g.n_tiles && g.out.select_mod > 0) continue;
    if (nn < g.n_tiles && (nn * C) % g.out.o_div != 0) continue;
    n_sizes.push_back(nn);
  }
  const isa::EngineTimingShape shape = engine_timing_shape(cfg);
  const double bytes_per_cycle = offchip_bytes_per_cycle(cfg);
  bool found = false;
  double best_time = 0, best_compute = 0;
  long long best_bytes = 0;
  GemmPartSpec best;
  // A Gemm that holds or continues the accumulators across instructions (a split reduction the
  // compiler made, caps_add) is one part: its sums are one block.
  const bool whole_only = g.acc_hold || g.acc_continue;
  if (whole_only) n_sizes = {g.n_tiles};
  // Whole reductions first: a split one is one accumulator block per part (more weight reloads).
  for (const bool split_k : {false, true}) {
    if (found || (split_k && (k_unit >= g.k_chunks || whole_only))) break;
    for (int nk : split_k ? sizes_upto(g.k_chunks, k_unit) : std::vector<int>{g.k_chunks})
      for (int nb : whole_only ? std::vector<int>{g.batch} : sizes_upto(g.batch, 1))
        for (int nm : whole_only ? std::vector<int>{g.m_total} : sizes_upto(g.m_total, m_unit))
          for (int nn : n_sizes) {
            if (split_k && nk == g.k_chunks) continue;
            // A split reduction's parts keep their sums in the accumulators: one block each.
            if (split_k && (nb != 1 || (long long)nm * nn > cfg.accumulator.depth)) continue;
            // The largest part of each kind: a middle reduction part and the last one; both must fit
            // and be encodable.
            long long bytes = 0;
            double cycles = 0;
            bool ok = true;
            const int k_parts = (g.k_chunks + nk - 1) / nk;
            const long long outer = (long long)((g.batch + nb - 1) / nb) * ((g.m_total + nm - 1) / nm) *
                                    ((g.n_tiles + nn - 1) / nn);
            // Representative parts: k_parts 1: the one; 2: both; more: a middle one for all but the
            // last, and the last.
            std::vector<std::pair<int, long long>> reps = {{0, 1}};
            if (k_parts == 2) reps = {{0, 1}, {1, 1}};
            if (k_parts > 2) reps = {{1, k_parts - 1}, {k_parts - 1, 1}};
            // A conv's reduction parts touch different numbers of input channels (a part starting late
            // in a window reaches one more): the middle representative is the one touching the most.
            if (conv && k_parts > 2) {
              const long long window = (long long)g.data.kernel_h * g.data.kernel_w, R = cfg.array.rows;
              int worst = 1;
              long long most = -1;
              for (int kp = 1; kp + 1 < k_parts; ++kp) {
                const long long R0 = g.data.r_offset + kp * nk * R, R1 = g.data.r_offset + std::min<long long>(g.r_total, (kp + 1LL) * nk * R);
                const long long nc = (R1 + window - 1) / window - R0 / window;
                if (nc > most) most = nc, worst = kp;
              }
              reps[0].first = worst;
            }
            for (const auto& [kp, count] : reps) {
              const int k0 = kp * nk;
              const Built b = build_gemm_part(prog, map, cfg, g, 0, {0, nb, 0, nm, 0, nn, k0, std::min(nk, g.k_chunks - k0)});
              isa::EngineTiming t;
              const isa::Gemm& pg = std::get<isa::Gemm>(b.part.op);
              if (!b.fits || (split_k && !encodable(cfg, pg)) || !isa::instr_timing(timing_view(pg), shape, &t)) {
                ok = false;
                break;
              }
              // A padded convolution's first band has the map's top padding; the next one reads
              // `padding` more input rows and must fit too (the last is cut by the map's bottom).
              if (conv && nm < g.m_total &&
                  !build_gemm_part(prog, map, cfg, g, 0,
                                   {0, nb, nm, std::min(nm, g.m_total - nm), 0, nn, k0, std::min(nk, g.k_chunks - k0)})
                       .fits) {
                ok = false;
                break;
              }
              bytes += count * (move_bytes(prog, {}, b.part.loads) + move_bytes(prog, {}, b.part.stores));
              // The sequencer needs words + 2 cycles per descriptor (isa::program_cycles).
              cycles += double(count) * double(std::max<long long>(t.cycles, isa::engine_descriptor_words() + 2));
            }
            if (!ok) continue;
            bytes *= outer;
            const double time = std::max(double(outer) * cycles, double(bytes) / bytes_per_cycle);
            // Equal time (bound by the moves): fewer bytes, then less compute (fewer, larger parts).
            const double compute = double(outer) * cycles;
            if (!found || time < best_time ||
                (time == best_time && (bytes < best_bytes || (bytes == best_bytes && compute < best_compute)))) {
              found = true;
              best_time = time;
              best_bytes = bytes;
              best_compute = compute;
              best = {0, nb, 0, nm, 0, nn, 0, nk};
            }
          }
  }
  if (!found)
    throw StreamError(fmt::format(
        "{}: no part fits the on-chip memories (half of each per part: {} data, {} weight, {} acc, {} shared "
        "elements), not even 1 batch item x {} vectors x 1 output tile x {} reduction chunks",
        g.name, map.half(Onchip::kData), map.half(Onchip::kWeight), map.half(Onchip::kAcc),
        map.half(Onchip::kShared), m_unit, k_unit));
  for (int b0 = 0; b0 < g.batch; b0 += best.nb)
    for (int m0 = 0; m0 < g.m_total; m0 += best.nm)
      for (int n0 = 0; n0 < g.n_tiles; n0 += best.nn)
        for (int k0 = 0; k0 < g.k_chunks; k0 += best.nk) {
          const int half = int(sp.parts.size() % 2);
          Built b = build_gemm_part(prog, map, cfg, g, half,
                                    {b0, std::min(best.nb, g.batch - b0), m0, std::min(best.nm, g.m_total - m0), n0,
                                     std::min(best.nn, g.n_tiles - n0), k0, std::min(best.nk, g.k_chunks - k0)});
          b.part.instr = index;
          sp.parts.push_back(std::move(b.part));
        }
}

// Activate and Fill: ranges of vectors (elements), as many as fit. Their results go to the weight
// memory (docs/memory-system.md section 2): the activation unit cannot hold a result while the
// writer waits for a bank, and no engine port reads the weight memory during these passes, so a
// weight write never waits. Activate's inputs stay in the data memory (drd); a part must fit both
// halves: its input in the data half, its output (and the read-modify-write load of an output box it
// writes only partly) in the weight half.
void stream_activate(const OnchipMap& map, std::size_t index, const isa::Activate& a, StreamedProgram& sp) {
  const auto build = [&](int half, int v0, int nv, Part& part) {
    Placer shared(map, Onchip::kShared, half);
    Placer* spill = map.has_shared() ? &shared : nullptr;
    Placer data(map, Onchip::kData, half, spill), weight(map, Onchip::kWeight, half, spill);
    isa::Activate p = a;
    p.count = nv;
    const Box in = make_box(a.in_base + v0 * a.in_s_v, {{nv, a.in_s_v}, {a.n, a.in_s_e}});
    const std::int64_t in_at = data.load(in, part);
    p.in_base = in_at;
    p.in_s_v = in.chip_stride(nv, a.in_s_v);
    p.in_s_e = in.chip_stride(a.n, a.in_s_e);
    const bool norm = a.func == isa::Activate::Func::kNorm;
    const Box out = make_box(a.out_base + v0 * a.out_s_v, {{nv, a.out_s_v}, {norm ? 1 : a.n, a.out_s_e}});
    const std::int64_t out_at = weight.store(out, std::int64_t(nv) * (norm ? 1 : a.n), part);
    p.out_base = out_at;
    p.out_s_v = out.chip_stride(nv, a.out_s_v);
    p.out_s_e = out.chip_stride(norm ? 1 : a.n, a.out_s_e);
    part.op = p;
    part.half = half;
    return data.fits() && weight.fits() && shared.fits();
  };
  int nv = a.count;
  for (;;) {
    Part probe;
    if (build(0, 0, nv, probe)) break;
    if (nv == 1)
      throw StreamError(fmt::format(
          "{}: one vector does not fit (input: half of the data memory, {} elements; output: half of the weight "
          "memory, {} elements)",
          a.name, map.half(Onchip::kData), map.half(Onchip::kWeight)));
    nv = (nv + 1) / 2;
  }
  for (int v0 = 0; v0 < a.count; v0 += nv) {
    Part part;
    part.instr = index;
    build(int(sp.parts.size() % 2), v0, std::min(nv, a.count - v0), part);
    sp.parts.push_back(std::move(part));
  }
}

void stream_fill(const OnchipMap& map, std::size_t index, const isa::Fill& f, StreamedProgram& sp) {
  // Elements per part: the box of ne elements at stride s spans (ne - 1) * s + 1, in the weight half
  // (with HY the shared half when it is larger).
  const std::int64_t half = std::max(map.half(Onchip::kWeight), map.half(Onchip::kShared));
  const std::int64_t per_part = f.stride <= 0 ? f.count : std::max<std::int64_t>(1, (half - 1) / f.stride + 1);
  for (std::int64_t e0 = 0; e0 < f.count; e0 += per_part) {
    const std::int64_t ne = std::min(per_part, f.count - e0);
    Part part;
    part.instr = index;
    part.half = int(sp.parts.size() % 2);
    Placer shared(map, Onchip::kShared, part.half);
    Placer weight(map, Onchip::kWeight, part.half, map.has_shared() ? &shared : nullptr);
    isa::Fill p = f;
    const Box b = make_box(f.base + e0 * f.stride, {{ne, f.stride}});
    const std::int64_t at = weight.store(b, ne, part);
    if (!weight.fits() || !shared.fits())
      throw StreamError(fmt::format("{}: a fill part does not fit half of the weight memory ({} elements)", f.name, half));
    p.base = at;
    p.count = ne;
    p.stride = b.chip_stride(ne, f.stride);
    if (f.period > 0) {  // the table restarts at the part's first element
      p.table.clear();
      for (int i = 0; i < f.period; ++i) p.table.push_back(f.table[std::size_t((e0 + i) % f.period)]);
    }
    part.op = p;
    sp.parts.push_back(std::move(part));
  }
}

bool extents_overlap(std::pair<std::int64_t, std::int64_t> a, std::pair<std::int64_t, std::int64_t> b) {
  return a.first <= b.second && b.first <= a.second;
}

// Part p's loads whose data part p - 2 left on chip (Part::kept): the same instruction and half, the
// same move among p - 2's loads or kept ones, no store of p - 2 from that on-chip range (its engine
// wrote it) and no store of p - 2 or p - 1 into that DRAM range (the DRAM changed). A layer split
// into parts that share their weights (conv1 split by output positions) loads them once per half.
void keep_resident_loads(StreamedProgram& sp) {
  for (std::size_t p = 2; p < sp.parts.size(); ++p) {
    Part& part = sp.parts[p];
    const Part& before = sp.parts[p - 2];
    if (before.instr != part.instr || before.half != part.half) continue;
    const auto resident = [&](const Move& m) {
      const auto had = [&](const std::vector<Move>& moves) { return std::find(moves.begin(), moves.end(), m) != moves.end(); };
      if (!had(before.loads) && !had(before.kept)) return false;
      for (const Move& s : before.stores)
        if (s.mem == m.mem && extents_overlap(s.extent(true), m.extent(true))) return false;
      for (std::size_t q = p - 2; q < p; ++q)
        for (const Move& s : sp.parts[q].stores)
          if (extents_overlap(s.extent(false), m.extent(false))) return false;
      return true;
    };
    std::vector<Move> loads;
    for (Move& m : part.loads) (resident(m) ? part.kept : loads).push_back(std::move(m));
    part.loads = std::move(loads);
  }
}

}  // namespace

StreamedProgram stream_program(const AccelConfig& cfg, const isa::Program& prog) {
  StreamedProgram sp;
  if (std::string why = OnchipMap::unsupported_reason(cfg); !why.empty()) throw StreamError(why);
  sp.map = OnchipMap::from_config(cfg);
  for (std::size_t i = 0; i < prog.instrs.size(); ++i) {
    const isa::Instr& in = prog.instrs[i];
    if (const auto* g = std::get_if<isa::Gemm>(&in)) stream_gemm(cfg, prog, sp.map, i, *g, sp);
    else if (const auto* a = std::get_if<isa::Activate>(&in)) stream_activate(sp.map, i, *a, sp);
    else if (const auto* f = std::get_if<isa::Fill>(&in)) stream_fill(sp.map, i, *f, sp);
  }
  keep_resident_loads(sp);
  return sp;
}

StreamStats stream_stats(const isa::Program& prog, const StreamedProgram& sp) {
  StreamStats st;
  st.parts = (long long)sp.parts.size();
  for (const Part& p : sp.parts) {
    st.loads += (long long)p.loads.size();
    st.kept_loads += (long long)p.kept.size();
    st.stores += (long long)p.stores.size();
    for (const Move& m : p.loads) {
      st.load_elements += m.elements();
      for (const Move& s : p.stores)
        if (s.mem == m.mem && s.chip == m.chip) st.rmw_loads += 1;
    }
    for (const Move& m : p.stores) st.store_elements += m.elements();
    st.dram_read_bytes += move_bytes(prog, {}, p.loads);
    st.dram_write_bytes += move_bytes(prog, {}, p.stores);
  }
  return st;
}

DistinctBytes stream_distinct_bytes(const isa::Program& prog, const StreamedProgram& sp) {
  std::vector<bool> read(std::size_t(prog.size), false), written(std::size_t(prog.size), false);
  DistinctBytes d;
  const auto count = [&](const Move& m, std::vector<bool>& seen, long long& bytes) {
    const isa::Region* r = region_at(prog, {}, m.dram);
    const long long eb = ((r ? r->bits : 8) + 7) / 8;
    for_each_move_element(m, [&](std::int64_t a, std::int64_t) {
      if (a < 0 || a >= prog.size || seen[std::size_t(a)]) return;
      seen[std::size_t(a)] = true;
      bytes += eb;
    });
  };
  for (const Part& p : sp.parts) {
    for (const Move& m : p.loads) count(m, read, d.read);
    for (const Move& m : p.stores) count(m, written, d.written);
  }
  return d;
}

long long part_engine_cycles(const AccelConfig& cfg, const Part& p) {
  const isa::EngineTimingShape shape = engine_timing_shape(cfg);
  isa::EngineTiming et;
  const isa::Instr view = std::holds_alternative<isa::Gemm>(p.op) ? timing_view(std::get<isa::Gemm>(p.op)) : p.op;
  if (!isa::instr_timing(view, shape, &et))
    throw StreamError(fmt::format("part of instruction {}: the engine cannot time it", p.instr));
  return et.cycles;
}

StreamTiming stream_timing(const AccelConfig& cfg, const isa::Program& prog, const StreamedProgram& sp) {
  const double bytes_per_cycle = offchip_bytes_per_cycle(cfg);
  const long long fetch = isa::engine_descriptor_words() + 2;
  const std::size_t n = sp.parts.size();
  std::vector<long long> load(n), store(n), eng(n);
  StreamTiming t;
  for (std::size_t i = 0; i < n; ++i) {
    const Part& p = sp.parts[i];
    load[i] = (long long)std::ceil(double(move_bytes(prog, {}, p.loads)) / bytes_per_cycle);
    store[i] = (long long)std::ceil(double(move_bytes(prog, {}, p.stores)) / bytes_per_cycle);
    eng[i] = part_engine_cycles(cfg, p);
    t.engine_cycles += eng[i];
  }
  if (n == 0) return t;
  // DRAM extent of a move: [first, last] element.
  const auto span = [](const Move& m) {
    std::int64_t last = m.dram;
    for (const MoveDim& d : m.dims) last += (d.count - 1) * d.dram_stride;
    return std::pair{m.dram, last};
  };
  // Part i+1 loads what part i stores (the next instruction's input): that load cannot start before part i has computed and stored it.
  const auto depends = [&](std::size_t i) {
    for (const Move& st : sp.parts[i].stores)
      for (const Move& ld : sp.parts[i + 1].loads) {
        const auto [s0, s1] = span(st);
        const auto [l0, l1] = span(ld);
        if (s0 <= l1 && l0 <= s1) return true;
      }
    return false;
  };
  t.cycles = load[0] + store[n - 1];
  t.part_cycles.assign(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const long long compute = std::max(eng[i], fetch);
    const long long before_part = t.cycles;
    if (i + 1 < n && depends(i)) {
      // The previous part's stores still overlap this compute; this part's stores and the next
      // part's loads follow it (the next part's other loads are counted with its own here).
      const long long before = i > 0 ? store[i - 1] : 0;
      t.cycles += std::max(compute, before) + store[i] + load[i + 1];
      t.serialized_parts += 1;
      t.dma_bound_parts += before > compute;
      store[i] = 0;  // already counted
    } else {
      const long long dma = (i + 1 < n ? load[i + 1] : 0) + (i > 0 ? store[i - 1] : 0);
      t.cycles += std::max(compute, dma);
      t.dma_bound_parts += dma > compute;
    }
    t.part_cycles[i] = t.cycles - before_part;
  }
  return t;
}

StreamStats execute_streamed(const AccelConfig& cfg, const isa::Program& prog, const StreamedProgram& sp,
                             std::vector<std::int32_t>& dram) {
  const OnchipMap& map = sp.map;
  if (std::int64_t(dram.size()) < prog.size) dram.resize(std::size_t(prog.size), 0);
  std::vector<std::int32_t> chip(std::size_t(map.size()), 0);
  std::vector<std::uint8_t> defined(std::size_t(map.size()), 0);
  // Per on-chip element, the DRAM element a load put there (-1: an engine write or nothing since).
  std::vector<std::int64_t> loaded_from(std::size_t(map.size()), -1);
  const isa::ActTables tables(act_params(cfg));
  const isa::GemmShape shape{cfg.array.rows, cfg.array.cols, cfg.widths.psum, cfg.widths.act};
  isa::AccState accs;  // the engine's accumulators, carried from part to part
  for (std::size_t pi = 0; pi < sp.parts.size(); ++pi) {
    const Part& part = sp.parts[pi];
    const std::string where =
        fmt::format("part {} ({} of instruction {})", pi, isa::instr_name(part.op), part.instr);
    // The part's half of memory m.
    const auto in_half = [&](std::int64_t a, Onchip* mem) {
      for (int m = 0; m < kOnchipMemories; ++m) {
        const std::int64_t lo = map.base[m] + part.half * map.half(Onchip(m));
        if (a >= lo && a < lo + map.half(Onchip(m))) {
          if (mem) *mem = Onchip(m);
          return true;
        }
      }
      return false;
    };
    // Everything outside the part's buffers is undefined for it: a read of data left by an earlier
    // part would pass here and fail in RTL, where another part's moves may have overwritten it.
    std::fill(defined.begin(), defined.end(), 0);
    // Element c takes value v; with SMP the other view's elements on the same bytes lose theirs.
    const auto define = [&](std::int64_t c, std::int32_t v, std::int64_t from) {
      for (const std::int64_t x : map.aliases(c)) {
        defined[std::size_t(x)] = 0;
        loaded_from[std::size_t(x)] = -1;
      }
      chip[std::size_t(c)] = v;
      defined[std::size_t(c)] = 1;
      loaded_from[std::size_t(c)] = from;
    };
    for (const Move& m : part.loads)
      for_each_move_element(m, [&](std::int64_t d, std::int64_t c) {
        Onchip mem;
        if (!in_half(c, &mem) || mem != m.mem)
          throw StreamError(fmt::format("{}: load to on-chip {} outside its half of {}", where, c, to_string(m.mem)));
        define(c, (d >= 0 && d < std::int64_t(dram.size())) ? dram[std::size_t(d)] : 0, d);
      });
    // A kept load's data must be on chip: loaded from the same DRAM element, not written since, and
    // that DRAM element unchanged.
    for (const Move& m : part.kept)
      for_each_move_element(m, [&](std::int64_t d, std::int64_t c) {
        if (!in_half(c, nullptr) || loaded_from[std::size_t(c)] != d ||
            chip[std::size_t(c)] != ((d >= 0 && d < std::int64_t(dram.size())) ? dram[std::size_t(d)] : 0))
          throw StreamError(fmt::format("{}: kept load of DRAM element {} into on-chip {}: the data is not there", where, d, c));
        defined[std::size_t(c)] = 1;
      });
    // Activate reads its vectors through drd: the data memory (with HY also the shared memory's drd
    // port); its results are in the weight memory, which no engine port reads during the pass, or in
    // the shared memory through the port the tile reader leaves idle then.
    const bool activate = std::holds_alternative<isa::Activate>(part.op);
    const auto read = [&](std::int64_t a) -> std::int64_t {
      Onchip mem;
      if (!in_half(a, &mem) || !defined[std::size_t(a)])
        throw StreamError(fmt::format("{}: engine read of on-chip element {} that no move of the part loaded", where, a));
      if (activate && mem != Onchip::kData && mem != Onchip::kShared)
        throw StreamError(
            fmt::format("{}: activation read of on-chip element {} in the {} memory, not the data memory", where, a,
                        to_string(mem)));
      return chip[std::size_t(a)];
    };
    // Where the engine's results go (docs/memory-system.md section 2): Gemm results to the data
    // memory, Activate and Fill results to the weight memory; with HY either may be in the shared one.
    const Onchip result_mem = std::holds_alternative<isa::Gemm>(part.op) ? Onchip::kData : Onchip::kWeight;
    const auto write = [&](std::int64_t a, std::int64_t v) {
      Onchip mem;
      if (!in_half(a, &mem) || (mem != result_mem && mem != Onchip::kShared))
        throw StreamError(fmt::format("{}: engine write to on-chip element {} outside its half of the {} memory", where,
                                      a, to_string(result_mem)));
      define(a, std::int32_t(v), -1);
    };
    if (const auto* g = std::get_if<isa::Gemm>(&part.op)) isa::run_gemm_reference(*g, shape, read, write, nullptr, &accs);
    else if (const auto* a = std::get_if<isa::Activate>(&part.op)) isa::run_activate_reference(*a, tables, read, write);
    else if (const auto* f = std::get_if<isa::Fill>(&part.op)) isa::run_fill_reference(*f, write);
    for (const Move& m : part.stores)
      for_each_move_element(m, [&](std::int64_t d, std::int64_t c) {
        Onchip mem;
        if (!in_half(c, &mem) || mem != m.mem)
          throw StreamError(fmt::format("{}: store from on-chip {} outside its half of {}", where, c, to_string(m.mem)));
        if (!defined[std::size_t(c)])
          throw StreamError(fmt::format("{}: store of on-chip element {} that the part never wrote or loaded", where, c));
        if (d < 0 || d >= std::int64_t(dram.size()))
          throw StreamError(fmt::format("{}: store to DRAM element {} outside the image", where, d));
        dram[std::size_t(d)] = chip[std::size_t(c)];
      });
  }
  return stream_stats(prog, sp);
}

}  // namespace capsgen
