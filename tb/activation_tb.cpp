// Block test of the activation unit (capsgen_activation, its bank, divider and ROMs) against
// capsgen::fx (gen/numerics): every output bit-exact and at the cycle docs/rtl-activation.md
// promises. Parts (--mode):
//   rom      every address of the sqrt, squash and exp ROMs == the numerics LUT builders
//   divider  capsgen_act_divider == fx::softmax_divide (random, den = 0, saturation), latency act
//   unit     capsgen_activation: identity, ReLU, Norm, Squash, Softmax on random and corner vectors
//            (saturation both ways, rounding ties, zero / max vectors, softmax all-equal and
//            one-dominant, n = 1 and n = max, norm shifts), back to back and with gaps, queueing of
//            vectors of decreasing length; busy_o and err_o checked too
//   bank     capsgen_activation_bank: the unit test on all columns with different data
//   pim      the PIM-CapsNet units the preset selects: capsgen_act_pim_exp / capsgen_act_pim_rsqrt,
//            every address == fx::pim::exp_shift / fx::pim::sqrt_rsqrt, one cycle later;
//            capsgen_act_pim_recip == fx::pim::divide_recip over every (num, den) pair when they
//            have <= 22 bits together (else every den x 4 numerators), then the divider's random
//            stimulus; latency act, busy_o checked
//   all      (default) rom, divider, pim, unit, bank
//   icarus   a short unit run that writes vector files for tb/icarus/tb_activation.v (--vectors)
// The expected timing is computed here from the documented contract, not read from the emitter.
#include <algorithm>
#include <cstdio>
#include <deque>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "Vact.h"
#include "Vact_bank.h"
#include "Vact_parts.h"  // tb/verilog/tb_act_parts.v: the three ROMs and the divider
#ifdef CAPSGEN_TB_ACT_PIM_EXP
#include "Vact_pim_exp.h"
#endif
#ifdef CAPSGEN_TB_ACT_PIM_RSQRT
#include "Vact_pim_rsqrt.h"
#endif
#ifdef CAPSGEN_TB_ACT_PIM_RECIP
#include "Vact_pim_recip.h"  // tb/verilog/tb_act_parts.v with TB_ACT_PIM_RECIP: the reciprocal divide behind div_*
#endif
#include "common/act_summary.hpp"
#include "common/bits.hpp"
#include "common/rng.hpp"
#include "common/sim.hpp"
#include "numerics/activation.hpp"
#include "numerics/fixed.hpp"
#include "numerics/pim_approx.hpp"

namespace fx = capsgen::fx;

namespace {

using tb::clog2;

enum Func { kNone = 0, kRelu = 1, kNorm = 2, kSquash = 3, kSoftmax = 4 };
const char* func_name(int f) {
  static const char* n[] = {"identity", "relu", "norm", "squash", "softmax"};
  return f >= 0 && f <= 4 ? n[f] : "identity(code>4)";
}

// activation.json written by the emitter: raw preset values plus the generator's max vector length.
// Every derived width below is recomputed here from docs/rtl-activation.md.
struct ActConfig {
  std::string name;
  int cols = 0, psum = 0, act = 0, sqrt_in = 0, sqrt_out = 0, sq_gain = 0, sq_elem = 0, sq_gain_bits = 0, sq_norm = 0, sq_out = 0, sq_in_frac = 0,
      sq_norm_shift = 0, exp_in = 0, exp_out = 0, sm_in_frac = 0, max_len = 0, sqrt_computed = 0;
  fx::ActParams p;  // the formats and PIM-CapsNet options as gen/numerics takes them

