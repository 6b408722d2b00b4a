#include "emit/vast_expr.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace capsgen::emit {

struct Expr::Node {
  enum class Kind { kRef, kConst, kUnary, kBinary, kTernary, kConcat, kReplicate, kSelect, kWord, kExtend, kParen, kPast };
  Kind kind = Kind::kConst;
  int width = 1;
  Dim dim = 1;  // kRef: the declared width
  bool is_signed = false;
  bool assignable = false;
  bool full_product = false;
  bool chain = false;      // kTernary made by ternary_chain: an inner chained ternary prints bare
  bool bare = false;       // made by bare(): no readability parentheses where precedence groups it anyway
  std::string module;      // the module whose signals the expression reads ("" for constants)
  std::string text;        // kRef: name; kConst: literal; kUnary/kBinary: operator; kSelect/kExtend: printed form
  std::vector<Expr> args;  // operands
  Dim count = 1;           // kReplicate
  long long loop_limit = 0;  // a loop variable (kRef): its values lie in [0, loop_limit)
  long long index_limit = 0;  // as a select index, its values lie in [0, index_limit) (0: its width says)
};

using Node = Expr::Node;
using Kind = Node::Kind;

namespace {

// A bare index (a number or a parameter) as an expression: it prints as its text.
Expr constant_index(const Dim& index) {
  auto n = std::make_shared<Node>();
  n->kind = Kind::kConst;
  n->text = index.text();
  return Expr(n);
}

}  // namespace

