#include "synth/liberty.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "core/input_error.hpp"

namespace capsgen::synth {

// ---------------------------------------------------------------- syntax tree helpers

const std::string* LibGroup::attr(const std::string& name) const {
  for (const auto& [k, v] : attrs)
    if (k == name) return &v;
  return nullptr;
}

std::vector<const LibGroup*> LibGroup::children(const std::string& t) const {
  std::vector<const LibGroup*> out;
  for (const LibGroup& g : groups)
    if (g.type == t) out.push_back(&g);
  return out;
}

// ---------------------------------------------------------------- lexer + parser

namespace {

struct Token {
  enum Kind { kWord, kString, kPunct, kEnd } kind = kEnd;
  std::string text;
  int line = 0;
};

class Lexer {
 public:
  Lexer(const std::string& text, std::string file) : s_(text), file_(std::move(file)) {}

  Token next() {
    skip_space();
    Token t;
    t.line = line_;
    if (i_ >= s_.size()) return t;
    const char c = s_[i_];
    if (c == '"') {
      ++i_;
      std::string v;
      while (i_ < s_.size() && s_[i_] != '"') {
        if (s_[i_] == '\\' && i_ + 1 < s_.size() && (s_[i_ + 1] == '\n' || s_[i_ + 1] == '\r')) {
          // continuation inside a string
          ++i_;
          while (i_ < s_.size() && (s_[i_] == '\n' || s_[i_] == '\r')) {
            if (s_[i_] == '\n') ++line_;
            ++i_;
          }
          continue;
        }
        if (s_[i_] == '\n') ++line_;
        v += s_[i_++];
      }
      if (i_ >= s_.size()) fail("unterminated string");
      ++i_;
      t.kind = Token::kString;
      t.text = v;
      return t;
    }
    if (c == '(' || c == ')' || c == '{' || c == '}' || c == ':' || c == ';' || c == ',') {
      ++i_;
      t.kind = Token::kPunct;
      t.text = std::string(1, c);
      return t;
    }
    std::string v;
    while (i_ < s_.size()) {
      const char d = s_[i_];
      if (std::isspace(static_cast<unsigned char>(d)) || d == '(' || d == ')' || d == '{' || d == '}' || d == ':' ||
          d == ';' || d == ',' || d == '"')
        break;
      if (d == '\\' && i_ + 1 < s_.size() && (s_[i_ + 1] == '\n' || s_[i_ + 1] == '\r')) break;
      if (d == '/' && i_ + 1 < s_.size() && s_[i_ + 1] == '*') break;
      v += d;
      ++i_;
    }
    if (v.empty()) fail(fmt::format("unexpected character '{}'", c));
    t.kind = Token::kWord;
    t.text = v;
    return t;
  }

  [[noreturn]] void fail(const std::string& msg) const { throw InputError(file_, line_, 0, "liberty", msg); }
  int line() const { return line_; }

 private:
  void skip_space() {
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (c == '\n') {
        ++line_;
        ++i_;
      } else if (std::isspace(static_cast<unsigned char>(c))) {
        ++i_;
      } else if (c == '\\' && i_ + 1 < s_.size() && (s_[i_ + 1] == '\n' || s_[i_ + 1] == '\r')) {
        ++i_;  // line continuation
      } else if (c == '/' && i_ + 1 < s_.size() && s_[i_ + 1] == '*') {
        const auto end = s_.find("*/", i_ + 2);
        if (end == std::string::npos) fail("unterminated comment");
        for (std::size_t k = i_; k < end; ++k)
          if (s_[k] == '\n') ++line_;
        i_ = end + 2;
      } else if (c == '/' && i_ + 1 < s_.size() && s_[i_ + 1] == '/') {
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
      } else {
        break;
      }
    }
  }

  const std::string& s_;
  std::string file_;
  std::size_t i_ = 0;
  int line_ = 1;
};

class Parser {
 public:
  Parser(const std::string& text, const std::string& file) : lex_(text, file) { advance(); }

  LibGroup parse_top() {
    LibGroup top = parse_statement_group();
    if (tok_.kind != Token::kEnd) lex_.fail("text after the library group");
    return top;
  }

