// Block test of the memory system (capsgen_memsys, docs/rtl-memsys.md) against a flat C++
// reference of the memories (SEP: data, weight, acc; HY: also the shared memory with three ports per
// bank), one value per element lane, with its own copy of the address map and of the port rules
// (memsys.json gives the geometry; the element -> word/lane/bank/row/sector mapping is recomputed
// here, not taken from the emitter). HY: drd reaches data or shared (shared port p0), wrd weight or
// shared (p1), wr data, weight or shared (p1), the DMA every memory (shared: p2); the writer waits on
// the read of its memory's port (shared: wrd only), the DMA on any engine access of its bank.
//   1. fill: every word of every memory written through the DMA port (whole-word accesses);
//   2. random phases (random per-phase probabilities): engine drd (scalar, vector), wrd, brd, wr
//      (scalar, masked vector; into the data memory, or the weight memory as Activate/Fill results)
//      to random in-range addresses (half of them in a small hot window so reads meet recent writes),
//      DMA reads and writes at element addresses with every size legal for the memory (1..word bytes
//      of whole lanes: 4-byte lanes into acc as the DMA's widened loads) at every legal lane, write
//      data with garbage above the access's bytes; with power gating,
//      random sleep/wake of one sector at a time, engine traffic kept away from unusable sectors and
//      DMA requests steered into them. Every cycle: wr_ready_o and spm_gnt_o against the rule
//      computed here from the addresses, sleep_ack_*_o against the handshake rule, err_o low; every
//      read datum in the next cycle, bit-exact (a DMA read: the access's lanes in the low bits, zeros
//      above); writes applied exactly in wr_en & wr_ready and req & gnt cycles, a DMA write to its
//      lanes only (later reads see them, and that the neighbouring lanes kept their values);
//   3. directed same-word cases: drd and wr of the same data element, wrd and wr of the same weight
//      element in one cycle (the write waits, the read returns the old value, the write lands in the
//      next cycle), DMA and engine on one bank; HY: in the shared memory a drd (p0) and a wr (p1) of
//      one element in one cycle (the write happens, the read returns the old value, later reads the
//      new one), wrd and wr (the write waits), drd + wrd + wr, DMA against each engine port;
//   4. every counter against the counts made here;
//   5. negative: one out-of-range access of each kind (after a reset that clears the sticky flags):
//      err_o high in the next cycle and the access dropped (a DMA write crossing a word, of 1 byte
//      into acc or wider than the memory's word leaves its element alone; a dropped DMA read returns
//      0); with power gating, an engine read of a sleeping sector (the scratchpad's flag through err_o).
//      HY adds accesses straddling memory boundaries (drd vectors data|weight, weight|acc, acc|shared,
//      wrd rows acc|shared and past shared, wr records past shared), brd and drd into memories their
//      port does not reach, and a read of a sleeping shared sector.
// SMP (memsys.json: organization smp, the view acc of shared; docs/memory-system.md 2.2): one scratchpad
// (the shared memory, three ports per bank) seen as two ranges of the element space: acc = its 32-bit
// lanes, shared = its bytes. The reference keeps one storage (the bytes; acc element r is bytes 4r ..
// 4r + 3, byte j at bits [8j +: 8] of the lane), so a write through either range is seen through the
// other. drd (p0), wrd and wr (p1) reach the bytes only, brd (p2) the acc lanes only, the DMA (p2) both;
// the writer waits on a wrd of its bank (p1), never on drd (p0) or brd (p2); the DMA waits on any
// engine access of its bank (brd included, for either range) and on a sleeping sector; counters per
// range, sectors of the one scratchpad over all three ports; one sleep handshake (shared).
//   1. fill: every word once, through a random range (whole words of acc lanes or of bytes);
//   2. random phases as above, drd/wrd/wr always into the bytes, brd into the lanes, the DMA into both
//      ranges (every legal size), the lanes' hot window on the bytes' one so the views meet; the
//      sleeping sector is the scratchpad's, DMA requests of both ranges steered into it;
//   3. the shared-memory directed cases of HY, then SMP ones: DMA lane writes read back through drd/wrd
//      and DMA byte reads, wr and DMA byte writes read back through brd and DMA lane reads, brd beside a
//      DMA access of its bank (waits) and beside a wr of its word (the write happens), DMA lane writes
//      beside drd/wrd/wr of the word (wait), drd + wrd + brd of one word;
//   4. counters: acc (brd reads, DMA), shared (drd + wrd reads, wr, DMA), sectors (all three ports);
//   5. negative: drd/wrd/wr into the acc range, brd into the bytes, vectors, rows and records crossing
//      acc|shared or the end, the DMA kinds above for both ranges, brd and drd of a sleeping sector.
// Coverage (SMP): the run fails unless the random phases had brd reads, DMA lane reads and writes, DMA
// waits of each range caused by brd and by drd/wrd/wr, brd beside a write of its word and beside
// drd/wrd on a bank, reads through each range of bytes last written through the other, (power gating)
// DMA requests of both ranges to the sleeping sector; besides the shared-memory coverage of HY.
// HY with 32-bit shared words (memsys.json: a fifth memory lanes, the view lanes of shared): the shared
// memory's 32-bit lanes are also a range of their own after its bytes, exactly as SMP's acc view (the
// same reference storage and aliasing, mems = {data, weight, acc, shared, lanes}). brd reaches the acc
// memory or the lanes, whichever holds the whole row (lanes: port p2 of the shared scratchpad), the
// DMA every range (shared bytes and lanes: p2); the DMA waits on any engine access of its bank of the
// shared scratchpad (brd of the lanes included, for either range), the writer only on a wrd of its bank.
// The random phases send a good share of brd to the lanes (their hot window on the bytes' one), the
// fill writes each shared word through a random range, the SMP directed cases run on the lanes (then
// brd of acc or of the lanes beside a DMA access of the same bank number of the other scratchpad:
// granted), negative kinds add brd rows crossing acc|shared, shared|lanes or the end, the byte ports
// into the lanes, 1- and 2-byte DMA accesses into them, brd of a sleeping shared sector through them.
// Counters: the lanes' brd reads and DMA accesses (no engine writes, sectors or sleep handshake of
// their own). Coverage: the SMP requirements for the lanes range (brd into the lanes, DMA lane reads
// and writes, DMA waits of both ranges caused by brd and by drd/wrd/wr, cross-view reads both ways),
// and brd reads of the acc memory.
// On a mismatch: MISMATCH block=memsys cycle=<c> port=<p> addr=<a> expected=<v> actual=<v>.
// Without memsys (a preset memsys does not support: memsys.json says why) it prints SKIP.
#include <cstdio>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/bits.hpp"
#include "common/rng.hpp"
#include "common/sim.hpp"
#ifdef CAPSGEN_TB_MEMSYS
#include "Vmemsys.h"
#endif

namespace {

struct Mem {
  std::string name;
  long long ebase = 0, elems = 0, words = 0;
  int banks = 0, sectors = 0, width = 0, lane_bits = 0, lanes = 0;
  long long wps = 0;
};

struct Info {
  bool supported = false;
  std::string reason;
  int aw = 0, sa = 0, dw = 0, size_bits = 0, max_size = 0, rows = 0, cols = 0, data = 0, weight = 0, psum = 0, ob = 0, pg = 0, wake = 0;
  std::vector<Mem> mems;
  std::string organization;                                // "sep", "hy", "smp"
  std::vector<std::pair<std::string, std::string>> views;  // (range, scratchpad): SMP's acc or HY's lanes of shared
};

Info load_info(const std::string& dir) {
  Info in;
  const tb::Summary s(dir, "memsys");
  in.supported = s.flag("supported");
  if (!in.supported) {
    in.reason = s.str("reason");
    return in;
  }
  in.aw = s.num("addr_bits");
  in.sa = s.num("spm_addr_bits");
  in.dw = s.num("spm_data_bits");
  in.size_bits = s.num("spm_size_bits");
  in.max_size = s.num("spm_max_size");
  in.rows = s.num("rows");
  in.cols = s.num("cols");
  in.data = s.num("data_bits");
  in.weight = s.num("weight_bits");
  in.psum = s.num("psum_bits");
  in.ob = s.num("out_bits");
  in.pg = s.flag("power_gating");
  in.wake = s.num("wakeup_cycles");
  in.organization = s.str("organization");
  for (const tb::Summary& v : s.list("views")) in.views.push_back({v.str("range"), v.str("scratchpad")});
  for (const tb::Summary& e : s.list("memories")) {
    Mem m;
    m.name = e.str("name");
    m.ebase = e.num64("elem_base");
    m.elems = e.num64("elements");
    m.words = e.num64("words");
    m.banks = e.num("banks");
    m.sectors = e.num("sectors");
    m.wps = e.num64("words_per_sector");
    m.width = e.num("width_bits");
    m.lane_bits = e.num("lane_bits");
    m.lanes = m.width / m.lane_bits;
    in.mems.push_back(m);
  }
  return in;
}

#ifdef CAPSGEN_TB_MEMSYS

enum { kData = 0, kWeight = 1, kAcc = 2, kShared = 3 };  // SEP and HY (kShared: HY only); SMP: iacc_, ish_
constexpr int kMaxMems = 5;  // HY with its lanes range: data, weight, acc, shared, lanes

struct Loc {
  long long word, lane, bank, row, sector, offset;
};

class MemsysBench {
 public:
  MemsysBench(const tb::Args& args, const Info& info)
      : args_(args), in_(info), sim_(args), rng_(args.seed * 7919 + 5), report_("memsys", args.max_errors) {
    d_ = std::make_unique<Vmemsys>(sim_.context(), "memsys");
    sim_.add(*d_);
    sim_.open_trace();
    if (in_.organization == "smp") {
      // SMP: two ranges over one scratchpad, the acc lanes (a view) and the bytes.
      smp_ = true;
      if (nm() != 2 || mem(0).name != "acc" || mem(1).name != "shared")
        throw std::runtime_error("memsys.json: SMP expects the ranges acc, shared");
      if (in_.views.size() != 1 || in_.views[0].first != "acc" || in_.views[0].second != "shared")
        throw std::runtime_error("memsys.json: SMP expects the view acc of shared");
      iacc_ = ilv_ = 0, ish_ = 1;
      check_view();
      if (mem(iacc_).ebase != 0 || mem(ish_).ebase != mem(iacc_).elems)
        throw std::runtime_error("memsys.json: SMP expects the acc view first, then the bytes");
      phys_ = {ish_, ish_};
    } else {
      const char* const names[] = {"data", "weight", "acc", "shared", "lanes"};
      if (nm() < 3 || nm() > kMaxMems) throw std::runtime_error("memsys.json: expected data, weight, acc [, shared [, lanes]]");
      for (int m = 0; m < nm(); ++m)
        if (mem(m).name != names[m]) throw std::runtime_error("memsys.json: memory " + std::to_string(m) + " is not " + names[m]);
      hy_ = nm() >= 4;
      ish_ = hy_ ? kShared : -1;
      for (int m = 0; m < nm(); ++m) phys_.push_back(m);
      if (nm() == kMaxMems) {
        // HY with 32-bit shared words: the lanes range, a view of the shared memory's words after its bytes.
        if (in_.organization != "hy" || in_.views.size() != 1 || in_.views[0].first != "lanes" || in_.views[0].second != "shared")
          throw std::runtime_error("memsys.json: a lanes range expects organization hy and the view lanes of shared");
        ilv_ = kMaxMems - 1;
        check_view();
        if (mem(ilv_).ebase != mem(ish_).ebase + mem(ish_).elems)
          throw std::runtime_error("memsys.json: the lanes range does not follow the shared bytes");
        phys_[static_cast<std::size_t>(ilv_)] = ish_;
      } else if (!in_.views.empty()) {
        throw std::runtime_error("memsys.json: a view other than SMP's acc or HY's lanes");
      }
    }
    for (int m = 0; m < nm(); ++m) {
      const Mem& M = mem(m);
      // A view keeps no values of its own: its lanes are the scratchpad's bytes (ref_get / ref_set).
      ref_.emplace_back(static_cast<std::size_t>(phys_[static_cast<std::size_t>(m)] == m ? M.elems : 0), 0u);
      last_req_.emplace_back(static_cast<std::size_t>(M.sectors), -1000000);
      req_.emplace_back(static_cast<std::size_t>(M.sectors), 0);
      sec_cnt_.emplace_back(static_cast<std::size_t>(M.sectors), 0);
    }
    if (ilv_ >= 0) view_of_.assign(static_cast<std::size_t>(mem(ish_).elems), 0);
    dut([&](auto& d) {
      if constexpr (requires { d.sleep_req_data_i; }) {
        if (!in_.pg) throw std::runtime_error("sleep ports without power gating");
      } else if constexpr (requires { d.sleep_req_shared_i; }) {
        if (!in_.pg) throw std::runtime_error("sleep ports without power gating");
        if (!smp_) throw std::runtime_error("shared sleep ports without data sleep ports, but not SMP");
      } else if (in_.pg) {
        throw std::runtime_error("power gating without sleep ports");
      }
      if constexpr (requires { d.cnt_eng_rd_shared_o; }) {
        if (ish_ < 0) throw std::runtime_error("shared-memory ports but memsys.json lists no shared memory");
      } else if (ish_ >= 0) {
        throw std::runtime_error("memsys.json lists a shared memory but the module has no shared-memory ports");
      }
      // SMP: no data or weight memory, and the acc view has no sectors, sleep handshake or writer counter.
      if constexpr (requires { d.cnt_eng_rd_data_o; }) {
        if (smp_) throw std::runtime_error("SMP, but the module has data-memory ports");
      } else if (!smp_) {
        throw std::runtime_error("the module has no data-memory ports, but memsys.json is not SMP");
      }
      if constexpr (requires { d.cnt_sector_acc_o; }) {
        if (smp_) throw std::runtime_error("SMP, but the module has acc sector counters");
      }
      if constexpr (requires { d.sleep_req_acc_i; }) {
        if (smp_) throw std::runtime_error("SMP, but the module has an acc sleep handshake");
      }
      // HY's lanes: brd's and the DMA's counters only; its sectors and sleep handshake are the shared memory's.
      if constexpr (requires { d.cnt_eng_rd_lanes_o; }) {
        if (ilv_ < 0 || smp_) throw std::runtime_error("the module has lanes ports but memsys.json lists no lanes range");
      } else if (ilv_ >= 0 && !smp_) {
        throw std::runtime_error("memsys.json lists a lanes range but the module has no lanes ports");
      }
      if constexpr (requires { d.cnt_eng_wr_lanes_o; } || requires { d.cnt_sector_lanes_o; } || requires { d.sleep_req_lanes_i; })
        throw std::runtime_error("the lanes range has engine-write or sector counters or a sleep handshake of its own");
    });
    sim_.set_watchdog(~0ull);
    sim_.reset();
  }

