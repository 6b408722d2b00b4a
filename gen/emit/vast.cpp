#include "emit/vast.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <stdexcept>

namespace capsgen::emit {
namespace {

bool is_number(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

bool is_simple_operand(const std::string& s) {
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return !s.empty();
}

// Splits text into lines and prefixes each with `prefix`.
void append_comment_lines(std::string& out, const std::string& indent, const std::string& text) {
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = text.find('\n', start);
    const std::string line = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    out += line.empty() ? indent + "//\n" : indent + "// " + line + "\n";
    if (end == std::string::npos) break;
    start = end + 1;
  }
}

std::string trailing_comment(const std::string& c) { return c.empty() ? "" : "  // " + c; }

void print_stmts(std::string& out, const Stmts& stmts, int depth);

void print_stmt(std::string& out, const Stmt& s, int depth) {
  const std::string ind(static_cast<std::size_t>(depth) * 2, ' ');
  switch (s.kind) {
    case Stmt::Kind::kNonBlocking:
      out += fmt::format("{}{} <= {};\n", ind, s.lhs, s.rhs);
      break;
    case Stmt::Kind::kBlocking:
      out += fmt::format("{}{} = {};\n", ind, s.lhs, s.rhs);
      break;
    case Stmt::Kind::kComment:
      append_comment_lines(out, ind, s.lhs);
      break;
    case Stmt::Kind::kIf: {
      out += fmt::format("{}if ({}) begin\n", ind, s.lhs);
      print_stmts(out, s.then_body, depth + 1);
      const Stmt* e = &s;
      // else-if chains print flat.
      while (e->else_body.size() == 1 && e->else_body[0].kind == Stmt::Kind::kIf) {
        e = &e->else_body[0];
        out += fmt::format("{}end else if ({}) begin\n", ind, e->lhs);
        print_stmts(out, e->then_body, depth + 1);
      }
      if (!e->else_body.empty()) {
        out += ind + "end else begin\n";
        print_stmts(out, e->else_body, depth + 1);
      }
      out += ind + "end\n";
      break;
    }
    case Stmt::Kind::kFor:
      out += fmt::format("{0}for ({1} = 0; {1} < {2}; {1} = {1} + 1) begin\n", ind, s.lhs, s.rhs);
      print_stmts(out, s.then_body, depth + 1);
      out += ind + "end\n";
      break;
    case Stmt::Kind::kCase:
      out += fmt::format("{}case ({})\n", ind, s.lhs);
      for (const auto& [label, body] : s.cases) {
        // An arm of one assignment on one line (a ROM's entries, a counter per class).
        if (body.size() == 1 && (body[0].kind == Stmt::Kind::kNonBlocking || body[0].kind == Stmt::Kind::kBlocking)) {
          out += fmt::format("{}  {}: {} {} {};\n", ind, label, body[0].lhs,
                             body[0].kind == Stmt::Kind::kNonBlocking ? "<=" : "=", body[0].rhs);
          continue;
        }
        out += fmt::format("{}  {}: begin\n", ind, label);
        print_stmts(out, body, depth + 2);
        out += ind + "  end\n";
      }
      out += ind + "endcase\n";
      break;
  }
}

void print_stmts(std::string& out, const Stmts& stmts, int depth) {
  for (const Stmt& s : stmts) print_stmt(out, s, depth);
}

std::string net_type(bool is_reg, bool is_signed, const std::string& width) {
  std::string t = is_reg ? "reg" : "wire";
  if (is_signed) t += " signed";
  const std::string r = range_of(width);
  if (!r.empty()) t += " " + r;
  return t;
}

// The signal an assignment target names: `name`, `name[i]`, `name[7:0]`, `name[i*8 +: 8]`.
std::string target_base(const std::string& lhs) {
  std::size_t b = 0;
  while (b < lhs.size() && std::isspace(static_cast<unsigned char>(lhs[b]))) ++b;
  std::size_t e = b;
  while (e < lhs.size() && (std::isalnum(static_cast<unsigned char>(lhs[e])) || lhs[e] == '_' || lhs[e] == '$')) ++e;
  if (e == b) throw std::logic_error("vast: assignment target without a name: " + lhs);
  return lhs.substr(b, e - b);
}

// The targets of an assignment's left-hand side: the parts of a concatenation (at brace depth 1, with
// their spacing), or the one target.
std::vector<std::string> lhs_targets(const std::string& lhs) {
  if (lhs.empty() || lhs[0] != '{') return {lhs};
  std::vector<std::string> parts;
  int depth = 0;
  std::size_t start = 1;
  for (std::size_t i = 0; i < lhs.size(); ++i) {
    const char c = lhs[i];
    if (c == '{' || c == '[' || c == '(') ++depth;
    if (c == '}' || c == ']' || c == ')') --depth;
    if ((c == ',' && depth == 1) || (c == '}' && depth == 0)) {
      parts.push_back(lhs.substr(start, i - start));
      start = i + 1;
    }
  }
  return parts;
}

void collect_targets(const Stmts& stmts, std::vector<std::string>& out, std::set<std::string>& seen) {
  auto add = [&](const std::string& name) {
    if (seen.insert(name).second) out.push_back(name);
  };
  for (const Stmt& s : stmts) {
    switch (s.kind) {
      case Stmt::Kind::kNonBlocking:
      case Stmt::Kind::kBlocking:
        for (const std::string& target : lhs_targets(s.lhs)) add(target_base(target));
        break;
      case Stmt::Kind::kIf:
        collect_targets(s.then_body, out, seen);
        collect_targets(s.else_body, out, seen);
        break;
      case Stmt::Kind::kFor:
        collect_targets(s.then_body, out, seen);
        break;
      case Stmt::Kind::kCase:
        for (const auto& c : s.cases) collect_targets(c.second, out, seen);
        break;
      case Stmt::Kind::kComment:
        break;
    }
  }
}

}  // namespace

std::vector<std::string> assigned_signals(const Stmts& stmts) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  collect_targets(stmts, out, seen);
  return out;
}