 private:
  void advance() { tok_ = lex_.next(); }
  void expect(const char* p) {
    if (tok_.kind != Token::kPunct || tok_.text != p) lex_.fail(fmt::format("expected '{}', got '{}'", p, tok_.text));
    advance();
  }

  // name ( args ) { body }   -- the top-level statement must be a group
  LibGroup parse_statement_group() {
    if (tok_.kind != Token::kWord) lex_.fail("expected a group name");
    LibGroup g;
    g.type = tok_.text;
    g.line = tok_.line;
    advance();
    g.args = parse_args();
    if (!(tok_.kind == Token::kPunct && tok_.text == "{")) lex_.fail("expected '{' after " + g.type + "(...)");
    parse_body(g);
    return g;
  }

  std::vector<std::string> parse_args() {
    expect("(");
    std::vector<std::string> args;
    std::string cur;
    bool have = false;
    while (!(tok_.kind == Token::kPunct && tok_.text == ")")) {
      if (tok_.kind == Token::kEnd) lex_.fail("unterminated argument list");
      if (tok_.kind == Token::kPunct && tok_.text == ",") {
        args.push_back(cur);
        cur.clear();
        have = false;
      } else {
        if (have) cur += " ";
        cur += tok_.text;
        have = true;
      }
      advance();
    }
    if (have || !args.empty()) args.push_back(cur);
    advance();
    return args;
  }

  void parse_body(LibGroup& g) {
    expect("{");
    while (!(tok_.kind == Token::kPunct && tok_.text == "}")) {
      if (tok_.kind == Token::kEnd) lex_.fail("unterminated group " + g.type);
      if (tok_.kind != Token::kWord) lex_.fail(fmt::format("expected an attribute or group name, got '{}'", tok_.text));
      const std::string name = tok_.text;
      const int line = tok_.line;
      advance();
      if (tok_.kind == Token::kPunct && tok_.text == ":") {
        advance();
        std::string value;
        bool first = true;
        while (!(tok_.kind == Token::kPunct && (tok_.text == ";" || tok_.text == "}"))) {
          if (tok_.kind == Token::kEnd) lex_.fail("unterminated attribute " + name);
          if (!first) value += " ";
          value += tok_.text;
          first = false;
          advance();
        }
        if (tok_.text == ";") advance();  // the ';' is optional before '}' in some libraries
        g.attrs.emplace_back(name, value);
      } else if (tok_.kind == Token::kPunct && tok_.text == "(") {
        std::vector<std::string> args = parse_args();
        if (tok_.kind == Token::kPunct && tok_.text == "{") {
          LibGroup child;
          child.type = name;
          child.args = std::move(args);
          child.line = line;
          parse_body(child);
          g.groups.push_back(std::move(child));
        } else {
          if (tok_.kind == Token::kPunct && tok_.text == ";") advance();
          g.complex_attrs.emplace_back(name, std::move(args));
        }
      } else {
        lex_.fail(fmt::format("expected ':' or '(' after '{}'", name));
      }
    }
    advance();
  }

  Lexer lex_;
  Token tok_;
};

}  // namespace

LibGroup parse_liberty_text(const std::string& text, const std::string& file_name) {
  return Parser(text, file_name).parse_top();
}

// ---------------------------------------------------------------- Boolean expressions

class BoolParser {
 public:
  explicit BoolParser(const std::string& s) : s_(s) {}

  BoolExpr parse() {
    BoolExpr e = parse_or();
    skip();
    if (i_ != s_.size()) fail("unexpected '" + s_.substr(i_) + "'");
    return e;
  }