  int run() {
    idle_inputs();
    fill();
    const long long cycles = static_cast<long long>(20000 * args_.scale);
    const int phases = 8;
    for (int ph = 0; ph < phases && errors_ <= args_.max_errors; ++ph) {
      pick_phase(ph);
      for (long long i = 0; i < cycles / phases && errors_ <= args_.max_errors; ++i) random_cycle();
    }
    const ViewStats random_vs = vs_;  // a lane view: what the random phases did (before the directed cases)
    // Let a sleeping sector wake before the directed part.
    for (auto& r : req_) std::fill(r.begin(), r.end(), 0);
    for (int i = 0; i < in_.wake + 3; ++i) idle_cycle();
    if (!smp_) same_word();  // SMP has no data or weight memory
    if (ish_ >= 0) same_word_shared();
    if (ilv_ >= 0) same_word_view();
    idle_cycle();
    idle_cycle();
    check_counters();
    if (d_->err_o) fail("err_o", 0, 0, 1);
    negative();
    sim_.finish();
    if (eng_reads_checked_ == 0 || wr_waits_ == 0 || wr_elems_ == 0 || dma_reads_checked_ == 0 || dma_waits_ == 0)
      report_.fail(t_, "stimulus missed engine reads, writer waits, writes, DMA reads or DMA waits");
    if (!smp_ && (wr_weight_elems_ == 0 || wr_weight_waits_ == 0))
      report_.fail(t_, "stimulus missed result writes into the weight memory or their waits");
    std::string sizes;
    for (int m = 0; m < nm(); ++m)
      for (int z = 0; z <= in_.max_size; ++z) {
        if (dma_lanes(mem(m), z) == 0) continue;
        if (dma_size_cnt_[m][z] == 0) report_.fail(t_, "stimulus missed DMA accesses of size " + std::to_string(z) + " to " + mem(m).name);
        sizes += (sizes.empty() ? "" : ", ") + mem(m).name + ":" + std::to_string(1 << z) + "B " + std::to_string(dma_size_cnt_[m][z]);
      }
    if (in_.pg && sleep_blocked_ == 0) report_.fail(t_, "stimulus missed DMA requests to sleeping sectors");
    if (same_word_ == 0) report_.fail(t_, "no same-word read/write cycles");
    std::string shared;
    if (ish_ >= 0) {
      // Every kind of shared-memory traffic must have happened.
      const std::pair<const char*, long long> kinds[] = {
          {"drd scalar reads of shared", sh_.drd_scalar},
          {"drd vector reads of shared", sh_.drd_vec},
          {"wrd rows of shared", sh_.wrd},
          {"wr scalar writes into shared", sh_.wr_scalar},
          {"wr records into shared", sh_.wr_vec},
          {"writer waits on shared (wrd on its bank)", sh_.wr_waits},
          {"drd and wrd into shared in one cycle", sh_.drd_wrd},
          {"drd (p0) and a write (p1) on one shared bank in one cycle", sh_.p0_p1_bank},
          {"drd (p0) and a write (p1) of one shared word in one cycle", sh_.p0_p1_word},
          {"DMA reads of shared", cnt_dma_rd_[ish_]},
          {"DMA writes of shared", cnt_dma_wr_[ish_]},
          {"DMA waits on shared engine accesses", sh_.dma_busy},
          {"directed shared same-word cases", sh_.same_word},
          {"shared negative kinds", sh_.neg},
      };
      for (const auto& [what, n] : kinds)
        if (n == 0) report_.fail(t_, std::string("stimulus missed ") + what);
      if (in_.pg && sh_.dma_sleep == 0) report_.fail(t_, "stimulus missed DMA requests to sleeping shared sectors");
      char buf[1024];
      std::snprintf(buf, sizeof buf,
                    "; shared memory: %lld drd reads (%lld vector), %lld wrd rows, %lld cycles with drd and wrd into "
                    "shared, %lld element writes (%lld records), writer waited %lld of %lld write cycles into shared "
                    "(%.1f%%), %lld cycles with drd p0 and a write p1 on one bank (%lld on one word), %lld DMA reads / "
                    "%lld writes, DMA waited %lld of %lld request cycles to shared (%.1f%%; %lld on engine accesses, "
                    "%lld on sleeping sectors), %lld directed same-word cases, %lld negative kinds",
                    sh_.drd_scalar + sh_.drd_vec, sh_.drd_vec, sh_.wrd, sh_.drd_wrd, sh_.wr_elems, sh_.wr_vec,
                    sh_.wr_waits, sh_.wr_cycles, sh_.wr_cycles ? 100.0 * double(sh_.wr_waits) / double(sh_.wr_cycles) : 0.0,
                    sh_.p0_p1_bank, sh_.p0_p1_word, cnt_dma_rd_[ish_], cnt_dma_wr_[ish_], cnt_dma_wait_[ish_],
                    sh_.dma_req, sh_.dma_req ? 100.0 * double(cnt_dma_wait_[ish_]) / double(sh_.dma_req) : 0.0,
                    sh_.dma_busy, sh_.dma_sleep, sh_.same_word, sh_.neg);
      shared = buf;
    }
    if (ilv_ >= 0) {
      // SMP, HY with lanes: the lane view and the bytes are one scratchpad; every kind of traffic between
      // the views and on port p2 must have happened (in the random phases, not only in the directed cases).
      const ViewStats& r = random_vs;
      const int A = ilv_, S = ish_;
      const std::string L = mem(A).name, tag = smp_ ? "SMP" : "lanes";
      const std::pair<std::string, long long> kinds[] = {
          {"brd reads of the " + L + " range", r.brd},
          {"DMA reads of the " + L + " range", r.dma_rd[A]},
          {"DMA writes of the " + L + " range", r.dma_wr[A]},
          {"DMA waits on the " + L + " range caused by brd (p2)", r.dma_wait_brd[A]},
          {"DMA waits on the shared range caused by brd (p2)", r.dma_wait_brd[S]},
          {"DMA waits on the " + L + " range caused by drd/wrd/wr (p0/p1)", r.dma_wait_p01[A]},
          {"DMA waits on the shared range caused by drd/wrd/wr (p0/p1)", r.dma_wait_p01[S]},
          {"brd (p2) beside a write (p1) of one word in one cycle", r.brd_wr_word},
          {"brd (p2) beside drd/wrd (p0/p1) on one bank in one cycle", r.brd_rd_bank},
          {"lane reads (brd, DMA) of bytes written through the byte range (wr, DMA)", r.xv_lane},
          {"byte reads (drd, wrd, DMA) of bytes written through the " + L + " range (DMA)", r.xv_byte},
          {"brd reads of the acc memory", smp_ ? 1 : r.brd_acc},  // HY: brd still reaches acc
          {"directed " + tag + " cases", vs_.same_word},
          {"directed " + tag + " cross-view cases", vs_.xv_directed},
          {tag + " negative kinds", vs_.neg},
      };
      for (const auto& [what, n] : kinds)
        if (n == 0) report_.fail(t_, "stimulus missed " + what);
      if (in_.pg && (r.dma_sleep[A] == 0 || r.dma_sleep[S] == 0))
        report_.fail(t_, "stimulus missed DMA requests of both ranges to sleeping sectors");
      // SMP prints what it always printed; HY adds its brd reads of acc.
      char brd[64] = "";
      if (!smp_) std::snprintf(brd, sizeof brd, " of lanes (%lld of acc)", r.brd_acc);
      const char* of = smp_ ? "acc lanes" : "the lanes range";
      char buf[1024];
      std::snprintf(buf, sizeof buf,
                    "; %s, random phases: %lld brd reads%s, %lld DMA reads / %lld writes of %s, DMA waited "
                    "%lld of %lld %s request cycles (on brd %lld, on drd/wrd/wr %lld, sleeping %lld) and on "
                    "shared on brd %lld, on drd/wrd/wr %lld (sleeping %lld), %lld cycles with brd and a write of "
                    "one word, %lld with brd and drd/wrd on one bank, cross-view reads: %lld lane reads of "
                    "byte-written bytes, %lld byte reads of lane-written bytes; all: %lld DMA reads / %lld writes of "
                    "%s (incl. the fill), %lld directed %s cases (%lld cross-view), %lld %s negative kinds",
                    smp_ ? "SMP" : "HY lanes", r.brd, brd, r.dma_rd[A], r.dma_wr[A], of, r.dma_wait[A], r.dma_req[A],
                    L.c_str(), r.dma_wait_brd[A], r.dma_wait_p01[A], r.dma_sleep[A], r.dma_wait_brd[S],
                    r.dma_wait_p01[S], r.dma_sleep[S], r.brd_wr_word, r.brd_rd_bank, r.xv_lane, r.xv_byte,
                    cnt_dma_rd_[A], cnt_dma_wr_[A], of, vs_.same_word, tag.c_str(), vs_.xv_directed, vs_.neg, tag.c_str());
      shared += buf;
    }
    const double wait_frac = wr_en_cycles_ ? double(wr_waits_) / double(wr_en_cycles_) : 0.0;
    const double dma_frac = dma_req_cycles_ ? double(dma_waits_) / double(dma_req_cycles_) : 0.0;
    char extra[4096];
    std::snprintf(extra, sizeof extra,
                  "%llu cycles; %lld engine reads checked (%lld vector), %lld element writes (%lld vector records; "
                  "%lld elements into weight, %lld weight-write waits), %lld DMA reads checked, %lld DMA writes; "
                  "writer waited %lld of %lld write cycles (%.1f%%); DMA waited %lld of %lld request cycles (%.1f%%), "
                  "%lld on sleeping sectors; %lld same-word cycles; %d negative kinds flagged; DMA accesses by size: %s%s",
                  static_cast<unsigned long long>(t_), eng_reads_checked_, vec_reads_, wr_elems_, vec_writes_,
                  wr_weight_elems_, wr_weight_waits_, dma_reads_checked_, dma_writes_, wr_waits_, wr_en_cycles_,
                  100.0 * wait_frac, dma_waits_, dma_req_cycles_, 100.0 * dma_frac, sleep_blocked_, same_word_,
                  neg_kinds_, sizes.c_str(), shared.c_str());
    const long long errs = errors_ + report_.errors();
    std::printf("%s memsys: %lld checks, %lld errors, %s\n", errs ? "FAIL" : "PASS", checks_, errs, extra);
    return errs ? 1 : 0;
  }