bool is_snake_case(const std::string& s) {
  if (s.empty() || !(s[0] >= 'a' && s[0] <= 'z')) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return s.find("__") == std::string::npos && s.back() != '_';
}

bool is_upper_camel_case(const std::string& s) {
  if (s.empty() || !(s[0] >= 'A' && s[0] <= 'Z')) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) return false;
  return true;
}

std::string range_of(const std::string& width) {
  if (width.empty()) throw std::logic_error("vast: empty width");
  if (is_number(width)) {
    const long long w = std::stoll(width);
    if (w < 1) throw std::logic_error("vast: width < 1: " + width);
    return w == 1 ? "" : fmt::format("[{}:0]", w - 1);
  }
  return is_simple_operand(width) ? fmt::format("[{}-1:0]", width) : fmt::format("[({})-1:0]", width);
}

std::string expr_slice(const std::string& name, int index, const std::string& width) {
  if (is_number(width)) {
    const long long w = std::stoll(width);
    const long long lo = static_cast<long long>(index) * w;
    return w == 1 ? fmt::format("{}[{}]", name, lo) : fmt::format("{}[{}:{}]", name, lo + w - 1, lo);
  }
  const std::string w = is_simple_operand(width) ? width : "(" + width + ")";
  return index == 0 ? fmt::format("{}[0 +: {}]", name, w) : fmt::format("{}[{}*{} +: {}]", name, index, w, w);
}

std::string expr_sext(const std::string& value, const std::string& from, const std::string& to) {
  if (is_number(from) && is_number(to)) {
    const long long f = std::stoll(from), t = std::stoll(to);
    if (f < 2 || t < f) throw std::logic_error("vast: bad sign extension");
    if (t == f) return value;
    return fmt::format("{{{{{}{{{}[{}]}}}}, {}}}", t - f, value, f - 1, value);
  }
  return fmt::format("{{{{({}-{}+1){{{}[{}-1]}}}}, {}[{}-2:0]}}", to, from, value, from, value, from);
}

std::string expr_zero(const std::string& width) {
  if (is_number(width)) return width + "'d0";
  return fmt::format("{{{}{{1'b0}}}}", width);
}

Stmt nb(const Expr& lhs, const Expr& rhs) {
  detail::check_assignment(lhs, rhs, "<=");
  return nb(lhs.text(), rhs.text());
}

Stmt blk(const Expr& lhs, const Expr& rhs) {
  detail::check_assignment(lhs, rhs, "=");
  return blk(lhs.text(), rhs.text());
}

Stmt if_(const Expr& cond, Stmts then_body, Stmts else_body) {
  detail::check_condition(cond, "if");
  return if_(cond.text(), std::move(then_body), std::move(else_body));
}

Stmt case_(const Expr& selector, std::vector<std::pair<Expr, Stmts>> cases, Stmts default_body) {
  std::vector<std::pair<std::string, Stmts>> arms;
  arms.reserve(cases.size() + 1);
  for (auto& [label, body] : cases) {
    if (!label.module().empty() || label.width() != selector.width())
      throw std::logic_error(fmt::format("vast: case label {} is not a {}-bit constant for case ({})", label.text(),
                                         selector.width(), selector.text()));
    arms.emplace_back(label.text(), std::move(body));
  }
  if (!default_body.empty()) arms.emplace_back("default", std::move(default_body));
  return case_(selector.text(), std::move(arms));
}

Stmt for_(const Expr& var, const Dim& bound, Stmts body) {
  if (detail::loop_limit(var) == 0)
    throw std::logic_error("vast: for loop over " + var.text() + ", which is not a loop variable");
  if (bound.value() > detail::loop_limit(var))
    throw std::logic_error(fmt::format("vast: for loop bound {} over {}, whose limit is {}", bound.value(), var.text(),
                                       detail::loop_limit(var)));
  return for_(var.text(), bound.text(), std::move(body));
}

