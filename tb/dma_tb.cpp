// Block test of the DMA engine (capsgen_dma, docs/rtl-dma.md). The testbench models what lives off
// chip: a byte-addressed DRAM image (sparse, modulo 2^32; unwritten bytes hold a hash of their
// address) behind a valid/ready burst port whose read-data timing comes from the cycle-level DRAM
// model (gen/dram, DDR3-1600 x8) plus the preset's latency_cycles, write data accepted only while the
// DRAM model keeps up (its backlog < latency_cycles + max_burst cycles), random backpressure on every
// channel; and a flat scratchpad (2^spm_addr_bits element addresses, one word each, 1-cycle read
// latency, random grant stalls) that behaves like capsgen_memsys's DMA port as far as the DMA can
// tell: an access of 2^spm_size_o bytes writes only the low 2^spm_size_o bytes at its address, and
// a read returns them with garbage above (memsys returns zeros; the DMA must not use those bytes).
// Element size: a descriptor's size makes every beat carry 2^size bytes in its low bytes (the memory
// model returns garbage in the upper bytes of read beats and writes only the bytes wr_strb_o marks);
// widen sign-extends a 1-byte load to a widen_bits lane.
// Golden model (computed here from the descriptor, independently of the RTL): the element list
// (dram byte address, spm word address) in (i2, i1, i0) order and the burst list (greedy runs of the
// inner level, at most min(limit, max_burst) beats when ds0 is 2^size bytes, else 1 beat). Checked:
//   - every burst request (address, length, direction, size) against the burst list, in order;
//   - every SPM access's size (spm_size_o: 2^size bytes, or the widened lane's 4);
//   - load: every SPM write (address, data = element i's 2^size DRAM bytes, zeros above, or the
//     widened byte); store: every SPM read address, every write beat's DRAM address, strobes, data
//     (= low 2^size bytes of the SPM word of element i) and wr_last;
//   - after each descriptor the whole SPM (load) / every DRAM byte written (store) against a golden
//     copy (no stray writes: a narrow store changes only its elements' bytes), done_o exactly once,
//     busy_o, and the beat counters.
// Descriptors: corner cases (count 1, empty, bursts crossing the limit, zero strides, wrapping
// SPM strides, non-contiguous DRAM, narrow and widened elements at odd addresses) and seeded random
// ones (sizes 0..max_size, widen on some 1-byte loads), back to back, with per-descriptor stall
// probabilities from none to heavy; then two whole-word throughput runs without stalls. At the end the
// DRAM model's statistics for the DMA's access stream: row-buffer hits/misses/conflicts, energy, bandwidth.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "Vdma.h"
#include "common/bits.hpp"
#include "common/rng.hpp"
#include "common/sim.hpp"
#include "dram/dram_model.hpp"
#include "dram/offchip_port.hpp"
#include "dram/dram_spec.hpp"