 private:
  // ---- address map (independent of the emitter) ----
  const Mem& mem(int m) const { return in_.mems[static_cast<std::size_t>(m)]; }
  int nm() const { return static_cast<int>(in_.mems.size()); }
  // Runs f on the model: a generic lambda, so `if constexpr (requires { d.port; })` can test for ports
  // that only some organizations or presets have (shared memory, sleep handshakes).
  template <class F>
  void dut(F&& f) {
    f(*d_);
  }
  Loc loc_word(int m, long long w) const {
    const Mem& M = mem(m);
    Loc l{};
    l.word = w;
    l.bank = w % M.banks;
    l.row = w / M.banks;
    l.sector = l.row / M.wps;
    l.offset = l.row % M.wps;
    return l;
  }
  Loc loc_elem(int m, long long rel) const {
    Loc l = loc_word(m, rel / mem(m).lanes);
    l.lane = rel % mem(m).lanes;
    return l;
  }
  bool in_mem(int m, long long a) const { return a >= mem(m).ebase && a < mem(m).ebase + mem(m).elems; }
  // Lanes of a DMA access of 2^size bytes into memory M; 0: not whole lanes, or wider than a word.
  static int dma_lanes(const Mem& M, int size) {
    const long long bytes = 1LL << size, lane_bytes = M.lane_bits / 8;
    if (bytes < lane_bytes || bytes > M.width / 8) return 0;
    return static_cast<int>(bytes / lane_bytes);
  }
  static int log2i(long long v) {
    int k = 0;
    while ((1LL << k) < v) ++k;
    return k;
  }
  int word_size(int m) const { return log2i(mem(m).width / 8); }
  int lane_size(int m) const { return log2i(mem(m).lane_bits / 8); }
  // The scratchpad holding memory m's words (m itself; a lane view: the shared memory).
  int phys(int m) const { return phys_[static_cast<std::size_t>(m)]; }
  // The lane view (SMP's acc, HY's lanes) names the shared scratchpad's words: same words, banks, sectors
  // and width; 32-bit lanes over bytes.
  void check_view() const {
    const Mem& A = mem(ilv_);
    const Mem& S = mem(ish_);
    if (A.words != S.words || A.banks != S.banks || A.sectors != S.sectors || A.wps != S.wps || A.width != S.width ||
        A.lane_bits != 32 || S.lane_bits != 8 || A.elems * 4 != S.elems)
      throw std::runtime_error("memsys.json: the " + A.name + " view does not match the shared memory's words");
  }
  // A lane of the reference (rel: element relative to the memory). A lane view has no values of its
  // own: its lane rel is the scratchpad's bytes k*rel .. k*rel + k - 1 (k = 4 byte lanes per 32-bit lane),
  // byte j at bits [8j +: 8] (little-endian), so the two views alias.
  std::uint32_t ref_get(int m, long long rel) const {
    const int p = phys(m);
    const std::vector<std::uint32_t>& r = ref_[static_cast<std::size_t>(p)];
    if (p == m) return r[static_cast<std::size_t>(rel)];
    const int pb = mem(p).lane_bits, k = mem(m).lane_bits / pb;
    std::uint64_t v = 0;
    for (int j = 0; j < k; ++j) v |= static_cast<std::uint64_t>(r[static_cast<std::size_t>(rel * k + j)]) << (j * pb);
    return static_cast<std::uint32_t>(v);
  }
  void ref_set(int m, long long rel, std::uint32_t v) {
    const int p = phys(m);
    std::vector<std::uint32_t>& r = ref_[static_cast<std::size_t>(p)];
    if (p == m) {
      r[static_cast<std::size_t>(rel)] = v;
      if (m == ish_ && ilv_ >= 0) view_of_[static_cast<std::size_t>(rel)] = 2;
      return;
    }
    const int pb = mem(p).lane_bits, k = mem(m).lane_bits / pb;
    for (int j = 0; j < k; ++j) {
      r[static_cast<std::size_t>(rel * k + j)] = static_cast<std::uint32_t>((v >> (j * pb)) & tb::mask64(pb));
      view_of_[static_cast<std::size_t>(rel * k + j)] = 1;
    }
  }
  // Lane-view coverage: whether n elements from rel of memory m (a range) read storage bytes last
  // written through the other range of the shared scratchpad (view_of_: 1 lanes, 2 bytes).
  bool cross_view(int m, long long rel, int n) const {
    if (ilv_ < 0 || (m != ilv_ && m != ish_)) return false;
    const int k = m == ilv_ ? mem(ilv_).lane_bits / mem(ish_).lane_bits : 1;
    const std::uint8_t other = m == ilv_ ? 2 : 1;
    for (long long b = rel * k; b < (rel + n) * k; ++b)
      if (view_of_[static_cast<std::size_t>(b)] == other) return true;
    return false;
  }

  // ---- power gating model ----
  bool ack(int m, long long s) const {
    const long long L = last_req_[static_cast<std::size_t>(phys(m))][static_cast<std::size_t>(s)];
    return L < t_ && t_ - L <= in_.wake + 1;
  }
  bool usable(int m, long long s) const { return !in_.pg || !ack(m, s); }

  // ---- reporting ----
  void fail(const std::string& port, long long addr, long long expected, long long actual) {
    ++errors_;
    if (errors_ <= args_.max_errors)
      std::fprintf(stderr, "MISMATCH block=memsys cycle=%llu port=%s addr=%lld expected=%lld actual=%lld\n",
                   static_cast<unsigned long long>(t_), port.c_str(), addr, expected, actual);
  }
  void check(const std::string& port, long long addr, long long expected, long long actual) {
    ++checks_;
    if (expected != actual) fail(port, addr, expected, actual);
  }

  // ---- one access description ----
  struct EngAcc {
    bool en = false, vec = false;
    long long addr = 0;
    std::uint64_t mask = 0;            // wr
    std::vector<std::uint64_t> data;   // wr: lane codes (out bits)
  };
  struct DmaAcc {
    bool req = false, we = false;
    long long addr = 0;                // element address
    std::vector<std::uint32_t> wdata;  // dw bits in 32-bit chunks
    int size = 0;                      // 2^size bytes
  };
  // Where a DMA access goes (computed here from the map): memory, word, lane, lanes, legality.
  struct DmaLoc {
    int m = -1;
    bool legal = false;
    long long word = 0;
    int lane = 0, n = 0;
    Loc l{};
  };
  DmaLoc dma_loc(const DmaAcc& d) const {
    DmaLoc r;
    for (int m = 0; m < nm(); ++m)
      if (in_mem(m, d.addr)) r.m = m;
    if (r.m < 0) return r;
    const Mem& M = mem(r.m);
    const long long rel = d.addr - M.ebase;
    r.word = rel / M.lanes;
    r.lane = static_cast<int>(rel % M.lanes);
    r.n = dma_lanes(M, d.size);
    r.legal = r.n > 0 && r.lane + r.n <= M.lanes;
    r.l = loc_word(r.m, r.word);
    return r;
  }
  struct Pending {  // a read whose data appears in the next cycle
    std::string port;
    long long addr;
    std::vector<long long> lanes;  // expected lane values
    int lane_bits;
  };

  int n_of(const std::string& port, bool vec) const {
    if (port == "drd") return vec ? in_.rows : 1;
    if (port == "wr") return vec ? in_.cols : 1;
    return in_.cols;
  }
  // Elements of an access (absolute addresses); wr: masked lanes only.
  std::vector<long long> elems(const std::string& port, const EngAcc& a) const {
    std::vector<long long> v;
    const int n = n_of(port, a.vec);
    for (int i = 0; i < n; ++i)
      if (port != "wr" || !a.vec || ((a.mask >> i) & 1)) v.push_back(a.addr + i);
    return v;
  }
  // The memories a port reaches: drd data (HY: or shared), wrd weight (or shared), brd acc (or HY's
  // lanes), wr data or weight (or shared). SMP: brd the acc lanes, the others the bytes.
  std::vector<int> port_mems(const std::string& port) const {
    if (smp_) return {port == "brd" ? iacc_ : ish_};
    std::vector<int> v = port == "drd" ? std::vector<int>{kData}
                         : port == "wrd" ? std::vector<int>{kWeight}
                         : port == "brd" ? std::vector<int>{kAcc}
                                         : std::vector<int>{kData, kWeight};
    if (hy_ && port != "brd") v.push_back(kShared);
    if (ilv_ >= 0 && port == "brd") v.push_back(ilv_);
    return v;
  }
  // The memory of a port's access: the one of the port's memories that holds its address (lane 0's
  // element), -1 when none does (all_in: it must hold every element of the access, else it is dropped).
  int port_mem(const std::string& port, const EngAcc& a) const {
    for (int m : port_mems(port))
      if (in_mem(m, a.addr)) return m;
    return -1;
  }
  bool all_in(const std::string& port, const EngAcc& a) const {
    const int m = port_mem(port, a);
    if (m < 0) return false;
    for (long long e : elems(port, a))
      if (!in_mem(m, e)) return false;
    return true;
  }
  // bank -> row of the banks an (in-range) access uses.
  std::vector<std::pair<long long, long long>> banks_of(const std::string& port, const EngAcc& a) const {
    const int m = port_mem(port, a);
    std::vector<std::pair<long long, long long>> v;
    for (long long e : elems(port, a)) {
      const Loc l = loc_elem(m, e - mem(m).ebase);
      bool seen = false;
      for (auto& [b, r] : v) seen |= b == l.bank;
      if (!seen) v.push_back({l.bank, l.row});
    }
    return v;
  }
  // Whether an (enabled, in-range) access uses bank b of scratchpad p.
  bool uses_bank(const std::string& port, const EngAcc& a, long long b, int p) const {
    if (!a.en || !all_in(port, a) || phys(port_mem(port, a)) != p) return false;
    for (auto& [b2, r] : banks_of(port, a))
      if (b2 == b) return true;
    return false;
  }
  bool avoids_unusable(const std::string& port, const EngAcc& a) const {
    const int m = port_mem(port, a);
    for (auto& [b, r] : banks_of(port, a))
      if (!usable(m, r / mem(m).wps)) return false;
    return true;
  }

  // ---- drive ----
  void idle_inputs() {
    d_->drd_en_i = d_->wrd_en_i = d_->brd_en_i = d_->wr_en_i = d_->spm_req_i = 0;
  }
  void drive(const EngAcc& drd, const EngAcc& wrd, const EngAcc& brd, const EngAcc& wr, const DmaAcc& dma) {
    d_->drd_en_i = drd.en;
    d_->drd_vec_i = drd.vec;
    d_->drd_addr_i = static_cast<std::uint32_t>(drd.addr);
    d_->wrd_en_i = wrd.en;
    d_->wrd_addr_i = static_cast<std::uint32_t>(wrd.addr);
    d_->brd_en_i = brd.en;
    d_->brd_addr_i = static_cast<std::uint32_t>(brd.addr);
    d_->wr_en_i = wr.en;
    d_->wr_vec_i = wr.vec;
    tb::put(d_->wr_mask_i, 0, in_.cols, wr.mask);
    d_->wr_addr_i = static_cast<std::uint32_t>(wr.addr);
    for (int c = 0; c < in_.cols; ++c)
      tb::put(d_->wr_data_i, c * in_.ob, in_.ob, c < static_cast<int>(wr.data.size()) ? wr.data[static_cast<std::size_t>(c)] : 0);
    d_->spm_req_i = dma.req;
    d_->spm_we_i = dma.we;
    d_->spm_addr_i = static_cast<std::uint32_t>(dma.addr);
    d_->spm_size_i = static_cast<CData>(dma.size);
    for (int c = 0; c * 32 < in_.dw; ++c)
      tb::put(d_->spm_wdata_i, c * 32, std::min(32, in_.dw - c * 32),
              c < static_cast<int>(dma.wdata.size()) ? dma.wdata[static_cast<std::size_t>(c)] : 0);
    auto lv = [this](int m) {
      std::uint64_t v = 0;
      for (int s = 0; s < mem(m).sectors; ++s) v |= static_cast<std::uint64_t>(req_[static_cast<std::size_t>(m)][static_cast<std::size_t>(s)]) << s;
      return v;
    };
    dut([&](auto& d) {
      if constexpr (requires { d.sleep_req_data_i; }) {
        d.sleep_req_data_i = static_cast<CData>(lv(kData));
        d.sleep_req_weight_i = static_cast<CData>(lv(kWeight));
        d.sleep_req_acc_i = static_cast<CData>(lv(kAcc));
      }
      if constexpr (requires { d.sleep_req_shared_i; }) d.sleep_req_shared_i = static_cast<CData>(lv(ish_));
    });
  }

