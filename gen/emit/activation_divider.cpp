// The softmax divider (fx::softmax_divide as a pipelined restoring divider) and the small
// first-word-fall-through FIFO the activation unit queues vectors in.
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "emit/activation.hpp"
#include "emit/activation_internal.hpp"

namespace capsgen::emit {

using detail::bits;
using detail::declare_divider_ports;
using detail::DividerPorts;

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
  const Param width = m.parameter("Width", 8, "entry bits");
  const int pointer_bits = std::max(1, clog2(depth));
  const int count_bits = clog2(depth + 1);
  m.clock_and_reset();
  const Expr push_i = m.input("push_i", 1, "write data_i");
  const Expr data_i = m.input("data_i", width, "entry to write");
  const Expr pop_i = m.input("pop_i", 1, "remove the head entry");
  const Expr empty_o = m.output("empty_o", 1, "no entry");
  const Expr head_o = m.output("head_o", width, "oldest entry (valid while empty_o is low)");
  const Expr err_o = m.output("err_o", 1, "push while full (dropped) or pop while empty (ignored)");
  const Memory entries = m.memory("mem", width, depth, fmt::format("{} entries", depth));
  const Expr write_pointer = m.reg("wr_q", pointer_bits, "write pointer");
  const Expr read_pointer = m.reg("rd_q", pointer_bits, "read pointer");
  const Expr count = m.reg("count_q", count_bits, "entries held");
  const Expr full = m.wire("full", 1);
  const Expr empty = m.wire("empty", 1);
  const Expr do_push = m.wire("do_push", 1, "push accepted");
  const Expr do_pop = m.wire("do_pop", 1, "pop accepted");
  m.blank();
  m.assign(empty, count == lit(count_bits, 0));
  m.assign(full, count == lit(count_bits, depth));
  m.assign(do_pop, pop_i & ~empty);
  m.assign(do_push, push_i & (~full | do_pop));
  m.always_ff({if_(do_push, {nb(entries[write_pointer], data_i)})});
  // The pointer after `pointer`: it wraps at the depth.
  auto next = [&](const Expr& pointer) {
    const Expr one = lit(pointer_bits, 1);
    if (depth == (1 << pointer_bits)) return pointer + one;
    return ternary(pointer == lit(pointer_bits, depth - 1), lit(pointer_bits, 0), pointer + one);
  };
  m.always_ff_next(
      {nb(write_pointer, lit(pointer_bits, 0)), nb(read_pointer, lit(pointer_bits, 0)), nb(count, lit(count_bits, 0))},
      {if_(do_push, {nb(write_pointer, next(write_pointer))}), if_(do_pop, {nb(read_pointer, next(read_pointer))}),
       if_(do_push & ~do_pop, {nb(count, count + lit(count_bits, 1))},
           {if_(do_pop & ~do_push, {nb(count, count - lit(count_bits, 1))})})});
  m.assign(empty_o, empty);
  m.assign(head_o, entries[read_pointer]);
  m.assign(err_o, (push_i & ~do_push) | (pop_i & empty));
  return m;
}

namespace detail {

DivideFormat divide_format(const AccelConfig& cfg) {
  const ActGeometry g = act_geometry(cfg);
  DivideFormat f;
  f.num = g.exp_out;
  f.den = g.exp_sum_bits;
  f.frac = g.act - 1;
  f.quot = f.frac + 1;
  return f;
}

DividerPorts declare_divider_ports(Module& m, const DivideFormat& f) {
  m.clock_and_reset();
  const Expr in_valid = m.input("in_valid_i", 1, "a division this cycle");
  const Expr in_last = m.input("in_last_i", 1, "tag carried to out_last_o");
  const Expr num = m.input("num_i", f.num, "numerator (unsigned)");
  const Expr den = m.input("den_i", f.den, "denominator (unsigned)");
  const Expr out_valid = m.output("out_valid_o", 1, "quot_o holds a result");
  const Expr out_last = m.output("out_last_o", 1, "tag of that division");
  const Expr quot = m.output("quot_o", f.quot, "quotient, 0 .. " + std::to_string((1 << f.frac) - 1));
  const Expr busy = m.output("busy_o", 1, "a division in flight");
  return {in_valid, in_last, num, den, out_valid, out_last, quot, busy};
}

}  // namespace detail

