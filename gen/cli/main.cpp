// capsgen: generator of CapsNet accelerators, golden models and their tests.
#include <fmt/format.h>

#include <exception>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "core/input_error.hpp"
#include "core/version.hpp"

namespace {

using capsgen::cli::Command;

const std::vector<Command>& commands() {
  static const std::vector<Command> list = {
      {"validate", "check an accelerator preset and/or a network description", capsgen::cli::cmd_validate},
      {"golden", "run the bit-exact fixed-point golden model (and the float reference)", capsgen::cli::cmd_golden},
      {"generate", "write the RTL (Verilog, file list) of an accelerator preset", capsgen::cli::cmd_generate},
      {"synth", "ASIC (OSU018 area, timing) and FPGA (iCE40, Xilinx) flows and RTL checks", capsgen::cli::cmd_synth},
      {"compile", "map a network onto a preset: program, address map, statistics per operation", capsgen::cli::cmd_compile},
      {"sim", "run a whole inference on the generated RTL (Verilator), bit-exact, with a report", capsgen::cli::cmd_sim},
      {"regress", "regression: configs x networks x seeds on the RTL in parallel, JUnit, coverage", capsgen::cli::cmd_regress},
      {"accuracy", "accuracy of the float and fixed-point models on a test set (mnist, fashion)", capsgen::cli::cmd_accuracy},
      {"dse", "design-space explorations: dram (ROMANet DRAM mapping), memory (DESCNet scratchpad)", capsgen::cli::cmd_dse},
  };
  return list;
}

void print_usage() {
  fmt::print("capsgen {} - CapsNet accelerator generator\n\nusage: capsgen <command> [options]\n\ncommands:\n",
             capsgen::kVersion);
  for (const auto& c : commands()) fmt::print("  {:<10} {}\n", c.name, c.summary);
  fmt::print("\n'capsgen <command> --help' describes a command's options.\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    print_usage();
    return 2;
  }
  const std::string name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    print_usage();
    return 0;
  }
  if (name == "--version") {
    fmt::print("capsgen {}\n", capsgen::kVersion);
    return 0;
  }
  std::vector<std::string> rest(argv + 2, argv + argc);
  for (const auto& c : commands()) {
    if (name != c.name) continue;
    try {
      return c.run(rest);
    } catch (const capsgen::InputError& e) {
      fmt::print(stderr, "capsgen {}: error: {}\n", name, e.what());
      return 2;
    } catch (const std::exception& e) {
      fmt::print(stderr, "capsgen {}: internal error: {}\n", name, e.what());
      return 1;
    }
  }
  fmt::print(stderr, "capsgen: unknown command '{}'\n\n", name);
  print_usage();
  return 2;
}
