// The chip's timing model (compiler/chip_timing.hpp). Each unit is a small class whose step() mirrors
// one clock of its RTL: outputs from the registers, the handshakes of the cycle, then the registers.
#include "compiler/chip_timing.hpp"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "compiler/access.hpp"
#include "dram/offchip_port.hpp"

namespace capsgen {
namespace {

// The off-chip memory of tb/chip_tb.cpp without its stress mode (dram/offchip_port.hpp): read bursts'
// data in request order, a beat per cycle; write bursts' beats in request order.
class OffchipMemory {
 public:
  OffchipMemory(const AccelConfig& cfg, const dram::DramSpec& spec)
      : port_(spec, cfg.clock.target_mhz, cfg.offchip.latency_cycles, cfg.offchip.max_burst) {}

  bool read_valid(long long cycle) const { return !reads_.empty() && reads_.front().ready <= cycle; }
  bool write_ready(long long cycle) const { return port_.write_ready(cycle); }
  void request(long long cycle, std::uint32_t address, int beats, int beat_bytes, bool write) {
    const std::uint32_t bytes = std::uint32_t(beats * beat_bytes);
    if (write) {
      writes_.push_back({address, bytes, beats});
      return;
    }
    long long ready = port_.read(cycle, address, bytes);
    if (!reads_.empty()) ready = std::max(ready, reads_.back().ready);
    reads_.push_back({beats, ready});
  }
  void take_read_beat() {
    if (--reads_.front().beats == 0) reads_.pop_front();
  }
  void take_write_beat(long long cycle) {
    Write& w = writes_.front();
    if (--w.beats == 0) {
      port_.write(cycle, w.address, w.bytes);
      writes_.pop_front();
    }
  }
  // Closes the DRAM model's books: its figures and energy (pJ).
  std::pair<dram::DramStats, double> finish() {
    port_.model().finish();
    return {port_.model().stats(), port_.model().energy().total()};
  }

 private:
  struct Read {
    int beats;
    long long ready;
  };
  struct Write {
    std::uint32_t address, bytes;
    int beats;
  };
  dram::OffchipPort port_;
  std::deque<Read> reads_;
  std::deque<Write> writes_;
};

// Whether memsys holds back an engine write that needs a bank read access `a` uses in the same
// cycle: the tile reader's, and the data port's in a memory of its own (a shared scratchpad serves
// the data port on a port of its own, docs/rtl-memsys.md).
bool holds_writes(const EngineAccess& a, const OnchipMap& map) {
  using Port = EngineAccess::Port;
  return a.port == Port::kTile || (a.port == Port::kData && map.phys(a.range) != int(Onchip::kShared));
}

// The banks the running part's engine enables, cycle by cycle (per physical memory), the ports'
// accesses ORed together: a Gemm's where the engine's cycle model schedules them
// (EngineAccess::cycle), any other part's (activation passes, fills) spread evenly over its cycles,
// each memory's reads and writes as a stream. memsys holds a scheduled write back in a cycle in
// which a read uses one of its banks (holds_writes): the writer retries in the next cycle and
// catches up where its schedule leaves it idle; the part ends as late as its last write.
class EngineBanks {
 public:
  struct Held {
    long long waits = 0;  // cycles a write waited (the RTL's wr_en_i & ~wr_ready_o)
    long long late = 0;   // cycles the part runs beyond its model
  };
  // The part of `cycles` engine cycles starting in `start` with accesses `trace`.
  Held start(long long start, long long cycles, const std::vector<EngineAccess>& trace, const OnchipMap& map) {
    start_ = start;
    cycles_ = std::max(1LL, cycles);
    for (auto& m : masks_) m.assign(std::size_t(cycles_), 0);
    for (auto& m : reads_) m.assign(std::size_t(cycles_), 0);
    // The unscheduled streams: the accesses of one range, reads or writes.
    std::array<std::array<long long, 2>, kOnchipMemories> total{}, seen{};
    for (const EngineAccess& a : trace)
      if (a.cycle < 0) ++total[std::size_t(a.range)][a.write];
    for (const EngineAccess& a : trace) {
      if (a.write && a.cycle >= 0) continue;
      // Engine cycle 1 (the cycle after the accept) is the part's first here.
      const long long at = a.cycle >= 0 ? a.cycle - 1
                                        : seen[std::size_t(a.range)][a.write]++ * cycles_ / total[std::size_t(a.range)][a.write];
      const std::size_t mem = std::size_t(map.phys(a.range)), t = std::size_t(std::clamp(at, 0LL, cycles_ - 1));
      masks_[mem][t] |= a.banks;
      if (holds_writes(a, map)) reads_[mem][t] |= a.banks;
    }
    Held held;
    long long writer = -1;  // the writer's last cycle
    for (const EngineAccess& a : trace) {
      if (!a.write || a.cycle < 0) continue;
      const std::size_t mem = std::size_t(map.phys(a.range));
      long long at = std::max(a.cycle - 1, writer + 1);
      for (; at < cycles_ && (reads_[mem][std::size_t(at)] & a.banks); ++at) ++held.waits;
      if (at >= cycles_) {  // past the part's modelled end
        for (auto& m : masks_) m.resize(std::size_t(at + 1), 0);
        for (auto& m : reads_) m.resize(std::size_t(at + 1), 0);
        cycles_ = at + 1;
      }
      masks_[mem][std::size_t(at)] |= a.banks;
      writer = at;
      held.late = at - (a.cycle - 1);
    }
    return held;
  }
  // Whether the engine enables bank `bank` of physical memory `mem` in `cycle`.
  bool busy(long long cycle, int mem, int bank) const {
    const long long t = cycle - start_;
    if (t < 0 || t >= cycles_ || mem < 0) return false;
    return (masks_[std::size_t(mem)][std::size_t(t)] >> bank) & 1u;  // bank < 64
  }

