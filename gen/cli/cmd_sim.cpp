// capsgen sim: one whole inference on the generated RTL, checked bit for bit, with a report.
//   1. generates the preset's RTL into WORK/rtl (kept when unchanged, so the model is not rebuilt),
//   2. builds the accelerator's Verilator model (capsgen_accel: program sequencer + compute engine) and
//      its testbench through CMake (tb/, tb_accel),
//   3. compiles the network and dumps its engine program (cli/engine_dump.hpp) into WORK/program,
//   4. runs it on the RTL from one start pulse: the sequencer fetches the packed program (program.hex)
//      and the engine runs every descriptor on one memory (tb/accel_tb.cpp: every descriptor's writes
//      compared with the functional executor's, which reproduces the golden model's tensors bit for bit),
//   5. writes the report (Markdown and JSON): pass/fail, measured and modelled cycles, stalls, port
//      activity per operation, totals, inferences/s at the preset's clock, array utilization, and with
//      --trace an FST and a GTKWave save file with the signals grouped.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "cli/args.hpp"
#include "cli/chip_sim.hpp"
#include "cli/commands.hpp"
#include "cli/engine_dump.hpp"
#include "cli/workload_input.hpp"
#include "compiler/compiler.hpp"
#include "core/atomic_file.hpp"
#include "core/input_error.hpp"
#include "core/shell.hpp"
#include "core/summary_json.hpp"
#include "emit/chip.hpp"
#include "emit/generate.hpp"
#include "emit/memsys.hpp"
#include "emit/sequencer.hpp"
#include "sim/model_build.hpp"
#include "sim/results.hpp"
#include "sim/run.hpp"

