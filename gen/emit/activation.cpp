#include "emit/activation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "emit/activation_internal.hpp"

namespace capsgen::emit {

using detail::bits;
using detail::lit;
using detail::sext;
using detail::zext;

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

// The port list: one element in with its vector's controls, one result out, busy and the sticky error.
void declare_ports(Module& m, const ActGeometry& g) {
  m.clock_and_reset()
      .input("in_valid_i", "1", "an element this cycle")
      .input("in_data_i", str(g.psum), "element: accumulator output", true)
      .input("func_i", "3", "0 identity, 1 ReLU, 2 Norm, 3 Squash, 4 Softmax (first element of a vector)")
      .input("len_i", str(g.len_bits), fmt::format("vector length 1..{} (first element of a vector)", g.max_len))
      .input("shift_i", str(g.shift_bits), "reduction right shift (first element of a vector)")
      .input("norm_shift_i", str(g.nshift_bits), "even right shift of the sum of squares (Norm, Squash)")
      .output("out_valid_o", "1", "out_data_o holds a result")
      .output("out_last_o", "1", "last result of a vector (always 1 for identity, ReLU and Norm)")
      .output("out_data_o", str(g.out_bits),
              "result: signed, sign-extended; Norm: unsigned " + std::to_string(g.sqrt_out) +
                  "-bit code, zero-extended")
      .output("busy_o", "1", "an accepted element has not produced its result yet")
      .output("err_o", "1", "sticky: an internal queue overflowed (contract violated, e.g. len > max)");
}

// The per-vector controls: the element count, the controls sampled with a vector's first element, and
// the current element's view of them (the inputs on a first element, the registers after).
void declare_vector_framing(Module& m, const ActGeometry& g) {
  const int LB = g.len_bits, SB = g.shift_bits, NSB = g.nshift_bits;
  m.comment("Vector framing and per-vector controls.");
  m.reg("cnt_q", str(LB), "elements of the current vector received");
  m.reg("func_q", "3", "function of the current vector");
  m.reg("len_q", str(LB));
  m.reg("shift_q", str(SB));
  m.reg("nshift_q", str(NSB));
  m.reg("first_q", "1", "next element opens a vector (cnt_q == 0, registered: off the reduction path)");
  m.wire("first", "1", "this element opens a vector");
  m.wire("cur_func", "3");
  m.wire("len_in", str(LB), "len_i, 0 read as 1");
  m.wire("cur_len", str(LB));
  m.wire("cur_shift", str(SB));
  m.wire("cur_nshift", str(NSB));
  m.wire("cur_vec", "1", "Norm, Squash or Softmax: a vector of len elements");
  m.wire("in_last", "1", "this element closes its vector");
}

// The reduction psum -> act (fx::reduce) and its pipeline register a_q, which carries the element's
// framing and norm shift on.
void declare_reduction(Module& m, const ActGeometry& g) {
  const int P = g.psum, A = g.act, NSB = g.nshift_bits;
  m.comment("Reduction psum -> act (fx::reduce).");
  m.wire("red_shr", str(P), "in >>> shift", true);
  m.wire("red_rbsrc", str(P + 1), "{in, 0}: bit s is the rounding bit in[s-1]");
  m.wire("red_rb", "1", "rounding bit (half up)");
  m.wire("red_round", str(P + 1), "round_shift(in, shift)", true);
  m.wire("red_act", str(A), "saturated to act bits", true);
  m.reg("a_q", str(A), "reduced element", true);
  m.reg("a_valid_q", "1");
  m.reg("a_first_q", "1");
  m.reg("a_last_q", "1");
  m.reg("a_nshift_q", str(NSB));
}

// The decoded function of the current vector and the identity / ReLU result.
void declare_function_decode(Module& m, const ActGeometry& g) {
  m.wire("f_relu", "1");
  m.wire("f_norm", "1");
  m.wire("f_squash", "1");
  m.wire("f_softmax", "1");
  m.wire("f_elem", "1", "identity or ReLU (codes 5..7 act as identity)");
  m.wire("elem_valid", "1");
  m.wire("elem_val", str(g.act), "identity / ReLU result", true);
}

// The norm/sqrt path: square, sum of squares, round-shift, saturated sqrt address, the sqrt unit's
// output and the squash ROM's norm address derived from it.
void declare_norm_path(Module& m, const ActGeometry& g) {
  const int A = g.act, NSB = g.nshift_bits, SUM = g.sum_bits, SI = g.sqrt_in, SO = g.sqrt_out, NB = g.sq_norm;
  m.comment("Norm: square, accumulate, round-shift, saturate, sqrt ROM.");
  m.wire("sq_full", str(2 * A - 1), "a^2 (exact, non-negative)");
  m.reg("sq_q", str(2 * A - 1));
  m.reg("sq_valid_q", "1");
  m.reg("sq_first_q", "1");
  m.reg("sq_last_q", "1");
  m.reg("sq_nshift_q", str(NSB));
  m.wire("sum_next", str(SUM));
  m.reg("sum_q", str(SUM), "running sum of squares");
  m.reg("tot_q", str(SUM), "sum of squares of a finished vector");
  m.reg("tot_valid_q", "1");
  m.reg("tot_nshift_q", str(NSB));
  m.wire("nrm_shr", str(SUM));
  m.wire("nrm_rbsrc", str(SUM + 1));
  m.wire("nrm_rb", "1");
  m.wire("nrm_round", str(SUM), "round_shift(sum, norm_shift)");
  m.wire("nrm_addr", str(SI), "saturated sqrt ROM address");
  m.reg("addr_q", str(SI));
  m.reg("addr_valid_q", "1");
  m.wire("sqrt_data", str(SO), "norm code (sqrt ROM output)");
  m.reg("nv_q", "1", "sqrt_data holds a vector's norm");
  m.wire("sq_m", str(NB), "squash ROM norm address: sat(round(norm >> " + std::to_string(SO - NB) + "))");
  if (SO > NB) m.wire("m_round", str(NB + 1));
}

// The softmax path's running maximum of a vector.
void declare_softmax_max(Module& m, const ActGeometry& g) {
  m.comment("Softmax: running maximum.");
  m.reg("mx_q", str(g.act), "", true);
  m.wire("mx_next", str(g.act), "max including this element", true);
}

// The element and descriptor queues and the stream engine that empties them, a vector at a time.
void declare_queues_and_stream_engine(Module& m, const ActGeometry& g) {
  const int A = g.act, DB = g.desc_bits;
  m.comment("Queues: elements (with last flag) and per-vector descriptors (Squash: norm address m;\n"
            "Softmax: maximum), consumed in order by the stream engine.");
  m.wire("elem_push", "1");
  m.wire("elem_empty", "1");
  m.wire("elem_head", str(A + 1));
  m.wire("elem_err", "1");
  m.wire("elem_last", "1");
  m.wire("elem_x", str(A), "", true);
  m.wire("desc_push_sq", "1");
  m.wire("desc_push_sm", "1");
  m.wire("desc_push", "1");
  m.wire("desc_in", str(DB));
  m.wire("desc_fifo_push", "1", "not taken directly by an idle engine (Squash bypass)");
  m.wire("desc_empty", "1");
  m.wire("desc_fifo_head", str(DB));
  m.wire("desc_err", "1");
  m.wire("desc_avail", "1");
  m.wire("desc_head", str(DB));
  m.wire("desc_pop", "1");
  m.reg("eng_busy_q", "1", "stream engine inside a vector");
  m.reg("eng_desc_q", str(DB), "its descriptor");
  m.wire("eng_start", "1");
  m.wire("eng_proc", "1", "stream engine consumes an element this cycle");
  m.wire("eng_desc", str(DB));
}

// Gain kind: bits of the signed product a * gain (the gain zero-extended).
int squash_product_bits(const ActGeometry& g) { return g.act + g.sq_gain_bits + 1; }

// The squash path's lookup: the ROM address and data, and for the gain kind the element held beside
// its gain and the rounded, saturated product; for the table kind the element's rounded address bits.
void declare_squash_lookup(Module& m, const ActGeometry& g) {
  const int A = g.act, EB = g.sq_elem, QO = g.sq_out, RA = g.sq_rom_addr, RD = g.sq_rom_data, GS = g.sq_gain_shift;
  const int GP = squash_product_bits(g);
  m.comment("Squash lookup.");
  if (g.sq_gain) {
    m.reg("sqo_x_q", str(A), "gain kind: the element, beside its gain from the ROM");
    if (GS >= 2)
      m.lint_off("UNUSEDSIGNAL", "product bits below the rounding bit do not change round-half-up (fx::round_shift).");
    m.wire("sq_prod", str(GP), "a * gain (exact)");
    if (GS >= 2) m.lint_on("UNUSEDSIGNAL");
    m.wire("sq_pround", str(GP - GS + 1), "round_half_up(a * gain >> " + std::to_string(GS) + ")");
    m.wire("sq_out", str(QO), "squash output: the rounded product, saturated");
  } else {
    m.wire("sq_e", str(EB), "squash ROM element address: sat(round(a >> " + std::to_string(A - EB) + "))", true);
    if (A > EB) m.wire("sqe_round", str(EB + 1), "", true);
  }
  m.wire("sq_addr", str(RA));
  m.wire("squash_data", str(RD));
  m.reg("sqo_valid_q", "1");
  m.reg("sqo_last_q", "1");
}

// The softmax/exp path's exp pass: the exp address max - x, the exp unit's output, the running sum and
// the exp value and sum queues.
void declare_exp_pass(Module& m, const ActGeometry& g) {
  const int A = g.act, EI = g.exp_in, EO = g.exp_out, ES = g.exp_sum_bits;
  m.comment("Softmax exp pass.");
  if (A - EI >= 2)
    m.lint_off("UNUSEDSIGNAL", "bits of max - x below the rounding bit do not change round-half-up (fx::round_shift).");
  m.wire("sm_d", str(A), "max - x (0 .. 2^act - 1)");
  if (A - EI >= 2) m.lint_on("UNUSEDSIGNAL");
  if (A > EI) m.wire("sm_round", str(EI + 1));
  m.wire("sm_addr", str(EI), "exp ROM address: sat(round((max - x) >> " + std::to_string(A - EI) + "))");
  m.wire("exp_data", str(EO));
  m.reg("ex_valid_q", "1");
  m.reg("ex_first_q", "1");
  m.reg("ex_last_q", "1");
  m.reg("esum_q", str(ES), "running sum of exp values");
  m.wire("esum_next", str(ES));
  m.wire("ef_empty", "1");
  m.wire("ef_head", str(EO + 1));
  m.wire("ef_err", "1");
  m.wire("sf_empty", "1");
  m.wire("sf_head", str(ES));
  m.wire("sf_err", "1");
}

// The softmax path's divide pass: its vector control and the divider interface.
void declare_divide_pass(Module& m, const ActGeometry& g) {
  const int A = g.act, ES = g.exp_sum_bits;
  m.comment("Softmax divide pass.");
  m.reg("c_busy_q", "1");
  m.reg("c_den_q", str(ES));
  m.wire("c_start", "1");
  m.wire("c_proc", "1");
  m.wire("c_den", str(ES));
  m.wire("div_valid", "1");
  m.wire("div_last", "1");
  m.wire("div_quot", str(A));
  m.wire("div_busy", "1");
}

// The output register and the sticky error.
void declare_output_register(Module& m, const ActGeometry& g) {
  m.comment("Output register.");
  m.reg("out_valid_q", "1");
  m.reg("out_last_q", "1");
  m.reg("out_data_q", str(g.out_bits));
  m.reg("err_q", "1");
}

// The current element's controls: the inputs on a vector's first element, the registers after. An
// element closes its vector when it is the len-th (identity and ReLU elements close their own).
void build_vector_framing(Module& m, const ActGeometry& g) {
  const int LB = g.len_bits;
  m.blank();
  m.assign("first", "first_q");
  m.assign("cur_func", "first ? func_i : func_q");
  m.assign("len_in", fmt::format("(len_i == {}) ? {} : len_i", lit(LB, 0), lit(LB, 1)));
  m.assign("cur_len", "first ? len_in : len_q");
  m.assign("cur_shift", "first ? shift_i : shift_q");
  m.assign("cur_nshift", "first ? norm_shift_i : nshift_q");
  m.assign("cur_vec", "(cur_func == 3'd2) | (cur_func == 3'd3) | (cur_func == 3'd4)");
  m.assign("in_last", fmt::format("~cur_vec | (cnt_q + {} == cur_len)", lit(LB, 1)));
}

// The reduction psum -> act (fx::reduce): arithmetic shift right by the vector's shift, round half up
// (the rounding bit is in[shift-1]; a shift wider than the element takes its sign bit), saturate.
void build_reduction(Module& m, const ActGeometry& g) {
  const int P = g.psum, A = g.act, SB = g.shift_bits;
  m.assign("red_shr", "in_data_i >>> cur_shift");
  m.assign("red_rbsrc", "{in_data_i, 1'b0}");
  if ((1 << SB) - 1 > P)
    m.assign("red_rb", fmt::format("(cur_shift > {}) ? in_data_i[{}] : red_rbsrc[cur_shift]", lit(SB, P), P - 1));
  else
    m.assign("red_rb", "red_rbsrc[cur_shift]");
  m.assign("red_round", fmt::format("{{red_shr[{}], red_shr}} + {}", P - 1, zext("red_rb", 1, P + 1)));
  m.assign("red_act", detail::sat_s("red_round", P + 1, A));
}

// The input stage's registers: the element count and the first-element flag, the per-vector controls
// sampled with a vector's first element, and the reduced element a_q with its framing (t+1).
void build_input_registers(Module& m, const ActGeometry& g) {
  const int LB = g.len_bits;
  m.always_ff_reset({nb("cnt_q", lit(LB, 0)), nb("first_q", "1'b1"), nb("func_q", "3'd0"), nb("a_valid_q", "1'b0")},
                    {nb("a_valid_q", "in_valid_i"),
                     if_("in_valid_i", {nb("cnt_q", fmt::format("in_last ? {} : cnt_q + {}", lit(LB, 0), lit(LB, 1))),
                                        nb("first_q", "in_last"), if_("first", {nb("func_q", "func_i")})})});
  m.always_ff({if_("in_valid_i", {nb("a_q", "red_act"), nb("a_first_q", "first"), nb("a_last_q", "in_last"),
                                  nb("a_nshift_q", "cur_nshift")}),
               if_("in_valid_i & first",
                   {nb("len_q", "len_in"), nb("shift_q", "shift_i"), nb("nshift_q", "norm_shift_i")})});
}

// The function decode of func_q and the identity / ReLU result of a_q (the output register takes it).
void build_function_decode(Module& m, const ActGeometry& g) {
  const int A = g.act;
  m.assign("f_relu", "func_q == 3'd1");
  m.assign("f_norm", "func_q == 3'd2");
  m.assign("f_squash", "func_q == 3'd3");
  m.assign("f_softmax", "func_q == 3'd4");
  m.assign("f_elem", "~(f_norm | f_squash | f_softmax)");
  m.assign("elem_valid", "a_valid_q & f_elem");
  m.assign("elem_val", fmt::format("(f_relu & a_q[{}]) ? {} : a_q", A - 1, lit(A, 0)));
}

// The norm/sqrt path up to the sqrt unit: square, running sum of squares (tot_q takes it with a
// vector's last element), round-shift by the vector's norm shift, saturated sqrt address addr_q.
void build_norm_pipeline(Module& m, const ActGeometry& g) {
  const int A = g.act, NSB = g.nshift_bits, SUM = g.sum_bits, SI = g.sqrt_in;
  m.blank();
  m.comment("Norm pipeline: a_q (t+1) -> sq_q (t+2) -> tot_q (t+3) -> addr_q (t+4) -> sqrt_data (t+5).");
  m.assign("sq_full", fmt::format("{} * {}", sext("a_q", A, 2 * A - 1), sext("a_q", A, 2 * A - 1)));
  m.assign("sum_next", fmt::format("sq_first_q ? {0} : sum_q + {0}", zext("sq_q", 2 * A - 1, SUM)));
  m.assign("nrm_shr", "tot_q >> tot_nshift_q");
  m.assign("nrm_rbsrc", "{tot_q, 1'b0}");
  if ((1 << NSB) - 1 > SUM)
    m.assign("nrm_rb", fmt::format("(tot_nshift_q > {}) ? 1'b0 : nrm_rbsrc[tot_nshift_q]", lit(NSB, SUM)));
  else
    m.assign("nrm_rb", "nrm_rbsrc[tot_nshift_q]");
  m.assign("nrm_round", fmt::format("nrm_shr + {}", zext("nrm_rb", 1, SUM)));
  m.assign("nrm_addr", detail::sat_u("nrm_round", SUM, SI));
  m.always_ff_reset(
      {nb("sq_valid_q", "1'b0"), nb("tot_valid_q", "1'b0"), nb("addr_valid_q", "1'b0"), nb("nv_q", "1'b0")},
      {nb("sq_valid_q", "a_valid_q & (f_norm | f_squash)"), nb("tot_valid_q", "sq_valid_q & sq_last_q"),
       nb("addr_valid_q", "tot_valid_q"), nb("nv_q", "addr_valid_q")});
  m.always_ff({if_("a_valid_q", {nb("sq_q", "sq_full"), nb("sq_first_q", "a_first_q"), nb("sq_last_q", "a_last_q"),
                                 nb("sq_nshift_q", "a_nshift_q")}),
               if_("sq_valid_q", {nb("sum_q", "sum_next")}),
               if_("sq_valid_q & sq_last_q", {nb("tot_q", "sum_next"), nb("tot_nshift_q", "sq_nshift_q")}),
               if_("tot_valid_q", {nb("addr_q", "nrm_addr")})});
}

// The sqrt unit, addr_q -> sqrt_data in one cycle: the sqrt ROM, or PIM-CapsNet's rsqrt unit
// (norm.sqrt_kind: pim-rsqrt), which has the same ports and timing.
void instantiate_sqrt_unit(Module& m, const AccelConfig& cfg) {
  m.instance(cfg.norm.sqrt_kind == SqrtKind::kPimRsqrt ? kActPimRsqrtModule : kActSqrtRomModule, "u_sqrt_rom")
      .connect("clk_i", "clk_i")
      .connect("addr_i", "addr_q")
      .connect("data_o", "sqrt_data");
}

// The squash ROM's norm address m: the norm code's top squash.norm_bits bits, rounded half up and
// saturated (the code itself when it is no wider).
void build_squash_norm_address(Module& m, const ActGeometry& g) {
  const int SO = g.sqrt_out, NB = g.sq_norm;
  if (SO > NB) {
    const int k = SO - NB;
    m.assign("m_round", fmt::format("{{1'b0, {}}} + {}", bits("sqrt_data", SO - 1, k),
                                    zext(fmt::format("sqrt_data[{}]", k - 1), 1, NB + 1)));
    m.assign("sq_m", detail::sat_u("m_round", NB + 1, NB));
  } else {
    m.assign("sq_m", "sqrt_data");
  }
}

// The softmax path's running maximum of a vector (its first element restarts it).
void build_softmax_max(Module& m) {
  m.blank();
  m.assign("mx_next", "(a_first_q | (a_q > mx_q)) ? a_q : mx_q");
  m.always_ff({if_("a_valid_q & f_softmax", {nb("mx_q", "mx_next")})});
}

// What one capsgen_act_fifo instance is connected to (the element, descriptor, exp and sum queues).
struct FifoPorts {
  std::string push, data, pop, empty, head, err;
};

// One queue: a capsgen_act_fifo of `width`-bit entries, its ports connected as `p` says.
void instantiate_fifo(Module& m, const std::string& name, int width, const FifoPorts& p) {
  m.instance(kActFifoModule, name)
      .param("Width", str(width))
      .connect("clk_i", "clk_i")
      .connect("rst_ni", "rst_ni")
      .connect("push_i", p.push)
      .connect("data_i", p.data)
      .connect("pop_i", p.pop)
      .connect("empty_o", p.empty)
      .connect("head_o", p.head)
      .connect("err_o", p.err);
}

// The element queue: every Squash and Softmax element with its last flag, popped by the stream engine.
void build_element_queue(Module& m, const ActGeometry& g) {
  const int A = g.act;
  m.assign("elem_push", "a_valid_q & (f_squash | f_softmax)");
  instantiate_fifo(m, "u_elem_fifo", A + 1,
                   {.push = "elem_push",
                    .data = "{a_last_q, a_q}",
                    .pop = "eng_proc",
                    .empty = "elem_empty",
                    .head = "elem_head",
                    .err = "elem_err"});
  m.assign("elem_last", fmt::format("elem_head[{}]", A));
  m.assign("elem_x", bits("elem_head", A - 1, 0));
}

// The descriptor queue: one entry per vector, the squash norm address m once the norm is known, or the
// softmax maximum with the last element. A squash descriptor pushed while the queue is empty is
// available in the same cycle (Squash bypass: desc_head is then the pushed value).
void build_descriptor_queue(Module& m, const ActGeometry& g) {
  const int A = g.act, NB = g.sq_norm, DB = g.desc_bits;
  m.assign("desc_push_sq", "nv_q & f_squash");
  m.assign("desc_push_sm", "a_valid_q & f_softmax & a_last_q");
  m.assign("desc_push", "desc_push_sq | desc_push_sm");
  m.assign("desc_in", fmt::format("f_squash ? {} : {}", zext("sq_m", NB, DB), sext("mx_next", A, DB)));
  instantiate_fifo(m, "u_desc_fifo", DB,
                   {.push = "desc_fifo_push",
                    .data = "desc_in",
                    .pop = "desc_pop",
                    .empty = "desc_empty",
                    .head = "desc_fifo_head",
                    .err = "desc_err"});
  m.assign("desc_avail", "~desc_empty | desc_push_sq");
  m.assign("desc_head", "desc_empty ? desc_in : desc_fifo_head");
}

// The stream engine's control: an idle engine starts a vector when a descriptor is available and then
// takes one element per cycle up to the vector's last. It pops the descriptor it starts with from the
// queue, or takes the bypassed one, which is then not pushed.
void build_stream_engine_control(Module& m) {
  m.assign("eng_start", "~eng_busy_q & desc_avail");
  m.assign("eng_proc", "eng_busy_q | eng_start");
  m.assign("eng_desc", "eng_busy_q ? eng_desc_q : desc_head");
  m.assign("desc_pop", "eng_start & ~desc_empty");
  m.assign("desc_fifo_push", "desc_push & ~(eng_start & desc_empty)");
  m.always_ff_reset({nb("eng_busy_q", "1'b0")}, {nb("eng_busy_q", "eng_proc & ~elem_last")});
  m.always_ff({if_("eng_start", {nb("eng_desc_q", "desc_head")})});
}

// The stream engine with its element and descriptor queues.
void build_stream_engine(Module& m, const ActGeometry& g) {
  m.blank();
  m.comment("Stream engine: takes the vectors in order; a vector starts when its descriptor is available\n"
            "(Squash: norm known, t_last + 5, taken directly when the engine is idle; Softmax: max known,\n"
            "t_last + 2) and the previous vector has been streamed; then one element per cycle.");
  build_element_queue(m, g);
  build_descriptor_queue(m, g);
  build_stream_engine_control(m);
}

// Squash lookup, gain kind: the ROM is addressed by the descriptor's norm address m alone; the element
// waits a cycle in sqo_x_q beside its gain, and the product is rounded half up and saturated.
void build_squash_gain_product(Module& m, const ActGeometry& g) {
  const int A = g.act, NB = g.sq_norm, QO = g.sq_out, GB = g.sq_gain_bits, GS = g.sq_gain_shift;
  const int GP = squash_product_bits(g);
  m.comment("Gain kind: the ROM holds g(norm) = n / (1 + n^2); the element waits one cycle in sqo_x_q for it.");
  m.assign("sq_addr", bits("eng_desc", NB - 1, 0));
  m.always_ff({if_("eng_proc", {nb("sqo_x_q", "elem_x")})});
  m.assign("sq_prod", fmt::format("{} * {}", sext("sqo_x_q", A, GP), zext("squash_data", GB, GP)));
  m.assign("sq_pround", fmt::format("{{sq_prod[{}], {}}} + {}", GP - 1, bits("sq_prod", GP - 1, GS),
                                    zext(fmt::format("sq_prod[{}]", GS - 1), 1, GP - GS + 1)));
  m.assign("sq_out", detail::sat_s("sq_pround", GP - GS + 1, QO));
}

// Squash lookup, table kind: the ROM is addressed by {element, norm}, the element's top
// squash.elem_bits bits rounded half up and saturated (the element itself when it is no wider).
void build_squash_table_address(Module& m, const ActGeometry& g) {
  const int A = g.act, EB = g.sq_elem, NB = g.sq_norm;
  if (A > EB) {
    const int k = A - EB;
    m.assign("sqe_round", fmt::format("{{elem_x[{}], {}}} + {}", A - 1, bits("elem_x", A - 1, k),
                                      zext(fmt::format("elem_x[{}]", k - 1), 1, EB + 1)));
    m.assign("sq_e", detail::sat_s("sqe_round", EB + 1, EB));
  } else {
    m.assign("sq_e", "elem_x");
  }
  m.assign("sq_addr", fmt::format("{{sq_e, {}}}", bits("eng_desc", NB - 1, 0)));
}

// The squash path's lookup on the stream engine's element and descriptor, and its ROM instance.
void build_squash_lookup(Module& m, const ActGeometry& g) {
  m.blank();
  if (g.sq_gain)
    build_squash_gain_product(m, g);
  else
    build_squash_table_address(m, g);
  m.instance(kActSquashRomModule, "u_squash_rom")
      .connect("clk_i", "clk_i")
      .connect("addr_i", "sq_addr")
      .connect("data_o", "squash_data");
}

// The softmax/exp path's exp address: d = max - x (non-negative), its top exp_in_bits bits rounded
// half up and saturated (d itself when it is no wider).
void build_exp_address(Module& m, const ActGeometry& g) {
  const int A = g.act, EI = g.exp_in;
  m.blank();
  m.assign("sm_d", fmt::format("{} - elem_x", bits("eng_desc", A - 1, 0)));
  if (A > EI) {
    const int k = A - EI;
    m.assign("sm_round", fmt::format("{{1'b0, {}}} + {}", bits("sm_d", A - 1, k),
                                     zext(fmt::format("sm_d[{}]", k - 1), 1, EI + 1)));
    m.assign("sm_addr", detail::sat_u("sm_round", EI + 1, EI));
  } else {
    m.assign("sm_addr", "sm_d");
  }
}

// The exp unit, sm_addr -> exp_data in one cycle: the exp ROM, or PIM-CapsNet's shift-based exp unit
// (softmax.exp_kind: pim-shift), which has the same ports and timing.
void instantiate_exp_unit(Module& m, const AccelConfig& cfg) {
  m.instance(cfg.softmax.exp_kind == ExpKind::kPimShift ? kActPimExpModule : kActExpRomModule, "u_exp_rom")
      .connect("clk_i", "clk_i")
      .connect("addr_i", "sm_addr")
      .connect("data_o", "exp_data");
}

// The pipeline registers behind the stream engine, beside the squash and exp ROMs' outputs: valid and
// last of a squash result, valid, first and last of an exp value.
void build_stream_output_registers(Module& m) {
  m.always_ff_reset({nb("sqo_valid_q", "1'b0"), nb("ex_valid_q", "1'b0")},
                    {nb("sqo_valid_q", "eng_proc & f_squash"), nb("ex_valid_q", "eng_proc & f_softmax")});
  m.always_ff({if_("eng_proc", {nb("sqo_last_q", "elem_last"), nb("ex_first_q", "eng_start"),
                                nb("ex_last_q", "elem_last")})});
}

// The running sum of a vector's exp values (its first value restarts it).
void build_exp_sum(Module& m, const ActGeometry& g) {
  m.assign("esum_next", fmt::format("ex_first_q ? {0} : esum_q + {0}", zext("exp_data", g.exp_out, g.exp_sum_bits)));
  m.always_ff({if_("ex_valid_q", {nb("esum_q", "esum_next")})});
}

// The queues between the exp pass and the divide pass: exp values with their last flag, and one sum
// per vector.
void build_exp_queues(Module& m, const ActGeometry& g) {
  instantiate_fifo(m, "u_exp_fifo", g.exp_out + 1,
                   {.push = "ex_valid_q",
                    .data = "{ex_last_q, exp_data}",
                    .pop = "c_proc",
                    .empty = "ef_empty",
                    .head = "ef_head",
                    .err = "ef_err"});
  instantiate_fifo(m, "u_sum_fifo", g.exp_sum_bits,
                   {.push = "ex_valid_q & ex_last_q",
                    .data = "esum_next",
                    .pop = "c_start",
                    .empty = "sf_empty",
                    .head = "sf_head",
                    .err = "sf_err"});
}

// The divide pass's control: a vector starts when its sum is at the sum queue's head; c_den holds the
// sum as the denominator while the vector's exp values go to the divider, one per cycle.
void build_divide_control(Module& m, const ActGeometry& g) {
  m.blank();
  m.comment("Divide pass: vector by vector in order, once its sum is known; one division per cycle.");
  m.assign("c_start", "~c_busy_q & ~sf_empty");
  m.assign("c_proc", "c_busy_q | c_start");
  m.assign("c_den", "c_busy_q ? c_den_q : sf_head");
  m.always_ff_reset({nb("c_busy_q", "1'b0")}, {nb("c_busy_q", fmt::format("c_proc & ~ef_head[{}]", g.exp_out))});
  m.always_ff({if_("c_start", {nb("c_den_q", "sf_head")})});
}

// The divider interface: an exp value with its last flag over its vector's sum in, the quotient with
// the last flag out.
void instantiate_divider(Module& m, const ActGeometry& g) {
  const int EO = g.exp_out;
  m.instance(kActDividerModule, "u_div")
      .connect("clk_i", "clk_i")
      .connect("rst_ni", "rst_ni")
      .connect("in_valid_i", "c_proc")
      .connect("in_last_i", fmt::format("ef_head[{}]", EO))
      .connect("num_i", bits("ef_head", EO - 1, 0))
      .connect("den_i", "c_den")
      .connect("out_valid_o", "div_valid")
      .connect("out_last_o", "div_last")
      .connect("quot_o", "div_quot")
      .connect("busy_o", "div_busy");
}

// The output register, fed by the identity/ReLU result, the norm code, the squash result or the
// softmax quotient (the first valid one in that order), and the sticky error of the four queues.
void build_output_register(Module& m, const ActGeometry& g) {
  const int A = g.act, SO = g.sqrt_out, QO = g.sq_out, OB = g.out_bits;
  m.blank();
  m.comment("Output register: one function is active at a time, so at most one source is valid.");
  m.always_ff_reset({nb("out_valid_q", "1'b0"), nb("err_q", "1'b0")},
                    {nb("out_valid_q", "elem_valid | (nv_q & f_norm) | sqo_valid_q | div_valid"),
                     if_("elem_err | desc_err | ef_err | sf_err", {nb("err_q", "1'b1")})});
  const Stmts from_div = {if_("div_valid", {nb("out_data_q", zext("div_quot", A, OB)), nb("out_last_q", "div_last")})};
  const Stmts from_squash = {if_("sqo_valid_q",
                                 {nb("out_data_q", sext(g.sq_gain ? "sq_out" : "squash_data", QO, OB)),
                                  nb("out_last_q", "sqo_last_q")},
                                 from_div)};
  const Stmts from_norm = {
      if_("nv_q & f_norm", {nb("out_data_q", zext("sqrt_data", SO, OB)), nb("out_last_q", "1'b1")}, from_squash)};
  m.always_ff({if_("elem_valid", {nb("out_data_q", sext("elem_val", A, OB)), nb("out_last_q", "1'b1")}, from_norm)});
}

// The output ports: the output register, busy while a vector is partly received or a stage, a queue,
// the stream engine, the divide pass or the divider holds an element, and the sticky error.
void drive_output_ports(Module& m, const ActGeometry& g) {
  m.assign("out_valid_o", "out_valid_q");
  m.assign("out_last_o", "out_last_q");
  m.assign("out_data_o", "out_data_q");
  m.assign("busy_o", fmt::format("(cnt_q != {}) | a_valid_q | sq_valid_q | tot_valid_q | addr_valid_q | nv_q |\n"
                                 "                  ~elem_empty | ~desc_empty | eng_busy_q | sqo_valid_q | ex_valid_q |\n"
                                 "                  ~ef_empty | ~sf_empty | c_busy_q | div_busy",
                                 lit(g.len_bits, 0)));
  m.assign("err_o", "err_q");
}

}  // namespace