  static ActConfig load(const std::string& dir) {
    const tb::Summary kv(dir, "activation");
    auto num = [&kv](const char* k) { return kv.num(k); };
    ActConfig c;
    c.cols = num("cols");
    c.psum = num("psum_bits");
    c.act = num("act_bits");
    c.sqrt_in = num("sqrt_in_bits");
    c.sqrt_out = num("sqrt_out_bits");
    c.sq_gain = kv.flag("squash_gain");
    c.sq_elem = num("squash_elem_bits");
    c.sq_gain_bits = num("squash_gain_bits");
    c.sq_norm = num("squash_norm_bits");
    c.sq_out = num("squash_out_bits");
    c.sq_in_frac = num("squash_in_frac");
    c.sq_norm_shift = num("squash_norm_shift");
    c.exp_in = num("exp_in_bits");
    c.exp_out = num("exp_out_bits");
    c.sm_in_frac = num("softmax_in_frac");
    c.max_len = num("max_len");
    c.sqrt_computed = kv.flag("sqrt_computed");
    c.p = tb::act_params_from_summary(kv);
    return c;
  }
  const fx::ActParams& params() const { return p; }
  // Port widths (docs/rtl-activation.md, "Interface").
  int len_bits() const { return clog2(max_len + 1); }
  int shift_bits() const { return clog2(psum + 1); }
  int sum_bits() const { return 2 * act - 1 + clog2(max_len); }
  int nshift_bits() const { return clog2(sum_bits() + 1); }
  int out_bits() const { return std::max(act, sqrt_out); }
  int exp_sum_bits() const { return exp_out + clog2(max_len); }
  // Timing contract (docs/rtl-activation.md, "Timing").
  static constexpr int kElemLatency = 2, kNormLatency = 6, kSquashDesc = 5, kSquashStream = 2, kSoftmaxDesc = 2,
                       kSoftmaxSum = 1;
  int div_stages() const { return act; }
};

// ------------------------------------------------------------------------------------------------
// ROMs: every address, all three ROMs in parallel (address in cycle t, data in cycle t + 1).
int run_roms(const tb::Args& args, const ActConfig& c) {
  tb::Report report("activation_rom", args.max_errors);
  const fx::ActParams p = c.params();
  tb::Sim sim(args);
  auto m = std::make_unique<Vact_parts>(sim.context(), "parts");
  sim.add(*m);
  sim.open_trace();
  sim.reset();
  struct Rom {
    const char* name;
    std::vector<std::uint32_t> table;
    int addr_bits, data_bits;
    IData* addr;
    IData* data;
  };
  Rom roms[] = {{"sqrt_rom", fx::build_sqrt_lut(p), c.sqrt_in, c.sqrt_out, &m->sqrt_addr_i, &m->sqrt_data_o},
                {"squash_rom", fx::build_squash_lut(p), p.squash_addr_bits(), p.squash_data_bits(), &m->squash_addr_i,
                 &m->squash_data_o},
                {"exp_rom", fx::build_exp_lut(p), c.exp_in, c.exp_out, &m->exp_addr_i, &m->exp_data_o}};
  std::size_t longest = 0;
  for (const Rom& r : roms) {
    if (r.table.size() != (std::size_t{1} << r.addr_bits))
      report.fail(0, std::string(r.name) + ": table size does not match the address width");
    longest = std::max(longest, r.table.size());
  }
  for (std::size_t a = 0; a <= longest && !report.too_many(); ++a) {
    const std::uint64_t t = sim.cycle();
    for (const Rom& r : roms) {
      if (a >= 1 && a - 1 < r.table.size())
        report.check(t, std::string(r.name) + " addr=" + std::to_string(a - 1), r.table[a - 1],
                     static_cast<long long>(*r.data & tb::mask64(r.data_bits)));
      *r.addr = static_cast<IData>(a < r.table.size() ? a : 0);
    }
    sim.step();
  }
  sim.finish();
  char extra[160];
  std::snprintf(extra, sizeof extra, "sqrt %d->%d%s, squash %d->%d, exp %d->%d, every address", c.sqrt_in, c.sqrt_out,
                c.sqrt_computed ? " (computed)" : "", p.squash_addr_bits(), p.squash_data_bits(), c.exp_in, c.exp_out);
  return report.summary(extra);
}

// ------------------------------------------------------------------------------------------------
// PIM-CapsNet units on their own: every address (address in cycle t, data in cycle t + 1, as the ROM
// each replaces) against fx::pim.
// The units have no reset (clk_i, addr_i, data_o only), so the clock is driven here rather than by tb::Sim.
template <class Model>
int sweep_pim_unit(const tb::Args& args, const char* name, int addr_bits, int data_bits,
                   const std::function<std::int64_t(std::int64_t)>& ref) {
  tb::Report report(name, args.max_errors);
  auto ctx = std::make_unique<VerilatedContext>();
  ctx->randReset(0);
  auto m = std::make_unique<Model>(ctx.get(), name);
  using Addr = std::remove_reference_t<decltype(m->addr_i)>;
  const std::uint64_t n = std::uint64_t{1} << addr_bits;
  std::uint64_t checked = 0;
  m->clk_i = 0;
  m->eval();
  for (std::uint64_t a = 0; a <= n && !report.too_many(); ++a) {
    if (a >= 1) {  // data_o holds the value for the address presented in the previous cycle
      report.check(a, std::string(name) + " addr=" + std::to_string(a - 1), ref(static_cast<std::int64_t>(a - 1)),
                   static_cast<long long>(m->data_o & tb::mask64(data_bits)));
      ++checked;
    }
    m->addr_i = static_cast<Addr>(a < n ? a : 0);
    m->eval();
    m->clk_i = 1;
    m->eval();
    m->clk_i = 0;
    m->eval();
  }
  m->final();
  char extra[120];
  std::snprintf(extra, sizeof extra, "%d -> %d bits, every address (%llu of %llu)", addr_bits, data_bits,
                static_cast<unsigned long long>(checked), static_cast<unsigned long long>(n));
  return report.summary(extra);
}

// ------------------------------------------------------------------------------------------------
// Divide units: the divider and PIM-CapsNet's reciprocal divide have the same ports and latency (act
// cycles); both are verilated behind testbench wrappers with the same div_* ports.

// One cycle's input of a divide unit.
struct Division {
  bool valid = false, last = false;
  std::int64_t num = 0, den = 0;
};

// Drives the divisions `next` produces (one per cycle; it returns false after the last) into a divide
// unit and checks every cycle: out_valid_o act cycles after in_valid_i, quot_o == ref(num, den),
// out_last_o, and busy_o (a division entered before this cycle has not left the last stage). The run
// fails unless the stimulus had den = 0, saturated (ref == smax) and ordinary divisions.
template <class Model>
int check_divide_unit(const tb::Args& args, const ActConfig& c, const char* name,
                      const std::function<std::int64_t(std::int64_t, std::int64_t)>& ref,
                      const std::function<bool(Division&)>& next, const std::string& what) {
  tb::Sim sim(args);
  auto dut = std::make_unique<Model>(sim.context(), name);
  sim.add(*dut);
  sim.open_trace();
  tb::Report report(name, args.max_errors);
  const int lat = c.div_stages();
  const std::int64_t sat = fx::smax(c.act);
  struct Pending {
    std::uint64_t t0, due;
    bool last;
    std::int64_t q, num, den;
  };
  std::deque<Pending> pend;
  long long zeros = 0, sats = 0, ordinary = 0;
  sim.reset();
  const std::string ok;  // the check's name when it passes (built only for a mismatch)
  bool more = true;
  while ((more || !pend.empty()) && !report.too_many()) {
    const std::uint64_t t = sim.cycle();
    Division d;
    if (more) more = next(d);
    if (!more) d = Division{};
    dut->div_valid_i = d.valid;
    dut->div_last_i = d.last;
    dut->div_num_i = static_cast<IData>(d.num);
    dut->div_den_i = static_cast<IData>(d.den);
    if (d.valid) {
      const std::int64_t q = ref(d.num, d.den);
      (d.den == 0 ? zeros : (q == sat ? sats : ordinary))++;
      pend.push_back({t, t + lat, d.last, q, d.num, d.den});
    }
    bool busy = false;
    for (const Pending& e : pend) busy |= e.t0 < t;
    report.check(t, "busy_o", busy, dut->div_busy_o);
    const bool want = !pend.empty() && pend.front().due == t;
    report.check(t, "out_valid_o", want, dut->div_valid_o);
    if (want) {
      const Pending e = pend.front();
      pend.pop_front();
      if (dut->div_valid_o) {
        const long long quot = static_cast<long long>(dut->div_quot_o & tb::mask64(c.act));
        const auto where = [&e](const char* port) {
          return std::string(port) + " num=" + std::to_string(e.num) + " den=" + std::to_string(e.den);
        };
        report.check(t, quot == e.q ? ok : where("quot_o"), e.q, quot);
        report.check(t, dut->div_last_o == e.last ? ok : where("out_last_o"), e.last, dut->div_last_o);
      }
    }
    sim.step();
  }
  sim.finish();
  if (zeros == 0 || sats == 0 || ordinary == 0) report.fail(sim.cycle(), "stimulus missed den = 0, saturation or ordinary");
  char extra[200];
  std::snprintf(extra, sizeof extra, "%s: %lld ordinary, %lld saturated, %lld den=0 divisions, latency %d", what.c_str(),
                ordinary, sats, zeros, lat);
  return report.summary(extra);
}

// Random divisions with gaps (85% of the cycles) and the corners: den = 0, tiny den (saturation),
// num = den = max (q = 2^frac, saturated), num = 0, softmax-like den >= num.
std::function<bool(Division&)> random_divisions(const tb::Args& args, const ActConfig& c) {
  auto rng = std::make_shared<tb::Rng>(args.seed * 7 + 3);
  auto left = std::make_shared<long long>(static_cast<long long>(20000 * args.scale));
  const int nb = c.exp_out, db = c.exp_sum_bits();
  return [rng, left, nb, db](Division& d) {
    if ((*left)-- <= 0) return false;
    d.valid = rng->chance(85);
    d.num = rng->uniform(0, fx::umax(nb));
    d.den = rng->uniform(0, fx::umax(db));
    switch (rng->uniform(0, 9)) {
      case 0: d.den = 0; break;
      case 1: d.den = rng->uniform(1, 3); break;
      case 2: d.num = fx::umax(nb); d.den = d.num; break;
      case 3: d.num = 0; break;
      case 4: d.den = std::max<std::int64_t>(d.num, rng->uniform(0, fx::umax(db))); break;
      case 5: d.den = std::min(d.num + rng->uniform(0, 3 * (d.num + 1)), fx::umax(db)); break;
      default: break;
    }
    d.last = rng->chance(30);
    return true;
  };
}

// Divider on its own: quot = fx::softmax_divide(num, den, act - 1, smax(act)), act cycles later.
int run_divider(const tb::Args& args, const ActConfig& c) {
  const int frac = c.act - 1;
  const std::int64_t sat = fx::smax(c.act);
  return check_divide_unit<Vact_parts>(
      args, c, "activation_divider",
      [frac, sat](std::int64_t num, std::int64_t den) { return fx::softmax_divide(num, den, frac, sat); },
      random_divisions(args, c), "random");
}

// Inputs up to this many bits (num and den together) are swept exhaustively by the reciprocal
// divide's test: 4 M divisions, a few seconds.
constexpr int kRecipExhaustiveBits = 22;

// Every division of the reciprocal divide's input range, one per cycle, when num and den together
// have at most kRecipExhaustiveBits bits. Otherwise every den (up to 2^20 of them, else 2^20 random
// ones plus 2^k - 1, 2^k, 2^k + 1 and the largest) with four numerators each: 0, the largest,
// min(den, largest) (the softmax's num <= den at its bound) and a random one <= den. `count` is set
// to the number of divisions.
std::function<bool(Division&)> recip_sweep(const tb::Args& args, const ActConfig& c, long long& count) {
  const int nb = c.exp_out, db = c.exp_sum_bits();
  auto rng = std::make_shared<tb::Rng>(args.seed * 11 + 5);
  auto i = std::make_shared<long long>(0);
  if (nb + db <= kRecipExhaustiveBits) {
    count = 1LL << (nb + db);
    const long long n = count;
    return [i, n, nb, rng](Division& d) {
      if (*i >= n) return false;
      d = {true, rng->chance(30), *i & fx::umax(nb), *i >> nb};
      ++*i;
      return true;
    };
  }
  auto dens = std::make_shared<std::vector<std::int64_t>>();
  if (db <= 20) {
    for (std::int64_t v = 0; v <= fx::umax(db); ++v) dens->push_back(v);
  } else {
    for (int k = 0; k < db; ++k)
      for (std::int64_t v : {(std::int64_t{1} << k) - 1, std::int64_t{1} << k, (std::int64_t{1} << k) + 1})
        dens->push_back(std::min(v, fx::umax(db)));
    dens->push_back(fx::umax(db));
    for (int k = 0; k < (1 << 20); ++k) dens->push_back(rng->uniform(1, fx::umax(db)));
  }
  count = 4 * static_cast<long long>(dens->size());
  return [i, dens, nb, rng](Division& d) {
    if (*i >= 4 * static_cast<long long>(dens->size())) return false;
    const std::int64_t den = (*dens)[static_cast<std::size_t>(*i / 4)], top = fx::umax(nb);
    const std::int64_t nums[4] = {0, top, std::min(den, top), rng->uniform(0, std::min(den, top))};
    d = {true, rng->chance(30), nums[*i % 4], den};
    ++*i;
    return true;
  };
}

// ------------------------------------------------------------------------------------------------
// PIM-CapsNet units the preset selects: the exp and sqrt units over every address, the reciprocal
// divide over its input range (recip_sweep) and with the divider's random stimulus.
int run_pim(const tb::Args& args, const ActConfig& c) {
  const fx::ActParams& p = c.params();
  int rc = 0;
  if (p.exp_pim) {
#ifdef CAPSGEN_TB_ACT_PIM_EXP
    rc |= sweep_pim_unit<Vact_pim_exp>(args, "act_pim_exp", c.exp_in, c.exp_out,
                                       [&p](std::int64_t a) { return fx::pim::exp_shift(p, a, p.exp_recovery_q); });
#else
    throw std::runtime_error("activation.json selects exp_pim but capsgen_act_pim_exp was not verilated");
#endif
  }
  if (p.sqrt_pim) {
#ifdef CAPSGEN_TB_ACT_PIM_RSQRT
    rc |= sweep_pim_unit<Vact_pim_rsqrt>(args, "act_pim_rsqrt", c.sqrt_in, c.sqrt_out,
                                         [&p](std::int64_t a) { return fx::pim::sqrt_rsqrt(p, a); });
#else
    throw std::runtime_error("activation.json selects sqrt_pim but capsgen_act_pim_rsqrt was not verilated");
#endif
  }
  if (p.divide_pim) {
#ifdef CAPSGEN_TB_ACT_PIM_RECIP
    const int frac = c.act - 1;
    const std::int64_t sat = fx::smax(c.act);
    const auto ref = [frac, sat](std::int64_t num, std::int64_t den) {
      return fx::pim::divide_recip(num, den, frac, sat);
    };
    long long count = 0;
    const auto sweep = recip_sweep(args, c, count);
    const bool every = c.exp_out + c.exp_sum_bits() <= kRecipExhaustiveBits;
    char what[160];
    std::snprintf(what, sizeof what, "num %d bits x den %d bits, %s (%lld divisions)", c.exp_out, c.exp_sum_bits(),
                  every ? "every pair" : "every den x 4 numerators", count);
    rc |= check_divide_unit<Vact_pim_recip>(args, c, "act_pim_recip", ref, sweep, what);
    rc |= check_divide_unit<Vact_pim_recip>(args, c, "act_pim_recip", ref, random_divisions(args, c), "random, with gaps");
#else
    throw std::runtime_error("activation.json selects divide_pim but capsgen_act_pim_recip was not verilated");
#endif
  }
  return rc;
}

// ------------------------------------------------------------------------------------------------
// The unit (and the bank: the same test with `cols` columns sharing the control inputs).

struct Vec {
  int func = kNone;
  int n = 1;          // elements
  int len_port = 1;   // value driven on len_i (0 stands for 1)
  int shift = 0;
  int nshift = 0;
  int gap = 0;        // idle cycles before the vector
  std::vector<std::vector<std::int64_t>> psum;  // [col][k]
};

template <class Dut>
class UnitBench {
 public:
  UnitBench(const tb::Args& args, const ActConfig& c, int cols, const char* block)
      : args_(args), c_(c), cols_(cols), sim_(args), rng_(args.seed * 31 + static_cast<unsigned>(cols)),
        report_(block, args.max_errors), p_(c.params()) {
    dut_ = std::make_unique<Dut>(sim_.context(), block);
    sim_.add(*dut_);
    sim_.open_trace();
    sqrt_lut_ = fx::build_sqrt_lut(p_);
    squash_lut_ = fx::build_squash_lut(p_);
    exp_lut_ = fx::build_exp_lut(p_);
    LB_ = c.len_bits();
    SB_ = c.shift_bits();
    NSB_ = c.nshift_bits();
    OB_ = c.out_bits();
    sim_.reset();
  }