namespace capsgen::cli {
namespace {

namespace fs = std::filesystem;

// --fault flip-pe-bit: a deliberately broken RTL for regression runners (capsgen regress, docs/regress.md).
// One bit of the partial sum entering one PE (row min(1, rows-1), column min(1, cols-1)) is flipped in
// every cycle: bit data + weight - 6 (clamped to the psum width), high enough to survive the layers'
// output shifts, so that column's results come out wrong. Returns the mutated array source; throws
// std::logic_error when the instance or its psum_i connection is not found.
std::string flip_pe_bit(const std::string& array_v, const AccelConfig& cfg) {
  const int r = std::min(1, cfg.array.rows - 1), c = std::min(1, cfg.array.cols - 1);
  const int P = cfg.widths.psum;
  const int bit = std::clamp(cfg.widths.data + cfg.widths.weight - 6, 0, P - 1);
  const std::size_t inst = array_v.find(fmt::format(" u_pe_r{}_c{} (", r, c));
  const std::size_t port = inst == std::string::npos ? inst : array_v.find(".psum_i(", inst);
  const std::size_t end = port == std::string::npos ? port : array_v.find("),\n", port);
  if (end == std::string::npos) throw std::logic_error(fmt::format("flip-pe-bit: no psum_i of u_pe_r{}_c{}", r, c));
  const std::size_t open = port + std::string(".psum_i(").size();
  std::string out = array_v;
  out.replace(open, end - open,
              fmt::format("({}) ^ {}'d{} /* capsgen sim --fault flip-pe-bit */", array_v.substr(open, end - open), P,
                          1ULL << bit));
  return out;
}

// --fault ignore-wait-dma: the frame sequencer issues an engine frame without waiting for the DMA
// frames its wait_dma names, so the engine may read operands before they are loaded (or overwrite
// results before they are stored): a broken dependency the chip's checks must catch.
std::string ignore_wait_dma(const std::string& seq_v) {
  const std::string cond = " & (dma_outstanding_q <= frame_wait_dma)";
  const std::size_t at = seq_v.find(cond);
  if (at == std::string::npos) throw std::logic_error("ignore-wait-dma: no wait_dma condition in capsgen_frame_seq");
  std::string out = seq_v;
  out.replace(at, cond.size(), " /* capsgen sim --fault ignore-wait-dma */");
  return out;
}

// The RTL files of `design`, with --fault applied.
std::vector<emit::OutputFile> rtl_files(const emit::Design& design, const AccelConfig& cfg, const std::string& fault) {
  std::vector<emit::OutputFile> files = design.files();
  if (fault == "flip-pe-bit")
    for (emit::OutputFile& f : files)
      if (f.name == "capsgen_systolic_array.v") f.contents = flip_pe_bit(f.contents, cfg);
  if (fault == "ignore-wait-dma")
    for (emit::OutputFile& f : files)
      if (f.name == "capsgen_frame_seq.v") f.contents = ignore_wait_dma(f.contents);
  return files;
}

struct OpResult {
  std::string stem, name, kind;
  bool ran = false, pass = false;
  std::string skip_reason;
  sim::AccelDescriptor measured;          // from the testbench's results (zero when it did not run)
  OpStats model;                          // the compiler's statistics of the instruction
  int init_codes = 0;                     // psum codes per init read: cols (per-column bias) or 1 (per output)
};

// The options of capsgen sim (with the workload's, cli/workload_input.hpp).
Args sim_options() {
  Args args("sim", "--config PRESET.yaml --model NET.yaml [options]",
            "Runs one whole inference on the generated RTL: generates the preset's RTL (reused when unchanged),\n"
            "builds the accelerator's Verilator model (program sequencer + compute engine) through CMake,\n"
            "compiles the network into a packed descriptor program and runs it on the RTL from one start pulse:\n"
            "the sequencer fetches each descriptor, the engine computes it; every operation's writes are compared\n"
            "bit for bit with the functional executor (itself bit-exact with the golden model), and the RTL's\n"
            "class prediction with the golden model's. Prints and writes the report (Markdown and JSON):\n"
            "pass/fail, measured and modelled cycles, stall cycles and port activity per operation, total\n"
            "cycles of the program, inferences/s at the preset's clock, array utilization. Exit status 1 on any mismatch (the report names operation, tensor, index,\n"
            "both values and the cycle).");
  add_workload_options(args, "which test image of --dataset");
  add_routing_batch_option(args);
  args.option("work", "DIR", "work directory (RTL, model build, program, logs); default build/sim/<preset name>")
      .option("report", "FILE", "Markdown report (default WORK/report.md)")
      .option("json", "FILE", "JSON report (default WORK/report.json)")
      .option("trace", "FILE", "write an FST of the whole run, in real time at the preset's clock, and FILE's .gtkw\n"
              "(GTKWave, signals grouped, opening on the first operation)")
      .option("rtl", "DIR",
              "simulate this RTL directory as it is (e.g. hand-modified) instead of generating WORK/rtl; it must\n"
              "come from the same preset (its config.json is checked)")
      .option("memory", "MODEL",
              "where the network lives: 'ideal' (capsgen_accel: sequencer + engine on one memory that answers in a\n"
              "cycle) or 'dram' (capsgen_chip: the streamed program's frames run the engine on the SEP, HY or SMP scratchpads,\n"
              "the DMA moves every operand and result between them and an off-chip DDR3 model, the PMUs gate the\n"
              "sectors; docs/rtl-chip.md)", "ideal")
      .option("fetch", "MODEL", "program memory behind the sequencer's fetch port: 'latency1' (a word per cycle, 1-cycle\n"
              "latency) or 'random' (1-8 cycles of latency per word and random back-pressure, seeded by --seed; with\n"
              "--memory dram also random back-pressure and gaps on every off-chip channel)", "latency1")
      .option("jobs", "N", "parallel compile jobs for the model build", "2")
      .flag("coverage", "build the model with Verilator line and toggle coverage (its own build directory) and write\n"
            "the run's counters to WORK/coverage.dat (verilator_coverage format)")
      .option("activity", "FILE", "--memory dram: write the run's switching activity (toggles per register and port bit,\n"
              "capsgen.activity/1) to FILE for capsgen synth --activity; implies --coverage (docs/energy.md)")
      .option("tech", "FILE", "--memory dram: SRAM technology of the energy report (configs/tech/*.yaml)",
              std::string(CAPSGEN_SOURCE_DIR) + "/configs/tech/sram-cacti7-180nm.yaml")
      .option("datapath-energy", "FILE", "--memory dram: the datapath energy of the report (capsgen synth --activity's\n"
              "energy.json); default bench/energy/<preset>-<network>.json when it exists, else an estimate per MAC")
      .option("build", "DIR", "use the tb_accel model already built in DIR (by --build-only or an earlier run's\n"
              "WORK/build-accel*): it is neither configured nor rebuilt, and its RTL is simulated (so parallel runs\n"
              "of one preset share one model; capsgen regress)")
      .flag("build-only", "generate the RTL and build the model, then stop (no program, no run)")
      .option("fault", "NAME", "simulate a deliberately broken RTL: 'flip-pe-bit' flips one bit of the partial sum\n"
              "entering one PE (row 1, column 1) in every cycle (WORK/rtl-flip-pe-bit; tests of the checkers);\n"
              "'ignore-wait-dma' (--memory dram) lets the frame sequencer start an engine frame before the DMA frames\n"
              "it waits for have finished")
      .option("source-dir", "DIR", "the capsgen source tree (for tb/)", CAPSGEN_SOURCE_DIR)
      .option("model-cache", "DIR", "build the Verilator model in DIR/<testbench>-<key>, shared by every run whose RTL,\n"
              "testbench sources, options and tools are the same (the key hashes all four); WORK/build-* then links to\n"
              "it. Default: $CAPSGEN_MODEL_CACHE, or none (the model is built in WORK)")
      .option("model-opt", "LEVEL", "C++ optimization of the testbench and the model's evaluation code: -O1, -O2, -O3 or -Os\n"
              "(-O1 compiles the testbench sources faster; the generated model code builds and runs about the same).\n"
              "Default: $CAPSGEN_MODEL_OPT, or -O3");
  return args;
}

// What one capsgen sim run is asked to do: the command line's options, checked as far as they can be
// without the workload (sim_request).
struct SimRequest {
  fs::path source_dir;
  int jobs = 0;
  std::string fetch, fault, model_opt, seed, config;
  bool chip = false;      // --memory dram: capsgen_chip
  std::string tb_target;  // the testbench: tb_chip or tb_accel
  bool coverage = false, build_only = false;
  int routing_batch = 1;                                 // --routing-batch (--memory ideal)
  std::optional<std::string> activity, datapath_energy;  // --memory dram
  std::string tech;
  std::string model_cache;  // --model-cache or $CAPSGEN_MODEL_CACHE; "" for none
  std::optional<std::string> build, rtl, trace, work, report, json, weights;
};

// A --build directory holds a built model of the testbench, with tracing and coverage when they are asked for.
void check_given_build(const SimRequest& r) {
  const fs::path b = *r.build;
  if (!fs::exists(b / r.tb_target) || !fs::exists(b / "CMakeCache.txt"))
    throw InputError(b.string(), 0, 0, "--build", "holds no built " + r.tb_target + " (build it with capsgen sim --build-only)");
  const fs::path cache = b / "CMakeCache.txt";
  if (r.trace && sim::cmake_cache_value(cache, "CAPSGEN_TB_TRACE") != "ON")
    throw InputError(cache.string(), 0, 0, "--trace", "this model was built without tracing (CAPSGEN_TB_TRACE)");
  if (r.coverage && sim::cmake_cache_value(cache, "CAPSGEN_TB_COVERAGE") != "ON")
    throw InputError(cache.string(), 0, 0, "--coverage", "this model was built without coverage (CAPSGEN_TB_COVERAGE)");
}

// The model's optimization level: --model-opt, else $CAPSGEN_MODEL_OPT, else -O3; checked.
std::string model_opt(const Args& args) {
  const char* opt_env = std::getenv("CAPSGEN_MODEL_OPT");
  const std::optional<std::string> given = args.get_opt("model-opt");
  const std::string opt = given.value_or(opt_env && *opt_env ? opt_env : "-O3");
  if (opt != "-O1" && opt != "-O2" && opt != "-O3" && opt != "-Os")
    throw InputError(given ? "capsgen sim" : "$CAPSGEN_MODEL_OPT", 0, 0, "--model-opt",
                     fmt::format("expected -O1, -O2, -O3 or -Os, got '{}'", opt));
  return opt;
}

// Reads the options and checks them, in the order their errors are reported.
SimRequest sim_request(const Args& args) {
  if (!args.positional().empty()) throw InputError("capsgen sim", 0, 0, args.positional().front(), "unexpected argument");
  SimRequest r;
  r.source_dir = args.get("source-dir");
  if (!fs::exists(r.source_dir / "tb" / "CMakeLists.txt"))
    throw InputError("capsgen sim", 0, 0, "--source-dir",
                     fmt::format("'{}' holds no tb/CMakeLists.txt", r.source_dir.string()));
  r.jobs = static_cast<int>(args.get_int("jobs", 1, 256));
  r.fetch = args.get("fetch");
  r.activity = args.get_opt("activity");
  r.coverage = args.has("coverage") || r.activity.has_value();
  r.build_only = args.has("build-only");
  r.tech = args.get("tech");
  r.datapath_energy = args.get_opt("datapath-energy");
  if (!fs::exists(r.tech)) throw InputError(r.tech, 0, 0, "--tech", "technology file not found");
  if (r.datapath_energy && !fs::exists(*r.datapath_energy))
    throw InputError(*r.datapath_energy, 0, 0, "--datapath-energy", "file not found");
  r.build = args.get_opt("build");
  r.rtl = args.get_opt("rtl");
  r.trace = args.get_opt("trace");
  r.fault = args.get_opt("fault").value_or("");
  const std::string memory = args.get("memory");
  if (memory != "ideal" && memory != "dram")
    throw InputError("capsgen sim", 0, 0, "--memory", fmt::format("expected 'ideal' or 'dram', got '{}'", memory));
  r.chip = memory == "dram";
  if (!r.chip && (r.activity || r.datapath_energy))
    throw InputError("capsgen sim", 0, 0, r.activity ? "--activity" : "--datapath-energy", "needs --memory dram");
  r.tb_target = r.chip ? "tb_chip" : "tb_accel";
  r.routing_batch = routing_batch_option(args);
  if (r.chip && r.routing_batch > 1)
    throw InputError("capsgen sim", 0, 0, "--routing-batch",
                     "runs on the accelerator with --memory ideal; the chip streams programs of one input");
  if (!r.fault.empty() && r.fault != "flip-pe-bit" && !(r.chip && r.fault == "ignore-wait-dma"))
    throw InputError("capsgen sim", 0, 0, "--fault",
                     fmt::format("expected 'flip-pe-bit'{}, got '{}'", r.chip ? " or 'ignore-wait-dma'" : "", r.fault));
  if (!r.fault.empty() && (r.rtl || r.build))
    throw InputError("capsgen sim", 0, 0, "--fault", "applies to the generated RTL: not with --rtl or --build");
  if (r.build && r.build_only) throw InputError("capsgen sim", 0, 0, "--build-only", "not with --build");
  if (r.build) check_given_build(r);
  if (r.fetch != "latency1" && r.fetch != "random")
    throw InputError("capsgen sim", 0, 0, "--fetch", fmt::format("expected 'latency1' or 'random', got '{}'", r.fetch));
  r.model_opt = model_opt(args);
  const char* cache_env = std::getenv("CAPSGEN_MODEL_CACHE");
  r.model_cache = args.get_opt("model-cache").value_or(cache_env ? cache_env : "");
  r.seed = args.get("seed");
  r.config = args.get("config");
  r.work = args.get_opt("work");
  r.report = args.get_opt("report");
  r.json = args.get_opt("json");
  r.weights = args.get_opt("weights");
  return r;
}

// Where a run writes: its work directory and its two reports.
struct SimPaths {
  fs::path work, report_md, report_json;
};

// The run's paths for preset `cfg` (the work directory created), once the preset is known to have the
// asked memory model.
SimPaths sim_paths(const SimRequest& r, const AccelConfig& cfg) {
  if (r.chip && !emit::chip_unsupported_reason(cfg).empty())
    throw InputError(r.config, 0, 0, "--memory dram", "no capsgen_chip for this preset: " + emit::chip_unsupported_reason(cfg));
  SimPaths p;
  p.work = r.work.value_or("build/sim/" + cfg.name + (r.chip ? "-dram" : ""));
  p.report_md = r.report.value_or((p.work / "report.md").string());
  p.report_json = r.json.value_or((p.work / "report.json").string());
  std::error_code ec;
  fs::create_directories(p.work, ec);
  if (ec) throw InputError(p.work.string(), 0, 0, "--work", "cannot create directory: " + ec.message());
  return p;
}

// Step 1: the RTL directory to simulate. A given one (--rtl, or the one a --build model was built from)
// is checked to be of this preset; otherwise the preset's RTL (with --fault applied) is generated into
// WORK/rtl[-FAULT], or kept there when unchanged so that its model is not rebuilt.
fs::path prepare_rtl(const SimRequest& r, const AccelConfig& cfg, const fs::path& work) {
  const emit::Design design = emit::build_design(cfg);
  std::optional<std::string> given_rtl = r.rtl;
  if (r.build && !given_rtl) {  // the RTL the model was built from
    given_rtl = sim::cmake_cache_value(fs::path(*r.build) / "CMakeCache.txt", "CAPSGEN_RTL_DIR");
    if (given_rtl->empty())
      throw InputError((fs::path(*r.build) / "CMakeCache.txt").string(), 0, 0, "--build", "no CAPSGEN_RTL_DIR in the cache");
  }
  const fs::path rtl = given_rtl ? fs::path(*given_rtl) : work / (r.fault.empty() ? "rtl" : "rtl-" + r.fault);
  if (given_rtl) {
    // A given RTL must be of this preset: its config.json (sizes, widths) equals the generator's.
    const fs::path given_summary = rtl / emit::kConfigSummaryName;
    const auto summary = std::find_if(design.files().begin(), design.files().end(),
                                      [](const emit::OutputFile& f) { return f.name == emit::kConfigSummaryName; });
    if (!fs::exists(given_summary))
      throw InputError(given_summary.string(), 0, 0, "--rtl",
                       fmt::format("missing: not the RTL of preset {} from this capsgen version", cfg.name));
    if (summary == design.files().end() ||
        read_summary(given_summary, "--rtl") != nlohmann::json::parse(summary->contents))
      throw InputError(given_summary.string(), 0, 0, "--rtl",
                       fmt::format("not the RTL of preset {} (its config.json differs)", cfg.name));
    fmt::print("sim: RTL of {} in {} (given)\n", cfg.name, rtl.string());
    return rtl;
  }
  const std::vector<emit::OutputFile> files = rtl_files(design, cfg, r.fault);
  const bool rtl_reused = sim::rtl_up_to_date(files, rtl);
  if (!rtl_reused) {
    emit::generate_rtl(cfg, rtl);
    if (!r.fault.empty())
      for (const emit::OutputFile& f : files) write_file_atomic((rtl / f.name).string(), f.contents);
  }
  fmt::print("sim: RTL of {} in {} ({}{})\n", cfg.name, rtl.string(), rtl_reused ? "unchanged, reused" : "generated",
             r.fault.empty() ? "" : ", with fault " + r.fault);
  return rtl;
}

// The testbench's Verilator model: where it is built, and how long building (or checking) it took.
struct SimModel {
  fs::path dir;
  double seconds = 0;
};

// The directory to build `spec` in: WORK/build-<kind>[-trace][-cov][-FAULT], or with --model-cache the
// shared model's directory, which that WORK directory then links to (capsgen regress runs --build
// WORK/build-...; a private build left there by a run without the cache is replaced by the link).
fs::path model_build_dir(const SimRequest& r, const sim::ModelSpec& spec, const fs::path& work) {
  const fs::path own = work / (std::string(r.chip ? "build-chip" : "build-accel") + (r.trace ? "-trace" : "") +
                               (r.coverage ? "-cov" : "") + (r.fault.empty() ? "" : "-" + r.fault));
  if (r.model_cache.empty()) return own;
  const fs::path dir = sim::cached_model_dir(r.model_cache, spec, sim::model_key(spec, sim::tool_versions()));
  std::error_code lec;
  fs::remove_all(own, lec);
  fs::create_directory_symlink(fs::absolute(dir), own, lec);
  if (lec) throw InputError(own.string(), 0, 0, "--model-cache", "cannot link the shared model: " + lec.message());
  return dir;
}

// Step 2: the testbench's model (sim/model_build.hpp), keyed on the RTL, the testbench sources, the
// options and the tools: the --build one as it is, or built (reused when its key is unchanged) in WORK
// or in the model cache.
SimModel build_or_reuse_model(const SimRequest& r, const fs::path& work, const fs::path& rtl) {
  if (r.build) {
    fmt::print("sim: using the model built in {}\n", *r.build);
    return {*r.build, 0};
  }
  sim::ModelSpec spec;
  spec.testbench = r.tb_target;
  spec.trace = r.trace.has_value();
  spec.coverage = r.coverage;
  spec.opt = r.model_opt;
  spec.source_dir = fs::absolute(r.source_dir);
  spec.rtl = sim::read_rtl_dir(rtl);
  const fs::path dir = model_build_dir(r, spec, work);
  fmt::print("sim: {} model in {} (a new model takes minutes to build; log {})\n", r.tb_target, dir.string(),
             (work / "build.log").string());
  const sim::BuiltModel m = sim::build_model(spec, dir, r.jobs, work);
  fmt::print("sim: model {} {} ({:.1f} s)\n", m.key, m.reused ? "reused" : "built", m.seconds);
  return {m.dir, m.seconds};
}

// The energy report's inputs (--memory dram).
EnergyOptions energy_options(const SimRequest& r) {
  EnergyOptions e;
  e.tech = r.tech;
  if (r.datapath_energy) e.datapath = *r.datapath_energy;
  e.stored_dir = r.source_dir / "bench" / "energy";
  return e;
}

// What run_chip_sim (cli/chip_sim.hpp) runs for --memory dram.
ChipSimRun chip_sim_run(const SimRequest& r, const SimPaths& p, const fs::path& rtl, const SimModel& model) {
  ChipSimRun c;
  c.work = p.work;
  c.rtl = rtl;
  c.build = model.dir;
  c.report_md = p.report_md;
  c.report_json = p.report_json;
  c.trace = r.trace;
  c.stress = r.fetch == "random";
  c.coverage = r.coverage;
  c.seed = r.seed;
  c.fault = r.fault;
  c.weights = r.weights.value_or("");
  c.build_s = model.seconds;
  c.activity = r.activity;
  c.energy = energy_options(r);
  return c;
}

// One run of tb_accel: the program it ran, where its log and results are, and how it ended.
struct AccelRun {
  isa::Program prog;
  BatchInputs batch;  // the program's inputs (one, or a routing batch)
  fs::path program, log, results, coverage_dat;
  std::uint64_t period_ps = 0;
  int rc = 0;
  double seconds = 0;
};

// Steps 3 and 4: compiles the network, dumps its engine program into WORK/program and runs it on tb_accel
// of `build` (simulating `rtl`), with its output in WORK/sim.log and its results document in WORK/results.json.
AccelRun run_accel_sim(const SimRequest& r, const WorkloadInput& in, const fs::path& work, const fs::path& rtl,
                       const fs::path& build) {
  const Workload& w = in.w;
  AccelRun run;
  run.prog = compile_program(w.cfg, w.net, w.qm, {r.routing_batch});
  run.batch = routing_batch_inputs(in, r.routing_batch, "capsgen sim");
  run.program = work / "program";
  std::error_code ec;
  fs::remove_all(run.program, ec);
  dump_engine(w, run.prog, run.program.string(), run.batch.codes, fmt::format("{}", fmt::join(run.batch.names, " ")),
              run.batch.labels.back());

  run.log = work / "sim.log";
  run.results = work / "results.json";
  fs::remove(run.results, ec);
  std::string cmd = fmt::format("{} --rtl {} --program {} --results {}", quote((build / "tb_accel").string()),
                                quote(fs::absolute(rtl).string()), quote(run.program.string()), quote(run.results.string()));
  run.period_ps = sim::clock_period_ps(w.cfg.clock.target_mhz);
  cmd += fmt::format(" --clock-period-ps {}", run.period_ps);
  if (r.trace) cmd += " --trace " + quote(*r.trace);
  if (r.fetch == "random") cmd += " --mode fetch-random --seed " + quote(r.seed);
  run.coverage_dat = work / "coverage.dat";
  if (r.coverage) {
    fs::remove(run.coverage_dat, ec);
    cmd += " --coverage-out " + quote(run.coverage_dat.string());
  }
  fmt::print("sim: running the program of {} descriptors on the RTL ({})\n", run.prog.instrs.size(), run.log.string());
  const auto t_run = std::chrono::steady_clock::now();
  run.rc = sim::run_logged(cmd, run.log);
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_run).count();
  return run;
}

// How the testbench names an operation (its results' labels and its problem lines).
std::string op_label(const OpResult& r) { return r.name + " (" + r.stem + ")"; }

// The program's operations, from its index.txt (one line per instruction, "skip STEM NAME REASON" for
// those the executor skips), with the compiler's statistics of each instruction.
std::vector<OpResult> read_program_index(const fs::path& program, const isa::Program& prog, const AccelConfig& cfg) {
  std::vector<OpResult> ops;
  std::istringstream idx(slurp(program / "index.txt"));
  std::size_t i = 0;
  for (std::string line; std::getline(idx, line);) {
    if (line.empty() || line[0] == '#') continue;
    OpResult r;
    std::istringstream ls(line);
    ls >> r.stem;
    if (r.stem == "skip") {
      ls >> r.stem >> r.name;
      std::getline(ls, r.skip_reason);
    } else {
      ls >> r.name;
    }
    const isa::Instr& instr = prog.instrs.at(i++);
    r.kind = std::holds_alternative<isa::Gemm>(instr) ? "gemm" : std::holds_alternative<isa::Activate>(instr) ? "activate" : "fill";
    r.model = instr_stats(cfg, instr);
    if (const auto* g = std::get_if<isa::Gemm>(&instr))
      r.init_codes = g->init.kind == isa::AccInit::Kind::kPerColumn ? cfg.array.cols : 1;
    ops.push_back(r);
  }
  return ops;
}

// What a tb_accel run came to: its operations (with their measured figures) and the testbench's results.
struct AccelOutcome {
  std::vector<OpResult> ops;
  sim::AccelResults results;
  bool pass = false;  // every check passed
};

// The outcome of `run`: each operation gets its measured figures; it passes when it ran and no problem
// line names it; the run passes when sim::run_passed and every operation passed.
AccelOutcome read_accel_outcome(const AccelRun& run, const AccelConfig& cfg) {
  AccelOutcome o;
  o.ops = read_program_index(run.program, run.prog, cfg);
  o.results = sim::accel_results_of_run(run.results, run.rc);
  std::map<std::string, std::size_t> by_id;
  for (std::size_t i = 0; i < o.ops.size(); ++i) by_id[o.ops[i].stem] = i;
  for (const sim::AccelDescriptor& d : o.results.descriptors) {
    const auto it = by_id.find(d.id);
    if (it == by_id.end()) continue;
    o.ops[it->second].ran = true;
    o.ops[it->second].measured = d;
  }
  const std::vector<std::string>& problems = o.results.verdict.problems;
  for (OpResult& r : o.ops) {
    r.pass = r.ran;
    for (const std::string& p : problems)
      if (p.find(op_label(r)) != std::string::npos) r.pass = false;
  }
  o.pass = sim::run_passed(o.results.verdict, run.rc, o.results.program.cycles) &&
           std::all_of(o.ops.begin(), o.ops.end(), [](const OpResult& r) { return r.pass; });
  return o;
}

// The run's sums over the operations that ran, and what follows from them at the preset's clock.
struct AccelTotals {
  long long cycles = 0, model_cycles = 0, macs = 0, rd_d = 0, rd_dv = 0, rd_w = 0, rd_b = 0, rd_b_codes = 0, wr = 0;
  long long total = 0;  // the program's cycles from start_i to done_o (fetches and hand-overs included): one
                        // inference, or the routing batch's
  double ips = 0, util = 0;
};

// The totals of the run's outcome `o` on preset `cfg`.
AccelTotals accel_totals(const AccelOutcome& o, const AccelConfig& cfg, int inputs) {
  AccelTotals t;
  for (const OpResult& r : o.ops) {
    if (!r.ran) continue;
    const sim::AccelDescriptor& m = r.measured;
    t.cycles += m.cycles;
    t.model_cycles += m.model;
    t.macs += r.model.useful_macs;
    t.rd_d += m.reads_data;
    t.rd_dv += m.reads_data_vec;
    t.rd_w += m.reads_weight;
    t.rd_b += m.reads_bias;
    t.rd_b_codes += m.reads_bias * r.init_codes;
    t.wr += m.writes;
  }
  const long long prog_cycles = o.results.program.cycles;
  t.total = prog_cycles > 0 ? prog_cycles : t.cycles;
  t.ips =
      t.total ? inputs * cfg.clock.target_mhz * 1e6 / double(t.total) : 0.0;  // a routing batch: `inputs` per program
  t.util = t.total ? double(t.macs) / (double(t.total) * cfg.array.rows * cfg.array.cols) : 0.0;
  return t;
}

// Bytes of one element of `bits` bits in the report's memory activity.
long long bytes_of(int bits) { return (bits + 7) / 8; }

// Everything the report of a tb_accel run is made of.
struct AccelReport {
  const SimRequest& req;
  const WorkloadInput& in;
  fs::path rtl, build;
  double build_s;
  const AccelRun& run;
  const AccelOutcome& o;
  AccelTotals t;
};

// An operation's result as the report says it.
std::string op_result(const OpResult& r) {
  return !r.skip_reason.empty() ? "skipped (executor)" : !r.ran ? "not run" : r.pass ? "pass" : "FAIL";
}

// The report's table of operations (Markdown).
std::string accel_ops_md(const std::vector<OpResult>& ops) {
  std::string md =
      "| # | operation | kind | result | cycles (RTL) | model | stalls data/tile/output | vectors | useful MACs | "
      "data reads (elements + vectors) | tile rows | init reads | writes |\n|---|---|---|---|---:|---:|---|---:|---:|---:|---:|---:|---:|\n";
  for (const OpResult& r : ops) {
    const sim::AccelDescriptor& m = r.measured;
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {}/{}/{} | {} | {} | {} + {} | {} | {} | {} |\n", r.stem, r.name,
                      r.kind, op_result(r), m.cycles, m.model, m.stall_data, m.stall_tile, m.stall_out, m.vectors,
                      r.model.useful_macs, m.reads_data, m.reads_data_vec, m.reads_weight, m.reads_bias, m.writes);
  }
  return md;
}

