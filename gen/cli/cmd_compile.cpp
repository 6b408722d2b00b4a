// capsgen compile: network + preset -> program, memory map and analytic statistics per operation.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "cli/engine_dump.hpp"
#include "cli/stream_dump.hpp"
#include "cli/workload_input.hpp"
#include "compiler/chip_timing.hpp"
#include "compiler/compiler.hpp"
#include "compiler/executor.hpp"
#include "compiler/frame_program.hpp"
#include "compiler/routing_batch_check.hpp"
#include "compiler/stream.hpp"
#include "core/atomic_file.hpp"
#include "core/input_error.hpp"
#include "golden/fixed_model.hpp"
#include "golden/workload.hpp"

namespace capsgen::cli {

namespace {

Args compile_args() {
  Args args("compile", "--config PRESET.yaml --model NET.yaml [options]",
            "Maps the network onto the accelerator: writes the program of descriptors with the address map\n"
            "(program.json) and the analytic statistics per operation (stats.json: cycles, MACs, array\n"
            "utilization, reads and writes, accumulator residency), and prints a summary. With --check, the\n"
            "program is also run by the functional executor and every tensor compared with the golden model.");
  add_workload_options(args, "which test image of --dataset; a range A-B (every S-th) dumps each image to DIR/image-K");
  add_routing_batch_option(args);
  args.option("out", "DIR", "directory for program.json and stats.json (with --stream also stream.json)")
      .option("dump-engine", "DIR",
              "the program for the compute engine (docs/rtl-engine.md): the initial memory image and, per\n"
              "instruction, its engine descriptor and the writes it must make (executor), for\n"
              "tb_blocks engine --program DIR")
      .option("dump-stream", "DIR",
              "the streamed program as the chip runs it (docs/rtl-chip.md): the frame program, the DRAM image\n"
              "before and after, and per DMA store and instruction what the off-chip memory must receive, for\n"
              "tb_chip --program DIR (needs every engine frame encodable: no split reductions)")
      .flag("check", "run the program in the functional executor and compare with the golden model")
      .flag("stream",
            "split every instruction into parts that fit the scratchpad, with the DMA moves between DRAM and\n"
            "the on-chip memories (docs/memory-system.md), and print the parts per instruction; with --check\n"
            "the streamed program also runs on a DRAM image and bounded on-chip memories and must leave the\n"
            "DRAM equal to the flat program's memory")
      .option("frames", "DIR",
              "with --stream: the streamed program as the sequencer's frame program (engine, DMA and PMU\n"
              "frames, docs/memory-system.md section 4): DIR/frames.hex (one 32-bit word per line) and\n"
              "DIR/frames.txt (one line per frame); with --check the decoded frames also run in the frame model");
  return args;
}

// The flat program's statistics per operation, its total cycles and the sequencer's program cycles.
void print_flat_stats(const Workload& w, const isa::Program& prog, const std::vector<OpStats>& stats) {
  long long total = 0, macs = 0;
  fmt::print("{} on {} ({}x{} array, {} MHz): {} descriptors, {} elements of address space\n\n", w.net.name, w.cfg.name,
             w.cfg.array.rows, w.cfg.array.cols, w.cfg.clock.target_mhz, prog.instrs.size(), prog.size);
  // MAC bound: the cycles the array needs at rows x cols useful MACs per cycle.
  const long long pes = (long long)w.cfg.array.rows * w.cfg.array.cols;
  fmt::print("| operation | cycles | useful MACs | utilization | MAC bound | cycles / bound | tile loads | acc entries | D_i B "
             "| W_i B | A_i B |\n"
             "|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const auto& s : stats) {
    const long long bound = (s.useful_macs + pes - 1) / pes;
    fmt::print("| {} | {} | {} | {:.3f} | {} | {} | {} | {} | {} | {} | {} |\n", s.name, s.cycles, s.useful_macs,
               s.issued_macs ? double(s.useful_macs) / double(s.issued_macs) : 0.0, bound,
               bound ? fmt::format("{:.2f}", double(s.cycles) / double(bound)) : std::string("-"), s.tile_loads,
               s.acc_entries, s.usage_data, s.usage_weight, s.usage_acc);
    total += s.cycles;
    macs += s.useful_macs;
  }
  const double inputs = prog.inputs;  // inferences per program (a routing batch's inputs)
  fmt::print(
      "\ntotal {} cycles (the engine's cycle model, isa::engine_timing) = {:.1f} inferences/s at {} MHz, array "
      "utilization {:.3f}\n",
      total, inputs * w.cfg.clock.target_mhz * 1e6 / double(total), w.cfg.clock.target_mhz,
      double(macs) / (double(total) * w.cfg.array.rows * w.cfg.array.cols));
  const long long prog_cycles = program_cycles(w.cfg, prog);
  fmt::print(
      "program {} cycles on the accelerator with the sequencer's descriptor fetches (isa::program_cycles) = {:.1f} "
      "inferences/s\n",
      prog_cycles, inputs * w.cfg.clock.target_mhz * 1e6 / double(prog_cycles));
}

// --out: program.json and stats.json.
void write_program_files(const Args& args, const Workload& w, const isa::Program& prog,
                         const std::vector<OpStats>& stats) {
  if (auto dir = args.get_opt("out")) {
    std::error_code ec;
    std::filesystem::create_directories(*dir, ec);
    if (ec) throw InputError(*dir, 0, 0, "--out", "cannot create directory: " + ec.message());
    write_file_atomic(*dir + "/program.json", program_json(prog));
    write_file_atomic(*dir + "/stats.json", stats_json(w.cfg, prog, stats));
    fmt::print("wrote {}/program.json and {}/stats.json\n", *dir, *dir);
  }
}

// --out (program.json, stats.json), --dump-stream and --dump-engine.
void write_outputs(const Args& args, const WorkloadInput& in, const isa::Program& prog,
                   const std::vector<OpStats>& stats) {
  const Workload& w = in.w;
  const IntTensor& input = in.input;
  write_program_files(args, w, prog, stats);
  if (auto dir = args.get_opt("dump-stream")) {
    if (in.last != in.first) throw InputError("capsgen compile", 0, 0, "--dump-stream", "one image, not a range");
    const StreamDump d = dump_stream(w, prog, *dir, input, in.input_name, in.label);
    fmt::print("wrote the streamed program to {}: {} frames ({} engine, {} DMA, {} PMU), {} words; {} load and {} store beats; "
               "golden prediction {}\n",
               *dir, d.frames, d.engine, d.dma, d.pmu, d.words, d.load_beats, d.store_beats, d.golden);
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
}

// The streamed program's parts per instruction (traffic, each byte once, cycles), its totals and its
// frame program's cycles on the chip; returns the totals as the stream.json document
// (schemas/stream-stats.schema.json) that --out writes.
nlohmann::ordered_json print_streamed(const Workload& w, const isa::Program& prog, const StreamedProgram& streamed,
                                      const FrameProgram& fp) {
  const StreamStats st = stream_stats(prog, streamed);
  fmt::print("\nstreamed through the scratchpad (data {} / weight {} / acc {} / shared {} elements{}, half each per part):\n\n",
             streamed.map.elements[0], streamed.map.elements[1], streamed.map.elements[2], streamed.map.elements[3],
             streamed.map.smp ? "; SMP: acc is a view of the shared memory's 32-bit lanes"
             : streamed.map.has_lanes() ? fmt::format("; HY: acc overflow into the shared memory's {} 32-bit lanes", streamed.map.elements[4])
                                        : std::string());
  fmt::print("| instruction | parts | loads | stores | DRAM read B | each once | DRAM write B | engine cycles | modelled cycles |\n"
             "|---|---|---|---|---|---|---|---|---|\n");
  long long distinct_read = 0;
  for (std::size_t i = 0; i < prog.instrs.size(); ++i) {
    StreamedProgram one;
    one.map = streamed.map;
    for (const Part& p : streamed.parts)
      if (p.instr == i) one.parts.push_back(p);
    const StreamStats s = stream_stats(prog, one);
    const StreamTiming t = stream_timing(w.cfg, prog, one);
    const DistinctBytes once = stream_distinct_bytes(prog, one);
    distinct_read += once.read;
    fmt::print("| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", isa::instr_name(prog.instrs[i]), s.parts, s.loads,
               s.stores, s.dram_read_bytes, once.read, s.dram_write_bytes, t.engine_cycles, t.cycles);
  }
  fmt::print("\ntotal {} parts, {} DMA moves ({} loads kept on chip from the part two before), DRAM {} B read and {} B "
             "written; each instruction reading every byte it needs once: {} B read ({:.2f}x)\n",
             st.parts, st.loads + st.stores, st.kept_loads, st.dram_read_bytes, st.dram_write_bytes, distinct_read,
             distinct_read ? double(st.dram_read_bytes) / double(distinct_read) : 0.0);
  const StreamTiming tm = stream_timing(w.cfg, prog, streamed);
  fmt::print("modelled {} cycles with double buffering at {:.2f} off-chip bytes per cycle ({} engine cycles, {} "
             "of {} parts bound by their moves, {} whose successor loads what they store, {} "
             "read-modify-write loads) = {:.1f} inferences/s at {} MHz\n",
             tm.cycles, offchip_bytes_per_cycle(w.cfg), tm.engine_cycles, tm.dma_bound_parts, st.parts, tm.serialized_parts,
             st.rmw_loads, w.cfg.clock.target_mhz * 1e6 / double(tm.cycles), w.cfg.clock.target_mhz);
  // The chip's timing model, where the chip can run the frame program (no pending engine frame).
  long long chip_cycles = -1;
  if (fp.pending == 0) {
    const dram::DramSpec dram_spec = dram::offchip_dram(w.cfg.offchip.dram);
    const ChipTiming ct = chip_timing(w.cfg, streamed, fp, dram_spec);
    chip_cycles = ct.cycles;
    const ChipCycleClasses& c = ct.classes;
    fmt::print("on the chip with {} (chip_timing): {} cycles = {:.1f} inferences/s; fetch {}, issue {}, engine busy {}, "
               "wait for DMA {}, store waits for the engine {}, DMA busy {}, PMU wait {}, drain {}; DMA waits for the engine {}; "
               "engine writes wait for its reads {} (the engine {} cycles longer)\n",
               dram_spec.name, ct.cycles, w.cfg.clock.target_mhz * 1e6 / double(ct.cycles), c.fetch,
               c.engine + c.dma + c.pmu, c.eng_busy, c.wait_dma, c.wait_engine, c.dma_busy, c.pmu_wait, c.drain, fmt::join(ct.dma_wait, "/"),
               ct.engine_write_waits, ct.engine_late);
  }
  return {{"schema", "capsgen.stream-stats/1"},
          {"network", w.net.name},
          {"preset", w.cfg.name},
          {"parts", st.parts},
          {"loads", st.loads},
          {"stores", st.stores},
          {"dram_read_bytes", st.dram_read_bytes},
          {"dram_write_bytes", st.dram_write_bytes},
          {"distinct_read_bytes", distinct_read},
          {"rmw_loads", st.rmw_loads},
          {"offchip_bytes_per_cycle", offchip_bytes_per_cycle(w.cfg)},
          {"engine_cycles", tm.engine_cycles},
          {"dma_bound_parts", tm.dma_bound_parts},
          {"serialized_parts", tm.serialized_parts},
          {"cycles", tm.cycles},
          {"chip_model_cycles", chip_cycles},
          {"clock_mhz", w.cfg.clock.target_mhz},
          {"inferences_per_second", w.cfg.clock.target_mhz * 1e6 / double(tm.cycles)}};
}

// The frame program of the streamed program.
FrameProgram frame_program(const Args& args, const Workload& w, const isa::Program& prog, const StreamedProgram& streamed) {
  try {
    return build_frame_program(w.cfg, prog, streamed);
  } catch (const StreamError& e) {
    throw InputError(args.get_opt("config").value_or("configs/capsacc-16x16.yaml"), 0, 0, "--stream", e.what());
  }
}

// The frame program's counts; --frames writes it.
void report_frames(const Args& args, const Workload& w, const FrameProgram& frames) {
  fmt::print("frames: {} ({} engine of which {} pending the encoder, {} DMA, {} PMU, 1 end), {} words of 32 bits; {} "
             "parts store before the next part's loads\n",
             frames.frames.size(), frames.engine, frames.pending, frames.dma, frames.pmu, frames.words(),
             frames.serialized);
  if (auto dir = args.get_opt("frames")) {
    std::error_code ec;
    std::filesystem::create_directories(*dir, ec);
    if (ec) throw InputError(*dir, 0, 0, "--frames", "cannot create directory: " + ec.message());
    std::string hex, txt = fmt::format("# {} on {}: {} frames, {} words\n", w.net.name, w.cfg.name, frames.frames.size(),
                                       frames.words());
    for (std::uint32_t x : isa::pack_frames(frames.frames, frames.geometry)) hex += fmt::format("{:08x}\n", x);
    for (const isa::Frame& f : frames.frames) txt += isa::frame_text(f, frames.geometry) + "\n";
    write_file_atomic(*dir + "/frames.hex", hex);
    write_file_atomic(*dir + "/frames.txt", txt);
    fmt::print("wrote {}/frames.hex and {}/frames.txt\n", *dir, *dir);
  }
}

// --check of a routing batch's program (check_routing_batch). Returns the exit status.
int check_batch_program(const Workload& w, const BatchInputs& batch, const isa::Program& prog) {
  std::vector<std::int32_t> mem = build_image(prog, w.net, w.qm, batch.codes);
  execute_program(w.cfg, prog, mem);
  const RoutingBatchCheck ck = check_routing_batch(w, prog, batch.codes, mem);
  if (!ck.mismatch.empty()) {
    fmt::print(stderr, "MISMATCH {}\n", ck.mismatch);
    return 1;
  }
  for (std::size_t k = 0; k < batch.codes.size(); ++k)
    fmt::print("  {}: shared-routing prediction {}{}\n", batch.names[k], ck.shared[k].prediction,
               batch.labels[k] >= 0 ? fmt::format(" (label {})", batch.labels[k]) : "");
  fmt::print(
      "check: the program reproduces {} per-input golden tensors and the {} inputs' class norms of the golden "
      "shared routing bit for bit\n",
      ck.tensors - batch.codes.size(), batch.codes.size());
  return 0;
}

// --check: the flat program against the golden model, then with --stream the streamed program and
// the decoded frame program against the flat program's memory. Returns the exit status.
int check_programs(const Args& args, const Workload& w, const IntTensor& input, const isa::Program& prog,
                   const StreamedProgram& streamed, const FrameProgram& frames) {
  const FixedTrace golden = run_golden(w.cfg, w.net, w.qm, input);
  std::vector<std::int32_t> mem = build_image(prog, w.net, w.qm, input);
  execute_program(w.cfg, prog, mem);
  for (const auto& [name, t] : golden.tensors) {
    const isa::Region* r = prog.region(name);
    if (!r) throw std::logic_error("program has no region for " + name);
    for (std::size_t i = 0; i < t.size(); ++i) {
      const std::int32_t got = mem[std::size_t(r->base + r->offset_of(std::int64_t(i)))];
      if (got != t[i]) {
        fmt::print(stderr, "MISMATCH tensor {} index {}: program {}, golden {}\n", name, index_str(t.shape, i), got,
                   t[i]);
        return 1;
      }
    }
  }
  fmt::print("check: the program reproduces all {} golden tensors bit for bit\n", golden.tensors.size());
  if (args.has("stream")) {
    std::vector<std::int32_t> dram = build_image(prog, w.net, w.qm, input);
    execute_streamed(w.cfg, prog, streamed, dram);
    for (std::size_t a = 0; a < mem.size(); ++a)
      if (dram[a] != mem[a]) {
        const isa::Region* r = nullptr;
        for (const isa::Region& x : prog.regions)
          if (std::int64_t(a) >= x.base && std::int64_t(a) < x.base + x.stored_size()) r = &x;
        fmt::print(stderr, "MISMATCH streamed program: element {} ({} offset {}): streamed {}, flat {}\n", a,
                   r ? r->name : "no region", r ? std::int64_t(a) - r->base : 0, dram[a], mem[a]);
        return 1;
      }
    fmt::print("check: the streamed program leaves all {} elements of DRAM equal to the flat program's memory\n",
               mem.size());
    std::vector<std::int32_t> fdram = build_image(prog, w.net, w.qm, input);
    const FrameCheck ck = run_frame_program(w.cfg, prog, streamed,
                                            isa::unpack_frames(isa::pack_frames(frames.frames, frames.geometry),
                                                               frames.geometry),
                                            fdram);
    for (std::size_t a = 0; a < mem.size(); ++a)
      if (fdram[a] != mem[a]) {
        fmt::print(stderr, "MISMATCH frame program: DRAM element {}: frames {}, flat {}\n", a, fdram[a], mem[a]);
        return 1;
      }
    fmt::print("check: the decoded frame program ({} frames, {} sector sleeps) keeps its dependencies and sector power "
               "rules and leaves DRAM equal to the flat program's memory\n",
               ck.frames, ck.sleeps);
  }
  return 0;
}

// --routing-batch K > 1: the batch's program, its statistics, --out, --dump-engine and --check (the
// streamed program for the chip is per input only).
int compile_routing_batch(const Args& args, const WorkloadInput& in, int routing_batch) {
  for (const char* opt : {"stream", "dump-stream", "frames"})
    if (args.has(opt) || args.get_opt(opt))
      throw InputError("capsgen compile", 0, 0, "--routing-batch",
                       fmt::format("--{} streams a program of one input; a routing batch runs on the engine", opt));
  if (in.last != in.first)
    throw InputError("capsgen compile", 0, 0, "--routing-batch", "needs one --index, not a range");
  const Workload& w = in.w;
  const BatchInputs batch = routing_batch_inputs(in, routing_batch, "capsgen compile");
  const isa::Program prog = compile_program(w.cfg, w.net, w.qm, {routing_batch});
  const auto stats = analyze_program(w.cfg, prog);
  print_flat_stats(w, prog, stats);
  fmt::print("routing batch of {} inputs: {}\n", routing_batch, fmt::join(batch.names, ", "));
  write_program_files(args, w, prog, stats);
  if (auto dir = args.get_opt("dump-engine"))
    dump_engine(w, prog, *dir, batch.codes, fmt::format("{}", fmt::join(batch.names, " ")), batch.labels.back());
  return args.has("check") ? check_batch_program(w, batch, prog) : 0;
}

}  // namespace

int cmd_compile(const std::vector<std::string>& argv) {
  Args args = compile_args();
  if (!args.parse(argv)) {
    fmt::print("{}", args.help());
    return 0;
  }
  if (!args.positional().empty())
    throw InputError("capsgen compile", 0, 0, args.positional().front(), "unexpected argument");
  const WorkloadInput in =
      load_workload_input(args, "capsgen compile", args.get_opt("dump-engine").has_value(), "a range needs --dump-engine");
  const Workload& w = in.w;
  const int routing_batch = routing_batch_option(args);
  if (routing_batch > 1) return compile_routing_batch(args, in, routing_batch);
  const isa::Program prog = compile_program(w.cfg, w.net, w.qm);
  const auto stats = analyze_program(w.cfg, prog);
  print_flat_stats(w, prog, stats);
  write_outputs(args, in, prog, stats);
  StreamedProgram streamed;
  FrameProgram frames;
  if (args.get_opt("frames") && !args.has("stream")) throw InputError("capsgen compile", 0, 0, "--frames", "needs --stream");
  if (args.has("stream")) {
    try {
      streamed = stream_program(w.cfg, prog);
    } catch (const StreamError& e) {
      throw InputError(args.get_opt("config").value_or("configs/capsacc-16x16.yaml"), 0, 0, "--stream", e.what());
    }
    frames = frame_program(args, w, prog, streamed);
    const nlohmann::ordered_json summary = print_streamed(w, prog, streamed, frames);
    if (auto dir = args.get_opt("out")) {
      write_file_atomic(*dir + "/stream.json", summary.dump(2) + "\n");
      fmt::print("wrote {}/stream.json\n", *dir);
    }
    report_frames(args, w, frames);
  }
  return args.has("check") ? check_programs(args, w, in.input, prog, streamed, frames) : 0;
}

}  // namespace capsgen::cli