namespace {

// Binding strength of a binary operator (Verilog-2005 table 5-4; higher binds tighter).
int precedence(const std::string& op) {
  if (op == "*") return 11;
  if (op == "+" || op == "-") return 10;
  if (op == "<<" || op == ">>" || op == ">>>") return 9;
  if (op == "<" || op == "<=" || op == ">" || op == ">=") return 8;
  if (op == "==" || op == "!=") return 7;
  if (op == "&") return 6;
  if (op == "^") return 5;
  if (op == "|") return 4;
  if (op == "&&") return 3;
  if (op == "||") return 2;
  throw std::logic_error("vast: unknown binary operator " + op);
}

bool is_comparison(const Node& n) { return n.kind == Kind::kBinary && (precedence(n.text) == 7 || precedence(n.text) == 8); }
bool is_associative(const std::string& op) { return op == "&" || op == "|" || op == "^" || op == "+" || op == "&&" || op == "||"; }
bool is_reduction(const Node& n) { return n.kind == Kind::kUnary && (n.text == "&" || n.text == "|" || n.text == "^"); }

std::string print(const Node& n);

std::string parens(const std::string& s) { return "(" + s + ")"; }

// True when `child`, an operand of `parent`, means the same printed bare: a binary operator under one
// of lower precedence, or a ternary as the false branch of a ternary (?: groups to the right).
bool binds_by_precedence(const Node& child, const Node& parent, bool right) {
  if (child.kind == Kind::kTernary && parent.kind == Kind::kTernary) return right;
  return child.kind == Kind::kBinary && parent.kind == Kind::kBinary && precedence(child.text) > precedence(parent.text);
}

// An operand of `parent`, parenthesized where needed (see the rules in vast_expr.hpp).
std::string print_operand(const Node& child, const Node& parent, bool right) {
  const std::string s = print(child);
  if (child.bare && binds_by_precedence(child, parent, right)) return s;
  if (child.kind == Kind::kTernary) return parens(s);
  switch (parent.kind) {
    case Kind::kUnary:
      return child.kind == Kind::kBinary || child.kind == Kind::kUnary ? parens(s) : s;
    case Kind::kTernary:
      return is_comparison(child) ? parens(s) : s;
    case Kind::kBinary:
      if (is_reduction(child)) return parens(s);
      if (child.kind != Kind::kBinary) return s;
      if (is_comparison(child) || precedence(child.text) != precedence(parent.text)) return parens(s);
      return !right || (child.text == parent.text && is_associative(parent.text)) ? s : parens(s);
    default:
      return s;
  }
}

std::string print(const Node& n) {
  switch (n.kind) {
    case Kind::kRef:
    case Kind::kConst:
    case Kind::kSelect:
    case Kind::kExtend:
      return n.text;
    case Kind::kUnary:
      return n.text + print_operand(n.args[0].node(), n, false);
    case Kind::kBinary:
      return fmt::format("{} {} {}", print_operand(n.args[0].node(), n, false), n.text,
                         print_operand(n.args[1].node(), n, true));
    case Kind::kTernary: {
      const Node& f = n.args[2].node();
      return fmt::format("{} ? {} : {}", print_operand(n.args[0].node(), n, false),
                         print_operand(n.args[1].node(), n, false),
                         n.chain && f.kind == Kind::kTernary && f.chain ? print(f) : print_operand(f, n, true));
    }
    case Kind::kConcat: {
      std::string s = "{";
      for (std::size_t i = 0; i < n.args.size(); ++i) s += (i ? ", " : "") + print(n.args[i].node());
      return s + "}";
    }
    case Kind::kReplicate:
      return fmt::format("{{{}{{{}}}}}", n.count.operand(), print(n.args[0].node()));
    case Kind::kWord:
      return fmt::format("{}[{}]", n.text, print(n.args[0].node()));
    case Kind::kParen:
      return parens(print(n.args[0].node()));
    case Kind::kPast:
      return "$past(" + print(n.args[0].node()) + ")";
  }
  return "";
}

[[noreturn]] void fail(const std::string& module, const std::string& what, const std::string& expr) {
  throw std::logic_error(
      fmt::format("vast: {}: {}: {}", module.empty() ? std::string("(no module)") : module, what, expr));
}

// The module of an expression built from `parts`; throws if they come from different modules.
std::string module_of(const std::vector<Expr>& parts, const std::string& expr) {
  std::string m;
  for (const Expr& p : parts) {
    const std::string& pm = p.node().module;
    if (pm.empty()) continue;
    if (!m.empty() && m != pm) fail(m, "operands from module " + pm + " too", expr);
    m = pm;
  }
  return m;
}

std::shared_ptr<Node> make(Kind kind, int width, std::vector<Expr> args, const std::string& expr_for_errors) {
  auto n = std::make_shared<Node>();
  n->kind = kind;
  n->width = width;
  n->module = module_of(args, expr_for_errors);
  for (const Expr& a : args)
    if (a.node().full_product) fail(n->module, "a full product must be assigned whole before use", expr_for_errors);
  n->args = std::move(args);
  n->dim = width;
  return n;
}

Expr unary(const std::string& op, const Expr& a, int width) {
  auto n = make(Kind::kUnary, width, {a}, op + a.text());
  n->text = op;
  n->is_signed = width == a.width() && a.is_signed();
  return Expr(n);
}

Expr binary(const std::string& op, const Expr& a, const Expr& b) {
  auto n = make(Kind::kBinary, a.width(), {a, b}, "");
  n->text = op;
  const int p = precedence(op);
  const std::string expr = print(*n);
  if (a.width() != b.width())
    fail(n->module, fmt::format("operands of {} have {} and {} bits", op, a.width(), b.width()), expr);
  if (p == 2 || p == 3) {
    if (a.width() != 1) fail(n->module, fmt::format("operands of {} must be 1 bit, not {}", op, a.width()), expr);
  }
  if (p == 7 || p == 8 || p == 2 || p == 3) {
    if (p == 8 && a.is_signed() != b.is_signed())
      fail(n->module, "comparison of a signed with an unsigned operand", expr);
    n->width = 1;
    n->dim = 1;
  } else {
    n->is_signed = a.is_signed() && b.is_signed();
  }
  return Expr(n);
}

// How many values `index` takes as a select index: a loop variable's bound, else 2^width (capped).
long long index_values(const Expr& index) {
  if (index.node().index_limit > 0) return index.node().index_limit;
  return index.width() > 40 ? (1LL << 40) : (1LL << index.width());
}

Expr shift(const std::string& op, const Expr& a, const Expr& amount) {
  auto n = make(Kind::kBinary, a.width(), {a, amount}, "");
  n->text = op;
  n->is_signed = a.is_signed();
  if (amount.is_signed()) fail(n->module, "a signed shift amount", print(*n));
  if (op == ">>>" && !a.is_signed()) fail(n->module, "an arithmetic shift of an unsigned operand (use shr)", print(*n));
  return Expr(n);
}

Expr select(const Expr& base, int width, const std::string& text) {
  if (base.node().kind != Kind::kRef && base.node().kind != Kind::kWord) fail(base.node().module, "only a declared signal can be selected from", text);
  auto n = make(Kind::kSelect, width, {base}, text);
  n->text = text;
  n->assignable = base.node().assignable;
  return Expr(n);
}

}  // namespace