// The report's operations (JSON).
nlohmann::ordered_json accel_ops_json(const std::vector<OpResult>& ops) {
  nlohmann::ordered_json jops = nlohmann::json::array();
  for (const OpResult& r : ops) {
    const sim::AccelDescriptor& m = r.measured;
    jops.push_back({{"id", r.stem}, {"name", r.name}, {"kind", r.kind}, {"result", op_result(r)},
                    {"cycles", m.cycles}, {"model_cycles", m.model},
                    {"stall_cycles", {{"data", m.stall_data}, {"tile", m.stall_tile}, {"output", m.stall_out}}},
                    {"vectors", m.vectors}, {"useful_macs", r.model.useful_macs},
                    {"reads", {{"data_elements", m.reads_data}, {"data_vectors", m.reads_data_vec},
                               {"tile_rows", m.reads_weight}, {"init_reads", m.reads_bias}}},
                    {"writes", m.writes}, {"start_cycle", m.start}});
  }
  return jops;
}

// With --trace: the report's trace line, after writing the .gtkw, which opens on the first descriptor:
// from the reset release (the program's start_i) to the cycle after the next descriptor's start (its
// op_done_o included), or to the program's end. `gtkw` gets the .gtkw's path.
std::string accel_trace_md(const AccelReport& a, std::string& gtkw) {
  const std::vector<OpResult>& ops = a.o.ops;
  std::uint64_t first_end = static_cast<std::uint64_t>(std::max(0LL, a.o.results.verdict.simulated_cycles));
  const bool first_ran = !ops.empty() && ops[0].ran;
  if (first_ran) first_end = ops.size() > 1 && ops[1].ran ? static_cast<std::uint64_t>(ops[1].measured.start) + 1
                                                          : static_cast<std::uint64_t>(a.t.total);
  else first_end = std::min<std::uint64_t>(first_end, sim::kTraceFirstCycles);
  const sim::TraceWindow window = sim::trace_window(a.o.results.verdict.trace_reset_released_ps, a.run.period_ps, 0, first_end);
  return sim::trace_report_line(*a.req.trace, emit::kAccelModule, sim::read_trace_groups(a.rtl, emit::kAccelModule), window, gtkw);
}

