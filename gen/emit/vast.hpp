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
// Names are checked when they are added (std::logic_error on a violation: an emitter bug); a name
// declared twice in a module (port, parameter, localparam, net, instance) is an error.
//
// Expressions are typed (emit/vast_expr.hpp): declarations return handles that carry their width,
// and the operators check widths. Emitters use only the typed overloads. The overloads that take
// Verilog text (marked "Deprecated" below) are what the typed layer prints through; an emitter uses
// one only to lay out typed expressions' text where the printer cannot (each place is marked
// "text API" with the reason).
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "emit/vast_expr.hpp"

namespace capsgen::emit {

// ---- Names -------------------------------------------------------------------------------------

bool is_snake_case(const std::string& s);        // lower_snake_case: [a-z][a-z0-9_]*
bool is_upper_camel_case(const std::string& s);  // UpperCamelCase: [A-Z][A-Za-z0-9]*

// ---- Expressions (Verilog text; deprecated, use emit/vast_expr.hpp) -----------------------------

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

// Typed: the target must be assignable and as wide as the value; a condition is 1 bit wide.
Stmt nb(const Expr& lhs, const Expr& rhs);  // lhs <= rhs;
Stmt blk(const Expr& lhs, const Expr& rhs);  // lhs = rhs;
Stmt if_(const Expr& cond, Stmts then_body, Stmts else_body = {});
// case (selector) label: begin body end ... [default: begin body end] endcase. Each label is a
// constant of the selector's width; the default arm prints only when its body is not empty.
Stmt case_(const Expr& selector, std::vector<std::pair<Expr, Stmts>> cases, Stmts default_body = {});
// for (var = 0; var < bound; var = var + 1) begin body end; `var` comes from Module::loop_variable
// and the bound must not exceed its limit.
Stmt for_(const Expr& var, const Dim& bound, Stmts body);
// Deprecated (Verilog text).
Stmt nb(std::string lhs, std::string rhs);
Stmt blk(std::string lhs, std::string rhs);
Stmt if_(std::string cond, Stmts then_body, Stmts else_body = {});
Stmt case_(std::string selector, std::vector<std::pair<std::string, Stmts>> cases);
Stmt stmt_comment(std::string text);
// for (var = 0; var < bound; var = var + 1) begin body end; `var` must be declared with Module::integer.
Stmt for_(std::string var, std::string bound, Stmts body);

// The signals `stmts` assign anywhere (inside if, case and for statements too), by base name: a bit
// or part select, a memory index and the parts of a concatenation name their signal. In the order of
// their first assignment, each once.
std::vector<std::string> assigned_signals(const Stmts& stmts);

// ---- Module items ------------------------------------------------------------------------------

struct Parameter {
  std::string name;
  std::string value;
  std::string comment;
  bool typed = false;  // declared with a number: `number` is its value
  long long number = 0;
};

enum class PortDir { kInput, kOutput };

// A register and its next state: `name_q`, assigned only `q <= d` in a clocked block, and `name_d`,
// assigned in a combinational block (docs/rtl-style.md).
struct Flop {
  Expr q, d;
};
// `d = q;` for every flop: the first statements of a next-state block, so that no `_d` latches and a
// flop the block does not assign keeps its value.
Stmts hold_flops(const std::vector<Flop>& flops);

struct Port {
  PortDir dir;
  std::string name;
  std::string width;  // "1" for scalars
  bool is_signed = false;
  std::string comment;
  long long bits = 0;  // the width in bits; 0 when declared with a text width (deprecated)
};

struct Instance {
  std::string module;
  std::string name;
  std::vector<std::pair<std::string, std::string>> params;  // name -> value
  std::vector<std::pair<std::string, std::string>> ports;   // port -> expression