Stmt nb(std::string lhs, std::string rhs) {
  Stmt s;
  s.kind = Stmt::Kind::kNonBlocking;
  s.lhs = std::move(lhs);
  s.rhs = std::move(rhs);
  return s;
}

Stmt blk(std::string lhs, std::string rhs) {
  Stmt s;
  s.kind = Stmt::Kind::kBlocking;
  s.lhs = std::move(lhs);
  s.rhs = std::move(rhs);
  return s;
}

Stmt if_(std::string cond, Stmts then_body, Stmts else_body) {
  Stmt s;
  s.kind = Stmt::Kind::kIf;
  s.lhs = std::move(cond);
  s.then_body = std::move(then_body);
  s.else_body = std::move(else_body);
  return s;
}

Stmt case_(std::string selector, std::vector<std::pair<std::string, Stmts>> cases) {
  Stmt s;
  s.kind = Stmt::Kind::kCase;
  s.lhs = std::move(selector);
  s.cases = std::move(cases);
  return s;
}

Stmt for_(std::string var, std::string bound, Stmts body) {
  Stmt s;
  s.kind = Stmt::Kind::kFor;
  s.lhs = std::move(var);
  s.rhs = std::move(bound);
  s.then_body = std::move(body);
  return s;
}

Stmt stmt_comment(std::string text) {
  Stmt s;
  s.kind = Stmt::Kind::kComment;
  s.lhs = std::move(text);
  return s;
}

Module::Module(std::string name, std::string description)
    : name_(std::move(name)), description_(std::move(description)) {
  if (!is_snake_case(name_)) throw std::logic_error("vast: module name not lower_snake_case: " + name_);
}

Module& Module::parameter(std::string name, std::string value, std::string comment) {
  if (!is_upper_camel_case(name)) throw std::logic_error("vast: parameter not UpperCamelCase: " + name);
  claim(name);
  params_.push_back({std::move(name), std::move(value), std::move(comment)});
  return *this;
}

Param Module::parameter(std::string name, long long value, std::string comment) {
  parameter(name, std::to_string(value), std::move(comment));
  params_.back().typed = true;
  params_.back().number = value;
  return Param(std::move(name), value);
}

Expr Module::port_ref(const std::string& name) const {
  for (const Port& p : ports_)
    if (p.name == name) {
      if (p.bits == 0 && !is_number(p.width))
        throw std::logic_error("vast: port " + name + " of " + name_ + " has a text width");
      const long long bits = p.bits != 0 ? p.bits : std::stoll(p.width);
      const Dim w = p.width == std::to_string(bits) ? Dim(bits) : Dim(Param(p.width, bits));
      return detail::signal_ref(name_, name, w, p.is_signed, p.dir == PortDir::kOutput);
    }
  throw std::logic_error("vast: no port " + name + " in " + name_);
}

Expr Module::input(std::string name, const Dim& width, std::string comment, bool is_signed) {
  input(name, width.text(), std::move(comment), is_signed);
  ports_.back().bits = width.value();
  return detail::signal_ref(name_, name, width, is_signed, false);
}

Expr Module::output(std::string name, const Dim& width, std::string comment, bool is_signed) {
  output(name, width.text(), std::move(comment), is_signed);
  ports_.back().bits = width.value();
  return detail::signal_ref(name_, name, width, is_signed, true);
}

Expr Module::clk() const { return port_ref("clk_i"); }
Expr Module::rst_n() const { return port_ref("rst_ni"); }
Expr Module::port(const std::string& name) const { return port_ref(name); }

Expr Module::constant(std::string name, const Dim& width, std::uint64_t value, std::string comment) {
  Expr e = detail::named_constant(name, width, value);
  localparam(name, fmt::format("{}'d{}", width.value(), value), std::move(comment));
  auto& item = std::get<ItemLocalparam>(items_.back());
  item.width = std::to_string(width.value());
  item.code = value;
  return e;
}

Param Module::localparam(std::string name, const Dim& value, std::string comment) {
  localparam(name, value.text(), std::move(comment));
  return Param(std::move(name), value.value());
}

Expr Module::wire(std::string name, const Dim& width, std::string comment, bool is_signed) {
  for (auto it = forward_.begin(); it != forward_.end(); ++it)
    if (it->first == name) {
      if (it->second != width.value() || is_signed)
        throw std::logic_error(fmt::format("vast: {}: wire {} of {} bits was used ahead as {} unsigned bits", name_,
                                           name, width.value(), it->second));
      forward_.erase(it);
      break;
    }
  wire(name, width.text(), std::move(comment), is_signed);
  return detail::signal_ref(name_, name, width, is_signed, true);
}