// ---- Dim ---------------------------------------------------------------------------------------

Dim::Dim(long long value) : value_(value), text_(std::to_string(value)), number_(true), simple_(true) {}

Dim::Dim(std::string text, long long value, bool simple)
    : value_(value), text_(std::move(text)), number_(false), simple_(simple) {}

std::string Dim::operand() const { return simple_ ? text_ : "(" + text_ + ")"; }

Dim operator*(long long n, const Dim& d) {
  if (d.is_number()) return Dim(n * d.value());
  return Dim(fmt::format("{}*{}", n, d.operand()), n * d.value(), false);
}

Dim operator+(const Dim& a, const Dim& b) {
  if (a.is_number() && b.is_number()) return Dim(a.value() + b.value());
  return Dim(a.text() + " + " + b.text(), a.value() + b.value(), false);
}

Dim operator-(const Dim& a, long long n) {
  if (a.is_number()) return Dim(a.value() - n);
  if (n == 0) return a;
  return Dim(fmt::format("{}-{}", a.text(), n), a.value() - n, false);
}

Dim operator/(const Dim& a, long long n) {
  if (n < 1 || a.value() % n != 0)
    throw std::logic_error(fmt::format("vast: {} ({}) is not a multiple of {}", a.text(), a.value(), n));
  if (a.is_number()) return Dim(a.value() / n);
  if (n == 1) return a;
  return Dim(fmt::format("{}/{}", a.operand(), n), a.value() / n, false);
}

// ---- Expr --------------------------------------------------------------------------------------

int Expr::width() const { return node_->width; }
bool Expr::is_signed() const { return node_->is_signed; }
const std::string& Expr::module() const { return node_->module; }
Dim Expr::width_dim() const { return node_->dim; }
std::string Expr::text() const { return print(*node_); }
bool Expr::is_lvalue() const {
  if (node_->kind == Kind::kConcat) {
    for (const Expr& a : node_->args)
      if (!a.is_lvalue()) return false;
    return true;
  }
  return node_->assignable;
}

Expr Expr::operator[](const Dim& index) const {
  const std::string t = fmt::format("{}[{}]", print(*node_), index.text());
  if (index.value() < 0 || index.value() >= width())
    fail(node_->module, fmt::format("bit {} outside a {}-bit signal", index.value(), width()), t);
  return select(*this, 1, t);
}

Expr Expr::slice(const Dim& hi, const Dim& lo) const {
  const std::string t = fmt::format("{}[{}:{}]", print(*node_), hi.text(), lo.text());
  if (lo.value() < 0 || hi.value() < lo.value() || hi.value() >= width())
    fail(node_->module, fmt::format("bits {}:{} outside a {}-bit signal", hi.value(), lo.value(), width()), t);
  return select(*this, static_cast<int>(hi.value() - lo.value() + 1), t);
}

Expr Expr::part(int index, const Dim& w) const {
  const std::string name = print(*node_);
  std::string t;
  if (w.is_number()) {
    const long long lo = index * w.value();
    t = w.value() == 1 ? fmt::format("{}[{}]", name, lo) : fmt::format("{}[{}:{}]", name, lo + w.value() - 1, lo);
  } else {
    t = index == 0 ? fmt::format("{}[0 +: {}]", name, w.operand())
                   : fmt::format("{}[{}*{} +: {}]", name, index, w.operand(), w.operand());
  }
  if (index < 0 || w.value() < 1 || (index + 1) * w.value() > width())
    fail(node_->module, fmt::format("part {} of {} bits outside a {}-bit signal", index, w.value(), width()), t);
  return select(*this, static_cast<int>(w.value()), t);
}

Expr Expr::at(const Expr& index) const {
  const std::string t = fmt::format("{}[{}]", print(*node_), index.text());
  if (index_values(index) > width())
    fail(node_->module, fmt::format("a {}-bit index reaches outside a {}-bit signal", index.width(), width()), t);
  Expr e = select(*this, 1, t);
  module_of({e, index}, t);
  return e;
}