 private:
  [[noreturn]] void fail(const std::string& msg) const {
    throw std::invalid_argument(fmt::format("Boolean function \"{}\": {}", s_, msg));
  }
  void skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool at_operand_start() {
    skip();
    if (i_ >= s_.size()) return false;
    const char c = s_[i_];
    return c == '(' || c == '!' || std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '[' || c == '\\';
  }
  static BoolExpr node(BoolExpr::Op op, std::vector<BoolExpr> args) {
    BoolExpr e;
    e.op_ = op;
    e.args_ = std::move(args);
    return e;
  }
  BoolExpr parse_or() {
    std::vector<BoolExpr> terms{parse_and()};
    for (;;) {
      skip();
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '|')) {
        ++i_;
        terms.push_back(parse_and());
      } else {
        break;
      }
    }
    return terms.size() == 1 ? std::move(terms[0]) : node(BoolExpr::Op::kOr, std::move(terms));
  }
  BoolExpr parse_and() {
    std::vector<BoolExpr> terms{parse_xor()};
    for (;;) {
      skip();
      if (i_ < s_.size() && (s_[i_] == '*' || s_[i_] == '&')) {
        ++i_;
        terms.push_back(parse_xor());
      } else if (at_operand_start()) {  // juxtaposition: "A B"
        terms.push_back(parse_xor());
      } else {
        break;
      }
    }
    return terms.size() == 1 ? std::move(terms[0]) : node(BoolExpr::Op::kAnd, std::move(terms));
  }
  BoolExpr parse_xor() {
    std::vector<BoolExpr> terms{parse_unary()};
    for (;;) {
      skip();
      if (i_ < s_.size() && s_[i_] == '^') {
        ++i_;
        terms.push_back(parse_unary());
      } else {
        break;
      }
    }
    return terms.size() == 1 ? std::move(terms[0]) : node(BoolExpr::Op::kXor, std::move(terms));
  }
  BoolExpr parse_unary() {
    skip();
    if (i_ >= s_.size()) fail("missing operand");
    BoolExpr e;
    if (s_[i_] == '!') {
      ++i_;
      e = node(BoolExpr::Op::kNot, {parse_unary()});
    } else if (s_[i_] == '(') {
      ++i_;
      e = parse_or();
      skip();
      if (i_ >= s_.size() || s_[i_] != ')') fail("missing ')'");
      ++i_;
    } else {
      std::string name;
      while (i_ < s_.size()) {
        const char c = s_[i_];
        if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '[' || c == ']' || c == '.' || c == '\\')
          name += c, ++i_;
        else
          break;
      }
      if (name.empty()) fail(fmt::format("unexpected '{}'", s_[i_]));
      if (name == "0" || name == "1") {
        e.op_ = BoolExpr::Op::kConst;
        e.value_ = name == "1";
      } else {
        e.op_ = BoolExpr::Op::kVar;
        e.var_ = name;
      }
    }
    // postfix inversion: A'
    for (;;) {
      skip();
      if (i_ < s_.size() && s_[i_] == '\'') {
        ++i_;
        e = node(BoolExpr::Op::kNot, {std::move(e)});
      } else {
        break;
      }
    }
    return e;
  }

  const std::string& s_;
  std::size_t i_ = 0;
};

BoolExpr BoolExpr::parse(const std::string& text) { return BoolParser(text).parse(); }

bool BoolExpr::eval(const std::map<std::string, bool>& env) const {
  switch (op_) {
    case Op::kVar: {
      auto it = env.find(var_);
      if (it == env.end()) throw std::out_of_range("Boolean function: no value for variable " + var_);
      return it->second;
    }
    case Op::kConst:
      return value_;
    case Op::kNot:
      return !args_[0].eval(env);
    case Op::kAnd:
      for (const auto& a : args_)
        if (!a.eval(env)) return false;
      return true;
    case Op::kOr:
      for (const auto& a : args_)
        if (a.eval(env)) return true;
      return false;
    case Op::kXor: {
      bool r = false;
      for (const auto& a : args_) r ^= a.eval(env);
      return r;
    }
  }
  return false;
}

void BoolExpr::collect(std::vector<std::string>& out) const {
  if (op_ == Op::kVar) {
    for (const auto& v : out)
      if (v == var_) return;
    out.push_back(var_);
  }
  for (const auto& a : args_) a.collect(out);
}

std::vector<std::string> BoolExpr::variables() const {
  std::vector<std::string> out;
  collect(out);
  return out;
}

std::string BoolExpr::to_verilog(const std::map<std::string, std::string>& rename) const {
  switch (op_) {
    case Op::kVar: {
      auto it = rename.find(var_);
      return it == rename.end() ? var_ : it->second;
    }
    case Op::kConst:
      return value_ ? "1'b1" : "1'b0";
    case Op::kNot:
      return "~" + args_[0].to_verilog(rename);  // operands are variables, constants or parenthesized
    default: {
      const char* sym = op_ == Op::kAnd ? " & " : op_ == Op::kOr ? " | " : " ^ ";
      std::string s = "(";
      for (std::size_t k = 0; k < args_.size(); ++k) {
        if (k) s += sym;
        s += args_[k].to_verilog(rename);
      }
      return s + ")";
    }
  }
}

