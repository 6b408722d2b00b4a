// Parsers of the tools' own reports: every number capsgen synth reports comes from here.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace capsgen::synth {

// ---- Yosys `stat -json`: cell counts per module (cell type -> count; submodule instances appear
// as cells whose type is a module name).
struct YosysStat {
  std::map<std::string, std::map<std::string, long long>> modules;  // module name (no leading '\') -> counts
  std::map<std::string, long long> design;  // "design" section: whole hierarchy under -top, flattened
  bool has_design = false;
};
YosysStat parse_yosys_stat_json(const std::string& text);

// ---- Yosys `stat -liberty` text: "Chip area for module '\X': N" / "Chip area for top module ..."
struct YosysChipArea {
  std::map<std::string, double> modules;
  std::optional<double> top;
};
YosysChipArea parse_yosys_chip_area(const std::string& text);

// ---- Yosys `dump t:$mem_v2`: the behavioral memories left as RAM cells.
struct MemoryInfo {
  std::string name;   // MEMID without the leading '\'
  long long words = 0, width = 0, abits = 0;
  int read_ports = 0, write_ports = 0;
  bool sync_read = false;  // any read port clocked
  long long bits() const { return words * width; }
};
std::vector<MemoryInfo> parse_yosys_memories(const std::string& rtlil_dump);

// ---- Yosys log: warnings ("Warning: ..." lines, deduplicated, in order).
std::vector<std::string> yosys_warnings(const std::string& log);

// ---- OpenSTA report_checks (one path per section in our script).
struct StaPath {
  bool found = false;
  std::string startpoint, startpoint_kind;  // instance or port; "(rising edge-triggered flip-flop ...)" text
  std::string endpoint, endpoint_kind;
  double arrival = 0;   // data arrival time
  double required = 0;  // data required time
  double setup = 0;     // library setup time (positive number), 0 when absent
  double slack = 0;
  double period = 0;    // capture clock edge time (the period for single-cycle paths)
  double output_external = 0;  // output external delay (positive) for paths to ports
  std::vector<std::pair<std::string, std::string>> points;  // (pin, cell) along the path
};
struct StaReport {
  std::map<std::string, StaPath> sections;  // CAPSGEN-SECTION name -> worst path
  std::optional<double> wns, tns;
  long long registers = -1;
  std::vector<std::string> errors;  // "Error:" lines
  std::vector<std::string> warnings;
};
StaReport parse_sta_log(const std::string& log);

// ---- write_verilog netlists: for each cell instance, its type and pin connections.
struct NetlistCell {
  std::string type;
  std::map<std::string, std::string> pins;  // pin -> net expression (escaped names unescaped)
};
std::map<std::string, NetlistCell> parse_netlist_cells(const std::string& verilog, const std::string& module);

// ---- nextpnr --report JSON
struct PnrReport {
  std::map<std::string, std::pair<long long, long long>> utilization;  // resource -> (used, available)
  std::map<std::string, std::pair<double, double>> fmax;  // clock -> (achieved MHz, constraint MHz)
};
PnrReport parse_nextpnr_report(const std::string& json_text);

}  // namespace capsgen::synth

namespace capsgen::synth {

// OpenSTA 2019 cannot read `assign { a[3], b[2:0] } = ...;` (a concatenation on the left-hand side),
// which Yosys' write_verilog produces for nets that alias parts of several wires. Rewrites such
// statements into one assign per bit (widths from the netlist's declarations); everything else is
// unchanged. Throws std::runtime_error when a statement cannot be split.
std::string split_concat_assigns(const std::string& verilog);

}  // namespace capsgen::synth
