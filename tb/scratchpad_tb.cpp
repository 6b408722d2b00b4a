// Block test of the DESCNet scratchpad memories (capsgen_spm_<name>): every memory of the preset's
// organization (--mode data|weight|acc|shared, default all), checked against a shadow model:
//   - random reads and writes on every bank and port (read data bit-exact, one cycle later);
//   - sleep/wake sequences on every sector index with the handshake timing of
//     docs/rtl-scratchpad.md: sleep_ack_o rises the cycle after a request cycle and falls exactly
//     wakeup_cycles + 1 cycles after the last request cycle; checked every cycle;
//   - contents are lost when a sector sleeps: the shadow model marks the sector's words undefined
//     (non-retentive, DESCNet); a read of such a word is a failure in the positive phases, and the
//     lost-data phase checks that every deliberate read of lost data is caught;
//   - negative tests: accesses to sleeping / waking sectors (also one cycle before wake-up), word
//     offsets past a sector (non-power-of-2 sectors), same-word writes on two ports (multi-port):
//     each must raise its err_*_o flag in the next cycle and err_sticky_o afterwards; a refused
//     write must not change the memory, a refused read returns 0.
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "common/bits.hpp"
#include "common/rng.hpp"
#include "common/sim.hpp"
#ifdef CAPSGEN_TB_SPM_DATA
#include "Vspm_data.h"
#endif
#ifdef CAPSGEN_TB_SPM_WEIGHT
#include "Vspm_weight.h"
#endif
#ifdef CAPSGEN_TB_SPM_ACC
#include "Vspm_acc.h"
#endif
#ifdef CAPSGEN_TB_SPM_SHARED
#include "Vspm_shared.h"
#endif

namespace {

using tb::clog2;

struct MemInfo {
  std::string name;
  int size_kib = 0, banks = 0, sectors = 0, width = 0, ports = 0;
  // Derived (docs/rtl-scratchpad.md, "Geometry").
  long long wps = 0;  // words per sector
  int sb = 0, ob = 0, aw = 0;
};

struct SpmConfig {
  std::string organization;
  bool power_gating = false;
  int wakeup = 0;
  std::vector<MemInfo> mems;