  void open_vectors(const std::string& dir) {
    vin_.open(dir + "/inputs.hex");
    vexp_.open(dir + "/expected.hex");
    vdir_ = dir;
    if (!vin_ || !vexp_) throw std::runtime_error("cannot write vectors to " + dir);
  }

  int run(double amount) {
    const int segments = std::max(8, static_cast<int>(160 * amount));
    for (int s = 0; s < segments && !report_.too_many(); ++s) {
      int f = static_cast<int>(rng_.uniform(0, 4));
      if (s < 5) f = s;  // every function early
      if (rng_.chance(3)) f = static_cast<int>(rng_.uniform(5, 7));  // unused codes act as identity
      segment(f, s);
    }
    // The queueing patterns: long then short vectors back to back, then growing ones.
    for (int f : {kSquash, kSoftmax}) {
      std::vector<Vec> vs;
      const int lens[] = {c_.max_len, 1, 1, 2, 1, c_.max_len, c_.max_len / 2 + 1, 3, 1, 1, 1, 1, 1, 1, 1, c_.max_len};
      for (int n : lens) vs.push_back(make_vec(f, n, 0));
      for (int n = 1; n <= std::min(c_.max_len, 12); ++n) vs.push_back(make_vec(f, n, 0));
      run_vectors(f, vs);
    }
    sim_.finish();
    if (vin_.is_open()) {
      vin_.close();
      vexp_.close();
      std::ofstream p(vdir_ + "/params.txt");
      p << "-Ptb_activation.PsumWidth=" << c_.psum << " -Ptb_activation.LenWidth=" << LB_
        << " -Ptb_activation.ShiftWidth=" << SB_ << " -Ptb_activation.NormShiftWidth=" << NSB_
        << " -Ptb_activation.OutWidth=" << OB_ << " -Ptb_activation.NumCycles=" << vec_cycles_ << "\n";
    }
    if (cover_sat_hi_ == 0 || cover_sat_lo_ == 0 || cover_ties_ == 0 || cover_queued_ == 0)
      report_.fail(sim_.cycle(), "stimulus missed saturation both ways, rounding ties or queued vectors");
    char extra[320];
    std::snprintf(extra, sizeof extra,
                  "%d column%s, %llu cycles, outputs: %lld identity/relu, %lld norm, %lld squash, %lld softmax; "
                  "%lld saturated up, %lld down, %lld ties, %lld queued vectors",
                  cols_, cols_ == 1 ? "" : "s", static_cast<unsigned long long>(sim_.cycle()), outs_[0], outs_[2],
                  outs_[3], outs_[4], cover_sat_hi_, cover_sat_lo_, cover_ties_, cover_queued_);
    return report_.summary(extra);
  }

