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
#include "emit/activation.hpp"
#include "isa/engine.hpp"
#include "isa/gemm_ref.hpp"

namespace capsgen::cli {
namespace {

// Memory image as little-endian int32 words.
std::string image_bytes(const std::vector<std::int32_t>& mem) {
  std::string b(mem.size() * 4, '\0');
  for (std::size_t i = 0; i < mem.size(); ++i) {
    const auto u = static_cast<std::uint32_t>(mem[i]);
    for (int k = 0; k < 4; ++k) b[4 * i + std::size_t(k)] = static_cast<char>((u >> (8 * k)) & 0xFF);
  }
  return b;
}

// --dump-engine DIR: runs the program in the functional executor and writes what the compute engine
// needs to run the whole program and check every step: initial.mem (the memory image before the first
// instruction), and for instruction NN iNN.writes (address value per line, in the order the engine
// writes them: the isa reference functions on the executor's memory before NN) and, when the engine
// can run it, iNN.desc (isa::engine_descriptor_text); index.txt lists "iNN name" or "skip iNN name
// (reason)" per instruction, in program order.
void dump_engine(const Workload& w, const isa::Program& prog, const std::string& dir, std::uint64_t seed) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw InputError(dir, 0, 0, "--dump-engine", "cannot create directory: " + ec.message());
  const IntTensor input = quantize_input(w.cfg, w.qm, w.net, random_input(w.net, seed));
  std::vector<std::int32_t> mem = build_image(prog, w.net, w.qm, input);
  write_file_atomic(dir + "/initial.mem", image_bytes(mem));
  const isa::ActTables tables(fx::ActParams::from_config(w.cfg));
  const int rows = w.cfg.array.rows, cols = w.cfg.array.cols, max_len = emit::act_geometry(w.cfg).max_len;
  std::string index = fmt::format("# {} on {}: descriptors for tb_blocks engine --program\n", w.net.name, w.cfg.name);
  int dumped = 0, skipped = 0;
  auto visit = [&](std::size_t i) {
    const isa::Instr& in = prog.instrs[i];
    const std::string stem = fmt::format("i{:02}", i), name = isa::instr_name(in);
    std::string writes;
    const isa::ReadFn read = [&](std::int64_t a) { return std::int64_t(mem.at(std::size_t(a))); };
    const isa::WriteFn write = [&](std::int64_t a, std::int64_t v) { writes += fmt::format("{} {}\n", a, v); };
    std::string why;
    isa::EngineDescriptor d;
    try {
      if (const auto* g = std::get_if<isa::Gemm>(&in)) {
        isa::run_gemm_reference(*g, {rows, cols, w.cfg.widths.psum, w.cfg.widths.act}, read, write);
        d = isa::encode_engine(*g, rows, cols, w.cfg.accumulator.depth);
      } else if (const auto* a = std::get_if<isa::Activate>(&in)) {
        isa::run_activate_reference(*a, tables, read, write);
        d = isa::encode_activate(*a, tables.params.sq_norm_shift, max_len);
      } else if (const auto* f = std::get_if<isa::Fill>(&in)) {
        isa::run_fill_reference(*f, write);
        d = isa::encode_fill(*f, w.cfg.widths.act);
      }
    } catch (const std::invalid_argument& e) {
      why = e.what();
    }
    write_file_atomic(dir + "/" + stem + ".writes", writes);
    if (why.empty()) {
      write_file_atomic(dir + "/" + stem + ".desc", fmt::format("# {} ({})\n", name, w.cfg.name) + isa::engine_descriptor_text(d));
      index += fmt::format("{} {}\n", stem, name);
      ++dumped;
    } else {
      index += fmt::format("skip {} {} ({})\n", stem, name, why);
      ++skipped;
    }
  };
  // State before instruction 0, then after each instruction = before the next one.
  if (!prog.instrs.empty()) visit(0);
  execute_program(w.cfg, prog, mem, [&](std::size_t i) {
    if (i + 1 < prog.instrs.size()) visit(i + 1);
  });
  write_file_atomic(dir + "/index.txt", index);
  fmt::print("wrote {} engine descriptor(s) to {} ({} the engine cannot run yet: {}/index.txt)\n", dumped, dir, skipped, dir);
}

}  // namespace

int cmd_compile(const std::vector<std::string>& argv) {
  Args args("compile", "--config PRESET.yaml --model NET.yaml [options]",
            "Maps the network onto the accelerator: writes the program of descriptors with the address map\n"
            "(program.json) and the analytic statistics per operation (stats.json: cycles, MACs, array\n"
            "utilization, reads and writes, accumulator residency), and prints a summary. With --check, the\n"
            "program is also run by the functional executor and every tensor compared with the golden model.");
  args.option("config", "FILE", "accelerator preset", "configs/capsacc-16x16.yaml")
      .option("model", "FILE", "network description", "models/capsnet-mnist.yaml")
      .option("weights", "FILE", "float weights (.npz); seeded random weights when absent")
      .option("seed", "N", "seed of the random weights and the synthetic input", "1")
      .option("out", "DIR", "directory for program.json and stats.json")
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
  WorkloadSpec spec;
  spec.config_path = args.get("config");
  spec.model_path = args.get("model");
  spec.weights_path = args.get_opt("weights");
  spec.seed = std::uint64_t(args.get_int("seed", 0, (1LL << 62)));
  spec.calib_count = 2;
  const Workload w = prepare_workload(spec);
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
  fmt::print("\ntotal {} cycles (cycle model v0) = {:.1f} inferences/s at {} MHz, array utilization {:.3f}\n", total,
             w.cfg.clock.target_mhz * 1e6 / double(total), w.cfg.clock.target_mhz,
             double(macs) / (double(total) * w.cfg.array.rows * w.cfg.array.cols));

  if (auto dir = args.get_opt("out")) {
    std::error_code ec;
    std::filesystem::create_directories(*dir, ec);
    if (ec) throw InputError(*dir, 0, 0, "--out", "cannot create directory: " + ec.message());
    write_file_atomic(*dir + "/program.json", program_json(prog));
    write_file_atomic(*dir + "/stats.json", stats_json(w.cfg, prog, stats));
    fmt::print("wrote {}/program.json and {}/stats.json\n", *dir, *dir);
  }
  if (auto dir = args.get_opt("dump-engine")) dump_engine(w, prog, *dir, spec.seed);
  if (args.has("check")) {
    const IntTensor input = quantize_input(w.cfg, w.qm, w.net, random_input(w.net, spec.seed));
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