namespace {

using Word = std::vector<std::uint8_t>;  // little-endian bytes of one SPM word

struct DmaInfo {
  int data_bits = 0, spm_addr_bits = 0, dram_addr_bits = 0, count_bits = 0, len_bits = 0, max_burst = 0,
      outstanding = 0, latency = 0, size_bits = 0, max_size = 0, widen_bits = 0, widen_size = 0;
  double clock_mhz = 0;
  int wb() const { return data_bits / 8; }
};

struct Desc {
  bool store = false;
  std::uint32_t dram = 0, spm = 0;
  std::uint32_t count[3] = {1, 1, 1};
  std::uint32_t ds[3] = {0, 0, 0};  // bytes, mod 2^32
  std::uint32_t ss[3] = {0, 0, 0};  // elements, mod 2^spm_addr_bits
  std::uint32_t burst = 0;
  int size = -1;  // desc_size_i; -1: a whole word (max_size); values above max_size also mean a whole word
  bool widen = false;
};

// Effective size (bytes per beat = 2^size), widening and the expected strobes of a descriptor.
int eff_size(const Desc& d, const DmaInfo& info) { return d.size < 0 ? info.max_size : std::min(d.size, info.max_size); }
int elem_bytes(const Desc& d, const DmaInfo& info) { return 1 << eff_size(d, info); }
bool eff_widen(const Desc& d, const DmaInfo& info) {
  return d.widen && !d.store && eff_size(d, info) == 0 && info.widen_bits > 8;
}
std::uint64_t strobes(int bytes) { return bytes >= 64 ? ~0ull : (1ull << bytes) - 1; }

// Expected spm_size_o: the descriptor's size, or a widened load's lane.
int spm_size(const Desc& d, const DmaInfo& info) { return eff_widen(d, info) ? info.widen_size : eff_size(d, info); }

struct Element {
  std::uint32_t dram, spm;
};
struct Burst {
  std::uint32_t addr;
  int len;
};

// Golden address pattern and burst segmentation (docs/rtl-dma.md "Address pattern").
void golden(const Desc& d, const DmaInfo& info, std::vector<Element>& el, std::vector<Burst>& bursts) {
  el.clear();
  bursts.clear();
  const std::uint32_t smask = info.spm_addr_bits >= 32 ? ~0u : ((1u << info.spm_addr_bits) - 1);
  if (d.count[0] == 0 || d.count[1] == 0 || d.count[2] == 0) return;
  const int limit = (d.burst == 0 || static_cast<int>(d.burst) > info.max_burst) ? info.max_burst : static_cast<int>(d.burst);
  const bool contig = d.ds[0] == static_cast<std::uint32_t>(elem_bytes(d, info));
  for (std::uint32_t i2 = 0; i2 < d.count[2]; ++i2)
    for (std::uint32_t i1 = 0; i1 < d.count[1]; ++i1) {
      for (std::uint32_t i0 = 0; i0 < d.count[0]; ++i0)
        el.push_back({d.dram + i0 * d.ds[0] + i1 * d.ds[1] + i2 * d.ds[2],
                      (d.spm + i0 * d.ss[0] + i1 * d.ss[1] + i2 * d.ss[2]) & smask});
      for (std::uint32_t j = 0; j < d.count[0];) {
        const int len = contig ? static_cast<int>(std::min<std::uint32_t>(limit, d.count[0] - j)) : 1;
        bursts.push_back({d.dram + j * d.ds[0] + i1 * d.ds[1] + i2 * d.ds[2], len});
        j += len;
      }
    }
}

std::uint8_t initial_byte(std::uint32_t a) {
  std::uint32_t z = a * 0x9E3779B1u;
  z ^= z >> 15;
  z *= 0x85EBCA77u;
  z ^= z >> 13;
  return static_cast<std::uint8_t>(z);
}

class Dram {
 public:
  std::uint8_t get(std::uint32_t a) const {
    auto it = mem_.find(a);
    return it == mem_.end() ? initial_byte(a) : it->second;
  }
  void set(std::uint32_t a, std::uint8_t v) { mem_[a] = v; }
  Word word(std::uint32_t a, int wb) const {
    Word w(wb);
    for (int k = 0; k < wb; ++k) w[k] = get(a + k);
    return w;
  }
  // The SPM word a load writes for the element at `a`: its `eb` bytes, zeros above; widened: byte 0's
  // sign in bytes 1..widen_bytes-1.
  Word element(std::uint32_t a, int wb, int eb, int widen_bytes) const {
    Word w(wb, 0);
    for (int k = 0; k < eb; ++k) w[k] = get(a + k);
    for (int k = 1; k < widen_bytes; ++k) w[k] = (w[0] & 0x80) ? 0xFF : 0x00;
    return w;
  }
  const std::unordered_map<std::uint32_t, std::uint8_t>& written() const { return mem_; }

 private:
  std::unordered_map<std::uint32_t, std::uint8_t> mem_;
};

template <class P>
void put_word(P& port, const Word& w) {
  for (std::size_t k = 0; k < w.size(); k += 4) {
    std::uint64_t v = 0;
    const int n = static_cast<int>(std::min<std::size_t>(4, w.size() - k));
    for (int b = 0; b < n; ++b) v |= static_cast<std::uint64_t>(w[k + b]) << (8 * b);
    tb::put(port, static_cast<int>(8 * k), 8 * n, v);
  }
}
template <class P>
Word get_word(const P& port, int wb) {
  Word w(wb);
  for (int k = 0; k < wb; ++k) w[k] = static_cast<std::uint8_t>(tb::get(port, 8 * k, 8));
  return w;
}
// The first differing 64-bit chunk (or the low chunk) of two words, for the mismatch line.
std::pair<long long, long long> chunk_diff(const Word& e, const Word& a) {
  for (std::size_t k = 0; k < e.size(); k += 8) {
    std::uint64_t ve = 0, va = 0;
    for (std::size_t b = 0; b < 8 && k + b < e.size(); ++b) {
      ve |= static_cast<std::uint64_t>(e[k + b]) << (8 * b);
      va |= static_cast<std::uint64_t>(a[k + b]) << (8 * b);
    }
    if (ve != va || k + 8 >= e.size()) return {static_cast<long long>(ve), static_cast<long long>(va)};
  }
  return {0, 0};
}

struct Stalls {
  int req = 0, rd = 0, wr = 0, gnt = 0;  // percent of cycles the tb side is not ready/valid
  int extra_latency = 0;                // random extra read latency, up to this many cycles per burst
};

struct RdBurst {
  std::uint32_t addr;
  int len, eb, sent = 0;
  std::uint64_t ready;
};
struct WrBurst {
  std::uint32_t addr;
  int len, eb, got = 0;
};

class Bench {
 public:
  Bench(const tb::Args& args, const DmaInfo& info)
      : args_(args),
        info_(info),
        rng_(args.seed),
        sim_(args),
        dut_p_(std::make_unique<Vdma>(sim_.context(), "dma")),
        dut_(*dut_p_),
        report_("dma", args.max_errors),
        offchip_(capsgen::dram::ddr3_1600_2gb_x8(), info.clock_mhz, info.latency, info.max_burst) {
    sim_.add(dut_);
    sim_.open_trace();
    spm_.assign((std::size_t{1} << info_.spm_addr_bits) * static_cast<std::size_t>(info_.wb()), 0);
    for (auto& b : spm_) b = static_cast<std::uint8_t>(rng_.next());
    // The handshake inputs are driven from the start (they would otherwise keep the model's initial
    // value, random with CAPSGEN_RAND_RESET=2); data inputs are don't-care until their valid.
    dut_.desc_valid_i = 0;
    dut_.req_ready_i = 0;
    dut_.rd_valid_i = 0;
    dut_.wr_ready_i = 0;
    dut_.spm_gnt_i = 0;
    dut_.spm_rvalid_i = 0;
    sim_.reset();
  }

