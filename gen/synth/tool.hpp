// Running the external tools of the flows (yosys, sta, nextpnr-ice40, verilator): found on PATH or
// through an environment variable (CAPSGEN_YOSYS, CAPSGEN_STA, CAPSGEN_NEXTPNR_ICE40,
// CAPSGEN_VERILATOR), output captured in a log file.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace capsgen::synth {

struct ToolRun {
  int exit_code = -1;
  double seconds = 0;
  std::filesystem::path log;
};

// Absolute path of the tool, or nullopt. `name` is the program name ("yosys"); the environment
// variable CAPSGEN_<NAME> (upper case, '-' -> '_') overrides it.
std::optional<std::string> find_tool(const std::string& name);

// find_tool or InputError telling how to install it (scripts/bootstrap.sh, Debian package).
std::string require_tool(const std::string& name, const std::string& debian_package);

// Runs argv[0] (a path) with stdout and stderr into `log`, in `cwd`. Never throws for a failing
// tool (see exit_code); throws std::runtime_error if the process cannot be started.
ToolRun run_tool(const std::vector<std::string>& argv, const std::filesystem::path& log,
                 const std::filesystem::path& cwd = {});

// First line of `<tool> <version_flag>` output (e.g. "Yosys 0.23 (git sha1 7ce5011c24b)"), "" on failure.
std::string tool_version(const std::string& tool_path, const std::string& version_flag);

// Whole file as a string (throws std::runtime_error naming the file).
std::string read_text(const std::filesystem::path& p);
// Writes (creating parent directories); throws InputError.
void write_text(const std::filesystem::path& p, const std::string& text);

// The last `n` lines of a file (for error messages that point into a tool log).
std::string tail_lines(const std::filesystem::path& p, int n);

}  // namespace capsgen::synth