  // Typed (an instance made by Module::instance(const Module& child, ...)): a parameter is passed
  // to the child's parameter of the same name, which must have the same value (the child module
  // was built from the same config, so its port widths are the ones checked here); a port must
  // exist in the child and get an expression of its width; an output drives an assignable one.
  Instance& param(const Param& p);
  // Sets the child's parameter `child_param` to `value` (a port whose width is that parameter is
  // then checked against `value`; a typed port whose width is an expression of parameters, such as
  // Width/8, is checked against the expression's value with the overrides; any other port whose
  // width depends on an overridden parameter cannot be checked and throws on connection). A value
  // equal to the one the child was built with overrides nothing.
  Instance& param(const std::string& child_param, const Dim& value);
  Instance& connect(const std::string& port, const Expr& e);
  // Deprecated (Verilog text, unchecked).
  Instance& param(std::string n, std::string v) {
    params.emplace_back(std::move(n), std::move(v));
    return *this;
  }
  Instance& connect(std::string port, std::string expr) {
    ports.emplace_back(std::move(port), std::move(expr));
    return *this;
  }

  std::string parent;                   // the module holding the instance (typed instances)
  std::vector<Port> child_ports;        // the child's ports (typed instances)
  std::vector<Parameter> child_params;  // the child's parameters (typed instances)
  std::vector<std::pair<std::string, long long>> overrides;  // parameters set to another value
  bool typed = false;
};

struct ItemBlank {};
struct ItemComment {
  std::string text;  // may hold several lines
};
struct ItemLocalparam {
  std::string name, value, comment;
  std::string width;  // a named constant's width in bits (Module::constant); empty: `localparam integer`
  std::uint64_t code = 0;  // a named constant's value
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

  // ---- Typed declarations: each returns a handle for expressions ----
  // Header: parameters and ports, in the order added.
  Param parameter(std::string name, long long value, std::string comment);
  Expr input(std::string name, const Dim& width, std::string comment, bool is_signed = false);
  Expr output(std::string name, const Dim& width, std::string comment, bool is_signed = false);
  // clk_i and rst_ni with their standard comments.
  Module& clock_and_reset();
  Expr clk() const;    // clk_i (after clock_and_reset)
  Expr rst_n() const;  // rst_ni (after clock_and_reset)
  // The port `name` declared earlier, for ports a helper shared by several modules declares (it
  // returns no handles). std::logic_error if there is no such port or its width is text other than
  // a number.
  Expr port(const std::string& name) const;
  // Body.
  Param localparam(std::string name, const Dim& value, std::string comment = "");
  // A named constant of `width` bits, `localparam [W-1:0] Name = W'dV;` (Name UpperCamelCase): an FSM
  // state or a code. The handle is a constant expression (a case label, an operand) printed as Name.
  Expr constant(std::string name, const Dim& width, std::uint64_t value, std::string comment = "");
  Expr wire(std::string name, const Dim& width, std::string comment = "", bool is_signed = false);
  Expr reg(std::string name, const Dim& width, std::string comment = "", bool is_signed = false);
  // `name_q` (with the comment) and its next state `name_d`.
  Flop flop(const std::string& name, const Dim& width, std::string comment = "");
  Memory memory(std::string name, const Dim& width, const Dim& depth, std::string comment = "");
  // A wire declared further down (Verilog reads a net above its declaration): the handle that
  // wire(name, width) gives later. That wire() call must come, with the same width (print_module
  // throws for a forward wire never declared).
  Expr forward_wire(const std::string& name, const Dim& width);
  // The names of forward wires not declared yet.
  std::vector<std::string> undeclared_forward_wires() const;
  // `integer name;`: a loop variable for for_() whose values lie in [0, limit).
  Expr loop_variable(std::string name, const Dim& limit, std::string comment = "");
  void assign(const Expr& lhs, const Expr& rhs);
  // An instance of `child` (built from the same config) whose connections are checked.
  Instance& instance(const Module& child, std::string name);

  // ---- Deprecated: widths and expressions as Verilog text, unchecked ----
  Module& parameter(std::string name, std::string value, std::string comment);
  Module& input(std::string name, std::string width, std::string comment, bool is_signed = false);
  Module& output(std::string name, std::string width, std::string comment, bool is_signed = false);
  void localparam(std::string name, std::string value, std::string comment = "");
  void wire(std::string name, std::string width, std::string comment = "", bool is_signed = false);
  void reg(std::string name, std::string width, std::string comment = "", bool is_signed = false);
  void memory(std::string name, std::string width, std::string depth, std::string comment = "");
  void assign(std::string lhs, std::string rhs);
  Instance& instance(std::string module, std::string name);