Expr Module::forward_wire(const std::string& name, const Dim& width) {
  if (!is_snake_case(name)) throw std::logic_error("vast: signal not lower_snake_case: " + name + " in " + name_);
  if (names_.count(name)) throw std::logic_error("vast: forward wire " + name + " is declared already in " + name_);
  for (const auto& [n, bits] : forward_)
    if (n == name) {
      if (bits != width.value())
        throw std::logic_error(fmt::format("vast: {}: forward wire {} of {} and {} bits", name_, name, bits, width.value()));
      return detail::signal_ref(name_, name, width, false, true);
    }
  forward_.emplace_back(name, width.value());
  return detail::signal_ref(name_, name, width, false, true);
}

std::vector<std::string> Module::undeclared_forward_wires() const {
  std::vector<std::string> names;
  for (const auto& f : forward_) names.push_back(f.first);
  return names;
}

Expr Module::reg(std::string name, const Dim& width, std::string comment, bool is_signed) {
  reg(name, width.text(), std::move(comment), is_signed);
  return detail::signal_ref(name_, name, width, is_signed, true);
}

Flop Module::flop(const std::string& name, const Dim& width, std::string comment) {
  const Expr q = reg(name + "_q", width, std::move(comment));
  return Flop{q, reg(name + "_d", width)};
}

Flop FlopGroup::flop(const std::string& name, const Dim& width, std::string comment) {
  flops_.push_back(m_->flop(name, width, std::move(comment)));
  return flops_.back();
}

Stmts hold_flops(const std::vector<Flop>& flops) {
  Stmts out;
  for (const Flop& f : flops) out.push_back(blk(f.d, f.q));
  return out;
}

Memory Module::memory(std::string name, const Dim& width, const Dim& depth, std::string comment) {
  if (depth.value() < 1) throw std::logic_error("vast: memory depth < 1: " + name + " in " + name_);
  memory(name, width.text(), depth.text(), std::move(comment));
  return Memory(detail::signal_ref(name_, name, width, false, true), depth.value());
}

void Module::assign(const Expr& lhs, const Expr& rhs) {
  detail::check_assignment(lhs, rhs, "=");
  if (lhs.module() != name_) throw std::logic_error("vast: " + name_ + ": assign to a signal of " + lhs.module());
  assign(lhs.text(), rhs.text());
}

Instance& Module::instance(const Module& child, std::string name) {
  Instance& inst = instance(child.name(), std::move(name));
  inst.typed = true;
  inst.parent = name_;
  inst.child_ports = child.ports();
  inst.child_params = child.parameters();
  return inst;
}

Instance& Instance::param(const Param& p) {
  if (!typed) throw std::logic_error("vast: typed param on an untyped instance " + name);
  for (const Parameter& cp : child_params)
    if (cp.name == p.name()) {
      if (!cp.typed || cp.number != p.value())
        throw std::logic_error(fmt::format("vast: {}: {}.{} gets {} = {}, the child was built with {}", parent, name,
                                           cp.name, p.name(), p.value(), cp.value));
      return param(p.name(), p.name());
    }
  throw std::logic_error("vast: " + parent + ": " + module + " has no parameter " + p.name());
}

Instance& Instance::param(const std::string& child_param, const Dim& value) {
  if (!typed) throw std::logic_error("vast: typed param on an untyped instance " + name);
  for (const Parameter& cp : child_params)
    if (cp.name == child_param) {
      // The child's own value: its port widths stay those it was built with, all checkable.
      if (!cp.typed || cp.number != value.value()) overrides.emplace_back(child_param, value.value());
      return param(child_param, value.text());
    }
  throw std::logic_error("vast: " + parent + ": " + module + " has no parameter " + child_param);
}

namespace {

// The value of a child parameter under the instance's overrides (the last one wins); false for a
// parameter the child declared with a text value.
bool child_param_value(const Instance& inst, const std::string& name, long long& value) {
  bool found = false;
  for (const auto& [n, v] : inst.overrides)
    if (n == name) value = v, found = true;
  if (found) return true;
  for (const Parameter& p : inst.child_params)
    if (p.name == name && p.typed) {
      value = p.number;
      return true;
    }
  return false;
}

// A width text as Dim prints it (numbers, parameter names, + - * / and parentheses), evaluated with
// the child's parameters at the instance's values. False when the text holds anything else.
class WidthEvaluator {
 public:
  WidthEvaluator(const Instance& inst, const std::string& text) : inst_(inst), text_(text) {}

  bool evaluate(long long& value) {
    if (!sum(value)) return false;
    skip_spaces();
    return pos_ == text_.size();
  }