Expr Expr::part_at(const Expr& index, const Dim& w) const {
  const Kind k = index.node().kind;
  const std::string idx = k == Kind::kRef || k == Kind::kConst || k == Kind::kSelect ? index.text() : parens(index.text());
  const std::string t = fmt::format("{}[{}*{} +: {}]", print(*node_), idx, w.operand(), w.operand());
  if (w.value() < 1 || index_values(index) * w.value() > width())
    fail(node_->module, fmt::format("a {}-bit index of {}-bit parts reaches outside a {}-bit signal", index.width(), w.value(), width()), t);
  Expr e = select(*this, static_cast<int>(w.value()), t);
  module_of({e, index}, t);
  return e;
}

Expr Expr::part_from(const Expr& lsb, const Dim& w) const {
  const std::string t = fmt::format("{}[{} +: {}]", print(*node_), lsb.text(), w.operand());
  if (w.value() < 1 || w.value() > width() || index_values(lsb) > width())
    fail(node_->module, fmt::format("a {}-bit offset of a {}-bit part reaches outside a {}-bit signal", lsb.width(), w.value(), width()), t);
  Expr e = select(*this, static_cast<int>(w.value()), t);
  module_of({e, lsb}, t);
  return e;
}

Expr Expr::part_from(const Dim& lsb, const Dim& w) const {
  const std::string t = fmt::format("{}[{} +: {}]", print(*node_), lsb.text(), w.operand());
  if (lsb.value() < 0 || w.value() < 1 || lsb.value() + w.value() > width())
    fail(node_->module, fmt::format("part at {} of {} bits outside a {}-bit signal", lsb.value(), w.value(), width()), t);
  return select(*this, static_cast<int>(w.value()), t);
}

Expr Memory::operator[](const Expr& address) const {
  auto n = make(Kind::kWord, word_.width(), {address}, word_.text() + "[" + address.text() + "]");
  n->text = word_.text();
  n->module = word_.node().module;
  n->assignable = true;
  if (!address.node().module.empty() && address.node().module != n->module)
    fail(n->module, "address from module " + address.node().module, print(*n));
  return Expr(n);
}

Expr Memory::word(const Dim& index) const {
  auto n = make(Kind::kWord, word_.width(), {constant_index(index)}, word_.text() + "[" + index.text() + "]");
  n->text = word_.text();
  n->module = word_.module();
  n->assignable = true;
  if (index.value() < 0 || index.value() >= depth_)
    fail(n->module, fmt::format("word {} outside a memory of {} words", index.value(), depth_), print(*n));
  return Expr(n);
}

// ---- Constants ---------------------------------------------------------------------------------

namespace {

Expr constant(int width, std::string text) {
  auto n = make(Kind::kConst, width, {}, text);
  n->text = std::move(text);
  return Expr(n);
}

void check_fits(const Dim& width, std::uint64_t value, const char* what, long long max_width) {
  const std::string t = fmt::format("{}'{}{}", width.text(), what, value);
  if (!width.is_number()) fail("", "a literal needs a numeric width", t);
  if (width.value() < 1 || width.value() > max_width) fail("", fmt::format("literal width outside 1..{}", max_width), t);
  if (width.value() < 64 && value >> width.value()) fail("", fmt::format("{} does not fit in {} bits", value, width.value()), t);
}

}  // namespace

Expr lit(const Dim& width, std::uint64_t value) {
  check_fits(width, value, "d", 1LL << 20);
  return constant(static_cast<int>(width.value()), fmt::format("{}'d{}", width.value(), value));
}

Expr lit_bin(const Dim& width, std::uint64_t value) {
  check_fits(width, value, "b", 64);
  std::string digits;
  for (long long i = width.value() - 1; i >= 0; --i) digits += (value >> i) & 1 ? '1' : '0';
  return constant(static_cast<int>(width.value()), fmt::format("{}'b{}", width.value(), digits));
}

Expr lit_hex(const Dim& width, std::uint64_t value) {
  check_fits(width, value, "h", 1LL << 20);
  return constant(static_cast<int>(width.value()), fmt::format("{}'h{:x}", width.value(), value));
}

Expr bit(bool value) { return constant(1, value ? "1'b1" : "1'b0"); }

Expr zero(const Dim& width) {
  if (width.value() < 1) fail("", "zero of width < 1", width.text());
  if (width.is_number()) return constant(static_cast<int>(width.value()), width.text() + "'d0");
  return constant(static_cast<int>(width.value()), fmt::format("{{{}{{1'b0}}}}", width.text()));
}