  // Runs descriptors back to back (the next one waits on desc_valid_i while the previous runs).
  // Returns the cycles from the first acceptance to the last done.
  std::uint64_t run(const std::vector<Desc>& list, const std::vector<Stalls>& stalls) {
    std::uint64_t start = sim_.cycle();
    for (std::size_t n = 0; n < list.size(); ++n) {
      run_one(list[n], stalls[n]);
      if (report_.too_many()) break;
    }
    return sim_.cycle() - start;
  }

  // After the last descriptor: no further done pulse, idle, nothing requested.
  void idle_check(int cycles) {
    for (int i = 0; i < cycles; ++i) {
      sim_.step();
      report_.check(sim_.cycle(), "idle done_o", 0, dut_.done_o);
      report_.check(sim_.cycle(), "idle busy_o", 0, dut_.busy_o);
      report_.check(sim_.cycle(), "idle requests", 0, dut_.req_valid_o | dut_.spm_req_o | dut_.wr_valid_o);
    }
  }

  tb::Report& report() { return report_; }
  tb::Sim& sim() { return sim_; }
  capsgen::dram::DramModel& dram_model() { return offchip_.model(); }
  std::uint64_t beats() const { return beats_; }
  int descs() const { return desc_no_; }
  std::size_t max_in_flight() const { return max_in_flight_; }

 private:
  // One check of a whole word; a mismatch prints the first differing 64-bit chunk.
  void check_word(std::uint64_t cyc, const std::string& w, const Word& exp, const Word& act) {
    const auto [e, v] = chunk_diff(exp, act);
    report_.check(cyc, w, e, v);
  }

  void set_desc(const Desc& d) {
    dut_.desc_store_i = d.store;
    dut_.desc_dram_addr_i = d.dram;
    dut_.desc_spm_addr_i = d.spm;
    dut_.desc_count0_i = d.count[0];
    dut_.desc_count1_i = d.count[1];
    dut_.desc_count2_i = d.count[2];
    dut_.desc_dram_stride0_i = d.ds[0];
    dut_.desc_dram_stride1_i = d.ds[1];
    dut_.desc_dram_stride2_i = d.ds[2];
    dut_.desc_spm_stride0_i = d.ss[0];
    dut_.desc_spm_stride1_i = d.ss[1];
    dut_.desc_spm_stride2_i = d.ss[2];
    dut_.desc_burst_i = d.burst;
    dut_.desc_size_i = static_cast<std::uint8_t>(d.size < 0 ? info_.max_size : d.size);
    dut_.desc_widen_i = d.widen;
  }

  std::string where(int index, const char* what = nullptr) const {
    return "desc=" + std::to_string(desc_no_) + " index=" + std::to_string(index) + (what ? std::string(" ") + what : "");
  }

