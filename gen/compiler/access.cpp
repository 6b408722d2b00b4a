#include "compiler/access.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "compiler/compiler.hpp"
#include "isa/engine_descriptor.hpp"
#include "isa/engine_timing.hpp"
#include "isa/gather.hpp"

namespace capsgen {

namespace {

enum Port { kRead, kWrite, kDmaRead, kDmaWrite };
using Mask = std::array<std::uint32_t, kOnchipMemories>;

class Counter {
 public:
  // `layouts`: sector layouts (the same memories, other sector counts) whose touched sectors
  // set_sectors() collects.
  Counter(const AccelConfig& cfg, const OnchipMap& map, AccessModel& out, std::vector<SectorMap> layouts = {})
      : sec_(cfg, map), out_(out), layouts_(std::move(layouts)) {
    out_.ranges = map.has_lanes() ? 5 : map.has_shared() ? 4 : 3;
    for (int m = 0; m < kOnchipMemories; ++m)  // sectors of physical memories (SMP: the acc view's are the shared one's)
      if (map.elements[m] > 0 && map.phys(m) == m) out_.mem[std::size_t(m)].sector.assign(std::size_t(sec_.sectors[m]), 0);
  }
  void set_part(PartAccesses* p) { part_ = p; }
  // Where every engine access also goes, with the banks it enables (null: nowhere).
  void set_trace(std::vector<EngineAccess>* t) { trace_ = t; }
  // The engine read port of the next read spans (traces only; writes are the writer's).
  void set_port(EngineAccess::Port p) { trace_port_ = p; }
  // The engine cycle of the next span (traces only; -1: unscheduled).
  void set_cycle(long long cycle) { trace_cycle_ = cycle; }
  // One mask per layout (or none).
  void set_sectors(std::vector<Mask*> s) { sectors_ = std::move(s); }

  // One access of n consecutive elements from a (memsys enables every word they span, one bank each).
  // Accesses count against the range (SMP: the acc view's psum lanes as `acc`), sectors against the
  // physical memory.
  void span(Port port, std::int64_t a, std::int64_t n) {
    const int m = sec_.memory_of(a);
    if (m < 0 || sec_.memory_of(a + n - 1) != m) {
      ++out_.outside;
      return;
    }
    const int pm = sec_.map.phys(m);
    const std::int64_t w0 = sec_.word_of(m, a), w1 = sec_.word_of(m, a + n - 1);
    MemoryAccesses& ma = out_.mem[std::size_t(m)];
    std::vector<long long>& sector = out_.mem[std::size_t(pm)].sector;
    for (std::int64_t w = w0; w <= w1; ++w) ++sector[std::size_t(sec_.sector_of_word(m, w))];
    for (std::size_t k = 0; k < sectors_.size(); ++k)  // sectors are contiguous word ranges
      for (int s = layouts_[k].sector_of_word(m, w0); s <= layouts_[k].sector_of_word(m, w1); ++s)
        (*sectors_[k])[std::size_t(pm)] |= 1u << s;
    const long long words = w1 - w0 + 1;
    if (trace_ && (port == kRead || port == kWrite)) {
      EngineAccess e{m, port == kWrite, 0, port == kWrite ? EngineAccess::Port::kWriter : trace_port_, trace_cycle_};
      for (std::int64_t w = w0; w <= w1 && w < w0 + sec_.banks[m]; ++w) e.banks |= std::uint64_t{1} << (w % sec_.banks[m]);
      trace_->push_back(e);
    }
    switch (port) {
      case kRead:
        ma.eng_rd += words;
        if (part_) part_->eng_rd[std::size_t(m)] += words;
        break;
      case kWrite:
        ma.eng_wr += words;
        if (part_) part_->eng_wr[std::size_t(m)] += words;
        break;
      case kDmaRead:
        ma.dma_rd += 1;
        if (part_) part_->dma_rd[std::size_t(m)] += 1;
        break;
      case kDmaWrite:
        ma.dma_wr += 1;
        if (part_) part_->dma_wr[std::size_t(m)] += 1;
        break;
    }
  }

