#include "compiler/frame_program.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "compiler/access.hpp"
#include "config/act_params.hpp"
#include "core/bits.hpp"
#include "isa/gemm_ref.hpp"
#include "numerics/activation.hpp"

namespace capsgen {

namespace {

using Mask = std::array<std::uint32_t, kOnchipMemories>;

Mask operator|(Mask a, const Mask& b) {
  for (int i = 0; i < kOnchipMemories; ++i) a[std::size_t(i)] |= b[std::size_t(i)];
  return a;
}

// Adds element a's sector to the mask (power gating only).
void add_sector(const SectorMap& sec, std::int64_t a, Mask& mask) {
  int m = 0, s = 0;
  if (sec.gating && sec.of(a, m, s)) mask[std::size_t(m)] |= 1u << s;
}

// The sectors a move's on-chip elements lie in. A run of the innermost level with on-chip stride 0 or
// 1 inside one memory covers every sector between its ends (a sector is a contiguous range of a
// memory's elements), so it takes two lookups, not one per element.
Mask move_mask(const SectorMap& sec, const Move& m) {
  Mask k{};
  if (!sec.gating) return k;
  std::vector<MoveDim> d = m.dims;
  while (d.size() < 3) d.push_back({1, 0, 0});
  if (d[0].chip_stride != 0 && d[0].chip_stride != 1) {
    for_each_move_element(m, [&](std::int64_t, std::int64_t c) { add_sector(sec, c, k); });
    return k;
  }
  for (std::int64_t i2 = 0; i2 < d[2].count; ++i2)
    for (std::int64_t i1 = 0; i1 < d[1].count; ++i1) {
      const std::int64_t first = m.chip + i1 * d[1].chip_stride + i2 * d[2].chip_stride;
      const std::int64_t last = first + (d[0].count - 1) * d[0].chip_stride;
      int m0 = 0, s0 = 0, m1 = 0, s1 = 0;
      if (sec.of(first, m0, s0) && sec.of(last, m1, s1) && m0 == m1) {
        for (int s = s0; s <= s1; ++s) k[std::size_t(m0)] |= 1u << s;
      } else {
        for (std::int64_t i0 = 0; i0 < d[0].count; ++i0) add_sector(sec, first + i0 * d[0].chip_stride, k);
      }
    }
  return k;
}

// The engine descriptor of a part, or the encoder's reason it has none yet.
bool encode_part(const AccelConfig& cfg, const isa::ActTables& tables, const isa::Instr& op, isa::EngineDescriptor& d,
                 std::string& why) {
  const int rows = cfg.array.rows, cols = cfg.array.cols;
  // emit::act_geometry's max_len (the compiler does not link the emitters).
  const int max_len = activation_max_len(cfg);
  try {
    if (const auto* g = std::get_if<isa::Gemm>(&op)) d = isa::encode_engine(*g, rows, cols, cfg.accumulator.depth);
    else if (const auto* a = std::get_if<isa::Activate>(&op)) d = isa::encode_activate(*a, tables.params.sq_norm_shift, max_len);
    else if (const auto* f = std::get_if<isa::Fill>(&op)) d = isa::encode_fill(*f, cfg.widths.act);
    return true;
  } catch (const std::invalid_argument& e) {
    why = e.what();
    return false;
  }
}

bool fits_signed(std::int64_t v, int bits) {
  return v >= -(std::int64_t{1} << (bits - 1)) && v < (std::int64_t{1} << bits);
}

std::uint32_t wrap(std::int64_t v, int bits) {
  return std::uint32_t(std::uint64_t(v) & (bits >= 32 ? 0xFFFFFFFFull : ((std::uint64_t{1} << bits) - 1)));
}

std::int64_t sext(std::uint32_t v, int bits) {
  const std::int64_t x = std::int64_t(v);
  return (x >> (bits - 1)) & 1 ? x - (std::int64_t{1} << bits) : x;
}

// Part b loads a DRAM element that part a stores (by the moves' DRAM extents, as stream_timing).
bool loads_what_stores(const Part& a, const Part& b) {
  for (const Move& st : a.stores)
    for (const Move& ld : b.loads) {
      const auto [s0, s1] = st.extent();
      const auto [l0, l1] = ld.extent();
      if (s0 <= l1 && l0 <= s1) return true;
    }
  return false;
}

}  // namespace

std::optional<std::string> unrunnable_operation(const AccelConfig& cfg, const isa::Program& prog) {
  const isa::ActTables tables(act_params(cfg));
  for (std::size_t i = 0; i < prog.instrs.size(); ++i) {
    isa::EngineDescriptor d;
    std::string why;
    if (!encode_part(cfg, tables, prog.instrs[i], d, why))
      return fmt::format("i{:02} {}: {}", i, isa::instr_name(prog.instrs[i]), why);
  }
  return std::nullopt;
}

isa::FrameGeometry checked_frame_geometry(const AccelConfig& cfg) {
  const isa::FrameGeometry g = isa::frame_geometry(cfg);
  for (int i = 0; i < isa::kFrameMemories; ++i)
    if (g.sectors[i] > isa::kAwakeFieldSectors)
      throw StreamError(fmt::format("frames: the {} memory has {} sectors, more than a PMU frame's {}-bit awake field",
                                    to_string(Onchip(i)), g.sectors[i], isa::kAwakeFieldSectors));
  return g;
}

DramBytes::DramBytes(const isa::Program& prog, const StreamedProgram& sp) {
  std::vector<Seg> r;
  for (const isa::Region& x : prog.regions) r.push_back({x.base, x.base + x.stored_size(), 0, x.bits <= 8 ? 1 : x.bits <= 16 ? 2 : 4});
  std::sort(r.begin(), r.end(), [](const Seg& a, const Seg& b) { return a.base < b.base; });
  std::int64_t at = 0, byte = 0;
  // The image ends after the last region, or after the last element a load reads: a Gemm part loads
  // whole reduction chunks, so its last chunk may read past the end of its data (rows the engine
  // does not use) and, for the last region, past the regions.
  std::int64_t end = std::max<std::int64_t>(prog.size, r.empty() ? 0 : r.back().end);
  for (const Part& p : sp.parts)
    for (const Move& m : p.loads) end = std::max(end, m.extent().second + 1);
  for (const Seg& x : r) {
    if (x.end <= x.base) continue;
    if (x.base < at) {
      // An alias of the region before it (e.g. classcaps.out = the last iteration's v): same storage.
      if (segs_.empty() || segs_.back().bytes != x.bytes || x.base < segs_.back().base)
        throw std::logic_error("frames: overlapping DRAM regions of different code widths");
      if (x.end > at) {
        segs_.back().end = x.end;
        byte += (x.end - at) * x.bytes;
        at = x.end;
      }
      continue;
    }
    if (x.base > at) {
      segs_.push_back({at, x.base, byte, 1});
      byte += x.base - at;
    }
    segs_.push_back({x.base, x.end, byte, x.bytes});
    byte += (x.end - x.base) * x.bytes;
    at = x.end;
  }
  if (end > at) segs_.push_back({at, end, byte, 1});
}

const DramBytes::Seg* DramBytes::seg_of(std::int64_t a) const {
  auto it = std::upper_bound(segs_.begin(), segs_.end(), a, [](std::int64_t v, const Seg& s) { return v < s.base; });
  if (it == segs_.begin()) return nullptr;
  --it;
  return a < it->end ? &*it : nullptr;
}

std::int64_t DramBytes::byte_of(std::int64_t a) const {
  const Seg* s = seg_of(a);
  if (!s) throw StreamError(fmt::format("frames: DRAM element {} outside the image", a));
  return s->byte + (a - s->base) * s->bytes;
}

int DramBytes::code_bytes(std::int64_t a) const {
  const Seg* s = seg_of(a);
  return s ? s->bytes : 1;
}

std::int64_t DramBytes::element_at(std::int64_t byte) const {
  auto it = std::upper_bound(segs_.begin(), segs_.end(), byte, [](std::int64_t v, const Seg& s) { return v < s.byte; });
  if (it == segs_.begin()) return -1;
  --it;
  const std::int64_t off = byte - it->byte;
  if (off % it->bytes || off / it->bytes >= it->end - it->base) return -1;
  return it->base + off / it->bytes;
}

std::int64_t DramBytes::total_bytes() const { return segs_.empty() ? 0 : segs_.back().byte + (segs_.back().end - segs_.back().base) * segs_.back().bytes; }

isa::DmaFields lower_move(const Move& m, const DramBytes& bytes, const isa::FrameGeometry& g, const std::string& where,
                          const OnchipMap* map) {
  const auto fail = [&](const std::string& what) { throw StreamError(where + ": " + what); };
  if (m.dims.size() > 3) fail(fmt::format("{} dimensions, the DMA walks 3", m.dims.size()));
  // Every element of the move must have the first element's code width (one region's, or regions of one width).
  const int eb = bytes.code_bytes(m.dram);
  const auto [lo, hi] = m.extent();
  for (const std::int64_t a : {m.dram, lo, hi})
    if (!bytes.contains(a)) {
      std::string dims;
      for (const MoveDim& d : m.dims) dims += fmt::format(" {} x {}", d.count, d.dram_stride);
      fail(fmt::format("DRAM element {} outside the image (the move from {} spans [{}, {}]; count x DRAM stride, innermost first:{})",
                       a, m.dram, lo, hi, dims));
    }
  const std::int64_t b0 = bytes.byte_of(m.dram), blo = bytes.byte_of(lo), bhi = bytes.byte_of(hi);
  if (bytes.code_bytes(lo) != eb || bytes.code_bytes(hi) != eb || b0 - blo != (m.dram - lo) * eb || bhi - b0 != (hi - m.dram) * eb)
    fail(fmt::format("DRAM elements [{}, {}] cross regions of different code widths", lo, hi));
  isa::DmaFields f;
  f.store = m.store;
  if (m.widen) {
    if (m.store || !OnchipMap::psum_lanes(m.mem) || eb != 1)
      fail("widening is a load of 1-byte codes into psum lanes (the acc memory, HY's shared lanes)");
    f.size = 0;
    f.widen = true;
  } else if (OnchipMap::psum_lanes(m.mem)) {
    if (eb != 4) fail(fmt::format("{}-byte codes in the {} range's 4-byte lanes", eb, to_string(m.mem)));
    f.size = 2;
  } else {
    if (eb != 1) fail(fmt::format("{}-byte codes in the {} memory's 1-byte lanes", eb, to_string(m.mem)));
    f.size = 0;
  }
  if (int(f.size) > g.max_size) fail(fmt::format("size {} above the widest word's {}", f.size, g.max_size));
  if (b0 < 0 || b0 >= (std::int64_t{1} << g.dram_addr_bits)) fail(fmt::format("DRAM byte address {} outside {} bits", b0, g.dram_addr_bits));
  f.dram_addr = std::uint32_t(b0);
  if (m.chip < 0 || m.chip >= (std::int64_t{1} << g.spm_addr_bits))
    fail(fmt::format("on-chip element {} outside {} bits", m.chip, g.spm_addr_bits));
  f.spm_addr = std::uint32_t(m.chip);
  for (std::size_t i = 0; i < m.dims.size(); ++i) {
    const MoveDim& d = m.dims[i];
    if (d.count < 1 || d.count >= (std::int64_t{1} << g.count_bits))
      fail(fmt::format("count{} {} outside [1, 2^{})", i, d.count, g.count_bits));
    const std::int64_t ds = d.dram_stride * eb;
    if (!fits_signed(ds, g.dram_addr_bits) || ds >= (std::int64_t{1} << (g.dram_addr_bits - 1)))
      fail(fmt::format("DRAM stride{} {} bytes outside {} bits", i, ds, g.dram_addr_bits));
    if (!fits_signed(d.chip_stride, g.spm_addr_bits))
      fail(fmt::format("on-chip stride{} {} outside {} bits", i, d.chip_stride, g.spm_addr_bits));
    f.count[i] = std::uint32_t(d.count);
    f.dram_stride[i] = wrap(ds, g.dram_addr_bits);
    f.spm_stride[i] = wrap(d.chip_stride, g.spm_addr_bits);
  }
  f.burst = 0;
  // Several elements per beat where the innermost run is contiguous on both sides and every run starts
  // on a multiple of k elements (k lanes of the memory's word, k * eb bytes of DRAM): k a power of 2,
  // k * eb at most the memory's word and the widest word (capsgen_memsys places a beat of 2^size
  // bytes at a lane; docs/rtl-memsys.md "DMA accesses").
  if (map && !m.widen && !m.dims.empty() && m.dims[0].dram_stride == 1 && m.dims[0].chip_stride == 1) {
    const int mi = int(m.mem);
    const std::int64_t rel = m.chip - map->base[mi];
    const int word_bytes = map->word_elements[mi] * eb;
    int k = 1;
    for (int c = 2; c * eb <= std::min(word_bytes, 1 << g.max_size); c *= 2) {
      bool ok = m.dims[0].count % c == 0 && b0 % (std::int64_t(c) * eb) == 0 && rel % c == 0;
      for (std::size_t i = 1; i < m.dims.size() && ok; ++i)
        ok = (m.dims[i].dram_stride * eb) % (std::int64_t(c) * eb) == 0 && m.dims[i].chip_stride % c == 0;
      if (!ok) break;
      k = c;
    }
    if (k > 1) {
      f.count[0] = std::uint32_t(m.dims[0].count / k);
      f.dram_stride[0] = std::uint32_t(k * eb);
      f.spm_stride[0] = std::uint32_t(k);
      f.size = std::uint32_t(clog2(k * eb));
    }
  }
  return f;
}

long long FrameProgram::words() const {
  long long n = 0;
  for (const isa::Frame& f : frames) n += 1 + isa::payload_words(f.header.kind, geometry);
  return n;
}

FrameProgram build_frame_program(const AccelConfig& cfg, const isa::Program& prog, const StreamedProgram& sp,
                                 const std::vector<Mask>* engine_masks) {
  FrameProgram fp;
  fp.geometry = checked_frame_geometry(cfg);
  const isa::FrameGeometry& g = fp.geometry;
  const SectorMap sec(cfg, sp.map);
  const DramBytes bytes(prog, sp);
  const isa::ActTables tables(act_params(cfg));
  const std::size_t n = sp.parts.size();
  // Sectors of each part: every on-chip element its loads (kept ones too) and stores touch (its engine
  // accesses lie in those buffers; run_frame_program checks it).
  std::vector<Mask> part_mask(n, Mask{});
  std::vector<Mask> kept_mask(n, Mask{});  // the sectors of a part's kept loads (loaded two parts before)
  const std::vector<Mask> eng_sectors = !sec.gating ? std::vector<Mask>(n, Mask{}) : engine_masks ? *engine_masks : engine_sectors(cfg, sp);
  for (std::size_t p = 0; p < n; ++p) {
    for (const Move& m : sp.parts[p].loads) part_mask[p] = part_mask[p] | move_mask(sec, m);
    for (const Move& m : sp.parts[p].kept) kept_mask[p] = kept_mask[p] | move_mask(sec, m);
    part_mask[p] = part_mask[p] | kept_mask[p];
    for (const Move& m : sp.parts[p].stores) part_mask[p] = part_mask[p] | move_mask(sec, m);
    // The engine's accesses may span words past its buffers (lanes it discards): keep those awake too.
    if (sec.gating) part_mask[p] = part_mask[p] | eng_sectors[p];
  }
  // In flight, by the model's rule: DMA frames [dma_done, masks.size()) and the last engine frame.
  std::vector<Mask> dma_masks;
  std::size_t dma_done = 0;
  bool engine_busy = false;
  Mask engine_mask{};
  Mask awake{};  // what the last PMU frame keeps awake (at reset: everything)
  for (int i = 0; i < isa::kFrameMemories; ++i) awake[std::size_t(i)] = g.sectors[i] >= isa::kAwakeFieldSectors ? 0xFFFFFFFFu : (1u << g.sectors[i]) - 1;
  const auto inflight = [&] {
    Mask k{};
    for (std::size_t i = dma_done; i < dma_masks.size(); ++i) k = k | dma_masks[i];
    if (engine_busy) k = k | engine_mask;
    return k;
  };
  const auto pmu = [&](Mask m, bool wait) {
    isa::Frame f;
    f.header.kind = isa::FrameKind::kPmu;
    for (int i = 0; i < isa::kFrameMemories; ++i) f.pmu.awake[i] = m[std::size_t(i)];
    f.pmu.wait = wait;
    fp.frames.push_back(f);
    fp.pmu += 1;
    awake = m;
  };
  const auto dma = [&](std::size_t p, const char* kind, std::size_t i, const Move& m, bool wait_engine) {
    isa::Frame f;
    f.header.kind = isa::FrameKind::kDma;
    f.header.wait_engine = wait_engine;
    f.dma = lower_move(m, bytes, g,
                       fmt::format("part {} ({} of instruction {}) {} {}", p, isa::instr_name(sp.parts[p].op), sp.parts[p].instr,
                                   kind, i),
                       &sp.map);
    fp.frames.push_back(f);
    fp.dma += 1;
    dma_masks.push_back(move_mask(sec, m));
    if (wait_engine) engine_busy = false;
  };
  if (n > 0 && g.power_gating()) pmu(part_mask[0], true);
  for (std::size_t i = 0; i < (n ? sp.parts[0].loads.size() : 0); ++i) dma(0, "load", i, sp.parts[0].loads[i], false);
  std::size_t loads_end = dma_masks.size();  // DMA frames up to part p's last load
  for (std::size_t p = 0; p < n; ++p) {
    const bool next = p + 1 < n;
    Mask want = inflight() | part_mask[p];
    if (next) want = want | part_mask[p + 1];
    bool woke = false;
    for (int i = 0; i < kOnchipMemories; ++i) woke |= (want[std::size_t(i)] & ~awake[std::size_t(i)]) != 0;
    if (g.power_gating() && want != awake) pmu(want, false);
    fp.part_awake.push_back(awake);
    // Engine p.
    isa::Frame e;
    e.header.kind = isa::FrameKind::kEngine;
    const std::size_t wait = dma_masks.size() - loads_end;
    if (wait >= (std::size_t{1} << 16))
      throw StreamError(fmt::format("part {}: {} DMA frames between its loads and its engine frame, wait_dma has 16 bits", p, wait));
    e.header.wait_dma = std::uint32_t(wait);
    std::string why;
    e.header.pending = !encode_part(cfg, tables, sp.parts[p].op, e.engine, why);
    if (e.header.pending) e.engine = {};
    fp.frames.push_back(e);
    fp.engine += 1;
    fp.pending += e.header.pending;
    dma_done = std::max(dma_done, loads_end);
    engine_busy = true;
    engine_mask = part_mask[p];
    if (g.power_gating() && woke) pmu(awake, true);
    // Part p+1's loads before p's stores (they overlap p's compute), unless p+1 loads DRAM that p
    // stores (the next instruction's input): then after them.
    const bool serial = next && loads_what_stores(sp.parts[p], sp.parts[p + 1]);
    fp.serialized += serial;
    const auto stores = [&] {
      for (std::size_t i = 0; i < sp.parts[p].stores.size(); ++i) dma(p, "store", i, sp.parts[p].stores[i], true);
    };
    if (serial) stores();
    if (next)
      for (std::size_t i = 0; i < sp.parts[p + 1].loads.size(); ++i) dma(p + 1, "load", i, sp.parts[p + 1].loads[i], false);
    loads_end = dma_masks.size();
    if (!serial) stores();
    if (g.power_gating() && next) {
      // Part p+2's kept loads are in p's half: they stay awake through p+1.
      const Mask keep = inflight() | part_mask[p + 1] | (p + 2 < n ? kept_mask[p + 2] : Mask{});
      if (keep != awake) pmu(keep, false);
    }
  }
  fp.frames.push_back(isa::Frame{});
  return fp;
}

FrameCheck run_frame_program(const AccelConfig& cfg, const isa::Program& prog, const StreamedProgram& sp,
                             const std::vector<isa::Frame>& frames, std::vector<std::int32_t>& dram,
                             std::vector<StoreBeat>* stores) {
  const isa::FrameGeometry g = checked_frame_geometry(cfg);
  const OnchipMap& map = sp.map;
  const SectorMap sec(cfg, map);
  const DramBytes bytes(prog, sp);
  const isa::ActTables tables(act_params(cfg));
  const isa::GemmShape shape{cfg.array.rows, cfg.array.cols, cfg.widths.psum, cfg.widths.act};
  const std::vector<Mask> eng_sectors = engine_sectors(cfg, sp);
  if (std::int64_t(dram.size()) < prog.size) dram.resize(std::size_t(prog.size), 0);
  const std::size_t size = std::size_t(map.size());
  std::vector<std::int32_t> chip(size, 0);
  std::vector<std::uint8_t> defined(size, 0);
  // Last DMA frame that wrote (load) / read (store) an element; last engine frame that read / wrote it.
  std::vector<long long> load_by(size, -1), store_by(size, -1), eng_read(size, -1), eng_write(size, -1);
  // Sector state: 0 asleep, 1 woken by a prefetch (not usable yet), 2 usable. At reset all usable.
  std::array<std::vector<std::uint8_t>, kOnchipMemories> state;
  for (int m = 0; m < isa::kFrameMemories; ++m) state[std::size_t(m)].assign(std::size_t(std::max(1, g.sectors[m])), 2);
  FrameCheck ck;
  for (int m = 0; m < isa::kFrameMemories; ++m) {
    ck.sector_sleeps[std::size_t(m)].assign(std::size_t(g.sectors[m]), 0);
    ck.sector_wakes[std::size_t(m)].assign(std::size_t(g.sectors[m]), 0);
  }
  std::vector<Mask> dma_masks;
  std::size_t dma_done = 0;
  long long engine = -1;
  bool engine_busy = false;
  Mask engine_mask{};
  std::size_t part = 0;
  isa::AccState accs;  // the engine's accumulators, carried from engine frame to engine frame
  for (std::size_t fi = 0; fi < frames.size(); ++fi) {
    const isa::Frame& f = frames[fi];
    const std::string where = fmt::format("frame {} ({})", fi, isa::to_string(f.header.kind));
    const auto usable = [&](std::int64_t c, const char* what) {
      int m = 0, s = 0;
      if (!sec.of(c, m, s)) throw StreamError(fmt::format("{}: {} of on-chip element {} outside the element space", where, what, c));
      if (g.power_gating() && state[std::size_t(m)][std::size_t(s)] != 2)
        throw StreamError(fmt::format("{}: {} of on-chip element {} in sector {} of the {} memory, which is {}", where, what, c,
                                      s, to_string(Onchip(m)), state[std::size_t(m)][std::size_t(s)] ? "not woken by a barrier yet" : "asleep"));
    };
    ck.frames += 1;
    if (f.header.kind == isa::FrameKind::kEnd) break;
    if (f.header.kind == isa::FrameKind::kDma) {
      const long long k = (long long)dma_masks.size();
      const isa::DmaFields& d = f.dma;
      if (f.header.wait_engine) engine_busy = false;
      const int moved = d.widen ? 1 : 1 << std::min<std::uint32_t>(d.size, std::uint32_t(g.max_size));  // bytes per beat
      Mask mask{};
      for (std::uint32_t i2 = 0; i2 < d.count[2]; ++i2)
        for (std::uint32_t i1 = 0; i1 < d.count[1]; ++i1)
          for (std::uint32_t i0 = 0; i0 < d.count[0]; ++i0) {
            const std::int64_t b = std::int64_t(wrap(std::int64_t(d.dram_addr) + i0 * sext(d.dram_stride[0], g.dram_addr_bits) +
                                                         i1 * sext(d.dram_stride[1], g.dram_addr_bits) +
                                                         i2 * sext(d.dram_stride[2], g.dram_addr_bits),
                                                     g.dram_addr_bits));
            const std::int64_t c0 = std::int64_t(wrap(std::int64_t(d.spm_addr) + i0 * sext(d.spm_stride[0], g.spm_addr_bits) +
                                                         i1 * sext(d.spm_stride[1], g.spm_addr_bits) +
                                                         i2 * sext(d.spm_stride[2], g.spm_addr_bits),
                                                     g.spm_addr_bits));
            // One beat of `moved` bytes: moved / code bytes consecutive elements on both sides.
            const std::int64_t e0 = bytes.element_at(b);
            if (e0 < 0 || moved % bytes.code_bytes(e0) != 0)
              throw StreamError(fmt::format("{}: DRAM byte {} is not the start of a code that a {}-byte beat holds", where, b, moved));
            const int eb = bytes.code_bytes(e0);
            for (int j = 0; j < moved / eb; ++j) {
            const std::int64_t e = bytes.element_at(b + std::int64_t(j) * eb), c = c0 + j;
            if (e != e0 + j || bytes.code_bytes(e) != eb)
              throw StreamError(fmt::format("{}: DRAM bytes {}..{} of one beat are not consecutive codes", where, b, b + moved - 1));
            usable(c, d.store ? "store" : "load");
            add_sector(sec, c, mask);
            const std::size_t ci = std::size_t(c);
            if (engine_busy && (eng_write[ci] == engine || (!d.store && eng_read[ci] == engine)))
              throw StreamError(fmt::format("{}: {} of on-chip element {} while engine frame {} that {} it may still run", where,
                                            d.store ? "store" : "load", c, engine, eng_write[ci] == engine ? "writes" : "reads"));
            if (d.store) {
              if (!defined[ci]) throw StreamError(fmt::format("{}: store of on-chip element {} that nothing defined", where, c));
              if (e >= std::int64_t(dram.size())) throw StreamError(fmt::format("{}: store to DRAM element {} outside the image", where, e));
              dram[std::size_t(e)] = chip[ci];
              store_by[ci] = k;
              ck.store_elements += 1;
              if (stores) stores->push_back({fi, k, b + std::int64_t(j) * eb, eb, chip[ci], e});
            } else {
              for (const std::int64_t x : map.aliases(c)) defined[std::size_t(x)] = 0;  // SMP: the other view's bytes
              chip[ci] = e < std::int64_t(dram.size()) ? dram[std::size_t(e)] : 0;
              defined[ci] = 1;
              load_by[ci] = k;
              ck.load_elements += 1;
            }
            }
            (d.store ? ck.store_beats : ck.load_beats) += 1;
          }
      dma_masks.push_back(mask);
      ck.dma += 1;
    } else if (f.header.kind == isa::FrameKind::kEngine) {
      if (part >= sp.parts.size()) throw StreamError(fmt::format("{}: more engine frames than parts", where));
      const Part& p = sp.parts[part];
      isa::EngineDescriptor want;
      std::string why;
      const bool ok = encode_part(cfg, tables, p.op, want, why);
      if (ok == f.header.pending || (ok && isa::pack_engine_descriptor(want) != isa::pack_engine_descriptor(f.engine)))
        throw StreamError(fmt::format("{}: the descriptor is not part {}'s encoding", where, part));
      if (f.header.wait_dma > dma_masks.size())
        throw StreamError(fmt::format("{}: wait_dma {} with {} DMA frames issued", where, f.header.wait_dma, dma_masks.size()));
      dma_done = std::max(dma_done, dma_masks.size() - f.header.wait_dma);
      engine = (long long)fi;
      engine_busy = true;
      engine_mask = Mask{};
      // Every word the engine's accesses span (lanes it discards included) must be in a usable sector.
      for (int m = 0; m < isa::kFrameMemories && g.power_gating(); ++m)
        for (int s = 0; s < g.sectors[m]; ++s)
          if ((eng_sectors[part][std::size_t(m)] >> s) & 1) {
            if (state[std::size_t(m)][std::size_t(s)] != 2)
              throw StreamError(fmt::format("{}: part {}'s engine accesses span sector {} of the {} memory, which is {}", where, part, s,
                                            to_string(Onchip(m)), state[std::size_t(m)][std::size_t(s)] ? "not woken by a barrier yet" : "asleep"));
            engine_mask[std::size_t(m)] |= 1u << s;
          }
      const long long first_open = (long long)dma_done;  // DMA frames from here on may still be running
      const auto overlap = [&](std::size_t ci) {
        return (load_by[ci] >= first_open) || (store_by[ci] >= first_open);
      };
      const auto read = [&](std::int64_t a) -> std::int64_t {
        usable(a, "engine read");
        const std::size_t ci = std::size_t(a);
        if (load_by[ci] >= first_open)
          throw StreamError(fmt::format("{}: engine read of on-chip element {} that DMA frame {} loads, not complete by wait_dma {}",
                                        where, a, load_by[ci], f.header.wait_dma));
        if (!defined[ci]) throw StreamError(fmt::format("{}: engine read of on-chip element {} that nothing defined", where, a));
        add_sector(sec, a, engine_mask);
        eng_read[ci] = engine;
        return chip[ci];
      };
      const auto write = [&](std::int64_t a, std::int64_t v) {
        usable(a, "engine write");
        const std::size_t ci = std::size_t(a);
        if (overlap(ci))
          throw StreamError(fmt::format("{}: engine write of on-chip element {} that a DMA frame not complete by wait_dma {} moves",
                                        where, a, f.header.wait_dma));
        add_sector(sec, a, engine_mask);
        for (const std::int64_t x : map.aliases(a)) defined[std::size_t(x)] = 0;
        chip[ci] = std::int32_t(v);
        defined[ci] = 1;
        eng_write[ci] = engine;
      };
      if (const auto* gm = std::get_if<isa::Gemm>(&p.op)) isa::run_gemm_reference(*gm, shape, read, write, nullptr, &accs);
      else if (const auto* a = std::get_if<isa::Activate>(&p.op)) isa::run_activate_reference(*a, tables, read, write);
      else if (const auto* fl = std::get_if<isa::Fill>(&p.op)) isa::run_fill_reference(*fl, write);
      part += 1;
      ck.engine += 1;
    } else {  // PMU
      Mask inflight{};
      for (std::size_t i = dma_done; i < dma_masks.size(); ++i) inflight = inflight | dma_masks[i];
      if (engine_busy) inflight = inflight | engine_mask;
      for (int m = 0; m < isa::kFrameMemories; ++m)
        for (int s = 0; s < g.sectors[m]; ++s) {
          auto& st = state[std::size_t(m)][std::size_t(s)];
          if ((f.pmu.awake[m] >> s) & 1) {
            if (st == 0) {
              st = 1;
              ck.wakes += 1;
              ck.sector_wakes[std::size_t(m)][std::size_t(s)] += 1;
            }
            if (f.pmu.wait) st = 2;
          } else if (st != 0) {
            if ((inflight[std::size_t(m)] >> s) & 1)
              throw StreamError(fmt::format("{}: puts sector {} of the {} memory to sleep while a frame in flight uses it", where, s,
                                            to_string(Onchip(m))));
            st = 0;
            ck.sleeps += 1;
            ck.sector_sleeps[std::size_t(m)][std::size_t(s)] += 1;
            // Contents are lost in sleep (of every range on this memory: SMP's acc view too).
            for (int v = 0; v < kOnchipMemories; ++v) {
              if (map.phys(v) != m || map.elements[v] == 0) continue;
              const std::int64_t span = sec.wps[v] * sec.banks[v] * map.word_elements[v];
              const std::int64_t lo = map.base[v] + s * span, hi = std::min(map.base[v] + map.elements[v], lo + span);
              std::fill(defined.begin() + lo, defined.begin() + std::max(lo, hi), 0);
            }
          }
        }
      ck.pmu += 1;
    }
  }
  if (frames.empty() || frames.back().header.kind != isa::FrameKind::kEnd) throw StreamError("frames: no end frame");
  if (part != sp.parts.size())
    throw StreamError(fmt::format("frames: {} engine frames for {} parts", part, sp.parts.size()));
  return ck;
}

}  // namespace capsgen
