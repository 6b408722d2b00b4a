// capsgen validate: load and check presets, network descriptions and weight files.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "config/accel_config.hpp"
#include "core/input_error.hpp"
#include "emit/chip.hpp"
#include "emit/memsys.hpp"
#include "model/network.hpp"
#include "model/network_limits.hpp"
#include "weights/weight_set.hpp"

namespace capsgen::cli {

int cmd_validate(const std::vector<std::string>& argv) {
  Args args("validate", "[--config PRESET.yaml] [--model NET.yaml [--weights W.npz]]",
            "Loads each given file, checks every field, relation and shape, and prints a summary.\n"
            "Exit status 0 when everything is valid, 2 with an error naming file, line and field otherwise.");
  args.option("config", "FILE", "accelerator preset (configs/*.yaml)")
      .option("model", "FILE", "network description (models/*.yaml)")
      .option("weights", "FILE", "float weights (.npz) to check against --model");
  if (!args.parse(argv)) {
    fmt::print("{}", args.help());
    return 0;
  }
  if (!args.positional().empty())
    throw InputError("capsgen validate", 0, 0, args.positional().front(), "unexpected argument");
  if (!args.has("config") && !args.has("model"))
    throw InputError("capsgen validate", 0, 0, "--config/--model", "give at least one file to validate");
  if (args.has("weights") && !args.has("model"))
    throw InputError("capsgen validate", 0, 0, "--weights", "needs --model to know the expected shapes");

  if (auto path = args.get_opt("config")) {
    const AccelConfig c = load_accel_config(*path);
    fmt::print("{}: preset '{}' is valid: {}x{} array, data/weight/psum/act {}/{}/{}/{} bits, scratchpad {}{}, {} MHz\n",
               *path, c.name, c.array.rows, c.array.cols, c.widths.data, c.widths.weight, c.widths.psum, c.widths.act,
               to_string(c.scratchpad.organization), c.scratchpad.power_gating ? " with power gating" : "",
               c.clock.target_mhz);
    // Valid presets that generate can build only in part: said here, not only by generate.
    if (const std::string why = emit::memsys_unsupported_reason(c); !why.empty())
      fmt::print("{}: note: no capsgen_memsys and no capsgen_chip for this preset ({}); generate writes the blocks only\n",
                 *path, why);
    else if (const std::string chip = emit::chip_unsupported_reason(c); !chip.empty())
      fmt::print("{}: note: no capsgen_chip for this preset ({}); generate writes the blocks and the memory system only\n",
                 *path, chip);
  }
  if (auto path = args.get_opt("model")) {
    const Network n = load_network(*path);
    // Capsule networks are for golden/compile/sim: everything those rely on is checked here. CNNs
    // (max_pool, avg_pool, fc, grouped conv2d) are for the analytic tools only.
    const bool capsnet = std::all_of(n.layers.begin(), n.layers.end(), [](const Layer& l) { return is_capsnet_layer(l); });
    if (capsnet) check_runnable_network(n, "golden, compile and sim");
    fmt::print("{}: network '{}' is valid: input {}{}\n", *path, n.name, n.input.str(),
               capsnet ? "" : " (for capsgen dse dram only: golden, compile and sim run conv2d, primary_caps and class_caps)");
    for (const Layer& L : n.layers)
      fmt::print("  {:<12} {:<13} {} -> {}{}\n", L.name, to_string(L.kind), L.in.str(), L.out.str(),
                 L.inputs.empty() ? "" : fmt::format("  (inputs: {})", fmt::join(L.inputs, ", ")));
    if (auto wpath = args.get_opt("weights")) {
      const WeightSet w = load_weights(*wpath, n);
      std::size_t params = 0;
      for (const auto& spec : expected_weights(n)) params += shape_size(spec.shape);
      fmt::print("{}: weights match '{}' ({} parameters)\n", *wpath, n.name, params);
      for (const auto& key : unused_weights(n, w)) fmt::print("  note: '{}' is not used by the network\n", key);
    }
  }
  return 0;
}

}  // namespace capsgen::cli