  void blank();
  void comment(std::string text);
  void integer(std::string name, std::string comment = "");  // a loop variable for for_()
  void always_ff(Stmts body);  // always @(posedge clk_i), no reset
  // always @(posedge clk_i or negedge rst_ni): reset_body while rst_ni is low, else body. Every
  // register body assigns must get its reset value in reset_body (a register without one would
  // make synthesis use rst_ni as its load enable), and no memory may be assigned in either (a
  // memory belongs in always_ff): std::logic_error naming the module and the registers otherwise.
  void always_ff_reset(Stmts reset_body, Stmts body);
  // Reset statements `name <= 0;` for the named registers, each zero as wide as its declaration
  // (std::logic_error for a name that is not a register of this module).
  Stmts reset_to_zero(const std::vector<std::string>& names) const;
  // The flops' clocked block: each flop's reset value (`reset_values`, by flop; zero for the others)
  // while rst_ni is low, else `q <= d` for every flop.
  void always_ff_flops(const std::vector<Flop>& flops, const std::vector<std::pair<Expr, Expr>>& reset_values = {});
  // What always_ff_reset(reset_body, body) says, in the _d/_q style: every register of reset_body
  // (named <base>_q) gets a <base>_d, declared here; an always @* block sets each d = q and then runs
  // `body` with its assignments to a q made blocking assignments to its d (their right-hand sides and
  // conditions still read the _q registers, as the nonblocking assignments did); the clocked block
  // holds the reset values and then only q <= d. Same checks as always_ff_reset, and every register
  // must be named <base>_q.
  void always_ff_next(Stmts reset_body, Stmts body);
  void always_comb(Stmts body);                        // always @*
  void lint_off(std::string rule, std::string reason);
  void lint_on(std::string rule);

  // An assertion: `cond` (1 bit; may read past()) holds at every rising clock edge at which rst_ni
  // is high and was high at the previous edge. `name` (a_lower_snake_case) labels it: Verilator's
  // failure message names it ("Assertion failed in TOP.<path>.<name>"). The assertions print after
  // the module's logic in one `ifdef CAPSGEN_ASSERTIONS` block, so synthesis never sees them;
  // simulation enables them with +define+CAPSGEN_ASSERTIONS --assert, and Yosys proves them with
  // read_verilog -formal -DCAPSGEN_ASSERTIONS (docs/rtl-assertions.md). Needs clock_and_reset().
  void assertion(std::string name, const Expr& cond, std::string comment);
  // The same for a property of the module's inputs (what its environment promises): `assume` in the
  // printed block, so a proof of the module's assertions may rely on it; simulation checks it like
  // an assertion (a failure then blames the driver of the inputs).
  void assumption(std::string name, const Expr& cond, std::string comment);
  struct Assertion {
    std::string name, cond, comment;
    bool assume = false;
  };
  const std::vector<Assertion>& assertions() const { return assertions_; }

 private:
  // always_ff_reset's rules (every register of body has a reset value, no memory); records the
  // registers as assigned in an async-reset block.
  void check_async_reset_block(const Stmts& reset_body, const Stmts& body);
  void check_signal(const std::string& name);
  void claim(const std::string& name);  // throws if the name is already declared in this module
  Expr port_ref(const std::string& name) const;

  std::string name_;
  std::string description_;
  std::vector<Parameter> params_;
  std::vector<Port> ports_;
  std::vector<Item> items_;
  std::set<std::string> names_;
  std::set<std::string> async_assigned_;  // signals assigned in always_ff_reset blocks
  std::vector<std::pair<std::string, long long>> forward_;  // forward wires not declared yet (name, bits)
  std::vector<Assertion> assertions_;
};

// The flops of one next-state block, declared through it in order (Module::flop), so that the block
// lists its registers once: flops() for hold_flops and Module::always_ff_flops.
class FlopGroup {
 public:
  explicit FlopGroup(Module& m) : m_(&m) {}
  Flop flop(const std::string& name, const Dim& width, std::string comment = "");
  const std::vector<Flop>& flops() const { return flops_; }

 private:
  Module* m_;
  std::vector<Flop> flops_;
};

// The one printer. Deterministic: the same Module always prints the same bytes.
std::string print_module(const Module& m);

}  // namespace capsgen::emit
