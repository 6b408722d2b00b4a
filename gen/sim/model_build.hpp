// Building a Verilator model of generated RTL (tb/ through CMake), keyed on what it is built from.
//
// A model is a function of four things: the RTL files' contents, the testbench sources (tb/ and the
// parts of gen/ it compiles in), the build options (which testbench, tracing, coverage, C++
// optimization) and the tools (Verilator, the C++ compiler, CMake). model_key() hashes all four; two
// models with equal keys are interchangeable. build_model() keeps the model's own copy of the RTL
// beside its build, so the build never depends on where the RTL came from (a stale model of another
// RTL directory cannot be reused), and records the key after a successful build.
//
// Two places a model can live:
//   - private: a build directory of one `capsgen sim --work` (WORK/build-accel, ...): rebuilt
//     incrementally when the RTL or the testbench change, from scratch when the options or tools do;
//   - shared: a model cache (`--model-cache DIR` or $CAPSGEN_MODEL_CACHE), one directory per key,
//     DIR/<testbench>-<key>: every run with the same key uses the same build (the test suite shares
//     one cache, so each distinct model is built once). Builders of one key serialize on a lock file.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace capsgen::sim {

struct ModelSpec {
  std::string testbench;  // "tb_accel" or "tb_chip" (the CMake target of tb/)
  bool trace = false;     // FST tracing built in (CAPSGEN_TB_TRACE)
  bool coverage = false;  // Verilator coverage built in (CAPSGEN_TB_COVERAGE)
  std::string opt = "-O3";  // C++ optimization of the testbench and the model (CAPSGEN_TB_OPT)
  std::filesystem::path source_dir;                          // the capsgen tree (tb/, gen/)
  std::vector<std::pair<std::string, std::string>> rtl;      // RTL directory files: name -> contents
};

// True when the RTL directory is a gate-level netlist directory (capsgen synth's netlist/, its files.f
// says so): its models are verilated with -fno-gate (docs/flows.md, a Verilator 5.006 bug).
bool is_gate_level(const ModelSpec& spec);

// The tool versions a model depends on (verilator, c++, cmake), one line each.
std::string tool_versions();

// The digest (32 hex digits) of the model's inputs: RTL contents, testbench sources, options, tools.
std::string model_key(const ModelSpec& spec, const std::string& tools);

// The files of an RTL directory as (name, contents), sorted by name (regular files only).
std::vector<std::pair<std::string, std::string>> read_rtl_dir(const std::filesystem::path& dir);

struct BuiltModel {
  std::filesystem::path dir;  // the CMake build directory (holds the testbench executable)
  std::string key;
  bool reused = false;        // the directory already held a model of this key
  double seconds = 0;         // configure + build time
};

// Builds (or reuses) the model of `spec` in `dir` (created when missing; an existing directory of
// another key is rebuilt: incrementally when only RTL or testbench sources differ). `jobs` parallel
// compile jobs; the configure and build logs go to `log_dir`/configure.log and build.log. Throws
// InputError naming the log on a failed configure or build.
BuiltModel build_model(const ModelSpec& spec, const std::filesystem::path& dir, int jobs,
                       const std::filesystem::path& log_dir);

// The shared location of a model in a cache: CACHE/<testbench>-<key>.
std::filesystem::path cached_model_dir(const std::filesystem::path& cache, const ModelSpec& spec, const std::string& key);

}  // namespace capsgen::sim
