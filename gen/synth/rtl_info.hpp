// What the flows need to know about a `capsgen generate` output directory: its Verilog files (in
// files.f order), the modules they define, which module instantiates which, and the root modules
// (instantiated by no other module: the default synthesis tops).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace capsgen::synth {

struct RtlInfo {
  std::filesystem::path dir;
  std::vector<std::filesystem::path> files;        // absolute, files.f order
  std::vector<std::string> modules;                // in definition order
  std::map<std::string, std::map<std::string, int>> instances;  // module -> {submodule -> count}
  std::string preset;                              // config.json's "name"; empty without config.json

  bool has_module(const std::string& m) const;
  std::vector<std::string> roots() const;  // modules no other module instantiates, in definition order
  // Modules `top` instantiates, directly or not (excluding top), dependencies first.
  std::vector<std::string> submodules(const std::string& top) const;
};

// Reads files.f (and config.json when present) in `dir`. Throws InputError naming the file.
RtlInfo load_rtl_info(const std::filesystem::path& dir);

// Module and instance scan of Verilog text (comments stripped; good for generated code: a module
// instance is "<known module> [#(...)] <name> (").
void scan_verilog(const std::string& text, RtlInfo& info);

struct Port {
  std::string name;
  std::string direction;  // input, output, inout
  int width = 1;
};

// Parses the output of Yosys' `portlist` command ("input [31:0] data_i").
std::vector<Port> parse_portlist(const std::string& text);

}  // namespace capsgen::synth
