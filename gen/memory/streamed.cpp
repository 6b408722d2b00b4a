#include "memory/streamed.hpp"

#include <algorithm>
#include <bit>

#include <fmt/format.h>

#include "compiler/access.hpp"
#include "compiler/compiler.hpp"
#include "compiler/frame_program.hpp"
#include "compiler/stream.hpp"
#include "core/input_error.hpp"
#include "memory/dse_config.hpp"

namespace capsgen::memory {
namespace {

// The exploration's memory index -> the on-chip element space's (compiler/stream.hpp).
int onchip_of(int m) { return m == kShared ? int(Onchip::kShared) : m - 1; }

std::uint32_t all_sectors(int n) { return n >= 32 ? 0xFFFFFFFFu : (1u << n) - 1; }

}  // namespace

StreamedEvaluator::StreamedEvaluator(const AccelConfig& base, const isa::Program& prog) : base_(base), prog_(prog) {
  std::string prev;
  for (const auto& in : prog.instrs) {
    const std::string& name = isa::instr_name(in);
    if (op_of_instr_.empty() || starts_descnet_row(prev, name)) ++ops_;
    op_of_instr_.push_back(ops_ - 1);
    prev = name;
  }
}

StreamedFigures StreamedEvaluator::operator()(int option, const std::array<long long, kMems>& bytes,
                                              const std::array<std::vector<int>, kMems>& pools) const {
  StreamedFigures f;
  std::size_t npool = 1;
  for (int m = 0; m < kMems; ++m)
    if (bytes[std::size_t(m)] > 0) npool = std::max(npool, pools[std::size_t(m)].size());
  // The configuration with the k-th sector count of every memory's pool (its last one past its end).
  const auto config = [&](std::size_t k) {
    ConfigPoint p;
    p.option = option;
    p.bytes = bytes;
    bool gated = false;
    for (int m = 0; m < kMems; ++m) {
      const auto& pool = pools[std::size_t(m)];
      p.sectors[std::size_t(m)] = pool.empty() ? 1 : pool[std::min(k, pool.size() - 1)];
      gated |= bytes[std::size_t(m)] > 0 && p.sectors[std::size_t(m)] > 1;
    }
    AccelConfig cfg = configured_preset(base_, p);
    cfg.scratchpad.power_gating = gated;
    validate_accel_config(cfg);
    return cfg;
  };
  try {
    const AccelConfig cfg0 = config(0);
    const StreamedProgram sp = stream_program(cfg0, prog_);
    const StreamTiming t = stream_timing(cfg0, prog_, sp);
    const std::size_t n = sp.parts.size();
    f.cycles = t.cycles;
    f.parts = (long long)n;
    const StreamStats st = stream_stats(prog_, sp);
    f.dram_read_bytes = st.dram_read_bytes;
    f.dram_write_bytes = st.dram_write_bytes;
    f.op_cycles.assign(ops_, 0);
    std::vector<std::size_t> op(n);
    long long in_parts = 0;
    for (std::size_t p = 0; p < n; ++p) {
      op[p] = op_of_instr_[sp.parts[p].instr];
      f.op_cycles[op[p]] += t.part_cycles[p];
      in_parts += t.part_cycles[p];
    }
    const long long edge = t.cycles - in_parts;  // the first load and the last store
    if (n > 0) f.op_cycles[op[0]] += edge;
    // The engine's sectors for every pool entry in one enumeration of its accesses.
    std::vector<AccelConfig> layouts;
    for (std::size_t k = 0; k < npool; ++k) layouts.push_back(k == 0 ? cfg0 : config(k));
    const auto engine_masks = cfg0.scratchpad.power_gating ? engine_sectors(cfg0, sp, layouts)
                                                           : std::vector<std::vector<std::array<std::uint32_t, kOnchipMemories>>>(npool);
    for (std::size_t k = 0; k < npool; ++k) {
      const AccelConfig& cfg = layouts[k];
      const FrameProgram fp = build_frame_program(cfg, prog_, sp, cfg.scratchpad.power_gating ? &engine_masks[k] : nullptr);
      if (k == 0) {
        const AccessModel a = count_accesses(cfg, sp, fp);
        if (a.outside > 0) throw StreamError(fmt::format("{} engine accesses outside every memory", a.outside));
        for (int m = 0; m < kMems; ++m) {
          f.rd_bytes[std::size_t(m)].assign(ops_, 0.0);
          f.wr_bytes[std::size_t(m)].assign(ops_, 0.0);
          if (bytes[std::size_t(m)] == 0) continue;
          const double wb = memory_config(cfg.scratchpad, m).width_bits / 8.0;
          // The on-chip ranges on this memory (SMP: the shared memory's bytes and its acc view).
          for (int c = 0; c < kOnchipMemories; ++c) {
            if (sp.map.phys(c) != onchip_of(m)) continue;
            for (std::size_t p = 0; p < n; ++p) {
              const PartAccesses& pa = a.parts[p];
              f.rd_bytes[std::size_t(m)][op[p]] += double(pa.eng_rd[std::size_t(c)] + pa.dma_rd[std::size_t(c)]) * wb;
              f.wr_bytes[std::size_t(m)][op[p]] += double(pa.eng_wr[std::size_t(c)] + pa.dma_wr[std::size_t(c)]) * wb;
            }
          }
        }
      }
      for (int m = 0; m < kMems; ++m) {
        const auto& pool = pools[std::size_t(m)];
        if (bytes[std::size_t(m)] == 0 || k >= std::max<std::size_t>(1, pool.size())) continue;
        const int c = onchip_of(m);
        const int sc = memory_config(cfg.scratchpad, m).sectors;
        const bool gated = cfg.scratchpad.power_gating && sc > 1;
        SectorFigures s;
        s.sectors = gated ? sc : 1;
        s.awake_cycles.assign(ops_, 0.0);
        s.mask.assign(ops_, 0);
        s.sector_cycles.assign(ops_, std::vector<double>(std::size_t(s.sectors), 0.0));
        for (std::size_t p = 0; p < n; ++p) {
          const std::uint32_t on = gated ? fp.part_awake[p][std::size_t(c)] : 1u;
          const long long cyc = t.part_cycles[p] + (p == 0 ? edge : 0);
          s.awake_cycles[op[p]] += double(cyc) * std::popcount(on);
          s.mask[op[p]] |= on;
          for (int b = 0; b < s.sectors; ++b)
            if ((on >> b) & 1) s.sector_cycles[op[p]][std::size_t(b)] += double(cyc);
        }
        if (gated) {
          std::uint32_t awake = all_sectors(sc);
          for (const isa::Frame& fr : fp.frames)
            if (fr.header.kind == isa::FrameKind::kPmu) {
              s.wakes += std::popcount(fr.pmu.awake[c] & ~awake);
              awake = fr.pmu.awake[c];
            }
        }
        f.sectors[std::size_t(m)].push_back(std::move(s));
      }
    }
    f.ok = true;
  } catch (const StreamError& e) {
    f = StreamedFigures{};
    f.why = e.what();
  } catch (const InputError& e) {
    f = StreamedFigures{};
    f.why = e.what();
  }
  return f;
}

}  // namespace capsgen::memory