// The pieces are built in the order the module prints them (declarations first, then assigns, always
// blocks and instances as added): reordering the calls changes the generated Verilog.
Module build_activation(const AccelConfig& cfg) {
  const ActGeometry g = act_geometry(cfg);
  Module m(kActivationModule, activation_description(g));
  declare_ports(m, g);
  declare_vector_framing(m, g);
  declare_reduction(m, g);
  declare_function_decode(m, g);
  declare_norm_path(m, g);
  declare_softmax_max(m, g);
  declare_queues_and_stream_engine(m, g);
  declare_squash_lookup(m, g);
  declare_exp_pass(m, g);
  declare_divide_pass(m, g);
  declare_output_register(m, g);

  // Stage A: framing and reduction, then the identity / ReLU result.
  build_vector_framing(m, g);
  build_reduction(m, g);
  build_input_registers(m, g);
  build_function_decode(m, g);

  // The norm/sqrt path (its code also addresses the squash ROM) and the softmax maximum.
  build_norm_pipeline(m, g);
  instantiate_sqrt_unit(m, cfg);
  build_squash_norm_address(m, g);
  build_softmax_max(m);

  // Squash and Softmax vectors are queued, then streamed through the squash lookup or the exp pass.
  build_stream_engine(m, g);
  build_squash_lookup(m, g);
  build_exp_address(m, g);
  instantiate_exp_unit(m, cfg);
  build_stream_output_registers(m);
  build_exp_sum(m, g);
  build_exp_queues(m, g);

  // The softmax divide pass, then the output register and ports.
  build_divide_control(m, g);
  instantiate_divider(m, g);
  build_output_register(m, g);
  drive_output_ports(m, g);
  return m;
}

