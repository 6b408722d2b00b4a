// The typed Verilog AST (emit/vast.hpp, emit/vast_expr.hpp): the exact text the printer gives for
// each construct, and the emitter bugs (width mismatches, name clashes, bad selects) it refuses.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "emit/vast.hpp"

using namespace capsgen::emit;

namespace {

// A module with a few typed signals the expression tests share.
struct Fixture {
  Module m{"capsgen_t", "test"};
  Param width = m.parameter("Width", 8, "bits");
  Expr a = m.input("a_i", 4, "");
  Expr b = m.input("b_i", 4, "");
  Expr c = m.input("c_i", 4, "");
  Expr s = m.input("s_i", 1, "");
  Expr t = m.input("t_i", 1, "");
  Expr u = m.input("u_i", 1, "");
  Expr p = m.input("p_i", width, "", true);
  Expr q = m.input("q_i", width, "", true);
  Expr w = m.wire("w", 4);
};

// The message of the std::logic_error `f` throws ("" if it throws none).
template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const std::logic_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(VastDim, NumbersFoldNamesPrint) {
  Fixture f;
  EXPECT_EQ(Dim(8).text(), "8");
  EXPECT_EQ((4 * Dim(8)).text(), "32");
  EXPECT_EQ((4 * Dim(8)).value(), 32);
  EXPECT_EQ((4 * f.width).text(), "4*Width");
  EXPECT_EQ((4 * f.width).value(), 32);
  EXPECT_EQ((f.width + 1).text(), "Width + 1");
  EXPECT_EQ((f.width + 1).value(), 9);
  EXPECT_EQ((f.width - 1).text(), "Width-1");
  EXPECT_EQ((f.width - 0).text(), "Width");
  EXPECT_EQ((Dim(8) - 1).text(), "7");
  EXPECT_EQ((2 * (f.width + 1)).text(), "2*(Width + 1)");
  EXPECT_EQ((f.width / 8).text(), "Width/8");
  EXPECT_EQ((f.width / 8).value(), 1);
  EXPECT_EQ((Dim(32) / 8).text(), "4");
  EXPECT_EQ(((2 * f.width) / 4).text(), "(2*Width)/4");
  EXPECT_THROW(f.width / 3, std::logic_error);
}

TEST(VastExpr, Literals) {
  EXPECT_EQ(lit(16, 5).text(), "16'd5");
  EXPECT_EQ(lit(16, 5).width(), 16);
  EXPECT_EQ(lit(64, ~0ULL).text(), "64'd18446744073709551615");
  EXPECT_EQ(lit_bin(3, 5).text(), "3'b101");
  EXPECT_EQ(lit_bin(4, 1).text(), "4'b0001");
  EXPECT_EQ(lit_hex(8, 255).text(), "8'hff");
  EXPECT_EQ(lit_hex(16, 10).text(), "16'ha");
  EXPECT_NE(error_of([] { (void)lit_hex(4, 16); }), "");
  EXPECT_EQ(bit(false).text(), "1'b0");
  EXPECT_EQ(bit(true).text(), "1'b1");
  EXPECT_EQ(zero(8).text(), "8'd0");
  Fixture f;
  EXPECT_EQ(zero(f.width).text(), "{Width{1'b0}}");
  EXPECT_EQ(zero(f.width).width(), 8);
  EXPECT_EQ(zero(2 * f.width).text(), "{2*Width{1'b0}}");
}

TEST(VastExpr, SignalsCarryWidthAndSign) {
  Fixture f;
  EXPECT_EQ(f.p.text(), "p_i");
  EXPECT_EQ(f.p.width(), 8);
  EXPECT_TRUE(f.p.is_signed());
  EXPECT_EQ(f.p.width_dim().text(), "Width");
  EXPECT_FALSE(f.a.is_signed());
  EXPECT_FALSE(f.a.is_lvalue());  // an input
  EXPECT_TRUE(f.w.is_lvalue());
}

TEST(VastExpr, UnaryOperators) {
  Fixture f;
  EXPECT_EQ((~f.a).text(), "~a_i");
  EXPECT_EQ((!f.s).text(), "!s_i");
  EXPECT_EQ(reduce_or(f.a).text(), "|a_i");
  EXPECT_EQ(reduce_or(f.a).width(), 1);
  EXPECT_EQ(reduce_and(f.a).text(), "&a_i");
  EXPECT_EQ(reduce_xor(f.a).text(), "^a_i");
  EXPECT_EQ((~(f.a & f.b)).text(), "~(a_i & b_i)");
  EXPECT_EQ((~reduce_and(f.a)).text(), "~(&a_i)");
  EXPECT_EQ((~f.a[0]).text(), "~a_i[0]");
}

TEST(VastExpr, BinaryOperatorsAndParentheses) {
  Fixture f;
  EXPECT_EQ((f.a & f.b).text(), "a_i & b_i");
  EXPECT_EQ((f.a & f.b & f.c).text(), "a_i & b_i & c_i");
  EXPECT_EQ((f.a & (f.b & f.c)).text(), "a_i & b_i & c_i");
  EXPECT_EQ((f.a - f.b - f.c).text(), "a_i - b_i - c_i");
  EXPECT_EQ((f.a - (f.b - f.c)).text(), "a_i - (b_i - c_i)");
  EXPECT_EQ((f.a - (f.b + f.c)).text(), "a_i - (b_i + c_i)");
  EXPECT_EQ(((f.a + f.b) & f.c).text(), "(a_i + b_i) & c_i");
  EXPECT_EQ((f.a | (f.b ^ f.c)).text(), "a_i | (b_i ^ c_i)");
  EXPECT_EQ((f.s & f.t & (f.a == f.b)).text(), "s_i & t_i & (a_i == b_i)");
  EXPECT_EQ((f.s | (f.a != f.b)).text(), "s_i | (a_i != b_i)");
  EXPECT_EQ((f.a + f.b == f.c).text(), "(a_i + b_i) == c_i");
  EXPECT_EQ(logical_and(f.s, f.t).text(), "s_i && t_i");
  EXPECT_EQ(logical_or(f.a < f.b, f.s).text(), "(a_i < b_i) || s_i");
  EXPECT_EQ((reduce_or(f.a) | f.s).text(), "(|a_i) | s_i");
  EXPECT_EQ((f.a == f.b).width(), 1);
  EXPECT_EQ((f.a + f.b).width(), 4);
  EXPECT_TRUE((f.p + f.q).is_signed());
  EXPECT_FALSE((f.p + zero(f.width)).is_signed());  // a literal is unsigned
  EXPECT_EQ((f.p <= f.q).text(), "p_i <= q_i");
  EXPECT_EQ((f.a > f.b).text(), "a_i > b_i");
  EXPECT_EQ((f.a >= f.b).text(), "a_i >= b_i");
}

TEST(VastExpr, ShiftsAndWrappingProduct) {
  Fixture f;
  EXPECT_EQ(shl(f.a, f.b).text(), "a_i << b_i");
  EXPECT_EQ(shr(f.a, f.s).text(), "a_i >> s_i");
  EXPECT_EQ(shr(f.a, f.s).width(), 4);
  EXPECT_EQ(ashr(f.p, f.a).text(), "p_i >>> a_i");
  EXPECT_TRUE(ashr(f.p, f.a).is_signed());
  EXPECT_EQ(shl(cat({f.a, f.a}), f.b).text(), "{a_i, a_i} << b_i");
  EXPECT_EQ(shl(f.a + f.b, f.c).text(), "(a_i + b_i) << c_i");
  EXPECT_EQ((shr(f.a, f.b) + f.c).text(), "(a_i >> b_i) + c_i");
  EXPECT_EQ(shl(f.a, f.b - f.c).text(), "a_i << (b_i - c_i)");
  EXPECT_EQ((f.a * f.b).text(), "a_i * b_i");
  EXPECT_EQ((f.a * f.b).width(), 4);
  EXPECT_EQ((f.a * f.b + f.c).text(), "(a_i * b_i) + c_i");
  EXPECT_NE(error_of([&] { ashr(f.a, f.b); }).find("unsigned operand"), std::string::npos);
  EXPECT_NE(error_of([&] { shl(f.a, f.p); }).find("signed shift amount"), std::string::npos);
  EXPECT_NE(error_of([&] { (void)(f.a * f.s); }).find("have 4 and 1 bits"), std::string::npos);
}

TEST(VastExpr, FullProduct) {
  Fixture f;
  const Expr prod = full_product(f.p, f.q);
  EXPECT_EQ(prod.text(), "p_i * q_i");
  EXPECT_EQ(prod.width(), 16);
  EXPECT_TRUE(prod.is_signed());
}

TEST(VastExpr, Ternary) {
  Fixture f;
  EXPECT_EQ(ternary(f.s, f.a, f.b).text(), "s_i ? a_i : b_i");
  EXPECT_EQ(ternary(f.s, f.a, ternary(f.t, f.b, f.c)).text(), "s_i ? a_i : (t_i ? b_i : c_i)");
  EXPECT_EQ(ternary(f.s, f.a, f.b + lit(4, 1)).text(), "s_i ? a_i : b_i + 4'd1");
  EXPECT_EQ(ternary(f.a == f.b, f.t, f.a != f.c).text(), "(a_i == b_i) ? t_i : (a_i != c_i)");
  EXPECT_EQ((ternary(f.s, f.a, f.b) & f.c).text(), "(s_i ? a_i : b_i) & c_i");
  EXPECT_EQ(ternary(f.s, f.a, f.b).width(), 4);
}

TEST(VastExpr, TernaryChain) {
  Fixture f;
  EXPECT_EQ(ternary_chain({{f.s, f.a}, {f.t, f.b}}, f.c).text(), "s_i ? a_i : t_i ? b_i : c_i");
  EXPECT_EQ(ternary_chain({{f.a == f.b, f.a}, {f.u, f.b}}, ternary(f.t, f.b, f.c)).text(),
            "(a_i == b_i) ? a_i : u_i ? b_i : (t_i ? b_i : c_i)");
  EXPECT_EQ(ternary_chain({{f.s, f.a}}, f.c).text(), "s_i ? a_i : c_i");
  EXPECT_EQ((ternary_chain({{f.s, f.a}, {f.t, f.b}}, f.c) & f.c).text(), "(s_i ? a_i : t_i ? b_i : c_i) & c_i");
  EXPECT_EQ(ternary_chain({{f.s, f.a}, {f.t, f.b}}, f.c).width(), 4);
  EXPECT_NE(error_of([&] { (void)ternary_chain({{f.s, f.a}, {f.t, f.p}}, f.c); }), "");  // 4 and 8 bits
  EXPECT_NE(error_of([&] { (void)ternary_chain({}, f.c); }), "");
}

TEST(VastExpr, Parentheses) {
  Fixture f;
  EXPECT_EQ(paren(f.a == f.b).text(), "(a_i == b_i)");
  EXPECT_EQ(paren(f.a[0]).text(), "(a_i[0])");
  EXPECT_EQ((~paren(f.s)).text(), "~(s_i)");
  EXPECT_EQ((paren(f.a & f.b) | f.c).text(), "(a_i & b_i) | c_i");
  EXPECT_EQ(paren(ternary(f.s, f.a, f.b)).text(), "(s_i ? a_i : b_i)");
  EXPECT_EQ(zext(paren(f.s & f.t), 3).text(), "{2'd0, (s_i & t_i)}");
  EXPECT_EQ(paren(f.p).width(), 8);
  EXPECT_TRUE(paren(f.p).is_signed());
  EXPECT_FALSE(paren(f.w).is_lvalue());
  EXPECT_EQ(ternary(paren(reduce_or(f.a)), f.a, f.b).text(), "(|a_i) ? a_i : b_i");
  EXPECT_EQ((~paren(f.a & f.b)).text(), "~(a_i & b_i)");              // no second pair
  EXPECT_EQ((paren(f.a + f.b) == f.c).text(), "(a_i + b_i) == c_i");  // no second pair
}

TEST(VastExpr, BareBinaryUnderALooserOperator) {
  Fixture f;
  EXPECT_EQ((bare(f.a + f.b) >= f.c).text(), "a_i + b_i >= c_i");
  EXPECT_EQ((f.a < bare(f.b + f.c)).text(), "a_i < b_i + c_i");
  EXPECT_EQ((f.s & bare(f.a == f.b)).text(), "s_i & a_i == b_i");
  EXPECT_EQ((bare(f.a & f.b) + f.c).text(), "(a_i & b_i) + c_i");  // & binds less tightly than +
  EXPECT_EQ((f.a - bare(f.b - f.c)).text(), "a_i - (b_i - c_i)");  // same level: as usual
  EXPECT_EQ(ternary(bare(f.a == f.b), f.a, f.b).text(), "(a_i == b_i) ? a_i : b_i");
  EXPECT_EQ(bare(f.a + f.b).text(), "a_i + b_i");
  EXPECT_NE(error_of([&] { (void)bare(f.a); }), "");
}

TEST(VastExpr, ConcatenationAndReplication) {
  Fixture f;
  EXPECT_EQ(cat({f.a, f.s}).text(), "{a_i, s_i}");
  EXPECT_EQ(cat({f.a, f.s}).width(), 5);
  EXPECT_EQ(cat({f.a & f.b, lit(2, 3)}).text(), "{a_i & b_i, 2'd3}");
  EXPECT_EQ(rep(3, f.s).text(), "{3{s_i}}");
  EXPECT_EQ(rep(3, f.a).width(), 12);
  EXPECT_EQ(rep(f.width - 1, ~f.s).text(), "{(Width-1){~s_i}}");
  EXPECT_EQ(rep(f.width - 1, ~f.s).width(), 7);
  EXPECT_TRUE(cat({f.w, f.w}).is_lvalue());
  EXPECT_FALSE(cat({f.w, f.a}).is_lvalue());
}

TEST(VastExpr, ExplicitParentheses) {
  Module m("capsgen_t", "test");
  const Expr s = m.input("s_i", 1, ""), t = m.input("t_i", 1, ""), a = m.input("a_i", 4, ""), b = m.input("b_i", 4, "");
  const Expr sa = m.input("sa_i", 4, "", true);
  EXPECT_EQ(ternary(s | t, a, b).text(), "s_i | t_i ? a_i : b_i");
  EXPECT_EQ(ternary(paren(s | t), paren(a & b), b).text(), "(s_i | t_i) ? (a_i & b_i) : b_i");
  EXPECT_EQ((paren(a + b) + a).text(), "(a_i + b_i) + a_i");
  EXPECT_EQ((~paren(a)).text(), "~(a_i)");
  EXPECT_EQ(paren(a + b).width(), 4);
  EXPECT_TRUE(paren(sa).is_signed());
  EXPECT_FALSE(paren(a).is_lvalue());
}

TEST(VastExpr, OperandsGroupedByPrecedence) {
  Module m("capsgen_t", "test");
  const Expr s = m.input("s_i", 1, ""), t = m.input("t_i", 1, ""), a = m.input("a_i", 4, ""), b = m.input("b_i", 4, "");
  EXPECT_EQ(((a + b) == b).text(), "(a_i + b_i) == b_i");
  EXPECT_EQ((bare(a + b) == b).text(), "a_i + b_i == b_i");
  EXPECT_EQ((a + bare(a * b)).text(), "a_i + a_i * b_i");
  EXPECT_EQ(ternary(s, a, bare(ternary(t, b, a))).text(), "s_i ? a_i : t_i ? b_i : a_i");
  // Where precedence would not group it so, the usual parentheses stay.
  EXPECT_EQ((bare(a | b) & a).text(), "(a_i | b_i) & a_i");
  EXPECT_EQ((a - bare(a - b)).text(), "a_i - (a_i - b_i)");
  EXPECT_EQ(ternary(s, bare(ternary(t, b, a)), a).text(), "s_i ? (t_i ? b_i : a_i) : a_i");
  EXPECT_EQ((~bare(a + b)).text(), "~(a_i + b_i)");
  EXPECT_EQ(bare(a + b).width(), 4);
}

TEST(VastExpr, Selects) {
  Fixture f;
  EXPECT_EQ(f.a[3].text(), "a_i[3]");
  EXPECT_EQ(f.p[f.width - 1].text(), "p_i[Width-1]");
  EXPECT_EQ(f.a.slice(2, 1).text(), "a_i[2:1]");
  EXPECT_EQ(f.a.slice(2, 1).width(), 2);
  EXPECT_EQ(f.a.slice(0, 0).text(), "a_i[0:0]");
  EXPECT_EQ(f.p.slice(f.width - 1, 0).text(), "p_i[Width-1:0]");
  EXPECT_FALSE(f.p.slice(f.width - 1, 0).is_signed());  // a select is unsigned
  EXPECT_TRUE(f.w.slice(1, 0).is_lvalue());
  EXPECT_EQ(f.a.at(f.s).text(), "a_i[s_i]");
  EXPECT_EQ(f.a.at(f.s).width(), 1);
}

TEST(VastExpr, PartSelects) {
  Module m("capsgen_t", "test");
  const Param w = m.parameter("Width", 8, "");
  const Expr v = m.input("v_i", 4 * w, "");
  const Expr n = m.input("n_i", 12, "");
  EXPECT_EQ(v.part(0, w).text(), "v_i[0 +: Width]");
  EXPECT_EQ(v.part(3, w).text(), "v_i[3*Width +: Width]");
  EXPECT_EQ(v.part(3, w).width(), 8);
  EXPECT_EQ(n.part(2, 4).text(), "n_i[11:8]");
  EXPECT_EQ(n.part(5, 1).text(), "n_i[5]");
}

TEST(VastExpr, PartSelectsChosenAtRunTime) {
  Module m("capsgen_t", "test");
  const Param w = m.parameter("Width", 8, "");
  const Expr v = m.input("v_i", 4 * w, "");
  const Expr lane = m.input("lane_i", 2, "");
  const Expr lsb = m.input("lsb_i", 4, "");
  EXPECT_EQ(v.part_at(lane, w).text(), "v_i[lane_i*Width +: Width]");
  EXPECT_EQ(v.part_at(lane, w).width(), 8);
  EXPECT_EQ(v.part_at(lane ^ lit(2, 1), 8).text(), "v_i[(lane_i ^ 2'd1)*8 +: 8]");
  EXPECT_EQ(v.part_from(lsb, 16).text(), "v_i[lsb_i +: 16]");
  EXPECT_EQ(v.part_from(cat({lane, lit(3, 0)}), w).text(), "v_i[{lane_i, 3'd0} +: Width]");
  EXPECT_NE(error_of([&] { v.part_at(lsb, w); }).find("reaches outside"), std::string::npos);
  EXPECT_EQ(v.part_at(index_below(lsb, 4), w).text(), "v_i[lsb_i*Width +: Width]");  // a guarded index
  EXPECT_NE(error_of([&] { v.part_at(index_below(lsb, 5), w); }).find("reaches outside"), std::string::npos);
  EXPECT_NE(error_of([&] { v.part_from(cat({lsb, lsb}), w); }).find("reaches outside"), std::string::npos);
}

TEST(VastExpr, PartSelectsAtAFixedOffset) {
  Module m("capsgen_t", "test");
  const Param w = m.parameter("Width", 8, "");
  const Expr v = m.input("v_i", 4 * w, "");
  EXPECT_EQ(v.part_from(18, 6).text(), "v_i[18 +: 6]");
  EXPECT_EQ(v.part_from(18, 6).width(), 6);
  EXPECT_EQ(v.part_from(2 * w, w).text(), "v_i[2*Width +: Width]");
  EXPECT_EQ(v.part_from(0, 32).text(), "v_i[0 +: 32]");
  EXPECT_NE(error_of([&] { (void)v.part_from(30, 3); }).find("outside a 32-bit signal"), std::string::npos);
  EXPECT_NE(error_of([&] { (void)v.part_from(0, 0); }), "");
}

TEST(VastExpr, MemoryWords) {
  Module m("capsgen_t", "test");
  const Memory mem = m.memory("mem", 16, 4);
  const Expr addr = m.input("addr_i", 2, "");
  EXPECT_EQ(mem[addr].text(), "mem[addr_i]");
  EXPECT_EQ(mem[addr].width(), 16);
  EXPECT_TRUE(mem[addr].is_lvalue());
  EXPECT_EQ(mem.word(3).text(), "mem[3]");
  EXPECT_EQ(mem.word(3).slice(1, 0).text(), "mem[3][1:0]");
  EXPECT_EQ(mem.word(3).slice(1, 0).width(), 2);
  EXPECT_NE(error_of([&] { (void)mem.word(4); }), "");  // 4 words
}

TEST(VastExpr, Extensions) {
  Module m("capsgen_t", "test");
  const Param pw = m.parameter("ProdWidth", 16, "");
  const Param sw = m.parameter("SumWidth", 20, "");
  const Expr prod = m.wire("prod", pw, "", true);
  const Expr x = m.wire("x", 6);
  EXPECT_EQ(sext(x, 10).text(), "{{4{x[5]}}, x}");
  EXPECT_EQ(sext(x, 10).width(), 10);
  EXPECT_EQ(sext(x, 6).text(), "x");
  EXPECT_EQ(sext(prod, sw).text(), "{{(SumWidth-ProdWidth+1){prod[ProdWidth-1]}}, prod[ProdWidth-2:0]}");
  EXPECT_EQ(sext(prod, sw).width(), 20);
  EXPECT_EQ(sext(prod, pw).text(), "{{(ProdWidth-ProdWidth+1){prod[ProdWidth-1]}}, prod[ProdWidth-2:0]}");
  EXPECT_EQ(zext(x, 10).text(), "{4'd0, x}");
  EXPECT_EQ(zext(x, 6).text(), "x");
  EXPECT_EQ(zext(prod, sw).text(), "{{(SumWidth-ProdWidth){1'b0}}, prod}");
  EXPECT_EQ(zext(x & x, 7).text(), "{1'd0, x & x}");
}

// Named constants (FSM states, codes): typed localparams usable as case labels and operands.
TEST(VastModule, NamedConstantsAreTypedLocalparams) {
  Module m("capsgen_demo", "An FSM.");
  m.clock_and_reset();
  const Expr go = m.input("go_i", 1, "start");
  const Expr st_idle = m.constant("StIdle", 2, 0, "waiting for go_i");
  const Expr st_run = m.constant("StRun", 2, 2);
  const Expr flag = m.constant("FlagOn", 1, 1);
  const Expr state_q = m.reg("state_q", 2), state_d = m.reg("state_d", 2);
  EXPECT_EQ(st_run.width(), 2);
  EXPECT_EQ(st_run.text(), "StRun");
  EXPECT_EQ(st_idle.module(), "");
  m.always_comb({blk(state_d, state_q),
                 case_(state_q, {{st_idle, {if_(go == flag, {blk(state_d, st_run)})}}, {st_run, {blk(state_d, st_idle)}}})});
  m.always_ff_reset({nb(state_q, st_idle)}, {nb(state_q, state_d)});
  const std::string text = print_module(m);
  EXPECT_NE(text.find("  localparam [1:0] StIdle = 2'd0;  // waiting for go_i\n  localparam [1:0] StRun = 2'd2;\n"
                      "  localparam FlagOn = 1'd1;\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("    case (state_q)\n      StIdle: begin\n        if (go_i == FlagOn) begin\n"), std::string::npos) << text;
  EXPECT_NE(error_of([&] { m.constant("StRun", 2, 1); }), "");        // declared twice
  EXPECT_NE(error_of([&] { m.constant("StBig", 2, 4); }), "");        // does not fit
  EXPECT_NE(error_of([&] { m.constant("st_lower", 2, 0); }), "");     // not UpperCamelCase
  EXPECT_NE(error_of([&] { (void)case_(state_q, {{flag, {}}}); }), "");  // a label of another width
}

TEST(VastModule, PrintsTypedDeclarationsAndStatements) {
  Module m("capsgen_demo", "A counter.");
  const Param width = m.parameter("Width", 4, "bits");
  m.clock_and_reset();
  const Expr en = m.input("en_i", 1, "count");
  const Expr d = m.input("d_i", width, "data", true);
  const Expr q = m.output("q_o", width, "count", true);
  const Expr wide = m.output("wide_o", 2 * width, "two of them");
  const Param depth = m.localparam("Depth", width + 1, "entries");
  const Expr count = m.reg("count_q", width, "the count", true);
  const Expr sum = m.wire("sum", width + 1);
  const Memory mem = m.memory("mem", width, depth, "storage");
  m.blank();
  m.assign(sum, zext(count, width + 1));
  m.assign(q, count);
  m.assign(wide.part(0, width), d);
  m.assign(wide.part(1, width), mem[lit(3, 0)]);
  m.always_ff_reset({nb(count, zero(width))}, {if_(en & (count != d), {nb(count, count + d)}, {nb(count, count)})});
  m.always_comb({blk(mem[lit(3, 1)], d)});
  m.instance(m, "u_self").param(width).connect("clk_i", m.clk()).connect("rst_ni", m.rst_n()).connect("q_o", sum.slice(3, 0));
  EXPECT_EQ(print_module(m),
            "// A counter.\n"
            "module capsgen_demo #(\n"
            "  parameter integer Width = 4  // bits\n"
            ") (\n"
            "  input  wire clk_i,  // clock, all registers on its rising edge\n"
            "  input  wire rst_ni,  // asynchronous reset, active low (control registers only)\n"
            "  input  wire en_i,  // count\n"
            "  input  wire signed [Width-1:0] d_i,  // data\n"
            "  output wire signed [Width-1:0] q_o,  // count\n"
            "  output wire [(2*Width)-1:0] wide_o  // two of them\n"
            ");\n"
            "  localparam integer Depth = Width + 1;  // entries\n"
            "  reg signed [Width-1:0] count_q;  // the count\n"
            "  wire [(Width + 1)-1:0] sum;\n"
            "  reg [Width-1:0] mem [0:Depth-1];  // storage\n"
            "\n"
            "  assign sum = {{(Width + 1-Width){1'b0}}, count_q};\n"
            "  assign q_o = count_q;\n"
            "  assign wide_o[0 +: Width] = d_i;\n"
            "  assign wide_o[1*Width +: Width] = mem[3'd0];\n"
            "  always @(posedge clk_i or negedge rst_ni) begin\n"
            "    if (!rst_ni) begin\n"
            "      count_q <= {Width{1'b0}};\n"
            "    end else begin\n"
            "      if (en_i & (count_q != d_i)) begin\n"
            "        count_q <= count_q + d_i;\n"
            "      end else begin\n"
            "        count_q <= count_q;\n"
            "      end\n"
            "    end\n"
            "  end\n"
            "  always @* begin\n"
            "    mem[3'd1] = d_i;\n"
            "  end\n"
            "  capsgen_demo #(\n"
            "    .Width(Width)\n"
            "  ) u_self (\n"
            "    .clk_i(clk_i),\n"
            "    .rst_ni(rst_ni),\n"
            "    .q_o(sum[3:0])\n"
            "  );\n"
            "endmodule\n");
}

TEST(VastModule, AssertionsPrintInOneGuardedBlock) {
  Module m("capsgen_demo", "A registered handshake.");
  m.clock_and_reset();
  const Expr valid = m.input("valid_i", 1, "valid");
  const Expr ready = m.output("ready_o", 1, "ready");
  const Expr data = m.input("data_i", 4, "payload");
  m.assign(ready, valid);
  m.assumption("a_data_held", ~past(valid & ~ready) | (data == past(data)), "The payload is held while waiting.");
  m.assertion("a_ready", ~valid | ready, "Ready whenever valid.");
  const std::string text = print_module(m);
  EXPECT_NE(text.find("  assign ready_o = valid_i;\n"
                      "\n"
                      "`ifdef CAPSGEN_ASSERTIONS\n"
                      "  // Assertions (docs/rtl-assertions.md): checked at every clock edge out of reset.\n"
                      "  // Lint waiver: the check samples rst_ni at the clock ($past) to skip the first edge out of\n"
                      "  // reset; the design itself uses rst_ni only as an asynchronous reset.\n"
                      "  // verilator lint_off SYNCASYNCNET\n"
                      "  always @(posedge clk_i) begin\n"
                      "    if (rst_ni && $past(rst_ni)) begin\n"
                      "      // The payload is held while waiting.\n"
                      "      a_data_held: assume (~$past(valid_i & ~ready_o) | (data_i == $past(data_i)));\n"
                      "      // Ready whenever valid.\n"
                      "      a_ready: assert (~valid_i | ready_o);\n"
                      "    end\n"
                      "  end\n"
                      "  // verilator lint_on SYNCASYNCNET\n"
                      "`endif\n"
                      "endmodule\n"),
            std::string::npos)
      << text;
  EXPECT_NE(error_of([&] { m.assertion("ready_ok", ready, ""); }).find("not a_lower_snake_case"), std::string::npos);
  EXPECT_NE(error_of([&] { m.assertion("a_ready", ready, ""); }).find("duplicate name a_ready"), std::string::npos);
  EXPECT_NE(error_of([&] { m.assertion("a_wide", data, ""); }), "");
  Module bare("capsgen_bare", "No clock.");
  const Expr x = bare.input("x_i", 1, "x");
  EXPECT_NE(error_of([&] { bare.assertion("a_x", x, ""); }).find("needs clock_and_reset()"), std::string::npos);
}

TEST(VastModule, TypedCaseAndForLoop) {
  Module m("capsgen_demo", "A ROM and a byte-lane write.");
  m.clock_and_reset();
  const Expr addr = m.input("addr_i", 2, "address");
  const Expr be = m.input("be_i", 2, "byte enables");
  const Expr data = m.reg("data_q", 8, "ROM word");
  const Expr word = m.reg("word_q", 16, "written word");
  const Expr lane = m.loop_variable("lane", 2, "byte lane");
  m.always_ff({case_(addr, {{lit(2, 0), {nb(data, lit(8, 7))}}, {lit(2, 1), {nb(data, lit(8, 9)), nb(word, zero(16))}}},
                     {nb(data, zero(8))}),
               for_(lane, 2, {if_(be.at(lane), {nb(word.part_at(lane, 8), data)})})});
  const std::string text = print_module(m);
  EXPECT_NE(text.find("  integer lane;  // byte lane\n"), std::string::npos) << text;
  // An arm of one assignment prints on one line.
  EXPECT_NE(text.find("    case (addr_i)\n"
                      "      2'd0: data_q <= 8'd7;\n"
                      "      2'd1: begin\n"
                      "        data_q <= 8'd9;\n"
                      "        word_q <= 16'd0;\n"
                      "      end\n"
                      "      default: data_q <= 8'd0;\n"
                      "    endcase\n"
                      "    for (lane = 0; lane < 2; lane = lane + 1) begin\n"
                      "      if (be_i[lane]) begin\n"
                      "        word_q[lane*8 +: 8] <= data_q;\n"
                      "      end\n"
                      "    end\n"),
            std::string::npos)
      << text;
  EXPECT_NE(error_of([&] { case_(addr, {{lit(3, 0), {}}}); }).find("not a 2-bit constant"), std::string::npos);
  EXPECT_NE(error_of([&] { case_(addr, {{be, {}}}); }).find("not a 2-bit constant"), std::string::npos);
  EXPECT_NE(error_of([&] { for_(data, 2, {}); }).find("not a loop variable"), std::string::npos);
  EXPECT_NE(error_of([&] { for_(lane, 3, {}); }).find("whose limit is 2"), std::string::npos);
  EXPECT_NE(error_of([&] { word.part_at(m.loop_variable("wide", 3), 8); }).find("reaches outside"), std::string::npos);
}

TEST(VastModule, PortLooksUpADeclaredPort) {
  Module m("capsgen_t", "test");
  const Param width = m.parameter("Width", 4, "bits");
  m.clock_and_reset();
  m.input("shared_i", "6", "declared by a shared helper (text width)");
  m.input("text_i", "Width+1", "a text width that is not a number");
  m.output("typed_o", width, "typed");
  const Expr shared = m.port("shared_i");
  EXPECT_EQ(shared.width(), 6);
  EXPECT_EQ(shared.text(), "shared_i");
  EXPECT_FALSE(shared.is_lvalue());
  const Expr typed = m.port("typed_o");
  EXPECT_EQ(typed.width(), 4);
  EXPECT_EQ(typed.width_dim().text(), "Width");
  EXPECT_TRUE(typed.is_lvalue());
  EXPECT_EQ(m.port("clk_i").text(), "clk_i");
  EXPECT_NE(error_of([&] { (void)m.port("text_i"); }).find("has a text width"), std::string::npos);
  EXPECT_NE(error_of([&] { (void)m.port("missing_i"); }).find("no port missing_i in capsgen_t"), std::string::npos);
}

TEST(VastErrors, WidthMismatchNamesModuleAndExpression) {
  Fixture f;
  const std::string e = error_of([&] { (void)(f.a & f.p); });
  EXPECT_NE(e.find("capsgen_t"), std::string::npos) << e;
  EXPECT_NE(e.find("a_i & p_i"), std::string::npos) << e;
  EXPECT_NE(e.find("4 and 8 bits"), std::string::npos) << e;
  EXPECT_NE(error_of([&] { (void)(f.a + f.s); }), "");
  EXPECT_NE(error_of([&] { (void)(f.a == f.p); }), "");
  EXPECT_NE(error_of([&] { (void)(f.p < zero(f.width)); }), "");  // signed with unsigned
  EXPECT_NE(error_of([&] { (void)logical_and(f.a, f.b); }), "");  // 4-bit operands
  EXPECT_NE(error_of([&] { (void)!f.a; }), "");
  EXPECT_NE(error_of([&] { (void)ternary(f.a, f.b, f.c); }), "");  // 4-bit selector
  EXPECT_NE(error_of([&] { (void)ternary(f.s, f.a, f.p); }), "");  // branches 4 and 8 bits
  EXPECT_NE(error_of([&] { (void)(full_product(f.p, f.q) + full_product(f.p, f.q)); }), "");
  EXPECT_NE(error_of([&] { (void)full_product(f.p, f.a); }), "");  // signed times unsigned
  EXPECT_EQ(error_of([&] { (void)(f.a & f.b); }), "");
}

TEST(VastErrors, AssignmentsAndConditions) {
  Fixture f;
  const std::string e = error_of([&] { f.m.assign(f.w, f.p); });
  EXPECT_NE(e.find("capsgen_t"), std::string::npos) << e;
  EXPECT_NE(e.find("w = p_i"), std::string::npos) << e;
  EXPECT_NE(error_of([&] { f.m.assign(f.a, f.b); }), "");       // an input
  EXPECT_NE(error_of([&] { (void)nb(f.w, f.s); }), "");
  EXPECT_NE(error_of([&] { (void)blk(f.w & f.a, f.a); }), "");  // not assignable
  EXPECT_NE(error_of([&] { (void)if_(f.a, {}); }), "");         // 4-bit condition
  EXPECT_EQ(error_of([&] { (void)nb(f.w, f.a); }), "");
}

TEST(VastErrors, LiteralsMustFit) {
  EXPECT_NE(error_of([] { (void)lit(4, 16); }), "");
  EXPECT_EQ(error_of([] { (void)lit(4, 15); }), "");
  EXPECT_NE(error_of([] { (void)lit_bin(2, 4); }), "");
  EXPECT_NE(error_of([] { (void)lit(0, 0); }), "");
  Fixture f;
  EXPECT_NE(error_of([&] { (void)lit(f.width, 1); }), "");  // Width'd1 is not Verilog
  EXPECT_EQ(lit(128, 1).text(), "128'd1");  // decimal literals of any width
  EXPECT_NE(error_of([] { (void)lit_bin(65, 1); }), "");
}

TEST(VastModule, ForwardWires) {
  Module m("capsgen_t", "test");
  const Expr a = m.input("a_i", 4, "");
  const Expr y = m.output("y_o", 4, "");
  const Expr later = m.forward_wire("later", 4);
  m.assign(y, later);
  EXPECT_NE(error_of([&] { (void)print_module(m); }), "");  // never declared
  EXPECT_NE(error_of([&] { (void)m.forward_wire("later", 8); }), "");
  EXPECT_NE(error_of([&] { (void)m.forward_wire("a_i", 4); }), "");  // declared already
  EXPECT_NE(error_of([&] { (void)m.wire("later", 8); }), "");         // another width
  const Expr w = m.wire("later", 4);
  m.assign(w, a);
  EXPECT_EQ(w.text(), later.text());
  const std::string v = print_module(m);
  EXPECT_NE(v.find("  assign y_o = later;\n"), std::string::npos);
  EXPECT_LT(v.find("assign y_o = later;"), v.find("wire [3:0] later;"));
}

TEST(VastErrors, SelectsStayInside) {
  Fixture f;
  const std::string e = error_of([&] { (void)f.a[4]; });
  EXPECT_NE(e.find("a_i[4]"), std::string::npos) << e;
  EXPECT_NE(e.find("capsgen_t"), std::string::npos) << e;
  EXPECT_NE(error_of([&] { (void)f.a.slice(4, 0); }), "");
  EXPECT_NE(error_of([&] { (void)f.a.slice(1, 2); }), "");
  EXPECT_NE(error_of([&] { (void)f.a.part(2, 2); }), "");
  EXPECT_NE(error_of([&] { (void)(f.a & f.b)[0]; }), "");  // only names are selected
  EXPECT_NE(error_of([&] { (void)zext(f.a, 3); }), "");    // narrowing
  EXPECT_NE(error_of([&] { (void)sext(f.s, 4); }), "");    // a 1-bit operand
  EXPECT_NE(error_of([&] { (void)sext(f.a & f.b, 6); }), "");
  EXPECT_NE(error_of([&] { (void)rep(0, f.a); }), "");
  EXPECT_NE(error_of([&] { (void)f.a.at(f.b); }), "");    // a 4-bit index into 4 bits
  EXPECT_EQ(error_of([&] { (void)f.a.part(1, 2); }), "");
}

TEST(VastErrors, NameClashesAnywhereInAModule) {
  Module m("capsgen_t", "test");
  m.parameter("Width", 8, "");
  m.input("x_i", 1, "");
  m.wire("n", 1);
  m.instance("capsgen_other", "u_a");
  EXPECT_NE(error_of([&] { m.wire("x_i", 1); }), "");            // a port
  EXPECT_NE(error_of([&] { m.reg("n", 1); }), "");               // a net
  EXPECT_NE(error_of([&] { m.localparam("Width", 3); }), "");    // a parameter
  EXPECT_NE(error_of([&] { m.parameter("Width", "8", ""); }), "");
  EXPECT_NE(error_of([&] { m.wire("u_a", 1); }), "");            // an instance
  EXPECT_NE(error_of([&] { m.instance("capsgen_other", "n"); }), "");
  EXPECT_NE(error_of([&] { m.memory("n", 8, 4); }), "");
  EXPECT_NE(error_of([&] { m.input("x_i", 1, ""); }), "");
  EXPECT_NE(error_of([&] { m.integer("n"); }), "");
  const std::string e = error_of([&] { m.reg("n", "1"); });  // the text API too
  EXPECT_NE(e.find("duplicate name n in capsgen_t"), std::string::npos) << e;
}

TEST(VastErrors, TypedInstancesCheckTheChild) {
  Module child("capsgen_child", "child");
  const Param cw = child.parameter("Width", 8, "");
  child.input("d_i", cw, "");
  child.output("q_o", 1, "");
  Module m("capsgen_t", "test");
  const Param w8 = m.parameter("Width", 8, "");
  const Param w4 = m.parameter("Narrow", 4, "");
  const Expr d8 = m.wire("d8", w8);
  const Expr d4 = m.wire("d4", w4);
  const Expr in = m.input("in_i", 1, "");
  Instance& u = m.instance(child, "u_child");
  EXPECT_EQ(error_of([&] { u.param(w8).connect("d_i", d8); }), "");
  EXPECT_NE(error_of([&] { u.param(w4); }), "");           // no parameter Narrow
  EXPECT_NE(error_of([&] { u.connect("d_i", d4); }), "");  // 4 bits to an 8-bit port
  EXPECT_NE(error_of([&] { u.connect("e_i", d8); }), "");  // no such port
  EXPECT_NE(error_of([&] { u.connect("q_o", in); }), "");  // an output driving an input
  Module other("capsgen_u", "other");
  const Param w6 = other.parameter("Width", 6, "");
  const Expr o = other.wire("o", 8);
  EXPECT_NE(error_of([&] { u.param(w6); }), "");           // the child has Width = 8
  EXPECT_NE(error_of([&] { u.connect("d_i", o); }), "");   // a signal of another module
  EXPECT_NE(error_of([&] { (void)(o & d8); }), "");        // mixing modules
  EXPECT_NE(error_of([&] { m.assign(o, d8); }), "");
}

TEST(VastErrors, TypedInstancesEvaluateWidthExpressionsUnderOverrides) {
  Module child("capsgen_child", "child");
  const Param cw = child.parameter("Width", 64, "");
  const Param depth = child.parameter("Depth", 4, "");
  child.input("be_i", cw / 8, "");
  child.input("two_i", 2 * (cw + depth) - 1, "");
  child.input("text_i", "Width/8", "");  // a text width: not evaluated
  Module m("capsgen_t", "test");
  const Expr b2 = m.wire("b2", 2), b3 = m.wire("b3", 3), b8 = m.wire("b8", 8), b39 = m.wire("b39", 39);
  Instance& u = m.instance(child, "u_child");
  u.param("Width", 16);
  EXPECT_EQ(error_of([&] { u.connect("be_i", b2); }), "");
  EXPECT_NE(error_of([&] { u.connect("be_i", b8); }), "");  // 16/8 = 2 bits, not 8
  EXPECT_EQ(error_of([&] { u.connect("two_i", b39); }), "");  // 2*(16 + 4) - 1
  EXPECT_NE(error_of([&] { u.connect("two_i", b3); }), "");
  EXPECT_NE(error_of([&] { u.connect("text_i", b2); }), "");  // cannot be checked
}

TEST(VastErrors, ParameterSetToTheChildsValueKeepsWidthsChecked) {
  Module child("capsgen_child", "child");
  const Param rows = child.parameter("Rows", 4, "");
  const Param width = child.parameter("Width", 8, "");
  child.input("v_i", 2 * width, "");
  child.input("r_i", rows, "");
  Module m("capsgen_t", "test");
  const Expr v16 = m.wire("v16", 16), v8 = m.wire("v8", 8), r4 = m.wire("r4", 4);
  Instance& same = m.instance(child, "u_same");
  same.param("Width", 8).connect("v_i", v16);  // the child's own value: 2*Width is still known
  EXPECT_NE(error_of([&] { same.connect("v_i", v8); }), "");
  EXPECT_EQ(same.params.back().second, "8");
  Instance& other = m.instance(child, "u_other");
  other.param("Width", 4).param("Rows", 2);
  EXPECT_EQ(error_of([&] { other.connect("v_i", v8); }), "");  // 2*Width under the override: 8 bits
  EXPECT_NE(error_of([&] { other.connect("v_i", v16); }), "");
  EXPECT_NE(error_of([&] { other.connect("r_i", r4); }), "");  // Rows = 2
}

TEST(VastReset, RegisterWithoutResetValueIsRefused) {
  Module m("capsgen_t", "test");
  m.clock_and_reset();
  const Expr en = m.input("en_i", 1, "");
  const Expr d = m.input("d_i", 8, "");
  const Expr busy = m.reg("busy_q", 1);
  const Expr data = m.reg("data_q", 8);
  const std::string e =
      error_of([&] { m.always_ff_reset({nb(busy, bit(false))}, {nb(busy, en), if_(en, {nb(data, d)})}); });
  EXPECT_NE(e.find("capsgen_t"), std::string::npos) << e;
  EXPECT_NE(e.find("without a reset value: data_q"), std::string::npos) << e;
  EXPECT_EQ(e.find("busy_q"), std::string::npos) << e;  // it has one
}

TEST(VastReset, NestedAndSelectedTargetsAreFound) {
  Module m("capsgen_t", "test");
  m.clock_and_reset();
  m.input("sel_i", "2", "");
  m.reg("a_q", "8");
  m.reg("b_q", "8");
  m.reg("c_q", "8");
  m.reg("e_q", "4");
  m.reg("f_q", "4");
  m.integer("i");
  const Stmts body = {if_("sel_i[0]", {case_("sel_i", {{"2'd1", {nb("a_q[3:0]", "4'd1")}},
                                                       {"default", {for_("i", "4", {nb("b_q[i]", "1'b1")})}}})},
                          {if_("sel_i[1]", {nb("{e_q, f_q}", "8'd0")}, {nb("c_q[7 -: 2]", "2'd0")})})};
  EXPECT_EQ(assigned_signals(body), (std::vector<std::string>{"a_q", "b_q", "e_q", "f_q", "c_q"}));
  const std::string e = error_of([&] { m.always_ff_reset({nb("a_q", "8'd0"), nb("e_q", "4'd0")}, body); });
  EXPECT_NE(e.find("without a reset value: b_q, f_q, c_q"), std::string::npos) << e;
  EXPECT_EQ(error_of([&] { m.always_ff_reset(m.reset_to_zero(assigned_signals(body)), body); }), "");
  EXPECT_NE(print_module(m).find("      b_q <= 8'd0;\n"), std::string::npos);
}

TEST(VastReset, ResetRegistersPassAndZeroKeepsTheWidth) {
  Module m("capsgen_t", "test");
  m.clock_and_reset();
  const Param w = m.parameter("Width", 12, "");
  const Expr en = m.input("en_i", 1, "");
  const Expr d = m.input("d_i", w, "");
  const Expr flag = m.reg("flag_q", 1);
  const Expr cnt = m.reg("cnt_q", 5);
  const Expr data = m.reg("data_q", w);
  const Stmts reset = m.reset_to_zero({"flag_q", "cnt_q", "data_q"});
  ASSERT_EQ(reset.size(), 3u);
  EXPECT_EQ(reset[0].rhs, "1'b0");
  EXPECT_EQ(reset[1].rhs, "5'd0");
  EXPECT_EQ(reset[2].rhs, "{Width{1'b0}}");
  EXPECT_EQ(error_of([&] { m.always_ff_reset(reset, {nb(flag, en), if_(en, {nb(cnt, cnt + lit(5, 1)), nb(data, d)})}); }),
            "");
  EXPECT_NE(error_of([&] { (void)m.reset_to_zero({"en_i"}); }), "");  // not a register
}

TEST(VastReset, MemoriesStayOutOfResetBlocks) {
  Module m("capsgen_t", "test");
  m.clock_and_reset();
  const Expr we = m.input("we_i", 1, "");
  const Expr addr = m.input("addr_i", 2, "");
  const Expr d = m.input("d_i", 8, "");
  const Memory mem = m.memory("mem_q", 8, 4);
  const std::string e = error_of([&] { m.always_ff_reset({}, {if_(we, {nb(mem[addr], d)})}); });
  EXPECT_NE(e.find("capsgen_t: memory assigned in an async-reset block (use always_ff): mem_q"), std::string::npos) << e;
  EXPECT_EQ(error_of([&] { m.always_ff({if_(we, {nb(mem[addr], d)})}); }), "");
  // Declared after an async-reset block that assigns it (text API, unchecked targets): refused too.
  Module n("capsgen_u", "test");
  n.clock_and_reset();
  n.always_ff_reset({nb("late_q[0]", "1'b0")}, {nb("late_q[1]", "1'b1")});
  const std::string late = error_of([&] { n.memory("late_q", "8", "4"); });
  EXPECT_NE(late.find("memory late_q is assigned in an async-reset block"), std::string::npos) << late;
}

TEST(VastReset, FlopsHoldInTheirNextStateAndResetInTheirClockedBlock) {
  Module m("capsgen_t", "test");
  m.clock_and_reset();
  const Expr en = m.input("en_i", 1, "");
  const Expr st_run = m.constant("StRun", 2, 2);
  const Flop count = m.flop("count", 4, "events so far");
  const Flop state = m.flop("state", 2);
  Stmts next = hold_flops({count, state});
  next.push_back(if_(en, {blk(count.d, count.q + lit(4, 1))}));
  m.always_comb(std::move(next));
  m.always_ff_flops({count, state}, {{state.q, st_run}});
  const std::string text = print_module(m);
  EXPECT_NE(text.find("  reg [3:0] count_q;  // events so far\n  reg [3:0] count_d;\n"), std::string::npos) << text;
  EXPECT_NE(text.find("    count_d = count_q;\n    state_d = state_q;\n"), std::string::npos) << text;
  EXPECT_NE(text.find("    if (!rst_ni) begin\n      count_q <= 4'd0;\n      state_q <= StRun;\n    end else begin\n"
                      "      count_q <= count_d;\n      state_q <= state_d;\n"),
            std::string::npos)
      << text;
  // A group lists the flops declared through it, in order.
  FlopGroup group(m);
  const Flop first = group.flop("first", 2), second = group.flop("second", 3, "the second");
  ASSERT_EQ(group.flops().size(), 2u);
  EXPECT_EQ(group.flops()[0].q.text(), "first_q");
  EXPECT_EQ(group.flops()[1].d.text(), "second_d");
  EXPECT_EQ(second.q.width(), 3);
  EXPECT_EQ(first.d.width(), 2);
  // A reset value for a register that is not one of the flops is an emitter bug.
  const Expr other = m.reg("other_q", 1);
  EXPECT_NE(error_of([&] {
              m.always_ff_flops({count}, {{other, bit(true)}});
            }).find("other_q, not one of the flops"),
            std::string::npos);
}

namespace {

// always_ff_next: the block always_ff_reset would print, as a next-state block and a clocked block
// of q <= d; its right-hand sides and conditions keep reading the _q registers.
TEST(VastAlwaysFfNext, NextStateBlockAndClockedBlock) {
  Module m("capsgen_demo", "A flag and a counter.");
  m.clock_and_reset();
  const Expr en = m.input("en_i", 1, "count");
  const Expr count = m.reg("count_q", 4, "the count");
  const Expr flag = m.reg("flag_q", 2, "the flags");
  m.always_ff_next({nb(count, lit(4, 0)), nb(flag, lit(2, 1))},
                   {if_(en, {nb(count, count + lit(4, 1)), nb(flag[1], count == lit(4, 15))}), nb(flag[0], en)});
  const std::string text = print_module(m);
  EXPECT_NE(text.find("  reg [3:0] count_d;\n  reg [1:0] flag_d;\n"
                      "  always @* begin\n"
                      "    count_d = count_q;\n"
                      "    flag_d = flag_q;\n"
                      "    if (en_i) begin\n"
                      "      count_d = count_q + 4'd1;\n"
                      "      flag_d[1] = count_q == 4'd15;\n"
                      "    end\n"
                      "    flag_d[0] = en_i;\n"
                      "  end\n"
                      "  always @(posedge clk_i or negedge rst_ni) begin\n"
                      "    if (!rst_ni) begin\n"
                      "      count_q <= 4'd0;\n"
                      "      flag_q <= 2'd1;\n"
                      "    end else begin\n"
                      "      count_q <= count_d;\n"
                      "      flag_q <= flag_d;\n"
                      "    end\n"
                      "  end\n"),
            std::string::npos)
      << text;
}

TEST(VastAlwaysFfNext, RefusesARegisterNotNamedQOrWithoutReset) {
  Module m("capsgen_demo", "Refusals.");
  m.clock_and_reset();
  const Expr en = m.input("en_i", 1, "");
  const Expr busy = m.reg("busy", 1);
  const Expr a = m.reg("a_q", 1), b = m.reg("b_q", 1);
  EXPECT_THROW(m.always_ff_next({nb(busy, bit(false))}, {nb(busy, en)}), std::logic_error);
  EXPECT_THROW(m.always_ff_next({nb(a, bit(false))}, {nb(a, en), nb(b, en)}), std::logic_error);
}

}  // namespace