  // ---- one cycle: check last cycle's reads, drive, check the arbitration, apply, step ----
  void cycle(const EngAcc& drd, const EngAcc& wrd, const EngAcc& brd, const EngAcc& wr, const DmaAcc& dma,
             bool expect_err = false) {
    // Read data of the previous cycle's reads.
    for (const Pending& p : pending_) {
      for (std::size_t i = 0; i < p.lanes.size(); ++i) {
        std::uint64_t got = 0;
        if (p.port == "drd") got = tb::get(d_->drd_data_o, static_cast<int>(i) * in_.data, in_.data);
        else if (p.port == "wrd") got = tb::get(d_->wrd_data_o, static_cast<int>(i) * in_.weight, in_.weight);
        else if (p.port == "brd") got = tb::get(d_->brd_data_o, static_cast<int>(i) * in_.psum, in_.psum);
        else got = tb::get(d_->spm_rdata_o, static_cast<int>(i) * 32, std::min(32, in_.dw - static_cast<int>(i) * 32));
        check(p.port + (p.port == "spm" ? "" : "[" + std::to_string(i) + "]"), p.addr, p.lanes[i], static_cast<long long>(got));
      }
      if (p.port == "spm") check("spm_rvalid_o", p.addr, 1, d_->spm_rvalid_o);
      else ++eng_reads_checked_;
    }
    bool dma_read = false;
    for (const Pending& p : pending_) dma_read |= p.port == "spm";
    if (!dma_read) check("spm_rvalid_o", 0, 0, d_->spm_rvalid_o);
    if (!expect_err) check("err_o", 0, 0, d_->err_o);
    if (in_.pg) check_acks();
    pending_.clear();

    drive(drd, wrd, brd, wr, dma);
    d_->eval();

    // Expected arbitration. Bank sets are per scratchpad (phys: SMP's two ranges share one).
    std::set<long long> rd_banks[kMaxMems];  // per scratchpad: banks the engine reads (any port)
    std::set<long long> wr_block[kMaxMems];  // per scratchpad: banks read on the writer's port
    std::set<long long> p2_banks;            // banks brd reads through a lane view (port p2, the DMA's)
    const std::pair<const char*, const EngAcc*> reads[] = {{"drd", &drd}, {"wrd", &wrd}, {"brd", &brd}};
    for (auto& [port, a] : reads) {
      if (!a->en || !all_in(port, *a)) continue;
      const int m = port_mem(port, *a), pm = phys(m);
      for (auto& [b, r] : banks_of(port, *a)) {
        rd_banks[pm].insert(b);
        // Data and weight have one port; the shared memory's writer port p1 is shared with wrd only
        // (drd reads on p0; brd of a lane view on p2).
        if (pm != ish_ || std::string(port) == "wrd") wr_block[pm].insert(b);
        if (m == ilv_) p2_banks.insert(b);
      }
    }
    // The writer waits for the read on its memory's port (drd: data, wrd: weight, wrd: shared).
    const bool wr_ok = all_in("wr", wr);
    const int wm = port_mem("wr", wr);
    bool ready = true;
    if (wr_ok)
      for (auto& [b, r] : banks_of("wr", wr)) ready &= !wr_block[phys(wm)].count(b);
    check("wr_ready_o", wr.addr, ready, d_->wr_ready_o);
    const bool wr_go = wr.en && ready;
    std::set<long long> wr_banks[kMaxMems];
    if (wr_go && wr_ok)
      for (auto& [b, r] : banks_of("wr", wr)) wr_banks[phys(wm)].insert(b);
    if (ish_ >= 0) {
      // Shared-memory coverage: reads, both readers at once, a p0 read beside a p1 write.
      const Mem& S = mem(ish_);
      const bool ds = drd.en && all_in("drd", drd) && port_mem("drd", drd) == ish_;
      const bool ws = wrd.en && all_in("wrd", wrd) && port_mem("wrd", wrd) == ish_;
      if (ds) ++(drd.vec ? sh_.drd_vec : sh_.drd_scalar);
      if (ws) ++sh_.wrd;
      if (ds && ws) ++sh_.drd_wrd;
      if (ds && wr_go && wr_ok && wm == ish_) {
        bool bank = false, word = false;
        for (auto& [b, r] : banks_of("drd", drd)) bank |= wr_banks[ish_].count(b) > 0;
        for (long long e : elems("drd", drd))
          for (long long f : elems("wr", wr)) word |= (e - S.ebase) / S.lanes == (f - S.ebase) / S.lanes;
        sh_.p0_p1_bank += bank;
        sh_.p0_p1_word += word;
      }
      if (wr.en && wm == ish_) ++sh_.wr_cycles;
      if (wr.en && !ready && wm == ish_) ++sh_.wr_waits;
    }
    if (ilv_ >= 0 && brd.en && all_in("brd", brd) && port_mem("brd", brd) != ilv_) {
      ++vs_.brd_acc;  // HY: brd of the acc memory
    } else if (ilv_ >= 0 && brd.en && all_in("brd", brd)) {
      // Coverage of port p2's reader (brd of the lane view): beside the other readers on a bank, beside a
      // write of its word.
      const Mem& A = mem(ilv_);
      const Mem& S = mem(ish_);
      ++vs_.brd;
      bool bank = false, word = false;
      for (auto& [b, r] : banks_of("brd", brd)) bank |= uses_bank("drd", drd, b, ish_) || uses_bank("wrd", wrd, b, ish_);
      if (wr_go && wr_ok && wm == ish_)
        for (long long e : elems("brd", brd))
          for (long long f : elems("wr", wr)) word |= (e - A.ebase) / A.lanes == (f - S.ebase) / S.lanes;
      vs_.brd_rd_bank += bank;
      vs_.brd_wr_word += word;
    }
    // DMA target: a legal access waits while the engine uses its bank or its sector is not usable;
    // anything else is granted and dropped. A lane view and the bytes are the one scratchpad's banks.
    const DmaLoc dl = dma_loc(dma);  // also without a request: spm_gnt_o is checked every cycle
    const int dm = dl.legal ? dl.m : -1;
    bool gnt = true;
    if (dm >= 0) {
      const int pm = phys(dm);
      const bool busy = rd_banks[pm].count(dl.l.bank) || wr_banks[pm].count(dl.l.bank);
      gnt = !busy && usable(dm, dl.l.sector);
      if (dma.req && !usable(dm, dl.l.sector)) ++sleep_blocked_;
      if (dma.req && dm == ish_) {
        ++sh_.dma_req;
        sh_.dma_busy += busy;
        sh_.dma_sleep += !usable(dm, dl.l.sector);
      }
      if (ilv_ >= 0 && pm == ish_ && dma.req) {
        // Either range of the shared scratchpad. The cause: brd (p2), or drd/wrd/a write (p0/p1) on the
        // bank (both can hold).
        const bool by_brd = p2_banks.count(dl.l.bank) > 0;
        const bool by_p01 = wr_banks[pm].count(dl.l.bank) > 0 || uses_bank("drd", drd, dl.l.bank, pm) ||
                            uses_bank("wrd", wrd, dl.l.bank, pm);
        ++vs_.dma_req[dm];
        vs_.dma_wait[dm] += !gnt;
        vs_.dma_wait_brd[dm] += by_brd;
        vs_.dma_wait_p01[dm] += by_p01;
        vs_.dma_sleep[dm] += !usable(dm, dl.l.sector);
        if (gnt) ++(dma.we ? vs_.dma_wr[dm] : vs_.dma_rd[dm]);
      }
    }
    check("spm_gnt_o", dma.addr, gnt, d_->spm_gnt_o);
    last_ready_ = ready, last_gnt_ = gnt;

    // Reads: expected data from the reference before this cycle's writes.
    for (auto& [port, a] : reads) {
      if (!a->en) continue;
      std::string p = port;
      const int m = port_mem(p, *a);
      if (!all_in(p, *a)) continue;
      Pending pd{p, a->addr, {}, 0};
      const int n = p == "drd" ? in_.rows : n_of(p, a->vec);
      const int bits = p == "drd" ? in_.data : (p == "wrd" ? in_.weight : in_.psum);
      for (int i = 0; i < n; ++i) {
        long long v = 0;
        if (p != "drd" || a->vec || i == 0) v = static_cast<long long>(ref_get(m, a->addr + i - mem(m).ebase) & tb::mask64(bits));
        pd.lanes.push_back(v);
      }
      if (p == "drd" && a->vec) ++vec_reads_;
      if (cross_view(m, a->addr - mem(m).ebase, static_cast<int>(elems(p, *a).size())))
        ++(m == ilv_ ? vs_.xv_lane : vs_.xv_byte);
      pending_.push_back(pd);
      for (auto& [b, r] : banks_of(p, *a)) {
        ++cnt_eng_rd_[m];  // per range (a lane view: brd counts for it, drd and wrd for shared)
        ++sec_cnt_[static_cast<std::size_t>(phys(m))][static_cast<std::size_t>(r / mem(m).wps)];
      }
    }
    const int nchunks = (in_.dw + 31) / 32;
    if (dma.req && gnt && dm >= 0) {
      const Mem& M = mem(dm);
      const long long e0 = dl.word * M.lanes + dl.lane;
      ++sec_cnt_[static_cast<std::size_t>(phys(dm))][static_cast<std::size_t>(dl.l.sector)];
      ++dma_size_cnt_[dm][dma.size];
      if (dma.we) {
        ++cnt_dma_wr_[dm];
        ++dma_writes_;
      } else {
        ++cnt_dma_rd_[dm];
        // The access's lanes in the low bits, zeros above.
        Pending pd{"spm", dma.addr, {}, 32};
        std::vector<std::uint32_t> w(static_cast<std::size_t>(nchunks), 0u);
        for (int i = 0; i < dl.n; ++i) tb::put_words(w, i * M.lane_bits, M.lane_bits, ref_get(dm, e0 + i));
        for (std::uint32_t x : w) pd.lanes.push_back(x);
        if (cross_view(dm, e0, dl.n)) ++(dm == ilv_ ? vs_.xv_lane : vs_.xv_byte);
        pending_.push_back(pd);
        ++dma_reads_checked_;
      }
    } else if (dma.req && gnt && dm < 0 && !dma.we) {
      Pending pd{"spm", dma.addr, {}, 32};
      for (int c = 0; c < nchunks; ++c) pd.lanes.push_back(0);
      pending_.push_back(pd);
    }
    if (dma.req) {
      ++dma_req_cycles_;
      if (!gnt) {
        ++dma_waits_;
        if (dm >= 0) ++cnt_dma_wait_[dm];
      }
    }
    if (wr.en) {
      ++wr_en_cycles_;
      if (!ready) {
        ++wr_waits_, ++cnt_wr_wait_;
        if (!smp_ && wm == kWeight) ++wr_weight_waits_;
      }
    }
    // Writes of this cycle.
    if (wr_go && wr_ok) {
      const std::vector<long long> es = elems("wr", wr);
      for (std::size_t i = 0; i < es.size(); ++i) {
        const long long lane = es[i] - wr.addr;
        const std::int64_t code = tb::sign_extend(wr.data[static_cast<std::size_t>(lane)], in_.ob);
        ref_set(wm, es[i] - mem(wm).ebase, static_cast<std::uint32_t>(code) & 0xffu);
        ++wr_elems_;
        if (!smp_ && wm == kWeight) ++wr_weight_elems_;
      }
      if (wr.vec) ++vec_writes_;
      if (wm == ish_) {
        sh_.wr_elems += static_cast<long long>(es.size());
        ++(wr.vec ? sh_.wr_vec : sh_.wr_scalar);
      }
      for (auto& [b, r] : banks_of("wr", wr)) {
        ++cnt_eng_wr_[wm];
        ++sec_cnt_[static_cast<std::size_t>(phys(wm))][static_cast<std::size_t>(r / mem(wm).wps)];
      }
    }
    if (dma.req && gnt && dm >= 0 && dma.we) {
      // Lanes [lane, lane + n) from the low bits of the write data; the word's other lanes keep theirs.
      const Mem& M = mem(dm);
      for (int i = 0; i < dl.n; ++i)
        ref_set(dm, dl.word * M.lanes + dl.lane + i, static_cast<std::uint32_t>(tb::get_words(dma.wdata, i * M.lane_bits, M.lane_bits)));
    }
    // Sleep requests take effect at this edge.
    for (int m = 0; m < nm(); ++m)
      for (int s = 0; s < mem(m).sectors; ++s)
        if (req_[static_cast<std::size_t>(m)][static_cast<std::size_t>(s)]) last_req_[static_cast<std::size_t>(m)][static_cast<std::size_t>(s)] = t_;
    sim_.step();
    ++t_;
  }

  void check_acks() {
    dut([&](auto& d) {
      if constexpr (requires { d.sleep_ack_data_o; }) {
        std::uint64_t got[kMaxMems] = {d.sleep_ack_data_o, d.sleep_ack_weight_o, d.sleep_ack_acc_o, 0, 0};
        if constexpr (requires { d.sleep_ack_shared_o; }) got[kShared] = d.sleep_ack_shared_o;
        for (int m = 0; m < nm(); ++m)
          for (int s = 0; s < mem(m).sectors && phys(m) == m; ++s)  // HY's lanes: the shared memory's handshake
            check("sleep_ack_" + mem(m).name + "_o[" + std::to_string(s) + "]", s, ack(m, s), (got[m] >> s) & 1);
      } else if constexpr (requires { d.sleep_ack_shared_o; }) {
        // SMP: the one scratchpad's handshake (the acc view has none).
        for (int s = 0; s < mem(ish_).sectors; ++s)
          check("sleep_ack_shared_o[" + std::to_string(s) + "]", s, ack(ish_, s), (d.sleep_ack_shared_o >> s) & 1);
      }
    });
  }

  void idle_cycle() { cycle({}, {}, {}, {}, {}); }