std::optional<std::pair<std::string, bool>> BoolExpr::as_literal() const {
  if (op_ == Op::kVar) return std::make_pair(var_, false);
  if (op_ == Op::kNot && args_[0].op_ == Op::kVar) return std::make_pair(args_[0].var_, true);
  if (op_ == Op::kNot && args_[0].op_ == Op::kNot) return args_[0].args_[0].as_literal();
  return std::nullopt;
}

// ---------------------------------------------------------------- cells and library

const LibPin* LibCell::pin(const std::string& n) const {
  for (const LibPin& p : pins)
    if (p.name == n) return &p;
  return nullptr;
}

std::vector<const LibPin*> LibCell::inputs() const {
  std::vector<const LibPin*> out;
  for (const LibPin& p : pins)
    if (p.direction == "input") out.push_back(&p);
  return out;
}

std::vector<const LibPin*> LibCell::outputs() const {
  std::vector<const LibPin*> out;
  for (const LibPin& p : pins)
    if (p.direction == "output" || p.direction == "inout") out.push_back(&p);
  return out;
}

bool LibCell::has_three_state() const {
  for (const LibPin& p : pins)
    if (p.three_state) return true;
  return false;
}

const LibCell* Library::cell(const std::string& n) const {
  for (const LibCell& c : cells)
    if (c.name == n) return &c;
  return nullptr;
}

double Library::area(const std::string& cell_name) const {
  const LibCell* c = cell(cell_name);
  if (!c) throw std::out_of_range(fmt::format("cell {} is not in library {} ({})", cell_name, name, file));
  return c->area;
}

double Library::time_unit_ns() const {
  double mult = 1;
  std::size_t k = 0;
  while (k < time_unit.size() && (std::isdigit(static_cast<unsigned char>(time_unit[k])) || time_unit[k] == '.')) ++k;
  if (k > 0) mult = std::atof(time_unit.substr(0, k).c_str());
  const std::string unit = time_unit.substr(k);
  if (unit == "ns") return mult;
  if (unit == "ps") return mult * 1e-3;
  if (unit == "us") return mult * 1e3;
  return mult;  // unknown: assume ns
}

namespace {

// "1nW" -> 1e-9 with the units of `kind` ("W", "f"): a number and an SI-prefixed unit.
double scaled_unit(const std::string& text, const std::string& base, const char* what) {
  std::size_t k = 0;
  while (k < text.size() && (std::isdigit(static_cast<unsigned char>(text[k])) || text[k] == '.')) ++k;
  const double mult = k > 0 ? std::atof(text.substr(0, k).c_str()) : 1.0;
  std::string unit = text.substr(k);
  for (char& ch : unit) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  std::string b = base;
  for (char& ch : b) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  static const std::map<std::string, double> prefix = {{"", 1}, {"m", 1e-3}, {"u", 1e-6}, {"n", 1e-9}, {"p", 1e-12}, {"f", 1e-15}};
  if (unit.size() >= b.size() && unit.compare(unit.size() - b.size(), b.size(), b) == 0) {
    const auto it = prefix.find(unit.substr(0, unit.size() - b.size()));
    if (it != prefix.end()) return mult * it->second;
  }
  throw std::invalid_argument(fmt::format("unknown {} unit '{}'", what, text));
}

}  // namespace

double Library::leakage_unit_w() const { return scaled_unit(leakage_power_unit, "W", "leakage_power_unit"); }

double Library::capacitive_unit_f() const { return scaled_unit(capacitive_unit, "f", "capacitive_load_unit"); }

double Library::energy_unit_j() const {
  const double v = scaled_unit(voltage_unit, "V", "voltage_unit");
  return capacitive_unit_f() * v * v;
}

