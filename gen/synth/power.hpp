// Activity-based power of a synthesized block (`capsgen synth --target asic-osu018 --activity FILE`,
// docs/energy.md): the toggle counts of a simulated inference (synth/activity.hpp) mapped onto the
// flattened OSU018 netlist, and OpenSTA's report_power with every cell pin's activity set.
//
// Mapping. The netlist's register outputs keep their RTL names (`u_pe_r0_c0.sum_q[3]`) and its ports
// are the block's ports, so a net whose name (or the name of a net it is assigned to) is a bit of the
// activity document gets that bit's measured toggles per cycle, with probability 0.5 of being 1. Every
// other net driven by a combinational cell gets the activity propagated from its inputs through the
// cell's Liberty function with OpenSTA 2.0.17's rules (AND a1 p2 + a2 p1, OR a1 (1 - p2) +
// a2 (1 - p1), XOR a1 p1 (1 - p2) + a2 p2 (1 - p1), NOT a; independent inputs). A register or input
// whose name is not in the document keeps OpenSTA's default (0.1 per cycle); the counts of measured,
// propagated, constant and defaulted nets are reported.
//
// OpenSTA 2.0.17's set_power_activity -pins is broken (its Tcl reads an undefined variable), its first
// report_power replaces pin activities set before it, and setting a pin makes the next report propagate
// again from the input ports through every cone they reach (Power::ensureActivities). That search does
// not cross a flip-flop's clock-to-Q arc but does cross its asynchronous clear/preset arcs: from the
// rst_ni port through R -> Q of every DFFSR, where it evaluates Q's Liberty function ("P0002"), i.e. the
// flip-flop's internal state pin, which the first report seeded from D's activity. So the script runs
// report_power once, sets the input ports, every non-clock cell pin and the internal state pin of every
// flip-flop and latch to its output's value (sta::set_power_input_port_activity /
// sta::set_power_pin_activity, transitions per clock period), and reports again: the cones its
// re-propagation reaches get the values computed here by the same rules, the others keep them as set.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "synth/liberty.hpp"

namespace capsgen::synth {

inline constexpr double kDefaultActivity = 0.1;  // OpenSTA's default transitions per cycle

// Transitions per clock cycle and the probability of being 1.
struct Activity {
  double density = 0, duty = 0.5;
};

struct PinActivity {
  std::string instance, pin;
  Activity act;
};

struct NetCounts {
  long long measured = 0, propagated = 0, constant = 0, defaulted = 0;
  std::vector<std::string> defaulted_names;  // the first few, for the report
};

struct BlockActivity {
  std::vector<PinActivity> pins;  // every connected non-clock pin of every cell
  // The internal state pin (the Liberty ff/latch variable, "DS0000", "P0002") of every flip-flop and
  // latch whose output's function is that variable or its negation, with the output's activity.
  std::vector<PinActivity> state_pins;
  std::vector<std::pair<std::string, Activity>> ports;  // measured input port bits
  NetCounts nets;
  double measured_toggles = 0;    // sum of the measured nets' toggles per cycle
};

// Maps `toggles` (bits relative to the block's top, counted over `cycles`) onto module `top` of the
// write_verilog netlist `netlist` with the cells of `lib`. Throws std::runtime_error when the
// netlist has no module `top` or a cell the library lacks.
BlockActivity map_activity(const std::string& netlist, const std::string& top, const Library& lib,
                           const std::map<std::string, long long>& toggles, long long cycles);

// The OpenSTA script: read, link, the SDC, report_power, the pins' activities, report_power again
// between the markers power_tcl_begin/end.
std::string power_tcl(const std::string& liberty, const std::string& netlist, const std::string& top,
                      const std::string& sdc, const BlockActivity& act);
inline constexpr const char* kPowerBegin = "CAPSGEN-POWER-BEGIN";
inline constexpr const char* kPowerEnd = "CAPSGEN-POWER-END";
inline constexpr const char* kPowerSlew = "CAPSGEN-SLEW";  // "CAPSGEN-SLEW inst/pin rise fall" (ns)

// Watts per group of OpenSTA's report_power table.
struct PowerFigures {
  double internal = 0, switching = 0, leakage = 0;
  double total() const { return internal + switching + leakage; }
};
struct PowerReport {
  PowerFigures sequential, combinational, total;
  std::vector<std::string> errors;  // "Error:" lines of the log
  std::map<std::string, std::pair<double, double>> slews;  // "instance/pin" -> rise, fall slew (ns)
};
// The report between the markers of the log; std::runtime_error when it is missing.
PowerReport parse_power_log(const std::string& log);

// The hand calculation from the Liberty tables (docs/energy.md, validation), with OpenSTA 2.0.17's
// definitions:
// - switching: 0.5 C V^2 x density of every cell output (C: the larger of the rise and fall input
//   capacitances of the pins the net drives, each plus `port_load` pF per output port it reaches);
// - internal (when `slews` are given: OpenSTA's slews at the cell inputs): the internal_power tables'
//   rise + fall energy at that slew and the pin's load, x the group's duty (the `when`, or the
//   condition inferred from the pin's function x related pin's / pin's transitions, else 1 from a
//   clock pin, else 0.5), x the pin's transitions per second (2 per period on clock pins);
// - leakage: the sum of the cells' cell_leakage_power.
// `switching` and `internal` count the nets and cells OpenSTA finds a clock for; the `unclocked_` ones
// the others (fed only by undriven nets, the read data of RAM cells removed from the netlist), for
// which OpenSTA 2.0.17 takes 0.1 transitions per second, i.e. no power: what its figure leaves out.
struct HandPower {
  double switching = 0, unclocked_switching = 0, internal = 0, unclocked_internal = 0, leakage = 0;  // W
};
HandPower hand_power(const std::string& netlist, const std::string& top, const Library& lib, const BlockActivity& act,
                     double period_ns, double port_load_pf,
                     const std::map<std::string, std::pair<double, double>>& slews = {});

}  // namespace capsgen::synth