  // ---- stimulus ----
  std::vector<std::uint32_t> random_word() {
    std::vector<std::uint32_t> w(static_cast<std::size_t>((in_.dw + 31) / 32));
    for (auto& x : w) x = static_cast<std::uint32_t>(rng_.next());
    return w;
  }
  void fill() {
    for (int m = 0; m < nm(); ++m) {
      if (m == ilv_) continue;  // a lane view: filled with the shared memory's words
      for (long long w = 0; w < mem(m).words; ++w) {
        // The shared scratchpad with a lane view: each word through a random range (a whole word of
        // lanes or of bytes), so later reads through the other range read values written through this one.
        const int r = m == ish_ && ilv_ >= 0 && rng_.chance(50) ? ilv_ : m;
        DmaAcc d{true, true, mem(r).ebase + w * mem(r).lanes, random_word(), word_size(r)};
        cycle({}, {}, {}, {}, d);
      }
    }
    if (ilv_ >= 0) {
      std::fill(view_of_.begin(), view_of_.end(), 0);  // cross-view coverage counts the later writes only
      vs_ = {};                                          // and the random phases' traffic only
    }
  }

  struct Phase {
    int drd = 0, vec = 0, wrd = 0, brd = 0, wr = 0, wvec = 0, dma = 0, dwe = 0, hot = 0, sleep = 0, wweight = 0;
    int dshared = 0, wdshared = 0, wshared = 0;  // HY: shares of drd, wrd and wr going to the shared memory
    int blanes = 0;                              // HY: share of brd going to the lanes
  } ph_;
  long long hot_[kMaxMems] = {};

  void pick_phase(int ph) {
    const int levels[] = {0, 10, 30, 50, 80, 100};
    auto lv = [&] { return levels[rng_.uniform(0, 5)]; };
    ph_.drd = lv(), ph_.vec = lv(), ph_.wrd = lv(), ph_.brd = lv(), ph_.wr = std::max(30, lv()), ph_.wvec = lv();
    ph_.dma = std::max(20, lv()), ph_.dwe = lv(), ph_.hot = 50, ph_.sleep = in_.pg && ph % 2 == 1 ? 5 : 0;
    ph_.wweight = ph % 3 == 1 ? 100 : (ph % 3 == 2 ? 30 : 0);  // result writes into the weight memory
    if (ph == 0) ph_ = {80, 50, 80, 80, 80, 50, 80, 50, 50, in_.pg ? 5 : 0, 0};  // everything busy
    if (hy_) {
      // The shared memory takes a good share of every port that reaches it (drawn only for HY, so the
      // SEP stimulus stays what it was).
      const int share[] = {30, 50, 80};
      auto sh = [&] { return share[rng_.uniform(0, 2)]; };
      ph_.dshared = sh(), ph_.wdshared = sh(), ph_.wshared = sh();
      if (ph == 0) ph_.dshared = ph_.wdshared = ph_.wshared = 50;
      if (ilv_ >= 0) {
        // The lanes: a good share of brd, and brd busy in every phase (the p2 rules need it).
        ph_.blanes = ph == 0 ? 50 : sh();
        ph_.brd = std::max(30, ph_.brd);
      }
    }
    for (int m = 0; m < nm(); ++m) hot_[m] = rng_.uniform(0, std::max<long long>(0, mem(m).elems - 64));
    // A lane view's hot window lies on the bytes' hot window (the same words), so brd and DMA lane
    // accesses meet the byte ports' recent writes and the other way round.
    if (ilv_ >= 0) hot_[ilv_] = hot_[ish_] / (mem(ilv_).lane_bits / mem(ish_).lane_bits);
  }
  // Elements of memory m's hot window: 64 (a lane view: the lanes on the bytes' 64).
  long long hot_span(int m) const { return m == ilv_ ? 64 / (mem(ilv_).lane_bits / mem(ish_).lane_bits) : 64; }

  // A random in-range address for n consecutive elements of memory m (hot window half the time).
  long long rand_addr(int m, int n) {
    const Mem& M = mem(m);
    long long rel;
    if (rng_.chance(ph_.hot)) rel = std::min(hot_[m] + rng_.uniform(0, hot_span(m) - 1), M.elems - n);
    else rel = rng_.uniform(0, M.elems - n);
    return M.ebase + rel;
  }
  EngAcc rand_eng(const std::string& port, int p_en, int p_vec) {
    EngAcc a;
    if (!rng_.chance(p_en)) return a;
    a.vec = (port == "drd" || port == "wr") && rng_.chance(p_vec);
    const int n = n_of(port, a.vec);
    int m;
    if (smp_) {
      m = port_mems(port)[0];  // SMP: one memory per port (brd: the acc lanes, the others: the bytes)
    } else {
      m = port == "wr" ? (rng_.chance(ph_.wweight) ? kWeight : kData) : (port == "drd" ? kData : (port == "wrd" ? kWeight : kAcc));
      if (hy_ && port != "brd" && rng_.chance(port == "drd" ? ph_.dshared : (port == "wrd" ? ph_.wdshared : ph_.wshared)))
        m = kShared;
      if (ilv_ >= 0 && port == "brd" && rng_.chance(ph_.blanes)) m = ilv_;
    }
    for (int tries = 0; tries < 8; ++tries) {
      a.addr = rand_addr(m, n);
      if (port == "wr") {
        a.mask = a.vec ? (rng_.next() & tb::mask64(in_.cols)) : 0;
        if (a.vec && rng_.chance(50)) a.mask = tb::mask64(static_cast<int>(rng_.uniform(1, in_.cols)));  // c < valid
        a.data.clear();
        for (int c = 0; c < in_.cols; ++c) a.data.push_back(rng_.next() & tb::mask64(in_.ob));
      }
      if (avoids_unusable(port, a)) {
        a.en = true;
        return a;
      }
    }
    return a;
  }
  DmaAcc rand_dma(bool steer_sleep) {
    DmaAcc d;
    if (!rng_.chance(ph_.dma)) return d;
    d.req = true;
    d.we = rng_.chance(ph_.dwe);
    d.wdata = random_word();  // garbage above the access's bytes: the byte enables must drop it
    const bool sleep = steer_sleep && sleep_m_ >= 0 && rng_.chance(40);
    // SMP: the sleeping sector is the scratchpad's, reached through either range (HY: the shared
    // memory's, through either range when it has lanes).
    int m = sleep && !smp_ ? sleep_m_ : static_cast<int>(rng_.uniform(0, nm() - 1));
    if (sleep && !smp_ && m == ish_ && ilv_ >= 0 && rng_.chance(50)) m = ilv_;
    const Mem& M = mem(m);
    // A size legal for the memory (whole lanes, at most a word; acc: 4-byte lanes as the DMA's widened
    // loads and psum codes), at a lane where its lanes stay in the word.
    std::vector<int> sizes;
    for (int z = 0; z <= in_.max_size; ++z)
      if (dma_lanes(M, z) > 0) sizes.push_back(z);
    d.size = sizes[static_cast<std::size_t>(rng_.uniform(0, static_cast<long long>(sizes.size()) - 1))];
    const int lane = static_cast<int>(rng_.uniform(0, M.lanes - dma_lanes(M, d.size)));
    long long w;
    if (sleep) w = (sleep_s_ * M.wps + rng_.uniform(0, M.wps - 1)) * M.banks + rng_.uniform(0, M.banks - 1);  // the sleeping sector
    else if (rng_.chance(ph_.hot)) w = std::min(hot_[m] / M.lanes + rng_.uniform(0, 15), M.words - 1);
    else w = rng_.uniform(0, M.words - 1);
    d.addr = M.ebase + w * M.lanes + lane;
    return d;
  }

  int sleep_m_ = -1;
  long long sleep_s_ = 0;
  int sleep_left_ = 0;

  void random_cycle() {
    // Sleep/wake one sector at a time: request high for 2-6 cycles, then low until usable again.
    if (in_.pg) {
      if (sleep_m_ < 0 && rng_.chance(ph_.sleep)) {
        sleep_m_ = smp_ ? ish_ : phys(static_cast<int>(rng_.uniform(0, nm() - 1)));  // a scratchpad (SMP: the one)
        sleep_s_ = rng_.uniform(0, mem(sleep_m_).sectors - 1);
        sleep_left_ = static_cast<int>(rng_.uniform(2, 6));
      }
      if (sleep_m_ >= 0) {
        req_[static_cast<std::size_t>(sleep_m_)][static_cast<std::size_t>(sleep_s_)] = sleep_left_ > 0;
        if (sleep_left_ > 0) --sleep_left_;
        else if (usable(sleep_m_, sleep_s_)) sleep_m_ = -1;
      }
    }
    // The engine must not touch a sector that is asleep or will be asleep after this edge... the
    // request of this cycle puts it to sleep from the next cycle, so this cycle's usability holds.
    EngAcc drd = rand_eng("drd", ph_.drd, ph_.vec);
    EngAcc wrd = rand_eng("wrd", ph_.wrd, 0);
    EngAcc brd = rand_eng("brd", ph_.brd, 0);
    EngAcc wr = rand_eng("wr", ph_.wr, ph_.wvec);
    DmaAcc dma = rand_dma(in_.pg);
    cycle(drd, wrd, brd, wr, dma);
  }

  // Directed: a read and a write of the same element in one cycle (data: drd and wr; weight: wrd and
  // wr, an Activate/Fill result); DMA and engine on one bank.
  void same_word() {
    for (int i = 0; i < 40; ++i) {
      const int m = i % 2 ? kWeight : kData;
      const Mem& M = mem(m);
      EngAcc wr;
      wr.en = true;
      wr.addr = rand_addr(m, 1);
      wr.data.assign(static_cast<std::size_t>(in_.cols), 0);
      wr.data[0] = rng_.next() & tb::mask64(in_.ob);
      EngAcc rd;  // drd of the element, or a wrd row that contains it
      rd.en = true;
      rd.addr = m == kData ? wr.addr : std::min(wr.addr, M.ebase + M.elems - in_.cols);
      const EngAcc none;
      const std::size_t e = static_cast<std::size_t>(wr.addr - M.ebase);
      const long long before = ref_[static_cast<std::size_t>(m)][e];
      // The write waits (same bank), the read gets the old value.
      cycle(m == kData ? rd : none, m == kWeight ? rd : none, {}, wr, {});
      ++same_word_;
      if (ref_[static_cast<std::size_t>(m)][e] != before) fail("wr (same word: must wait)", wr.addr, before, -1);
      cycle({}, {}, {}, wr, {});  // no read: the write lands
      cycle(m == kData ? rd : none, m == kWeight ? rd : none, {}, {}, {});  // reads the new value (checked next cycle)
      // DMA write of the element the engine reads: not granted.
      DmaAcc d{true, true, wr.addr, random_word(), lane_size(m)};
      cycle(m == kData ? rd : none, m == kWeight ? rd : none, {}, {}, d);
      idle_cycle();
    }
  }

  // Directed (HY): the shared memory's ports on one word, rotating through
  //   0: drd (p0) and wr (p1) of one element: the write happens (p0 never blocks it), the read returns
  //      the old value, the next read the new one;
  //   1: a drd vector and a wr record over the same elements: the same;
  //   2: a wrd row containing the element and a wr of it (both p1): the write waits, the read returns the
  //      old value, the write lands in the next cycle without the read, a later row read sees it;
  //   3: drd + wrd + wr of one element: the write waits (wrd), both reads return the old value;
  //   4: a DMA write of the element while drd reads it (p0) and while wr writes it (p1), a DMA read while
  //      wrd reads it: not granted; the DMA read alone: granted.
  // The rules are checked every cycle by cycle(); here also that the model itself did what the case
  // means (writes landed or not, grants).
  void same_word_shared() {
    const Mem& S = mem(ish_);
    const EngAcc none;
    const DmaAcc no_dma;
    auto code = [&](std::uint64_t c) { return static_cast<std::uint32_t>(tb::sign_extend(c, in_.ob)) & 0xffu; };
    auto expect = [&](bool ok, const std::string& what, long long addr) {
      ++checks_;
      if (!ok) fail("same word in shared: " + what, addr, 1, 0);
    };
    for (int i = 0; i < 50; ++i) {
      const int v = i % 5;
      const long long a = rand_addr(ish_, std::max(in_.rows, in_.cols));
      const std::size_t e = static_cast<std::size_t>(a - S.ebase);
      std::vector<std::uint32_t>& ref = ref_[static_cast<std::size_t>(ish_)];  // HY and SMP: the bytes
      const std::uint32_t before = ref[e];
      EngAcc wr;
      wr.en = true;
      wr.addr = a;
      wr.vec = v == 1;
      wr.mask = v == 1 ? tb::mask64(in_.cols) : 0;
      for (int c = 0; c < in_.cols; ++c) {
        const std::uint32_t old = ref[e + static_cast<std::size_t>(c)];
        wr.data.push_back((old ^ static_cast<std::uint64_t>(1 + rng_.uniform(0, (1LL << in_.ob) - 2))) &
                          tb::mask64(in_.ob));  // differs from the old code
      }
      const std::uint32_t after = code(wr.data[0]);
      EngAcc dr = none, wd = none;
      dr.en = true, dr.addr = a, dr.vec = v == 1;
      wd.en = true, wd.addr = a;
      switch (v) {
        case 0:
        case 1:
          cycle(dr, none, {}, wr, no_dma);
          expect(last_ready_ && ref[e] == after, "a p0 read must not block the p1 write", a);
          cycle(dr, none, {}, {}, no_dma);  // the new value (checked in the next cycle)
          break;
        case 2:
        case 3:
          cycle(v == 3 ? dr : none, wd, {}, wr, no_dma);
          expect(!last_ready_ && ref[e] == before, "the write must wait for the wrd row on p1", a);
          cycle(none, none, {}, wr, no_dma);
          expect(last_ready_ && ref[e] == after, "the write lands without the read", a);
          cycle(v == 3 ? dr : none, wd, {}, {}, no_dma);
          break;
        default: {
          DmaAcc dw{true, true, a, random_word(), lane_size(ish_)};
          cycle(dr, none, {}, {}, dw);
          expect(!last_gnt_ && ref[e] == before, "a DMA write must wait for the drd (p0) of its bank", a);
          cycle(none, none, {}, wr, dw);
          expect(last_ready_ && !last_gnt_ && ref[e] == after, "a DMA write must wait for the write (p1) of its bank", a);
          const DmaAcc rd{true, false, a, {}, lane_size(ish_)};
          cycle(none, wd, {}, {}, rd);
          expect(!last_gnt_, "a DMA read must wait for the wrd (p1) of its bank", a);
          cycle(none, none, {}, {}, rd);
          expect(last_gnt_, "a DMA read alone is granted", a);
          break;
        }
      }
      ++sh_.same_word;
      ++same_word_;
      idle_cycle();
    }
  }