double LibPowerTable::lookup(double slew, double load) const {
  // Position of the value on each axis: the lower point of the segment used, and the fraction along it.
  std::vector<std::pair<std::size_t, double>> at;
  for (std::size_t a = 0; a < variables.size(); ++a) {
    const std::vector<double>& ax = indices[a];
    const double x = variables[a] == "total_output_net_capacitance" ? load : slew;
    if (ax.size() < 2) {
      at.emplace_back(0, 0.0);
      continue;
    }
    std::size_t i = 0;
    if (x >= ax.back()) i = ax.size() - 2;
    else
      while (i + 2 < ax.size() && x >= ax[i + 1]) ++i;
    at.emplace_back(i, (x - ax[i]) / (ax[i + 1] - ax[i]));
  }
  // Multilinear interpolation over the corners of the cell.
  double sum = 0;
  for (unsigned corner = 0; corner < (1u << at.size()); ++corner) {
    double w = 1;
    std::size_t flat = 0;
    for (std::size_t a = 0; a < at.size(); ++a) {
      const bool upper = (corner >> a) & 1u;
      if (upper && indices[a].size() < 2) { w = 0; break; }
      w *= upper ? at[a].second : 1 - at[a].second;
      flat = flat * indices[a].size() + at[a].first + (upper ? 1 : 0);
    }
    if (w != 0) sum += w * values.at(flat);
  }
  return at.empty() ? (values.empty() ? 0.0 : values[0]) : sum;
}

namespace {

// "0.06, 0.24, 0.48" (one or several quoted strings of a complex attribute) -> numbers
std::vector<double> numbers(const std::vector<std::string>& args) {
  std::vector<double> out;
  for (const std::string& a : args) {
    std::string t = a;
    for (char& ch : t)
      if (ch == ',' || ch == '\\') ch = ' ';
    std::istringstream in(t);
    double v = 0;
    while (in >> v) out.push_back(v);
  }
  return out;
}

std::vector<double> complex_numbers(const LibGroup& g, const char* name) {
  for (const auto& [k, args] : g.complex_attrs)
    if (k == name) return numbers(args);
  return {};
}

// A rise_power/fall_power group with its template's axes (the group's own index_N win).
std::optional<LibPowerTable> power_table(const LibGroup* g, const std::map<std::string, const LibGroup*>& templates,
                                         const std::string& file) {
  if (!g) return std::nullopt;
  LibPowerTable t;
  const LibGroup* tmpl = nullptr;
  if (!g->args.empty())
    if (auto it = templates.find(g->args[0]); it != templates.end()) tmpl = it->second;
  for (int a = 1; a <= 3; ++a) {
    const std::string var = fmt::format("variable_{}", a), index = fmt::format("index_{}", a);
    const std::string* v = tmpl ? tmpl->attr(var) : nullptr;
    if (!v) break;
    std::vector<double> ax = complex_numbers(*g, index.c_str());
    if (ax.empty()) ax = complex_numbers(*tmpl, index.c_str());
    t.variables.push_back(*v);
    t.indices.push_back(std::move(ax));
  }
  t.values = complex_numbers(*g, "values");
  std::size_t n = 1;
  for (const auto& ax : t.indices) n *= ax.size();
  if (t.values.size() != n)
    throw InputError(file, g->line, 0, g->type, fmt::format("{} values for a table of {}", t.values.size(), n));
  return t;
}

std::optional<BoolExpr> expr_attr(const LibGroup& g, const char* name, const std::string& file, const LibCell& cell) {
  const std::string* v = g.attr(name);
  if (!v) return std::nullopt;
  try {
    return BoolExpr::parse(*v);
  } catch (const std::invalid_argument& e) {
    throw InputError(file, g.line, 0, fmt::format("cell {} {}", cell.name, name), e.what());
  }
}

char var_attr(const LibGroup& g, const char* name) {
  const std::string* v = g.attr(name);
  return v && !v->empty() ? static_cast<char>(std::toupper(static_cast<unsigned char>((*v)[0]))) : 'X';
}

}  // namespace

