// capsgen sim --memory dram: the chip with its memory system; see chip_sim.hpp.
#include "cli/chip_sim.hpp"

#include <fmt/format.h>

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "core/shell.hpp"
#include "sim/run.hpp"
#include "cli/stream_dump.hpp"
#include "compiler/compiler.hpp"
#include "dram/dram_spec.hpp"
#include "emit/chip.hpp"
#include "core/atomic_file.hpp"

namespace capsgen::cli {
namespace {

namespace fs = std::filesystem;
using Stat = std::map<std::string, long long>;

// "stat <kind> k=v k=v ..." -> (kind, values); name=... kept as text in `name`.
bool parse_stat(const std::string& line, std::string& kind, Stat& kv, std::string& name) {
  if (line.rfind("stat ", 0) != 0) return false;
  std::istringstream ls(line.substr(5));
  ls >> kind;
  for (std::string tok; ls >> tok;) {
    const auto eq = tok.find('=');
    if (eq == std::string::npos) continue;
    const std::string k = tok.substr(0, eq), v = tok.substr(eq + 1);
    if (k == "name" || k == "memory") {
      name = v;
      continue;
    }
    try {
      kv[k] = std::stoll(v);
    } catch (const std::exception&) {
    }
  }
  return true;
}

std::string pct(long long part, long long whole) { return whole ? fmt::format("{:.1f}%", 100.0 * double(part) / double(whole)) : "-"; }

// A stat value (0 when the line lacks it).
long long at(const Stat& s, const char* k) { return s.count(k) ? s.at(k) : 0LL; }

// One run of tb_chip: the program, its streamed frames, where the log is, and how the run ended.
struct ChipRun {
  isa::Program prog;
  StreamDump sd;
  fs::path log, coverage_dat;
  std::uint64_t period_ps = 0;
  int rc = 0;
  double seconds = 0;
  std::string out;  // the log's text
};

// Compiles the network, streams its program into WORK/stream (cli/stream_dump.hpp) and runs it on tb_chip
// of r.build, with its output in WORK/sim.log.
ChipRun run_chip_tb(const WorkloadInput& in, const ChipSimRun& r) {
  const Workload& w = in.w;
  ChipRun run;
  run.prog = compile_program(w.cfg, w.net, w.qm);
  const fs::path stream = r.work / "stream";
  std::error_code ec;
  fs::remove_all(stream, ec);
  run.sd = dump_stream(w, run.prog, stream.string(), in.input, in.input_name, in.label);

  run.log = r.work / "sim.log";
  run.coverage_dat = r.work / "coverage.dat";
  std::string cmd = fmt::format("{} --rtl {} --program {}", quote((r.build / "tb_chip").string()), quote(fs::absolute(r.rtl).string()),
                                quote(stream.string()));
  run.period_ps = sim::clock_period_ps(w.cfg.clock.target_mhz);
  cmd += fmt::format(" --clock-period-ps {}", run.period_ps);
  if (!w.cfg.offchip.dram.empty()) cmd += " --dram " + quote(fs::absolute(w.cfg.offchip.dram).string());
  if (r.trace) cmd += " --trace " + quote(*r.trace);
  if (r.stress) cmd += " --mode stress --seed " + quote(r.seed);
  if (r.coverage) {
    fs::remove(run.coverage_dat, ec);
    cmd += " --coverage-out " + quote(run.coverage_dat.string());
  }
  const StreamDump& sd = run.sd;
  fmt::print("sim: running {} frames ({} engine, {} DMA, {} PMU) on capsgen_chip with the network in DRAM ({})\n", sd.frames, sd.engine,
             sd.dma, sd.pmu, run.log.string());
  const auto t_run = std::chrono::steady_clock::now();
  run.rc = sim::run_logged(cmd, run.log);
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_run).count();
  run.out = slurp(run.log);
  return run;
}

// What the testbench's log says: its stat lines by kind, functional coverage, problems and summary.
struct ChipLog {
  std::vector<std::string> problems;  // MISMATCH and FAIL lines but the summary's
  std::vector<std::pair<std::string, Stat>> instrs, sectors, pmus, memories;
  Stat program, seq, engine, dram, checks, access;
  std::vector<std::pair<std::string, long long>> fcov;
  bool summary_pass = false;
  long long sim_cycles = 0;
};

// Reads the testbench's log `out`.
ChipLog read_chip_log(const std::string& out) {
  ChipLog g;
  std::istringstream ls(out);
  const std::regex cyc_re(R"(, (\d+) cycles$)");
  for (std::string line; std::getline(ls, line);) {
    std::string kind, name;
    Stat kv;
    if (parse_stat(line, kind, kv, name)) {
      if (kind == "program") g.program = kv;
      else if (kind == "sequencer") g.seq = kv;
      else if (kind == "engine") g.engine = kv;
      else if (kind == "dram") g.dram = kv;
      else if (kind == "checks") g.checks = kv;
      else if (kind == "access") g.access = kv;
      else if (kind == "instr") g.instrs.emplace_back(name, kv);
      else if (kind == "memory") g.memories.emplace_back(name, kv);
      else if (kind == "sector") g.sectors.emplace_back(name, kv);
      else if (kind == "pmu") g.pmus.emplace_back(name, kv);
    } else if (line.rfind("fcov ", 0) == 0) {
      std::istringstream fs_(line.substr(5));
      std::string bin;
      long long n = 0;
      if (fs_ >> bin >> n) g.fcov.emplace_back(bin, n);
    } else if (line.rfind("MISMATCH", 0) == 0 || line.rfind("FAIL", 0) == 0) {
      if (line.rfind("FAIL chip:", 0) != 0) g.problems.push_back(line);
    }
    if (line.rfind("PASS chip", 0) == 0 || line.rfind("FAIL chip", 0) == 0) {
      g.summary_pass = line.rfind("PASS", 0) == 0;
      std::smatch m;
      if (std::regex_search(line, m, cyc_re)) g.sim_cycles = std::stoll(m[1]);
    }
  }
  return g;
}

// Everything the report of a tb_chip run is made of, with the figures that follow from the log.
struct ChipReport {
  const WorkloadInput& in;
  const ChipSimRun& r;
  const ChipRun& run;
  const ChipLog& g;
  long long cycles = 0;  // the program's, from start_i to done_o
  bool pass = false;     // the testbench exited 0 and said PASS, with no problem line and the program's cycles
  long long macs = 0;    // useful MACs of the program's instructions
  double ips = 0, util = 0;
  long long flat = 0;    // the same network's program cycles with an ideal memory (capsgen_accel)
  dram::DramSpec dram{};  // the DRAM the testbench timed (offchip.dram or --dram)
};

// The report of `run`, whose log says `g`.
ChipReport chip_report(const WorkloadInput& in, const ChipSimRun& r, const ChipRun& run, const ChipLog& g) {
  const AccelConfig& cfg = in.w.cfg;
  ChipReport a{in, r, run, g};
  a.cycles = g.program.count("cycles") ? g.program.at("cycles") : 0;
  a.pass = run.rc == 0 && g.summary_pass && g.problems.empty() && a.cycles > 0;
  for (const isa::Instr& i : run.prog.instrs) a.macs += instr_stats(cfg, i).useful_macs;
  a.ips = a.cycles ? cfg.clock.target_mhz * 1e6 / double(a.cycles) : 0.0;
  a.util = a.cycles ? double(a.macs) / (double(a.cycles) * cfg.array.rows * cfg.array.cols) : 0.0;
  a.flat = program_cycles(cfg, run.prog);
  a.dram = dram::offchip_dram(cfg.offchip.dram);
  return a;
}

// The stream model's error against the chip's measured cycles, in percent (negative: the model is short).
double stream_model_error_pct(long long model, long long measured) {
  return measured > 0 ? 100.0 * double(model - measured) / double(measured) : 0.0;
}

// The report's opening: result, input, predictions, the RTL and model, off-chip memory, program, throughput.
std::string chip_summary_md(const ChipReport& a) {
  const Workload& w = a.in.w;
  const ChipSimRun& r = a.r;
  const StreamDump& sd = a.run.sd;
  std::string md = fmt::format("# capsgen sim --memory dram: {} on {}\n\n", w.net.name, w.cfg.name);
  md += fmt::format("- result: **{}**{}\n", a.pass ? "PASS, every DRAM write and every operation's output bit-exact" : "FAIL",
                    a.pass ? "" : fmt::format(" ({} problem line(s) below, exit status of the testbench {})", a.g.problems.size(), a.run.rc));
  md += fmt::format("- input: {}{}; weights: {}\n", a.in.input_name, a.in.label >= 0 ? fmt::format(", true label {}", a.in.label) : "",
                    r.weights.empty() ? fmt::format("seeded random (seed {})", r.seed) : r.weights);
  md += fmt::format("- class prediction: RTL {} (from the norms in DRAM), golden model {}\n", at(a.g.checks, "prediction"), sd.golden);
  std::string org_upper = to_string(w.cfg.scratchpad.organization);
  for (char& ch : org_upper) ch = char(ch - 'a' + 'A');
  md += fmt::format("- RTL: {} (capsgen_chip: {}x{} array, {} scratchpads, DMA{}, {} MHz target), model {}{}\n", r.rtl.string(),
                    w.cfg.array.rows, w.cfg.array.cols, org_upper,
                    w.cfg.scratchpad.power_gating ? ", PMUs" : "", w.cfg.clock.target_mhz, (r.build / "tb_chip").string(),
                    r.fault.empty() ? "" : fmt::format(" (**deliberately broken: --fault {}**)", r.fault));
  const dram::DramSpec& dram_spec = a.dram;
  md += fmt::format("- off-chip memory: {} ({}; {:.1f} GB/s peak, {} controller; gen/dram model) behind a {}-bit port, at least "
                    "{} cycles read latency{}\n",
                    dram_spec.description, dram_spec.name, dram_spec.peak_gbps(), dram::to_string(dram_spec.controller.policy),
                    w.cfg.offchip.bus_bits, w.cfg.offchip.latency_cycles, r.stress ? "; --fetch random: random latency and back-pressure on every channel" : "");
  md += fmt::format("- program: {} frames ({} engine, {} DMA, {} PMU), {} words; {} DMA beats in, {} out\n\n", sd.frames, sd.engine,
                    sd.dma, sd.pmu, sd.words, sd.load_beats, sd.store_beats);
  md += fmt::format("**{} cycles from start_i to done_o = {:.1f} inferences/s at {} MHz**, array utilization {:.3f}. For comparison: "
                    "the streamed program's model at the port's or the DRAM's peak rate without DRAM latency (stream_timing) {} cycles "
                    "({:+.1f}% against the chip); the same network with an ideal memory (capsgen_accel) {} cycles.\n\n",
                    a.cycles, a.ips, w.cfg.clock.target_mhz, a.util, sd.stream_model_cycles,
                    stream_model_error_pct(sd.stream_model_cycles, a.cycles), a.flat);
  return md;
}

// The table of instructions (engine cycles against the model) and the engine's totals and stalls.
std::string chip_instrs_md(const ChipLog& g) {
  std::string md = "| # | operation | parts | engine cycles (RTL) | model | error |\n|---|---|---:|---:|---:|---:|\n";
  for (const auto& [name, s] : g.instrs) {
    const long long c = at(s, "cycles"), m = at(s, "model");
    md += fmt::format("| {} | {} | {} | {} | {} | {:+.2f}% |\n", at(s, "index"), name, at(s, "parts"), c, m,
                      c ? 100.0 * double(m - c) / double(c) : 0.0);
  }
  const long long ec = at(g.program, "engine_cycles"), em = at(g.program, "engine_model");
  md += fmt::format("\n- engine: {} cycles in its frames (model {}, {:+.3f}%), stalls: data {}, tile {}, output {}, write port {}\n",
                    ec, em, ec ? 100.0 * double(em - ec) / double(ec) : 0.0, at(g.engine, "stall_data"), at(g.engine, "stall_tile"),
                    at(g.engine, "stall_out"), at(g.engine, "wr_wait"));
  return md;
}

// The frame sequencer's cycle classes: (stat key, what the cycles were spent on).
constexpr const char* kClasses[][2] = {
    {"fetch", "fetching a frame"},
    {"engine", "issuing an engine frame"},
    {"dma", "issuing a DMA frame"},
    {"pmu", "issuing a PMU frame"},
    {"eng_busy", "engine frame waits for the engine"},
    {"wait_dma", "engine frame waits for its DMA frames (wait_dma)"},
    {"wait_engine", "store waits for the engine (wait_engine)"},
    {"dma_busy", "DMA frame waits for the DMA"},
    {"pmu_wait", "PMU barrier waits for sectors"},
    {"drain", "end: waiting for the units"}};

// Where the program's cycles go, by the sequencer's classes.
std::string chip_sequencer_md(const ChipReport& a) {
  std::string md = "\nWhere the program's cycles go (the frame sequencer's classes; they sum to the cycles):\n\n"
                   "| class | cycles | share |\n|---|---:|---:|\n";
  for (const auto& c : kClasses) md += fmt::format("| {} | {} | {} |\n", c[1], at(a.g.seq, c[0]), pct(at(a.g.seq, c[0]), a.cycles));
  return md;
}

// The off-chip memory's traffic, row-buffer behaviour, energy and bandwidth.
std::string chip_offchip_md(const Stat& dram) {
  return fmt::format(
      "\n- off-chip (the DRAM model, ROMANet mapping): {} read and {} write beats by the DMA, {} bytes; {} column accesses "
      "({} reads, {} writes), row hits {}, misses {}, conflicts {} (hit rate {}); energy {:.3f} uJ ({:.1f} pJ/byte: activate "
      "{:.3f}, precharge {:.3f}, read {:.3f}, write {:.3f}, refresh {:.3f}, standby {:.3f} uJ); bandwidth {:.3f} GB/s over the "
      "DRAM's busy span, {:.3f} GB/s over the program, of {:.1f} GB/s peak\n",
      at(dram, "read_beats"), at(dram, "write_beats"), at(dram, "bytes"), at(dram, "requests"), at(dram, "reads"), at(dram, "writes"),
      at(dram, "row_hits"), at(dram, "misses"), at(dram, "conflicts"), pct(at(dram, "row_hits"), at(dram, "requests")),
      at(dram, "energy_pj") * 1e-6, at(dram, "pj_per_byte_x100") / 100.0, at(dram, "act_pj") * 1e-6, at(dram, "pre_pj") * 1e-6,
      at(dram, "rd_pj") * 1e-6, at(dram, "wr_pj") * 1e-6, at(dram, "ref_pj") * 1e-6, at(dram, "standby_pj") * 1e-6,
      at(dram, "model_gbps_x1000") / 1000.0, at(dram, "program_gbps_x1000") / 1000.0, at(dram, "peak_gbps_x1000") / 1000.0);
}

// Whether the report shows a memory (`pmu`: in the sectors' table): SMP has neither a data nor a weight
// memory, and its acc range is a view of the shared memory (no PMU); HY's lanes range is such a view too.
bool shown_memory(const AccelConfig& cfg, const std::string& name, bool pmu) {
  if (pmu && name == "lanes") return false;
  const bool smp = cfg.scratchpad.organization == SpmOrganization::Smp;
  return !smp || (name != "data" && name != "weight" && (!pmu || name != "acc"));
}

// The scratchpads' port activity, and how the compiler's access model compares.
std::string chip_memories_md(const ChipReport& a) {
  std::string md = "\n| memory | engine reads | engine writes | DMA reads | DMA writes | DMA wait cycles |\n|---|---:|---:|---:|---:|---:|\n";
  for (const auto& [name, s] : a.g.memories) {
    if (!shown_memory(a.in.w.cfg, name, false)) continue;
    md += fmt::format("| {} | {} | {} | {} | {} | {} |\n", name, at(s, "eng_rd"), at(s, "eng_wr"), at(s, "dma_rd"), at(s, "dma_wr"),
                      at(s, "dma_wait"));
  }
  if (at(a.g.access, "checks") > 0)
    md += fmt::format("\nThe compiler's access model (gen/compiler/access.hpp) predicts these counters, every sector's bank "
                      "accesses and each of the {} parts' engine accesses per memory: {} figures compared, {}.\n",
                      at(a.g.access, "parts"), at(a.g.access, "checks"),
                      a.g.problems.empty() ? "all equal" : "see Problems for any that differ");
  return md;
}

// With PMUs: the sectors' sleep per memory, measured and modelled.
std::string chip_sectors_md(const ChipReport& a) {
  if (a.g.pmus.empty()) return "";
  std::string md = "\n| memory | sectors | sector-cycles asleep | of all sector-cycles | modelled | barrier stall cycles |\n"
                   "|---|---:|---:|---:|---:|---:|\n";
  for (const auto& [name, s] : a.g.pmus)
    if (shown_memory(a.in.w.cfg, name, true))
      md += fmt::format("| {} | {} | {} | {} | {} | {} |\n", name, at(s, "sectors"), at(s, "asleep_sector_cycles"),
                        pct(at(s, "asleep_sector_cycles"), at(s, "sectors") * a.cycles), pct(at(s, "model_asleep"), at(s, "model_all")),
                        at(s, "barrier_stall"));
  md += "\nModelled: per part, the sectors its PMU frame leaves asleep times the part's cycles in the streamed "
        "program's timing model (what the DESCNet exploration's static energy assumes). Every sector's sleeps and "
        "wake-ups are checked against the frame model's.\n";
  return md;
}

// With --trace: the report's trace line, after writing the .gtkw, which opens on the first instruction:
// from the reset release (the program's start_i, so its DMA loads are included) to the cycle after its
// last engine frame's op_done_o; the first cycles when the testbench does not say when that was. `gtkw`
// gets the .gtkw's path.
std::string chip_trace_md(const ChipReport& a, std::string& gtkw) {
  const auto& instrs = a.g.instrs;
  const bool first_done = !instrs.empty() && instrs.front().second.count("done") && instrs.front().second.at("done") > 0;
  const std::uint64_t shown =
      first_done ? static_cast<std::uint64_t>(instrs.front().second.at("done")) + 2
                 : std::min<std::uint64_t>(static_cast<std::uint64_t>(std::max(1LL, a.g.sim_cycles)), sim::kTraceFirstCycles);
  return sim::trace_report_line(*a.r.trace, emit::kChipModule, sim::read_trace_groups(a.r.rtl, emit::kChipModule),
                           sim::trace_window(a.run.out, a.run.period_ps, 0, shown), gtkw);
}

// The Markdown report (`gtkw` gets the .gtkw's path with --trace).
std::string chip_report_md(const ChipReport& a, std::string& gtkw) {
  const StreamDump& sd = a.run.sd;
  std::string md = chip_summary_md(a) + chip_instrs_md(a.g) + chip_sequencer_md(a) + chip_offchip_md(a.g.dram) +
                   chip_memories_md(a) + chip_sectors_md(a);
  md += fmt::format("\n- checks: {} store beats and {} operations' regions ({} elements) against the golden model, then the whole "
                    "DRAM image ({} bytes)\n",
                    sd.store_beats, at(a.g.checks, "ops"), at(a.g.checks, "elements"), sd.dram_bytes);
  md += fmt::format("- simulation: {:.1f} s for {} cycles{}; model build {:.1f} s\n", a.run.seconds, a.g.sim_cycles,
                    a.r.trace ? ", FST tracing on" : "", a.r.build_s);
  if (a.r.trace) md += chip_trace_md(a, gtkw);
  md += sim::problems_section(a.g.problems);
  return md;
}

// The JSON report: the Markdown report's figures, the log's stat lines, and the coverage files and bins
// (`gtkw`: the .gtkw's path).
nlohmann::ordered_json chip_report_json(const ChipReport& a, const std::string& gtkw) {
  const Workload& w = a.in.w;
  const ChipLog& g = a.g;
  const StreamDump& sd = a.run.sd;
  nlohmann::ordered_json jins = nlohmann::json::array();
  for (const auto& [name, s] : g.instrs)
    jins.push_back({{"instr", at(s, "index")}, {"name", name}, {"parts", at(s, "parts")}, {"cycles", at(s, "cycles")},
                    {"model_cycles", at(s, "model")}});
  nlohmann::ordered_json jseq;
  for (const auto& c : kClasses) jseq[c[0]] = at(g.seq, c[0]);
  nlohmann::ordered_json jmem;
  for (const auto& [name, s] : g.memories)
    if (shown_memory(w.cfg, name, false)) jmem[name] = s;
  nlohmann::ordered_json jsec = nlohmann::json::array();
  if (!g.pmus.empty())
    for (const auto& [name, s] : g.sectors)
      jsec.push_back({{"memory", name}, {"sector", at(s, "sector")}, {"asleep_cycles", at(s, "asleep_cycles")},
                      {"sleeps", at(s, "sleeps")}, {"wakes", at(s, "wakes")}});
  nlohmann::ordered_json j;
  j["mode"] = "dram";
  j["network"] = w.net.name;
  j["preset"] = w.cfg.name;
  j["pass"] = a.pass;
  j["input"] = a.in.input_name;
  j["label"] = a.in.label;
  j["prediction"] = {{"rtl", at(g.checks, "prediction")}, {"golden", sd.golden}};
  j["array"] = {{"rows", w.cfg.array.rows}, {"cols", w.cfg.array.cols}};
  j["clock_mhz"] = w.cfg.clock.target_mhz;
  j["total_cycles"] = a.cycles;
  j["inferences_per_second"] = a.ips;
  j["array_utilization"] = a.util;
  j["useful_macs"] = a.macs;
  j["stream_model_cycles"] = sd.stream_model_cycles;
  j["stream_model_error_pct"] = stream_model_error_pct(sd.stream_model_cycles, a.cycles);
  j["ideal_memory_program_cycles"] = a.flat;
  j["engine_cycles"] = at(g.program, "engine_cycles");
  j["engine_model_cycles"] = at(g.program, "engine_model");
  j["frames"] = {{"total", sd.frames}, {"engine", sd.engine}, {"dma", sd.dma}, {"pmu", sd.pmu}, {"words", sd.words}};
  j["instructions"] = jins;
  j["sequencer_cycles"] = jseq;
  j["engine_stalls"] = g.engine;
  j["offchip"] = g.dram;
  const dram::DramSpec& dram_spec = a.dram;
  j["dram"] = {{"name", dram_spec.name}, {"peak_gbps", dram_spec.peak_gbps()},
               {"controller", dram::to_string(dram_spec.controller.policy)},
               {"port_bits", w.cfg.offchip.bus_bits}};
  j["memories"] = jmem;
  j["sectors"] = jsec;
  j["simulated_cycles"] = g.sim_cycles;
  j["sim_seconds"] = a.run.seconds;
  j["build_seconds"] = a.r.build_s;
  j["trace"] = a.r.trace.value_or("");
  j["gtkw"] = gtkw;
  j["problems"] = g.problems;
  j["fault"] = a.r.fault;
  j["coverage"] = a.r.coverage && fs::exists(a.run.coverage_dat) ? a.run.coverage_dat.string() : "";
  j["functional_coverage"] = nlohmann::ordered_json::object();
  for (const auto& [bin, n] : g.fcov) j["functional_coverage"][bin] = n;
  j["functional_coverage_na"] = nlohmann::json::array();
  return j;
}

}  // namespace

int run_chip_sim(const WorkloadInput& in, const ChipSimRun& r) {
  const auto t_start = std::chrono::steady_clock::now();
  const ChipRun run = run_chip_tb(in, r);
  const ChipLog log = read_chip_log(run.out);
  const ChipReport report = chip_report(in, r, run, log);
  std::string gtkw;
  const std::string md = chip_report_md(report, gtkw);
  const nlohmann::ordered_json j = chip_report_json(report, gtkw);
  write_file_atomic(r.report_md.string(), md);
  write_file_atomic(r.report_json.string(), j.dump(2) + "\n");
  fmt::print("\n{}\nsim: wrote {} and {} ({:.1f} s in all)\n", md, r.report_md.string(), r.report_json.string(),
             std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count() + r.build_s);
  return report.pass ? 0 : 1;
}

}  // namespace capsgen::cli