namespace {

// The widths of the softmax divider: N = num * 2^frac + floor(den / 2) is divided by den, one
// quotient bit per stage.
struct DividerWidths {
  int numerator = 0;    // an exp value
  int denominator = 0;  // their sum
  int frac = 0;         // coupling coefficients are Q0.frac (frac = act - 1)
  int quotient = 0;     // quotient bits computed (q <= 2^frac when num <= den); one stage each
  int dividend = 0;     // bits of N
  int dividend_high = 0;  // bits of N above the computed quotient bits
  int compare = 0;        // width of the saturation compare of those bits with den
};

DividerWidths divider_widths(const AccelConfig& cfg) {
  const detail::DivideFormat f = detail::divide_format(cfg);
  DividerWidths w;
  w.numerator = f.num;
  w.denominator = f.den;
  w.frac = f.frac;
  w.quotient = f.quot;
  w.dividend = std::max(w.numerator + w.frac, w.denominator - 1) + 1;
  w.dividend_high = w.dividend - w.quotient;
  w.compare = std::max(w.dividend_high, w.denominator);
  return w;
}


// The dividend N and the checks made before the first stage.
struct DividerInput {
  Expr dividend, high, saturated, zero, first_remainder;
};

DividerInput declare_divider_input(Module& m, const DividerWidths& w) {
  const Expr dividend = m.wire("div_n", w.dividend, "N = num * 2^frac + floor(den / 2)");
  const Expr high = m.wire("div_hi", w.dividend_high, "N above the computed quotient bits");
  const Expr saturated = m.wire("div_sat", 1, "quotient >= 2^" + std::to_string(w.quotient) + " (den > 0)");
  const Expr zero = m.wire("div_zero", 1, "den == 0");
  const Expr first_remainder =
      m.wire("div_r0", w.denominator, "first partial remainder (N >> qb, < den unless saturated)");
  return {dividend, high, saturated, zero, first_remainder};
}

// One stage of the restoring divider: its combinational step (absent parts are those the last stage
// or the stage consuming N's last bit do not need) and its pipeline registers.
struct DividerStage {
  std::optional<Expr> difference;  // 2r + N bit - den
  Expr quotient_bit;
  std::optional<Expr> next_remainder;
  Expr valid, last, saturated, zero, quotient;
  std::optional<Expr> remainder, denominator;
  std::optional<Expr> dividend_rest;  // N bits still to consume
};

DividerStage declare_divider_stage(Module& m, const DividerWidths& w, int j) {
  const bool has_next = j + 1 < w.quotient;
  const int rest_bits = w.quotient - 1 - j;  // N bits still to consume after this stage
  std::optional<Expr> difference, next_remainder, remainder, denominator, dividend_rest;
  if (has_next)
    difference = m.wire(fmt::format("st{}_diff", j), w.denominator + 1,
                        fmt::format("stage {}: 2r + N[{}] - den", j, w.quotient - 1 - j));
  const Expr quotient_bit = m.wire(fmt::format("st{}_ge", j), 1, "quotient bit");
  if (has_next) next_remainder = m.wire(fmt::format("st{}_r", j), w.denominator, "next partial remainder");
  const Expr valid = m.reg(fmt::format("s{}_valid_q", j), 1);
  const Expr last = m.reg(fmt::format("s{}_last_q", j), 1);
  const Expr saturated = m.reg(fmt::format("s{}_sat_q", j), 1);
  const Expr zero = m.reg(fmt::format("s{}_zero_q", j), 1);
  const Expr quotient = m.reg(fmt::format("s{}_q_q", j), j + 1, "quotient bits so far");
  if (has_next) {
    remainder = m.reg(fmt::format("s{}_r_q", j), w.denominator, "partial remainder");
    denominator = m.reg(fmt::format("s{}_den_q", j), w.denominator);
  }
  if (rest_bits > 0) dividend_rest = m.reg(fmt::format("s{}_n_q", j), rest_bits, "N bits still to consume");
  return {difference, quotient_bit, next_remainder, valid, last, saturated, zero, quotient,
          remainder, denominator, dividend_rest};
}

// N = {0, num, 0...} + floor(den / 2), its bits above the quotient, and whether the quotient
// saturates: N >> qb >= den.
void build_divider_input(Module& m, const DividerWidths& w, const DividerPorts& p, const DividerInput& in) {
  m.assign(in.dividend,
           zext(cat({p.num, lit(w.frac, 0)}), w.dividend) + zext(bits(p.den, w.denominator - 1, 1), w.dividend));
  m.assign(in.high, bits(in.dividend, w.dividend - 1, w.quotient));
  m.assign(in.zero, p.den == lit(w.denominator, 0));
  m.assign(in.saturated, zext(in.high, w.compare) >= zext(p.den, w.compare));
  m.assign(in.first_remainder, w.dividend_high >= w.denominator ? bits(in.high, w.denominator - 1, 0)
                                                                 : zext(in.high, w.denominator));
}

// The registers of a stage: the data (no reset) and the valid flag.
struct DividerRegisters {
  Stmts data, valid_reset, valid;
};

// Stage j's step: the remainder so far shifted left with N's next bit, compared with den; the
// quotient bit is set when den fits, and the remainder is restored otherwise. `prev` is stage j-1
// (absent for the first stage, which takes the divider's inputs).
void build_divider_stage(Module& m, const DividerWidths& w, const DividerPorts& p, const DividerInput& in,
                         const DividerStage& s, const DividerStage* prev, int j, DividerRegisters& regs) {
  const int den_bits = w.denominator;
  const Expr remainder = prev ? *prev->remainder : in.first_remainder;
  const Expr den = prev ? *prev->denominator : p.den;
  const int consumed = w.quotient - 1 - j;  // N bit consumed here
  // The previous stage holds N bits [consumed:0] (a scalar when consumed == 0).
  const Expr n_bit = !prev            ? in.dividend[consumed]
                     : consumed == 0 ? *prev->dividend_rest
                                     : (*prev->dividend_rest)[consumed];
  const Expr shifted = cat({remainder, n_bit});
  if (s.difference) {
    // 2r + bit < 2 * den, so the difference is negative exactly when its top bit is set.
    m.assign(*s.difference, shifted - zext(den, den_bits + 1));
    m.assign(s.quotient_bit, ~(*s.difference)[den_bits]);
    m.assign(*s.next_remainder, ternary(s.quotient_bit, bits(*s.difference, den_bits - 1, 0),
                                        cat({bits(remainder, den_bits - 2, 0), n_bit})));
    regs.data.push_back(nb(*s.remainder, *s.next_remainder));
    regs.data.push_back(nb(*s.denominator, den));
  } else {
    m.assign(s.quotient_bit, shifted >= zext(den, den_bits + 1));
  }
  if (s.dividend_rest)
    regs.data.push_back(nb(*s.dividend_rest, bits(prev ? *prev->dividend_rest : in.dividend, consumed - 1, 0)));
  regs.data.push_back(nb(s.quotient, prev ? cat({prev->quotient, s.quotient_bit}) : s.quotient_bit));
  regs.data.push_back(nb(s.last, prev ? prev->last : p.in_last));
  regs.data.push_back(nb(s.saturated, prev ? prev->saturated : in.saturated & ~in.zero));
  regs.data.push_back(nb(s.zero, prev ? prev->zero : in.zero));
  regs.valid_reset.push_back(nb(s.valid, bit(false)));
  regs.valid.push_back(nb(s.valid, prev ? prev->valid : p.in_valid));
}

// The outputs from the last stage: den == 0 gives 0, a saturated quotient (or one with the bit
// above the fraction set) gives the largest, 2^frac - 1.
void drive_divider_outputs(Module& m, const DividerWidths& w, const DividerPorts& p,
                           const std::vector<DividerStage>& stages) {
  const DividerStage& last = stages.back();
  const int quotient_bits = w.quotient;
  m.assign(p.out_valid, last.valid);
  m.assign(p.out_last, last.last);
  m.comment(fmt::format("Saturate: a quotient with bit {} set is >= 2^{} > {}.", quotient_bits - 1, w.frac,
                        (1 << w.frac) - 1));
  const Expr largest = cat({bit(false), detail::all_ones(quotient_bits - 1)});
  const Expr saturated = paren(last.saturated | last.quotient[quotient_bits - 1]);
  m.assign(p.quot, ternary(last.zero, lit(quotient_bits, 0), ternary(saturated, largest, last.quotient)));
  Expr busy = stages.front().valid;
  for (std::size_t j = 1; j < stages.size(); ++j) busy = busy | stages[j].valid;
  m.assign(p.busy, busy);
}

}  // namespace

