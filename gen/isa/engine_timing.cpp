// Cycle model of the compute engine; see engine_timing.hpp and docs/rtl-engine.md "Cycle model".
#include "isa/engine_timing.hpp"

#include <algorithm>
#include <deque>
#include <limits>
#include <stdexcept>
#include <vector>

namespace capsgen::isa {
namespace {

// Cycles the tile reader needs for tile n of chunk k: one per row, but a strided tile reads each
// row holding elements column by column (one read per valid column).
long long tile_load_cycles(const EngineDescriptor& d, const EngineTimingShape& s, int k, int n) {
  if (!d.t_strided || d.t_diag) return s.rows;
  const long long rem = std::max<long long>(0, (long long)d.gather.r_total - (long long)k * s.rows);
  const long long lanes = std::max<long long>(1, std::min<long long>(s.cols, (long long)d.n_total - (long long)n * s.cols));
  const long long full = std::min<long long>(rem, s.rows);
  return full * lanes + (s.rows - full);
}

// Cycles the writer spends on one record (vector m of tile n): one per valid column, or one per
// record with select_mod (written or not), consecutive outputs (o_vec: the whole record at once) or
// acc_hold (nothing written: the writer steps through whole records).
long long record_cycles(const EngineDescriptor& d, const EngineTimingShape& s, int n) {
  if (d.o_sel != 0 || d.o_vec || d.acc_hold) return 1;
  return std::max<long long>(1, std::min<long long>(s.cols, (long long)d.n_total - (long long)n * s.cols));
}

EngineTiming gemm_timing(const EngineDescriptor& d, const EngineTimingShape& s, GemmSchedule* when) {
  const GatherDescriptor& g = d.gather;
  EngineTiming t;
  if (g.batch == 0 || g.m_total == 0 || g.m_block == 0 || g.k_chunks == 0 || d.n_tiles == 0) {
    t.cycles = 1;
    return t;
  }
  // Latency from a last-chunk vector's issue to its record in the output FIFO: staging read, array,
  // accumulator (2), activation bank (2), FIFO write.
  const long long array_latency = s.array_latency();
  const long long to_fifo = 1 + array_latency + 2 + 2 + 1;
  const int fifo = engine_out_fifo_depth(s.array_latency());

  long long gather_free = 1;       // first cycle the gather unit may present the next block's element
  long long prev_issue = 0;        // last issue cycle (0: none yet; the streamer runs from cycle 1)
  long long tile_ready = 1;        // cycle the next tile may start (first tile: loaded from cycle 1)
  bool first_tile = true;
  std::deque<long long> release;   // staging buffers: release cycles of the blocks still held
  std::deque<long long> pops;      // pop cycles of the last fifo records (credits)
  long long writer_free = 0;       // last cycle the writer was busy
  long long last_pop = 0;
  for (int b = 0; b < g.batch; ++b) {
    for (int m0 = 0; m0 < g.m_total; m0 += g.m_block) {
      const long long mb = std::min<int>(g.m_block, g.m_total - m0);
      for (int k = 0; k < g.k_chunks; ++k) {
        // Gather: mb * rows elements, one per cycle (vector-wide: mb vectors, one per cycle), into a
        // free staging buffer (two buffers).
        long long start = gather_free;
        if (release.size() >= 2) {
          start = std::max(start, release.front() + 1);
          release.pop_front();
        }
        if (when) when->step_data.push_back(start);
        const long long last_elem = start + mb * (d.v_mode ? 1 : s.rows) - 1;
        gather_free = last_elem + 2;             // the element after a block's last waits a cycle
        const long long staged = last_elem + 2;  // written in +1, readable in the cycle after the commit
        const bool last_k = k + 1 == g.k_chunks;
        for (int n = 0; n < d.n_tiles; ++n) {
          const long long load = tile_load_cycles(d, s, k, n);
          const long long w = record_cycles(d, s, n);
          long long ready = first_tile ? 1 + load : tile_ready;
          if (when) when->tile_load.push_back(ready - load);
          for (long long mi = 0; mi < mb; ++mi) {
            long long at = prev_issue + 1;
            long long stall_data = 0, stall_tile = 0, stall_out = 0;
            if (staged > at) stall_data = staged - at;
            long long tt = std::max(at, staged);
            if (mi == 0 && ready > tt) {
              stall_tile = ready - tt;
              tt = ready;
            }
            if (last_k && pops.size() >= static_cast<std::size_t>(fifo)) {
              const long long credit = pops.front() + 1;  // the credit returns in the cycle after the pop
              if (credit > tt) {
                stall_out = credit - tt;
                tt = credit;
              }
              pops.pop_front();
            }
            t.stall_data += stall_data;
            t.stall_tile += stall_tile;
            t.stall_out += stall_out;
            if (mi == 0) {
              // The next tile's rows load in the cycles after this tile's first vector.
              first_tile = false;
              const int next_n = n + 1 < d.n_tiles ? n + 1 : 0;
              const int next_k = next_n != 0 ? k : (k + 1 < g.k_chunks ? k + 1 : 0);
              tile_ready = tt + tile_load_cycles(d, s, next_k, next_n);
            }
            prev_issue = tt;
            if (when) {
              when->issue.push_back(tt);
              when->record.push_back(-1);
            }
            if (last_k) {
              const long long arrive = tt + to_fifo;
              const long long begin = std::max(arrive, writer_free + 1);
              if (when) when->record.back() = begin;
              writer_free = begin + w - 1;
              last_pop = writer_free;
              pops.push_back(last_pop);
            }
          }
        }
        release.push_back(prev_issue);
      }
    }
  }
  // done_o the cycle after the last record's pop; stat_cycles counts from the accept cycle.
  t.cycles = last_pop + 2;
  return t;
}

// Activate: one element per cycle through the data port into activation unit 0, vectors back to
// back; the pass ends with the last vector's last result (docs/rtl-activation.md "Timing").
EngineTiming activate_timing(const EngineDescriptor& d, const EngineTimingShape& s) {
  EngineTiming t;
  if (d.a_count == 0 || d.a_n == 0) {
    t.cycles = 1;
    return t;
  }
  const long long n = d.a_n;
  long long tail = 0;  // last element read -> last result written
  switch (d.a_func) {
    case 2: tail = 6; break;                    // norm: t_last + 6
    case 3: tail = 6 + n; break;                // squash: first result t_last + 7, n in a row
    default: tail = 2 * n + s.act_bits + 3;     // softmax: exp pass, divide pass (A stages)
  }
  t.cycles = (long long)d.a_count * n + tail + 3;
  return t;
}

}  // namespace

EngineTiming engine_timing(const EngineDescriptor& d, const EngineTimingShape& shape, GemmSchedule* schedule) {
  switch (d.kind) {
    case 0: return gemm_timing(d, shape, schedule);
    case 1: return activate_timing(d, shape);
    default: {
      EngineTiming t;
      t.cycles = d.a_count + 2;  // fill: one write per cycle
      return t;
    }
  }
}

bool instr_timing(const Instr& in, const EngineTimingShape& shape, EngineTiming* out) {
  EngineDescriptor d;
  try {
    if (const auto* g = std::get_if<Gemm>(&in)) {
      d = encode_engine(*g, shape.rows, shape.cols, std::numeric_limits<int>::max());
    } else if (const auto* a = std::get_if<Activate>(&in)) {
      d = encode_activate(*a, 0, std::numeric_limits<std::uint16_t>::max());
    } else {
      d.kind = 2;  // a fill's timing is its count (encode_fill also rejects tables it cannot write)
      d.a_count = static_cast<std::uint32_t>(std::get<Fill>(in).count);
    }
  } catch (const std::invalid_argument&) {
    return false;
  }
  *out = engine_timing(d, shape);
  return true;
}

long long program_cycles(const std::vector<long long>& descriptor_cycles, int words) {
  const long long fetch = static_cast<long long>(words) + 2;
  long long total = fetch;
  for (long long c : descriptor_cycles) total += std::max(c, fetch);
  return total;
}

}  // namespace capsgen::isa