 private:
  long long start_ = 0, cycles_ = 1;
  std::array<std::vector<std::uint64_t>, kOnchipMemories> masks_;
  std::array<std::vector<std::uint64_t>, kOnchipMemories> reads_;  // the reads that hold writes back (holds_writes)
};

// capsgen_dma (gen/emit/dma.cpp) behind memsys, which returns read data a cycle after the grant and
// refuses the DMA a cycle in which the engine enables the addressed bank (EngineBanks).
class Dma {
 public:
  Dma(const AccelConfig& cfg, const isa::FrameGeometry& g, const SectorMap& sectors)
      : word_bytes_(1 << g.max_size), max_size_(g.max_size), max_burst_(cfg.offchip.max_burst),
        outstanding_(isa::dma_outstanding_bursts(cfg)), spm_mask_((std::uint32_t(1) << g.spm_addr_bits) - 1),
        sectors_(sectors) {}

  bool idle() const { return !busy_; }
  bool done() const { return done_; }

  // One clock. `accept`: the sequencer's descriptor this cycle (only while idle); `engine`: the running
  // part's banks.
  void step(long long cycle, const isa::DmaFields* accept, const EngineBanks& engine, OffchipMemory& mem,
            long long& read_beats, long long& write_beats, std::array<long long, kOnchipMemories>& waits) {
    // Outputs of this cycle, from the registers.
    const bool lq_empty = lengths_.empty(), lq_full = int(lengths_.size()) == outstanding_;
    const bool req_valid = rq_active_ && !lq_full;
    const bool rd_ready = busy_ && !store_ && !lq_empty && fifo_ < isa::kDmaFifoDepth;
    const bool wr_valid = busy_ && store_ && !lq_empty && fifo_ > 0;
    const bool spm_req = busy_ && (store_ ? (spm_left_ > 0 && fifo_ + spm_inflight_ < isa::kDmaFifoDepth) : fifo_ > 0);
    const bool finish = busy_ && !rq_active_ && spm_left_ == 0 && lq_empty && fifo_ == 0 && spm_inflight_ == 0;
    const bool spm_return = spm_read_q_ && busy_ && store_;
    // Handshakes.
    const bool rd_fire = rd_ready && mem.read_valid(cycle);
    const bool wr_fire = wr_valid && mem.write_ready(cycle);
    const bool beat_fire = store_ ? wr_fire : rd_fire;
    bool spm_fire = spm_req;
    if (spm_req) {
      int mem_index = -1, bank = 0;
      spm_bank(mem_index, bank);
      if (engine.busy(cycle, mem_index, bank)) {
        spm_fire = false;
        ++waits[std::size_t(mem_index)];
      }
    }
    if (req_valid) request(cycle, mem);
    if (rd_fire) {
      mem.take_read_beat();
      ++read_beats;
    }
    if (wr_fire) {
      mem.take_write_beat(cycle);
      ++write_beats;
    }
    if (beat_fire && ++beat_ == lengths_.front()) {
      lengths_.pop_front();
      beat_ = 0;
    }
    const bool push = store_ ? spm_return : rd_fire, pop = store_ ? wr_fire : spm_fire;
    fifo_ += int(push) - int(pop);
    const bool spm_read = spm_fire && store_;
    spm_inflight_ += int(spm_read) - int(spm_return);
    if (spm_fire) next_spm_word();
    spm_read_q_ = spm_read;
    done_ = false;
    if (accept) load(*accept);
    if (finish) {
      busy_ = false;
      done_ = true;
    }
  }