  static SpmConfig load(const std::string& dir) {
    const tb::Summary s(dir, "scratchpad");
    SpmConfig c;
    c.organization = s.str("organization");
    c.power_gating = s.flag("power_gating");
    c.wakeup = s.num("wakeup_cycles");
    for (const tb::Summary& e : s.list("memories")) {
      MemInfo m;
      m.name = e.str("name");
      m.size_kib = e.num("size_kib");
      m.banks = e.num("banks");
      m.sectors = e.num("sectors");
      m.width = e.num("width_bits");
      m.ports = e.num("ports");
      m.wps = static_cast<long long>(m.size_kib) * 1024 / (static_cast<long long>(m.banks) * m.sectors * (m.width / 8));
      m.sb = clog2(m.sectors);
      m.ob = std::max(1, clog2(m.wps));
      m.aw = m.sb + m.ob;
      c.mems.push_back(m);
    }
    return c;
  }
};

// Ports of a Verilated memory model, reached by port index at run time.
template <class M>
struct PortIo {
  std::function<void(int b, bool en, bool we, std::uint64_t be, std::uint64_t addr, const std::uint32_t* wdata)> drive;
  std::function<bool(int b)> rvalid;
  std::function<void(int b, std::uint32_t* rdata)> rdata;
};

template <class M, int K>
PortIo<M> make_port(M& m, int banks, int aw, int w) {
  PortIo<M> io;
  auto& en = [&m]() -> auto& {
    if constexpr (K == 0) return m.p0_en_i;
    else if constexpr (K == 1) return m.p1_en_i;
    else return m.p2_en_i;
  }();
  auto& we = [&m]() -> auto& {
    if constexpr (K == 0) return m.p0_we_i;
    else if constexpr (K == 1) return m.p1_we_i;
    else return m.p2_we_i;
  }();
  auto& addr = [&m]() -> auto& {
    if constexpr (K == 0) return m.p0_addr_i;
    else if constexpr (K == 1) return m.p1_addr_i;
    else return m.p2_addr_i;
  }();
  auto& bep = [&m]() -> auto& {
    if constexpr (K == 0) return m.p0_be_i;
    else if constexpr (K == 1) return m.p1_be_i;
    else return m.p2_be_i;
  }();
  auto& wd = [&m]() -> auto& {
    if constexpr (K == 0) return m.p0_wdata_i;
    else if constexpr (K == 1) return m.p1_wdata_i;
    else return m.p2_wdata_i;
  }();
  auto& rv = [&m]() -> auto& {
    if constexpr (K == 0) return m.p0_rvalid_o;
    else if constexpr (K == 1) return m.p1_rvalid_o;
    else return m.p2_rvalid_o;
  }();
  auto& rd = [&m]() -> auto& {
    if constexpr (K == 0) return m.p0_rdata_o;
    else if constexpr (K == 1) return m.p1_rdata_o;
    else return m.p2_rdata_o;
  }();
  // The lambdas keep pointers to the model's port members (the model lives on the heap).
  auto *enp = &en, *wep = &we;
  auto* addrp = &addr;
  auto* wdp = &wd;
  auto* bepp = &bep;
  auto* rvp = &rv;
  auto* rdp = &rd;
  io.drive = [enp, wep, bepp, addrp, wdp, aw, w](int b, bool e, bool wr, std::uint64_t be, std::uint64_t a,
                                                 const std::uint32_t* data) {
    tb::put(*enp, b, 1, e);
    tb::put(*wep, b, 1, wr);
    tb::put(*bepp, b * (w / 8), w / 8, be);
    tb::put(*addrp, b * aw, aw, a);
    for (int c = 0; c * 32 < w; ++c) tb::put(*wdp, b * w + c * 32, std::min(32, w - c * 32), data[c]);
  };
  io.rvalid = [rvp](int b) { return tb::get(*rvp, b, 1) != 0; };
  io.rdata = [rdp, w](int b, std::uint32_t* out) {
    for (int c = 0; c * 32 < w; ++c)
      out[c] = static_cast<std::uint32_t>(tb::get(*rdp, b * w + c * 32, std::min(32, w - c * 32)));
  };
  (void)banks;
  return io;
}

template <class M>
class MemBench {
 public:
  MemBench(const tb::Args& args, const SpmConfig& cfg, const MemInfo& mi)
      : args_(args), cfg_(cfg), mi_(mi), sim_(args), rng_(args.seed * 131 + mi.name.size()),
        report_("spm_" + mi.name, args.max_errors) {
    m_ = std::make_unique<M>(sim_.context(), ("spm_" + mi.name).c_str());
    sim_.add(*m_);
    sim_.open_trace();
    B_ = mi.banks, SC_ = mi.sectors, W_ = mi.width, P_ = mi.ports, NC_ = (mi.width + 31) / 32;
    ports_.push_back(make_port<M, 0>(*m_, B_, mi.aw, W_));
    if constexpr (requires { m_->p1_en_i; }) ports_.push_back(make_port<M, 1>(*m_, B_, mi.aw, W_));
    if constexpr (requires { m_->p2_en_i; }) ports_.push_back(make_port<M, 2>(*m_, B_, mi.aw, W_));
    if (static_cast<int>(ports_.size()) != P_) throw std::runtime_error("model port count != scratchpad.json");
    if constexpr (requires { m_->sleep_req_i; }) {
      if (!cfg.power_gating) throw std::runtime_error("sleep ports present without power gating");
    } else if (cfg.power_gating) {
      throw std::runtime_error("power gating without sleep ports");
    }
    const std::size_t words = static_cast<std::size_t>(B_) * SC_ * static_cast<std::size_t>(mi.wps);
    shadow_.assign(words * NC_, 0);
    valid_.assign(words, 0);
    req_.assign(SC_, 0);
    last_req_.assign(SC_, -1);
    pow2_ = (1LL << mi.ob) == mi.wps;
    sim_.reset();
  }