 private:
  void skip_spaces() {
    while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
  }
  bool next_is(char c) {
    skip_spaces();
    if (pos_ < text_.size() && text_[pos_] == c) return ++pos_, true;
    return false;
  }
  bool sum(long long& value) {
    if (!product(value)) return false;
    for (long long rhs = 0;;) {
      if (next_is('+')) {
        if (!product(rhs)) return false;
        value += rhs;
      } else if (next_is('-')) {
        if (!product(rhs)) return false;
        value -= rhs;
      } else {
        return true;
      }
    }
  }
  bool product(long long& value) {
    if (!factor(value)) return false;
    for (long long rhs = 0;;) {
      if (next_is('*')) {
        if (!factor(rhs)) return false;
        value *= rhs;
      } else if (next_is('/')) {
        if (!factor(rhs) || rhs == 0) return false;
        value /= rhs;
      } else {
        return true;
      }
    }
  }
  bool factor(long long& value) {
    if (next_is('(')) return sum(value) && next_is(')');
    const std::size_t start = pos_;
    while (pos_ < text_.size() && std::isalnum(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    const std::string token = text_.substr(start, pos_ - start);
    if (token.empty()) return false;
    if (std::isdigit(static_cast<unsigned char>(token[0]))) {
      if (!is_number(token)) return false;
      value = std::stoll(token);
      return true;
    }
    return child_param_value(inst_, token, value);
  }

  const Instance& inst_;
  const std::string& text_;
  std::size_t pos_ = 0;
};

// The width in bits of a child's port under the instance's parameter overrides (0: not known).
long long child_port_bits(const Instance& inst, const Port& cp) {
  if (inst.overrides.empty() || is_number(cp.width)) return cp.bits;
  for (const auto& [n, v] : inst.overrides)
    if (n == cp.width) return v;
  for (const Parameter& p : inst.child_params)
    if (p.name == cp.width) return cp.bits;
  long long bits = 0;
  if (cp.bits != 0 && WidthEvaluator(inst, cp.width).evaluate(bits)) return bits;
  throw std::logic_error(fmt::format("vast: {}: {}.{}: width {} depends on overridden parameters", inst.parent,
                                     inst.name, cp.name, cp.width));
}

}  // namespace

Instance& Instance::connect(const std::string& port, const Expr& e) {
  if (!typed) throw std::logic_error("vast: typed connection on an untyped instance " + name);
  for (const Port& cp : child_ports)
    if (cp.name == port) {
      const std::string what = fmt::format("{}.{}({})", name, port, e.text());
      if (!e.module().empty() && e.module() != parent)
        throw std::logic_error("vast: " + parent + ": " + what + " connects a signal of " + e.module());
      const long long bits = child_port_bits(*this, cp);
      if (bits != 0 && bits != e.width())
        throw std::logic_error(
            fmt::format("vast: {}: {}: port of {} bits gets {} bits", parent, what, bits, e.width()));
      if (cp.dir == PortDir::kOutput && !e.is_lvalue())
        throw std::logic_error("vast: " + parent + ": " + what + ": an output drives a non-assignable expression");
      return connect(port, e.text());
    }
  throw std::logic_error("vast: " + parent + ": " + module + " has no port " + port);
}

Module& Module::input(std::string name, std::string width, std::string comment, bool is_signed) {
  check_signal(name);
  if (name != "rst_ni" && !(name.size() > 2 && name.compare(name.size() - 2, 2, "_i") == 0))
    throw std::logic_error("vast: input port must end in _i: " + name);
  ports_.push_back({PortDir::kInput, std::move(name), std::move(width), is_signed, std::move(comment)});
  return *this;
}

Module& Module::output(std::string name, std::string width, std::string comment, bool is_signed) {
  check_signal(name);
  if (!(name.size() > 2 && name.compare(name.size() - 2, 2, "_o") == 0))
    throw std::logic_error("vast: output port must end in _o: " + name);
  ports_.push_back({PortDir::kOutput, std::move(name), std::move(width), is_signed, std::move(comment)});
  return *this;
}

Module& Module::clock_and_reset() {
  input("clk_i", Dim(1), "clock, all registers on its rising edge");
  input("rst_ni", Dim(1), "asynchronous reset, active low (control registers only)");
  return *this;
}

void Module::check_signal(const std::string& name) {
  if (!is_snake_case(name)) throw std::logic_error("vast: signal not lower_snake_case: " + name + " in " + name_);
  claim(name);
}

void Module::claim(const std::string& name) {
  if (!names_.insert(name).second) throw std::logic_error("vast: duplicate name " + name + " in " + name_);
}

void Module::assumption(std::string name, const Expr& cond, std::string comment) {
  assertion(std::move(name), cond, std::move(comment));
  assertions_.back().assume = true;
}

void Module::assertion(std::string name, const Expr& cond, std::string comment) {
  if (name.rfind("a_", 0) != 0 || !is_snake_case(name))
    throw std::logic_error("vast: assertion name not a_lower_snake_case: " + name + " in " + name_);
  if (!names_.count("clk_i") || !names_.count("rst_ni"))
    throw std::logic_error("vast: assertion " + name + " in " + name_ + " needs clock_and_reset()");
  detail::check_condition(cond, "assert");
  if (!cond.module().empty() && cond.module() != name_)
    throw std::logic_error("vast: assertion " + name + " in " + name_ + " reads signals of " + cond.module());
  claim(name);
  assertions_.push_back({std::move(name), cond.text(), std::move(comment)});
}

void Module::blank() { items_.emplace_back(ItemBlank{}); }
void Module::comment(std::string text) { items_.emplace_back(ItemComment{std::move(text)}); }

void Module::localparam(std::string name, std::string value, std::string comment) {
  if (!is_upper_camel_case(name)) throw std::logic_error("vast: localparam not UpperCamelCase: " + name);
  claim(name);
  items_.emplace_back(ItemLocalparam{std::move(name), std::move(value), std::move(comment), "", 0});
}

void Module::wire(std::string name, std::string width, std::string comment, bool is_signed) {
  check_signal(name);
  items_.emplace_back(ItemNet{false, is_signed, std::move(name), std::move(width), std::move(comment), ""});
}

void Module::reg(std::string name, std::string width, std::string comment, bool is_signed) {
  check_signal(name);
  items_.emplace_back(ItemNet{true, is_signed, std::move(name), std::move(width), std::move(comment), ""});
}

void Module::memory(std::string name, std::string width, std::string depth, std::string comment) {
  check_signal(name);
  if (async_assigned_.count(name) != 0)
    throw std::logic_error("vast: " + name_ + ": memory " + name + " is assigned in an async-reset block");
  items_.emplace_back(ItemNet{true, false, std::move(name), std::move(width), std::move(comment), std::move(depth)});
}

void Module::integer(std::string name, std::string comment) {
  check_signal(name);
  ItemNet n{true, false, std::move(name), "32", std::move(comment), ""};
  n.is_integer = true;
  items_.emplace_back(std::move(n));
}

Expr Module::loop_variable(std::string name, const Dim& limit, std::string comment) {
  if (limit.value() < 1) throw std::logic_error("vast: loop variable " + name + " with limit < 1 in " + name_);
  integer(name, std::move(comment));
  return detail::loop_variable_ref(name_, name, limit.value());
}

void Module::assign(std::string lhs, std::string rhs) { items_.emplace_back(ItemAssign{std::move(lhs), std::move(rhs)}); }

void Module::always_ff(Stmts body) { items_.emplace_back(ItemAlways{ItemAlways::Kind::kFlop, {}, std::move(body)}); }

void Module::always_ff_reset(Stmts reset_body, Stmts body) {
  check_async_reset_block(reset_body, body);
  items_.emplace_back(ItemAlways{ItemAlways::Kind::kFlopAsyncReset, std::move(reset_body), std::move(body)});
}

void Module::check_async_reset_block(const Stmts& reset_body, const Stmts& body) {
  const std::vector<std::string> reset = assigned_signals(reset_body);
  const std::vector<std::string> assigned = assigned_signals(body);
  const std::set<std::string> reset_set(reset.begin(), reset.end());
  std::set<std::string> memories;
  for (const Item& item : items_)
    if (const auto* n = std::get_if<ItemNet>(&item); n != nullptr && !n->depth.empty()) memories.insert(n->name);
  std::vector<std::string> mems, missing;
  for (const std::vector<std::string>* list : {&reset, &assigned})
    for (const std::string& s : *list)
      if (memories.count(s) != 0 && std::find(mems.begin(), mems.end(), s) == mems.end()) mems.push_back(s);
  for (const std::string& s : assigned)
    if (reset_set.count(s) == 0 && memories.count(s) == 0) missing.push_back(s);
  if (!mems.empty())
    throw std::logic_error("vast: " + name_ + ": memory assigned in an async-reset block (use always_ff): " +
                           fmt::format("{}", fmt::join(mems, ", ")));
  if (!missing.empty())
    throw std::logic_error("vast: " + name_ + ": register(s) assigned in an async-reset block without a reset value: " +
                           fmt::format("{}", fmt::join(missing, ", ")));
  async_assigned_.insert(reset.begin(), reset.end());
  async_assigned_.insert(assigned.begin(), assigned.end());
}

namespace {

// `lhs` (a target, or a concatenation of targets) with each target's signal (target_base) in `rename`
// replaced.
std::string rename_targets(const std::string& lhs, const std::map<std::string, std::string>& rename) {
  const auto one = [&](const std::string& target) {
    const std::string base = target_base(target);
    const auto it = rename.find(base);
    if (it == rename.end()) return target;
    const std::size_t at = target.find(base);
    return target.substr(0, at) + it->second + target.substr(at + base.size());
  };
  const std::vector<std::string> targets = lhs_targets(lhs);
  if (targets.size() == 1 && (lhs.empty() || lhs[0] != '{')) return one(lhs);
  std::string out = "{";
  for (std::size_t i = 0; i < targets.size(); ++i) out += one(targets[i]) + (i + 1 < targets.size() ? "," : "}");
  return out;
}

// `stmts` with every nonblocking assignment made blocking and its targets renamed.
Stmts to_next_state(const Stmts& stmts, const std::map<std::string, std::string>& rename) {
  Stmts out;
  for (Stmt s : stmts) {
    if (s.kind == Stmt::Kind::kNonBlocking) {
      s.kind = Stmt::Kind::kBlocking;
      s.lhs = rename_targets(s.lhs, rename);
    }
    s.then_body = to_next_state(s.then_body, rename);
    s.else_body = to_next_state(s.else_body, rename);
    for (auto& [label, body] : s.cases) body = to_next_state(body, rename);
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

void Module::always_ff_next(Stmts reset_body, Stmts body) {
  check_async_reset_block(reset_body, body);
  const std::vector<std::string> regs = assigned_signals(reset_body);
  std::map<std::string, std::string> next;
  Stmts comb, update;
  for (const std::string& q : regs) {
    const ItemNet* net = nullptr;
    for (const Item& item : items_)
      if (const auto* n = std::get_if<ItemNet>(&item); n != nullptr && n->name == q) net = n;
    if (net == nullptr || !net->is_reg || !net->depth.empty() || q.size() < 3 || q.compare(q.size() - 2, 2, "_q") != 0)
      throw std::logic_error("vast: " + name_ + ": always_ff_next of " + q + ", not a register named <base>_q");
    const std::string d = q.substr(0, q.size() - 2) + "_d", width = net->width;
    const bool is_signed = net->is_signed;
    next.emplace(q, d);
    reg(d, width, "", is_signed);
    comb.push_back(blk(d, q));
    update.push_back(nb(q, d));
  }
  for (Stmt& s : to_next_state(body, next)) comb.push_back(std::move(s));
  always_comb(std::move(comb));
  items_.emplace_back(ItemAlways{ItemAlways::Kind::kFlopAsyncReset, std::move(reset_body), std::move(update)});
}

void Module::always_ff_flops(const std::vector<Flop>& flops, const std::vector<std::pair<Expr, Expr>>& reset_values) {
  Stmts reset, update;
  for (const Flop& f : flops) {
    const auto given = std::find_if(reset_values.begin(), reset_values.end(),
                                    [&](const std::pair<Expr, Expr>& r) { return r.first.text() == f.q.text(); });
    if (given != reset_values.end())
      reset.push_back(nb(f.q, given->second));
    else
      for (Stmt& z : reset_to_zero({f.q.text()})) reset.push_back(std::move(z));
    update.push_back(nb(f.q, f.d));
  }
  for (const auto& [q, value] : reset_values)
    if (std::find_if(flops.begin(), flops.end(), [&](const Flop& f) { return f.q.text() == q.text(); }) == flops.end())
      throw std::logic_error("vast: " + name_ + ": reset value for " + q.text() + ", not one of the flops");
  always_ff_reset(std::move(reset), std::move(update));
}

Stmts Module::reset_to_zero(const std::vector<std::string>& names) const {
  Stmts out;
  for (const std::string& name : names) {
    const ItemNet* net = nullptr;
    for (const Item& item : items_)
      if (const auto* n = std::get_if<ItemNet>(&item); n != nullptr && n->name == name) net = n;
    if (net == nullptr || !net->is_reg || net->is_integer || !net->depth.empty())
      throw std::logic_error("vast: " + name_ + ": reset_to_zero of " + name + ", not a register of the module");
    std::string zero;
    if (!is_number(net->width)) zero = expr_zero(net->width);
    else if (net->width == "1") zero = "1'b0";
    else zero = net->width + "'d0";
    out.push_back(nb(name, zero));
  }
  return out;
}

void Module::always_comb(Stmts body) { items_.emplace_back(ItemAlways{ItemAlways::Kind::kComb, {}, std::move(body)}); }

Instance& Module::instance(std::string module, std::string name) {
  if (!is_snake_case(name)) throw std::logic_error("vast: instance name not lower_snake_case: " + name);
  claim(name);
  Instance inst;
  inst.module = std::move(module);
  inst.name = std::move(name);
  items_.emplace_back(std::move(inst));
  return std::get<Instance>(items_.back());
}

void Module::lint_off(std::string rule, std::string reason) {
  if (reason.empty()) throw std::logic_error("vast: lint waiver without a reason");
  items_.emplace_back(ItemLint{true, std::move(rule), std::move(reason)});
}

void Module::lint_on(std::string rule) { items_.emplace_back(ItemLint{false, std::move(rule), ""}); }

std::string print_module(const Module& m) {
  if (const auto missing = m.undeclared_forward_wires(); !missing.empty())
    throw std::logic_error(fmt::format("vast: {}: forward wires never declared: {}", m.name(), fmt::join(missing, ", ")));
  std::string out;
  append_comment_lines(out, "", m.description());
  out += "module " + m.name();
  if (!m.parameters().empty()) {
    out += " #(\n";
    for (std::size_t i = 0; i < m.parameters().size(); ++i) {
      const Parameter& p = m.parameters()[i];
      out += fmt::format("  parameter integer {} = {}{}{}\n", p.name, p.value, i + 1 < m.parameters().size() ? "," : "",
                         trailing_comment(p.comment));
    }
    out += ")";
  }
  out += " (\n";
  for (std::size_t i = 0; i < m.ports().size(); ++i) {
    const Port& p = m.ports()[i];
    out += fmt::format("  {} {} {}{}{}\n", p.dir == PortDir::kInput ? "input " : "output",
                       net_type(false, p.is_signed, p.width), p.name, i + 1 < m.ports().size() ? "," : "",
                       trailing_comment(p.comment));
  }
  out += ");\n";

  for (const Item& item : m.items()) {
    std::visit(
        [&out](const auto& it) {
          using T = std::decay_t<decltype(it)>;
          if constexpr (std::is_same_v<T, ItemBlank>) {
            out += "\n";
          } else if constexpr (std::is_same_v<T, ItemComment>) {
            append_comment_lines(out, "  ", it.text);
          } else if constexpr (std::is_same_v<T, ItemLocalparam>) {
            const std::string type = it.width.empty() ? "integer " : (it.width == "1" ? "" : range_of(it.width) + " ");
            out += fmt::format("  localparam {}{} = {};{}\n", type, it.name, it.value, trailing_comment(it.comment));
          } else if constexpr (std::is_same_v<T, ItemNet>) {
            if (it.is_integer) {
              out += fmt::format("  integer {};{}\n", it.name, trailing_comment(it.comment));
            } else if (it.depth.empty()) {
              out += fmt::format("  {} {};{}\n", net_type(it.is_reg, it.is_signed, it.width), it.name,
                                 trailing_comment(it.comment));
            } else {
              const std::string hi = is_number(it.depth) ? std::to_string(std::stoll(it.depth) - 1)
                                                         : (is_simple_operand(it.depth) ? it.depth + "-1"
                                                                                        : "(" + it.depth + ")-1");
              out += fmt::format("  {} {} [0:{}];{}\n", net_type(true, false, it.width), it.name, hi,
                                 trailing_comment(it.comment));
            }
          } else if constexpr (std::is_same_v<T, ItemAssign>) {
            out += fmt::format("  assign {} = {};\n", it.lhs, it.rhs);
          } else if constexpr (std::is_same_v<T, ItemAlways>) {
            switch (it.kind) {
              case ItemAlways::Kind::kFlop:
                out += "  always @(posedge clk_i) begin\n";
                print_stmts(out, it.body, 2);
                out += "  end\n";
                break;
              case ItemAlways::Kind::kFlopAsyncReset:
                out += "  always @(posedge clk_i or negedge rst_ni) begin\n    if (!rst_ni) begin\n";
                print_stmts(out, it.reset_body, 3);
                out += "    end else begin\n";
                print_stmts(out, it.body, 3);
                out += "    end\n  end\n";
                break;
              case ItemAlways::Kind::kComb:
                out += "  always @* begin\n";
                print_stmts(out, it.body, 2);
                out += "  end\n";
                break;
            }
          } else if constexpr (std::is_same_v<T, Instance>) {
            out += "  " + it.module;
            if (!it.params.empty()) {
              out += " #(\n";
              for (std::size_t i = 0; i < it.params.size(); ++i)
                out += fmt::format("    .{}({}){}\n", it.params[i].first, it.params[i].second,
                                   i + 1 < it.params.size() ? "," : "");
              out += "  )";
            }
            out += " " + it.name + " (\n";
            for (std::size_t i = 0; i < it.ports.size(); ++i)
              out += fmt::format("    .{}({}){}\n", it.ports[i].first, it.ports[i].second,
                                 i + 1 < it.ports.size() ? "," : "");
            out += "  );\n";
          } else if constexpr (std::is_same_v<T, ItemLint>) {
            if (it.off) {
              append_comment_lines(out, "  ", "Lint waiver: " + it.reason);
              out += "  // verilator lint_off " + it.rule + "\n";
            } else {
              out += "  // verilator lint_on " + it.rule + "\n";
            }
          }
        },
        item);
  }
  if (!m.assertions().empty()) {
    out += "\n`ifdef CAPSGEN_ASSERTIONS\n";
    out += "  // Assertions (docs/rtl-assertions.md): checked at every clock edge out of reset.\n";
    out += "  // Lint waiver: the check samples rst_ni at the clock ($past) to skip the first edge out of\n";
    out += "  // reset; the design itself uses rst_ni only as an asynchronous reset.\n";
    out += "  // verilator lint_off SYNCASYNCNET\n";
    out += "  always @(posedge clk_i) begin\n    if (rst_ni && $past(rst_ni)) begin\n";
    for (const Module::Assertion& a : m.assertions()) {
      append_comment_lines(out, "      ", a.comment);
      out += fmt::format("      {}: {} ({});\n", a.name, a.assume ? "assume" : "assert", a.cond);
    }
    out += "    end\n  end\n  // verilator lint_on SYNCASYNCNET\n`endif\n";
  }
  out += "endmodule\n";
  return out;
}

}  // namespace capsgen::emit