  // Directed (SMP, HY with lanes): the lane view (SMP: acc, HY: lanes) and the bytes are one scratchpad.
  // For lane element r (bytes 4r .. 4r + 3 of the byte range, byte j at bits [8j +: 8] of the lane),
  // rotating through
  //   0: a DMA write of the lane (value V, garbage above it), then drd and wrd reads of its bytes and a
  //      DMA read of its word through the bytes: byte j is V >> 8j;
  //   1: wr writes of the lane's bytes (a record, then scalars), then brd and a DMA read of the lane;
  //   2: a DMA write of 1 or 2 bytes of the lane, then brd and a DMA read of the lane;
  //   3: brd of the lane beside a DMA read of it and beside a DMA byte write of its word: the DMA waits
  //      (brd uses the bank on p2, the DMA's port); then the write alone: granted;
  //   4: brd (p2) and a scalar wr (p1) of one of the lane's bytes in one cycle: the write happens, brd
  //      returns the old lane, the next brd the new one;
  //   5: a DMA write of the lane beside a wrd row, beside a drd vector of its bytes and beside a wr of
  //      one of them (the write happens): the DMA waits each time; then alone: granted, the lane is V;
  //   6: drd (p0), wrd (p1) and brd (p2) of one word in one cycle: all return it, a DMA read of the lane
  //      waits.
  // As in same_word_shared(), besides the per-cycle checks against the rules, each case checks that the
  // model did what the case means (expected values computed here from the bytes, grants, writes).
  void same_word_view() {
    const Mem& A = mem(ilv_);
    const Mem& S = mem(ish_);
    const int kx = A.lane_bits / S.lane_bits;  // bytes per acc lane
    const EngAcc none;
    const DmaAcc no_dma;
    auto code = [&](std::uint64_t c) { return static_cast<std::uint32_t>(tb::sign_extend(c, in_.ob)) & 0xffu; };
    auto expect = [&](bool ok, const std::string& what, long long addr) {
      ++checks_;
      if (!ok) fail(std::string(smp_ ? "SMP" : "lanes") + " directed: " + what, addr, 1, 0);
    };
    auto eng = [](long long a, bool vec = false) {
      EngAcc e;
      e.en = true, e.addr = a, e.vec = vec;
      return e;
    };
    // Lane v with byte j (of the lane) replaced by b.
    auto with_byte = [](std::uint32_t v, int j, std::uint32_t b) {
      return (v & ~(0xffu << (8 * j))) | ((b & 0xffu) << (8 * j));
    };
    for (int i = 0; i < 56; ++i) {
      const int v = i % 7;
      const long long r = rand_addr(ilv_, in_.cols) - A.ebase;  // a bias row of cols lanes fits from r
      const long long ra = A.ebase + r, b0 = S.ebase + r * kx;     // the lane's element, its first byte
      const long long bword = S.ebase + (r / A.lanes) * S.lanes;   // lane 0 of the word (bytes)
      const std::uint32_t before = ref_get(ilv_, r);
      const std::vector<std::uint32_t>& bytes = ref_[static_cast<std::size_t>(ish_)];
      const EngAcc brd = eng(ra);
      const EngAcc drd = eng(std::min(b0, S.ebase + S.elems - in_.rows), in_.rows > 1);
      const EngAcc wrd = eng(std::min(std::max(b0, b0 + kx - in_.cols), S.ebase + S.elems - in_.cols));
      const DmaAcc lane_rd{true, false, ra, {}, lane_size(ilv_)};
      switch (v) {
        case 0: {
          const std::uint32_t V = static_cast<std::uint32_t>(rng_.next());
          std::vector<std::uint32_t> wd = random_word();
          wd[0] = V;  // a 32-bit lane: the low 32 bits; above them garbage
          cycle(none, none, none, none, DmaAcc{true, true, ra, wd, lane_size(ilv_)});
          expect(last_gnt_ && ref_get(ilv_, r) == V, "a DMA lane write is granted and lands", ra);
          for (int j = 0; j < kx; ++j)
            expect(bytes[static_cast<std::size_t>(r * kx + j)] == ((V >> (8 * j)) & 0xffu), "byte j of a lane is V >> 8j", b0 + j);
          cycle(drd, wrd, none, none, no_dma);  // the bytes through p0 and p1
          cycle(none, none, none, none, DmaAcc{true, false, bword, {}, word_size(ish_)});  // the word's bytes
          expect(last_gnt_, "a DMA word read through the bytes is granted", bword);
          ++vs_.xv_directed;
          break;
        }
        case 1: {
          std::uint32_t want = before;
          EngAcc rec = eng(b0, true);
          rec.mask = tb::mask64(in_.cols);
          for (int c = 0; c < in_.cols; ++c) {
            rec.data.push_back(rng_.next() & tb::mask64(in_.ob));
            if (c < kx) want = with_byte(want, c, code(rec.data.back()));
          }
          cycle(none, none, none, rec, no_dma);
          expect(last_ready_, "a record alone is written", b0);
          for (int j = in_.cols; j < kx; ++j) {
            EngAcc w1 = eng(b0 + j);
            w1.data.assign(static_cast<std::size_t>(in_.cols), 0);
            w1.data[0] = rng_.next() & tb::mask64(in_.ob);
            want = with_byte(want, j, code(w1.data[0]));
            cycle(none, none, none, w1, no_dma);
            expect(last_ready_, "a scalar write alone is written", b0 + j);
          }
          expect(ref_get(ilv_, r) == want, "the written bytes are the lane's bytes", ra);
          cycle(none, none, brd, none, no_dma);   // the lane through p2 (checked in the next cycle)
          cycle(none, none, none, none, lane_rd);  // and through the DMA
          expect(last_gnt_, "a DMA lane read alone is granted", ra);
          ++vs_.xv_directed;
          break;
        }
        case 2: {
          const int z = static_cast<int>(rng_.uniform(0, lane_size(ilv_) - 1));  // 1 or 2 bytes
          const int n = 1 << z, j = static_cast<int>(rng_.uniform(0, (kx - n) / n)) * n;
          std::vector<std::uint32_t> wd = random_word();
          std::uint32_t want = before;
          for (int k = 0; k < n; ++k) want = with_byte(want, j + k, (wd[0] >> (8 * k)) & 0xffu);
          cycle(none, none, none, none, DmaAcc{true, true, b0 + j, wd, z});
          expect(last_gnt_ && ref_get(ilv_, r) == want, "a DMA byte write lands in its place of the lane", b0 + j);
          cycle(none, none, brd, none, no_dma);
          cycle(none, none, none, none, lane_rd);
          ++vs_.xv_directed;
          break;
        }
        case 3: {
          cycle(none, none, brd, none, lane_rd);
          expect(!last_gnt_, "a DMA lane read waits for brd of its bank (p2)", ra);
          const DmaAcc bw{true, true, b0, random_word(), 0};
          cycle(none, none, brd, none, bw);
          expect(!last_gnt_ && ref_get(ilv_, r) == before, "a DMA byte write waits for brd of its bank (p2)", b0);
          cycle(none, none, none, none, bw);
          expect(last_gnt_ && ref_get(ilv_, r) == with_byte(before, 0, bw.wdata[0] & 0xffu), "the DMA byte write alone lands", b0);
          break;
        }
        case 4: {
          const int j = static_cast<int>(rng_.uniform(0, kx - 1));
          EngAcc w1 = eng(b0 + j);
          w1.data.assign(static_cast<std::size_t>(in_.cols), 0);
          w1.data[0] = (bytes[static_cast<std::size_t>(r * kx + j)] ^ static_cast<std::uint64_t>(1 + rng_.uniform(0, (1LL << in_.ob) - 2))) &
                       tb::mask64(in_.ob);  // differs from the old byte
          cycle(none, none, brd, w1, no_dma);  // brd returns the old lane (checked next cycle)
          expect(last_ready_ && ref_get(ilv_, r) == with_byte(before, j, code(w1.data[0])) && ref_get(ilv_, r) != before,
                 "brd (p2) does not block a write (p1) of its word", b0 + j);
          cycle(none, none, brd, none, no_dma);  // the new lane
          break;
        }
        case 5: {
          const std::uint32_t V = static_cast<std::uint32_t>(rng_.next());
          std::vector<std::uint32_t> wd = random_word();
          wd[0] = V;
          const DmaAcc lw{true, true, ra, wd, lane_size(ilv_)};
          cycle(none, eng(b0), none, none, lw);
          expect(!last_gnt_ && ref_get(ilv_, r) == before, "a DMA lane write waits for wrd (p1) of its word", ra);
          cycle(drd, none, none, none, lw);
          expect(!last_gnt_ && ref_get(ilv_, r) == before, "a DMA lane write waits for drd (p0) of its word", ra);
          const int j = static_cast<int>(rng_.uniform(0, kx - 1));
          EngAcc w1 = eng(b0 + j);
          w1.data.assign(static_cast<std::size_t>(in_.cols), 0);
          w1.data[0] = rng_.next() & tb::mask64(in_.ob);
          cycle(none, none, none, w1, lw);
          expect(last_ready_ && !last_gnt_ && ref_get(ilv_, r) == with_byte(before, j, code(w1.data[0])),
                 "a DMA lane write waits for a write (p1) of its word, which happens", ra);
          cycle(none, none, none, none, lw);
          expect(last_gnt_ && ref_get(ilv_, r) == V, "the DMA lane write alone lands", ra);
          cycle(drd, none, none, none, no_dma);  // its bytes
          break;
        }
        default: {
          cycle(drd, wrd, brd, none, lane_rd);
          expect(last_ready_ && !last_gnt_, "drd, wrd and brd of one word in one cycle; the DMA waits", ra);
          break;
        }
      }
      ++vs_.same_word;
      ++same_word_;
      idle_cycle();
    }
    if (smp_) return;
    // HY: brd of the acc memory and brd of the lanes beside a DMA access of the same bank number of the
    // other scratchpad: granted (only the lanes' brd uses the shared scratchpad's p2); brd switching
    // between the two memories from cycle to cycle (the registered select of brd_data_o).
    const Mem& C = mem(kAcc);
    // Lane 0 of a random acc word on bank b (mod the acc memory's banks) from which n elements fit.
    auto acc_on_bank = [&](long long b, int n) {
      for (;;) {
        const long long w = rng_.uniform(0, C.words / C.banks - 1) * C.banks + b % C.banks;
        if (w * C.lanes + n <= C.elems) return C.ebase + w * C.lanes;
      }
    };
    for (int i = 0; i < 16; ++i) {
      const long long ra = rand_addr(ilv_, in_.cols);
      const long long bank = loc_elem(ilv_, ra - A.ebase).bank;
      const long long sa = S.ebase + ((ra - A.ebase) / A.lanes) * S.lanes;  // lane 0 of the word in bytes
      const long long ca = acc_on_bank(bank, in_.cols), cd = acc_on_bank(bank, 1);
      cycle(none, none, eng(ca), none, DmaAcc{true, i % 2 == 1, sa, random_word(), 0});
      expect(last_gnt_, "a DMA byte access is granted beside brd of the acc memory", sa);
      cycle(none, none, eng(ra), none, DmaAcc{true, i % 2 == 0, cd, random_word(), lane_size(kAcc)});
      expect(last_gnt_, "a DMA access of the acc memory is granted beside brd of the lanes", cd);
      cycle(none, none, eng(ca), none, DmaAcc{true, false, ra, {}, lane_size(ilv_)});
      expect(last_gnt_, "a DMA lane read is granted beside brd of the acc memory", ra);
      cycle(none, none, eng(ra), none, no_dma);
      cycle(none, none, eng(ca), none, no_dma);
      ++vs_.same_word;
      ++same_word_;
      idle_cycle();
    }
  }