  int run() {
    const long long cycles = static_cast<long long>(20000 * args_.scale);
    phase_ = Phase::kPositive;
    for (long long i = 0; i < cycles && !report_.too_many(); ++i) cycle();
    idle(cfg_.wakeup + 4);
    report_.check(sim_.cycle(), "err_sticky_o after the positive phase", 0, sticky());
    if (cfg_.power_gating) {
      lost_data_phase();
      report_.check(sim_.cycle(), "err_sticky_o after the lost-data phase", 0, sticky());
      directed_wake_boundary();
    }
    phase_ = Phase::kNegative;
    for (long long i = 0; i < cycles / 4 && !report_.too_many(); ++i) cycle();
    idle(cfg_.wakeup + 4);
    if (neg_sleep_ + neg_addr_ + neg_conflict_ > 0)
      report_.check(sim_.cycle(), "err_sticky_o after the negative phase", 1, sticky());
    sim_.finish();
    if (reads_checked_ == 0 || writes_ == 0 || partial_writes_ == 0)
      report_.fail(sim_.cycle(), "no reads, writes or partial (byte-enable) writes checked");
    if (cfg_.power_gating && (sleeps_ == 0 || lost_detected_ == 0 || neg_sleep_ == 0))
      report_.fail(sim_.cycle(), "stimulus missed sleep cycles, lost-data reads or sleeping-sector accesses");
    if (!pow2_ && neg_addr_ == 0) report_.fail(sim_.cycle(), "stimulus missed out-of-range word offsets");
    if (P_ > 1 && neg_conflict_ == 0) report_.fail(sim_.cycle(), "stimulus missed write conflicts");
    char extra[320];
    std::snprintf(extra, sizeof extra,
                  "%s: %d bank(s) x %d sector(s) x %lld words x %d bits, %d port(s), wakeup %d; %llu cycles, %lld reads "
                  "checked, %lld writes (%lld partial), %lld sleeps, %lld lost-data reads caught, refused: %lld sleeping, %lld offset, "
                  "%lld conflicts",
                  mi_.name.c_str(), B_, SC_, mi_.wps, W_, P_, cfg_.wakeup, static_cast<unsigned long long>(sim_.cycle()),
                  reads_checked_, writes_, partial_writes_, sleeps_, lost_detected_, neg_sleep_, neg_addr_, neg_conflict_);
    return report_.summary(extra);
  }

 private:
  enum class Phase { kPositive, kNegative, kDirected };
  struct Access {
    bool en = false, we = false;
    int sector = 0;
    long long off = 0;
    std::vector<std::uint32_t> data;
    std::uint64_t be = ~std::uint64_t{0};  // byte lanes written (partial writes only to defined words)
  };
  struct ReadCheck {
    int b = 0, k = 0;
    bool refused = false;
    bool lost = false;  // the word was undefined in the shadow model
    std::vector<std::uint32_t> value;
    std::string where;
  };

  std::size_t word_index(int b, int s, long long off) const {
    return (static_cast<std::size_t>(b) * SC_ + static_cast<std::size_t>(s)) * static_cast<std::size_t>(mi_.wps) +
           static_cast<std::size_t>(off);
  }
  std::uint64_t addr_of(int s, long long off) const {
    return (static_cast<std::uint64_t>(s) << mi_.ob) | static_cast<std::uint64_t>(off);
  }
  // Handshake contract: ack(t) = 1 iff some cycle L < t had the request high and t - L <= wakeup + 1,
  // taking the last such L. A sector is usable exactly when its ack is low.
  bool ack_model(int s, std::uint64_t t) const {
    return last_req_[static_cast<std::size_t>(s)] >= 0 &&
           static_cast<long long>(t) - last_req_[static_cast<std::size_t>(s)] <= cfg_.wakeup + 1;
  }
  long long sticky() const { return m_->err_sticky_o; }
  std::vector<std::uint32_t> random_word() {
    std::vector<std::uint32_t> w(static_cast<std::size_t>(NC_));
    for (int c = 0; c < NC_; ++c) {
      const int bits = std::min(32, W_ - 32 * c);
      w[static_cast<std::size_t>(c)] = static_cast<std::uint32_t>(rng_.next() & tb::mask64(bits));
    }
    return w;
  }
  std::string hex(const std::vector<std::uint32_t>& w) const {
    std::string s;
    char buf[16];
    for (int c = NC_ - 1; c >= 0; --c) {
      std::snprintf(buf, sizeof buf, "%08x", w[static_cast<std::size_t>(c)]);
      s += buf;
    }
    return s;
  }
  long long word_value(const std::vector<std::uint32_t>& w) const { return static_cast<long long>(w[0]); }