Module build_act_divider(const AccelConfig& cfg) {
  const DividerWidths w = divider_widths(cfg);
  Module m(kActDividerModule,
           fmt::format("Softmax divider: quot = fx::softmax_divide(num, den, {0}, {1}), i.e.\n"
                       "  den == 0 -> 0, else min({1}, floor((num * 2^{0} + floor(den / 2)) / den))\n"
                       "(round-half-up quotient, saturated). Restoring division of N = num * 2^{0} + floor(den/2),\n"
                       "one quotient bit per pipeline stage ({2} stages): a division enters every cycle and leaves\n"
                       "{2} cycles later (out_* in cycle t + {2} for in_* in cycle t). N >> {2} >= den means a\n"
                       "quotient >= 2^{2}: saturated without computing it.",
                       w.frac, (1 << w.frac) - 1, w.quotient));
  const DividerPorts p = declare_divider_ports(m, detail::divide_format(cfg));
  const DividerInput in = declare_divider_input(m, w);
  std::vector<DividerStage> stages;
  for (int j = 0; j < w.quotient; ++j) stages.push_back(declare_divider_stage(m, w, j));
  m.blank();
  build_divider_input(m, w, p, in);
  DividerRegisters regs;
  for (int j = 0; j < w.quotient; ++j)
    build_divider_stage(m, w, p, in, stages[j], j == 0 ? nullptr : &stages[j - 1], j, regs);
  m.blank();
  m.comment("Datapath registers (no reset: only stages marked valid are used).");
  m.always_ff(regs.data);
  m.always_ff_next(regs.valid_reset, regs.valid);
  m.blank();
  drive_divider_outputs(m, w, p, stages);
  return m;
}

}  // namespace capsgen::emit