 private:
  // ---- stimulus ----
  int random_shift() {
    const int maxs = (1 << SB_) - 1;
    switch (rng_.uniform(0, 9)) {
      case 0: return 0;
      case 1: return static_cast<int>(rng_.uniform(std::min(maxs, c_.psum - 1), maxs));  // everything shifted out
      case 2: case 3: return static_cast<int>(rng_.uniform(0, maxs));
      default: return static_cast<int>(rng_.uniform(0, std::max(0, std::min(maxs, c_.psum - c_.act + 1))));
    }
  }
  int random_nshift(int func) {
    const int maxs = (1 << NSB_) - 1;
    if (func == kSquash && rng_.chance(60)) return c_.sq_norm_shift;
    int s = rng_.chance(15) ? static_cast<int>(rng_.uniform(0, maxs)) : static_cast<int>(rng_.uniform(0, 2 * c_.act + 6));
    s &= ~1;  // the Norm shift is even (fx::norm)
    return std::min(s, maxs & ~1);
  }
  // A psum whose reduction by `shift` is (about) `a`, sometimes exactly on a rounding tie.
  std::int64_t psum_for(std::int64_t a, int shift) {
    std::int64_t v;
    if (shift == 0) {
      v = a;
    } else if (shift >= c_.psum - 1) {
      v = rng_.signed_value(c_.psum);  // everything is shifted out: the result is 0 or -1 before rounding
    } else {
      const std::int64_t unit = std::int64_t{1} << shift;
      std::int64_t low = rng_.uniform(0, unit - 1);
      if (rng_.chance(15)) low = unit / 2;  // tie: rounds up
      v = a * unit + low - unit / 2;
    }
    return fx::sat_s(v, c_.psum);
  }
  std::int64_t act_value(int kind) {
    const int A = c_.act;
    switch (kind) {
      case 1: return 0;
      case 2: return fx::smax(A);
      case 3: return fx::smin(A);
      case 4: return rng_.uniform(-3, 3);
      default: return rng_.signed_value(A);
    }
  }
  Vec make_vec(int func, int n, int gap) {
    Vec v;
    v.func = func;
    v.n = n;
    v.len_port = (n == 1 && rng_.chance(30)) ? 0 : n;
    v.shift = random_shift();
    v.nshift = random_nshift(func);
    v.gap = gap;
    v.psum.assign(static_cast<std::size_t>(cols_), std::vector<std::int64_t>(static_cast<std::size_t>(n)));
    for (int col = 0; col < cols_; ++col) {
      const int kind = static_cast<int>(rng_.uniform(0, 11));
      const std::int64_t same = act_value(0);
      for (int k = 0; k < n; ++k) {
        std::int64_t a;
        switch (kind) {
          case 0: a = 0; break;                                            // zero vector
          case 1: a = fx::smax(c_.act); break;                             // max vector
          case 2: a = fx::smin(c_.act); break;                             // min vector
          case 3: a = same; break;                                         // all equal
          case 4: a = k == static_cast<int>(same & 0xff) % n ? fx::smax(c_.act) : fx::smin(c_.act); break;  // one dominant
          case 5: a = act_value(static_cast<int>(rng_.uniform(1, 4))); break;  // corners
          default: a = act_value(0); break;
        }
        std::int64_t ps = psum_for(a, v.shift);
        if (rng_.chance(8)) ps = rng_.signed_value(c_.psum);  // raw psum: saturates the reduction
        v.psum[static_cast<std::size_t>(col)][static_cast<std::size_t>(k)] = ps;
      }
    }
    return v;
  }
  void segment(int func, int index) {
    std::vector<Vec> vs;
    const bool vector_func = func == kNorm || func == kSquash || func == kSoftmax;
    const int count = vector_func ? static_cast<int>(rng_.uniform(1, 10)) : static_cast<int>(rng_.uniform(1, 60));
    const bool b2b = rng_.chance(60);
    for (int i = 0; i < count; ++i) {
      int n = 1;
      if (vector_func) {
        const int r = static_cast<int>(rng_.uniform(0, 9));
        n = r == 0 ? 1 : (r == 1 ? c_.max_len : static_cast<int>(rng_.uniform(2, std::min(c_.max_len, 20))));
        if (index % 7 == 3) n = static_cast<int>(rng_.uniform(1, c_.max_len));
      }
      const int gap = (b2b || rng_.chance(50)) ? 0 : static_cast<int>(rng_.uniform(1, 12));
      vs.push_back(make_vec(func, n, gap));
    }
    run_vectors(func, vs);
  }