  // ---- one cycle with the accesses `acc[b][k]` and sleep requests `req_` ----
  void apply(std::vector<std::vector<Access>>& acc) {
    const std::uint64_t t = sim_.cycle();
    // Outputs of this cycle: handshake, read data and errors of the previous cycle.
    if (cfg_.power_gating) {
      if constexpr (requires { m_->sleep_ack_o; }) {
        for (int s = 0; s < SC_; ++s)
          report_.check(t, "sleep_ack_o sector=" + std::to_string(s), ack_model(s, t),
                        static_cast<long long>(tb::get(m_->sleep_ack_o, s, 1)));
      }
    }
    for (const ReadCheck& r : reads_) {
      const auto& port = ports_[static_cast<std::size_t>(r.k)];
      report_.check(t, "p" + std::to_string(r.k) + "_rvalid_o " + r.where, 1, port.rvalid(r.b));
      std::vector<std::uint32_t> got(static_cast<std::size_t>(NC_));
      port.rdata(r.b, got.data());
      if (r.lost) {
        // The RTL keeps the bits; only the shadow model knows they are gone.
        ++lost_detected_;
        if (phase_ != Phase::kDirected || !expect_lost_)
          report_.fail(t, "read of lost data (word not rewritten since its sector slept) " + r.where);
        continue;
      }
      ++reads_checked_;
      const std::vector<std::uint32_t> want = r.refused ? std::vector<std::uint32_t>(static_cast<std::size_t>(NC_), 0u) : r.value;
      if (got != want) {
        if (W_ <= 64)
          report_.mismatch(t, "p" + std::to_string(r.k) + "_rdata_o " + r.where, word_value(want), word_value(got));
        else
          report_.fail(t, "p" + std::to_string(r.k) + "_rdata_o " + r.where + " expected=" + hex(want) + " actual=" + hex(got));
      }
    }
    // rvalid low where no read was issued.
    for (int k = 0; k < P_; ++k)
      for (int b = 0; b < B_; ++b) {
        bool issued = false;
        for (const ReadCheck& r : reads_) issued |= (r.b == b && r.k == k);
        if (!issued) report_.check(t, "p" + std::to_string(k) + "_rvalid_o (no read) bank=" + std::to_string(b), 0,
                                   ports_[static_cast<std::size_t>(k)].rvalid(b));
      }
    report_.check(t, "err_sleep_o", exp_err_sleep_, m_->err_sleep_o);
    if constexpr (requires { m_->err_addr_o; }) report_.check(t, "err_addr_o", exp_err_addr_, m_->err_addr_o);
    if constexpr (requires { m_->err_conflict_o; })
      report_.check(t, "err_conflict_o", exp_err_conflict_, m_->err_conflict_o);
    if (exp_err_sleep_ || exp_err_addr_ || exp_err_conflict_) exp_sticky_ = 1;
    report_.check(t, "err_sticky_o", exp_sticky_, m_->err_sticky_o);

    // Inputs of this cycle and the model's response.
    reads_.clear();
    exp_err_sleep_ = exp_err_addr_ = exp_err_conflict_ = 0;
    for (int k = 0; k < P_; ++k)
      for (int b = 0; b < B_; ++b) {
        const Access& a = acc[static_cast<std::size_t>(b)][static_cast<std::size_t>(k)];
        ports_[static_cast<std::size_t>(k)].drive(b, a.en, a.we, a.be, addr_of(a.sector, a.off),
                                                  a.data.empty() ? zero_.data() : a.data.data());
      }
    if constexpr (requires { m_->sleep_req_i; }) {
      for (int s = 0; s < SC_; ++s) tb::put(m_->sleep_req_i, s, 1, req_[static_cast<std::size_t>(s)]);
    }
    // Reads see the words before this cycle's writes.
    std::vector<std::pair<std::size_t, const Access*>> writes;
    for (int b = 0; b < B_; ++b) {
      for (int k = 0; k < P_; ++k) {
        const Access& a = acc[static_cast<std::size_t>(b)][static_cast<std::size_t>(k)];
        if (!a.en) continue;
        const bool off_ok = a.off < mi_.wps;
        const bool on = !ack_model(a.sector, t);
        const bool ok = on && off_ok;
        if (!on) exp_err_sleep_ = 1;
        if (!off_ok) exp_err_addr_ = 1;
        char where[120];
        std::snprintf(where, sizeof where, "bank=%d sector=%d word=%lld addr=0x%llx cycle_issued=%llu", b, a.sector, a.off,
                      static_cast<unsigned long long>(addr_of(a.sector, a.off)), static_cast<unsigned long long>(t));
        if (a.we) {
          if (ok) writes.push_back({word_index(b, a.sector, a.off), &a});
        } else {
          ReadCheck r;
          r.b = b;
          r.k = k;
          r.where = where;
          r.refused = !ok;
          if (ok) {
            const std::size_t wi = word_index(b, a.sector, a.off);
            r.lost = !valid_[wi];
            r.value.assign(shadow_.begin() + static_cast<std::ptrdiff_t>(wi * NC_),
                           shadow_.begin() + static_cast<std::ptrdiff_t>((wi + 1) * NC_));
          }
          reads_.push_back(std::move(r));
        }
      }
      // Same-word writes of two ports in one bank: flagged; the highest port wins.
      for (std::size_t i = 0; i < writes.size(); ++i)
        for (std::size_t j = i + 1; j < writes.size(); ++j)
          if (writes[i].first == writes[j].first) exp_err_conflict_ = 1;
      for (const auto& [wi, a] : writes) {
        for (int byte = 0; byte < W_ / 8; ++byte) {  // the enabled byte lanes only
          if (!((a->be >> byte) & 1)) continue;
          std::uint32_t& dst = shadow_[wi * NC_ + static_cast<std::size_t>(byte / 4)];
          const std::uint32_t m = 0xffu << (8 * (byte % 4));
          dst = (dst & ~m) | (a->data[static_cast<std::size_t>(byte / 4)] & m);
        }
        if (a->be != ~std::uint64_t{0}) ++partial_writes_;
        valid_[wi] = 1;
        ++writes_;
      }
      writes.clear();
    }
    // A request cycle puts the sector to sleep at the edge: its contents are gone.
    for (int s = 0; s < SC_; ++s) {
      if (!req_[static_cast<std::size_t>(s)]) continue;
      if (!ack_model(s, t)) ++sleeps_;
      last_req_[static_cast<std::size_t>(s)] = static_cast<long long>(t);
      for (int b = 0; b < B_; ++b)
        for (long long o = 0; o < mi_.wps; ++o) valid_[word_index(b, s, o)] = 0;
    }
    sim_.step();
  }

