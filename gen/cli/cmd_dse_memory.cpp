// capsgen dse memory: the DESCNet scratchpad exploration (gen/memory, docs/dse-memory.md) on the
// compiler's per-operation usage, accesses and cycles for a preset and a network.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <zlib.h>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "compiler/compiler.hpp"
#include "core/atomic_file.hpp"
#include "core/input_error.hpp"
#include "dram/dram_energy.hpp"
#include "dram/dram_spec.hpp"
#include "golden/workload.hpp"
#include "memory/cacti.hpp"
#include "memory/dse.hpp"
#include "memory/dse_config.hpp"
#include "memory/streamed.hpp"
#include "memory/svg.hpp"

namespace capsgen::cli {
namespace {

using namespace capsgen::memory;
const char* kWho = "capsgen dse memory";

// One gzip member of `text`. configs.csv.gz is a concatenation of members (RFC 1952 allows it; gzip,
// zcat and zlib read it as one stream), so each job's rows are compressed on its worker thread.
std::string gzip_member(const std::string& text) {
  z_stream z{};
  if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) throw std::runtime_error("zlib init");
  std::string out(deflateBound(&z, uLong(text.size())) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = uInt(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = uInt(out.size());
  const int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (rc != Z_STREAM_END) throw std::runtime_error("zlib deflate");
  return out;
}

// configs.csv.gz, streamed to <path>.tmp and renamed when complete.
class GzCsv {
 public:
  explicit GzCsv(std::string path) : path_(std::move(path)), tmp_(path_ + ".tmp") {
    f_ = std::fopen(tmp_.c_str(), "wb");
    if (!f_) throw InputError(path_, 0, 0, "--out", "cannot create file");
  }
  ~GzCsv() {
    if (f_) {
      std::fclose(f_);
      std::remove(tmp_.c_str());
    }
  }
  void write(const std::string& gz) {
    if (!gz.empty() && std::fwrite(gz.data(), 1, gz.size(), f_) != gz.size())
      throw InputError(path_, 0, 0, "--out", "write failed");
  }
  void commit() {
    const int rc = std::fclose(f_);
    f_ = nullptr;
    std::error_code ec;
    if (rc == 0) std::filesystem::rename(tmp_, path_, ec);
    if (rc != 0 || ec) {
      std::remove(tmp_.c_str());
      throw InputError(path_, 0, 0, "--out", "cannot write file");
    }
  }

 private:
  std::string path_, tmp_;
  std::FILE* f_ = nullptr;
};

std::string kib(long long b) { return b ? fmt::format("{} KiB", b / 1024) : "-"; }

std::string best_markdown(const std::vector<OpProfile>& ops, const std::vector<ConfigDetail>& best, const DseResult& r,
                          double offchip_mj, bool streamed, bool total, double clock_mhz,
                          const std::string& title) {
  std::string o = fmt::format("# DESCNet memory exploration: {}\n\n{} configurations evaluated ({} evaluation{}), {} on the "
                              "Pareto front (area, {} energy per inference).\n\n",
                              title, r.evaluated - r.skipped, streamed ? "streamed" : "flat-profile",
                              r.skipped ? fmt::format("; {} not evaluated", r.skipped) : "", r.pareto.size(),
                              total ? "on-chip memory + off-chip DRAM" : "on-chip memory");
  o += total ? "## Lowest on-chip + off-chip energy per option (DESCNet Table I, with the DRAM)\n\n"
             : "## Lowest-energy configuration per option (DESCNet Table I)\n\n";
  o += 
       "| option | id | shared SZ/SC | data SZ/SC | weight SZ/SC | acc SZ/SC | area mm2 | dynamic mJ | static mJ | wake-up nJ | energy mJ | off-chip mJ |\n"
       "|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& d : best) {
    const ConfigPoint& p = d.point;
    o += fmt::format("| {} | {} |", option_name(p.option), p.id);
    for (int m = 0; m < kMems; ++m) o += p.bytes[m] ? fmt::format(" {} / {} |", kib(p.bytes[m]), p.sectors[m]) : " - |";
    o += fmt::format(" {:.3f} | {:.4f} | {:.4f} | {:.3f} | {:.4f} | {:.4f} |\n", p.area_mm2, p.dynamic_mj, p.static_mj,
                     p.wakeup_mj * 1e6, p.energy_mj(), p.offchip_mj);
  }
  o += "\n## Breakdown per memory (DESCNet Table III / Fig. 19)\n\n"
       "| option | memory | area mm2 | gating mm2 | dynamic mJ | static mJ | wake-up nJ | asleep leaks | wake-up cycles | figures from |\n"
       "|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& d : best)
    for (int m = 0; m < kMems; ++m)
      if (d.point.bytes[m]) {
        const SramFigures& f = d.figures[m];
        const bool pg = d.point.sectors[m] > 1;
        o += fmt::format("| {} | {} | {:.3f} | {:.3f} | {:.4f} | {:.4f} | {:.3f} | {} | {} | {} |\n", option_name(d.point.option),
                         mem_name(m), d.area[m], f.pg_area_mm2, d.dynamic[m], d.leak[m], d.wakeup[m] * 1e6,
                         pg ? fmt::format("{:.0f}%", 100 * f.sleep_leak_fraction) : "-",
                         pg ? fmt::format("{} ({:.3f} ns)", wake_cycles(f, clock_mhz), f.wake_latency_ns) : "-", f.source);
      }
  o += "\n## On-chip energy per operation, mJ (DESCNet Fig. 19d; dynamic + static, wake-up left out)\n\n| operation |";
  for (const auto& d : best) o += fmt::format(" {} |", option_name(d.point.option));
  o += "\n|---|";
  for (std::size_t k = 0; k < best.size(); ++k) o += "---|";
  o += "\n";
  for (std::size_t i = 0; i < ops.size(); ++i) {
    o += "| " + ops[i].name + " |";
    for (const auto& d : best) o += fmt::format(" {:.4f} |", d.op_energy_mj[i]);
    o += "\n";
  }
  if (streamed) {
    o += "\n## The streamed program of each (docs/dse-memory.md section 7)\n\n"
         "Cycles from the stream timing model, accesses from the access model, sector power from the frame program's PMU\n"
         "frames: the program the chip runs with these memories. The off-chip traffic changes with the memories (smaller\n"
         "ones cut operations into more parts).\n\n"
         "| option | id | cycles | inferences/s | DRAM read B | DRAM written B | off-chip mJ |\n|---|---|---|---|---|---|---|\n";
    for (const auto& d : best)
      o += fmt::format("| {} | {} | {} | {:.1f} | {} | {} | {:.4f} |\n", option_name(d.point.option), d.point.id, d.cycles,
                       d.cycles ? clock_mhz * 1e6 / double(d.cycles) : 0.0, d.dram_read_bytes, d.dram_write_bytes,
                       d.point.offchip_mj);
    o += fmt::format("\nSizes the chip cannot run: {} configurations not evaluated.\n", r.skipped);
  } else {
    o += fmt::format("\nOff-chip DRAM energy (same for every configuration): {:.4f} mJ per inference.\n", offchip_mj);
  }
  o += "\n## Operations (usage in bytes; accesses in bytes)\n\n"
       "| operation | cycles | D_i | W_i | A_i | data rd/wr | weight rd/wr | acc rd/wr | off-chip rd/wr |\n"
       "|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& op : ops)
    o += fmt::format("| {} | {} | {} | {} | {} | {}/{} | {}/{} | {}/{} | {}/{} |\n", op.name, op.cycles, op.usage[kData],
                     op.usage[kWeight], op.usage[kAcc], op.reads[kData], op.writes[kData], op.reads[kWeight],
                     op.writes[kWeight], op.reads[kAcc], op.writes[kAcc], op.offchip_rd, op.offchip_wr);
  return o;
}

nlohmann::ordered_json point_json(const ConfigPoint& p) {
  nlohmann::ordered_json j{{"id", p.id}, {"option", option_name(p.option)}};
  for (int m = 0; m < kMems; ++m)
    if (p.bytes[m]) j[mem_name(m)] = {{"kib", p.bytes[m] / 1024}, {"sectors", p.sectors[m]}};
  j["area_mm2"] = p.area_mm2;
  j["dynamic_mj"] = p.dynamic_mj;
  j["static_mj"] = p.static_mj;
  j["wakeup_nj"] = p.wakeup_mj * 1e6;
  j["energy_mj"] = p.energy_mj();
  j["offchip_mj"] = p.offchip_mj;
  return j;
}

// The command's options (docs/dse-memory.md).
Args memory_args() {
  Args args("dse memory", "--config PRESET.yaml --model NET.yaml [options]",
            "DESCNet (docs/dse-memory.md): compiles the network for the preset, takes per operation the on-chip\n"
            "usage D_i, W_i, A_i, the accesses and the cycles, and evaluates every SMP, SEP and HY scratchpad\n"
            "(with and without sector power gating; Eq. 1-2, Algorithms 1-2) for area and energy per inference.\n"
            "Writes configs.csv.gz, pareto.csv, best.md, summary.json and SVG plots to --out.");
  args.option("config", "FILE", "accelerator preset (configs/*.yaml)")
      .option("model", "FILE", "network description (models/*.yaml)")
      .option("tech", "FILE", "SRAM technology file (configs/tech/sram-32nm.yaml: DESCNet's Table III calibration)",
              "configs/tech/sram-cacti7-32nm.yaml")
      .option("sleep", "retentive|non-retentive", "sleep style of a gated sector (default: the technology file's)")
      .option("cacti", "FILE", "CACTI / CACTI-P output whose figures replace the model's for its sizes")
      .option("dram", "FILE", "DRAM data file for the off-chip energy", "configs/dram/micron-mt41j256m8-ddr3-1600.yaml")
      .option("out", "DIR", "output directory", "build/dse-memory")
      .option("jobs", "N", "threads (also -j N)", "1")
      .option("max-sectors", "N", "largest sector count explored (power of two >= 2; default 512, with --streamed 32:\n"
                                  "a PMU frame's awake field)")
      .option("extra-sizes", "KIB,...", "sizes acceptable besides powers of two (DESCNet's; 'none')", "25,108,450,460")
      .option("objective", "onchip|total", "what the front and the best per option minimize besides area: the on-chip\n"
                                           "memories' energy (DESCNet) or that plus the off-chip DRAM's (with --streamed the\n"
                                           "DRAM traffic depends on the memories)", "onchip")
      .option("size-steps", "N", "SEP memories also up to N powers of two larger than Eq. 2's (useful with --streamed)", "0")
      .flag("sep-range", "SEP memories of every size of Algorithm 1's range up to Eq. 2's, not only Eq. 2's (useful\n"
                         "with --streamed: the compiler cuts the network into more parts for smaller memories)")
      .option("seed", "N", "seed of the random weights used for quantization", "1")
      .flag("streamed", "evaluate each configuration on the program the chip runs with its memories (docs/dse-memory.md\n"
                        "section 7): compile the network into parts for every size tuple, take cycles, accesses,\n"
                        "awake sectors and wake-ups from the stream timing, access and frame models; sizes the chip\n"
                        "cannot run are skipped with the reason (e.g. SMP shared words under 32 bits)")
      .flag("descnet-sectors", "explore every sector count of sigma(s), also those that do not split a memory into\n"
                               "whole words per bank and sector (capsgen generate cannot build those)")
      .flag("no-csv", "do not write configs.csv.gz")
      .flag("quiet", "no progress");
  return args;
}

// --tech, with --sleep's style of a gated sector.
TechParams tech_option(const Args& args) {
  TechParams tech = load_tech(args.get("tech"));
  if (auto sl = args.get_opt("sleep")) {
    if (*sl != "retentive" && *sl != "non-retentive")
      throw InputError(kWho, 0, 0, "--sleep", fmt::format("expected retentive or non-retentive, got '{}'", *sl));
    if (*sl == "retentive" && tech.model != TechParams::Model::Cacti7)
      throw InputError(kWho, 0, 0, "--sleep", "retentive sleep needs a cacti7 technology file (CACTI-P's sleep leakage)");
    tech.sleep = *sl == "retentive" ? SleepStyle::Retentive : SleepStyle::NonRetentive;
  }
  return tech;
}

// The exploration's options from the command line and the preset (progress and CSV sinks aside).
DseOptions dse_options(const Args& args, const AccelConfig& cfg, long long max_sc, const CactiTable& cacti,
                       const StreamedEvaluator* streamed) {
  DseOptions opt;
  opt.banks = cfg.scratchpad.data.present ? cfg.scratchpad.data.banks : cfg.array.rows;
  opt.max_sectors = int(max_sc);
  for (int m = 0; m < kMems; ++m)
    opt.block_bytes[std::size_t(m)] = std::max(1, stand_in_memory(cfg.scratchpad, m).width_bits / 8);
  if (!args.has("descnet-sectors")) {
    // Sector counts the scratchpads can be built with: words of the preset's memories (the shared
    // memory, absent from SEP presets, takes the data memory's words).
    for (int m = 0; m < kMems; ++m)
      opt.word_bytes[std::size_t(m)] = std::max(1, stand_in_memory(cfg.scratchpad, m).width_bits / 8);
  }
  if (const std::string ex = args.get("extra-sizes"); ex != "none") {
    for (const std::string& item : split_list(ex)) {
      char* end = nullptr;
      const long long v = std::strtoll(item.c_str(), &end, 10);
      if (item.empty() || *end || v < 1 || v > (1LL << 30))
        throw InputError(kWho, 0, 0, "--extra-sizes", fmt::format("expected KiB values in [1, 2^30], got '{}'", item));
      opt.extra_sizes.push_back(v * 1024);
    }
  }
  opt.threads = int(args.get_int("jobs", 1, 256));
  opt.size_steps = int(args.get_int("size-steps", 0, 8));
  opt.sep_range = args.has("sep-range");
  const std::string objective = args.get("objective");
  if (objective != "onchip" && objective != "total")
    throw InputError(kWho, 0, 0, "--objective", fmt::format("expected onchip or total, got '{}'", objective));
  opt.objective_total = objective == "total";
  opt.clock_mhz = cfg.clock.target_mhz;
  if (!cacti.empty()) opt.cacti = &cacti;
  opt.streamed = streamed;
  return opt;
}

// The flat program's off-chip traffic and DRAM energy per inference.
struct OffChip {
  double rd_pj_b = 0, wr_pj_b = 0;  // per byte
  double mj = 0;
  long long rd = 0, wr = 0, cycles = 0;
};

// Off-chip: streaming DDR3 bursts, ACT+PRE amortized over a row (docs/dse-memory.md section 2).
OffChip offchip_of(const dram::DramSpec& dspec, const std::vector<OpProfile>& ops) {
  OffChip o;
  const dram::CommandEnergy ce = dram::command_energy(dspec);
  const double burst_bytes = double(dspec.org.word_bytes()) * dspec.org.burst_length;
  const double row_bursts = double(dspec.org.columns) / dspec.org.burst_length;
  o.rd_pj_b = (ce.rd_pj + (ce.act_pj + ce.pre_pj) / row_bursts) / burst_bytes;
  o.wr_pj_b = (ce.wr_pj + (ce.act_pj + ce.pre_pj) / row_bursts) / burst_bytes;
  for (const auto& op : ops) {
    o.rd += op.offchip_rd;
    o.wr += op.offchip_wr;
    o.cycles += op.cycles;
  }
  o.mj = (double(o.rd) * o.rd_pj_b + double(o.wr) * o.wr_pj_b) * 1e-9;
  return o;
}

nlohmann::ordered_json summary_json(const Args& args, const Workload& w, const TechParams& tech, const DseOptions& opt,
                                    const DseResult& r, const std::vector<ConfigDetail>& best, const OffChip& off,
                                    bool streamed, double seconds, double dse_seconds) {
  nlohmann::ordered_json j;
  j["network"] = w.net.name;
  j["preset"] = w.cfg.name;
  j["tech"] = tech.name;
  j["sleep"] = tech.sleep == SleepStyle::Retentive ? "retentive" : "non-retentive";
  j["cacti"] = args.get_opt("cacti").value_or("");
  j["banks"] = opt.banks;
  j["max_sectors"] = opt.max_sectors;
  j["buildable_sectors_only"] = !args.has("descnet-sectors");
  j["evaluation"] = streamed ? "streamed" : "flat-profile";
  j["skipped"] = r.skipped;
  j["skipped_why"] = r.skipped_why;
  for (long long e : opt.extra_sizes) j["extra_sizes_kib"].push_back(e / 1024);
  j["threads"] = opt.threads;
  j["size_steps"] = opt.size_steps;
  j["sep_range"] = opt.sep_range;
  j["objective"] = args.get("objective");
  j["configurations"] = r.evaluated;  // enumerated
  j["evaluated"] = r.evaluated - r.skipped;
  for (int o = 0; o < kOptions; ++o) j["configurations_per_option"][option_name(o)] = r.per_option[std::size_t(o)];
  j["pareto_size"] = r.pareto.size();
  j["seconds"] = seconds;          // everything, compiling and quantizing the network included
  j["dse_seconds"] = dse_seconds;  // enumeration, evaluation and configs.csv.gz
  j["cycles_per_inference"] = off.cycles;
  j["offchip"] = {{"read_bytes", off.rd}, {"write_bytes", off.wr}, {"read_pj_per_byte", off.rd_pj_b},
                  {"write_pj_per_byte", off.wr_pj_b}, {"energy_mj", off.mj}};
  for (const auto& d : best) {
    nlohmann::ordered_json b = point_json(d.point);
    b["cycles"] = d.cycles;
    for (int m = 0; m < kMems; ++m)
      if (d.point.bytes[m]) {
        b[mem_name(m)]["figures_from"] = d.figures[m].source;
        if (d.point.sectors[m] > 1) b[mem_name(m)]["wake_cycles"] = wake_cycles(d.figures[m], opt.clock_mhz);
      }
    if (streamed) b["dram_read_bytes"] = d.dram_read_bytes, b["dram_write_bytes"] = d.dram_write_bytes;
    j["best"].push_back(b);
  }
  for (const auto& p : r.pareto) j["pareto"].push_back(point_json(p));
  return j;
}

// sectors.svg: sector ON/OFF per operation of the best -PG options (DESCNet Fig. 30).
std::string sectors_svg(const std::vector<OpProfile>& ops, const std::vector<ConfigDetail>& best,
                        const std::vector<std::string>& names, bool streamed) {
  std::vector<std::string> rows;
  std::vector<std::vector<double>> on;
  for (const auto& d : best) {
    // DESCNet Fig. 30 shows SEP-PG and HY-PG; the streamed evaluation has SMP-PG's PMU frames too.
    if (!option_pg(d.point.option) || (d.point.option == kSmpPg && !streamed)) continue;
    for (int m = 0; m < kMems; ++m) {
      // At most 16 rows per memory: with more sectors a row stands for a group, ON if any is.
      const int sc = d.point.sectors[m], group = std::max(1, sc / 16);
      for (int s = 0; d.point.bytes[m] && s < sc; s += group) {
        rows.push_back(group == 1 ? fmt::format("{} {} s{}", option_name(d.point.option), mem_name(m), s)
                                  : fmt::format("{} {} s{}-{}", option_name(d.point.option), mem_name(m), s, s + group - 1));
        on.emplace_back();
        for (std::size_t i = 0; i < ops.size(); ++i) {
          double awake = 0;  // streamed: the group's mean fraction of the operation's cycles awake
          for (int k = s; streamed && k < s + group; ++k) awake += d.awake_fraction[i][m][std::size_t(k)] / group;
          on.back().push_back(streamed ? awake : s < d.sectors_on[i][m] ? 1.0 : 0.0);
        }
      }
    }
  }
  return svg_grid(streamed ? "Share of each operation's cycles a sector is awake (best SEP-PG, HY-PG, SMP-PG; PMU frames)"
                           : "Sectors ON per operation (best SEP-PG, HY-PG)", rows, names, on);
}

// Plots: usage per operation (Fig. 1/10), area vs energy with the front (Fig. 18), energy breakdown
// of the best per option (Fig. 19), sector ON/OFF per operation of the best -PG options (Fig. 30).
void write_plots(const std::string& dir, const std::vector<OpProfile>& ops, const DseResult& r,
                 const std::vector<ConfigDetail>& best, const std::string& title, bool objective_total, bool streamed) {
  std::vector<std::string> names;
  for (const auto& op : ops) names.push_back(op.name);
  std::vector<Series> usage(3);
  for (int k = kData; k <= kAcc; ++k) {
    usage[std::size_t(k - 1)].name = std::string(mem_name(k)) + " KiB";
    for (const auto& op : ops) usage[std::size_t(k - 1)].values.push_back(double(op.usage[k]) / 1024.0);
  }
  write_file_atomic(dir + "/usage.svg", svg_bars("On-chip usage per operation: " + title, "KiB", names, usage));
  std::vector<ScatterPoint> pts, front;
  for (const auto& p : r.sample) pts.push_back({p.area_mm2, p.ranked_mj(), p.option});
  for (const auto& p : r.pareto) front.push_back({p.area_mm2, p.ranked_mj(), p.option});
  std::vector<std::string> onames;
  for (int o = 0; o < kOptions; ++o) onames.push_back(option_name(o));
  write_file_atomic(dir + "/pareto.svg", svg_scatter(fmt::format("Area vs energy, {} configurations (sample of {})", r.evaluated, pts.size()),
                                                     "area [mm2]", objective_total ? "on-chip + off-chip energy per inference [mJ]" : "on-chip energy per inference [mJ]", pts, onames, front));
  std::vector<std::string> bnames;
  std::vector<Series> parts{{"dynamic", {}}, {"static", {}}, {"wake-up", {}}};
  for (int m = 0; m < kMems; ++m) parts.push_back({std::string(mem_name(m)) + " area/10", {}});
  for (const auto& d : best) {
    bnames.push_back(option_name(d.point.option));
    parts[0].values.push_back(d.point.dynamic_mj);
    parts[1].values.push_back(d.point.static_mj);
    parts[2].values.push_back(d.point.wakeup_mj);
    for (int m = 0; m < kMems; ++m) parts[std::size_t(3 + m)].values.push_back(d.area[m] / 10);
  }
  write_file_atomic(dir + "/energy.svg", svg_bars("Best per option: energy [mJ] and area [mm2/10]", "mJ | mm2/10", bnames, parts));
  write_file_atomic(dir + "/sectors.svg", sectors_svg(ops, best, names, streamed));
}

// The closing lines on stdout (without --quiet).
void print_result(const DseResult& r, const std::vector<ConfigDetail>& best, const OffChip& off, bool streamed,
                  double seconds, double dse_seconds, const std::string& dir, bool csv) {
  fmt::print("{} configurations evaluated in {:.2f} s ({:.2f} s in all); Pareto front: {} points\n", r.evaluated - r.skipped,
             dse_seconds, seconds, r.pareto.size());
  if (streamed) {
    fmt::print("{} configurations not evaluated (the chip cannot run them):\n", r.skipped);
    for (std::size_t i = 0; i < r.skipped_why.size() && i < 5; ++i) fmt::print("  {}\n", r.skipped_why[i]);
    if (r.skipped_why.size() > 5) fmt::print("  ... {} more size tuples (summary.json)\n", r.skipped_why.size() - 5);
  }
  for (const auto& d : best)
    fmt::print("  best {:7} area {:8.3f} mm2, energy {:.4f} mJ on chip + {:.4f} mJ off chip, {} cycles (id {})\n",
               option_name(d.point.option), d.point.area_mm2, d.point.energy_mj(), d.point.offchip_mj, d.cycles, d.point.id);
  if (!streamed) fmt::print("off-chip DRAM {:.4f} mJ per inference\n", off.mj);
  fmt::print("wrote {}/{{pareto.csv,best.md,summary.json,*.svg{}}}\n", dir, csv ? ",configs.csv.gz" : "");
}

}  // namespace

int dse_memory(const std::vector<std::string>& argv_in) {
  std::vector<std::string> argv;
  for (const auto& a : argv_in) argv.push_back(a == "-j" ? "--jobs" : a);
  Args args = memory_args();
  if (!args.parse(argv)) {
    fmt::print("{}", args.help());
    return 0;
  }
  if (!args.positional().empty()) throw InputError(kWho, 0, 0, args.positional().front(), "unexpected argument");
  const auto t0 = std::chrono::steady_clock::now();
  const TechParams tech = tech_option(args);
  CactiTable cacti;
  if (auto c = args.get_opt("cacti")) cacti = load_cacti(*c);
  const dram::DramSpec dspec = dram::load_dram_spec(args.get("dram"));
  const bool streamed = args.has("streamed");
  if (streamed && args.has("descnet-sectors"))
    throw InputError(kWho, 0, 0, "--descnet-sectors", "cannot be combined with --streamed: the chip needs whole words per sector");
  const long long max_sc = args.has("max-sectors") ? args.get_int("max-sectors", 2, streamed ? 32 : 1 << 20) : streamed ? 32 : 512;
  if (max_sc & (max_sc - 1)) throw InputError(kWho, 0, 0, "--max-sectors", fmt::format("{} is not a power of two", max_sc));

  WorkloadSpec spec;
  spec.config_path = args.get("config");
  spec.model_path = args.get("model");
  spec.seed = std::uint64_t(args.get_int("seed", 0, 1LL << 62));
  const Workload w = prepare_workload(spec);
  const isa::Program prog = compile_program(w.cfg, w.net, w.qm);
  const std::vector<OpProfile> ops = profiles_from(analyze_program(w.cfg, prog));
  const StreamedEvaluator evaluator(w.cfg, prog);

  DseOptions opt = dse_options(args, w.cfg, max_sc, cacti, streamed ? &evaluator : nullptr);
  const OffChip off = offchip_of(dspec, ops);
  opt.offchip_rd_pj_per_byte = off.rd_pj_b;
  opt.offchip_wr_pj_per_byte = off.wr_pj_b;
  const long long total = count_configs(ops, opt);
  opt.sample_every = std::max(1LL, total / 4000);
  const bool quiet = args.has("quiet");
  int last_pct = -1;
  opt.progress = [&](long long done, long long all) {
    const int pct = all ? int(100 * done / all) : 100;
    if (!quiet && total > 200000 && pct / 10 != last_pct / 10) {
      fmt::print(stderr, "  {} / {} configurations ({}%)\n", done, all, pct);
      last_pct = pct;
    }
  };
  const std::string dir = args.get("out");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw InputError(dir, 0, 0, "--out", "cannot create directory: " + ec.message());
  std::unique_ptr<GzCsv> gz;
  if (!args.has("no-csv")) {
    gz = std::make_unique<GzCsv>(dir + "/configs.csv.gz");
    gz->write(gzip_member(csv_header()));
    opt.csv_sink = [&](const std::string& s) { gz->write(s); };
    opt.csv_transform = [](const std::string& s) { return s.empty() ? s : gzip_member(s); };
  }
  opt.compile_progress = [&](long long done, long long all) {
    if (!quiet && (done == all || done % 10 == 0)) fmt::print(stderr, "  compiled {} / {} size tuples\n", done, all);
  };
  if (!quiet)
    fmt::print("{} on {}: {} operations, {} configurations, {} threads, {} evaluation\n", w.net.name, w.cfg.name, ops.size(), total,
               opt.threads, streamed ? "streamed" : "flat-profile");
  const auto t1 = std::chrono::steady_clock::now();
  const DseResult r = run_dse(ops, tech, opt);
  if (gz) gz->commit();
  const double dse_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  std::vector<ConfigDetail> best;
  for (int o = 0; o < kOptions; ++o)
    if (r.has_best[std::size_t(o)]) best.push_back(evaluate_config(ops, tech, opt, r.best[std::size_t(o)]));

  std::string pareto = csv_header();
  for (const auto& p : r.pareto) pareto += csv_row(p);
  write_file_atomic(dir + "/pareto.csv", pareto);
  const std::string title = fmt::format("{} on {}", w.net.name, w.cfg.name);
  write_file_atomic(dir + "/best.md", best_markdown(ops, best, r, off.mj, streamed, opt.objective_total, opt.clock_mhz, title));
  const nlohmann::ordered_json j = summary_json(args, w, tech, opt, r, best, off, streamed, seconds, dse_seconds);
  write_file_atomic(dir + "/summary.json", j.dump(2) + "\n");
  write_plots(dir, ops, r, best, title, opt.objective_total, streamed);
  if (!quiet) print_result(r, best, off, streamed, seconds, dse_seconds, dir, gz != nullptr);
  return 0;
}

}  // namespace capsgen::cli