  // ---- expected results (capsgen::fx) and timing (docs/rtl-activation.md) ----
  struct Expect {
    std::uint64_t t_last;  // cycle of the vector's last input
    std::uint64_t due;
    int func;
    bool last;
    std::vector<std::int64_t> value;  // per column
    std::string where;
  };
  void expect_vector(const Vec& v, const std::vector<std::uint64_t>& t_in) {
    const int n = v.n;
    const std::uint64_t t_last = t_in.back();
    std::vector<std::vector<std::int64_t>> res(static_cast<std::size_t>(cols_));
    for (int col = 0; col < cols_; ++col) {
      std::vector<std::int64_t> a(static_cast<std::size_t>(n));
      for (int k = 0; k < n; ++k) {
        const std::int64_t ps = v.psum[static_cast<std::size_t>(col)][static_cast<std::size_t>(k)];
        const std::int64_t r = fx::round_shift(ps, v.shift);
        if (r > fx::smax(c_.act)) ++cover_sat_hi_;
        if (r < fx::smin(c_.act)) ++cover_sat_lo_;
        if (v.shift > 0 && v.shift < 62 && ((ps >> (v.shift - 1)) & 1) && (ps & ((std::int64_t{1} << (v.shift - 1)) - 1)) == 0)
          ++cover_ties_;
        a[static_cast<std::size_t>(k)] = fx::reduce(ps, v.shift, c_.act);
      }
      auto& out = res[static_cast<std::size_t>(col)];
      switch (v.func) {
        case kNorm: out = {fx::norm(p_, sqrt_lut_, a.data(), n, v.nshift).norm}; break;
        case kSquash: {
          fx::ActParams q = p_;
          q.sq_norm_shift = v.nshift;  // the run-time norm shift
          out.resize(static_cast<std::size_t>(n));
          fx::squash(q, sqrt_lut_, squash_lut_, a.data(), n, out.data());
          break;
        }
        case kSoftmax:
          out.resize(static_cast<std::size_t>(n));
          fx::softmax(p_, exp_lut_, a.data(), n, out.data());
          break;
        case kRelu: out = {fx::relu(a[0])}; break;
        default: out = {a[0]}; break;
      }
    }
    auto push = [&](std::uint64_t due, int k, bool last) {
      Expect e;
      e.t_last = t_last;
      e.due = due;
      e.func = v.func;
      e.last = last;
      for (int col = 0; col < cols_; ++col) e.value.push_back(res[static_cast<std::size_t>(col)][static_cast<std::size_t>(k)]);
      char w[160];
      std::snprintf(w, sizeof w, "%s vector#%lld n=%d k=%d shift=%d nshift=%d", func_name(v.func), vec_index_, n, k,
                    v.shift, v.nshift);
      e.where = w;
      if (!pend_.empty() && pend_.back().due >= due) report_.fail(due, "tb: expected outputs out of order");
      pend_.push_back(std::move(e));
    };
    switch (v.func) {
      case kNorm: push(t_last + ActConfig::kNormLatency, 0, true); break;
      case kSquash: {
        const std::uint64_t ready = t_last + ActConfig::kSquashDesc;
        const std::uint64_t P = std::max(ready, eng_free_);
        if (P > ready) ++cover_queued_;
        eng_free_ = P + static_cast<std::uint64_t>(n);
        for (int k = 0; k < n; ++k) push(P + static_cast<std::uint64_t>(k) + ActConfig::kSquashStream, k, k == n - 1);
        break;
      }
      case kSoftmax: {
        const std::uint64_t ready = t_last + ActConfig::kSoftmaxDesc;
        const std::uint64_t P = std::max(ready, eng_free_);
        eng_free_ = P + static_cast<std::uint64_t>(n);
        const std::uint64_t sum_ready = P + static_cast<std::uint64_t>(n) + ActConfig::kSoftmaxSum;
        const std::uint64_t C = std::max(sum_ready, div_free_);
        if (P > ready || C > sum_ready) ++cover_queued_;
        div_free_ = C + static_cast<std::uint64_t>(n);
        for (int k = 0; k < n; ++k)
          push(C + static_cast<std::uint64_t>(k) + static_cast<std::uint64_t>(c_.div_stages()) + 1, k, k == n - 1);
        break;
      }
      default: push(t_in[0] + ActConfig::kElemLatency, 0, true); break;
    }
    ++vec_index_;
  }

