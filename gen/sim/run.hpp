// Running a testbench and reading what it leaves, for both `capsgen sim` modes (the ideal-memory
// accelerator and the chip with its memory system): a logged shell command, whether generated RTL
// or a CMake build can be reused, the trace's window and signal groups, and its GTKWave save file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "emit/trace_groups.hpp"

#include "emit/design.hpp"

namespace capsgen::sim {

// Runs a shell command with its output in `log`; returns the exit status.
int run_logged(const std::string& cmd, const std::filesystem::path& log);

// The generated RTL in `dir` equals what build_design would write (same files, same contents).
bool rtl_up_to_date(const std::vector<emit::OutputFile>& files, const std::filesystem::path& dir);

// The value of `key` in a CMake cache ("KEY:TYPE=value" lines); empty when absent.
std::string cmake_cache_value(const std::filesystem::path& cache, const std::string& key);

// Signal groups of a .gtkw: (group title, names relative to the top module's scope; "u_x.sig" a
// signal of instance u_x). Names the trace does not hold are left out.
using TraceGroups = emit::TraceGroups;

// The groups the emitter wrote for `top` into the RTL directory's trace_groups.json
// (emit/trace_groups.hpp); none when the file or the top is absent (RTL from an older capsgen).
TraceGroups read_trace_groups(const std::filesystem::path& rtl, const std::string& top);
// Signals whose values are named codes (trace_groups.json's "codes"): path -> (value, name).
using TraceCodes = std::map<std::string, std::vector<std::pair<std::uint64_t, std::string>>>;
TraceCodes read_trace_codes(const std::filesystem::path& rtl, const std::string& top);

// The clock period the testbench runs at (its --clock-period-ps), in whole ps: the preset's period
// rounded to the nearest ps (an error below 0.5 ps per cycle, e.g. 3003 ps for 333 MHz).
std::uint64_t clock_period_ps(double mhz);

// How many cycles after the reset release a .gtkw opens on when the testbench's results do not say
// where the run's first operation ends.
constexpr std::uint64_t kTraceFirstCycles = 200;

// The span of a trace a .gtkw opens on, in ps; end_ps == 0: the whole trace from time 0.
struct TraceWindow {
  std::uint64_t start_ps = 0, end_ps = 0;
};

// Cycles [first, end) after the reset release, in the trace of a testbench run at `period_ps` whose
// reset was released at `reset_released_ps` (its results document's trace_reset_released_ps). Without
// it, the whole trace.
TraceWindow trace_window(std::optional<long long> reset_released_ps, std::uint64_t period_ps, std::uint64_t first,
                         std::uint64_t end);

// Reads the trace's timescale and signal names (with their widths) from its VCD header (fst2vcd,
// GTKWave's tool) and writes a .gtkw that opens the trace with `groups` (signals of module `top` and
// of its direct instances), zoomed so that `window` fills the wave pane. Returns "" or why no file
// was written.
// A signal of `codes` shows its codes' names: a GTKWave translate file beside the .gtkw
// (<gtkw stem>.<signal>.txt, "value name" per line) enabled on its trace.
std::string write_gtkw(const std::filesystem::path& fst, const std::filesystem::path& gtkw, const std::string& top,
                       const TraceGroups& groups, const TraceWindow& window, const TraceCodes& codes = {});

// The report's trace line for an FST (`trace`): writes the .gtkw beside it (write_gtkw) and says how
// to open it, or why there is none; `gtkw` gets the .gtkw's path ("" when none was written).
std::string trace_report_line(const std::filesystem::path& trace, const std::string& top, const TraceGroups& groups,
                              const TraceWindow& window, std::string& gtkw, const TraceCodes& codes = {});

// The report's "Problems" section: the testbench's MISMATCH/FAIL lines ("" when there are none).
std::string problems_section(const std::vector<std::string>& problems);

}  // namespace capsgen::sim