// The Markdown report: result, input, predictions, the RTL and model, the table of operations, totals,
// throughput, memory activity, simulation time and the trace (`gtkw` gets the .gtkw's path), problems.
std::string accel_report_md(const AccelReport& a, std::string& gtkw) {
  const Workload& w = a.in.w;
  const AccelOutcome& o = a.o;
  const AccelTotals& t = a.t;
  const double mhz = w.cfg.clock.target_mhz;
  const int R = w.cfg.array.rows, C = w.cfg.array.cols;
  const long long db = bytes_of(w.cfg.widths.data), wb = bytes_of(w.cfg.widths.weight), pb = bytes_of(w.cfg.widths.psum);
  const BatchInputs& batch = a.run.batch;
  const int label = batch.labels.back();  // the prediction the testbench checks is the last input's
  std::string md = fmt::format("# capsgen sim: {} on {}\n\n", w.net.name, w.cfg.name);
  md += fmt::format("- result: **{}**{}\n", o.pass ? "PASS, every operation bit-exact" : "FAIL",
                    o.pass ? "" : fmt::format(" ({} problem line(s) below, exit status of the testbench {})", o.results.verdict.problems.size(), a.run.rc));
  md += fmt::format("- input: {}{}; weights: {}\n", batch.names.back(),
                    label >= 0 ? fmt::format(", true label {}", label) : "",
                    a.req.weights.value_or(fmt::format("seeded random (seed {})", a.req.seed)));
  if (batch.codes.size() > 1)
    md += fmt::format(
        "- routing batch of {} inputs sharing their routing logits (docs/pim-capsnet.md): {}; the executor's class "
        "norms of each equal the golden shared routing's, the prediction below is the last input's\n",
        batch.codes.size(), fmt::join(batch.names, ", "));
  md += fmt::format("- class prediction: RTL {}, golden model {}{}\n", o.results.prediction.rtl, o.results.prediction.golden,
                    label >= 0 ? fmt::format(", true label {}", label) : "");
  md += fmt::format("- RTL: {} ({}x{} array, {} MHz target), model {}{}\n\n", a.rtl.string(), R, C, mhz, (a.build / "tb_accel").string(),
                    a.req.fault.empty() ? "" : fmt::format(" (**deliberately broken: --fault {}**)", a.req.fault));
  md += accel_ops_md(o.ops);
  md += fmt::format(
      "\n- total: {} cycles for the program from start_i to done_o (model {}), of which {} in the descriptors (the compiler's "
      "cycle model: {}, {:+.3f}%) and {} with the engine waiting for the sequencer ({} words per descriptor fetched); "
      "{} simulated cycles with reset\n",
      o.results.program.cycles, o.results.program.model_cycles, t.cycles, t.model_cycles, t.cycles ? 100.0 * double(t.model_cycles - t.cycles) / double(t.cycles) : 0.0,
      o.results.program.fetch_wait, o.results.program.words_per_descriptor, o.results.verdict.simulated_cycles);
  md += fmt::format("- {:.1f} inferences/s at {} MHz; array utilization {:.3f} ({} useful MACs / ({}x{} x cycles))\n", t.ips,
                    mhz, t.util, t.macs, R, C);
  md += fmt::format(
      "- memory activity: {} data element reads and {} data vector reads ({} B), {} tile-row reads ({} B), {} "
      "accumulator-init reads (biases, logits: {} B), {} element writes ({} B)\n",
      t.rd_d, t.rd_dv, (t.rd_d + t.rd_dv * R) * db, t.rd_w, t.rd_w * C * wb, t.rd_b, t.rd_b_codes * pb, t.wr, t.wr * db);
  md += fmt::format("- simulation: {:.1f} s for {} cycles ({:.0f} cycles/s){}; model build {:.1f} s\n", a.run.seconds, o.results.verdict.simulated_cycles,
                    a.run.seconds > 0 ? double(o.results.verdict.simulated_cycles) / a.run.seconds : 0.0, a.req.trace ? ", FST tracing on" : "", a.build_s);
  if (a.req.trace) md += accel_trace_md(a, gtkw);
  md += "- not modelled here: the scratchpad, DMA and off-chip memory behind the engine's ports (the testbench's memory "
        "answers every read in one cycle; docs/rtl-engine.md)\n";
  md += sim::problems_section(o.results.verdict.problems);
  return md;
}