  // ---- one cycle: drive, check, record, step ----
  void drive_idle() {
    dut_->in_valid_i = 0;
    for (int col = 0; col < cols_; ++col)
      tb::put(dut_->in_data_i, col * c_.psum, c_.psum, static_cast<std::uint64_t>(rng_.signed_value(c_.psum)));
    dut_->func_i = static_cast<CData>(rng_.uniform(0, 7));
    tb::put(dut_->len_i, 0, LB_, rng_.next());
    tb::put(dut_->shift_i, 0, SB_, rng_.next());
    tb::put(dut_->norm_shift_i, 0, NSB_, rng_.next());
  }
  void drive_elem(const Vec& v, int k) {
    dut_->in_valid_i = 1;
    for (int col = 0; col < cols_; ++col)
      tb::put(dut_->in_data_i, col * c_.psum, c_.psum,
              static_cast<std::uint64_t>(v.psum[static_cast<std::size_t>(col)][static_cast<std::size_t>(k)]));
    if (k == 0) {
      dut_->func_i = static_cast<CData>(v.func);
      tb::put(dut_->len_i, 0, LB_, static_cast<std::uint64_t>(v.len_port));
      tb::put(dut_->shift_i, 0, SB_, static_cast<std::uint64_t>(v.shift));
      tb::put(dut_->norm_shift_i, 0, NSB_, static_cast<std::uint64_t>(v.nshift));
    } else {  // ignored after the first element of a vector
      dut_->func_i = static_cast<CData>(rng_.uniform(0, 7));
      tb::put(dut_->len_i, 0, LB_, rng_.next());
      tb::put(dut_->shift_i, 0, SB_, rng_.next());
      tb::put(dut_->norm_shift_i, 0, NSB_, rng_.next());
    }
  }
  // Checks the outputs of the current cycle. `draining`: no input is in flight except what pend_ knows.
  void check_and_step(bool draining, bool partial_vector) {
    const std::uint64_t t = sim_.cycle();
    if (!pend_.empty() && pend_.front().due < t) {
      report_.fail(t, "tb: missed an expected output");
      pend_.pop_front();
    }
    const bool want = !pend_.empty() && pend_.front().due == t;
    report_.check(t, "out_valid_o", want, dut_->out_valid_o);
    if (want) {
      const Expect e = pend_.front();
      pend_.pop_front();
      if (dut_->out_valid_o) {
        ++outs_[e.func > 4 ? 0 : (e.func == kRelu ? 0 : e.func)];
        report_.check(t, "out_last_o " + e.where, e.last, dut_->out_last_o);
        for (int col = 0; col < cols_; ++col) {
          const std::int64_t got = e.func == kNorm ? static_cast<std::int64_t>(tb::get(dut_->out_data_o, col * OB_, OB_))
                                                   : tb::get_signed(dut_->out_data_o, col * OB_, OB_);
          report_.check(t, "out_data_o col=" + std::to_string(col) + " " + e.where,
                        e.value[static_cast<std::size_t>(col)], got);
        }
      }
    }
    // busy_o: some accepted input has its result due after this cycle.
    bool accepted_pending = false;
    for (const Expect& e : pend_) accepted_pending |= e.t_last < t;
    if (draining)
      report_.check(t, "busy_o (draining)", accepted_pending, dut_->busy_o);
    else if (accepted_pending || partial_vector)
      report_.check(t, "busy_o (results pending)", 1, dut_->busy_o);
    report_.check(t, "err_o", 0, dut_->err_o);
    if (vin_.is_open()) record();
    sim_.step();
  }
  void record() {
    const int in_w = 1 + cols_ * c_.psum + 3 + LB_ + SB_ + NSB_;
    const int ex_w = 1 + 1 + cols_ * OB_ + 1 + 1;
    tb::BitVec in(in_w), ex(ex_w);
    int o = 0;
    in.put(o, 1, dut_->in_valid_i), o += 1;
    for (int col = 0; col < cols_; ++col) in.put(o, c_.psum, tb::get(dut_->in_data_i, col * c_.psum, c_.psum)), o += c_.psum;
    in.put(o, 3, dut_->func_i), o += 3;
    in.put(o, LB_, tb::get(dut_->len_i, 0, LB_)), o += LB_;
    in.put(o, SB_, tb::get(dut_->shift_i, 0, SB_)), o += SB_;
    in.put(o, NSB_, tb::get(dut_->norm_shift_i, 0, NSB_));
    o = 0;
    ex.put(o, 1, dut_->out_valid_o), o += 1;
    ex.put(o, 1, dut_->out_last_o), o += 1;
    for (int col = 0; col < cols_; ++col) ex.put(o, OB_, tb::get(dut_->out_data_o, col * OB_, OB_)), o += OB_;
    ex.put(o, 1, dut_->busy_o), o += 1;
    ex.put(o, 1, dut_->err_o);
    vin_ << in.hex() << "\n";
    vexp_ << ex.hex() << "\n";
    ++vec_cycles_;
  }
  void run_vectors(int func, const std::vector<Vec>& vs) {
    (void)func;
    for (const Vec& v : vs) {
      for (int g = 0; g < v.gap; ++g) {
        drive_idle();
        check_and_step(false, false);
      }
      std::vector<std::uint64_t> t_in;
      for (int k = 0; k < v.n; ++k) {
        drive_elem(v, k);
        t_in.push_back(sim_.cycle());
        if (k == v.n - 1) expect_vector(v, t_in);
        check_and_step(false, k > 0);
      }
      if (report_.too_many()) return;
    }
    // Drain: the function may change only once busy_o is low.
    for (int i = 0; i < 8 * c_.max_len + 64 && (!pend_.empty() || dut_->busy_o); ++i) {
      drive_idle();
      check_and_step(true, false);
    }
    if (!pend_.empty() || dut_->busy_o) report_.fail(sim_.cycle(), "unit still busy long after its last input");
    eng_free_ = div_free_ = 0;
    const int idle = static_cast<int>(rng_.uniform(0, 3));
    for (int i = 0; i < idle; ++i) {
      drive_idle();
      check_and_step(true, false);
    }
  }

