// Typed Verilog expressions for the vast AST (included by emit/vast.hpp).
//
// Every expression knows its width in bits (a number: widths are known at generation time, a
// parameter's value is the config's) and its signedness, following Verilog's rules. Emitters get
// expressions from the declarations of a Module (a port, wire, reg or memory returns a handle),
// from literals (a width and a value) and from the operators below; they never write Verilog text.
// Misuse is an emitter bug and throws std::logic_error naming the module and the expression:
//   - binary arithmetic and bitwise operators need operands of equal width (extend with zext/sext);
//   - comparisons need equal widths (and, for < <= > >=, equal signedness) and give 1 bit;
//   - conditions, logical operators and ternary selectors need 1 bit; ternary branches equal widths;
//   - selects stay inside the operand, literals fit their width, assignments have equal widths.
// The printer parenthesizes for correctness and, for readability, also: a comparison or a ternary
// that is an operand, a binary operand of a binary operator of another precedence level, a
// reduction that is a binary operand, and any operator under a unary one (`a & (b == c)`,
// `c ? x : (d ? y : z)`, `a & (b + c)`, `(|a) | b`, `~(&a)`); a right operand of the same level
// prints bare only for the same associative operator (`a & b & c`, `a - (b - c)`).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace capsgen::emit {

class Module;

// An integer known at generation time together with the Verilog text that stands for it: a number
// ("8"), a parameter name ("DataWidth") or an expression of them ("4*DataWidth"). Widths, indices,
// depths and replication counts are Dims, so the printed text names the parameter while the checks
// use the value.
class Dim {
 public:
  Dim(long long value);  // NOLINT(google-explicit-constructor): a plain number prints as itself

  long long value() const { return value_; }
  const std::string& text() const { return text_; }
  bool is_number() const { return number_; }
  // A number or one name: needs no parentheses inside a larger Verilog expression.
  bool is_simple() const { return simple_; }
  // The text, in parentheses unless simple.
  std::string operand() const;

 protected:
  Dim(std::string text, long long value, bool simple);

 private:
  friend Dim operator*(long long n, const Dim& d);
  friend Dim operator+(const Dim& a, const Dim& b);
  friend Dim operator-(const Dim& a, long long n);
  friend Dim operator/(const Dim& a, long long n);

  long long value_;
  std::string text_;
  bool number_;
  bool simple_;
};

Dim operator*(long long n, const Dim& d);   // "n*D" (a number when D is one)
Dim operator+(const Dim& a, const Dim& b);  // "A + B" (a number when both are)
Dim operator-(const Dim& a, long long n);   // "A-n", the index form of a range bound (A when n = 0)
Dim operator/(const Dim& a, long long n);   // "A/n"; n must divide A's value

// A parameter or localparam of a Module: a Dim whose text is its name.
class Param : public Dim {
 public:
  const std::string& name() const { return text(); }

 private:
  friend class Module;
  Param(std::string name, long long value) : Dim(std::move(name), value, true) {}
};

// A typed expression. Immutable; copies share their tree.
class Expr {
 public:
  struct Node;

  int width() const;
  bool is_signed() const;
  // The module whose signals the expression reads ("" for a constant).
  const std::string& module() const;
  // The declared width of a signal (its parameter text); the number for every other expression.
  Dim width_dim() const;
  // The Verilog text of the expression, as it prints in a statement.
  std::string text() const;
  // True for what may stand left of an assignment: a reg, wire or output, a select of one, a word
  // of a memory.
  bool is_lvalue() const;

  // Selects; the operand must be a declared signal or a word of a memory (Verilog selects only those).
  Expr operator[](const Dim& index) const;            // name[i]
  Expr slice(const Dim& hi, const Dim& lo) const;     // name[hi:lo] (also when hi == lo)
  Expr part(int index, const Dim& part_width) const;  // name[index*W +: W] (folded when W is a number)
  Expr at(const Expr& index) const;                   // name[index], a bit chosen at run time
  // Parts chosen at run time (indexed part-selects). The index must not reach past the operand:
  // with N the values the index can take (2^bits, or a loop variable's bound), part_at needs
  // N * W <= width and part_from N <= width (its offset is often {index, zeros}, whose largest value
  // the layer cannot bound more tightly). at() needs N <= width.
  Expr part_at(const Expr& index, const Dim& part_width) const;  // name[index*W +: W]
  Expr part_from(const Expr& lsb, const Dim& part_width) const;  // name[lsb +: W]
  // name[lsb +: W] with an offset known at generation time, printed as it is (part() folds a number
  // width to [hi:lo]); the part must lie inside the operand.
  Expr part_from(const Dim& lsb, const Dim& part_width) const;

  const Node& node() const { return *node_; }
  explicit Expr(std::shared_ptr<const Node> n) : node_(std::move(n)) {}

 private:
  std::shared_ptr<const Node> node_;
};

// A memory `reg [W-1:0] name [0:Depth-1]`: its words are expressions.
class Memory {
 public:
  Expr operator[](const Expr& address) const;  // name[address]
  Expr word(const Dim& index) const;           // name[index], a fixed word (index < depth)
  int width() const { return word_.width(); }

 private:
  friend class Module;
  Memory(Expr word, long long depth) : word_(std::move(word)), depth_(depth) {}
  Expr word_;  // a reference to the memory's name with the word width
  long long depth_;
};

// ---- Constants ---------------------------------------------------------------------------------