// The JSON report: the Markdown report's facts, and the coverage files and bins (`gtkw`: the .gtkw's path).
nlohmann::ordered_json accel_report_json(const AccelReport& a, const std::string& gtkw) {
  const Workload& w = a.in.w;
  const AccelOutcome& o = a.o;
  const AccelTotals& t = a.t;
  const long long pb = bytes_of(w.cfg.widths.psum);
  nlohmann::ordered_json j;
  j["network"] = w.net.name;
  j["preset"] = w.cfg.name;
  j["pass"] = o.pass;
  j["input"] = a.run.batch.names.back();
  j["label"] = a.run.batch.labels.back();
  j["routing_batch"] = a.run.batch.names;
  j["prediction"] = {{"rtl", o.results.prediction.rtl}, {"golden", o.results.prediction.golden}};
  j["array"] = {{"rows", w.cfg.array.rows}, {"cols", w.cfg.array.cols}};
  j["clock_mhz"] = w.cfg.clock.target_mhz;
  j["operations"] = accel_ops_json(o.ops);
  j["total_cycles"] = t.total;
  j["descriptor_cycles"] = t.cycles;
  j["program_model_cycles"] = o.results.program.model_cycles;
  j["fetch_wait_cycles"] = o.results.program.fetch_wait;
  j["words_per_descriptor"] = o.results.program.words_per_descriptor;
  j["simulated_cycles"] = o.results.verdict.simulated_cycles;
  j["model_cycles"] = t.model_cycles;
  j["inferences_per_second"] = t.ips;
  j["array_utilization"] = t.util;
  j["useful_macs"] = t.macs;
  j["memory"] = {{"data_element_reads", t.rd_d}, {"data_vector_reads", t.rd_dv}, {"tile_row_reads", t.rd_w}, {"init_reads", t.rd_b}, {"init_bytes", t.rd_b_codes * pb}, {"element_writes", t.wr}};
  j["sim_seconds"] = a.run.seconds;
  j["build_seconds"] = a.build_s;
  j["trace"] = a.req.trace.value_or("");
  j["gtkw"] = gtkw;
  j["problems"] = o.results.verdict.problems;
  j["fault"] = a.req.fault;
  j["coverage"] = a.req.coverage && fs::exists(a.run.coverage_dat) ? a.run.coverage_dat.string() : "";
  j["functional_coverage"] = nlohmann::ordered_json::object();
  for (const auto& [bin, n] : o.results.coverage.bins) j["functional_coverage"][bin] = n;
  j["functional_coverage_na"] = o.results.coverage.na;
  return j;
}

