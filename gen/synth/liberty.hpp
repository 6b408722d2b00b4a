// A small reader of Liberty (.lib) standard-cell libraries: enough for the flows to take cell
// areas, pin directions, logic functions and flip-flop/latch behaviour from the library itself
// (kGE normalization, gate-level simulation models, area cross-checks) instead of typing them in.
//
// Liberty syntax: groups `name (args) { ... }`, simple attributes `name : value ;` and complex
// attributes `name (args) ;`, C comments, backslash line continuations. Boolean functions
// ("(!(A B))", "((A^B)^C)") are parsed by BoolExpr.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace capsgen::synth {

// ---- generic Liberty syntax tree ----
struct LibGroup {
  std::string type;               // "library", "cell", "pin", "ff", ...
  std::vector<std::string> args;  // "(NAND2X1)" -> {"NAND2X1"}
  std::vector<std::pair<std::string, std::string>> attrs;  // simple attributes, quotes removed
  std::vector<std::pair<std::string, std::vector<std::string>>> complex_attrs;
  std::vector<LibGroup> groups;
  int line = 0;

  const std::string* attr(const std::string& name) const;  // first simple attribute of that name
  std::vector<const LibGroup*> children(const std::string& type) const;
};

// Parses Liberty text. Throws InputError(file, line) on syntax errors.
LibGroup parse_liberty_text(const std::string& text, const std::string& file_name);

// ---- Boolean functions ----
// Liberty operators, from loosest to tightest binding: '+' '|' (or), '*' '&' and juxtaposition
// (and), '^' (xor), prefix '!' and postfix '\'' (not); constants 0 and 1.
class BoolExpr {
 public:
  enum class Op { kVar, kConst, kNot, kAnd, kOr, kXor };

  static BoolExpr parse(const std::string& text);  // throws std::invalid_argument

  Op op() const { return op_; }
  const std::string& var() const { return var_; }
  bool value() const { return value_; }
  const std::vector<BoolExpr>& operands() const { return args_; }

  // Evaluates with the given variable values; throws std::out_of_range for an unknown variable.
  bool eval(const std::map<std::string, bool>& env) const;
  // Variables in order of first appearance.
  std::vector<std::string> variables() const;
  // Verilog expression ("~", "&", "|", "^", fully parenthesized); `rename` maps variable names.
  std::string to_verilog(const std::map<std::string, std::string>& rename = {}) const;
  // If the expression is a single variable or its negation: that variable and whether negated.
  std::optional<std::pair<std::string, bool>> as_literal() const;

 private:
  Op op_ = Op::kConst;
  std::string var_;
  bool value_ = false;
  std::vector<BoolExpr> args_;
  friend class BoolParser;
  void collect(std::vector<std::string>& out) const;
};

// ---- standard cells ----
// A power table (power_lut_template axes): energy per transition by input transition time and/or
// output load, in the library's energy unit (capacitive_load_unit x voltage_unit^2).
struct LibPowerTable {
  std::vector<std::string> variables;        // "input_transition_time", "total_output_net_capacitance"
  std::vector<std::vector<double>> indices;  // one axis per variable
  std::vector<double> values;                // row-major over the axes
  // OpenSTA's table lookup: linear in every axis between the two points around the value, extrapolated
  // from the first or last two points outside the axis.
  double lookup(double slew, double load) const;
};

// An internal_power group of a pin: the energy of its transitions (related_pin: caused by that input's
// transitions).
struct LibInternalPower {
  std::string related_pin;
  std::optional<BoolExpr> when;
  std::optional<LibPowerTable> rise, fall;
};

struct LibPin {
  std::string name;
  std::string direction;  // "input", "output", "inout", "internal"
  std::optional<BoolExpr> function;     // outputs
  std::optional<BoolExpr> three_state;  // output is high-impedance when true
  double capacitance = 0;
  double rise_capacitance = 0, fall_capacitance = 0;  // `capacitance` where the library gives none
  bool is_clock = false;
  std::vector<LibInternalPower> internal_power;
};

// Sequential element of a cell: ff or latch group.
struct LibState {
  enum class Kind { kFlipFlop, kLatch };
  Kind kind = Kind::kFlipFlop;
  std::string iq, iqn;                 // internal state variable names used by pin functions
  std::optional<BoolExpr> next_state;  // ff: data; latch: data_in
  std::optional<BoolExpr> clocked_on;  // ff: edge (0->1) of this expression; latch: enable (level)
  std::optional<BoolExpr> clear;       // asynchronous, active when true
  std::optional<BoolExpr> preset;
  char clear_preset_var1 = 'X';  // iq when clear and preset are both active: L, H, N, T, X
  char clear_preset_var2 = 'X';  // iqn likewise
};

struct LibCell {
  std::string name;
  double area = 0;
  double leakage = 0;        // cell_leakage_power, in the library's leakage_power_unit
  std::vector<LibPin> pins;  // in library order
  std::optional<LibState> state;
  bool dont_use = false;

  const LibPin* pin(const std::string& name) const;
  std::vector<const LibPin*> inputs() const;
  std::vector<const LibPin*> outputs() const;
  bool is_sequential() const { return state.has_value(); }
  bool has_three_state() const;
};

struct Library {
  std::string name;
  std::string file;
  std::string time_unit;         // e.g. "1ns"
  std::string capacitive_unit;   // e.g. "1pf"
  std::string area_unit = "um^2";  // Liberty has no area unit attribute; by convention square microns
  std::string leakage_power_unit;  // e.g. "1nW"
  std::string voltage_unit = "1V";
  double nom_voltage = 0;          // V
  std::vector<LibCell> cells;

  const LibCell* cell(const std::string& name) const;
  // Area of a cell; throws std::out_of_range naming the cell when it is not in the library.
  double area(const std::string& cell_name) const;
  // Time unit in nanoseconds (1 for "1ns", 0.001 for "1ps").
  double time_unit_ns() const;
  // leakage_power_unit in watts (1e-9 for "1nW"); throws std::invalid_argument for an unknown unit.
  double leakage_unit_w() const;
  // capacitive_load_unit in farads (1e-12 for "1pf"); throws std::invalid_argument for an unknown unit.
  double capacitive_unit_f() const;
  // The unit of internal_power tables in joules: capacitive_load_unit x voltage_unit^2.
  double energy_unit_j() const;
};

Library load_liberty(const std::string& path);  // throws InputError
Library parse_liberty(const std::string& text, const std::string& file_name);

}  // namespace capsgen::synth
