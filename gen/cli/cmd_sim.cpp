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

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "cli/shell.hpp"
#include "cli/sim_support.hpp"
#include "cli/chip_sim.hpp"
#include "cli/engine_dump.hpp"
#include "cli/workload_input.hpp"
#include "compiler/compiler.hpp"
#include "core/atomic_file.hpp"
#include "core/input_error.hpp"
#include "emit/generate.hpp"
#include "emit/chip.hpp"
#include "emit/memsys.hpp"
#include "sim/model_build.hpp"

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
  const std::string cond = " & (outst_q <= wait_dma)";
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
  std::map<std::string, long long> stat;  // from the testbench's stat line
  OpStats model;                          // the compiler's statistics of the instruction
  int init_codes = 0;                     // psum codes per init read: cols (per-column bias) or 1 (per output)
};

// Signals of the accelerator's trace, grouped, for the GTKWave save file: (group, names relative to
// the capsgen_accel scope; "u_seq." the sequencer, "u_engine." the engine). Names that the trace
// does not hold are left out.
const TraceGroups& trace_groups() {
  static const TraceGroups g = {
      {"Sequencer (program fetch)", {"clk_i", "rst_ni", "start_i", "busy_o", "done_o", "error_o", "pf_valid_o",
                                     "pf_ready_i", "pf_addr_o", "pr_valid_i", "pr_data_i", "u_seq.fetch_q",
                                     "u_seq.full_q", "u_seq.end_q", "stat_ops_o", "stat_fetch_wait_o"}},
      {"Engine controller", {"u_engine.desc_valid_i", "u_engine.desc_ready_o", "u_engine.desc_kind_i", "op_busy_o",
                             "op_done_o", "u_engine.run_q", "u_engine.act_mode_q", "u_engine.b_q", "u_engine.k_q",
                             "u_engine.n_q", "u_engine.mi_q", "u_engine.issue", "u_engine.last_k", "u_engine.credits_q"}},
      {"Streamer stalls", {"u_engine.st_rd_avail", "u_engine.tile_ok", "u_engine.credit_ok", "stat_cycles_o",
                           "stat_vectors_o", "stat_stall_data_o", "stat_stall_tile_o", "stat_stall_out_o"}},
      {"Data port and gather", {"drd_en_o", "drd_vec_o", "drd_addr_o", "drd_data_i", "u_engine.g_valid",
                                "u_engine.g_ready", "u_engine.g_zero"}},
      {"Array edges: tiles", {"wrd_en_o", "wrd_addr_o", "wrd_data_i", "u_engine.tile_ready"}},
      {"Accumulators: init", {"brd_en_o", "brd_addr_o", "brd_data_i", "u_engine.io_rd"}},
      {"Activation and output FIFO", {"u_engine.a_valid", "u_engine.fifo_push", "u_engine.fifo_cnt_q", "u_engine.pop",
                                      "u_engine.ap_busy"}},
      {"Output port", {"wr_en_o", "wr_vec_o", "wr_mask_o", "wr_addr_o", "wr_data_o"}},
  };
  return g;
}

}  // namespace