 private:
  void load(const isa::DmaFields& f) {
    const bool empty = f.count[0] == 0 || f.count[1] == 0 || f.count[2] == 0;
    busy_ = !empty;
    done_ = empty;
    store_ = f.store;
    size_ = word_bytes_ > 1 ? int(std::min<std::uint32_t>(f.size, std::uint32_t(max_size_))) : 0;
    const std::uint32_t beat_bytes = word_bytes_ > 1 ? (1u << size_) : std::uint32_t(word_bytes_);
    contiguous_ = f.dram_stride[0] == beat_bytes;
    limit_ = (f.burst == 0 || int(f.burst) > max_burst_) ? max_burst_ : int(f.burst);
    for (int k = 0; k < 3; ++k) {
      count_[k] = f.count[k];
      stride_[k] = f.dram_stride[k];
    }
    rq_active_ = !empty;
    inner_ = i1_ = i2_ = 0;
    ptr_ = row1_ = row2_ = f.dram_addr;
    spm_left_ = empty ? 0 : (long long)f.count[0] * f.count[1] * f.count[2];
    for (int k = 0; k < 3; ++k) spm_stride_[k] = f.spm_stride[k];
    sp_i0_ = sp_i1_ = sp_i2_ = 0;
    sp_ptr_ = sp_row1_ = sp_row2_ = f.spm_addr & spm_mask_;
  }

  // The physical memory and bank of the SPM walker's element (mem -1: outside the element space).
  void spm_bank(int& mem, int& bank) const {
    const std::int64_t a = sp_ptr_;
    const int range = sectors_.memory_of(a);
    if (range < 0) return;
    mem = sectors_.map.phys(range);
    bank = int(sectors_.word_of(range, a) % sectors_.banks[range]);
  }

  // The SPM walker after an access: along level 0, else the next row or plane.
  void next_spm_word() {
    --spm_left_;
    if (sp_i0_ + 1 != count_[0]) {
      ++sp_i0_;
      sp_ptr_ = (sp_ptr_ + spm_stride_[0]) & spm_mask_;
    } else if (sp_i1_ + 1 != count_[1]) {
      sp_i0_ = 0;
      ++sp_i1_;
      sp_row1_ = sp_ptr_ = (sp_row1_ + spm_stride_[1]) & spm_mask_;
    } else if (sp_i2_ + 1 != count_[2]) {
      sp_i0_ = sp_i1_ = 0;
      ++sp_i2_;
      sp_row2_ = sp_row1_ = sp_ptr_ = (sp_row2_ + spm_stride_[2]) & spm_mask_;
    }
  }

