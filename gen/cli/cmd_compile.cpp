// capsgen compile: network + preset -> program, memory map and analytic statistics per operation.
#include <fmt/format.h>

#include <filesystem>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "compiler/compiler.hpp"
#include "compiler/executor.hpp"
#include "core/atomic_file.hpp"
#include "core/input_error.hpp"
#include "golden/fixed_model.hpp"
#include "golden/workload.hpp"
#include "cli/engine_dump.hpp"
#include "cli/workload_input.hpp"

namespace capsgen::cli {

int cmd_compile(const std::vector<std::string>& argv) {
  Args args("compile", "--config PRESET.yaml --model NET.yaml [options]",
            "Maps the network onto the accelerator: writes the program of descriptors with the address map\n"
            "(program.json) and the analytic statistics per operation (stats.json: cycles, MACs, array\n"
            "utilization, reads and writes, accumulator residency), and prints a summary. With --check, the\n"
            "program is also run by the functional executor and every tensor compared with the golden model.");
  add_workload_options(args, "which test image of --dataset; a range A-B (every S-th) dumps each image to DIR/image-K");
  args.option("out", "DIR", "directory for program.json and stats.json")
      .option("dump-engine", "DIR",
              "the program for the compute engine (docs/rtl-engine.md): the initial memory image and, per\n"
              "instruction, its engine descriptor and the writes it must make (executor), for\n"
              "tb_blocks engine --program DIR")
      .flag("check", "run the program in the functional executor and compare with the golden model");
  if (!args.parse(argv)) {
    fmt::print("{}", args.help());
    return 0;
  }
  if (!args.positional().empty())
    throw InputError("capsgen compile", 0, 0, args.positional().front(), "unexpected argument");
  const WorkloadInput in =
      load_workload_input(args, "capsgen compile", args.get_opt("dump-engine").has_value(), "a range needs --dump-engine");
  const Workload& w = in.w;
  const IntTensor& input = in.input;
  const isa::Program prog = compile_program(w.cfg, w.net, w.qm);
  const auto stats = analyze_program(w.cfg, prog);

  long long total = 0, macs = 0;
  fmt::print("{} on {} ({}x{} array, {} MHz): {} descriptors, {} elements of address space\n\n", w.net.name, w.cfg.name,
             w.cfg.array.rows, w.cfg.array.cols, w.cfg.clock.target_mhz, prog.instrs.size(), prog.size);
  fmt::print("| operation | cycles | useful MACs | utilization | tile loads | acc entries | D_i B | W_i B | A_i B |\n"
             "|---|---|---|---|---|---|---|---|---|\n");
  for (const auto& s : stats) {
    fmt::print("| {} | {} | {} | {:.3f} | {} | {} | {} | {} | {} |\n", s.name, s.cycles, s.useful_macs,
               s.issued_macs ? double(s.useful_macs) / double(s.issued_macs) : 0.0, s.tile_loads, s.acc_entries,
               s.usage_data, s.usage_weight, s.usage_acc);
    total += s.cycles;
    macs += s.useful_macs;
  }
  fmt::print("\ntotal {} cycles (the engine's cycle model, isa::engine_timing) = {:.1f} inferences/s at {} MHz, array "
             "utilization {:.3f}\n",
             total,
             w.cfg.clock.target_mhz * 1e6 / double(total), w.cfg.clock.target_mhz,
             double(macs) / (double(total) * w.cfg.array.rows * w.cfg.array.cols));
  const long long prog_cycles = program_cycles(w.cfg, prog);
  fmt::print("program {} cycles on the accelerator with the sequencer's descriptor fetches (isa::program_cycles) = {:.1f} "
             "inferences/s\n",
             prog_cycles, w.cfg.clock.target_mhz * 1e6 / double(prog_cycles));

  if (auto dir = args.get_opt("out")) {
    std::error_code ec;
    std::filesystem::create_directories(*dir, ec);
    if (ec) throw InputError(*dir, 0, 0, "--out", "cannot create directory: " + ec.message());
    write_file_atomic(*dir + "/program.json", program_json(prog));
    write_file_atomic(*dir + "/stats.json", stats_json(w.cfg, prog, stats));
    fmt::print("wrote {}/program.json and {}/stats.json\n", *dir, *dir);
  }
  if (auto dir = args.get_opt("dump-engine")) {
    if (in.last == in.first) {
      dump_engine(w, prog, *dir, input, in.input_name, in.label);
    } else {
      for (long long k = in.first; k <= in.last; k += in.step)
        dump_engine(w, prog, fmt::format("{}/image-{}", *dir, k),
                    quantize_input(w.cfg, w.qm, w.net, in.test.images[std::size_t(k)]), fmt::format("{}[{}]", in.test.name, k),
                    in.test.labels[std::size_t(k)]);
    }
  }
  if (args.has("check")) {
    const FixedTrace golden = run_golden(w.cfg, w.net, w.qm, input);
    std::vector<std::int32_t> mem = build_image(prog, w.net, w.qm, input);
    execute_program(w.cfg, prog, mem);
    for (const auto& [name, t] : golden.tensors) {
      const isa::Region* r = prog.region(name);
      if (!r) throw std::logic_error("program has no region for " + name);
      for (std::size_t i = 0; i < t.size(); ++i)
        if (mem[std::size_t(r->base) + i] != t[i]) {
          fmt::print(stderr, "MISMATCH tensor {} index {}: program {}, golden {}\n", name, index_str(t.shape, i),
                     mem[std::size_t(r->base) + i], t[i]);
          return 1;
        }
    }
    fmt::print("check: the program reproduces all {} golden tensors bit for bit\n", golden.tensors.size());
  }
  return 0;
}

}  // namespace capsgen::cli