Module build_activation_bank(const AccelConfig& cfg) {
  const ActGeometry g = act_geometry(cfg);
  const int cols = cfg.array.cols;
  Module m(kActivationBankModule,
           fmt::format("Bank of {} activation units, one per array column, sharing the control inputs: column c takes\n"
                       "in_data_i bits [c*{} +: {}] and drives out_data_o bits [c*{} +: {}]. Contract as in {}.",
                       cols, g.psum, g.psum, g.out_bits, g.out_bits, kActivationModule));
  m.clock_and_reset()
      .input("in_valid_i", "1", "an element per column this cycle")
      .input("in_data_i", str(cols * g.psum), "elements, column c in bits [c*" + str(g.psum) + " +: " + str(g.psum) + "]")
      .input("func_i", "3", "0 identity, 1 ReLU, 2 Norm, 3 Squash, 4 Softmax")
      .input("len_i", str(g.len_bits), "vector length")
      .input("shift_i", str(g.shift_bits), "reduction right shift")
      .input("norm_shift_i", str(g.nshift_bits), "sum-of-squares right shift")
      .output("out_valid_o", "1", "out_data_o holds results")
      .output("out_last_o", "1", "last results of a vector")
      .output("out_data_o", str(cols * g.out_bits),
              "results, column c in bits [c*" + str(g.out_bits) + " +: " + str(g.out_bits) + "]")
      .output("busy_o", "1", "elements in flight")
      .output("err_o", "1", "sticky: a column's queue overflowed");
  if (cols > 1) {
    m.lint_off("UNUSEDSIGNAL",
               "every column computes the same valid/last/busy outputs; column 0 drives the bank's,\n"
               "synthesis merges the others away.");
    for (int c = 1; c < cols; ++c) {
      m.wire(fmt::format("out_valid_c{}", c), "1");
      m.wire(fmt::format("out_last_c{}", c), "1");
      m.wire(fmt::format("busy_c{}", c), "1");
    }
    m.lint_on("UNUSEDSIGNAL");
  }
  m.wire("err_c", str(cols), "per-column error flags");
  for (int c = 0; c < cols; ++c) {
    m.instance(kActivationModule, fmt::format("u_act_c{}", c))
        .connect("clk_i", "clk_i")
        .connect("rst_ni", "rst_ni")
        .connect("in_valid_i", "in_valid_i")
        .connect("in_data_i", expr_slice("in_data_i", c, str(g.psum)))
        .connect("func_i", "func_i")
        .connect("len_i", "len_i")
        .connect("shift_i", "shift_i")
        .connect("norm_shift_i", "norm_shift_i")
        .connect("out_valid_o", c == 0 ? "out_valid_o" : fmt::format("out_valid_c{}", c))
        .connect("out_last_o", c == 0 ? "out_last_o" : fmt::format("out_last_c{}", c))
        .connect("out_data_o", expr_slice("out_data_o", c, str(g.out_bits)))
        .connect("busy_o", c == 0 ? "busy_o" : fmt::format("busy_c{}", c))
        .connect("err_o", cols == 1 ? "err_c" : fmt::format("err_c[{}]", c));
  }
  m.assign("err_o", "|err_c");
  return m;
}