  // The request walker's burst at ptr_: 1 beat unless contiguous, else the rest of the inner run up to
  // the limit; then on to the next burst, row or plane.
  void request(long long cycle, OffchipMemory& mem) {
    const std::uint32_t rem = count_[0] - inner_;
    const int len = !contiguous_ ? 1 : int(std::min<std::uint32_t>(rem, std::uint32_t(limit_)));
    mem.request(cycle, ptr_, len, 1 << size_, store_);
    lengths_.push_back(len);
    if (inner_ + std::uint32_t(len) != count_[0]) {
      inner_ += std::uint32_t(len);
      ptr_ += contiguous_ ? (std::uint32_t(len) << size_) : stride_[0];
    } else if (i1_ + 1 != count_[1]) {
      inner_ = 0;
      ++i1_;
      row1_ += stride_[1];
      ptr_ = row1_;
    } else if (i2_ + 1 != count_[2]) {
      inner_ = i1_ = 0;
      ++i2_;
      row2_ += stride_[2];
      row1_ = ptr_ = row2_;
    } else {
      rq_active_ = false;
    }
  }

  int word_bytes_, max_size_, max_burst_, outstanding_;
  std::uint32_t spm_mask_;  // SPM addresses wrap at 2^spm_addr_bits
  const SectorMap& sectors_;
  std::uint32_t spm_stride_[3] = {0, 0, 0};
  std::uint32_t sp_i0_ = 0, sp_i1_ = 0, sp_i2_ = 0, sp_ptr_ = 0, sp_row1_ = 0, sp_row2_ = 0;  // SPM walker
  bool busy_ = false, done_ = false, store_ = false, contiguous_ = false;
  int size_ = 0, limit_ = 1;
  std::uint32_t count_[3] = {1, 1, 1}, stride_[3] = {0, 0, 0};
  bool rq_active_ = false;
  std::uint32_t inner_ = 0, i1_ = 0, i2_ = 0, ptr_ = 0, row1_ = 0, row2_ = 0;
  std::deque<int> lengths_;  // bursts in flight
  int beat_ = 0;             // beats of the head burst so far
  int fifo_ = 0, spm_inflight_ = 0;
  long long spm_left_ = 0;
  bool spm_read_q_ = false;  // an SPM read granted last cycle: its data returns now
};

// The PMUs of the power-gated memories (gen/emit/pmu.cpp): a prefetch is taken at once; a barrier
// when every sector of its awake masks is usable, W + 2 cycles after the last cycle the sector's
// sleep request was high (docs/rtl-pmu.md "Barrier completion formula").
class Pmus {
 public:
  Pmus(const AccelConfig& cfg, const isa::FrameGeometry& g) : wakeup_(cfg.scratchpad.wakeup_cycles) {
    for (int m = 0; m < isa::kFrameMemories; ++m) sectors_[m].assign(std::size_t(g.sectors[m]), Sector{});
  }
  bool ready(long long cycle, const isa::PmuFields& f) const {
    if (!f.wait) return true;
    for (int m = 0; m < isa::kFrameMemories; ++m)
      for (std::size_t s = 0; s < sectors_[m].size(); ++s) {
        if (!((f.awake[m] >> s) & 1u)) continue;
        const Sector& x = sectors_[m][s];
        const long long last_high = x.asleep ? cycle : x.last_high;
        if (x.ever_high && cycle < last_high + wakeup_ + 2) return false;
      }
    return true;
  }
  // A command presented this cycle: every sector's request follows its awake bit from the next cycle.
  void present(long long cycle, const isa::PmuFields& f) {
    for (int m = 0; m < isa::kFrameMemories; ++m)
      for (std::size_t s = 0; s < sectors_[m].size(); ++s) {
        Sector& x = sectors_[m][s];
        if (x.asleep) x.last_high = cycle;
        x.asleep = !((f.awake[m] >> s) & 1u);
        x.ever_high = x.ever_high || x.asleep;
      }
  }