 private:
  SectorMap sec_;
  AccessModel& out_;
  PartAccesses* part_ = nullptr;
  std::vector<EngineAccess>* trace_ = nullptr;
  EngineAccess::Port trace_port_ = EngineAccess::Port::kData;
  long long trace_cycle_ = -1;
  std::vector<SectorMap> layouts_;
  std::vector<Mask*> sectors_;
};

// A Gemm's port traffic (docs/rtl-engine.md), in the streamer's loop order: for b, for each block, for
// k < k_chunks: the tiles' rows (tile reader), the block's data (gather unit or vector walker), the
// issued vectors' init reads (chunk 0), and on the last chunk the writer's records. With `when` (the
// engine's cycle model of the part), every access carries its cycle: the gather's or the vector
// walker's reads one per cycle from their step's start, a tile's rows one per cycle from its load, a
// vector's init read at its issue, a record's columns one per cycle from the writer's start on it.
void gemm_accesses(const isa::Gemm& g, const isa::EngineDescriptor& d, int rows, int cols, Counter& c,
                   const isa::GemmSchedule* when = nullptr) {
  const isa::TileSource& t = g.tile;
  const isa::DataSource& s = g.data;
  const isa::OutTarget& o = g.out;
  std::size_t step = 0, tile = 0, vector = 0;  // indices into `when`'s lists
  const auto at = [&](const std::vector<long long> isa::GemmSchedule::*times, std::size_t i, long long offset) {
    const std::vector<long long>* v = when ? &(when->*times) : nullptr;
    c.set_cycle(v && i < v->size() && (*v)[i] >= 0 ? (*v)[i] + offset : -1);
  };
  if (!d.v_mode) {  // the gather unit: a step's elements one per cycle from its start
    long long element = 0;
    for (const isa::GatherElement& e : isa::gather_sequence(g, rows)) {
      at(&isa::GemmSchedule::step_data, step, element++);
      if (!e.zero) c.span(kRead, e.addr, 1);
      if (e.chunk_last) {
        ++step;
        element = 0;
      }
    }
    step = 0;
  }
  const int group_rows = d.t_diag ? rows / std::max(1, t.diag_groups) : rows;
  for (int b = 0; b < g.batch; ++b)
    for (int m0 = 0; m0 < g.m_total; m0 += g.m_block) {
      const int mb = std::min(g.m_block, g.m_total - m0);
      for (int k = 0; k < g.k_chunks; ++k, ++step) {
        for (int n = 0; n < g.n_tiles; ++n, ++tile) {
          const int lanes = std::min(cols, g.n_total - n * cols);
          const std::int64_t tb = t.base + b * t.s_b + k * t.s_k + n * t.s_n;
          c.set_port(EngineAccess::Port::kTile);
          long long cycle = 0;  // the tile reader's cycles into the load
          for (int r = rows - 1; r >= 0; --r) {
            if (d.t_diag) {
              const int grp = r / group_rows, e = r % group_rows;
              at(&isa::GemmSchedule::tile_load, tile, cycle++);
              if (e < g.r_total && grp < g.n_total && grp < cols) c.span(kRead, tb + e * t.s_r, cols);
              continue;
            }
            if (k * rows + r >= g.r_total) {
              ++cycle;
              continue;
            }
            const std::int64_t ra = tb + r * t.s_r;
            if (d.t_strided)
              for (int col = 0; col < std::max(1, lanes); ++col) {
                at(&isa::GemmSchedule::tile_load, tile, cycle++);
                c.span(kRead, ra + col * t.s_c, cols);
              }
            else {
              at(&isa::GemmSchedule::tile_load, tile, cycle++);
              c.span(kRead, ra, cols);
            }
          }
          for (int mi = 0; mi < mb; ++mi, ++vector) {
            const int m = m0 + mi;
            c.set_port(EngineAccess::Port::kPsum);
            at(&isa::GemmSchedule::issue, vector, 0);
            if (k == 0 && d.init_bias) c.span(kRead, g.init.base + std::int64_t(n) * cols, cols);
            // brd always reads a row of `cols` psum codes; a per-output init uses lane 0.
            if (k == 0 && d.init_out) c.span(kRead, g.init.base + b * g.init.s_b + m * g.init.s_m, cols);
            if (k + 1 < g.k_chunks || g.acc_hold) continue;
            at(&isa::GemmSchedule::record, vector, 0);
            const std::int64_t mbase = o.base + b * o.s_b + m * o.s_m;
            if (o.select_mod > 0) {
              const int mm = m % o.select_mod;
              if (mm >= n * cols && mm < n * cols + cols && mm < g.n_total) c.span(kWrite, mbase, 1);
            } else if (d.o_vec) {
              if (lanes > 0) c.span(kWrite, mbase + std::int64_t(n) * cols, lanes);
            } else {
              for (int col = 0; col < lanes; ++col) {
                const int out = n * cols + col;
                at(&isa::GemmSchedule::record, vector, col);
                c.span(kWrite, mbase + (out / o.o_div) * o.s_o1 + (out % o.o_div) * o.s_o2, 1);
              }
            }
          }
        }
        c.set_port(EngineAccess::Port::kData);
        if (d.v_mode)
          for (int mi = 0; mi < mb; ++mi) {
            at(&isa::GemmSchedule::step_data, step, mi);
            c.span(kRead, s.base + b * s.s_b + (m0 + mi) * s.s_m + k * s.s_k, rows);
          }
      }
    }
  c.set_cycle(-1);
}

void activate_accesses(const isa::Activate& a, Counter& c) {
  for (int v = 0; v < a.count; ++v) {
    for (int e = 0; e < a.n; ++e) c.span(kRead, a.in_base + v * a.in_s_v + e * a.in_s_e, 1);
    if (a.func == isa::Activate::Func::kNorm)
      c.span(kWrite, a.out_base + v * a.out_s_v, 1);
    else
      for (int e = 0; e < a.n; ++e) c.span(kWrite, a.out_base + v * a.out_s_v + e * a.out_s_e, 1);
  }
}

std::int64_t sext(std::uint32_t v, int bits) {
  const std::int64_t x = std::int64_t(v) & ((std::int64_t{1} << bits) - 1);
  return (x >> (bits - 1)) & 1 ? x - (std::int64_t{1} << bits) : x;
}

// Part p's engine accesses (counted against c's current part); `scheduled`: with their cycles.
void part_accesses(const AccelConfig& cfg, const StreamedProgram& sp, std::size_t p, Counter& c,
                   bool scheduled = false) {
  const int rows = cfg.array.rows, cols = cfg.array.cols;
  const isa::Instr& op = sp.parts[p].op;
  if (const auto* g = std::get_if<isa::Gemm>(&op)) {
    isa::EngineDescriptor d;
    try {
      d = isa::encode_engine(*g, rows, cols, cfg.accumulator.depth);
    } catch (const std::invalid_argument& e) {
      throw StreamError(fmt::format("access model: part {} ({}): {}", p, g->name, e.what()));
    }
    isa::GemmSchedule when;
    if (scheduled)
      isa::engine_timing(d, engine_timing_shape(cfg), &when);
    gemm_accesses(*g, d, rows, cols, c, scheduled ? &when : nullptr);
  } else if (const auto* a = std::get_if<isa::Activate>(&op)) {
    activate_accesses(*a, c);
  } else if (const auto* f = std::get_if<isa::Fill>(&op)) {
    for (std::int64_t e = 0; e < f->count; ++e) c.span(kWrite, f->base + e * f->stride, 1);
  }
}

// The engine's accesses of every part, in part order.
void engine_accesses(const AccelConfig& cfg, const StreamedProgram& sp, Counter& c, AccessModel& out,
                     std::vector<std::vector<Mask>>* sectors) {
  for (std::size_t p = 0; p < sp.parts.size(); ++p) {
    c.set_part(&out.parts[p]);
    std::vector<Mask*> masks;
    for (std::size_t k = 0; sectors && k < sectors->size(); ++k) masks.push_back(&(*sectors)[k][p]);
    c.set_sectors(std::move(masks));
    part_accesses(cfg, sp, p, c);
  }
  c.set_sectors({});
}

}  // namespace

std::vector<std::vector<Mask>> engine_sectors(const AccelConfig& cfg, const StreamedProgram& sp,
                                              const std::vector<AccelConfig>& layouts) {
  AccessModel scratch;
  scratch.parts.assign(sp.parts.size(), {});
  std::vector<SectorMap> maps;
  for (const AccelConfig& l : layouts) maps.emplace_back(l, sp.map);
  std::vector<std::vector<Mask>> out(layouts.size(), std::vector<Mask>(sp.parts.size(), Mask{}));
  Counter c(cfg, sp.map, scratch, std::move(maps));
  engine_accesses(cfg, sp, c, scratch, &out);
  return out;
}

std::vector<Mask> engine_sectors(const AccelConfig& cfg, const StreamedProgram& sp) {
  return engine_sectors(cfg, sp, std::vector<AccelConfig>{cfg}).front();
}

std::vector<EngineAccess> engine_access_trace(const AccelConfig& cfg, const StreamedProgram& sp, std::size_t part) {
  AccessModel scratch;
  std::vector<EngineAccess> trace;
  Counter c(cfg, sp.map, scratch);
  c.set_trace(&trace);
  part_accesses(cfg, sp, part, c, true);
  return trace;
}

AccessModel count_accesses(const AccelConfig& cfg, const StreamedProgram& sp, const FrameProgram& fp) {
  AccessModel out;
  out.parts.assign(sp.parts.size(), {});
  Counter c(cfg, sp.map, out);
  engine_accesses(cfg, sp, c, out, nullptr);
  // DMA frames: loads belong to the next engine frame's part, stores to the last one's (as issued).
  const int bits = fp.geometry.spm_addr_bits;
  std::size_t engines = 0;
  for (const isa::Frame& f : fp.frames) {
    if (f.header.kind == isa::FrameKind::kEngine) ++engines;
    if (f.header.kind != isa::FrameKind::kDma) continue;
    const isa::DmaFields& d = f.dma;
    const std::size_t part = d.store ? engines - 1 : engines;
    c.set_part(part < out.parts.size() ? &out.parts[part] : nullptr);
    for (std::uint32_t i2 = 0; i2 < d.count[2]; ++i2)
      for (std::uint32_t i1 = 0; i1 < d.count[1]; ++i1)
        for (std::uint32_t i0 = 0; i0 < d.count[0]; ++i0) {
          const std::int64_t a = sext(std::uint32_t(std::int64_t(d.spm_addr) + i0 * sext(d.spm_stride[0], bits) +
                                                    i1 * sext(d.spm_stride[1], bits) + i2 * sext(d.spm_stride[2], bits)),
                                      bits);
          // The beat lands in one word; (a, 1) places it there.
          c.span(d.store ? kDmaRead : kDmaWrite, a < 0 ? a + (std::int64_t{1} << bits) : a, 1);
        }
  }
  return out;
}

std::string access_text(const AccessModel& a) {
  const int mems = a.ranges;
  std::string s =
      "# memsys counters the streamed program must produce (gen/compiler/access.hpp):\n"
      "# mem NAME eng_rd eng_wr dma_rd dma_wr | sector NAME S accesses | part P eng_rd[M] eng_wr[M] dma_rd[M] dma_wr[M]\n";
  s += fmt::format("memories {}\n", mems);
  for (int m = 0; m < mems; ++m) {
    const MemoryAccesses& x = a.mem[std::size_t(m)];
    s += fmt::format("mem {} {} {} {} {}\n", to_string(Onchip(m)), x.eng_rd, x.eng_wr, x.dma_rd, x.dma_wr);
  }
  for (int m = 0; m < mems; ++m)
    for (std::size_t k = 0; k < a.mem[std::size_t(m)].sector.size(); ++k)
      s += fmt::format("sector {} {} {}\n", to_string(Onchip(m)), k, a.mem[std::size_t(m)].sector[k]);
  for (std::size_t p = 0; p < a.parts.size(); ++p) {
    const PartAccesses& x = a.parts[p];
    s += fmt::format("part {}", p);
    for (const auto* v : {&x.eng_rd, &x.eng_wr, &x.dma_rd, &x.dma_wr})
      for (int m = 0; m < mems; ++m) s += fmt::format(" {}", (*v)[std::size_t(m)]);
    s += "\n";
  }
  s += fmt::format("outside {}\n", a.outside);
  return s;
}

}  // namespace capsgen