std::string activation_summary(const AccelConfig& cfg) {
  const ActGeometry g = act_geometry(cfg);
  std::string s = file_header(cfg, "Activation unit: preset values and generator choices, read by tb/activation_tb.cpp.", "#");
  auto kv = [&s](const char* k, long long v) { s += fmt::format("{} {}\n", k, v); };
  kv("cols", cfg.array.cols);
  kv("psum_bits", cfg.widths.psum);
  kv("act_bits", cfg.widths.act);
  kv("sqrt_in_bits", cfg.norm.sqrt_in_bits);
  kv("sqrt_out_bits", cfg.norm.sqrt_out_bits);
  kv("squash_gain", g.sq_gain ? 1 : 0);
  kv("squash_elem_bits", cfg.squash.elem_bits);
  kv("squash_gain_bits", cfg.squash.gain_bits);
  kv("squash_norm_bits", cfg.squash.norm_bits);
  kv("squash_out_bits", cfg.squash.out_bits);
  kv("squash_in_frac", cfg.squash.in_frac);
  kv("squash_norm_shift", cfg.squash.norm_shift);
  kv("exp_in_bits", cfg.softmax.exp_in_bits);
  kv("exp_out_bits", cfg.softmax.exp_out_bits);
  kv("softmax_in_frac", cfg.softmax.in_frac);
  kv("max_len", g.max_len);
  kv("sqrt_computed", g.sqrt_computed ? 1 : 0);
  // PIM-CapsNet units (keys only when selected, so LUT presets keep their file).
  if (cfg.softmax.exp_kind == ExpKind::kPimShift) {
    kv("exp_pim", 1);
    kv("exp_recovery", cfg.softmax.exp_recovery ? 1 : 0);
  }
  if (cfg.norm.sqrt_kind == SqrtKind::kPimRsqrt) kv("sqrt_pim", 1);
  return s;
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
  // The PIM-CapsNet units replace the ROMs in the unit when the preset selects them; the ROMs are
  // still written (their block test and .hex images describe the LUT option of the same preset).
  if (cfg.softmax.exp_kind == ExpKind::kPimShift) design.add_module(build_act_pim_exp(cfg));
  if (cfg.norm.sqrt_kind == SqrtKind::kPimRsqrt) design.add_module(build_act_pim_rsqrt(cfg));
  design.add_module(build_act_fifo(cfg));
  design.add_module(build_act_divider(cfg));
  design.add_module(build_activation(cfg));
  design.add_module(build_activation_bank(cfg));
  design.add_data_file(std::string(kActSqrtRomModule) + ".hex", rom_hex(sqrt_t, g.sqrt_out));
  design.add_data_file(std::string(kActSquashRomModule) + ".hex", rom_hex(squash_t, g.sq_rom_data));
  design.add_data_file(std::string(kActExpRomModule) + ".hex", rom_hex(exp_t, g.exp_out));
  design.add_other_file(kActivationSummaryName, activation_summary(cfg));
}

}  // namespace capsgen::emit