 private:
  struct Sector {
    bool asleep = false;  // the sleep request is high (after reset: low)
    bool ever_high = false;
    long long last_high = 0;  // the last cycle the request was high, while it is low
  };
  int wakeup_;
  std::vector<Sector> sectors_[isa::kFrameMemories];
};

}  // namespace

ChipTiming chip_timing(const AccelConfig& cfg, const StreamedProgram& sp, const FrameProgram& fp,
                       const dram::DramSpec& dram_spec) {
  const isa::FrameGeometry& g = fp.geometry;
  std::vector<long long> engine_cycles;
  for (const Part& p : sp.parts) engine_cycles.push_back(part_engine_cycles(cfg, p));
  const SectorMap sectors(cfg, sp.map);
  EngineBanks engine_banks;
  OffchipMemory mem(cfg, dram_spec);
  Dma dma(cfg, g, sectors);
  Pmus pmus(cfg, g);
  ChipTiming t;
  ChipCycleClasses& cls = t.classes;
  long long engine_free = 0;  // the cycle the engine is idle again (desc_ready_o)
  std::size_t engine_frames = 0;  // engine frames issued; the running part is the last of them
  const auto step_dma = [&](long long cycle, const isa::DmaFields* accept) {
    dma.step(cycle, accept, engine_banks, mem, t.read_beats, t.write_beats, t.dma_wait);
  };
  long long dma_outstanding = 0;
  std::size_t next = 0;           // the frame being fetched or held
  long long held_from = 0;        // the cycle its fetch completes (StFrame)
  // Fetch: the header request, the header a cycle later, then a payload word per cycle, each a cycle
  // after its request (tb/chip_tb.cpp's program memory): payload + 3 cycles, 2 for a frame without one.
  const auto fetch_cycles = [&](const isa::Frame& f) {
    const int words = isa::payload_words(f.header.kind, g);
    return words > 0 ? words + 3 : 2;
  };
  held_from = fetch_cycles(fp.frames.at(0));
  cls.fetch += held_from;
  for (long long cycle = held_from;; ++cycle) {
    const isa::Frame& f = fp.frames.at(next);
    const bool engine_ready = cycle >= engine_free;
    const isa::DmaFields* dma_accept = nullptr;
    bool taken = false, finished = false;
    switch (f.header.kind) {
      case isa::FrameKind::kEngine:
        if (f.header.pending) throw StreamError(fmt::format("frame {}: a pending engine frame (the chip refuses it)", next));
        if (!engine_ready) ++cls.eng_busy;
        else if (dma_outstanding > (long long)f.header.wait_dma) ++cls.wait_dma;
        else {
          taken = true;
          ++cls.engine;
          if (engine_frames >= engine_cycles.size()) throw StreamError("more engine frames than parts");
          const long long c = engine_cycles[engine_frames++];
          t.engine_cycles += c;
          const EngineBanks::Held held = engine_banks.start(cycle + 1, c, engine_access_trace(cfg, sp, engine_frames - 1), sp.map);
          t.engine_write_waits += held.waits;
          t.engine_late += held.late;
          engine_free = cycle + c + held.late + 1;
        }
        break;
      case isa::FrameKind::kDma:
        if (f.header.wait_engine && !engine_ready) ++cls.wait_engine;
        else if (!dma.idle()) ++cls.dma_busy;
        else {
          taken = true;
          ++cls.dma;
          dma_accept = &f.dma;
        }
        break;
      case isa::FrameKind::kPmu:
        taken = pmus.ready(cycle, f.pmu);
        ++(taken ? cls.pmu : cls.pmu_wait);
        pmus.present(cycle, f.pmu);
        break;
      case isa::FrameKind::kEnd:
        ++cls.drain;
        finished = engine_ready && dma_outstanding == 0;
        break;
    }
    const bool dma_done = dma.done();
    step_dma(cycle, dma_accept);
    dma_outstanding += int(dma_accept != nullptr) - int(dma_done);
    if (finished) {
      t.cycles = cycle + 1;
      break;
    }
    if (taken) {
      ++next;
      const long long fetch = fetch_cycles(fp.frames.at(next));
      // The units run on while the next frame is fetched.
      for (long long k = 1; k <= fetch; ++k) {
        const bool done = dma.done();
        step_dma(cycle + k, nullptr);
        dma_outstanding -= int(done);
      }
      cls.fetch += fetch;
      cycle += fetch;
    }
  }
  std::tie(t.dram, t.dram_energy_pj) = mem.finish();
  return t;
}

}  // namespace capsgen
