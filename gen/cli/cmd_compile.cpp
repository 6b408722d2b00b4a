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
#include "cli/accuracy.hpp"
#include "data/dataset.hpp"
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
void dump_engine(const Workload& w, const isa::Program& prog, const std::string& dir, const IntTensor& input,
                 const std::string& input_name, int label) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw InputError(dir, 0, 0, "--dump-engine", "cannot create directory: " + ec.message());
  std::vector<std::int32_t> mem = build_image(prog, w.net, w.qm, input);
  const FixedTrace golden = run_golden(w.cfg, w.net, w.qm, input);
  write_file_atomic(dir + "/initial.mem", image_bytes(mem));
  const isa::ActTables tables(fx::ActParams::from_config(w.cfg));
  const int rows = w.cfg.array.rows, cols = w.cfg.array.cols, max_len = emit::act_geometry(w.cfg).max_len;
  // "# golden P" is read by the testbench: the golden model's prediction its RTL prediction must equal.
  std::string index = fmt::format("# {} on {}: descriptors for tb_blocks engine --program\n# input {}, label {}\n# golden {}\n",
                                  w.net.name, w.cfg.name, input_name, label, golden.prediction);
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
  fmt::print("wrote {} engine descriptor(s) to {} ({} the engine cannot run yet: {}/index.txt); input {}, label {}, golden "
             "prediction {}\n",
             dumped, dir, skipped, dir, input_name, label, golden.prediction);
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
      .option("dataset", "NAME",
              "input for --dump-engine and --check: test image --index of mnist or fashion (needs --weights;\n"
              "calibration on its training split, as capsgen golden --dataset); default: a synthetic image")
      .option("index", "K|A-B[:S]", "which test image of --dataset; a range A-B (every S-th) dumps each image to DIR/image-K", "0")
      .option("data-dir", "DIR", "where the --dataset files are (default: where bootstrap installs them)")
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
  // The input of --dump-engine and --check: a test image of a data set (with that data set's
  // calibration, the preset's squash format: the RTL's LUTs), or a synthetic one.
  const auto dataset = args.get_opt("dataset");
  if (dataset && *dataset != "mnist" && *dataset != "fashion")
    throw InputError("capsgen compile", 0, 0, "--dataset", fmt::format("expected mnist or fashion, got '{}'", *dataset));
  if (dataset && !spec.weights_path) throw InputError("capsgen compile", 0, 0, "--dataset", "needs --weights");
  if (!dataset && args.has("index")) throw InputError("capsgen compile", 0, 0, "--index", "needs --dataset");
  Workload w;
  Dataset test;
  long long first = 0, last = 0, step = 1;
  FloatTensor input_image;
  std::string input_name = fmt::format("synthetic(seed={})", spec.seed);
  int label = -1;
  if (dataset) {
    DatasetWorkloadSpec ds;
    ds.config_path = spec.config_path;
    ds.model_path = spec.model_path;
    ds.weights_path = *spec.weights_path;
    ds.dataset = *dataset;
    ds.data_dir = args.get_opt("data-dir").value_or("");
    test = load_dataset(*dataset, Split::Test, ds.data_dir);
    std::string is = args.get("index");
    const auto colon = is.find(':');
    const std::string range = is.substr(0, colon);
    const auto dash = range.find('-');
    auto parse = [&](const std::string& t) {
      if (t.empty() || t.size() > 9 || t.find_first_not_of("0123456789") != std::string::npos)
        throw InputError("capsgen compile", 0, 0, "--index", fmt::format("expected K, A-B or A-B:S, got '{}'", is));
      const long long v = std::stoll(t);
      if (v >= (long long)test.images.size())
        throw InputError("capsgen compile", 0, 0, "--index",
                         fmt::format("{} is past the last test image ({})", v, test.images.size() - 1));
      return v;
    };
    first = parse(dash == std::string::npos ? range : range.substr(0, dash));
    last = dash == std::string::npos ? first : parse(range.substr(dash + 1));
    if (colon != std::string::npos) {
      const std::string st = is.substr(colon + 1);
      if (dash == std::string::npos || st.empty() || st.size() > 9 || st.find_first_not_of("0123456789") != std::string::npos ||
          std::stoll(st) < 1)
        throw InputError("capsgen compile", 0, 0, "--index", fmt::format("expected A-B:S with S >= 1, got '{}'", is));
      step = std::stoll(st);
    }
    if (last < first) throw InputError("capsgen compile", 0, 0, "--index", fmt::format("empty range '{}'", is));
    if (last > first && !args.get_opt("dump-engine"))
      throw InputError("capsgen compile", 0, 0, "--index", "a range needs --dump-engine");
    std::string note;
    w = prepare_dataset_workload(ds, &note);  // after the index checks: calibration takes seconds
    input_image = test.images[std::size_t(first)];
    label = test.labels[std::size_t(first)];
    input_name = fmt::format("{}[{}]", test.name, first);
  } else {
    w = prepare_workload(spec);
    input_image = random_input(w.net, spec.seed);
  }
  const IntTensor input = quantize_input(w.cfg, w.qm, w.net, input_image);
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
  if (auto dir = args.get_opt("dump-engine")) {
    if (last == first) {
      dump_engine(w, prog, *dir, input, input_name, label);
    } else {
      for (long long k = first; k <= last; k += step)
        dump_engine(w, prog, fmt::format("{}/image-{}", *dir, k), quantize_input(w.cfg, w.qm, w.net, test.images[std::size_t(k)]),
                    fmt::format("{}[{}]", test.name, k), test.labels[std::size_t(k)]);
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
