// The signals a waveform viewer shows first, grouped, for the top levels capsgen_accel and
// capsgen_chip. The emitter writes them to trace_groups.json beside the RTL, keeping only the names
// this design has (Design::has_signal: a port or net of the top, or "u_inst.name" below it), so the
// simulation commands build their GTKWave save files from the generated design instead of knowing
// its internal names.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "config/accel_config.hpp"
#include "emit/design.hpp"

namespace capsgen::emit {

inline constexpr const char* kTraceGroupsName = "trace_groups.json";

// (group, signal paths relative to the top).
using TraceGroups = std::vector<std::pair<std::string, std::vector<std::string>>>;

// Every signal worth showing, of every configuration; a given design has a subset.
const TraceGroups& accel_trace_groups();
const TraceGroups& chip_trace_groups();

// Signals whose values are codes named by the module's constants (Module::constant), with the
// prefix of those names: (signal path relative to the top, prefix). The .gtkw shows them as names.
using TraceCodeSignals = std::vector<std::pair<std::string, std::string>>;
const TraceCodeSignals& accel_trace_code_signals();
const TraceCodeSignals& chip_trace_code_signals();

// The groups restricted to the signals `design` has under `top` (groups left empty are dropped).
TraceGroups present_trace_groups(const Design& design, const std::string& top, const TraceGroups& groups);

// trace_groups.json: {"capsgen_accel": [{"group": ..., "signals": [...]}, ...], "capsgen_chip": [...],
// "codes": {"capsgen_accel": {"u_seq.state_q": {"0": "StIdle", ...}}, "capsgen_chip": {...}}}, a key
// for each top level the design has.
void emit_trace_groups(const AccelConfig& cfg, Design& design);

}  // namespace capsgen::emit