  std::vector<std::vector<Access>> no_access() const {
    return std::vector<std::vector<Access>>(static_cast<std::size_t>(B_), std::vector<Access>(static_cast<std::size_t>(P_)));
  }
  void idle(int n) {
    for (int i = 0; i < n; ++i) {
      auto acc = no_access();
      apply(acc);
    }
  }

  // A random valid (usable, written) word of bank b, or -1.
  long long pick_valid(int b, int s) {
    for (int tries = 0; tries < 8; ++tries) {
      const long long o = rng_.uniform(0, mi_.wps - 1);
      if (valid_[word_index(b, s, o)]) return o;
    }
    return -1;
  }

  void cycle() {
    const std::uint64_t t = sim_.cycle();
    // PMU: occasionally put a sector to sleep or wake it (not all sectors at once).
    if (cfg_.power_gating) {
      for (int s = 0; s < SC_; ++s) {
        auto& r = req_[static_cast<std::size_t>(s)];
        if (r) {
          if (rng_.chance(phase_ == Phase::kNegative ? 20 : 3)) r = 0;
        } else if (rng_.chance(SC_ > 1 ? 1 : 0) || (phase_ == Phase::kNegative && rng_.chance(5))) {
          r = 1;
        }
      }
    }
    auto acc = no_access();
    for (int b = 0; b < B_; ++b) {
      std::vector<std::pair<int, long long>> written_here;  // avoid same-word writes (positive)
      for (int k = 0; k < P_; ++k) {
        if (!rng_.chance(70)) continue;
        Access& a = acc[static_cast<std::size_t>(b)][static_cast<std::size_t>(k)];
        a.sector = static_cast<int>(rng_.uniform(0, SC_ - 1));
        a.off = rng_.uniform(0, mi_.wps - 1);
        a.we = rng_.chance(45);
        const bool usable = !ack_model(a.sector, t);
        if (phase_ == Phase::kNegative) {
          const int kind = static_cast<int>(rng_.uniform(0, 9));
          if (kind == 0 && !pow2_) {
            a.off = rng_.uniform(mi_.wps, (1LL << mi_.ob) - 1);  // past the sector
            ++neg_addr_;
          } else if (kind == 1 && P_ > 1 && k > 0 && acc[static_cast<std::size_t>(b)][0].en &&
                     acc[static_cast<std::size_t>(b)][0].we) {
            a.sector = acc[static_cast<std::size_t>(b)][0].sector;  // same word as port 0's write
            a.off = acc[static_cast<std::size_t>(b)][0].off;
            a.we = true;
            if (usable && a.off < mi_.wps) ++neg_conflict_;
          }
          if (!usable) ++neg_sleep_;
        } else {
          if (!usable) continue;  // positive phase: only usable sectors
          if (!a.we) {
            a.off = pick_valid(b, a.sector);
            if (a.off < 0) {
              a.we = true;
              a.off = rng_.uniform(0, mi_.wps - 1);
            }
          }
          if (a.we) {
            bool clash = false;
            for (const auto& [s2, o2] : written_here) clash |= (s2 == a.sector && o2 == a.off);
            if (clash) continue;
            written_here.push_back({a.sector, a.off});
          }
        }
        a.en = true;
        if (a.we) a.data = random_word();
        // Partial writes (byte enables) to words that are defined, so the kept lanes are checked.
        if (phase_ != Phase::kNegative && a.we && valid_[word_index(b, a.sector, a.off)] && rng_.chance(30))
          a.be = rng_.next() & tb::mask64(W_ / 8);
        if (phase_ == Phase::kNegative && !a.we && a.off < mi_.wps && usable &&
            !valid_[word_index(b, a.sector, a.off)]) {
          // Reading undefined words is not what this phase tests: turn it into a write.
          a.we = true;
          a.data = random_word();
        }
      }
    }
    apply(acc);
  }