Library parse_liberty(const std::string& text, const std::string& file_name) {
  const LibGroup top = parse_liberty_text(text, file_name);
  if (top.type != "library") throw InputError(file_name, top.line, 0, "liberty", "top-level group is not 'library'");
  Library lib;
  lib.file = file_name;
  lib.name = top.args.empty() ? "" : top.args[0];
  if (const std::string* tu = top.attr("time_unit")) lib.time_unit = *tu;
  if (const std::string* lu = top.attr("leakage_power_unit")) lib.leakage_power_unit = *lu;
  if (const std::string* v = top.attr("nom_voltage")) lib.nom_voltage = std::atof(v->c_str());
  if (const std::string* vu = top.attr("voltage_unit")) lib.voltage_unit = *vu;
  for (const auto& [k, args] : top.complex_attrs)
    if (k == "capacitive_load_unit" && args.size() == 2) lib.capacitive_unit = args[0] + args[1];
  std::map<std::string, const LibGroup*> power_templates;
  for (const LibGroup* t : top.children("power_lut_template"))
    if (!t->args.empty()) power_templates[t->args[0]] = t;
  for (const LibGroup* cg : top.children("cell")) {
    LibCell cell;
    cell.name = cg->args.empty() ? "" : cg->args[0];
    if (const std::string* a = cg->attr("area")) cell.area = std::atof(a->c_str());
    if (const std::string* l = cg->attr("cell_leakage_power")) cell.leakage = std::atof(l->c_str());
    if (const std::string* du = cg->attr("dont_use")) cell.dont_use = *du == "true";
    for (const LibGroup* pg : cg->children("pin")) {
      for (const std::string& pname : pg->args) {  // pin (A, B) declares several pins
        LibPin p;
        p.name = pname;
        if (const std::string* d = pg->attr("direction")) p.direction = *d;
        if (const std::string* c = pg->attr("capacitance")) p.capacitance = std::atof(c->c_str());
        p.rise_capacitance = p.fall_capacitance = p.capacitance;
        if (const std::string* c = pg->attr("rise_capacitance")) p.rise_capacitance = std::atof(c->c_str());
        if (const std::string* c = pg->attr("fall_capacitance")) p.fall_capacitance = std::atof(c->c_str());
        if (const std::string* c = pg->attr("clock")) p.is_clock = *c == "true";
        p.function = expr_attr(*pg, "function", file_name, cell);
        p.three_state = expr_attr(*pg, "three_state", file_name, cell);
        for (const LibGroup* ig : pg->children("internal_power")) {
          LibInternalPower ip;
          if (const std::string* r = ig->attr("related_pin")) ip.related_pin = *r;
          ip.when = expr_attr(*ig, "when", file_name, cell);
          const auto rise = ig->children("rise_power"), fall = ig->children("fall_power");
          ip.rise = power_table(rise.empty() ? nullptr : rise[0], power_templates, file_name);
          ip.fall = power_table(fall.empty() ? nullptr : fall[0], power_templates, file_name);
          p.internal_power.push_back(std::move(ip));
        }
        cell.pins.push_back(std::move(p));
      }
    }
    for (const char* kind : {"ff", "latch"}) {
      for (const LibGroup* sg : cg->children(kind)) {
        if (cell.state)
          throw InputError(file_name, sg->line, 0, "cell " + cell.name, "more than one ff/latch group is not supported");
        LibState st;
        st.kind = std::string(kind) == "ff" ? LibState::Kind::kFlipFlop : LibState::Kind::kLatch;
        if (sg->args.size() >= 1) st.iq = sg->args[0];
        if (sg->args.size() >= 2) st.iqn = sg->args[1];
        st.next_state = expr_attr(*sg, st.kind == LibState::Kind::kFlipFlop ? "next_state" : "data_in", file_name, cell);
        st.clocked_on = expr_attr(*sg, st.kind == LibState::Kind::kFlipFlop ? "clocked_on" : "enable", file_name, cell);
        st.clear = expr_attr(*sg, "clear", file_name, cell);
        st.preset = expr_attr(*sg, "preset", file_name, cell);
        st.clear_preset_var1 = var_attr(*sg, "clear_preset_var1");
        st.clear_preset_var2 = var_attr(*sg, "clear_preset_var2");
        if (!st.next_state || !st.clocked_on)
          throw InputError(file_name, sg->line, 0, "cell " + cell.name,
                           fmt::format("{} group without {}", kind,
                                       st.kind == LibState::Kind::kFlipFlop ? "next_state/clocked_on" : "data_in/enable"));
        cell.state = std::move(st);
      }
    }
    lib.cells.push_back(std::move(cell));
  }
  return lib;
}

Library load_liberty(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, 0, 0, "--liberty", "cannot open the Liberty file");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_liberty(ss.str(), path);
}

}  // namespace capsgen::synth