  // The four counters every range has (engine bank reads, DMA reads, writes and waits) against range
  // m's reference counts; `name` is the range as the pins name it.
  void check_range_counters(const std::string& name, int m, std::uint32_t eng_rd, std::uint32_t dma_rd, std::uint32_t dma_wr,
                            std::uint32_t dma_wait) {
    check("cnt_eng_rd_" + name + "_o", 0, cnt_eng_rd_[m] & 0xffffffffLL, eng_rd);
    check("cnt_dma_rd_" + name + "_o", 0, cnt_dma_rd_[m] & 0xffffffffLL, dma_rd);
    check("cnt_dma_wr_" + name + "_o", 0, cnt_dma_wr_[m] & 0xffffffffLL, dma_wr);
    check("cnt_dma_wait_" + name + "_o", 0, cnt_dma_wait_[m] & 0xffffffffLL, dma_wait);
  }

  void check_counters() {
    dut([&](auto& d) {
      if constexpr (requires { d.cnt_eng_rd_data_o; }) {
        // SEP and HY: data, weight, acc.
        const std::string n[3] = {"data", "weight", "acc"};
        const std::uint32_t eng_rd[3] = {d.cnt_eng_rd_data_o, d.cnt_eng_rd_weight_o, d.cnt_eng_rd_acc_o};
        const std::uint32_t dma_rd[3] = {d.cnt_dma_rd_data_o, d.cnt_dma_rd_weight_o, d.cnt_dma_rd_acc_o};
        const std::uint32_t dma_wr[3] = {d.cnt_dma_wr_data_o, d.cnt_dma_wr_weight_o, d.cnt_dma_wr_acc_o};
        const std::uint32_t dma_wait[3] = {d.cnt_dma_wait_data_o, d.cnt_dma_wait_weight_o, d.cnt_dma_wait_acc_o};
        for (int m = 0; m < 3; ++m) {
          check_range_counters(n[m], m, eng_rd[m], dma_rd[m], dma_wr[m], dma_wait[m]);
          for (int s = 0; s < mem(m).sectors; ++s) {
            std::uint64_t got = 0;
            if (m == 0) got = tb::get(d.cnt_sector_data_o, s * 32, 32);
            if (m == 1) got = tb::get(d.cnt_sector_weight_o, s * 32, 32);
            if (m == 2) got = tb::get(d.cnt_sector_acc_o, s * 32, 32);
            check("cnt_sector_" + n[m] + "_o[" + std::to_string(s) + "]", s,
                  sec_cnt_[static_cast<std::size_t>(m)][static_cast<std::size_t>(s)] & 0xffffffffLL, static_cast<long long>(got));
          }
        }
      } else {
        // SMP: the acc range's counters (brd bank reads, DMA accesses and waits); its sectors are the
        // shared memory's (below).
        check_range_counters("acc", iacc_, d.cnt_eng_rd_acc_o, d.cnt_dma_rd_acc_o, d.cnt_dma_wr_acc_o, d.cnt_dma_wait_acc_o);
      }
      if constexpr (requires { d.cnt_eng_rd_shared_o; }) {
        // HY and SMP (SMP: the byte range's counters; the sectors count every port's bank accesses,
        // brd and the acc range's DMA accesses included).
        const int m = ish_;
        check_range_counters("shared", m, d.cnt_eng_rd_shared_o, d.cnt_dma_rd_shared_o, d.cnt_dma_wr_shared_o,
                             d.cnt_dma_wait_shared_o);
        check("cnt_eng_wr_shared_o", 0, cnt_eng_wr_[m] & 0xffffffffLL, d.cnt_eng_wr_shared_o);
        for (int s = 0; s < mem(m).sectors; ++s)
          check("cnt_sector_shared_o[" + std::to_string(s) + "]", s,
                sec_cnt_[static_cast<std::size_t>(m)][static_cast<std::size_t>(s)] & 0xffffffffLL,
                static_cast<long long>(tb::get(d.cnt_sector_shared_o, s * 32, 32)));
      }
      if constexpr (requires { d.cnt_eng_wr_data_o; }) {
        check("cnt_eng_wr_data_o", 0, cnt_eng_wr_[kData] & 0xffffffffLL, d.cnt_eng_wr_data_o);
        check("cnt_eng_wr_weight_o", 0, cnt_eng_wr_[kWeight] & 0xffffffffLL, d.cnt_eng_wr_weight_o);
      }
      if constexpr (requires { d.cnt_eng_rd_lanes_o; }) {
        // HY's lanes: brd's bank reads of them and the DMA accesses of their range; their sectors are
        // the shared memory's (above, p2's brd of the lanes included).
        check_range_counters("lanes", ilv_, d.cnt_eng_rd_lanes_o, d.cnt_dma_rd_lanes_o, d.cnt_dma_wr_lanes_o,
                             d.cnt_dma_wait_lanes_o);
      }
      check("cnt_wr_wait_o", 0, cnt_wr_wait_ & 0xffffffffLL, d.cnt_wr_wait_o);
    });
    if (ilv_ >= 0) {
      // A lane view never counts into sectors of its own, and the engine never writes through it.
      const std::string v = smp_ ? "SMP: the model's acc view" : "HY: the model's lanes view";
      long long view_sec = 0;
      for (long long c : sec_cnt_[static_cast<std::size_t>(ilv_)]) view_sec += c;
      check(v + " sector counts", 0, 0, view_sec);
      check(v + "'s engine writes", 0, 0, cnt_eng_wr_[ilv_]);
    }
  }