  void run_one(const Desc& d, const Stalls& st) {
    const int wb = info_.wb(), size = eff_size(d, info_), eb = 1 << size;
    const int widen_bytes = eff_widen(d, info_) ? info_.widen_bits / 8 : 0;
    std::vector<Element> el;
    std::vector<Burst> bursts;
    golden(d, info_, el, bursts);
    // Golden end state.
    // Load: the golden words of the addresses it writes (the low 2^spm_size bytes replaced, later
    // elements win); every other address must keep its word.
    const int sz = spm_size(d, info_), sb = 1 << sz;
    std::map<std::uint32_t, Word> spm_gold;
    if (!d.store) {
      for (const Element& e : el) {
        auto it = spm_gold.find(e.spm);
        Word w = it == spm_gold.end() ? spm_word(e.spm) : it->second;
        const Word v = dram_.element(e.dram, wb, eb, widen_bytes);
        for (int k = 0; k < sb; ++k) w[k] = v[k];
        spm_gold[e.spm] = w;
      }
    }
    std::set<std::uint32_t> spm_written;
    std::map<std::uint32_t, std::uint8_t> store_gold;
    if (d.store)
      for (const Element& e : el)
        for (int k = 0; k < eb; ++k) store_gold[e.dram + k] = spm_word(e.spm)[k];
    const std::uint32_t rd0 = dut_.beats_read_o, wr0 = dut_.beats_written_o;

    // Offer the descriptor until accepted.
    set_desc(d);
    dut_.desc_valid_i = 1;
    std::size_t burst_i = 0, spm_i = 0, beat_i = 0;
    std::deque<RdBurst> rd;
    std::deque<WrBurst> wr;
    bool rvalid_pending = false;
    Word rdata_pending;
    bool accepted = false;
    int dones = 0;
    const std::uint64_t deadline = sim_.cycle() + 200000 + 50ull * el.size();
    while (true) {
      if (sim_.cycle() > deadline) {
        report_.fail(sim_.cycle(), where(static_cast<int>(spm_i), "timeout"));
        break;
      }
      // done_o is a register output: seen at the start of the cycle. The next descriptor is offered
      // in this same cycle (back to back: desc_ready_o is high with done_o).
      if (dut_.done_o) {
        if (accepted) {
          ++dones;
          break;
        }
        if (sim_.cycle() != last_done_cycle_) report_.fail(sim_.cycle(), where(0, "done before acceptance"));
      }
      // --- tb inputs for this cycle (the DUT's outputs depend on its registers only) ---
      const bool desc_fire = dut_.desc_valid_i && dut_.desc_ready_o;
      bool rd_taken = false;
      dut_.req_ready_i = !rng_.chance(st.req);
      // Read data: keep an offered beat until taken.
      if (!dut_.rd_valid_i && !rd.empty() && rd.front().ready <= sim_.cycle() && !rng_.chance(st.rd)) {
        RdBurst& b = rd.front();
        // A narrow beat: the element in the low bytes (the burst's request size), garbage above.
        Word beat = dram_.word(b.addr + static_cast<std::uint32_t>(b.sent * b.eb), wb);
        for (int k = b.eb; k < wb; ++k) beat[k] = static_cast<std::uint8_t>(rng_.next());
        put_word(dut_.rd_data_i, beat);
        dut_.rd_valid_i = 1;
      }
      // Posted writes, but the memory stops taking write data while the DRAM model's backlog exceeds
      // latency_cycles + max_burst accelerator cycles (its write bandwidth is finite).
      dut_.wr_ready_i = !rng_.chance(st.wr) && offchip_.write_ready(static_cast<long long>(sim_.cycle()));
      dut_.spm_gnt_i = !rng_.chance(st.gnt);
      dut_.spm_rvalid_i = rvalid_pending;
      if (rvalid_pending) put_word(dut_.spm_rdata_i, rdata_pending);
      else put_word(dut_.spm_rdata_i, Word(wb, 0));
      rvalid_pending = false;
      dut_.eval();

      // --- handshakes of this cycle ---
      const std::uint64_t cyc = sim_.cycle();
      if (desc_fire) {
        if (accepted) report_.fail(cyc, where(0, "descriptor accepted twice"));
        accepted = true;
      }
      if (dut_.req_valid_o && dut_.req_ready_i) {
        const std::uint32_t a = dut_.req_addr_o;
        const int len = dut_.req_len_o;
        const bool w = dut_.req_write_o;
        const int req_size = dut_.req_size_o;
        const int req_eb = 1 << std::min(req_size, 6);
        if (burst_i >= bursts.size()) {
          report_.fail(cyc, where(static_cast<int>(burst_i), "extra burst request"));
        } else {
          report_.check(cyc, where(static_cast<int>(burst_i), "burst_addr"), bursts[burst_i].addr, a);
          report_.check(cyc, where(static_cast<int>(burst_i), "burst_len"), bursts[burst_i].len, len);
          report_.check(cyc, where(static_cast<int>(burst_i), "burst_write"), d.store, w);
          report_.check(cyc, where(static_cast<int>(burst_i), "req_size"), size, req_size);
        }
        // No more bursts in flight than the DMA's burst-length FIFO holds (dma.json outstanding).
        report_.check(cyc, where(static_cast<int>(burst_i), "in_flight"), 1,
                      static_cast<long long>(rd.size() + wr.size()) < info_.outstanding);
        max_in_flight_ = std::max<std::size_t>(max_in_flight_, rd.size() + wr.size() + 1);
        ++burst_i;
        if (len >= 1) {
          if (!w) {
            std::uint64_t ready = static_cast<std::uint64_t>(
                offchip_.read(static_cast<long long>(cyc), a, static_cast<std::uint32_t>(len * req_eb)));
            if (st.extra_latency) ready += static_cast<std::uint64_t>(rng_.uniform(0, st.extra_latency));
            if (!rd.empty()) ready = std::max(ready, rd.back().ready);
            rd.push_back({a, len, req_eb, 0, ready});
          } else {
            wr.push_back({a, len, req_eb, 0});
          }
        }
      }
      if (dut_.rd_valid_i && dut_.rd_ready_o) {
        RdBurst& b = rd.front();
        if (++b.sent == b.len) rd.pop_front();
        rd_taken = true;  // the next beat is decided next cycle
        ++beats_;
      }
      if (dut_.wr_valid_o && dut_.wr_ready_i) {
        const Word data = get_word(dut_.wr_data_o, wb);
        if (wr.empty()) {
          report_.fail(cyc, where(static_cast<int>(beat_i), "write beat without a request"));
        } else {
          WrBurst& b = wr.front();
          const std::uint32_t a = b.addr + static_cast<std::uint32_t>(b.got * b.eb);
          // The memory writes exactly the bytes the strobes mark (byte k of the beat at a + k).
          const std::uint64_t strb = dut_.wr_strb_o;
          for (int k = 0; k < wb; ++k)
            if ((strb >> k) & 1) dram_.set(a + k, data[k]);
          ++b.got;
          report_.check(cyc, where(static_cast<int>(beat_i), "wr_last"), b.got == b.len, dut_.wr_last_o);
          report_.check(cyc, where(static_cast<int>(beat_i), "wr_strb"), static_cast<long long>(strobes(eb)),
                        static_cast<long long>(strb));
          if (beat_i < el.size()) {
            report_.check(cyc, where(static_cast<int>(beat_i), "dram_addr"), el[beat_i].dram, a);
            const Word src = spm_word(el[beat_i].spm);
            check_word(cyc, where(static_cast<int>(beat_i), "wr_data"), Word(src.begin(), src.begin() + eb),
                       Word(data.begin(), data.begin() + eb));
          } else {
            report_.fail(cyc, where(static_cast<int>(beat_i), "extra write beat"));
          }
          if (b.got == b.len) {
            offchip_.write(static_cast<long long>(cyc), b.addr, static_cast<std::uint32_t>(b.len * b.eb));
            wr.pop_front();
          }
        }
        ++beat_i;
        ++beats_;
      }
      if (dut_.spm_req_o && dut_.spm_gnt_i) {
        const std::uint32_t a = dut_.spm_addr_o;
        if (spm_i >= el.size()) {
          report_.fail(cyc, where(static_cast<int>(spm_i), "extra SPM access"));
        } else {
          report_.check(cyc, where(static_cast<int>(spm_i), "spm_addr"), el[spm_i].spm, a);
          report_.check(cyc, where(static_cast<int>(spm_i), "spm_we"), !d.store, dut_.spm_we_o);
          report_.check(cyc, where(static_cast<int>(spm_i), "spm_size"), sz, dut_.spm_size_o);
          if (!d.store) {
            check_word(cyc, where(static_cast<int>(spm_i), "spm_wdata"), dram_.element(el[spm_i].dram, wb, eb, widen_bytes),
                       get_word(dut_.spm_wdata_o, wb));
          }
        }
        if (a < (std::size_t{1} << info_.spm_addr_bits)) {
          // The access's 2^spm_size_o bytes (a size above the word: the whole word).
          const int nb = std::min(wb, 1 << std::min(static_cast<int>(dut_.spm_size_o), 6));
          if (dut_.spm_we_o) {
            const Word w = get_word(dut_.spm_wdata_o, wb);
            for (int k = 0; k < nb; ++k) spm_[static_cast<std::size_t>(a) * wb + k] = w[k];
            spm_written.insert(a);
          } else {
            rvalid_pending = true;
            rdata_pending = spm_word(a);
            for (int k = nb; k < wb; ++k) rdata_pending[k] = static_cast<std::uint8_t>(rng_.next());
          }
        }
        ++spm_i;
      }
      sim_.step();
      if (desc_fire) dut_.desc_valid_i = 0;
      if (rd_taken) dut_.rd_valid_i = 0;
    }
    // End-of-descriptor checks (in the done_o cycle).
    last_done_cycle_ = sim_.cycle();
    report_.check(sim_.cycle(), where(-1, "done_pulses"), 1, dones);
    report_.check(sim_.cycle(), where(-1, "bursts"), static_cast<long long>(bursts.size()), static_cast<long long>(burst_i));
    report_.check(sim_.cycle(), where(-1, "spm_accesses"), static_cast<long long>(el.size()), static_cast<long long>(spm_i));
    report_.check(sim_.cycle(), where(-1, "busy_after_done"), 0, dut_.busy_o);
    report_.check(sim_.cycle(), where(-1, "beats_read"), d.store ? 0 : static_cast<long long>(el.size()),
                  static_cast<std::uint32_t>(dut_.beats_read_o - rd0));
    report_.check(sim_.cycle(), where(-1, "beats_written"), d.store ? static_cast<long long>(el.size()) : 0,
                  static_cast<std::uint32_t>(dut_.beats_written_o - wr0));
    if (!d.store) {
      for (const auto& [a, w] : spm_gold)
        if (spm_word(a) != w) check_word(sim_.cycle(), where(-1, ("spm_word=" + std::to_string(a)).c_str()), w, spm_word(a));
      for (std::uint32_t a : spm_written)
        if (!spm_gold.count(a)) report_.fail(sim_.cycle(), where(-1, ("stray_spm_write=" + std::to_string(a)).c_str()));
      report_.check(sim_.cycle(), where(-1, "spm_image"), 0, 0);
    } else {
      // The golden DRAM image: every byte the golden stores wrote so far, initial_byte() elsewhere.
      for (const auto& [a, v] : store_gold) dram_gold_[a] = v;
      for (const auto& [a, v] : dram_gold_)
        if (dram_.get(a) != v) report_.mismatch(sim_.cycle(), where(-1, ("dram_byte=" + std::to_string(a)).c_str()), v, dram_.get(a));
      for (const auto& [a, v] : dram_.written())
        if (!dram_gold_.count(a) && v != initial_byte(a))
          report_.mismatch(sim_.cycle(), where(-1, ("stray_dram_byte=" + std::to_string(a)).c_str()), initial_byte(a), v);
      report_.check(sim_.cycle(), where(-1, "dram_image"), 0, 0);
    }
    ++desc_no_;
  }