  // Write words into every sector, sleep and wake each sector index, read the old words back:
  // every one of them must be caught as lost; rewritten words must read back correctly.
  void lost_data_phase() {
    phase_ = Phase::kDirected;
    std::fill(req_.begin(), req_.end(), 0);
    idle(cfg_.wakeup + 3);
    for (int s = 0; s < SC_; ++s) {
      std::vector<long long> offs;
      for (int i = 0; i < 3; ++i) offs.push_back(rng_.uniform(0, mi_.wps - 1));
      for (long long o : offs) {  // write
        auto acc = no_access();
        for (int b = 0; b < B_; ++b) {
          Access& a = acc[static_cast<std::size_t>(b)][0];
          a.en = a.we = true;
          a.sector = s;
          a.off = o;
          a.data = random_word();
        }
        apply(acc);
      }
      req_[static_cast<std::size_t>(s)] = 1;  // sleep for a few cycles, then wake
      idle(1 + static_cast<int>(rng_.uniform(0, 3)));
      req_[static_cast<std::size_t>(s)] = 0;
      while (ack_model(s, sim_.cycle())) idle(1);
      // The first write after wake-up lands in the first usable cycle.
      const long long fresh = offs[0];
      {
        auto acc = no_access();
        Access& a = acc[0][0];
        a.en = a.we = true;
        a.sector = s;
        a.off = fresh;
        a.data = random_word();
        apply(acc);
      }
      const long long before = lost_detected_;
      expect_lost_ = true;
      for (long long o : offs) {
        auto acc = no_access();
        for (int b = 0; b < B_; ++b) {
          Access& a = acc[static_cast<std::size_t>(b)][0];
          a.en = true;
          a.sector = s;
          a.off = o;
        }
        apply(acc);
      }
      idle(1);
      expect_lost_ = false;
      // Words of bank 0 at `fresh` were rewritten; every other read word was lost.
      long long lost_reads = 0;
      for (long long o : offs)
        for (int b = 0; b < B_; ++b) lost_reads += !(b == 0 && o == fresh);
      if (lost_detected_ - before != lost_reads)
        report_.fail(sim_.cycle(), "sector " + std::to_string(s) + ": " + std::to_string(lost_detected_ - before) +
                                       " lost-data reads caught, expected " + std::to_string(lost_reads));
    }
    phase_ = Phase::kPositive;
  }

