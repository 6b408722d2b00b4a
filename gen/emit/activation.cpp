#include "emit/activation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <vector>

#include "emit/activation_internal.hpp"

namespace capsgen::emit {

using detail::bits;
using detail::sat_s;
using detail::sat_u;

ActGeometry act_geometry(const AccelConfig& cfg) {
  ActGeometry g;
  g.psum = cfg.widths.psum;
  g.act = cfg.widths.act;
  g.max_len = activation_max_len(cfg);
  g.len_bits = clog2(g.max_len + 1);
  g.shift_bits = clog2(g.psum + 1);
  g.sum_bits = 2 * g.act - 1 + clog2(g.max_len);
  g.nshift_bits = clog2(g.sum_bits + 1);
  g.sqrt_in = cfg.norm.sqrt_in_bits;
  g.sqrt_out = cfg.norm.sqrt_out_bits;
  g.sq_elem = cfg.squash.elem_bits;
  g.sq_norm = cfg.squash.norm_bits;
  g.sq_out = cfg.squash.out_bits;
  // Gain kind (docs/numerics.md, "Squash"): g is Q0.(gain_bits+1), the element Q.in_frac, the output
  // Q0.(out_bits-1), so the product is rounded by in_frac + gain_bits + 1 - (out_bits - 1). Derived
  // here from the preset, not taken from the numerics emulator, so that the test compares two
  // derivations.
  g.sq_gain = cfg.squash.kind == SquashKind::kGain;
  g.sq_gain_bits = cfg.squash.gain_bits;
  g.sq_gain_shift = cfg.squash.in_frac + cfg.squash.gain_bits + 1 - (cfg.squash.out_bits - 1);
  g.sq_rom_addr = g.sq_gain ? g.sq_norm : g.sq_elem + g.sq_norm;
  g.sq_rom_data = g.sq_gain ? g.sq_gain_bits : g.sq_out;
  g.exp_in = cfg.softmax.exp_in_bits;
  g.exp_out = cfg.softmax.exp_out_bits;
  g.exp_sum_bits = g.exp_out + clog2(g.max_len);
  g.out_bits = std::max(g.act, g.sqrt_out);
  g.fifo_depth = g.max_len + 8;
  g.desc_bits = std::max(g.act, g.sq_norm);
  g.div_stages = g.act;
  g.sqrt_computed = g.sqrt_in > kCaseRomMaxAddrBits;
  if (g.act < 2 || g.psum <= g.act || (!g.sq_gain && (g.sq_elem > g.act || g.sq_elem < 2)) || g.sq_norm > g.sqrt_out ||
      g.sq_out > g.act || g.exp_in > g.act || g.sq_rom_addr > kCaseRomMaxAddrBits ||
      (g.sq_gain && (g.sq_gain_shift < 1 || g.sq_gain_bits < 2)) ||
      g.exp_in > kCaseRomMaxAddrBits)
    throw std::logic_error("emit_activation: widths outside the validated ranges (config not validated?)");
  return g;
}

namespace {

// The unit's module comment: the reduction, the five functions, the per-vector controls and where the
// timing contract is written down.
std::string activation_description(const ActGeometry& g) {
  return fmt::format(
      "Activation unit of one array column (CapsAcc Fig. 11d-g). Every element is first reduced from\n"
      "{0} to {1} bits: a = sat(round_half_up(in >> shift)) (fx::reduce). func selects the output:\n"
      "  0 identity, 1 ReLU: one output per element, 2 cycles after it;\n"
      "  2 Norm: one output per vector of len elements: sqrt_lut[sat(round(sum a^2 >> norm_shift))];\n"
      "  3 Squash: len outputs, {3} (fx::squash);\n"
      "  4 Softmax: len outputs, fx::softmax (max subtraction, exp LUT, sum, divider).\n"
      "func, len (1..{2}, 0 counts as 1), shift and norm_shift are sampled with the first element of\n"
      "each vector; elements may arrive back to back, vectors too. func may change only while busy_o\n"
      "is low. Timing contract (latency, queueing of Squash/Softmax vectors): docs/rtl-activation.md.",
      g.psum, g.act, g.max_len,
      g.sq_gain ? fmt::format("sat(round(a * gain_lut[top bits of the norm] >> {}))", g.sq_gain_shift)
                : std::string("squash_lut[top bits of a, top bits of the norm]"));
}

// func_i and the registers holding a function code (ActFunc).
Expr function_code(ActFunc f) { return lit(kActFunctionBits, static_cast<std::uint64_t>(f)); }

// The unit's ports: one element in with its vector's controls, one result out, busy and the sticky
// error.
struct UnitPorts {
  Expr in_valid, in_data, func, len, shift, norm_shift, out_valid, out_last, out_data, busy, err;
};

// The port list: one element in with its vector's controls, one result out, busy and the sticky error.
UnitPorts declare_ports(Module& m, const ActGeometry& g) {
  m.clock_and_reset();
  return {
      .in_valid = m.input("in_valid_i", 1, "an element this cycle"),
      .in_data = m.input("in_data_i", g.psum, "element: accumulator output", true),
      .func = m.input("func_i", kActFunctionBits,
                      "0 identity, 1 ReLU, 2 Norm, 3 Squash, 4 Softmax (first element of a vector)"),
      .len = m.input("len_i", g.len_bits, fmt::format("vector length 1..{} (first element of a vector)", g.max_len)),
      .shift = m.input("shift_i", g.shift_bits, "reduction right shift (first element of a vector)"),
      .norm_shift = m.input("norm_shift_i", g.nshift_bits, "even right shift of the sum of squares (Norm, Squash)"),
      .out_valid = m.output("out_valid_o", 1, "out_data_o holds a result"),
      .out_last = m.output("out_last_o", 1, "last result of a vector (always 1 for identity, ReLU and Norm)"),
      .out_data = m.output("out_data_o", g.out_bits,
                           "result: signed, sign-extended; Norm: unsigned " + std::to_string(g.sqrt_out) +
                               "-bit code, zero-extended"),
      .busy = m.output("busy_o", 1, "an accepted element has not produced its result yet"),
      .err = m.output("err_o", 1, "sticky: an internal queue overflowed (contract violated, e.g. len > max)"),
  };
}

// The per-vector controls and the current element's view of them.
struct VectorFraming {
  Flop count, function, opens;  // elements received, the vector's function, the next element opens one
  Expr len_q, shift_q, norm_shift_q;
  Expr first, func, len_in, len, shift, norm_shift, is_vector, last;
  std::vector<Flop> flops;  // count, function, opens
};

// The per-vector controls: the element count, the controls sampled with a vector's first element, and
// the current element's view of them (the inputs on a first element, the registers after).
VectorFraming declare_vector_framing(Module& m, const ActGeometry& g) {
  const int len_bits = g.len_bits, shift_bits = g.shift_bits, norm_shift_bits = g.nshift_bits;
  m.comment("Vector framing and per-vector controls.");
  FlopGroup group(m);
  const Flop count = group.flop("element_count", len_bits, "elements of the current vector received");
  const Flop function = group.flop("function", kActFunctionBits, "function of the current vector");
  return {
      .count = count,
      .function = function,
      .opens = group.flop("opens_vector", 1,
                          "the next element opens a vector (element_count_q == 0, registered: off the reduction path)"),
      .len_q = m.reg("len_q", len_bits),
      .shift_q = m.reg("shift_q", shift_bits),
      .norm_shift_q = m.reg("nshift_q", norm_shift_bits),
      .first = m.wire("first", 1, "this element opens a vector"),
      .func = m.wire("cur_func", kActFunctionBits),
      .len_in = m.wire("len_in", len_bits, "len_i, 0 read as 1"),
      .len = m.wire("cur_len", len_bits),
      .shift = m.wire("cur_shift", shift_bits),
      .norm_shift = m.wire("cur_nshift", norm_shift_bits),
      .is_vector = m.wire("cur_vec", 1, "Norm, Squash or Softmax: a vector of len elements"),
      .last = m.wire("in_last", 1, "this element closes its vector"),
      .flops = group.flops(),
  };
}

// The reduction and its pipeline register a_q with the element's framing.
struct Reduction {
  Expr shifted, round_source, round_bit, rounded, saturated;
  Expr a, a_valid, a_first, a_last, a_norm_shift;
};

// The reduction psum -> act (fx::reduce) and its pipeline register a_q, which carries the element's
// framing and norm shift on.
Reduction declare_reduction(Module& m, const ActGeometry& g) {
  const int psum = g.psum, act = g.act;
  m.comment("Reduction psum -> act (fx::reduce).");
  return {
      .shifted = m.wire("red_shr", psum, "in >>> shift", true),
      .round_source = m.wire("red_rbsrc", psum + 1, "{in, 0}: bit s is the rounding bit in[s-1]"),
      .round_bit = m.wire("red_rb", 1, "rounding bit (half up)"),
      .rounded = m.wire("red_round", psum + 1, "round_shift(in, shift)", true),
      .saturated = m.wire("red_act", act, "saturated to act bits", true),
      .a = m.reg("a_q", act, "reduced element", true),
      .a_valid = m.reg("a_valid_q", 1),
      .a_first = m.reg("a_first_q", 1),
      .a_last = m.reg("a_last_q", 1),
      .a_norm_shift = m.reg("a_nshift_q", g.nshift_bits),
  };
}

// The decoded function of the current vector and the identity / ReLU result.
struct FunctionDecode {
  Expr relu, norm, squash, softmax, element_wise, element_valid, element_value;
};

FunctionDecode declare_function_decode(Module& m, const ActGeometry& g) {
  return {
      .relu = m.wire("f_relu", 1),
      .norm = m.wire("f_norm", 1),
      .squash = m.wire("f_squash", 1),
      .softmax = m.wire("f_softmax", 1),
      .element_wise = m.wire("f_elem", 1, "identity or ReLU (codes 5..7 act as identity)"),
      .element_valid = m.wire("elem_valid", 1),
      .element_value = m.wire("elem_val", g.act, "identity / ReLU result", true),
  };
}

// The norm/sqrt path's signals.
struct NormPath {
  Expr square_full, square, square_valid, square_first, square_last, square_norm_shift;
  Expr sum_next, sum, total, total_valid, total_norm_shift;
  Expr shifted, round_source, round_bit, rounded, address, address_q, address_valid;
  Expr sqrt_data, norm_valid, squash_norm;
  std::optional<Expr> squash_norm_rounded;
};

// The norm/sqrt path: square, sum of squares, round-shift, saturated sqrt address, the sqrt unit's
// output and the squash ROM's norm address derived from it.
NormPath declare_norm_path(Module& m, const ActGeometry& g) {
  const int act = g.act, norm_shift_bits = g.nshift_bits, sum_bits = g.sum_bits;
  const int sqrt_out = g.sqrt_out, squash_norm_bits = g.sq_norm;
  m.comment("Norm: square, accumulate, round-shift, saturate, sqrt ROM.");
  NormPath n{
      .square_full = m.wire("sq_full", 2 * act - 1, "a^2 (exact, non-negative)"),
      .square = m.reg("sq_q", 2 * act - 1),
      .square_valid = m.reg("sq_valid_q", 1),
      .square_first = m.reg("sq_first_q", 1),
      .square_last = m.reg("sq_last_q", 1),
      .square_norm_shift = m.reg("sq_nshift_q", norm_shift_bits),
      .sum_next = m.wire("sum_next", sum_bits),
      .sum = m.reg("sum_q", sum_bits, "running sum of squares"),
      .total = m.reg("tot_q", sum_bits, "sum of squares of a finished vector"),
      .total_valid = m.reg("tot_valid_q", 1),
      .total_norm_shift = m.reg("tot_nshift_q", norm_shift_bits),
      .shifted = m.wire("nrm_shr", sum_bits),
      .round_source = m.wire("nrm_rbsrc", sum_bits + 1),
      .round_bit = m.wire("nrm_rb", 1),
      .rounded = m.wire("nrm_round", sum_bits, "round_shift(sum, norm_shift)"),
      .address = m.wire("nrm_addr", g.sqrt_in, "saturated sqrt ROM address"),
      .address_q = m.reg("addr_q", g.sqrt_in),
      .address_valid = m.reg("addr_valid_q", 1),
      .sqrt_data = m.wire("sqrt_data", sqrt_out, "norm code (sqrt ROM output)"),
      .norm_valid = m.reg("nv_q", 1, "sqrt_data holds a vector's norm"),
      .squash_norm = m.wire("sq_m", squash_norm_bits,
                            "squash ROM norm address: sat(round(norm >> " +
                                std::to_string(sqrt_out - squash_norm_bits) + "))"),
      .squash_norm_rounded = std::nullopt,
  };
  if (sqrt_out > squash_norm_bits) n.squash_norm_rounded = m.wire("m_round", squash_norm_bits + 1);
  return n;
}

// The softmax path's running maximum of a vector.
struct SoftmaxMax {
  Expr max, max_next;
};

SoftmaxMax declare_softmax_max(Module& m, const ActGeometry& g) {
  m.comment("Softmax: running maximum.");
  return {
      .max = m.reg("mx_q", g.act, "", true),
      .max_next = m.wire("mx_next", g.act, "max including this element", true),
  };
}

// The element and descriptor queues and the stream engine.
struct QueuesAndStreamEngine {
  Expr element_push, element_empty, element_head, element_error, element_last, element;
  Expr descriptor_push_squash, descriptor_push_softmax, descriptor_push, descriptor_in, descriptor_fifo_push;
  Expr descriptor_empty, descriptor_fifo_head, descriptor_error, descriptor_available, descriptor_head, descriptor_pop;
  Expr engine_busy, engine_descriptor_q, engine_start, engine_process, engine_descriptor;
};

// The element and descriptor queues and the stream engine that empties them, a vector at a time.
QueuesAndStreamEngine declare_queues_and_stream_engine(Module& m, const ActGeometry& g) {
  const int act = g.act, descriptor_bits = g.desc_bits;
  m.comment("Queues: elements (with last flag) and per-vector descriptors (Squash: norm address m;\n"
            "Softmax: maximum), consumed in order by the stream engine.");
  return {
      .element_push = m.wire("elem_push", 1),
      .element_empty = m.wire("elem_empty", 1),
      .element_head = m.wire("elem_head", act + 1),
      .element_error = m.wire("elem_err", 1),
      .element_last = m.wire("elem_last", 1),
      .element = m.wire("elem_x", act, "", true),
      .descriptor_push_squash = m.wire("desc_push_sq", 1),
      .descriptor_push_softmax = m.wire("desc_push_sm", 1),
      .descriptor_push = m.wire("desc_push", 1),
      .descriptor_in = m.wire("desc_in", descriptor_bits),
      .descriptor_fifo_push = m.wire("desc_fifo_push", 1, "not taken directly by an idle engine (Squash bypass)"),
      .descriptor_empty = m.wire("desc_empty", 1),
      .descriptor_fifo_head = m.wire("desc_fifo_head", descriptor_bits),
      .descriptor_error = m.wire("desc_err", 1),
      .descriptor_available = m.wire("desc_avail", 1),
      .descriptor_head = m.wire("desc_head", descriptor_bits),
      .descriptor_pop = m.wire("desc_pop", 1),
      .engine_busy = m.reg("eng_busy_q", 1, "stream engine inside a vector"),
      .engine_descriptor_q = m.reg("eng_desc_q", descriptor_bits, "its descriptor"),
      .engine_start = m.wire("eng_start", 1),
      .engine_process = m.wire("eng_proc", 1, "stream engine consumes an element this cycle"),
      .engine_descriptor = m.wire("eng_desc", descriptor_bits),
  };
}

// Gain kind: bits of the signed product a * gain (the gain zero-extended).
int squash_product_bits(const ActGeometry& g) { return g.act + g.sq_gain_bits + 1; }

// The squash lookup's signals; the gain kind and the table kind each have their own.
struct SquashLookup {
  std::optional<Expr> element_q, product, product_rounded, result;  // gain kind
  std::optional<Expr> element_address, element_rounded;             // table kind
  Expr address, data, valid, last;
};

// The squash path's lookup: the ROM address and data, and for the gain kind the element held beside
// its gain and the rounded, saturated product; for the table kind the element's rounded address bits.
SquashLookup declare_squash_lookup(Module& m, const ActGeometry& g) {
  const int act = g.act, element_bits = g.sq_elem, gain_shift = g.sq_gain_shift;
  const int product_bits = squash_product_bits(g);
  std::optional<Expr> element_q, product, product_rounded, result, element_address, element_rounded;
  m.comment("Squash lookup.");
  if (g.sq_gain) {
    element_q = m.reg("sqo_x_q", act, "gain kind: the element, beside its gain from the ROM");
    if (gain_shift >= 2)
      m.lint_off("UNUSEDSIGNAL", "product bits below the rounding bit do not change round-half-up (fx::round_shift).");
    product = m.wire("sq_prod", product_bits, "a * gain (exact)");
    if (gain_shift >= 2) m.lint_on("UNUSEDSIGNAL");
    product_rounded = m.wire("sq_pround", product_bits - gain_shift + 1,
                             "round_half_up(a * gain >> " + std::to_string(gain_shift) + ")");
    result = m.wire("sq_out", g.sq_out, "squash output: the rounded product, saturated");
  } else {
    element_address = m.wire("sq_e", element_bits,
                             "squash ROM element address: sat(round(a >> " + std::to_string(act - element_bits) + "))",
                             true);
    if (act > element_bits) element_rounded = m.wire("sqe_round", element_bits + 1, "", true);
  }
  return {element_q,       product,         product_rounded,
          result,          element_address, element_rounded,
          m.wire("sq_addr", g.sq_rom_addr), m.wire("squash_data", g.sq_rom_data), m.reg("sqo_valid_q", 1),
          m.reg("sqo_last_q", 1)};
}

// The softmax path's exp pass.
struct ExpPass {
  Expr difference;
  std::optional<Expr> rounded;
  Expr address, data, valid, first, last, sum, sum_next;
  Expr exp_empty, exp_head, exp_error, sum_empty, sum_head, sum_error;
};

// The softmax/exp path's exp pass: the exp address max - x, the exp unit's output, the running sum and
// the exp value and sum queues.
ExpPass declare_exp_pass(Module& m, const ActGeometry& g) {
  const int act = g.act, exp_in = g.exp_in, exp_out = g.exp_out, exp_sum_bits = g.exp_sum_bits;
  m.comment("Softmax exp pass.");
  if (act - exp_in >= 2)
    m.lint_off("UNUSEDSIGNAL", "bits of max - x below the rounding bit do not change round-half-up (fx::round_shift).");
  const Expr difference = m.wire("sm_d", act, "max - x (0 .. 2^act - 1)");
  if (act - exp_in >= 2) m.lint_on("UNUSEDSIGNAL");
  std::optional<Expr> rounded;
  if (act > exp_in) rounded = m.wire("sm_round", exp_in + 1);
  return {
      .difference = difference,
      .rounded = rounded,
      .address = m.wire("sm_addr", exp_in,
                        "exp ROM address: sat(round((max - x) >> " + std::to_string(act - exp_in) + "))"),
      .data = m.wire("exp_data", exp_out),
      .valid = m.reg("ex_valid_q", 1),
      .first = m.reg("ex_first_q", 1),
      .last = m.reg("ex_last_q", 1),
      .sum = m.reg("esum_q", exp_sum_bits, "running sum of exp values"),
      .sum_next = m.wire("esum_next", exp_sum_bits),
      .exp_empty = m.wire("ef_empty", 1),
      .exp_head = m.wire("ef_head", exp_out + 1),
      .exp_error = m.wire("ef_err", 1),
      .sum_empty = m.wire("sf_empty", 1),
      .sum_head = m.wire("sf_head", exp_sum_bits),
      .sum_error = m.wire("sf_err", 1),
  };
}

// The softmax path's divide pass.
struct DividePass {
  Expr busy, denominator_q, start, process, denominator;
  Expr divider_valid, divider_last, divider_quotient, divider_busy;
};

// The softmax path's divide pass: its vector control and the divider interface.
DividePass declare_divide_pass(Module& m, const ActGeometry& g) {
  m.comment("Softmax divide pass.");
  return {
      .busy = m.reg("c_busy_q", 1),
      .denominator_q = m.reg("c_den_q", g.exp_sum_bits),
      .start = m.wire("c_start", 1),
      .process = m.wire("c_proc", 1),
      .denominator = m.wire("c_den", g.exp_sum_bits),
      .divider_valid = m.wire("div_valid", 1),
      .divider_last = m.wire("div_last", 1),
      .divider_quotient = m.wire("div_quot", g.act),
      .divider_busy = m.wire("div_busy", 1),
  };
}

// The output register and the sticky error.
struct OutputRegister {
  Expr valid, last, data, error;
};

OutputRegister declare_output_register(Module& m, const ActGeometry& g) {
  m.comment("Output register.");
  return {
      .valid = m.reg("out_valid_q", 1),
      .last = m.reg("out_last_q", 1),
      .data = m.reg("out_data_q", g.out_bits),
      .error = m.reg("err_q", 1),
  };
}

// Every signal of the unit, declared in the order they print.
struct ActivationUnit {
  UnitPorts io;
  VectorFraming framing;
  Reduction reduction;
  FunctionDecode decode;
  NormPath norm;
  SoftmaxMax softmax_max;
  QueuesAndStreamEngine queues;
  SquashLookup squash;
  ExpPass exp;
  DividePass divide;
  OutputRegister out;
};

// The current element's controls: the inputs on a vector's first element, the registers after. An
// element closes its vector when it is the len-th (identity and ReLU elements close their own).
void build_vector_framing(Module& m, const ActivationUnit& u, const ActGeometry& g) {
  const int len_bits = g.len_bits;
  const VectorFraming& f = u.framing;
  m.blank();
  m.assign(f.first, f.opens.q);
  m.assign(f.func, ternary(f.first, u.io.func, f.function.q));
  m.assign(f.len_in, ternary(u.io.len == lit(len_bits, 0), lit(len_bits, 1), u.io.len));
  m.assign(f.len, ternary(f.first, f.len_in, f.len_q));
  m.assign(f.shift, ternary(f.first, u.io.shift, f.shift_q));
  m.assign(f.norm_shift, ternary(f.first, u.io.norm_shift, f.norm_shift_q));
  m.assign(f.is_vector, (f.func == function_code(ActFunc::kNorm)) | (f.func == function_code(ActFunc::kSquash)) |
                            (f.func == function_code(ActFunc::kSoftmax)));
  m.assign(f.last, ~f.is_vector | (bare(f.count.q + lit(len_bits, 1)) == f.len));
}

// target = guard ? value : v[index], where the index can reach past v and the guard covers exactly
// those values.
void assign_guarded_bit_select(Module& m, const Expr& target, const Expr& guard, const Expr& value, const Expr& v,
                               const Expr& index) {
  m.assign(target, ternary(paren(guard), value, v.at(index_below(index, v.width()))));
}

// The reduction psum -> act (fx::reduce): arithmetic shift right by the vector's shift, round half up
// (the rounding bit is in[shift-1]; a shift wider than the element takes its sign bit), saturate.
void build_reduction(Module& m, const ActivationUnit& u, const ActGeometry& g) {
  const int psum = g.psum, shift_bits = g.shift_bits;
  const Reduction& r = u.reduction;
  const Expr in = u.io.in_data, shift = u.framing.shift;
  m.assign(r.shifted, ashr(in, shift));
  m.assign(r.round_source, cat({in, bit(false)}));
  if ((1 << shift_bits) - 1 > psum)
    assign_guarded_bit_select(m, r.round_bit, shift > lit(shift_bits, psum), in[psum - 1], r.round_source, shift);
  else
    m.assign(r.round_bit, r.round_source.at(shift));
  m.assign(r.rounded, cat({r.shifted[psum - 1], r.shifted}) + zext(r.round_bit, psum + 1));
  m.assign(r.saturated, sat_s(r.rounded, g.act));
}

// The input stage's registers: the element count and the first-element flag, the per-vector controls
// sampled with a vector's first element, and the reduced element a_q with its framing (t+1).
void build_input_registers(Module& m, const ActivationUnit& u, const ActGeometry& g) {
  const int len_bits = g.len_bits;
  const VectorFraming& f = u.framing;
  const Reduction& r = u.reduction;
  const Expr in_valid = u.io.in_valid;
  Stmts next = hold_flops(f.flops);
  next.push_back(if_(in_valid, {blk(f.count.d, ternary(f.last, lit(len_bits, 0), f.count.q + lit(len_bits, 1))),
                                blk(f.opens.d, f.last), if_(f.first, {blk(f.function.d, u.io.func)})}));
  m.always_comb(std::move(next));
  m.always_ff_flops(f.flops, {{f.opens.q, bit(true)}, {f.function.q, function_code(ActFunc::kNone)}});
  m.always_ff_next({nb(r.a_valid, bit(false))}, {nb(r.a_valid, in_valid)});
  m.always_ff({if_(in_valid, {nb(r.a, r.saturated), nb(r.a_first, f.first), nb(r.a_last, f.last),
                              nb(r.a_norm_shift, f.norm_shift)}),
               if_(in_valid & f.first,
                   {nb(f.len_q, f.len_in), nb(f.shift_q, u.io.shift), nb(f.norm_shift_q, u.io.norm_shift)})});
}

// The function decode of func_q and the identity / ReLU result of a_q (the output register takes it).
void build_function_decode(Module& m, const ActivationUnit& u, const ActGeometry& g) {
  const FunctionDecode& d = u.decode;
  const Expr func = u.framing.function.q, a = u.reduction.a;
  m.assign(d.relu, func == function_code(ActFunc::kRelu));
  m.assign(d.norm, func == function_code(ActFunc::kNorm));
  m.assign(d.squash, func == function_code(ActFunc::kSquash));
  m.assign(d.softmax, func == function_code(ActFunc::kSoftmax));
  m.assign(d.element_wise, ~(d.norm | d.squash | d.softmax));
  m.assign(d.element_valid, u.reduction.a_valid & d.element_wise);
  m.assign(d.element_value, ternary(paren(d.relu & a[g.act - 1]), lit(g.act, 0), a));
}

// The norm/sqrt path up to the sqrt unit: square, running sum of squares (tot_q takes it with a
// vector's last element), round-shift by the vector's norm shift, saturated sqrt address addr_q.
void build_norm_pipeline(Module& m, const ActivationUnit& u, const ActGeometry& g) {
  const int square_bits = 2 * g.act - 1, norm_shift_bits = g.nshift_bits, sum_bits = g.sum_bits;
  const NormPath& n = u.norm;
  const Reduction& r = u.reduction;
  m.blank();
  m.comment("Norm pipeline: a_q (t+1) -> sq_q (t+2) -> tot_q (t+3) -> addr_q (t+4) -> sqrt_data (t+5).");
  m.assign(n.square_full, sext(r.a, square_bits) * sext(r.a, square_bits));
  const Expr square = zext(n.square, sum_bits);
  m.assign(n.sum_next, ternary(n.square_first, square, n.sum + square));
  m.assign(n.shifted, shr(n.total, n.total_norm_shift));
  m.assign(n.round_source, cat({n.total, bit(false)}));
  if ((1 << norm_shift_bits) - 1 > sum_bits)
    assign_guarded_bit_select(m, n.round_bit, n.total_norm_shift > lit(norm_shift_bits, sum_bits), bit(false),
                              n.round_source, n.total_norm_shift);
  else
    m.assign(n.round_bit, n.round_source.at(n.total_norm_shift));
  m.assign(n.rounded, n.shifted + zext(n.round_bit, sum_bits));
  m.assign(n.address, sat_u(n.rounded, g.sqrt_in));
  const FunctionDecode& d = u.decode;
  m.always_ff_next(
      {nb(n.square_valid, bit(false)), nb(n.total_valid, bit(false)), nb(n.address_valid, bit(false)),
       nb(n.norm_valid, bit(false))},
      {nb(n.square_valid, r.a_valid & (d.norm | d.squash)), nb(n.total_valid, n.square_valid & n.square_last),
       nb(n.address_valid, n.total_valid), nb(n.norm_valid, n.address_valid)});
  m.always_ff(
      {if_(r.a_valid, {nb(n.square, n.square_full), nb(n.square_first, r.a_first), nb(n.square_last, r.a_last),
                       nb(n.square_norm_shift, r.a_norm_shift)}),
       if_(n.square_valid, {nb(n.sum, n.sum_next)}),
       if_(n.square_valid & n.square_last, {nb(n.total, n.sum_next), nb(n.total_norm_shift, n.square_norm_shift)}),
       if_(n.total_valid, {nb(n.address_q, n.address)})});
}

// The sqrt unit, addr_q -> sqrt_data in one cycle: the sqrt ROM, or PIM-CapsNet's rsqrt unit
// (norm.sqrt_kind: pim-rsqrt), which has the same ports and timing.
void instantiate_sqrt_unit(Module& m, const ActivationUnit& u, const AccelConfig& cfg, const ActGeometry& g) {
  const Module unit = cfg.norm.sqrt_kind == SqrtKind::kPimRsqrt
                          ? build_act_pim_rsqrt(cfg)
                          : detail::act_rom_interface(kActSqrtRomModule, g.sqrt_in, g.sqrt_out);
  m.instance(unit, "u_sqrt_rom")
      .connect("clk_i", m.clk())
      .connect("addr_i", u.norm.address_q)
      .connect("data_o", u.norm.sqrt_data);
}

// `v` rounded half up to its top `to` bits and saturated, through the (to+1)-bit wire `rounded`:
// rounded = {1'b0, v[F-1:F-to]} + v[F-to-1] (signed: the sign bit instead of the leading zero).
Expr round_top_bits(Module& m, const Expr& v, const Expr& rounded, int to, bool is_signed) {
  const int from = v.width(), dropped = from - to;
  m.assign(rounded, cat({is_signed ? v[from - 1] : bit(false), bits(v, from - 1, dropped)}) +
                        zext(v[dropped - 1], to + 1));
  return is_signed ? sat_s(rounded, to) : sat_u(rounded, to);
}

// The squash ROM's norm address m: the norm code's top squash.norm_bits bits, rounded half up and
// saturated (the code itself when it is no wider).
void build_squash_norm_address(Module& m, const ActivationUnit& u, const ActGeometry& g) {
  const NormPath& n = u.norm;
  if (n.squash_norm_rounded)
    m.assign(n.squash_norm, round_top_bits(m, n.sqrt_data, *n.squash_norm_rounded, g.sq_norm, false));
  else
    m.assign(n.squash_norm, n.sqrt_data);
}

// The softmax path's running maximum of a vector (its first element restarts it).
void build_softmax_max(Module& m, const ActivationUnit& u) {
  const SoftmaxMax& s = u.softmax_max;
  const Reduction& r = u.reduction;
  m.blank();
  m.assign(s.max_next, ternary(paren(r.a_first | (r.a > s.max)), r.a, s.max));
  m.always_ff({if_(r.a_valid & u.decode.softmax, {nb(s.max, s.max_next)})});
}

// What one capsgen_act_fifo instance is connected to (the element, descriptor, exp and sum queues).
struct FifoPorts {
  Expr push, data, pop, empty, head, err;
};

// One queue: a capsgen_act_fifo of `width`-bit entries, its ports connected as `p` says.
void instantiate_fifo(Module& m, const Module& fifo, const std::string& name, int width, const FifoPorts& p) {
  m.instance(fifo, name)
      .param("Width", width)
      .connect("clk_i", m.clk())
      .connect("rst_ni", m.rst_n())
      .connect("push_i", p.push)
      .connect("data_i", p.data)
      .connect("pop_i", p.pop)
      .connect("empty_o", p.empty)
      .connect("head_o", p.head)
      .connect("err_o", p.err);
}

// The element queue: every Squash and Softmax element with its last flag, popped by the stream engine.
void build_element_queue(Module& m, const ActivationUnit& u, const Module& fifo, const ActGeometry& g) {
  const int act = g.act;
  const QueuesAndStreamEngine& q = u.queues;
  const Reduction& r = u.reduction;
  m.assign(q.element_push, r.a_valid & (u.decode.squash | u.decode.softmax));
  instantiate_fifo(m, fifo, "u_elem_fifo", act + 1,
                   {.push = q.element_push,
                    .data = cat({r.a_last, r.a}),
                    .pop = q.engine_process,
                    .empty = q.element_empty,
                    .head = q.element_head,
                    .err = q.element_error});
  m.assign(q.element_last, q.element_head[act]);
  m.assign(q.element, bits(q.element_head, act - 1, 0));
}

// The descriptor queue: one entry per vector, the squash norm address m once the norm is known, or the
// softmax maximum with the last element. A squash descriptor pushed while the queue is empty is
// available in the same cycle (Squash bypass: desc_head is then the pushed value).
void build_descriptor_queue(Module& m, const ActivationUnit& u, const Module& fifo, const ActGeometry& g) {
  const int descriptor_bits = g.desc_bits;
  const QueuesAndStreamEngine& q = u.queues;
  const FunctionDecode& d = u.decode;
  const Reduction& r = u.reduction;
  m.assign(q.descriptor_push_squash, u.norm.norm_valid & d.squash);
  m.assign(q.descriptor_push_softmax, r.a_valid & d.softmax & r.a_last);
  m.assign(q.descriptor_push, q.descriptor_push_squash | q.descriptor_push_softmax);
  m.assign(q.descriptor_in, ternary(d.squash, zext(u.norm.squash_norm, descriptor_bits),
                                    sext(u.softmax_max.max_next, descriptor_bits)));
  instantiate_fifo(m, fifo, "u_desc_fifo", descriptor_bits,
                   {.push = q.descriptor_fifo_push,
                    .data = q.descriptor_in,
                    .pop = q.descriptor_pop,
                    .empty = q.descriptor_empty,
                    .head = q.descriptor_fifo_head,
                    .err = q.descriptor_error});
  m.assign(q.descriptor_available, ~q.descriptor_empty | q.descriptor_push_squash);
  m.assign(q.descriptor_head, ternary(q.descriptor_empty, q.descriptor_in, q.descriptor_fifo_head));
}

// The stream engine's control: an idle engine starts a vector when a descriptor is available and then
// takes one element per cycle up to the vector's last. It pops the descriptor it starts with from the
// queue, or takes the bypassed one, which is then not pushed.
void build_stream_engine_control(Module& m, const ActivationUnit& u) {
  const QueuesAndStreamEngine& q = u.queues;
  m.assign(q.engine_start, ~q.engine_busy & q.descriptor_available);
  m.assign(q.engine_process, q.engine_busy | q.engine_start);
  m.assign(q.engine_descriptor, ternary(q.engine_busy, q.engine_descriptor_q, q.descriptor_head));
  m.assign(q.descriptor_pop, q.engine_start & ~q.descriptor_empty);
  m.assign(q.descriptor_fifo_push, q.descriptor_push & ~(q.engine_start & q.descriptor_empty));
  m.always_ff_next({nb(q.engine_busy, bit(false))}, {nb(q.engine_busy, q.engine_process & ~q.element_last)});
  m.always_ff({if_(q.engine_start, {nb(q.engine_descriptor_q, q.descriptor_head)})});
}

// The stream engine with its element and descriptor queues.
void build_stream_engine(Module& m, const ActivationUnit& u, const Module& fifo, const ActGeometry& g) {
  m.blank();
  m.comment("Stream engine: takes the vectors in order; a vector starts when its descriptor is available\n"
            "(Squash: norm known, t_last + 5, taken directly when the engine is idle; Softmax: max known,\n"
            "t_last + 2) and the previous vector has been streamed; then one element per cycle.");
  build_element_queue(m, u, fifo, g);
  build_descriptor_queue(m, u, fifo, g);
  build_stream_engine_control(m, u);
}

// Squash lookup, gain kind: the ROM is addressed by the descriptor's norm address m alone; the element
// waits a cycle in sqo_x_q beside its gain, and the product is rounded half up and saturated.
void build_squash_gain_product(Module& m, const ActivationUnit& u, const ActGeometry& g) {
  const int gain_shift = g.sq_gain_shift, product_bits = squash_product_bits(g);
  const SquashLookup& s = u.squash;
  const QueuesAndStreamEngine& q = u.queues;
  m.comment("Gain kind: the ROM holds g(norm) = n / (1 + n^2); the element waits one cycle in sqo_x_q for it.");
  m.assign(s.address, bits(q.engine_descriptor, g.sq_norm - 1, 0));
  m.always_ff({if_(q.engine_process, {nb(*s.element_q, q.element)})});
  m.assign(*s.product, sext(*s.element_q, product_bits) * zext(s.data, product_bits));
  const Expr product = *s.product;
  m.assign(*s.product_rounded, cat({product[product_bits - 1], bits(product, product_bits - 1, gain_shift)}) +
                                   zext(product[gain_shift - 1], product_bits - gain_shift + 1));
  m.assign(*s.result, sat_s(*s.product_rounded, g.sq_out));
}

// Squash lookup, table kind: the ROM is addressed by {element, norm}, the element's top
// squash.elem_bits bits rounded half up and saturated (the element itself when it is no wider).
void build_squash_table_address(Module& m, const ActivationUnit& u, const ActGeometry& g) {
  const SquashLookup& s = u.squash;
  const QueuesAndStreamEngine& q = u.queues;
  if (s.element_rounded)
    m.assign(*s.element_address, round_top_bits(m, q.element, *s.element_rounded, g.sq_elem, true));
  else
    m.assign(*s.element_address, q.element);
  m.assign(s.address, cat({*s.element_address, bits(q.engine_descriptor, g.sq_norm - 1, 0)}));
}

// The squash path's lookup on the stream engine's element and descriptor, and its ROM instance.
void build_squash_lookup(Module& m, const ActivationUnit& u, const ActGeometry& g) {
  m.blank();
  if (g.sq_gain)
    build_squash_gain_product(m, u, g);
  else
    build_squash_table_address(m, u, g);
  m.instance(detail::act_rom_interface(kActSquashRomModule, g.sq_rom_addr, g.sq_rom_data), "u_squash_rom")
      .connect("clk_i", m.clk())
      .connect("addr_i", u.squash.address)
      .connect("data_o", u.squash.data);
}

// The softmax/exp path's exp address: d = max - x (non-negative), its top exp_in_bits bits rounded
// half up and saturated (d itself when it is no wider).
void build_exp_address(Module& m, const ActivationUnit& u, const ActGeometry& g) {
  const ExpPass& e = u.exp;
  m.blank();
  m.assign(e.difference, bits(u.queues.engine_descriptor, g.act - 1, 0) - u.queues.element);
  if (e.rounded)
    m.assign(e.address, round_top_bits(m, e.difference, *e.rounded, g.exp_in, false));
  else
    m.assign(e.address, e.difference);
}

// The exp unit, sm_addr -> exp_data in one cycle: the exp ROM, or PIM-CapsNet's shift-based exp unit
// (softmax.exp_kind: pim-shift), which has the same ports and timing.
void instantiate_exp_unit(Module& m, const ActivationUnit& u, const AccelConfig& cfg, const ActGeometry& g) {
  const Module unit = cfg.softmax.exp_kind == ExpKind::kPimShift
                          ? build_act_pim_exp(cfg)
                          : detail::act_rom_interface(kActExpRomModule, g.exp_in, g.exp_out);
  m.instance(unit, "u_exp_rom")
      .connect("clk_i", m.clk())
      .connect("addr_i", u.exp.address)
      .connect("data_o", u.exp.data);
}

// The pipeline registers behind the stream engine, beside the squash and exp ROMs' outputs: valid and
// last of a squash result, valid, first and last of an exp value.
void build_stream_output_registers(Module& m, const ActivationUnit& u) {
  const QueuesAndStreamEngine& q = u.queues;
  const SquashLookup& s = u.squash;
  const ExpPass& e = u.exp;
  m.always_ff_next({nb(s.valid, bit(false)), nb(e.valid, bit(false))},
                   {nb(s.valid, q.engine_process & u.decode.squash), nb(e.valid, q.engine_process & u.decode.softmax)});
  m.always_ff(
      {if_(q.engine_process, {nb(s.last, q.element_last), nb(e.first, q.engine_start), nb(e.last, q.element_last)})});
}

// The running sum of a vector's exp values (its first value restarts it).
void build_exp_sum(Module& m, const ActivationUnit& u, const ActGeometry& g) {
  const ExpPass& e = u.exp;
  const Expr value = zext(e.data, g.exp_sum_bits);
  m.assign(e.sum_next, ternary(e.first, value, e.sum + value));
  m.always_ff({if_(e.valid, {nb(e.sum, e.sum_next)})});
}

// The queues between the exp pass and the divide pass: exp values with their last flag, and one sum
// per vector.
void build_exp_queues(Module& m, const ActivationUnit& u, const Module& fifo, const ActGeometry& g) {
  const ExpPass& e = u.exp;
  instantiate_fifo(m, fifo, "u_exp_fifo", g.exp_out + 1,
                   {.push = e.valid,
                    .data = cat({e.last, e.data}),
                    .pop = u.divide.process,
                    .empty = e.exp_empty,
                    .head = e.exp_head,
                    .err = e.exp_error});
  instantiate_fifo(m, fifo, "u_sum_fifo", g.exp_sum_bits,
                   {.push = e.valid & e.last,
                    .data = e.sum_next,
                    .pop = u.divide.start,
                    .empty = e.sum_empty,
                    .head = e.sum_head,
                    .err = e.sum_error});
}

// The divide pass's control: a vector starts when its sum is at the sum queue's head; c_den holds the
// sum as the denominator while the vector's exp values go to the divider, one per cycle.
void build_divide_control(Module& m, const ActivationUnit& u, const ActGeometry& g) {
  const DividePass& c = u.divide;
  const ExpPass& e = u.exp;
  m.blank();
  m.comment("Divide pass: vector by vector in order, once its sum is known; one division per cycle.");
  m.assign(c.start, ~c.busy & ~e.sum_empty);
  m.assign(c.process, c.busy | c.start);
  m.assign(c.denominator, ternary(c.busy, c.denominator_q, e.sum_head));
  m.always_ff_next({nb(c.busy, bit(false))}, {nb(c.busy, c.process & ~e.exp_head[g.exp_out])});
  m.always_ff({if_(c.start, {nb(c.denominator_q, e.sum_head)})});
}

// The divider interface: an exp value with its last flag over its vector's sum in, the quotient with
// the last flag out. PIM-CapsNet's reciprocal divide has the same ports and latency.
void instantiate_divider(Module& m, const ActivationUnit& u, const AccelConfig& cfg, const ActGeometry& g) {
  const int exp_out = g.exp_out;
  const DividePass& c = u.divide;
  const Module divider = cfg.softmax.divide_kind == DivideKind::kPimReciprocal ? build_act_pim_recip(cfg)
                                                                                : build_act_divider(cfg);
  m.instance(divider, "u_div")
      .connect("clk_i", m.clk())
      .connect("rst_ni", m.rst_n())
      .connect("in_valid_i", c.process)
      .connect("in_last_i", u.exp.exp_head[exp_out])
      .connect("num_i", bits(u.exp.exp_head, exp_out - 1, 0))
      .connect("den_i", c.denominator)
      .connect("out_valid_o", c.divider_valid)
      .connect("out_last_o", c.divider_last)
      .connect("quot_o", c.divider_quotient)
      .connect("busy_o", c.divider_busy);
}

// The output register, fed by the identity/ReLU result, the norm code, the squash result or the
// softmax quotient (the first valid one in that order), and the sticky error of the four queues.
void build_output_register(Module& m, const ActivationUnit& u, const ActGeometry& g) {
  const int out_bits = g.out_bits;
  const OutputRegister& o = u.out;
  const FunctionDecode& d = u.decode;
  const DividePass& c = u.divide;
  const SquashLookup& s = u.squash;
  const Expr norm_valid = u.norm.norm_valid & d.norm;
  m.blank();
  m.comment("Output register: one function is active at a time, so at most one source is valid.");
  m.always_ff_next({nb(o.valid, bit(false)), nb(o.error, bit(false))},
                   {nb(o.valid, d.element_valid | norm_valid | s.valid | c.divider_valid),
                    if_(u.queues.element_error | u.queues.descriptor_error | u.exp.exp_error | u.exp.sum_error,
                        {nb(o.error, bit(true))})});
  const Stmts from_divider = {
      if_(c.divider_valid, {nb(o.data, zext(c.divider_quotient, out_bits)), nb(o.last, c.divider_last)})};
  const Stmts from_squash = {
      if_(s.valid, {nb(o.data, sext(g.sq_gain ? *s.result : s.data, out_bits)), nb(o.last, s.last)}, from_divider)};
  const Stmts from_norm = {
      if_(norm_valid, {nb(o.data, zext(u.norm.sqrt_data, out_bits)), nb(o.last, bit(true))}, from_squash)};
  m.always_ff({if_(d.element_valid, {nb(o.data, sext(d.element_value, out_bits)), nb(o.last, bit(true))},
                   from_norm)});
}

// The output ports: the output register, busy while a vector is partly received or a stage, a queue,
// the stream engine, the divide pass or the divider holds an element, and the sticky error.
void drive_output_ports(Module& m, const ActivationUnit& u, const ActGeometry& g) {
  m.assign(u.io.out_valid, u.out.valid);
  m.assign(u.io.out_last, u.out.last);
  m.assign(u.io.out_data, u.out.data);
  // busy_o's terms, as the lines it prints on.
  const std::vector<std::vector<Expr>> busy_lines = {
      {u.framing.count.q != lit(g.len_bits, 0), u.reduction.a_valid, u.norm.square_valid, u.norm.total_valid,
       u.norm.address_valid, u.norm.norm_valid},
      {~u.queues.element_empty, ~u.queues.descriptor_empty, u.queues.engine_busy, u.squash.valid, u.exp.valid},
      {~u.exp.exp_empty, ~u.exp.sum_empty, u.divide.busy, u.divide.divider_busy}};
  // text API: busy_o prints over three lines, and the printer writes an expression on one.
  std::string busy;
  for (const std::vector<Expr>& line : busy_lines) {
    Expr any = line.front();
    for (std::size_t i = 1; i < line.size(); ++i) any = any | line[i];
    busy += (busy.empty() ? "" : " |\n                  ") + any.text();
  }
  m.assign(u.io.busy.text(), busy);
  m.assign(u.io.err, u.out.error);
}

}  // namespace

// The pieces are built in the order the module prints them (declarations first, then assigns, always
// blocks and instances as added): reordering the calls changes the generated Verilog.
Module build_activation(const AccelConfig& cfg) {
  const ActGeometry g = act_geometry(cfg);
  Module m(kActivationModule, activation_description(g));
  const ActivationUnit u{declare_ports(m, g),           declare_vector_framing(m, g),
                         declare_reduction(m, g),       declare_function_decode(m, g),
                         declare_norm_path(m, g),       declare_softmax_max(m, g),
                         declare_queues_and_stream_engine(m, g), declare_squash_lookup(m, g),
                         declare_exp_pass(m, g),        declare_divide_pass(m, g),
                         declare_output_register(m, g)};
  const Module fifo = build_act_fifo(cfg);

  // Stage A: framing and reduction, then the identity / ReLU result.
  build_vector_framing(m, u, g);
  build_reduction(m, u, g);
  build_input_registers(m, u, g);
  build_function_decode(m, u, g);

  // The norm/sqrt path (its code also addresses the squash ROM) and the softmax maximum.
  build_norm_pipeline(m, u, g);
  instantiate_sqrt_unit(m, u, cfg, g);
  build_squash_norm_address(m, u, g);
  build_softmax_max(m, u);

  // Squash and Softmax vectors are queued, then streamed through the squash lookup or the exp pass.
  build_stream_engine(m, u, fifo, g);
  build_squash_lookup(m, u, g);
  build_exp_address(m, u, g);
  instantiate_exp_unit(m, u, cfg, g);
  build_stream_output_registers(m, u);
  build_exp_sum(m, u, g);
  build_exp_queues(m, u, fifo, g);

  // The softmax divide pass, then the output register and ports.
  build_divide_control(m, u, g);
  instantiate_divider(m, u, cfg, g);
  build_output_register(m, u, g);
  drive_output_ports(m, u, g);
  return m;
}

Module build_activation_bank(const AccelConfig& cfg) {
  const ActGeometry g = act_geometry(cfg);
  const int cols = cfg.array.cols;
  Module m(kActivationBankModule,
           fmt::format("Bank of {} activation units, one per array column, sharing the control inputs: column c takes\n"
                       "in_data_i bits [c*{} +: {}] and drives out_data_o bits [c*{} +: {}]. Contract as in {}.",
                       cols, g.psum, g.psum, g.out_bits, g.out_bits, kActivationModule));
  m.clock_and_reset();
  const Expr in_valid_i = m.input("in_valid_i", 1, "an element per column this cycle");
  const Expr in_data_i =
      m.input("in_data_i", cols * g.psum, "elements, column c in bits [c*" + str(g.psum) + " +: " + str(g.psum) + "]");
  const Expr func_i = m.input("func_i", kActFunctionBits, "0 identity, 1 ReLU, 2 Norm, 3 Squash, 4 Softmax");
  const Expr len_i = m.input("len_i", g.len_bits, "vector length");
  const Expr shift_i = m.input("shift_i", g.shift_bits, "reduction right shift");
  const Expr norm_shift_i = m.input("norm_shift_i", g.nshift_bits, "sum-of-squares right shift");
  const Expr out_valid_o = m.output("out_valid_o", 1, "out_data_o holds results");
  const Expr out_last_o = m.output("out_last_o", 1, "last results of a vector");
  const Expr out_data_o = m.output("out_data_o", cols * g.out_bits,
                                   "results, column c in bits [c*" + str(g.out_bits) + " +: " + str(g.out_bits) + "]");
  const Expr busy_o = m.output("busy_o", 1, "elements in flight");
  const Expr err_o = m.output("err_o", 1, "sticky: a column's queue overflowed");
  // Column 0 drives the bank's valid/last/busy outputs; the other columns' copies go to unused wires.
  std::vector<Expr> out_valid = {out_valid_o}, out_last = {out_last_o}, busy = {busy_o};
  if (cols > 1) {
    m.lint_off("UNUSEDSIGNAL",
               "every column computes the same valid/last/busy outputs; column 0 drives the bank's,\n"
               "synthesis merges the others away.");
    for (int c = 1; c < cols; ++c) {
      out_valid.push_back(m.wire(fmt::format("out_valid_c{}", c), 1));
      out_last.push_back(m.wire(fmt::format("out_last_c{}", c), 1));
      busy.push_back(m.wire(fmt::format("busy_c{}", c), 1));
    }
    m.lint_on("UNUSEDSIGNAL");
  }
  const Expr column_errors = m.wire("err_c", cols, "per-column error flags");
  const Module unit = build_activation(cfg);
  for (int c = 0; c < cols; ++c) {
    m.instance(unit, fmt::format("u_act_c{}", c))
        .connect("clk_i", m.clk())
        .connect("rst_ni", m.rst_n())
        .connect("in_valid_i", in_valid_i)
        .connect("in_data_i", in_data_i.part(c, g.psum))
        .connect("func_i", func_i)
        .connect("len_i", len_i)
        .connect("shift_i", shift_i)
        .connect("norm_shift_i", norm_shift_i)
        .connect("out_valid_o", out_valid[c])
        .connect("out_last_o", out_last[c])
        .connect("out_data_o", out_data_o.part(c, g.out_bits))
        .connect("busy_o", busy[c])
        .connect("err_o", cols == 1 ? column_errors : column_errors[c]);
  }
  m.assign(err_o, reduce_or(column_errors));
  return m;
}

// activation.json (schemas/activation.schema.json): preset values and generator choices, read by
// tb/activation_tb.cpp and the engine's testbench.
nlohmann::json activation_summary(const AccelConfig& cfg) {
  const ActGeometry g = act_geometry(cfg);
  const bool exp_pim = cfg.softmax.exp_kind == ExpKind::kPimShift;
  return {{"cols", cfg.array.cols},
          {"psum_bits", cfg.widths.psum},
          {"act_bits", cfg.widths.act},
          {"sqrt_in_bits", cfg.norm.sqrt_in_bits},
          {"sqrt_out_bits", cfg.norm.sqrt_out_bits},
          {"squash_gain", g.sq_gain},
          {"squash_elem_bits", cfg.squash.elem_bits},
          {"squash_gain_bits", cfg.squash.gain_bits},
          {"squash_norm_bits", cfg.squash.norm_bits},
          {"squash_out_bits", cfg.squash.out_bits},
          {"squash_in_frac", cfg.squash.in_frac},
          {"squash_norm_shift", cfg.squash.norm_shift},
          {"exp_in_bits", cfg.softmax.exp_in_bits},
          {"exp_out_bits", cfg.softmax.exp_out_bits},
          {"softmax_in_frac", cfg.softmax.in_frac},
          {"max_len", g.max_len},
          {"sqrt_computed", g.sqrt_computed},
          // The PIM-CapsNet units in place of the exp and sqrt ROMs.
          {"exp_pim", exp_pim},
          {"exp_recovery", exp_pim && cfg.softmax.exp_recovery},
          {"sqrt_pim", cfg.norm.sqrt_kind == SqrtKind::kPimRsqrt},
          {"divide_pim", cfg.softmax.divide_kind == DivideKind::kPimReciprocal}};
}

void emit_activation(const AccelConfig& cfg, Design& design) {
  const ActGeometry g = act_geometry(cfg);
  const auto sqrt_t = act_sqrt_table(cfg);
  const auto squash_t = act_squash_table(cfg);
  const auto exp_t = act_exp_table(cfg);
  if (g.sqrt_computed)
    design.add_module(build_act_sqrt_computed(cfg));
  else
    design.add_module(build_act_rom(kActSqrtRomModule,
                                    "sqrt ROM of the Norm unit: norm code = round(sqrt(addr) * 2^sqrt_frac), saturated.",
                                    sqrt_t, g.sqrt_in, g.sqrt_out));
  design.add_module(build_act_rom(
      kActSquashRomModule,
      g.sq_gain ? "Squash gain ROM: address = norm, value g = n/(1+n^2) as an unsigned Q0." + std::to_string(g.sq_gain_bits + 1) +
                      " code, saturated."
                : "Squash ROM: address {element, norm}, value x*n/(1+n^2) as a Q0." + std::to_string(g.sq_out - 1) +
                      " two's-complement code.",
      squash_t, g.sq_rom_addr, g.sq_rom_data));
  design.add_module(build_act_rom(kActExpRomModule,
                                  "exp ROM of the Softmax unit: address = rounded (max - x), value = exp(-d) in Q0." +
                                      std::to_string(g.exp_out) + ", saturated.",
                                  exp_t, g.exp_in, g.exp_out));
  // The PIM-CapsNet units replace the ROMs and the divider in the unit when the preset selects them;
  // the ROMs and the divider are still written (their block tests and .hex images describe the LUT
  // option of the same preset).
  if (cfg.softmax.exp_kind == ExpKind::kPimShift) design.add_module(build_act_pim_exp(cfg));
  if (cfg.norm.sqrt_kind == SqrtKind::kPimRsqrt) design.add_module(build_act_pim_rsqrt(cfg));
  design.add_module(build_act_fifo(cfg));
  design.add_module(build_act_divider(cfg));
  if (cfg.softmax.divide_kind == DivideKind::kPimReciprocal) design.add_module(build_act_pim_recip(cfg));
  design.add_module(build_activation(cfg));
  design.add_module(build_activation_bank(cfg));
  design.add_data_file(std::string(kActSqrtRomModule) + ".hex", rom_hex(sqrt_t, g.sqrt_out));
  design.add_data_file(std::string(kActSquashRomModule) + ".hex", rom_hex(squash_t, g.sq_rom_data));
  design.add_data_file(std::string(kActExpRomModule) + ".hex", rom_hex(exp_t, g.exp_out));
  design.add_summary(kActivationSummaryName, activation_summary(cfg));
}

}  // namespace capsgen::emit