  tb::Args args_;
  DmaInfo info_;
  tb::Rng rng_;
  tb::Sim sim_;
  std::unique_ptr<Vdma> dut_p_;
  Vdma& dut_;
  tb::Report report_;
  capsgen::dram::OffchipPort offchip_;  // timing of the off-chip memory (gen/dram)
  Dram dram_;
  std::unordered_map<std::uint32_t, std::uint8_t> dram_gold_;
  Word spm_word(std::uint32_t a) const {
    const std::size_t wb = static_cast<std::size_t>(info_.wb());
    return Word(spm_.begin() + static_cast<std::ptrdiff_t>(a * wb), spm_.begin() + static_cast<std::ptrdiff_t>((a + 1) * wb));
  }
  std::vector<std::uint8_t> spm_;  // 2^spm_addr_bits words of wb bytes
  std::uint64_t beats_ = 0;
  std::uint64_t last_done_cycle_ = ~std::uint64_t{0};
  std::size_t max_in_flight_ = 0;
  int desc_no_ = 0;
};

}  // namespace

int dma_tb_main(int argc, char** argv) {
  const tb::Args args = tb::Args::parse(argc, argv, "");
  const tb::Summary kv(args.rtl_dir, "dma");
  DmaInfo info;
  info.data_bits = kv.num("data_bits");
  info.spm_addr_bits = kv.num("spm_addr_bits");
  info.dram_addr_bits = kv.num("dram_addr_bits");
  info.count_bits = kv.num("count_bits");
  info.len_bits = kv.num("len_bits");
  info.max_burst = kv.num("max_burst");
  info.outstanding = kv.num("outstanding");
  info.latency = kv.num("latency_cycles");
  info.size_bits = kv.num("size_bits");
  info.max_size = kv.num("max_size");
  info.widen_bits = kv.num("widen_bits");
  info.widen_size = kv.num("widen_size");
  if ((8 << info.widen_size) != info.widen_bits) throw std::runtime_error("dma.json: widen_size does not match widen_bits");
  // The SPM side is memsys's element space: the same address and size widths (memsys.json, where
  // memsys is generated), so the top level connects the two ports directly.
  {
    const tb::Summary ms(args.rtl_dir, "memsys");
    const bool supported = ms.flag("supported");
    const int ms_sa = supported ? ms.num("spm_addr_bits") : -1, ms_zw = supported ? ms.num("spm_size_bits") : -1,
              ms_dw = supported ? ms.num("spm_data_bits") : -1;
    if (supported && (ms_sa != info.spm_addr_bits || ms_zw != info.size_bits || ms_dw != info.data_bits)) {
      std::fprintf(stderr, "FAIL dma: SPM port widths differ from memsys's (address %d vs %d, size %d vs %d, data %d vs %d)\n",
                   info.spm_addr_bits, ms_sa, info.size_bits, ms_zw, info.data_bits, ms_dw);
      return 1;
    }
    if (supported) std::printf("dma: SPM port matches memsys (%d-bit element address, %d-bit size)\n", ms_sa, ms_zw);
  }
  if ((1 << info.max_size) != info.wb()) throw std::runtime_error("dma.json: max_size is not log2(word bytes)");
  info.clock_mhz = kv.real("clock_mhz");
  if (info.dram_addr_bits != 32 || info.spm_addr_bits > 31) throw std::runtime_error("dma.json: unsupported widths");
  const int wb = info.wb(), mb = info.max_burst;
  const std::uint32_t spm_words = 1u << info.spm_addr_bits;
  tb::Rng rng(args.seed * 7919 + 17);

  Bench bench(args, info);
  std::vector<Desc> list;
  std::vector<Stalls> stalls;
  auto add = [&](const Desc& d, const Stalls& s) {
    list.push_back(d);
    stalls.push_back(s);
  };
  const Stalls none{}, heavy{60, 60, 60, 60, 3 * info.latency};
  auto contiguous = [&](bool store, std::uint32_t dram, std::uint32_t spm, std::uint32_t n, std::uint32_t burst) {
    Desc d;
    d.store = store;
    d.dram = dram;
    d.spm = spm;
    d.count[0] = n;
    d.ds[0] = static_cast<std::uint32_t>(wb);
    d.ss[0] = 1;
    d.burst = burst;
    return d;
  };
  // ---- corner cases, each as load and store, with and without stalls ----
  for (int store = 0; store < 2; ++store)
    for (const Stalls& s : {none, heavy}) {
      add(contiguous(store, 0x1000, 3, 1, 0), s);                              // one element
      add(contiguous(store, 0x2000, 10, static_cast<std::uint32_t>(mb + 1), 0), s);  // crosses the limit by one
      add(contiguous(store, 0x3000, 20, static_cast<std::uint32_t>(2 * mb), 0), s);  // exactly two bursts
      add(contiguous(store, 0x4000, 40, 7, 1), s);                              // limit 1
      add(contiguous(store, 0x5000, 50, 13, 3), s);                             // limit 3
      add(contiguous(store, 0x5800, 60, 9, static_cast<std::uint32_t>((1 << info.len_bits) - 1)), s);  // limit > max
      Desc z = contiguous(store, 0x6000, 70, 5, 0);                             // zero DRAM and SPM strides
      z.ds[0] = 0;
      z.ss[0] = 0;
      z.count[1] = 3;
      add(z, s);
      Desc e = contiguous(store, 0x7000, 80, 4, 0);  // empty: count1 = 0
      e.count[1] = 0;
      add(e, s);
      Desc w = contiguous(store, 0x8000, spm_words - 2, 6, 0);  // SPM address wraps; negative SPM stride
      w.count[1] = 2;
      w.ss[1] = static_cast<std::uint32_t>(-17);
      w.ds[1] = static_cast<std::uint32_t>(8 * wb);
      add(w, s);
      Desc g = contiguous(store, 0x9000, 90, 4, 0);  // strided DRAM (1-beat bursts), 3 levels
      g.ds[0] = static_cast<std::uint32_t>(3 * wb);
      g.count[1] = 2;
      g.ds[1] = static_cast<std::uint32_t>(64 * wb);
      g.ss[1] = 4;
      g.count[2] = 2;
      g.ds[2] = static_cast<std::uint32_t>(-1024 * wb);
      g.ss[2] = 100;
      add(g, s);
      // Element-sized transfers (words of 2+ bytes).
      if (info.max_size > 0) {
        Desc b = contiguous(store, 0xA001, 100, static_cast<std::uint32_t>(mb + 3), 0);  // bytes, odd address, widen
        b.size = 0;
        b.ds[0] = 1;
        b.widen = true;  // a store ignores it
        b.count[1] = 2;
        b.ds[1] = 5;  // the second run overlaps the first (later bytes win)
        b.ss[1] = 200;
        add(b, s);
        Desc h = contiguous(store, 0xB002, 120, 6, 0);  // 2-byte elements, strided DRAM, widen ignored (size 1)
        h.size = 1;
        h.ds[0] = 6;
        h.widen = true;
        h.count[2] = 2;
        h.ds[2] = static_cast<std::uint32_t>(-64);
        h.ss[2] = 9;
        add(h, s);
        Desc t = contiguous(store, 0xC000, 140, 11, 3);  // the next-to-largest size, limit 3
        t.size = info.max_size - 1;
        t.ds[0] = 1u << t.size;
        add(t, s);
        Desc z1 = contiguous(store, 0xC800, 160, 4, 0);  // 1-byte elements, zero DRAM stride
        z1.size = 0;
        z1.ds[0] = 0;
        add(z1, s);
      }
      if ((1 << info.size_bits) - 1 > info.max_size) {  // size above max_size: a whole word
        Desc o = contiguous(store, 0xD000, 180, 5, 0);
        o.size = (1 << info.size_bits) - 1;
        o.widen = true;
        add(o, s);
      }
    }
  // ---- random descriptors ----
  const int n_random = std::max(10, static_cast<int>(std::lround(250 * args.scale)));
  for (int i = 0; i < n_random; ++i) {
    Desc d;
    d.store = rng.chance(50);
    // Sizes: a whole word in 40%, else uniform over 0..max_size; widen on half of the 1-byte loads.
    d.size = rng.chance(40) ? info.max_size : static_cast<int>(rng.uniform(0, info.max_size));
    d.widen = d.size == 0 && !d.store && rng.chance(50);
    const int eb = 1 << d.size;
    d.dram = static_cast<std::uint32_t>(rng.uniform(0, (1 << 20) - 1)) * static_cast<std::uint32_t>(eb);
    if (eb > 1 && rng.chance(10)) d.dram += static_cast<std::uint32_t>(rng.uniform(1, eb - 1));  // unaligned
    d.spm = static_cast<std::uint32_t>(rng.uniform(0, spm_words - 1));
    d.count[0] = static_cast<std::uint32_t>(rng.chance(15) ? 1 : rng.uniform(1, 3 * mb + 2));
    d.count[1] = static_cast<std::uint32_t>(rng.chance(30) ? 1 : rng.uniform(1, 5));
    d.count[2] = static_cast<std::uint32_t>(rng.chance(40) ? 1 : rng.uniform(1, 3));
    const int pick = static_cast<int>(rng.uniform(0, 9));
    d.ds[0] = static_cast<std::uint32_t>(pick < 7 ? eb : pick == 7 ? 0 : pick == 8 ? 2 * eb : -eb);
    d.ds[1] = static_cast<std::uint32_t>(rng.chance(15) ? 0 : static_cast<std::int64_t>(d.count[0] + rng.uniform(0, 4)) * eb *
                                                                   (rng.chance(20) ? -1 : 1));
    d.ds[2] = static_cast<std::uint32_t>(rng.chance(15) ? 0 : rng.uniform(-4096, 4096) * eb);
    d.ss[0] = static_cast<std::uint32_t>(rng.chance(70) ? 1 : rng.uniform(-2, 3));
    d.ss[1] = static_cast<std::uint32_t>(rng.chance(60) ? d.count[0] * d.ss[0] : rng.uniform(-64, 64));
    d.ss[2] = static_cast<std::uint32_t>(rng.uniform(-512, 512));
    d.burst = static_cast<std::uint32_t>(rng.uniform(0, (1 << info.len_bits) - 1));
    Stalls s;
    const int level = static_cast<int>(rng.uniform(0, 3));
    const int p[4] = {0, 10, 40, 75};
    s.req = rng.chance(50) ? p[level] : 0;
    s.rd = rng.chance(50) ? p[level] : 0;
    s.wr = rng.chance(50) ? p[level] : 0;
    s.gnt = rng.chance(50) ? p[level] : 0;
    s.extra_latency = level >= 2 ? 2 * info.latency : 0;
    add(d, s);
  }
  const std::uint64_t func_cycles = bench.run(list, stalls);
  const std::uint64_t func_beats = bench.beats();
  const capsgen::dram::DramStats func_stats = bench.dram_model().stats();

  // ---- throughput: long contiguous load and store, no stalls, DRAM-model timing ----
  const std::uint32_t n_long = std::min<std::uint32_t>(spm_words, 2048);
  const std::uint64_t load_cycles = bench.run({contiguous(false, 0x100000, 0, n_long, 0)}, {none});
  const std::uint64_t store_cycles = bench.run({contiguous(true, 0x200000, 0, n_long, 0)}, {none});
  const capsgen::dram::DramStats tp = capsgen::dram::stats_delta(bench.dram_model().stats(), func_stats);

  bench.idle_check(8);
  bench.dram_model().finish();
  bench.sim().finish();
  const auto& ds = bench.dram_model().stats();
  const auto en = bench.dram_model().energy();
  const double bytes = static_cast<double>(ds.bytes());
  std::printf("dma: %d descriptors, %llu beats of %d bits in %llu cycles (functional run with stalls: %.2f beats/cycle)\n",
              bench.descs(), static_cast<unsigned long long>(func_beats), info.data_bits,
              static_cast<unsigned long long>(func_cycles), func_cycles ? double(func_beats) / double(func_cycles) : 0.0);
  std::printf("dma: throughput without stalls: load %u words in %llu cycles (%.3f beats/cycle), store %u words in %llu cycles "
              "(%.3f beats/cycle); load %.1f MB/s, store %.1f MB/s at %.0f MHz (port peak %.1f MB/s)\n",
              n_long, static_cast<unsigned long long>(load_cycles), double(n_long) / double(load_cycles), n_long,
              static_cast<unsigned long long>(store_cycles), double(n_long) / double(store_cycles),
              double(n_long) * wb / (double(load_cycles) / info.clock_mhz),
              double(n_long) * wb / (double(store_cycles) / info.clock_mhz), info.clock_mhz, wb * info.clock_mhz);
  const double tp_ns = static_cast<double>(tp.cycles()) * bench.dram_model().spec().timing.tck_ns;
  std::printf("dma: DRAM model, throughput runs only: %llu bytes in %.0f ns = %.3f GB/s (%.1f%% of the device peak), "
              "row hits %llu, misses %llu, conflicts %llu\n",
              static_cast<unsigned long long>(tp.bytes()), tp_ns, tp_ns > 0 ? double(tp.bytes()) / tp_ns : 0.0,
              tp_ns > 0 ? 100.0 * double(tp.bytes()) / tp_ns / bench.dram_model().spec().peak_gbps() : 0.0,
              static_cast<unsigned long long>(tp.hits), static_cast<unsigned long long>(tp.misses),
              static_cast<unsigned long long>(tp.conflicts));
  std::printf("dma: at most %zu bursts in flight (limit %d)\n", bench.max_in_flight(), info.outstanding);
  std::printf("dma: DRAM model (%s): %llu reads, %llu writes (column accesses), row hits %llu, misses %llu, conflicts %llu "
              "(hit rate %.1f%%)\n",
              bench.dram_model().spec().name.c_str(), static_cast<unsigned long long>(ds.reads),
              static_cast<unsigned long long>(ds.writes), static_cast<unsigned long long>(ds.hits),
              static_cast<unsigned long long>(ds.misses), static_cast<unsigned long long>(ds.conflicts),
              ds.requests() ? 100.0 * double(ds.hits) / double(ds.requests()) : 0.0);
  std::printf("dma: DRAM energy %.3f uJ (act %.3f, pre %.3f, rd %.3f, wr %.3f, ref %.3f, standby %.3f) = %.1f pJ/byte; "
              "achieved DRAM bandwidth %.4f GB/s of %.1f GB/s peak (%llu bytes)\n",
              en.total() * 1e-6, en.act * 1e-6, en.pre * 1e-6, en.rd * 1e-6, en.wr * 1e-6, en.ref * 1e-6,
              (en.act_standby + en.pre_standby) * 1e-6, bytes > 0 ? en.total() / bytes : 0.0,
              bench.dram_model().throughput_gbps(), bench.dram_model().spec().peak_gbps(),
              static_cast<unsigned long long>(ds.bytes()));
  char extra[160];
  std::snprintf(extra, sizeof extra, "%d descriptors, %llu beats, load %.3f / store %.3f beats/cycle, DRAM row hits %llu/%llu",
                bench.descs(), static_cast<unsigned long long>(bench.beats()), double(n_long) / double(load_cycles),
                double(n_long) / double(store_cycles), static_cast<unsigned long long>(ds.hits),
                static_cast<unsigned long long>(ds.requests()));
  return bench.report().summary(extra);
}