  // For each sector: an access in the last waking cycle is refused, one in the first awake cycle
  // is accepted (and a write there sticks).
  void directed_wake_boundary() {
    phase_ = Phase::kDirected;
    for (int s = 0; s < SC_; ++s) {
      req_[static_cast<std::size_t>(s)] = 1;
      idle(1);
      req_[static_cast<std::size_t>(s)] = 0;
      // Step to the last cycle with ack high.
      while (ack_model(s, sim_.cycle() + 1)) idle(1);
      auto acc = no_access();
      Access& a = acc[0][0];
      a.en = a.we = true;
      a.sector = s;
      a.off = 0;
      a.data = random_word();
      apply(acc);  // refused: the sector is still waking
      ++neg_sleep_;
      auto acc2 = no_access();
      Access& a2 = acc2[0][0];
      a2.en = a2.we = true;
      a2.sector = s;
      a2.off = 0;
      a2.data = random_word();
      apply(acc2);  // accepted: first usable cycle
      auto acc3 = no_access();
      Access& a3 = acc3[0][0];
      a3.en = true;
      a3.sector = s;
      a3.off = 0;
      apply(acc3);  // reads back the accepted write
      idle(1);
    }
    phase_ = Phase::kPositive;
  }

  tb::Args args_;
  SpmConfig cfg_;
  MemInfo mi_;
  tb::Sim sim_;
  tb::Rng rng_;
  tb::Report report_;
  std::unique_ptr<M> m_;
  std::vector<PortIo<M>> ports_;
  int B_ = 0, SC_ = 0, W_ = 0, P_ = 0, NC_ = 0;
  bool pow2_ = true;
  Phase phase_ = Phase::kPositive;
  bool expect_lost_ = false;
  std::vector<std::uint32_t> shadow_;
  std::vector<std::uint8_t> valid_;
  std::vector<std::uint8_t> req_;
  std::vector<long long> last_req_;
  std::vector<ReadCheck> reads_;
  std::vector<std::uint32_t> zero_ = std::vector<std::uint32_t>(8, 0u);
  long long exp_err_sleep_ = 0, exp_err_addr_ = 0, exp_err_conflict_ = 0, exp_sticky_ = 0;
  long long reads_checked_ = 0, writes_ = 0, partial_writes_ = 0, sleeps_ = 0, lost_detected_ = 0;
  long long neg_sleep_ = 0, neg_addr_ = 0, neg_conflict_ = 0;
};

template <class M>
int run_memory(const tb::Args& args, const SpmConfig& cfg, const std::string& name) {
  for (const MemInfo& mi : cfg.mems)
    if (mi.name == name) {
      MemBench<M> b(args, cfg, mi);
      return b.run();
    }
  std::fprintf(stderr, "FAIL spm_%s: model built but not listed in scratchpad.json\n", name.c_str());
  return 1;
}

}  // namespace

int scratchpad_tb_main(int argc, char** argv) {
  const tb::Args args = tb::Args::parse(argc, argv, "[--mode all|data|weight|acc|shared]");
  const SpmConfig cfg = SpmConfig::load(args.rtl_dir);
  const std::string mode = args.mode.empty() ? "all" : args.mode;
  int rc = 0, ran = 0;
  auto want = [&mode](const char* n) { return mode == "all" || mode == n; };
  (void)want;
#ifdef CAPSGEN_TB_SPM_DATA
  if (want("data")) rc |= run_memory<Vspm_data>(args, cfg, "data"), ++ran;
#endif
#ifdef CAPSGEN_TB_SPM_WEIGHT
  if (want("weight")) rc |= run_memory<Vspm_weight>(args, cfg, "weight"), ++ran;
#endif
#ifdef CAPSGEN_TB_SPM_ACC
  if (want("acc")) rc |= run_memory<Vspm_acc>(args, cfg, "acc"), ++ran;
#endif
#ifdef CAPSGEN_TB_SPM_SHARED
  if (want("shared")) rc |= run_memory<Vspm_shared>(args, cfg, "shared"), ++ran;
#endif
  // Every memory the organization lists must have been built and tested.
  if (mode == "all" && ran != static_cast<int>(cfg.mems.size())) {
    std::fprintf(stderr, "FAIL scratchpad: %d memories in scratchpad.json, %d models built\n",
                 static_cast<int>(cfg.mems.size()), ran);
    return 1;
  }
  if (ran == 0) {
    std::fprintf(stderr, "FAIL scratchpad: no memory '%s' in this design\n", mode.c_str());
    return 1;
  }
  return rc;
}
