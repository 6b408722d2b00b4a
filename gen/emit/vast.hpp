// A small Verilog AST and its one printer (in the spirit of XLS codegen/vast).
//
// Every emitter builds Module objects with this API and never prints Verilog text itself, so the
// whole generated RTL shares one style:
//   - module names lower_snake_case with the "capsgen_" prefix;
//   - parameters UpperCamelCase (`parameter integer DataWidth = 8`);
//   - ports clk_i, rst_ni (active-low asynchronous reset), other ports lower_snake_case with _i/_o;
//   - registers end in _q, their next-state signals in _d; other signals lower_snake_case;
//   - named port and parameter connections only; no `define, no `include;
//   - plain Verilog-2005 that Verilator 5.006, Icarus 11 (-g2012) and Yosys 0.23 all accept.
// Names are checked when they are added (std::logic_error on a violation: an emitter bug).
// Expressions are Verilog text; expr_* helpers build the common ones.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace capsgen::emit {

// ---- Names -------------------------------------------------------------------------------------

bool is_snake_case(const std::string& s);        // lower_snake_case: [a-z][a-z0-9_]*
bool is_upper_camel_case(const std::string& s);  // UpperCamelCase: [A-Z][A-Za-z0-9]*

// ---- Expressions (Verilog text) ----------------------------------------------------------------

// A width given as Verilog text: a number ("8") or a parameter expression ("Rows*DataWidth").
// Printed as a range [W-1:0]; numeric widths are folded ("8" -> [7:0]); width "1" means a scalar.
std::string range_of(const std::string& width);
// Part-select name[index*width +: width] with numeric folding: slice("v", 2, "8") -> "v[23:16]".
std::string expr_slice(const std::string& name, int index, const std::string& width);
// Sign extension of a `from`-bit signed value to `to` bits (to >= from), written so the replication
// count is never zero: {{(to-from+1){v[from-1]}}, v[from-2:0]}. Requires from >= 2.
std::string expr_sext(const std::string& value, const std::string& from, const std::string& to);
// An all-zero constant of `width` bits: {W{1'b0}}.
std::string expr_zero(const std::string& width);

// ---- Statements (inside always blocks) ---------------------------------------------------------

struct Stmt;
using Stmts = std::vector<Stmt>;

struct Stmt {
  enum class Kind { kNonBlocking, kBlocking, kIf, kCase, kComment, kFor };
  Kind kind = Kind::kComment;
  std::string lhs;   // assignment target; for kIf/kCase the condition/selector; for kComment the text;
                     // for kFor the loop variable (an `integer` item)
  std::string rhs;   // assignment value; for kFor the bound (the loop runs var = 0 .. rhs-1)
  Stmts then_body;   // kIf; kFor: the loop body
  Stmts else_body;   // kIf (empty: no else)
  std::vector<std::pair<std::string, Stmts>> cases;  // kCase: label ("default" allowed) -> body
};

Stmt nb(std::string lhs, std::string rhs);       // lhs <= rhs;
Stmt blk(std::string lhs, std::string rhs);      // lhs = rhs;
Stmt if_(std::string cond, Stmts then_body, Stmts else_body = {});
Stmt case_(std::string selector, std::vector<std::pair<std::string, Stmts>> cases);
Stmt stmt_comment(std::string text);
// for (var = 0; var < bound; var = var + 1) begin body end; `var` must be declared with Module::integer.
Stmt for_(std::string var, std::string bound, Stmts body);

// ---- Module items ------------------------------------------------------------------------------

struct Parameter {
  std::string name;
  std::string value;
  std::string comment;
};

enum class PortDir { kInput, kOutput };

struct Port {
  PortDir dir;
  std::string name;
  std::string width;  // "1" for scalars
  bool is_signed = false;
  std::string comment;
};

struct Instance {
  std::string module;
  std::string name;
  std::vector<std::pair<std::string, std::string>> params;  // name -> value
  std::vector<std::pair<std::string, std::string>> ports;   // port -> expression

  Instance& param(std::string n, std::string v) {
    params.emplace_back(std::move(n), std::move(v));
    return *this;
  }
  Instance& connect(std::string port, std::string expr) {
    ports.emplace_back(std::move(port), std::move(expr));
    return *this;
  }
};

struct ItemBlank {};
struct ItemComment {
  std::string text;  // may hold several lines
};
struct ItemLocalparam {
  std::string name, value, comment;
};
struct ItemNet {
  bool is_reg = false;
  bool is_signed = false;
  std::string name, width, comment;
  std::string depth;  // non-empty: a memory `reg [W-1:0] name [0:depth-1]`
  bool is_integer = false;  // `integer name;` (a loop variable)
};
struct ItemAssign {
  std::string lhs, rhs;
};
struct ItemAlways {
  enum class Kind { kFlop, kFlopAsyncReset, kComb } kind;
  Stmts reset_body;  // kFlopAsyncReset: executed while rst_ni is low
  Stmts body;
};
struct ItemLint {
  bool off = true;
  std::string rule;    // e.g. UNUSEDSIGNAL
  std::string reason;  // printed above lint_off: every waiver is justified in the output
};

using Item = std::variant<ItemBlank, ItemComment, ItemLocalparam, ItemNet, ItemAssign, ItemAlways, Instance, ItemLint>;

class Module {
 public:
  Module(std::string name, std::string description);

  const std::string& name() const { return name_; }
  const std::string& description() const { return description_; }
  const std::vector<Parameter>& parameters() const { return params_; }
  const std::vector<Port>& ports() const { return ports_; }
  const std::vector<Item>& items() const { return items_; }

  // Header: parameters and ports, in the order added.
  Module& parameter(std::string name, std::string value, std::string comment);
  Module& input(std::string name, std::string width, std::string comment, bool is_signed = false);
  Module& output(std::string name, std::string width, std::string comment, bool is_signed = false);
  // clk_i and rst_ni with their standard comments.
  Module& clock_and_reset();

  // Body.
  void blank();
  void comment(std::string text);
  void localparam(std::string name, std::string value, std::string comment = "");
  void wire(std::string name, std::string width, std::string comment = "", bool is_signed = false);
  void reg(std::string name, std::string width, std::string comment = "", bool is_signed = false);
  void memory(std::string name, std::string width, std::string depth, std::string comment = "");
  void integer(std::string name, std::string comment = "");  // a loop variable for for_()
  void assign(std::string lhs, std::string rhs);
  void always_ff(Stmts body);                          // always @(posedge clk_i), no reset
  void always_ff_reset(Stmts reset_body, Stmts body);  // async active-low rst_ni
  void always_comb(Stmts body);                        // always @*
  Instance& instance(std::string module, std::string name);
  void lint_off(std::string rule, std::string reason);
  void lint_on(std::string rule);

 private:
  void check_signal(const std::string& name) const;

  std::string name_;
  std::string description_;
  std::vector<Parameter> params_;
  std::vector<Port> ports_;
  std::vector<Item> items_;
};

// The one printer. Deterministic: the same Module always prints the same bytes.
std::string print_module(const Module& m);

}  // namespace capsgen::emit
