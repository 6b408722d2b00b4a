// The set of files one `capsgen generate` run writes, and the registry of block emitters.
//
// To add a block (activation unit, scratchpad, controller, ...): write emit/<block>.{hpp,cpp} with a
// function `void emit_<block>(const AccelConfig&, Design&)` that adds its modules (and data files,
// e.g. LUT ROM .hex/.mem contents, and a JSON summary for its testbench), then append one line to
// block_emitters() in emit/registry.cpp, after the blocks it instantiates. Nothing else needs to
// change: generate_rtl() runs the emitters in that order and writes files.f in the order modules
// were added (dependencies first).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/accel_config.hpp"
#include "core/bits.hpp"
#include "emit/vast.hpp"

namespace capsgen::emit {

struct OutputFile {
  enum class Kind { kVerilog, kData, kOther };
  std::string name;  // file name relative to the output directory (no directories)
  std::string contents;
  Kind kind = Kind::kOther;
};

class Design {
 public:
  // Holds its own copy of the preset: a Design may outlive the config it was made from (a temporary,
  // or build_design(load_accel_config(...)) returned).
  explicit Design(AccelConfig cfg) : cfg_(std::move(cfg)) {}

  const AccelConfig& config() const { return cfg_; }

  // Adds <module name>.v holding the standard file header and the printed module.
  void add_module(const Module& m);
  // Adds a data file (e.g. a LUT ROM image for $readmemh); `comment_prefix` starts the header lines
  // ("//" for .hex/.mem read by $readmemh); empty: no header.
  void add_data_file(const std::string& name, const std::string& contents, const std::string& comment_prefix = "//");
  // Adds any other file verbatim (documentation, scripts).
  void add_other_file(const std::string& name, const std::string& contents);
  // Adds the JSON summary `name` ("<doc>.json", core/summary_json.hpp): `facts` with the schema field.
  void add_summary(const std::string& name, const nlohmann::json& facts);

  bool has_module(const std::string& name) const;
  // True when `path` ("sig", "u_inst.sig", "u_a.u_b.sig") names a port or net of module `top`, or of
  // the module an instance path below it leads to; false for anything not added.
  bool has_signal(const std::string& top, const std::string& path) const;
  // The named constants (Module::constant) whose names start with `prefix` in the module holding
  // signal `path` (as for has_signal), as (value, name): what a state or class signal's codes mean.
  std::vector<std::pair<std::uint64_t, std::string>> signal_codes(const std::string& top, const std::string& path,
                                                                  const std::string& prefix) const;
  const std::vector<OutputFile>& files() const { return files_; }
  // Verilog files in dependency order (the order added).
  std::vector<std::string> verilog_files() const;

 private:
  void add(OutputFile f);
  const Module* find_module(const std::string& name) const;
  // The module holding signal `path` below `top` (following its instance names) and the signal's
  // name there; nullptr when a module or an instance on the way does not exist.
  const Module* module_of_signal(const std::string& top, const std::string& path, std::string& name) const;
  AccelConfig cfg_;
  std::vector<OutputFile> files_;
  std::vector<Module> modules_;  // the modules added, for has_signal
};

// The header on every generated file: generator version, config name and source path, no timestamp.
std::string file_header(const AccelConfig& cfg, const std::string& what, const std::string& prefix = "//");

struct BlockEmitter {
  const char* name;
  void (*emit)(const AccelConfig&, Design&);
};

// The registered block emitters, in dependency order.
const std::vector<BlockEmitter>& block_emitters();

// Common helpers for emitters.
inline std::string str(long long v) { return std::to_string(v); }

}  // namespace capsgen::emit