// ---- Operators ---------------------------------------------------------------------------------

Expr operator~(const Expr& a) { return unary("~", a, a.width()); }
Expr operator!(const Expr& a) {
  if (a.width() != 1) fail(a.node().module, fmt::format("operand of ! must be 1 bit, not {}", a.width()), "!" + a.text());
  return unary("!", a, 1);
}
Expr reduce_and(const Expr& a) { return unary("&", a, 1); }
Expr reduce_or(const Expr& a) { return unary("|", a, 1); }
Expr reduce_xor(const Expr& a) { return unary("^", a, 1); }

Expr operator&(const Expr& a, const Expr& b) { return binary("&", a, b); }
Expr operator|(const Expr& a, const Expr& b) { return binary("|", a, b); }
Expr operator^(const Expr& a, const Expr& b) { return binary("^", a, b); }
Expr operator+(const Expr& a, const Expr& b) { return binary("+", a, b); }
Expr operator-(const Expr& a, const Expr& b) { return binary("-", a, b); }
Expr operator*(const Expr& a, const Expr& b) { return binary("*", a, b); }
Expr shl(const Expr& a, const Expr& amount) { return shift("<<", a, amount); }
Expr shr(const Expr& a, const Expr& amount) { return shift(">>", a, amount); }
Expr ashr(const Expr& a, const Expr& amount) { return shift(">>>", a, amount); }
Expr logical_and(const Expr& a, const Expr& b) { return binary("&&", a, b); }
Expr logical_or(const Expr& a, const Expr& b) { return binary("||", a, b); }
Expr operator==(const Expr& a, const Expr& b) { return binary("==", a, b); }
Expr operator!=(const Expr& a, const Expr& b) { return binary("!=", a, b); }
Expr operator<(const Expr& a, const Expr& b) { return binary("<", a, b); }
Expr operator<=(const Expr& a, const Expr& b) { return binary("<=", a, b); }
Expr operator>(const Expr& a, const Expr& b) { return binary(">", a, b); }
Expr operator>=(const Expr& a, const Expr& b) { return binary(">=", a, b); }

Expr full_product(const Expr& a, const Expr& b) {
  auto n = make(Kind::kBinary, a.width() + b.width(), {a, b}, a.text() + " * " + b.text());
  n->text = "*";
  if (a.is_signed() != b.is_signed()) fail(n->module, "product of a signed and an unsigned operand", print(*n));
  n->is_signed = a.is_signed();
  n->full_product = true;
  return Expr(n);
}

Expr ternary(const Expr& s, const Expr& t, const Expr& f) {
  auto n = make(Kind::kTernary, t.width(), {s, t, f}, "");
  const std::string expr = print(*n);
  if (s.width() != 1) fail(n->module, fmt::format("ternary selector has {} bits", s.width()), expr);
  if (t.width() != f.width()) fail(n->module, fmt::format("ternary branches have {} and {} bits", t.width(), f.width()), expr);
  n->is_signed = t.is_signed() && f.is_signed();
  return Expr(n);
}

Expr ternary_chain(const std::vector<std::pair<Expr, Expr>>& cases, const Expr& otherwise) {
  if (cases.empty()) fail(otherwise.node().module, "ternary chain without a case", otherwise.text());
  Expr e = otherwise;
  for (auto it = cases.rbegin(); it != cases.rend(); ++it) {
    auto n = std::make_shared<Node>(ternary(it->first, it->second, e).node());
    n->chain = true;
    e = Expr(n);
  }
  return e;
}

Expr paren(const Expr& e) {
  auto n = make(Kind::kParen, e.width(), {e}, "(" + e.text() + ")");
  n->is_signed = e.is_signed();
  return Expr(n);
}

Expr past(const Expr& e) {
  auto n = make(Kind::kPast, e.width(), {e}, "$past(...)");
  n->is_signed = e.is_signed();
  return Expr(n);
}

Expr cat(const std::vector<Expr>& parts) {
  if (parts.empty()) fail("", "empty concatenation", "{}");
  int w = 0;
  for (const Expr& p : parts) w += p.width();
  return Expr(make(Kind::kConcat, w, parts, "{...}"));
}