  tb::Args args_;
  ActConfig c_;
  int cols_;
  tb::Sim sim_;
  tb::Rng rng_;
  tb::Report report_;
  fx::ActParams p_;
  std::unique_ptr<Dut> dut_;
  std::vector<std::uint32_t> sqrt_lut_, squash_lut_, exp_lut_;
  int LB_ = 0, SB_ = 0, NSB_ = 0, OB_ = 0;
  std::deque<Expect> pend_;
  std::uint64_t eng_free_ = 0, div_free_ = 0;
  long long vec_index_ = 0;
  long long outs_[5] = {0, 0, 0, 0, 0};
  long long cover_sat_hi_ = 0, cover_sat_lo_ = 0, cover_ties_ = 0, cover_queued_ = 0;
  std::ofstream vin_, vexp_;
  std::string vdir_;
  long long vec_cycles_ = 0;
};

}  // namespace

int activation_tb_main(int argc, char** argv) {
  const tb::Args args = tb::Args::parse(argc, argv, "[--mode all|rom|divider|pim|unit|bank|icarus] [--vectors DIR]");
  const ActConfig c = ActConfig::load(args.rtl_dir);
  const std::string mode = args.mode.empty() ? "all" : args.mode;
  int rc = 0;
  if (mode == "all" || mode == "rom") rc |= run_roms(args, c);
  if (mode == "all" || mode == "divider") rc |= run_divider(args, c);
  if (mode == "all" || mode == "pim") rc |= run_pim(args, c);
  if (mode == "all" || mode == "unit") {
    UnitBench<Vact> b(args, c, 1, "activation");
    rc |= b.run(args.scale);
  }
  if (mode == "all" || mode == "bank") {
    UnitBench<Vact_bank> b(args, c, c.cols, "activation_bank");
    rc |= b.run(args.scale * 0.25);
  }
  if (mode == "icarus") {
    if (args.vectors.empty()) throw std::runtime_error("--mode icarus needs --vectors DIR");
    UnitBench<Vact> b(args, c, 1, "activation");
    b.open_vectors(args.vectors);
    rc |= b.run(args.scale * 0.1);
  }
  if (mode != "all" && mode != "rom" && mode != "divider" && mode != "pim" && mode != "unit" && mode != "bank" && mode != "icarus")
    throw std::runtime_error("unknown --mode " + mode);
  return rc;
}
