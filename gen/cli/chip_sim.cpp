// capsgen sim --memory dram: the chip with its memory system; see chip_sim.hpp.
#include "cli/chip_sim.hpp"

#include <fmt/format.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "core/shell.hpp"
#include "sim/results.hpp"
#include "sim/run.hpp"
#include "cli/stream_dump.hpp"
#include "compiler/compiler.hpp"
#include "dram/dram_spec.hpp"
#include "emit/chip.hpp"
#include "core/atomic_file.hpp"
#include "synth/activity.hpp"
#include "synth/tool.hpp"

namespace capsgen::cli {
namespace {

namespace fs = std::filesystem;

std::string pct(long long part, long long whole) { return whole ? fmt::format("{:.1f}%", 100.0 * double(part) / double(whole)) : "-"; }

// One run of tb_chip: the program, its streamed frames, where the log and the results are, and how the
// run ended.
struct ChipRun {
  isa::Program prog;
  StreamDump sd;
  fs::path log, results, coverage_dat;
  std::uint64_t period_ps = 0;
  int rc = 0;
  double seconds = 0;
};

// Compiles the network, streams its program into WORK/stream (cli/stream_dump.hpp) and runs it on tb_chip
// of r.build, with its output in WORK/sim.log and its results document in WORK/results.json.
ChipRun run_chip_tb(const WorkloadInput& in, const ChipSimRun& r) {
  const Workload& w = in.w;
  ChipRun run;
  run.prog = compile_program(w.cfg, w.net, w.qm);
  const fs::path stream = r.work / "stream";
  std::error_code ec;
  fs::remove_all(stream, ec);
  run.sd = dump_stream(w, run.prog, stream.string(), in.input, in.input_name, in.label);

  run.log = r.work / "sim.log";
  run.results = r.work / "results.json";
  run.coverage_dat = r.work / "coverage.dat";
  fs::remove(run.results, ec);
  std::string cmd = fmt::format("{} --rtl {} --program {} --results {}", quote((r.build / "tb_chip").string()),
                                quote(fs::absolute(r.rtl).string()), quote(stream.string()), quote(run.results.string()));
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
  return run;
}

// Everything the report of a tb_chip run is made of, with the figures that follow from its results.
struct ChipReport {
  const WorkloadInput& in;
  const ChipSimRun& r;
  const ChipRun& run;
  const sim::ChipResults& g;
  long long cycles = 0;  // the program's, from start_i to done_o
  bool pass = false;     // sim::run_passed
  long long macs = 0;    // useful MACs of the program's instructions
  double ips = 0, util = 0;
  long long flat = 0;    // the same network's program cycles with an ideal memory (capsgen_accel)
  dram::DramSpec dram{};  // the DRAM the testbench timed (offchip.dram or --dram)
};

// The report of `run`, whose results are `g`.
ChipReport chip_report(const WorkloadInput& in, const ChipSimRun& r, const ChipRun& run, const sim::ChipResults& g) {
  const AccelConfig& cfg = in.w.cfg;
  ChipReport a{in, r, run, g};
  a.cycles = g.program.cycles;
  a.pass = sim::run_passed(g.verdict, run.rc, a.cycles);
  for (const isa::Instr& i : run.prog.instrs) a.macs += instr_stats(cfg, i).useful_macs;
  a.ips = a.cycles ? cfg.clock.target_mhz * 1e6 / double(a.cycles) : 0.0;
  a.util = a.cycles ? double(a.macs) / (double(a.cycles) * cfg.array.rows * cfg.array.cols) : 0.0;
  a.flat = program_cycles(cfg, run.prog);
  a.dram = dram::offchip_dram(cfg.offchip.dram);
  return a;
}

// A model's error against the chip's measured cycles, in percent (negative: the model is short).
double model_error_pct(long long model, long long measured) {
  return measured > 0 ? 100.0 * double(model - measured) / double(measured) : 0.0;
}

// The report's opening: result, input, predictions, the RTL and model, off-chip memory, program, throughput.
std::string chip_summary_md(const ChipReport& a) {
  const Workload& w = a.in.w;
  const ChipSimRun& r = a.r;
  const StreamDump& sd = a.run.sd;
  std::string md = fmt::format("# capsgen sim --memory dram: {} on {}\n\n", w.net.name, w.cfg.name);
  md += fmt::format("- result: **{}**{}\n", a.pass ? "PASS, every DRAM write and every operation's output bit-exact" : "FAIL",
                    a.pass ? "" : fmt::format(" ({} problem line(s) below, exit status of the testbench {})", a.g.verdict.problems.size(), a.run.rc));
  md += fmt::format("- input: {}{}; weights: {}\n", a.in.input_name, a.in.label >= 0 ? fmt::format(", true label {}", a.in.label) : "",
                    r.weights.empty() ? fmt::format("seeded random (seed {})", r.seed) : r.weights);
  md += fmt::format("- class prediction: RTL {} (from the norms in DRAM), golden model {}\n", a.g.prediction.rtl, sd.golden);
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
                    "the chip's timing model (chip_timing: the frame program on models of the units and the DRAM) {} cycles "
                    "({:+.1f}% against the chip); the streamed program's model at the port's or the DRAM's peak rate without "
                    "DRAM latency (stream_timing) {} cycles ({:+.1f}%); the same network with an ideal memory (capsgen_accel) {} "
                    "cycles.\n\n",
                    a.cycles, a.ips, w.cfg.clock.target_mhz, a.util, sd.chip_model.cycles,
                    model_error_pct(sd.chip_model.cycles, a.cycles), sd.stream_model_cycles,
                    model_error_pct(sd.stream_model_cycles, a.cycles), a.flat);
  return md;
}

// The table of instructions (engine cycles against the model) and the engine's totals and stalls.
std::string chip_instrs_md(const sim::ChipResults& g, const ChipTiming& model) {
  std::string md = "| # | operation | parts | engine cycles (RTL) | model | error |\n|---|---|---:|---:|---:|---:|\n";
  for (const sim::ChipInstruction& i : g.instructions)
    md += fmt::format("| {} | {} | {} | {} | {} | {:+.2f}% |\n", i.index, i.name, i.parts, i.cycles, i.model,
                      i.cycles ? 100.0 * double(i.model - i.cycles) / double(i.cycles) : 0.0);
  const long long ec = g.program.engine_cycles, em = g.program.engine_model_cycles;
  const sim::EngineStalls& st = g.engine_stalls;
  md += fmt::format("\n- engine: {} cycles in its frames (model {}, {:+.3f}%; the chip model {}), stalls: data {}, tile {}, "
                    "output {}, write port {} (the chip model {})\n",
                    ec, em, ec ? 100.0 * double(em - ec) / double(ec) : 0.0, model.engine_cycles + model.engine_late,
                    st.stall_data, st.stall_tile, st.stall_out, st.wr_wait, model.engine_write_waits);
  return md;
}

// The frame sequencer's cycle classes: (results key, its field, what the cycles were spent on).
struct SeqClass {
  const char* key;
  long long sim::ChipSequencer::*cycles;
  long long ChipCycleClasses::*model;
  const char* what;
};
constexpr SeqClass kClasses[] = {
    {"fetch", &sim::ChipSequencer::fetch, &ChipCycleClasses::fetch, "fetching a frame"},
    {"engine", &sim::ChipSequencer::engine, &ChipCycleClasses::engine, "issuing an engine frame"},
    {"dma", &sim::ChipSequencer::dma, &ChipCycleClasses::dma, "issuing a DMA frame"},
    {"pmu", &sim::ChipSequencer::pmu, &ChipCycleClasses::pmu, "issuing a PMU frame"},
    {"eng_busy", &sim::ChipSequencer::eng_busy, &ChipCycleClasses::eng_busy, "engine frame waits for the engine"},
    {"wait_dma", &sim::ChipSequencer::wait_dma, &ChipCycleClasses::wait_dma, "engine frame waits for its DMA frames (wait_dma)"},
    {"wait_engine", &sim::ChipSequencer::wait_engine, &ChipCycleClasses::wait_engine, "store waits for the engine (wait_engine)"},
    {"dma_busy", &sim::ChipSequencer::dma_busy, &ChipCycleClasses::dma_busy, "DMA frame waits for the DMA"},
    {"pmu_wait", &sim::ChipSequencer::pmu_wait, &ChipCycleClasses::pmu_wait, "PMU barrier waits for sectors"},
    {"drain", &sim::ChipSequencer::drain, &ChipCycleClasses::drain, "end: waiting for the units"}};

// Where the program's cycles go, by the sequencer's classes.
std::string chip_sequencer_md(const ChipReport& a) {
  const ChipTiming& model = a.run.sd.chip_model;
  std::string md = "\nWhere the program's cycles go (the frame sequencer's classes; they sum to the cycles), beside the chip's "
                   "timing model (compiler/chip_timing.hpp):\n\n"
                   "| class | cycles | share | model |\n|---|---:|---:|---:|\n";
  for (const SeqClass& c : kClasses) {
    const long long n = a.g.sequencer.*c.cycles;
    md += fmt::format("| {} | {} | {} | {} |\n", c.what, n, pct(n, a.cycles), model.classes.*c.model);
  }
  md += fmt::format("| all | {} | 100% | {} ({:+.1f}%) |\n", a.cycles, model.cycles, model_error_pct(model.cycles, a.cycles));
  return md;
}

// The off-chip memory's traffic, row-buffer behaviour, energy and bandwidth.
std::string chip_offchip_md(const sim::DramTraffic& d) {
  return fmt::format(
      "\n- off-chip (the DRAM model, ROMANet mapping): {} read and {} write beats by the DMA, {} bytes; {} column accesses "
      "({} reads, {} writes), row hits {}, misses {}, conflicts {} (hit rate {}); energy {:.3f} uJ ({:.1f} pJ/byte: activate "
      "{:.3f}, precharge {:.3f}, read {:.3f}, write {:.3f}, refresh {:.3f}, standby {:.3f} uJ); bandwidth {:.3f} GB/s over the "
      "DRAM's busy span, {:.3f} GB/s over the program, of {:.1f} GB/s peak\n",
      d.read_beats, d.write_beats, d.bytes, d.requests, d.reads, d.writes, d.row_hits, d.misses, d.conflicts,
      pct(d.row_hits, d.requests), double(d.energy_pj) * 1e-6, double(d.pj_per_byte_x100) / 100.0, double(d.act_pj) * 1e-6,
      double(d.pre_pj) * 1e-6, double(d.rd_pj) * 1e-6, double(d.wr_pj) * 1e-6, double(d.ref_pj) * 1e-6,
      double(d.standby_pj) * 1e-6, double(d.model_gbps_x1000) / 1000.0, double(d.program_gbps_x1000) / 1000.0,
      double(d.peak_gbps_x1000) / 1000.0);
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
  for (const sim::ChipMemory& m : a.g.memories) {
    if (!shown_memory(a.in.w.cfg, m.name, false)) continue;
    md += fmt::format("| {} | {} | {} | {} | {} | {} |\n", m.name, m.eng_rd, m.eng_wr, m.dma_rd, m.dma_wr, m.dma_wait);
  }
  if (a.g.access_checks > 0)
    md += fmt::format("\nThe compiler's access model (gen/compiler/access.hpp) predicts these counters, every sector's bank "
                      "accesses and each of the {} parts' engine accesses per memory: {} figures compared, {}.\n",
                      a.g.access_parts, a.g.access_checks,
                      a.g.verdict.problems.empty() ? "all equal" : "see Problems for any that differ");
  return md;
}

// With PMUs: the sectors' sleep per memory, measured and modelled.
std::string chip_sectors_md(const ChipReport& a) {
  if (a.g.pmus.empty()) return "";
  std::string md = "\n| memory | sectors | sector-cycles asleep | of all sector-cycles | modelled | barrier stall cycles |\n"
                   "|---|---:|---:|---:|---:|---:|\n";
  for (const sim::ChipPmu& p : a.g.pmus)
    if (shown_memory(a.in.w.cfg, p.memory, true))
      md += fmt::format("| {} | {} | {} | {} | {} | {} |\n", p.memory, p.sectors, p.asleep_sector_cycles,
                        pct(p.asleep_sector_cycles, p.sectors * a.cycles), pct(p.model_asleep, p.model_all), p.barrier_stall);
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
  const auto& instrs = a.g.instructions;
  const bool first_done = !instrs.empty() && instrs.front().done > 0;
  const std::uint64_t shown =
      first_done ? static_cast<std::uint64_t>(instrs.front().done) + 2
                 : std::min<std::uint64_t>(static_cast<std::uint64_t>(std::max(1LL, a.g.verdict.simulated_cycles)), sim::kTraceFirstCycles);
  return sim::trace_report_line(*a.r.trace, emit::kChipModule, sim::read_trace_groups(a.r.rtl, emit::kChipModule),
                           sim::trace_window(a.g.verdict.trace_reset_released_ps, a.run.period_ps, 0, shown), gtkw,
                           sim::read_trace_codes(a.r.rtl, emit::kChipModule));
}

// The Markdown report (`gtkw` gets the .gtkw's path with --trace).
std::string chip_report_md(const ChipReport& a, const std::string& energy_md, std::string& gtkw) {
  const StreamDump& sd = a.run.sd;
  std::string md = chip_summary_md(a) + chip_instrs_md(a.g, a.run.sd.chip_model) + chip_sequencer_md(a) + chip_offchip_md(a.g.dram) +
                   chip_memories_md(a) + chip_sectors_md(a) + energy_md;
  md += fmt::format("\n- checks: {} store beats and {} operations' regions ({} elements) against the golden model, then the whole "
                    "DRAM image ({} bytes)\n",
                    sd.store_beats, a.g.checked_operations, a.g.checked_elements, sd.dram_bytes);
  md += fmt::format("- simulation: {:.1f} s for {} cycles{}; model build {:.1f} s\n", a.run.seconds, a.g.verdict.simulated_cycles,
                    a.r.trace ? ", FST tracing on" : "", a.r.build_s);
  if (a.r.trace) md += chip_trace_md(a, gtkw);
  md += sim::problems_section(a.g.verdict.problems);
  return md;
}

// The JSON report: the Markdown report's figures, the log's stat lines, and the coverage files and bins
// (`gtkw`: the .gtkw's path).
// The report's figures of the run's parts (JSON): instructions, sequencer classes, engine stalls, the
// off-chip traffic, the shown memories' port counters, and with PMUs the sectors.
void chip_parts_json(const ChipReport& a, nlohmann::ordered_json& j) {
  const sim::ChipResults& g = a.g;
  nlohmann::ordered_json jins = nlohmann::json::array();
  for (const sim::ChipInstruction& i : g.instructions)
    jins.push_back({{"instr", i.index}, {"name", i.name}, {"parts", i.parts}, {"cycles", i.cycles}, {"model_cycles", i.model}});
  j["instructions"] = jins;
  for (const SeqClass& c : kClasses) j["sequencer_cycles"][c.key] = g.sequencer.*c.cycles;
  const sim::EngineStalls& st = g.engine_stalls;
  j["engine_stalls"] = {{"stall_data", st.stall_data}, {"stall_out", st.stall_out}, {"stall_tile", st.stall_tile}, {"wr_wait", st.wr_wait},
                        {"wr_wait_chip_model", a.run.sd.chip_model.engine_write_waits}};
  const sim::DramTraffic& d = g.dram;
  j["offchip"] = {{"act_pj", d.act_pj},         {"bytes", d.bytes},
                  {"conflicts", d.conflicts},   {"energy_pj", d.energy_pj},
                  {"misses", d.misses},         {"model_gbps_x1000", d.model_gbps_x1000},
                  {"peak_gbps_x1000", d.peak_gbps_x1000}, {"pj_per_byte_x100", d.pj_per_byte_x100},
                  {"pre_pj", d.pre_pj},         {"program_gbps_x1000", d.program_gbps_x1000},
                  {"rd_pj", d.rd_pj},           {"read_beats", d.read_beats},
                  {"reads", d.reads},           {"ref_pj", d.ref_pj},
                  {"requests", d.requests},     {"row_hits", d.row_hits},
                  {"standby_pj", d.standby_pj}, {"wr_pj", d.wr_pj},
                  {"write_beats", d.write_beats}, {"writes", d.writes}};
  nlohmann::ordered_json jmem = nlohmann::ordered_json::object();
  for (const sim::ChipMemory& m : g.memories)
    if (shown_memory(a.in.w.cfg, m.name, false))
      jmem[m.name] = {{"dma_rd", m.dma_rd}, {"dma_wait", m.dma_wait}, {"dma_wr", m.dma_wr}, {"eng_rd", m.eng_rd}, {"eng_wr", m.eng_wr}};
  j["memories"] = jmem;
  nlohmann::ordered_json jsec = nlohmann::json::array();
  if (!g.pmus.empty())
    for (const sim::ChipSector& s : g.sectors)
      jsec.push_back({{"memory", s.memory}, {"sector", s.sector}, {"asleep_cycles", s.asleep_cycles}, {"sleeps", s.sleeps},
                      {"wakes", s.wakes}});
  j["sectors"] = jsec;
}

// The JSON report: the Markdown report's figures, the testbench's results, and the coverage files and
// bins (`gtkw`: the .gtkw's path).
nlohmann::ordered_json chip_report_json(const ChipReport& a, const std::string& gtkw) {
  const Workload& w = a.in.w;
  const sim::ChipResults& g = a.g;
  const StreamDump& sd = a.run.sd;
  nlohmann::ordered_json j;
  j["mode"] = "dram";
  j["network"] = w.net.name;
  j["preset"] = w.cfg.name;
  j["pass"] = a.pass;
  j["input"] = a.in.input_name;
  j["label"] = a.in.label;
  j["prediction"] = {{"rtl", g.prediction.rtl}, {"golden", sd.golden}};
  j["array"] = {{"rows", w.cfg.array.rows}, {"cols", w.cfg.array.cols}};
  j["clock_mhz"] = w.cfg.clock.target_mhz;
  j["total_cycles"] = a.cycles;
  j["inferences_per_second"] = a.ips;
  j["array_utilization"] = a.util;
  j["useful_macs"] = a.macs;
  j["stream_model_cycles"] = sd.stream_model_cycles;
  j["stream_model_error_pct"] = model_error_pct(sd.stream_model_cycles, a.cycles);
  j["chip_model_cycles"] = sd.chip_model.cycles;
  j["chip_model_error_pct"] = model_error_pct(sd.chip_model.cycles, a.cycles);
  nlohmann::ordered_json model_classes;
  for (const SeqClass& c : kClasses) model_classes[c.key] = sd.chip_model.classes.*c.model;
  j["chip_model_sequencer_cycles"] = model_classes;
  j["ideal_memory_program_cycles"] = a.flat;
  j["engine_cycles"] = g.program.engine_cycles;
  j["engine_model_cycles"] = g.program.engine_model_cycles;
  j["frames"] = {{"total", sd.frames}, {"engine", sd.engine}, {"dma", sd.dma}, {"pmu", sd.pmu}, {"words", sd.words}};
  j["access_model_figures"] = g.access_checks;  // memory counter figures equal to the compiler's access model
  chip_parts_json(a, j);
  const dram::DramSpec& dram_spec = a.dram;
  j["dram"] = {{"name", dram_spec.name}, {"peak_gbps", dram_spec.peak_gbps()},
               {"controller", dram::to_string(dram_spec.controller.policy)},
               {"port_bits", w.cfg.offchip.bus_bits}};
  j["simulated_cycles"] = g.verdict.simulated_cycles;
  j["sim_seconds"] = a.run.seconds;
  j["build_seconds"] = a.r.build_s;
  j["trace"] = a.r.trace.value_or("");
  j["gtkw"] = gtkw;
  j["problems"] = g.verdict.problems;
  j["fault"] = a.r.fault;
  j["coverage"] = a.r.coverage && fs::exists(a.run.coverage_dat) ? a.run.coverage_dat.string() : "";
  j["functional_coverage"] = nlohmann::ordered_json::object();
  for (const auto& [bin, n] : g.coverage.bins) j["functional_coverage"][bin] = n;
  j["functional_coverage_na"] = g.coverage.na;
  return j;
}

// --activity FILE: the toggle counts of the run's coverage file as a capsgen.activity/1 document.
void write_activity(const ChipReport& a, const std::string& path) {
  if (!fs::exists(a.run.coverage_dat))
    throw std::runtime_error(fmt::format("--activity: the run wrote no {}", a.run.coverage_dat.string()));
  synth::ActivityDoc doc =
      synth::activity_from_coverage(synth::read_text(a.run.coverage_dat), a.run.coverage_dat.string(), emit::kChipModule);
  doc.preset = a.in.w.cfg.name;
  doc.network = a.in.w.net.name;
  doc.cycles = a.g.verdict.simulated_cycles;
  doc.program_cycles = a.cycles;
  doc.clock_mhz = a.in.w.cfg.clock.target_mhz;
  doc.useful_macs = a.macs;
  write_file_atomic(path, synth::activity_json(doc));
  fmt::print("sim: wrote the switching activity of {} bits to {}\n", doc.toggles.size(), path);
}

}  // namespace

int run_chip_sim(const WorkloadInput& in, const ChipSimRun& r) {
  const auto t_start = std::chrono::steady_clock::now();
  const ChipRun run = run_chip_tb(in, r);
  const sim::ChipResults results = sim::chip_results_of_run(run.results, run.rc);
  const ChipReport report = chip_report(in, r, run, results);
  const ChipEnergy energy = chip_energy({in.w.cfg, in.w.net.name, results, report.cycles, report.macs}, r.energy);
  if (r.activity) write_activity(report, *r.activity);
  std::string gtkw;
  const std::string md = chip_report_md(report, chip_energy_md(energy), gtkw);
  nlohmann::ordered_json j = chip_report_json(report, gtkw);
  j["energy"] = chip_energy_json(energy);
  write_file_atomic(r.report_md.string(), md);
  write_file_atomic(r.report_json.string(), j.dump(2) + "\n");
  fmt::print("\n{}\nsim: wrote {} and {} ({:.1f} s in all)\n", md, r.report_md.string(), r.report_json.string(),
             std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count() + r.build_s);
  return report.pass ? 0 : 1;
}

}  // namespace capsgen::cli