Expr rep(const Dim& count, const Expr& e) {
  auto n = make(Kind::kReplicate, static_cast<int>(count.value() * e.width()), {e}, "");
  n->count = count;
  if (count.value() < 1) fail(n->module, fmt::format("replication count {}", count.value()), print(*n));
  return Expr(n);
}

namespace {

Expr extension(const Expr& v, const Dim& to, std::string text) {
  auto n = make(Kind::kExtend, static_cast<int>(to.value()), {v}, text);
  n->text = std::move(text);
  return Expr(n);
}

}  // namespace

Expr zext(const Expr& v, const Dim& to) {
  const Dim from = v.width_dim();
  if (to.value() < from.value())
    fail(v.node().module, fmt::format("zext narrows {} bits to {}", from.value(), to.value()), v.text());
  if (to.value() == from.value()) return v;
  if (from.is_number() && to.is_number())
    return extension(v, to, fmt::format("{{{}'d0, {}}}", to.value() - from.value(), v.text()));
  return extension(v, to, fmt::format("{{{{({}-{}){{1'b0}}}}, {}}}", to.text(), from.text(), v.text()));
}

Expr sext(const Expr& v, const Dim& to) {
  const Dim from = v.width_dim();
  const std::string what = fmt::format("sext({}, {})", v.text(), to.text());
  if (to.value() < from.value() || from.value() < 2)
    fail(v.node().module, fmt::format("sext of {} bits to {}", from.value(), to.value()), what);
  if (from.is_number() && to.is_number() && to.value() == from.value()) return v;
  if (v.node().kind != Kind::kRef) fail(v.node().module, "sext needs a declared signal", what);
  const std::string& name = v.node().text;
  if (from.is_number() && to.is_number())
    return extension(v, to, fmt::format("{{{{{}{{{}[{}]}}}}, {}}}", to.value() - from.value(), name, from.value() - 1, name));
  return extension(v, to, fmt::format("{{{{({}-{}+1){{{}[{}-1]}}}}, {}[{}-2:0]}}", to.text(), from.text(), name,
                                      from.text(), name, from.text()));
}

Expr index_below(const Expr& index, long long limit) {
  if (limit < 1) fail(index.module(), fmt::format("index limit {} < 1", limit), index.text());
  auto n = std::make_shared<Node>(index.node());
  n->index_limit = limit;
  return Expr(n);
}

Expr bare(const Expr& e) {
  if (e.node().kind != Kind::kBinary && e.node().kind != Kind::kTernary)
    fail(e.module(), "bare needs a binary operation or a ternary", e.text());
  auto n = std::make_shared<Node>(e.node());
  n->bare = true;
  return Expr(n);
}

namespace detail {

Expr signal_ref(const std::string& module, const std::string& name, const Dim& width, bool is_signed, bool assignable) {
  auto n = std::make_shared<Node>();
  n->kind = Kind::kRef;
  n->width = static_cast<int>(width.value());
  n->dim = width;
  n->is_signed = is_signed;
  n->assignable = assignable;
  n->module = module;
  n->text = name;
  if (width.value() < 1) fail(module, fmt::format("width {} < 1", width.value()), name);
  return Expr(n);
}

Expr loop_variable_ref(const std::string& module, const std::string& name, long long limit) {
  Expr e = signal_ref(module, name, 32, true, true);
  auto n = std::make_shared<Node>(e.node());
  n->loop_limit = limit;
  n->index_limit = limit;
  return Expr(n);
}

long long loop_limit(const Expr& e) { return e.node().loop_limit; }

Expr named_constant(const std::string& name, const Dim& width, std::uint64_t value) {
  check_fits(width, value, "d", 64);
  return constant(static_cast<int>(width.value()), name);
}

void check_assignment(const Expr& lhs, const Expr& rhs, const char* what) {
  const std::string expr = fmt::format("{} {} {}", lhs.text(), what, rhs.text());
  const std::string m = module_of({lhs, rhs}, expr);
  if (!lhs.is_lvalue()) fail(m, "not assignable", expr);
  if (lhs.width() != rhs.width())
    fail(m, fmt::format("assignment of {} bits to {} bits", rhs.width(), lhs.width()), expr);
}

void check_condition(const Expr& e, const char* what) {
  if (e.width() != 1) fail(e.node().module, fmt::format("{} condition has {} bits", what, e.width()), e.text());
}

}  // namespace detail

}  // namespace capsgen::emit
