// The softmax divider (fx::softmax_divide as a pipelined restoring divider) and the small
// first-word-fall-through FIFO the activation unit queues vectors in.
#include <fmt/format.h>

#include <algorithm>

#include "emit/activation.hpp"
#include "emit/activation_internal.hpp"

namespace capsgen::emit {

using detail::bits;
using detail::lit;
using detail::zext;

Module build_act_fifo(const AccelConfig& cfg) {
  const int depth = act_geometry(cfg).fifo_depth;
  Module m(kActFifoModule,
           fmt::format("First-word-fall-through FIFO of {} entries for the activation unit: head_o shows the oldest\n"
                       "entry while empty_o is low; pop_i removes it at the clock edge. A push and a pop may share a\n"
                       "cycle (also when full). The unit never overflows it when its contract holds\n"
                       "(docs/rtl-activation.md); a push into a full FIFO (dropped) or a pop of an empty one (ignored)\n"
                       "pulses err_o.",
                       depth));
  // Only the entry width is a parameter: depth and pointers are the same for every instance.
  m.parameter("Width", "8", "entry bits");
  const int pw = std::max(1, clog2(depth));
  const int cw = clog2(depth + 1);
  m.clock_and_reset()
      .input("push_i", "1", "write data_i")
      .input("data_i", "Width", "entry to write")
      .input("pop_i", "1", "remove the head entry")
      .output("empty_o", "1", "no entry")
      .output("head_o", "Width", "oldest entry (valid while empty_o is low)")
      .output("err_o", "1", "push while full (dropped) or pop while empty (ignored)");
  m.memory("mem", "Width", str(depth), fmt::format("{} entries", depth));
  m.reg("wr_q", str(pw), "write pointer");
  m.reg("rd_q", str(pw), "read pointer");
  m.reg("count_q", str(cw), "entries held");
  m.wire("full", "1");
  m.wire("empty", "1");
  m.wire("do_push", "1", "push accepted");
  m.wire("do_pop", "1", "pop accepted");
  m.blank();
  m.assign("empty", fmt::format("count_q == {}", lit(cw, 0)));
  m.assign("full", fmt::format("count_q == {}", lit(cw, depth)));
  m.assign("do_pop", "pop_i & ~empty");
  m.assign("do_push", "push_i & (~full | do_pop)");
  m.always_ff({if_("do_push", {nb("mem[wr_q]", "data_i")})});
  auto next = [&](const std::string& p) {
    return depth == (1 << pw) ? fmt::format("{} + {}", p, lit(pw, 1))
                              : fmt::format("({} == {}) ? {} : {} + {}", p, lit(pw, depth - 1), lit(pw, 0), p, lit(pw, 1));
  };
  m.always_ff_reset({nb("wr_q", lit(pw, 0)), nb("rd_q", lit(pw, 0)), nb("count_q", lit(cw, 0))},
                    {if_("do_push", {nb("wr_q", next("wr_q"))}), if_("do_pop", {nb("rd_q", next("rd_q"))}),
                     if_("do_push & ~do_pop", {nb("count_q", fmt::format("count_q + {}", lit(cw, 1)))},
                         {if_("do_pop & ~do_push", {nb("count_q", fmt::format("count_q - {}", lit(cw, 1)))})})});
  m.assign("empty_o", "empty");
  m.assign("head_o", "mem[rd_q]");
  m.assign("err_o", "(push_i & ~do_push) | (pop_i & empty)");
  return m;
}

Module build_act_divider(const AccelConfig& cfg) {
  const ActGeometry g = act_geometry(cfg);
  const int nb_ = g.exp_out;        // numerator bits (an exp value)
  const int db = g.exp_sum_bits;    // denominator bits (their sum)
  const int frac = g.act - 1;       // coupling coefficients are Q0.(act-1)
  const int qb = frac + 1;          // quotient bits computed (q <= 2^frac when num <= den)
  const int nw = std::max(nb_ + frac, db - 1) + 1;  // N = num * 2^frac + floor(den / 2)
  const int hw = nw - qb;                           // bits of N above the computed quotient bits
  const int cw = std::max(hw, db);
  Module m(kActDividerModule,
           fmt::format("Softmax divider: quot = fx::softmax_divide(num, den, {0}, {1}), i.e.\n"
                       "  den == 0 -> 0, else min({1}, floor((num * 2^{0} + floor(den / 2)) / den))\n"
                       "(round-half-up quotient, saturated). Restoring division of N = num * 2^{0} + floor(den/2),\n"
                       "one quotient bit per pipeline stage ({2} stages): a division enters every cycle and leaves\n"
                       "{2} cycles later (out_* in cycle t + {2} for in_* in cycle t). N >> {2} >= den means a\n"
                       "quotient >= 2^{2}: saturated without computing it.",
                       frac, (1 << frac) - 1, qb));
  m.clock_and_reset()
      .input("in_valid_i", "1", "a division this cycle")
      .input("in_last_i", "1", "tag carried to out_last_o")
      .input("num_i", str(nb_), "numerator (unsigned)")
      .input("den_i", str(db), "denominator (unsigned)")
      .output("out_valid_o", "1", "quot_o holds a result")
      .output("out_last_o", "1", "tag of that division")
      .output("quot_o", str(qb), "quotient, 0 .. " + std::to_string((1 << frac) - 1))
      .output("busy_o", "1", "a division in flight");

  m.wire("div_n", str(nw), "N = num * 2^frac + floor(den / 2)");
  m.wire("div_hi", str(hw), "N above the computed quotient bits");
  m.wire("div_sat", "1", "quotient >= 2^" + std::to_string(qb) + " (den > 0)");
  m.wire("div_zero", "1", "den == 0");
  m.wire("div_r0", str(db), "first partial remainder (N >> qb, < den unless saturated)");
  for (int j = 0; j < qb; ++j) {
    const int rem_bits = qb - 1 - j;  // N bits still to consume after this stage
    if (j + 1 < qb)
      m.wire(fmt::format("st{}_diff", j), str(db + 1), fmt::format("stage {}: 2r + N[{}] - den", j, qb - 1 - j));
    m.wire(fmt::format("st{}_ge", j), "1", "quotient bit");
    if (j + 1 < qb) m.wire(fmt::format("st{}_r", j), str(db), "next partial remainder");
    m.reg(fmt::format("s{}_valid_q", j), "1");
    m.reg(fmt::format("s{}_last_q", j), "1");
    m.reg(fmt::format("s{}_sat_q", j), "1");
    m.reg(fmt::format("s{}_zero_q", j), "1");
    m.reg(fmt::format("s{}_q_q", j), str(j + 1), "quotient bits so far");
    if (j + 1 < qb) {
      m.reg(fmt::format("s{}_r_q", j), str(db), "partial remainder");
      m.reg(fmt::format("s{}_den_q", j), str(db));
    }
    if (rem_bits > 0) m.reg(fmt::format("s{}_n_q", j), str(rem_bits), "N bits still to consume");
  }
  m.blank();
  m.assign("div_n", fmt::format("{} + {}", zext(fmt::format("{{num_i, {}}}", lit(frac, 0)), nb_ + frac, nw),
                                zext(bits("den_i", db - 1, 1), db - 1, nw)));
  m.assign("div_hi", bits("div_n", nw - 1, qb));
  m.assign("div_zero", fmt::format("den_i == {}", lit(db, 0)));
  m.assign("div_sat", fmt::format("{} >= {}", zext("div_hi", hw, cw), zext("den_i", db, cw)));
  m.assign("div_r0", hw >= db ? bits("div_hi", db - 1, 0) : zext("div_hi", hw, db));
  Stmts ctrl_reset, ctrl;
  Stmts data;
  for (int j = 0; j < qb; ++j) {
    const std::string p = fmt::format("s{}_", j - 1);  // previous stage's registers
    const std::string r = j == 0 ? "div_r0" : p + "r_q";
    const std::string den = j == 0 ? "den_i" : p + "den_q";
    const int bit = qb - 1 - j;  // N bit consumed here
    // The previous stage holds N bits [bit:0] (a scalar when bit == 0).
    const std::string nbit =
        j == 0 ? fmt::format("div_n[{}]", bit) : (bit == 0 ? p + "n_q" : fmt::format("{}n_q[{}]", p, bit));
    const std::string d = fmt::format("st{}_diff", j), ge = fmt::format("st{}_ge", j);
    if (j + 1 < qb) {
      // 2r + bit < 2 * den, so the difference is negative exactly when its top bit is set.
      m.assign(d, fmt::format("{{{}, {}}} - {}", r, nbit, zext(den, db, db + 1)));
      m.assign(ge, fmt::format("~{}[{}]", d, db));
    } else {
      m.assign(ge, fmt::format("{{{}, {}}} >= {}", r, nbit, zext(den, db, db + 1)));
    }
    const std::string s = fmt::format("s{}_", j);
    if (j + 1 < qb) {
      m.assign(fmt::format("st{}_r", j),
               fmt::format("{} ? {} : {{{}, {}}}", ge, bits(d, db - 1, 0), bits(r, db - 2, 0), nbit));
      data.push_back(nb(s + "r_q", fmt::format("st{}_r", j)));
      data.push_back(nb(s + "den_q", den));
    }
    if (bit > 0) data.push_back(nb(s + "n_q", j == 0 ? bits("div_n", bit - 1, 0) : bits(p + "n_q", bit - 1, 0)));
    data.push_back(nb(s + "q_q", j == 0 ? ge : fmt::format("{{{}q_q, {}}}", p, ge)));
    data.push_back(nb(s + "last_q", j == 0 ? "in_last_i" : p + "last_q"));
    data.push_back(nb(s + "sat_q", j == 0 ? "div_sat & ~div_zero" : p + "sat_q"));
    data.push_back(nb(s + "zero_q", j == 0 ? "div_zero" : p + "zero_q"));
    ctrl_reset.push_back(nb(s + "valid_q", "1'b0"));
    ctrl.push_back(nb(s + "valid_q", j == 0 ? "in_valid_i" : p + "valid_q"));
  }
  m.blank();
  m.comment("Datapath registers (no reset: only stages marked valid are used).");
  m.always_ff(data);
  m.always_ff_reset(ctrl_reset, ctrl);
  m.blank();
  const std::string l = fmt::format("s{}_", qb - 1);
  m.assign("out_valid_o", l + "valid_q");
  m.assign("out_last_o", l + "last_q");
  m.comment(fmt::format("Saturate: a quotient with bit {} set is >= 2^{} > {}.", qb - 1, frac, (1 << frac) - 1));
  m.assign("quot_o", fmt::format("{0}zero_q ? {1} : (({0}sat_q | {0}q_q[{2}]) ? {{1'b0, {3}}} : {0}q_q)", l,
                                 lit(qb, 0), qb - 1, detail::ones(qb - 1)));
  std::string busy;
  for (int j = 0; j < qb; ++j) busy += (j ? " | " : "") + fmt::format("s{}_valid_q", j);
  m.assign("busy_o", busy);
  return m;
}

}  // namespace capsgen::emit