  // One out-of-range access per kind, each after a reset (err_o is sticky).
  void negative() {
    const Mem& A = mem(iacc_);
    struct Kind {
      std::string name;
      EngAcc drd, wrd, brd, wr;
      DmaAcc dma;
      int keep_m = -1;      // an element (memory, absolute address) the dropped write must not change
      long long keep = -1;
      bool shared = false;  // an HY kind (counted in the shared-memory coverage), or an SMP kind
      bool lanes = false;   // an HY kind of the lanes range (counted in the lane-view coverage)
    };
    std::vector<Kind> kinds;
    auto mk = [](long long a, bool vec = false) {
      EngAcc e;
      e.en = true, e.addr = a, e.vec = vec;
      return e;
    };
    if (!smp_) {
      const Mem& D = mem(kData);
      const Mem& Wm = mem(kWeight);
      {
        Kind k{"drd past the data memory"};
        k.drd = mk(D.ebase + D.elems);
        kinds.push_back(k);
      }
      if (in_.rows > 1) {
        Kind k{"drd vector crossing the end of the data memory"};
        k.drd = mk(D.ebase + D.elems - 1, true);
        kinds.push_back(k);
      }
      {
        Kind k{"wrd in the data memory"};
        k.wrd = mk(D.ebase);
        kinds.push_back(k);
      }
      {
        Kind k{"wrd crossing into the acc memory"};
        k.wrd = mk(Wm.ebase + Wm.elems - (in_.cols > 1 ? 1 : 0));
        kinds.push_back(k);
      }
      {
        Kind k{"brd below the acc memory"};
        k.brd = mk(A.ebase - 1);
        kinds.push_back(k);
      }
      {
        Kind k{"brd past the acc memory"};
        k.brd = mk(A.ebase + A.elems);
        kinds.push_back(k);
      }
      {
        Kind k{"wr in the acc memory"};
        k.wr = mk(A.ebase);
        k.wr.data.assign(static_cast<std::size_t>(in_.cols), 1);
        kinds.push_back(k);
      }
      if (in_.cols > 1) {
        // A record starting at a memory's last element: its in-range lane 0 must keep its value.
        const auto past_end = [&](const char* what, int m, std::int64_t last) {
          Kind k{what};
          k.wr = mk(last, true);
          k.wr.mask = tb::mask64(in_.cols);
          k.wr.data.assign(static_cast<std::size_t>(in_.cols), 0x5a & tb::mask64(in_.ob));
          k.keep_m = m, k.keep = last;
          kinds.push_back(k);
        };
        past_end("wr record with its last lane past the data memory", kData, D.ebase + D.elems - 1);
        past_end("wr record with its last lane past the weight memory", kWeight, Wm.ebase + Wm.elems - 1);
      }
      if (hy_) {
        // HY: accesses straddling two memories or in a memory the port does not reach.
        const Mem& S = mem(kShared);
        auto add = [&](const std::string& name, EngAcc Kind::*port, long long a, bool vec = false) {
          Kind k{name};
          k.*port = mk(a, vec);
          k.shared = true;
          kinds.push_back(k);
        };
        const long long c1 = in_.cols > 1 ? 1 : 0;
        if (in_.rows > 1) {
          add("drd vector crossing weight|acc", &Kind::drd, Wm.ebase + Wm.elems - 1, true);
          add("drd vector crossing acc|shared", &Kind::drd, A.ebase + A.elems - 1, true);
          add("drd vector crossing the end of the shared memory", &Kind::drd, S.ebase + S.elems - 1, true);
        }
        add("drd in the weight memory", &Kind::drd, Wm.ebase + 3);
        add("drd in the acc memory", &Kind::drd, A.ebase + 3);
        add("drd past the shared memory", &Kind::drd, S.ebase + S.elems);
        if (in_.cols > 1) add("wrd crossing data|weight", &Kind::wrd, Wm.ebase - 1);
        if (in_.cols > 1) add("wrd crossing acc|shared", &Kind::wrd, A.ebase + A.elems - 1);  // one element crosses nothing
        add("wrd crossing the end of the shared memory", &Kind::wrd, S.ebase + S.elems - c1);
        add("brd in the shared memory", &Kind::brd, S.ebase + 2 * in_.cols);
        {
          Kind k{"wr past the shared memory"};
          k.wr = mk(S.ebase + S.elems);
          k.wr.data.assign(static_cast<std::size_t>(in_.cols), 1);
          k.shared = true;
          kinds.push_back(k);
        }
        if (in_.cols > 1) {
          Kind k{"wr record with its last lane past the shared memory"};
          k.wr = mk(S.ebase + S.elems - 1, true);
          k.wr.mask = tb::mask64(in_.cols);
          k.wr.data.assign(static_cast<std::size_t>(in_.cols), 0x5a & tb::mask64(in_.ob));
          k.keep_m = kShared, k.keep = S.ebase + S.elems - 1;
          k.shared = true;
          kinds.push_back(k);
          Kind a{"wr record from acc into shared"};
          a.wr = mk(A.ebase + A.elems - 1, true);
          a.wr.mask = tb::mask64(in_.cols);
          a.wr.data.assign(static_cast<std::size_t>(in_.cols), 0x33 & tb::mask64(in_.ob));
          a.keep_m = kShared, a.keep = S.ebase;
          a.shared = true;
          kinds.push_back(a);
        }
        if (ilv_ >= 0) {
          // HY's lanes: brd rows that no memory holds whole (straddling acc|shared, shared|lanes or the
          // end), the byte ports into the lanes (dropped, the lane keeps its value).
          const Mem& L = mem(ilv_);
          auto lanes = [&](const std::string& name, EngAcc Kind::*port, long long a, bool vec = false) {
            Kind k{name};
            k.*port = mk(a, vec);
            k.lanes = true;
            kinds.push_back(k);
            return &kinds.back();
          };
          if (in_.cols > 1) {
            lanes("brd crossing acc|shared", &Kind::brd, A.ebase + A.elems - 1);
            lanes("brd crossing shared|lanes", &Kind::brd, L.ebase - 1);
            lanes("brd crossing the end of the lanes", &Kind::brd, L.ebase + L.elems - 1);
          }
          if (L.ebase + L.elems < (1LL << in_.aw)) lanes("brd past the lanes", &Kind::brd, L.ebase + L.elems);
          lanes("drd in the lanes", &Kind::drd, L.ebase + 3);
          if (in_.rows > 1) lanes("drd vector crossing shared|lanes", &Kind::drd, L.ebase - 1, true);
          lanes("wrd in the lanes", &Kind::wrd, L.ebase + 1);
          Kind* k = lanes("wr in the lanes", &Kind::wr, L.ebase + 5);
          k->wr.data.assign(static_cast<std::size_t>(in_.cols), 0x5a & tb::mask64(in_.ob));
          k->keep_m = ilv_, k->keep = L.ebase + 5;
          if (in_.cols > 1) {
            k = lanes("wr record in the lanes", &Kind::wr, L.ebase + 9, true);
            k->wr.mask = tb::mask64(in_.cols);
            k->wr.data.assign(static_cast<std::size_t>(in_.cols), 0x3c & tb::mask64(in_.ob));
            k->keep_m = ilv_, k->keep = L.ebase + 9;
          }
        }
      }
    } else {
      // SMP: the byte ports into the acc range, brd into the bytes, accesses crossing acc|shared or the end.
      const Mem& S = mem(ish_);
      auto add = [&](const std::string& name, EngAcc Kind::*port, long long a, bool vec = false) {
        Kind k{name};
        k.*port = mk(a, vec);
        k.shared = true;
        kinds.push_back(k);
        return &kinds.back();
      };
      add("drd in the acc range", &Kind::drd, A.ebase + 3);
      if (in_.rows > 1) {
        add("drd vector crossing acc|shared", &Kind::drd, A.ebase + A.elems - 1, true);
        add("drd vector crossing the end of the shared range", &Kind::drd, S.ebase + S.elems - 1, true);
      }
      add("drd past the shared range", &Kind::drd, S.ebase + S.elems);
      add("wrd in the acc range", &Kind::wrd, A.ebase);
      if (in_.cols > 1) add("wrd crossing acc|shared", &Kind::wrd, S.ebase - 1);
      add("wrd crossing the end of the shared range", &Kind::wrd, S.ebase + S.elems - (in_.cols > 1 ? 1 : 0));
      add("brd in the shared range", &Kind::brd, S.ebase + 2 * in_.cols);
      if (in_.cols > 1) add("brd crossing acc|shared", &Kind::brd, A.ebase + A.elems - 1);
      add("brd past the shared range", &Kind::brd, S.ebase + S.elems);
      {
        // A scalar result into the acc range: dropped, the lane keeps its value.
        Kind* k = add("wr in the acc range", &Kind::wr, A.ebase + 5);
        k->wr.data.assign(static_cast<std::size_t>(in_.cols), 0x5a & tb::mask64(in_.ob));
        k->keep_m = iacc_, k->keep = A.ebase + 5;
      }
      if (in_.cols > 1) {
        Kind* k = add("wr record in the acc range", &Kind::wr, A.ebase + 9, true);
        k->wr.mask = tb::mask64(in_.cols);
        k->wr.data.assign(static_cast<std::size_t>(in_.cols), 0x3c & tb::mask64(in_.ob));
        k->keep_m = iacc_, k->keep = A.ebase + 9;
        k = add("wr record from acc's last lane into shared", &Kind::wr, A.ebase + A.elems - 1, true);
        k->wr.mask = tb::mask64(in_.cols);
        k->wr.data.assign(static_cast<std::size_t>(in_.cols), 0x33 & tb::mask64(in_.ob));
        k->keep_m = ish_, k->keep = S.ebase;
        k = add("wr record with its last lane past the shared range", &Kind::wr, S.ebase + S.elems - 1, true);
        k->wr.mask = tb::mask64(in_.cols);
        k->wr.data.assign(static_cast<std::size_t>(in_.cols), 0x5a & tb::mask64(in_.ob));
        k->keep_m = ish_, k->keep = S.ebase + S.elems - 1;
      }
      {
        Kind* k = add("wr past the shared range", &Kind::wr, S.ebase + S.elems);
        k->wr.data.assign(static_cast<std::size_t>(in_.cols), 1);
      }
    }
    const long long end_all = mem(nm() - 1).ebase + mem(nm() - 1).elems;  // past the last memory
    if (end_all < (1LL << in_.sa)) {
      Kind k{"DMA element past the memories"};
      k.dma = {true, true, end_all, random_word(), 0};
      kinds.push_back(k);
      Kind r{"DMA read past the memories (returns 0)"};
      r.dma = {true, false, end_all, {}, 0};
      kinds.push_back(r);
    }
    // DMA accesses that are not whole lanes of one word: dropped, the element keeps its value.
    for (int m = 0; m < nm(); ++m) {
      const Mem& M = mem(m);
      if (M.lanes > 1) {
        // Two lanes starting in the last lane of a word (crossing into the next word), as write and read.
        const int z = lane_size(m) + 1;
        const long long a = M.ebase + 3 * M.lanes + (M.lanes - 1);
        Kind k{"DMA write crossing a word (" + M.name + ")"};
        k.dma = {true, true, a, random_word(), z};
        k.keep_m = m, k.keep = a;
        k.shared = m == ish_;
        k.lanes = !smp_ && m == ilv_;
        kinds.push_back(k);
        Kind r{"DMA read crossing a word (" + M.name + ", returns 0)"};
        r.dma = {true, false, a, {}, z};
        r.shared = m == ish_;
        r.lanes = !smp_ && m == ilv_;
        kinds.push_back(r);
      }
      if (word_size(m) + 1 <= (1 << in_.size_bits) - 1) {
        Kind k{"DMA access wider than the word (" + M.name + ")"};
        k.dma = {true, true, M.ebase + 5 * M.lanes, random_word(), word_size(m) + 1};
        k.keep_m = m, k.keep = M.ebase + 5 * M.lanes;
        k.shared = m == ish_;
        k.lanes = !smp_ && m == ilv_;
        kinds.push_back(k);
      }
    }
    for (int z = 0; z < lane_size(iacc_); ++z) {
      Kind k{"DMA " + std::to_string(1 << z) + "-byte access into acc"};
      k.dma = {true, true, A.ebase + 7, random_word(), z};
      k.keep_m = iacc_, k.keep = A.ebase + 7;
      kinds.push_back(k);
    }
    for (int z = 0; !smp_ && ilv_ >= 0 && z < lane_size(ilv_); ++z) {  // HY: the same into the lanes
      Kind k{"DMA " + std::to_string(1 << z) + "-byte access into the lanes"};
      k.dma = {true, true, mem(ilv_).ebase + 7, random_word(), z};
      k.keep_m = ilv_, k.keep = mem(ilv_).ebase + 7;
      k.lanes = true;
      kinds.push_back(k);
    }
    for (Kind& k : kinds) {
      sim_.reset();
      for (auto& r : last_req_) std::fill(r.begin(), r.end(), -1000000);
      pending_.clear();
      const auto keep_ref = [&] {
        return k.keep >= 0 ? ref_get(k.keep_m, k.keep - mem(k.keep_m).ebase) : 0u;
      };
      const std::uint32_t keep_before = keep_ref();
      check("err_o after reset (" + k.name + ")", 0, 0, d_->err_o);
      cycle(k.drd, k.wrd, k.brd, k.wr, k.dma);
      check("err_o (" + k.name + ")", k.drd.addr | k.wrd.addr | k.brd.addr | k.wr.addr | k.dma.addr, 1, d_->err_o);
      neg_kinds_ += d_->err_o ? 1 : 0;
      if (k.shared) sh_.neg += d_->err_o ? 1 : 0;
      if (smp_ || k.lanes) vs_.neg += d_->err_o ? 1 : 0;  // SMP: every kind is the one scratchpad's
      if (k.keep >= 0) {
        // The dropped write left the element alone: read it back (a legal one-lane DMA read).
        cycle({}, {}, {}, {}, DmaAcc{true, false, k.keep, {}, lane_size(k.keep_m)}, true);
        check("dropped write (" + k.name + ")", k.keep, keep_before, keep_ref());
      }
      cycle({}, {}, {}, {}, {}, true);  // the last read's data (a dropped read: 0)
      pending_.clear();
    }
    if (in_.pg) {
      // An engine read of a sleeping sector: the scratchpad refuses it and flags it; err_o follows.
      if (!smp_) {
        const Mem& D = mem(kData);
        sim_.reset();
        for (auto& r : last_req_) std::fill(r.begin(), r.end(), -1000000);
        pending_.clear();
        req_[kData][0] = 1;
        idle_cycle();
        req_[kData][0] = 1;
        idle_cycle();
        EngAcc r = mk(D.ebase);  // element 0: sector 0
        pending_.clear();
        cycle(r, {}, {}, {}, {}, true);
        pending_.clear();
        cycle({}, {}, {}, {}, {}, true);  // the scratchpad's flag is registered, err_sticky one later
        pending_.clear();
        check("err_o (engine read of a sleeping sector)", D.ebase, 1, d_->err_o);
        neg_kinds_ += d_->err_o ? 1 : 0;
        req_[kData][0] = 0;
      }
      // The same for the shared memory (a drd on port p0 into sector 0; with a lane view also a brd on
      // port p2 into sector 0 through it).
      for (const char* port : {"drd", "brd"}) {
        if (ish_ < 0 || (std::string(port) == "brd" && ilv_ < 0)) continue;
        const int m = std::string(port) == "brd" ? ilv_ : ish_;
        const Mem& S = mem(m);
        sim_.reset();
        for (auto& lr : last_req_) std::fill(lr.begin(), lr.end(), -1000000);
        pending_.clear();
        req_[static_cast<std::size_t>(ish_)][0] = 1;
        idle_cycle();
        idle_cycle();
        pending_.clear();
        if (std::string(port) == "brd") cycle({}, {}, mk(S.ebase), {}, {}, true);
        else cycle(mk(S.ebase), {}, {}, {}, {}, true);
        pending_.clear();
        cycle({}, {}, {}, {}, {}, true);
        pending_.clear();
        check(std::string("err_o (engine read of a sleeping shared sector") + (ilv_ >= 0 ? ", " + std::string(port) : "") + ")", S.ebase, 1, d_->err_o);
        neg_kinds_ += d_->err_o ? 1 : 0;
        sh_.neg += d_->err_o ? 1 : 0;
        if (smp_ || std::string(port) == "brd") vs_.neg += d_->err_o ? 1 : 0;
        req_[static_cast<std::size_t>(ish_)][0] = 0;
      }
    }
  }

  const tb::Args& args_;
  Info in_;
  tb::Sim sim_;
  tb::Rng rng_;
  tb::Report report_;
  std::unique_ptr<Vmemsys> d_;
  std::vector<std::vector<std::uint32_t>> ref_;
  std::vector<std::vector<long long>> last_req_;
  std::vector<std::vector<int>> req_;
  std::vector<Pending> pending_;
  std::uint64_t t_ = 0;
  long long errors_ = 0, checks_ = 0;
  bool hy_ = false;  // the shared memory exists (mems[3])
  bool smp_ = false;  // SMP: mems = {acc (a view of the shared memory's 32-bit lanes), shared (its bytes)}
  int iacc_ = kAcc, ish_ = -1;  // indices of the acc memory (SMP: its lanes view) and of the shared bytes (-1: none)
  int ilv_ = -1;                // the lane view of the shared memory (SMP: acc = iacc_, HY: lanes = mems[4]; -1: none)
  std::vector<int> phys_;       // per memory: the memory whose scratchpad holds its words (a lane view: shared)
  std::vector<std::uint8_t> view_of_;  // a lane view, per storage byte: last written through 1 lanes, 2 bytes, 0 not since the fill
  long long cnt_eng_rd_[kMaxMems] = {}, cnt_dma_rd_[kMaxMems] = {}, cnt_dma_wr_[kMaxMems] = {}, cnt_dma_wait_[kMaxMems] = {},
            cnt_eng_wr_[kMaxMems] = {}, cnt_wr_wait_ = 0;
  long long dma_size_cnt_[kMaxMems][8] = {};
  bool last_ready_ = false, last_gnt_ = false;  // the rule's wr_ready / spm_gnt of the last cycle
  struct SharedStats {  // HY coverage of the shared memory
    long long drd_scalar = 0, drd_vec = 0, wrd = 0, drd_wrd = 0, wr_scalar = 0, wr_vec = 0, wr_elems = 0, wr_cycles = 0,
              wr_waits = 0, p0_p1_bank = 0, p0_p1_word = 0, dma_req = 0, dma_busy = 0, dma_sleep = 0, same_word = 0,
              neg = 0;
  } sh_;
  struct ViewStats {  // lane-view coverage, SMP and HY with lanes (per range: [ilv_], [ish_]); brd_acc: HY
    long long brd = 0, brd_acc = 0, brd_wr_word = 0, brd_rd_bank = 0, dma_req[kMaxMems] = {}, dma_wait[kMaxMems] = {},
              dma_rd[kMaxMems] = {}, dma_wr[kMaxMems] = {}, dma_wait_brd[kMaxMems] = {}, dma_wait_p01[kMaxMems] = {},
              dma_sleep[kMaxMems] = {}, xv_lane = 0, xv_byte = 0, xv_directed = 0, same_word = 0, neg = 0;
  } vs_;
  std::vector<std::vector<long long>> sec_cnt_;  // per scratchpad (SMP: the acc view's stay 0)
  long long eng_reads_checked_ = 0, vec_reads_ = 0, wr_elems_ = 0, vec_writes_ = 0, dma_reads_checked_ = 0,
            dma_writes_ = 0, wr_waits_ = 0, wr_weight_elems_ = 0, wr_weight_waits_ = 0, wr_en_cycles_ = 0, dma_waits_ = 0, dma_req_cycles_ = 0, sleep_blocked_ = 0,
            same_word_ = 0;
  int neg_kinds_ = 0;
};

#endif

}  // namespace

int memsys_tb_main(int argc, char** argv) {
  const tb::Args args = tb::Args::parse(argc, argv, "");
  const Info info = load_info(args.rtl_dir);
  if (!info.supported) {
#ifdef CAPSGEN_TB_MEMSYS
    std::fprintf(stderr, "FAIL memsys: capsgen_memsys was built but memsys.json says it is not supported\n");
    return 1;
#else
    std::printf("SKIP memsys: no capsgen_memsys in this design (%s)\n", info.reason.c_str());
    return 0;
#endif
  }
#ifdef CAPSGEN_TB_MEMSYS
  MemsysBench b(args, info);
  return b.run();
#else
  std::fprintf(stderr, "FAIL memsys: memsys.json says supported, but the model was not built\n");
  return 1;
#endif
}