// Step 5: writes the two reports and prints the Markdown one.
void write_accel_report(const AccelReport& a, const SimPaths& p, std::chrono::steady_clock::time_point t_start) {
  std::string gtkw;
  const std::string md = accel_report_md(a, gtkw);
  const nlohmann::ordered_json j = accel_report_json(a, gtkw);
  write_file_atomic(p.report_md.string(), md);
  write_file_atomic(p.report_json.string(), j.dump(2) + "\n");
  fmt::print("\n{}\nsim: wrote {} and {} ({:.1f} s in all)\n", md, p.report_md.string(), p.report_json.string(),
             std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count());
}

}  // namespace

int cmd_sim(const std::vector<std::string>& argv) {
  Args args = sim_options();
  if (!args.parse(argv)) {
    fmt::print("{}", args.help());
    return 0;
  }
  const SimRequest req = sim_request(args);
  const auto t_start = std::chrono::steady_clock::now();
  const WorkloadInput in = load_workload_input(args, "capsgen sim", false, "capsgen sim runs one image: --index K");
  if (req.chip) check_energy_inputs(in.w.cfg, in.w.net.name, energy_options(req));  // before the model build
  const SimPaths paths = sim_paths(req, in.w.cfg);
  const fs::path rtl = prepare_rtl(req, in.w.cfg, paths.work);
  const SimModel model = build_or_reuse_model(req, paths.work, rtl);
  if (req.build_only) {
    fmt::print("sim: built {} in {:.1f} s (--build-only)\n", (model.dir / req.tb_target).string(), model.seconds);
    return 0;
  }
  if (req.chip) return run_chip_sim(in, chip_sim_run(req, paths, rtl, model));
  const AccelRun run = run_accel_sim(req, in, paths.work, rtl, model.dir);
  const AccelOutcome outcome = read_accel_outcome(run, in.w.cfg);
  const AccelReport report{req,           in,  rtl,     model.dir,
                           model.seconds, run, outcome, accel_totals(outcome, in.w.cfg, run.prog.inputs)};
  write_accel_report(report, paths, t_start);
  return outcome.pass ? 0 : 1;
}

}  // namespace capsgen::cli