int cmd_sim(const std::vector<std::string>& argv) {
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
  args.option("work", "DIR", "work directory (RTL, model build, program, logs); default build/sim/<preset name>")
      .option("report", "FILE", "Markdown report (default WORK/report.md)")
      .option("json", "FILE", "JSON report (default WORK/report.json)")
      .option("trace", "FILE", "write an FST of the whole run, in real time at the preset's clock, and FILE's .gtkw\n"
              "(GTKWave, signals grouped, opening on the first operation)")
      .option("rtl", "DIR",
              "simulate this RTL directory as it is (e.g. hand-modified) instead of generating WORK/rtl; it must\n"
              "come from the same preset (its config.txt is checked)")
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
      .option("model-opt", "LEVEL", "C++ optimization of the Verilator model's evaluation code: -O1, -O2, -O3 or -Os\n"
              "(-O1 builds about twice as fast, -O3 simulates faster). Default: $CAPSGEN_MODEL_OPT, or -O3");
  if (!args.parse(argv)) {
    fmt::print("{}", args.help());
    return 0;
  }
  if (!args.positional().empty()) throw InputError("capsgen sim", 0, 0, args.positional().front(), "unexpected argument");
  const fs::path src = args.get("source-dir");
  if (!fs::exists(src / "tb" / "CMakeLists.txt"))
    throw InputError("capsgen sim", 0, 0, "--source-dir", fmt::format("'{}' holds no tb/CMakeLists.txt", src.string()));
  const long long jobs = args.get_int("jobs", 1, 256);
  const std::string fetch = args.get("fetch");
  const bool coverage = args.has("coverage"), build_only = args.has("build-only");
  const std::optional<std::string> given_build = args.get_opt("build");
  const std::string fault = args.get_opt("fault").value_or("");
  const std::string memory = args.get("memory");
  if (memory != "ideal" && memory != "dram")
    throw InputError("capsgen sim", 0, 0, "--memory", fmt::format("expected 'ideal' or 'dram', got '{}'", memory));
  const bool chip = memory == "dram";
  const std::string tb_target = chip ? "tb_chip" : "tb_accel";
  if (!fault.empty() && fault != "flip-pe-bit" && !(chip && fault == "ignore-wait-dma"))
    throw InputError("capsgen sim", 0, 0, "--fault",
                     fmt::format("expected 'flip-pe-bit'{}, got '{}'", chip ? " or 'ignore-wait-dma'" : "", fault));
  if (!fault.empty() && (args.has("rtl") || given_build))
    throw InputError("capsgen sim", 0, 0, "--fault", "applies to the generated RTL: not with --rtl or --build");
  if (given_build && build_only) throw InputError("capsgen sim", 0, 0, "--build-only", "not with --build");
  if (given_build) {
    const fs::path b = *given_build;
    if (!fs::exists(b / tb_target) || !fs::exists(b / "CMakeCache.txt"))
      throw InputError(b.string(), 0, 0, "--build", "holds no built " + tb_target + " (build it with capsgen sim --build-only)");
    const fs::path cache = b / "CMakeCache.txt";
    if (args.has("trace") && cmake_cache_value(cache, "CAPSGEN_TB_TRACE") != "ON")
      throw InputError(cache.string(), 0, 0, "--trace", "this model was built without tracing (CAPSGEN_TB_TRACE)");
    if (coverage && cmake_cache_value(cache, "CAPSGEN_TB_COVERAGE") != "ON")
      throw InputError(cache.string(), 0, 0, "--coverage", "this model was built without coverage (CAPSGEN_TB_COVERAGE)");
  }
  if (fetch != "latency1" && fetch != "random")
    throw InputError("capsgen sim", 0, 0, "--fetch", fmt::format("expected 'latency1' or 'random', got '{}'", fetch));
  const char* opt_env = std::getenv("CAPSGEN_MODEL_OPT");
  const std::string model_opt = args.get_opt("model-opt").value_or(opt_env && *opt_env ? opt_env : "-O3");
  if (model_opt != "-O1" && model_opt != "-O2" && model_opt != "-O3" && model_opt != "-Os")
    throw InputError(args.get_opt("model-opt") ? "capsgen sim" : "$CAPSGEN_MODEL_OPT", 0, 0, "--model-opt",
                     fmt::format("expected -O1, -O2, -O3 or -Os, got '{}'", model_opt));
  const auto t_start = std::chrono::steady_clock::now();
  const WorkloadInput in = load_workload_input(args, "capsgen sim", false, "capsgen sim runs one image: --index K");
  const Workload& w = in.w;
  if (chip && !emit::chip_unsupported_reason(w.cfg).empty())
    throw InputError(args.get("config"), 0, 0, "--memory dram", "no capsgen_chip for this preset: " + emit::chip_unsupported_reason(w.cfg));
  const fs::path work = args.get_opt("work").value_or("build/sim/" + w.cfg.name + (chip ? "-dram" : ""));
  const std::optional<std::string> trace = args.get_opt("trace");
  const fs::path report_md = args.get_opt("report").value_or((work / "report.md").string());
  const fs::path report_json = args.get_opt("json").value_or((work / "report.json").string());
  std::error_code ec;
  fs::create_directories(work, ec);
  if (ec) throw InputError(work.string(), 0, 0, "--work", "cannot create directory: " + ec.message());

  // 1. RTL.
  require_rtl_support(w.cfg);
  const emit::Design design = emit::build_design(w.cfg);
  std::optional<std::string> given_rtl = args.get_opt("rtl");
  if (given_build && !given_rtl) {  // the RTL the model was built from
    given_rtl = cmake_cache_value(fs::path(*given_build) / "CMakeCache.txt", "CAPSGEN_RTL_DIR");
    if (given_rtl->empty())
      throw InputError((fs::path(*given_build) / "CMakeCache.txt").string(), 0, 0, "--build", "no CAPSGEN_RTL_DIR in the cache");
  }
  const fs::path rtl = given_rtl ? fs::path(*given_rtl) : work / (fault.empty() ? "rtl" : "rtl-" + fault);
  if (given_rtl) {
    // A given RTL must be of this preset: its config.txt (sizes, widths) equals the generator's.
    const auto summary = std::find_if(design.files().begin(), design.files().end(),
                                      [](const emit::OutputFile& f) { return f.name == emit::kConfigSummaryName; });
    if (summary == design.files().end() || slurp(rtl / emit::kConfigSummaryName) != summary->contents)
      throw InputError((rtl / emit::kConfigSummaryName).string(), 0, 0, "--rtl",
                       fmt::format("not the RTL of preset {} (config.txt differs or is missing)", w.cfg.name));
    fmt::print("sim: RTL of {} in {} (given)\n", w.cfg.name, rtl.string());
  } else {
    const std::vector<emit::OutputFile> files = rtl_files(design, w.cfg, fault);
    const bool rtl_reused = rtl_up_to_date(files, rtl);
    if (!rtl_reused) {
      emit::generate_rtl(w.cfg, rtl);
      if (!fault.empty())
        for (const emit::OutputFile& f : files) write_file_atomic((rtl / f.name).string(), f.contents);
    }
    fmt::print("sim: RTL of {} in {} ({}{})\n", w.cfg.name, rtl.string(), rtl_reused ? "unchanged, reused" : "generated",
               fault.empty() ? "" : ", with fault " + fault);
  }

  // 2. The accelerator's model and testbench (sim/model_build.hpp): keyed on the RTL, the testbench
  // sources, the options and the tools; in WORK, or shared in the model cache.
  fs::path build;
  double build_s = 0;
  if (given_build) {
    build = *given_build;
    fmt::print("sim: using the model built in {}\n", build.string());
  } else {
    sim::ModelSpec spec;
    spec.testbench = tb_target;
    spec.trace = trace.has_value();
    spec.coverage = coverage;
    spec.opt = model_opt;
    spec.source_dir = fs::absolute(src);
    spec.rtl = sim::read_rtl_dir(rtl);
    const fs::path own = work / (std::string(chip ? "build-chip" : "build-accel") + (trace ? "-trace" : "") +
                                 (coverage ? "-cov" : "") + (fault.empty() ? "" : "-" + fault));
    const char* cache_env = std::getenv("CAPSGEN_MODEL_CACHE");
    const std::string cache = args.get_opt("model-cache").value_or(cache_env ? cache_env : "");
    fs::path dir = own;
    if (!cache.empty()) {
      dir = sim::cached_model_dir(cache, spec, sim::model_key(spec, sim::tool_versions()));
      // WORK's build directory names the shared model (capsgen regress runs --build WORK/build-...).
      // A private build left there by a run without the cache is replaced by the link.
      std::error_code lec;
      fs::remove_all(own, lec);
      fs::create_directory_symlink(fs::absolute(dir), own, lec);
      if (lec) throw InputError(own.string(), 0, 0, "--model-cache", "cannot link the shared model: " + lec.message());
    }
    fmt::print("sim: {} model in {} (a new model takes minutes to build; log {})\n", tb_target, dir.string(),
               (work / "build.log").string());
    const sim::BuiltModel m = sim::build_model(spec, dir, static_cast<int>(jobs), work);
    build = m.dir;
    build_s = m.seconds;
    fmt::print("sim: model {} {} ({:.1f} s)\n", m.key, m.reused ? "reused" : "built", m.seconds);
  }
  if (build_only) {
    fmt::print("sim: built {} in {:.1f} s (--build-only)\n", (build / tb_target).string(), build_s);
    return 0;
  }
  if (chip) {
    ChipSimRun r;
    r.work = work;
    r.rtl = rtl;
    r.build = build;
    r.report_md = report_md;
    r.report_json = report_json;
    r.trace = trace;
    r.stress = fetch == "random";
    r.coverage = coverage;
    r.seed = args.get("seed");
    r.fault = fault;
    r.weights = args.get_opt("weights").value_or("");
    r.build_s = build_s;
    return run_chip_sim(in, r);
  }

  // 3. Program.
  const isa::Program prog = compile_program(w.cfg, w.net, w.qm);
  const fs::path program = work / "program";
  fs::remove_all(program, ec);
  dump_engine(w, prog, program.string(), in.input, in.input_name, in.label);

  // 4. Run.
  const fs::path log = work / "sim.log";
  std::string cmd = fmt::format("{} --rtl {} --program {}", quote((build / "tb_accel").string()),
                                quote(fs::absolute(rtl).string()), quote(program.string()));
  const std::uint64_t period_ps = clock_period_ps(w.cfg.clock.target_mhz);
  cmd += fmt::format(" --clock-period-ps {}", period_ps);
  if (trace) cmd += " --trace " + quote(*trace);
  if (fetch == "random") cmd += " --mode fetch-random --seed " + quote(args.get("seed"));
  const fs::path coverage_dat = work / "coverage.dat";
  if (coverage) {
    fs::remove(coverage_dat, ec);
    cmd += " --coverage-out " + quote(coverage_dat.string());
  }
  fmt::print("sim: running the program of {} descriptors on the RTL ({})\n", prog.instrs.size(), log.string());
  const auto t_run = std::chrono::steady_clock::now();
  const int rc = run_logged(cmd, log);
  const double run_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_run).count();

  // 5. Report.
  std::vector<OpResult> ops;
  std::map<std::string, std::size_t> by_label;
  {
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
      r.model = instr_stats(w.cfg, instr);
      if (const auto* g = std::get_if<isa::Gemm>(&instr))
        r.init_codes = g->init.kind == isa::AccInit::Kind::kPerColumn ? w.cfg.array.cols : 1;
      by_label[r.name + " (" + r.stem + ")"] = ops.size();
      ops.push_back(r);
    }
  }
  const std::string out = slurp(log);
  std::vector<std::string> problems;
  int rtl_pred = -1, golden_pred = -1;
  bool summary_pass = false;
  std::vector<std::pair<std::string, long long>> fcov;  // functional coverage bins (testbench "fcov" lines)
  std::vector<std::string> fcov_na;                      // bins whose hardware is not in this RTL
  long long sim_cycles = 0, prog_cycles = 0, prog_model = 0, fetch_wait = 0, words_per_desc = 0;
  {
    std::istringstream ls(out);
    const std::regex stat_re(R"(^stat name=(.*?) cycles=)");
    const std::regex kv_re(R"((\w+)=(-?\d+))");
    const std::regex pred_re(R"(RTL prediction (\d+), golden prediction (-?\d+))");
    const std::regex cyc_re(R"(, (\d+) cycles)");
    const std::regex prog_re(R"(^program cycles=(\d+) model=(\d+) ops=\d+ fetch_wait=(\d+) words_per_descriptor=(\d+))");
    for (std::string line; std::getline(ls, line);) {
      std::smatch m;
      if (std::regex_search(line, m, stat_re)) {
        const auto it = by_label.find(m[1].str());
        if (it == by_label.end()) continue;
        OpResult& r = ops[it->second];
        r.ran = true;
        const std::string rest = line.substr(line.find(" cycles="));
        for (std::sregex_iterator k(rest.begin(), rest.end(), kv_re), e; k != e; ++k) r.stat[(*k)[1]] = std::stoll((*k)[2]);
      } else if (std::regex_search(line, m, prog_re)) {
        prog_cycles = std::stoll(m[1]);
        prog_model = std::stoll(m[2]);
        fetch_wait = std::stoll(m[3]);
        words_per_desc = std::stoll(m[4]);
      } else if (std::regex_search(line, m, pred_re)) {
        rtl_pred = std::stoi(m[1]);
        golden_pred = std::stoi(m[2]);
      } else if (line.rfind("fcov ", 0) == 0) {
        std::istringstream fs_(line.substr(5));
        std::string bin, na;
        long long n = 0;
        if (fs_ >> bin >> n) fcov.emplace_back(bin, n);
        if (fs_ >> na && na == "na") fcov_na.push_back(bin);
      } else if (line.rfind("MISMATCH", 0) == 0 || line.rfind("FAIL", 0) == 0) {
        problems.push_back(line);
      }
      if (line.rfind("PASS accel", 0) == 0 || line.rfind("FAIL accel", 0) == 0) {
        summary_pass = line.rfind("PASS", 0) == 0;
        if (std::regex_search(line, m, cyc_re)) sim_cycles = std::stoll(m[1]);
      }
    }
  }
  for (OpResult& r : ops) {
    r.pass = r.ran;
    for (const std::string& p : problems)
      if (p.find(r.name + " (" + r.stem + ")") != std::string::npos) r.pass = false;
  }
  const bool pass = rc == 0 && summary_pass && problems.empty() && prog_cycles > 0 &&
                    std::all_of(ops.begin(), ops.end(), [](const OpResult& r) { return r.pass; });

  long long cycles = 0, model_cycles = 0, macs = 0, rd_d = 0, rd_dv = 0, rd_w = 0, rd_b = 0, rd_b_codes = 0, wr = 0;
  for (const OpResult& r : ops) {
    if (!r.ran) continue;
    cycles += r.stat.at("cycles");
    model_cycles += r.stat.at("model");
    macs += r.model.useful_macs;
    rd_d += r.stat.at("reads_data");
    rd_dv += r.stat.at("reads_data_vec");
    rd_w += r.stat.at("reads_weight");
    rd_b += r.stat.at("reads_bias");
    rd_b_codes += r.stat.at("reads_bias") * r.init_codes;
    wr += r.stat.at("writes");
  }
  const double mhz = w.cfg.clock.target_mhz;
  const int R = w.cfg.array.rows, C = w.cfg.array.cols;
  // Per inference: the program's cycles from start_i to done_o (descriptor fetches and hand-overs included).
  const long long total = prog_cycles > 0 ? prog_cycles : cycles;
  const double ips = total ? mhz * 1e6 / double(total) : 0.0;
  const double util = total ? double(macs) / (double(total) * R * C) : 0.0;
  const long long db = (w.cfg.widths.data + 7) / 8, wb = (w.cfg.widths.weight + 7) / 8, pb = (w.cfg.widths.psum + 7) / 8;

  std::string md = fmt::format("# capsgen sim: {} on {}\n\n", w.net.name, w.cfg.name);
  md += fmt::format("- result: **{}**{}\n", pass ? "PASS, every operation bit-exact" : "FAIL",
                    pass ? "" : fmt::format(" ({} problem line(s) below, exit status of the testbench {})", problems.size(), rc));
  md += fmt::format("- input: {}{}; weights: {}\n", in.input_name, in.label >= 0 ? fmt::format(", true label {}", in.label) : "",
                    args.get_opt("weights").value_or(fmt::format("seeded random (seed {})", args.get("seed"))));
  md += fmt::format("- class prediction: RTL {}, golden model {}{}\n", rtl_pred, golden_pred,
                    in.label >= 0 ? fmt::format(", true label {}", in.label) : "");
  md += fmt::format("- RTL: {} ({}x{} array, {} MHz target), model {}{}\n\n", rtl.string(), R, C, mhz, (build / "tb_accel").string(),
                    fault.empty() ? "" : fmt::format(" (**deliberately broken: --fault {}**)", fault));
  md += "| # | operation | kind | result | cycles (RTL) | model | stalls data/tile/output | vectors | useful MACs | "
        "data reads (elements + vectors) | tile rows | init reads | writes |\n|---|---|---|---|---:|---:|---|---:|---:|---:|---:|---:|---:|\n";
  nlohmann::ordered_json jops = nlohmann::json::array();
  for (const OpResult& r : ops) {
    const auto st = [&](const char* k) { return r.stat.count(k) ? r.stat.at(k) : 0LL; };
    const std::string result = !r.skip_reason.empty() ? "skipped (executor)" : !r.ran ? "not run" : r.pass ? "pass" : "FAIL";
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {}/{}/{} | {} | {} | {} + {} | {} | {} | {} |\n", r.stem, r.name,
                      r.kind, result, st("cycles"), st("model"), st("stall_data"), st("stall_tile"), st("stall_out"),
                      st("vectors"), r.model.useful_macs, st("reads_data"), st("reads_data_vec"), st("reads_weight"),
                      st("reads_bias"), st("writes"));
    jops.push_back({{"id", r.stem}, {"name", r.name}, {"kind", r.kind}, {"result", result},
                    {"cycles", st("cycles")}, {"model_cycles", st("model")},
                    {"stall_cycles", {{"data", st("stall_data")}, {"tile", st("stall_tile")}, {"output", st("stall_out")}}},
                    {"vectors", st("vectors")}, {"useful_macs", r.model.useful_macs},
                    {"reads", {{"data_elements", st("reads_data")}, {"data_vectors", st("reads_data_vec")},
                               {"tile_rows", st("reads_weight")}, {"init_reads", st("reads_bias")}}},
                    {"writes", st("writes")}, {"start_cycle", st("start")}});
  }
  md += fmt::format(
      "\n- total: {} cycles for the program from start_i to done_o (model {}), of which {} in the descriptors (the compiler's "
      "cycle model: {}, {:+.3f}%) and {} with the engine waiting for the sequencer ({} words per descriptor fetched); "
      "{} simulated cycles with reset\n",
      prog_cycles, prog_model, cycles, model_cycles, cycles ? 100.0 * double(model_cycles - cycles) / double(cycles) : 0.0,
      fetch_wait, words_per_desc, sim_cycles);
  md += fmt::format("- {:.1f} inferences/s at {} MHz; array utilization {:.3f} ({} useful MACs / ({}x{} x cycles))\n", ips,
                    mhz, util, macs, R, C);
  md += fmt::format(
      "- memory activity: {} data element reads and {} data vector reads ({} B), {} tile-row reads ({} B), {} "
      "accumulator-init reads (biases, logits: {} B), {} element writes ({} B)\n",
      rd_d, rd_dv, (rd_d + rd_dv * R) * db, rd_w, rd_w * C * wb, rd_b, rd_b_codes * pb, wr, wr * db);
  md += fmt::format("- simulation: {:.1f} s for {} cycles ({:.0f} cycles/s){}; model build {:.1f} s\n", run_s, sim_cycles,
                    run_s > 0 ? double(sim_cycles) / run_s : 0.0, trace ? ", FST tracing on" : "", build_s);
  std::string gtkw_note;
  if (trace) {
    // The .gtkw opens on the first descriptor: from the reset release (the program's start_i) to the
    // cycle after the next descriptor's start (its op_done_o included), or to the program's end.
    std::uint64_t first_end = static_cast<std::uint64_t>(std::max(0LL, sim_cycles));
    const bool first_ran = !ops.empty() && ops[0].ran && ops[0].stat.count("start");
    if (first_ran) first_end = ops.size() > 1 && ops[1].ran && ops[1].stat.count("start")
                                   ? static_cast<std::uint64_t>(ops[1].stat.at("start")) + 1
                                   : static_cast<std::uint64_t>(total);
    else first_end = std::min<std::uint64_t>(first_end, kTraceFirstCycles);
    const TraceWindow window = trace_window(out, period_ps, 0, first_end);
    md += trace_report_line(*trace, "capsgen_accel", trace_groups(), window, gtkw_note);
  }
  md += "- not modelled here: the scratchpad, DMA and off-chip memory behind the engine's ports (the testbench's memory "
        "answers every read in one cycle; docs/rtl-engine.md)\n";
  md += problems_section(problems);
  nlohmann::ordered_json j;
  j["network"] = w.net.name;
  j["preset"] = w.cfg.name;
  j["pass"] = pass;
  j["input"] = in.input_name;
  j["label"] = in.label;
  j["prediction"] = {{"rtl", rtl_pred}, {"golden", golden_pred}};
  j["array"] = {{"rows", R}, {"cols", C}};
  j["clock_mhz"] = mhz;
  j["operations"] = jops;
  j["total_cycles"] = total;
  j["descriptor_cycles"] = cycles;
  j["program_model_cycles"] = prog_model;
  j["fetch_wait_cycles"] = fetch_wait;
  j["words_per_descriptor"] = words_per_desc;
  j["simulated_cycles"] = sim_cycles;
  j["model_cycles"] = model_cycles;
  j["inferences_per_second"] = ips;
  j["array_utilization"] = util;
  j["useful_macs"] = macs;
  j["memory"] = {{"data_element_reads", rd_d}, {"data_vector_reads", rd_dv}, {"tile_row_reads", rd_w}, {"init_reads", rd_b}, {"init_bytes", rd_b_codes * pb}, {"element_writes", wr}};
  j["sim_seconds"] = run_s;
  j["build_seconds"] = build_s;
  j["trace"] = trace.value_or("");
  j["gtkw"] = gtkw_note;
  j["problems"] = problems;
  j["fault"] = fault;
  j["coverage"] = coverage && fs::exists(coverage_dat) ? coverage_dat.string() : "";
  j["functional_coverage"] = nlohmann::ordered_json::object();
  for (const auto& [bin, n] : fcov) j["functional_coverage"][bin] = n;
  j["functional_coverage_na"] = fcov_na;
  write_file_atomic(report_md.string(), md);
  write_file_atomic(report_json.string(), j.dump(2) + "\n");
  fmt::print("\n{}\nsim: wrote {} and {} ({:.1f} s in all)\n", md, report_md.string(), report_json.string(),
             std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count());
  return pass ? 0 : 1;
}

}  // namespace capsgen::cli