Expr lit(const Dim& width, std::uint64_t value);      // W'dV; the width must be a number (any), V must fit
Expr lit_bin(const Dim& width, std::uint64_t value);  // W'bBB..B, all W digits (W <= 64)
Expr lit_hex(const Dim& width, std::uint64_t value);  // W'hH..H, lower-case digits without leading zeros
Expr bit(bool value);                                 // 1'b0 / 1'b1
Expr zero(const Dim& width);                          // N'd0, or {W{1'b0}} for a parameter width

// ---- Operators ---------------------------------------------------------------------------------

Expr operator~(const Expr& a);
Expr operator!(const Expr& a);  // 1-bit operand
Expr reduce_and(const Expr& a);  // &a, 1 bit
Expr reduce_or(const Expr& a);   // |a, 1 bit
Expr reduce_xor(const Expr& a);  // ^a, 1 bit

Expr operator&(const Expr& a, const Expr& b);
Expr operator|(const Expr& a, const Expr& b);
Expr operator^(const Expr& a, const Expr& b);
Expr operator+(const Expr& a, const Expr& b);  // wraps at the operand width
Expr operator-(const Expr& a, const Expr& b);
Expr operator*(const Expr& a, const Expr& b);  // wraps at the operand width (full_product keeps all bits)
Expr logical_and(const Expr& a, const Expr& b);  // a && b, 1-bit operands
Expr logical_or(const Expr& a, const Expr& b);   // a || b, 1-bit operands

Expr operator==(const Expr& a, const Expr& b);
Expr operator!=(const Expr& a, const Expr& b);
Expr operator<(const Expr& a, const Expr& b);
Expr operator<=(const Expr& a, const Expr& b);
Expr operator>(const Expr& a, const Expr& b);
Expr operator>=(const Expr& a, const Expr& b);

// Shifts keep the width and signedness of `a`; the amount is any unsigned expression. ashr needs a
// signed `a` (an arithmetic shift of an unsigned value is a logical one: use shr).
Expr shl(const Expr& a, const Expr& amount);   // a << amount
Expr shr(const Expr& a, const Expr& amount);   // a >> amount
Expr ashr(const Expr& a, const Expr& amount);  // a >>> amount

// The exact product a * b, a.width() + b.width() bits: Verilog sizes the operands to the
// assignment, so the product may only be assigned, whole, to a net of that width; using it as an
// operand throws.
Expr full_product(const Expr& a, const Expr& b);

Expr ternary(const Expr& select, const Expr& if_true, const Expr& if_false);  // s ? t : f
// s1 ? v1 : s2 ? v2 : ... : otherwise: ternary(s1, v1, ternary(s2, v2, ... otherwise)) printed flat
// (Verilog's ?: groups to the right, so the inner ternaries need no parentheses). Selectors and
// branches follow ternary's rules; the chain as an operand is parenthesized like a ternary.
Expr ternary_chain(const std::vector<std::pair<Expr, Expr>>& cases, const Expr& otherwise);
// (e): e in parentheses the printer's rules would not add, where a design prints them (a
// comparison as a whole right-hand side, `{1'd0, (x[0])}`, `~(a)`). Width and signedness are e's;
// as an operand it takes no further parentheses, like a name.
Expr paren(const Expr& e);
// $past(e): e's value at the previous clock edge. Only inside Module::assertion conditions (the
// synthesizable part of a module never reads it; the synth flow's scan rejects it there).
Expr past(const Expr& e);
Expr cat(const std::vector<Expr>& parts);                                    // {a, b, ...}
Expr rep(const Dim& count, const Expr& e);                                   // {N{e}}

// Extensions to `to` bits (to >= the operand's width; the operand itself when equal).
// zext: {N'd0, v} or {{(To-From){1'b0}}, v}.
// sext: {{N{v[F-1]}}, v} or {{(To-From+1){v[From-1]}}, v[From-2:0]} (never a zero replication);
// the operand must be a declared signal of at least 2 bits.
Expr zext(const Expr& v, const Dim& to);
Expr sext(const Expr& v, const Dim& to);

// e printed without the readability parentheses where Verilog's precedence already groups it so
// (to keep a layout without them): a binary operation under a binary operator that binds less
// tightly (`a + b >= c`, `base + n * 4`), a ternary as the false branch of a ternary
// (`s ? x : t ? y : z`). Anywhere else the rules above apply unchanged, so it never changes what an
// expression means.
Expr bare(const Expr& e);
// `index` as a select index whose values the design keeps below `limit` (a guard around the select,
// e.g. `shift > N ? x : v[shift]`): at(), part_at() and part_from() check `limit` instead of the
// index's width. It prints as `index`; the emitter vouches for the bound.
Expr index_below(const Expr& index, long long limit);

namespace detail {
// A reference to a signal declared in `module` (Module's declarations make these; emitters do not).
Expr signal_ref(const std::string& module, const std::string& name, const Dim& width, bool is_signed, bool assignable);
// A loop variable (`integer`, 32 bits, signed) whose values lie in [0, limit): as a select index it
// reaches only `limit` bits or parts. loop_limit is 0 for every other expression.
Expr loop_variable_ref(const std::string& module, const std::string& name, long long limit);
long long loop_limit(const Expr& e);
// A named constant (Module::constant): a constant expression of `width` bits that prints as `name`.
Expr named_constant(const std::string& name, const Dim& width, std::uint64_t value);
// Throws std::logic_error unless `lhs` may be assigned `rhs` (an lvalue of the same width).
void check_assignment(const Expr& lhs, const Expr& rhs, const char* what);
// Throws std::logic_error unless `e` is 1 bit wide.
void check_condition(const Expr& e, const char* what);
}  // namespace detail

}  // namespace capsgen::emit
