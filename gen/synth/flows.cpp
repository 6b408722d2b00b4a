#include "synth/flows.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <optional>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "core/input_error.hpp"
#include "synth/cell_models.hpp"
#include "synth/constraints.hpp"
#include "synth/liberty.hpp"
#include "synth/parse.hpp"
#include "synth/power.hpp"
#include "synth/activity.hpp"
#include "synth/report.hpp"
#include "synth/templates.hpp"
#include "synth/tool.hpp"

namespace capsgen::synth {
namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

std::vector<std::string> resolve_tops(const RtlInfo& rtl, const std::vector<std::string>& tops) {
  if (tops.empty()) return rtl.roots();
  if (tops.size() == 1 && tops[0] == "all") return rtl.modules;
  for (const std::string& t : tops)
    if (!rtl.has_module(t)) {
      std::string known;
      for (const auto& m : rtl.modules) known += (known.empty() ? "" : ", ") + m;
      throw InputError("capsgen synth", 0, 0, "--top", fmt::format("no module '{}' in the RTL (modules: {})", t, known));
    }
  return tops;
}

namespace {

// ------------------------------------------------------------------ helpers

struct Ctx {
  const AccelConfig& cfg;
  const RtlInfo& rtl;
  const SynthOptions& opt;
  fs::path dir;  // out_dir/<target>
  std::string yosys;
  double period_ns = 0;
  void progress(const std::string& s) const {
    if (!opt.quiet) fmt::print("capsgen synth: {}\n", s);
    std::fflush(stdout);
  }
};

std::string read_verilog_lines(const RtlInfo& rtl) {
  std::string s;
  for (const fs::path& f : rtl.files) s += fmt::format("read_verilog -sv {}\n", f.string());
  return s;
}

std::string rel(const fs::path& p, const fs::path& base) {
  std::error_code ec;
  auto r = fs::relative(p, base, ec);
  return ec || r.empty() ? p.string() : r.string();
}

// Runs Yosys on a script; throws a runtime_error with the log tail when it fails.
ToolRun run_yosys(const Ctx& c, const fs::path& script, const fs::path& log) {
  // In the RTL directory, so that $readmemh/$readmemb find their data files as in simulation.
  ToolRun r = run_tool({c.yosys, "-q", "-l", log.string(), "-s", script.string()}, fs::path(log).concat(".out"), c.rtl.dir);
  if (r.exit_code != 0)
    throw std::runtime_error(fmt::format("yosys failed (exit {}) on {}; log {}:\n{}", r.exit_code, script.string(),
                                         log.string(), tail_lines(log, 15)));
  return r;
}

std::map<std::string, std::vector<Port>> top_ports(const Ctx& c, const std::vector<std::string>& tops) {
  std::string script = "# capsgen synth: port lists of the top modules\n" + read_verilog_lines(c.rtl);
  for (const std::string& t : tops)
    script += fmt::format("tee -q -o {} portlist {}\n", (c.dir / fmt::format("ports_{}.txt", t)).string(), t);
  const fs::path sp = c.dir / "ports.ys";
  write_text(sp, script);
  run_yosys(c, sp, c.dir / "ports.yosys.log");
  std::map<std::string, std::vector<Port>> out;
  for (const std::string& t : tops) out[t] = parse_portlist(read_text(c.dir / fmt::format("ports_{}.txt", t)));
  return out;
}

std::string display_module(const std::string& m) {
  // "$paramod$722ad5...\capsgen_pe" or "$paramod\capsgen_pe\DataWidth=8" -> "capsgen_pe"
  if (m.rfind("$paramod", 0) != 0) return m;
  const auto b = m.find('\\');
  if (b == std::string::npos) return m;
  std::string rest = m.substr(b + 1);
  const auto e = rest.find('\\');
  return e == std::string::npos ? rest : rest.substr(0, e);
}

// "$flatten\\u_act_c0.\\u_exp_rom.$auto$proc_rom.cc:150:do_switch$698" -> "u_act_c0.u_exp_rom"
std::string clean_memory_name(std::string n) {
  if (n.rfind("$flatten", 0) == 0) n.erase(0, 8);
  n.erase(std::remove(n.begin(), n.end(), '\\'), n.end());
  if (const auto p = n.find(".$auto$"); p != std::string::npos) n = n.substr(0, p);
  return n;
}

double round_to(double v, int digits) {
  const double f = std::pow(10.0, digits);
  return std::round(v * f) / f;
}

// Area, cell and flip-flop counts of one set of cell counts (liberty cells only).
struct AreaSum {
  double area = 0;
  long long cells = 0, flops = 0, latches = 0;
  std::map<std::string, long long> by_cell;
  std::vector<std::string> unknown;  // cell types that are neither library cells nor modules
};

AreaSum sum_cells(const std::map<std::string, long long>& counts, const Library& lib,
                  const std::set<std::string>& modules) {
  AreaSum s;
  for (const auto& [type, n] : counts) {
    if (modules.count(type)) continue;
    const LibCell* cell = lib.cell(type);
    if (!cell) {
      s.unknown.push_back(type);
      continue;
    }
    s.area += cell->area * static_cast<double>(n);
    s.cells += n;
    s.by_cell[type] += n;
    if (cell->state) (cell->state->kind == LibState::Kind::kFlipFlop ? s.flops : s.latches) += n;
  }
  return s;
}

json sta_path_json(const StaPath& p, const std::map<std::string, NetlistCell>& cells, const Library& lib) {
  // Register names: the net on the flip-flop's output pin is the RTL register (Yosys keeps it).
  auto reg_name = [&](const std::string& pin_or_inst) -> std::string {
    std::string inst = pin_or_inst;
    auto it = cells.find(inst);
    if (it == cells.end()) return "";
    const LibCell* lc = lib.cell(it->second.type);
    if (!lc || !lc->state) return "";
    for (const LibPin* o : lc->outputs()) {
      auto pin = it->second.pins.find(o->name);
      if (pin != it->second.pins.end()) return pin->second;
    }
    return "";
  };
  json j;
  j["startpoint"] = p.startpoint;
  const std::string sr = reg_name(p.startpoint);
  j["start_register"] = sr.empty() ? p.startpoint : sr;
  j["endpoint"] = p.endpoint;
  const std::string er = reg_name(p.endpoint);
  j["end_register"] = er.empty() ? p.endpoint : er;
  j["arrival_ns"] = p.arrival;
  j["setup_ns"] = p.setup;
  j["output_external_ns"] = p.output_external;
  j["required_ns"] = p.required;
  j["slack_ns"] = p.slack;
  j["period_ns"] = p.period;
  // For a single-cycle path with an ideal clock: the smallest period that meets it.
  const double min_period = p.period - p.slack;
  j["min_period_ns"] = round_to(min_period, 4);
  j["fmax_mhz"] = min_period > 0 ? round_to(1000.0 / min_period, 1) : 0.0;
  j["cells_on_path"] = static_cast<long long>(p.points.size());
  std::map<std::string, int> types;
  for (const auto& [pin, cell] : p.points)
    if (!cell.empty() && cell != "in" && cell != "out") ++types[cell];
  json jt = json::object();
  for (const auto& [t, n] : types) jt[t] = n;
  j["cell_types_on_path"] = jt;
  return j;
}

// ------------------------------------------------------------------ ASIC

// The constraints of one top: its SDC (for OpenSTA) and ABC's driving cell and output load.
struct AsicConstraints {
  fs::path sdc, abc;
};

AsicConstraints write_asic_constraints(const Ctx& c, const std::string& top, const std::vector<Port>& ports,
                                       const fs::path& tdir) {
  SdcOptions so;
  so.top = top;
  so.preset = c.cfg.name;
  so.target_mhz = c.cfg.clock.target_mhz;
  so.io_delay_frac = c.opt.io_delay_frac;
  so.driving_cell = c.opt.driving_cell;
  so.output_load = c.opt.output_load;
  AsicConstraints k;
  k.sdc = c.dir.parent_path() / "constraints" / (top + ".sdc");
  write_text(k.sdc, make_sdc(so, ports));
  k.abc = tdir / "abc.constr";
  write_text(k.abc, fill_template(flow_template("yosys/abc_osu018.constr"),
                                  {{"DRIVING_CELL", c.opt.driving_cell}, {"OUTPUT_LOAD", fmt::format("{:g}", c.opt.output_load)}},
                                  "yosys/abc_osu018.constr"));
  return k;
}

// The Yosys script of one top (yosys/asic_osu018.ys): flattened or hierarchical, netlists to `out`.
std::string asic_yosys_script(const Ctx& c, const std::string& top, const fs::path& abc_constr, bool flat,
                              const std::string& out) {
  const std::string ram_note =
      c.opt.ram == "flops"
          ? "mapped to flip-flops and multiplexers (memory_map): counted in the logic area"
          : "kept as behavioral memories (a RAM macro in a real chip): excluded from the logic area, listed separately";
  const std::string rom_note =
      c.opt.ram == "flops" || c.opt.rom == "logic"
          ? "read-only memories (LUT ROMs) are synthesized to logic (memory_map -rom-only): counted in the logic area"
          : "read-only memories kept as memories (ROM macros): excluded from the logic area, listed separately";
  const std::map<std::string, std::string> vars{
      {"VIEW", flat ? "flattened (cross-boundary optimization; timing and netlists)"
                    : "hierarchical (each module synthesized once; per-module area)"},
      {"RAM_NOTE", ram_note},
      {"READ_VERILOG", read_verilog_lines(c.rtl)},
      {"TOP", top},
      {"FLATTEN", flat ? "flatten" : "# (hierarchy kept)"},
      {"ROM_NOTE", rom_note},
      {"MEMORY_MAP", c.opt.ram == "flops" ? "memory_map" : c.opt.rom == "logic" ? "memory_map -rom-only" : "# (kept as memories)"},
      {"OUT", out},
      {"LIBERTY", c.opt.liberty},
      {"PERIOD_PS", fmt::format("{}", static_cast<long long>(std::llround(c.period_ns * 1000)))},
      {"ABC_CONSTR", abc_constr.string()},
  };
  return fill_template(flow_template("yosys/asic_osu018.ys"), vars, "yosys/asic_osu018.ys");
}

// 1. The hierarchical view: Yosys with the hierarchy kept, the area per module and per instance.
json asic_hierarchical(const Ctx& c, const std::string& top, const Library& lib, const fs::path& tdir,
                       const fs::path& abc_constr, double ge_area) {
  c.progress(fmt::format("{}: Yosys, hierarchical view (per-module area)", top));
  const fs::path sp = tdir / "synth_hier.ys";
  write_text(sp, asic_yosys_script(c, top, abc_constr, false, (tdir / "hier").string()));
  const ToolRun r = run_yosys(c, sp, tdir / "synth_hier.yosys.log");
  const YosysStat st = parse_yosys_stat_json(read_text(tdir / "hier.stat.json"));
  std::set<std::string> mods;
  for (const auto& [m, counts] : st.modules) mods.insert(m);
  // instance counts under the top
  std::map<std::string, long long> inst;
  std::function<void(const std::string&, long long)> walk = [&](const std::string& m, long long k) {
    inst[m] += k;
    auto it = st.modules.find(m);
    if (it == st.modules.end()) return;
    for (const auto& [t, n] : it->second)
      if (mods.count(t)) walk(t, k * n);
  };
  walk(top, 1);
  std::function<double(const std::string&)> total = [&](const std::string& m) -> double {
    auto it = st.modules.find(m);
    if (it == st.modules.end()) return 0;
    double a = sum_cells(it->second, lib, mods).area;
    for (const auto& [t, n] : it->second)
      if (mods.count(t)) a += static_cast<double>(n) * total(t);
    return a;
  };
  json rows = json::array();
  std::set<std::string> names;
  for (const auto& [m, counts] : st.modules) {
    if (!inst.count(m)) continue;
    const AreaSum own = sum_cells(counts, lib, mods);
    std::string name = display_module(m);
    if (!names.insert(name).second) name = m;
    rows.push_back({{"module", name},
                    {"instances", inst[m]},
                    {"own_area_um2", round_to(own.area, 2)},
                    {"own_kge", round_to(own.area / ge_area / 1000, 3)},
                    {"own_cells", own.cells},
                    {"own_flip_flops", own.flops},
                    {"subtree_area_um2", round_to(total(m), 2)},
                    {"area_all_instances_um2", round_to(own.area * static_cast<double>(inst[m]), 2)}});
  }
  std::sort(rows.begin(), rows.end(), [](const json& a, const json& b) {
    return a["area_all_instances_um2"].get<double>() > b["area_all_instances_um2"].get<double>();
  });
  const double hier_total = total(top);
  const YosysChipArea ya = parse_yosys_chip_area(read_text(tdir / "hier.stat.txt"));
  return {{"total_area_um2", round_to(hier_total, 2)},
          {"total_kge", round_to(hier_total / ge_area / 1000, 3)},
          {"yosys_chip_area_um2", ya.top ? json(*ya.top) : json(nullptr)},
          {"modules", rows},
          {"yosys_seconds", round_to(r.seconds, 1)}};
}

// 2. The flattened view: Yosys to the library's cells, the netlists in `out`.*; the logic area, Yosys'
// time and warnings into jt.
void asic_flat_synthesis(const Ctx& c, const std::string& top, const Library& lib, const fs::path& tdir,
                         const fs::path& abc_constr, double ge_area, const std::string& out, json& jt) {
  c.progress(fmt::format("{}: Yosys, flattened synthesis to {}", top, lib.name));
  const fs::path sp = tdir / "synth.ys";
  write_text(sp, asic_yosys_script(c, top, abc_constr, true, out));
  const ToolRun yr = run_yosys(c, sp, tdir / "synth.yosys.log");
  write_text(out + ".sta.v", split_concat_assigns(read_text(out + ".sta.v")));  // for OpenSTA's reader
  const YosysStat st = parse_yosys_stat_json(read_text(tdir / "flat.stat.json"));
  const auto& counts = st.has_design ? st.design : st.modules.at(top);
  const AreaSum sum = sum_cells(counts, lib, {});
  const YosysChipArea ya = parse_yosys_chip_area(read_text(tdir / "flat.stat.txt"));
  std::vector<std::string> unknown;
  long long ram_cells = 0;
  for (const std::string& u : sum.unknown) {
    if (u == "$mem_v2") ram_cells += counts.at(u);
    else unknown.push_back(u);
  }
  json area;
  area["logic_area_um2"] = round_to(sum.area, 2);
  area["logic_kge"] = round_to(sum.area / ge_area / 1000, 3);
  area["cells"] = sum.cells;
  area["flip_flops"] = sum.flops;
  area["latches"] = sum.latches;
  area["yosys_chip_area_um2"] = ya.top ? json(*ya.top) : (ya.modules.count(top) ? json(ya.modules.at(top)) : json(nullptr));
  json bc = json::object();
  for (const auto& [t, n] : sum.by_cell)
    bc[t] = {{"count", n}, {"area_um2", round_to(lib.area(t) * static_cast<double>(n), 2)}};
  area["by_cell"] = bc;
  if (!unknown.empty()) area["unmapped_cells"] = unknown;
  jt["area"] = area;
  jt["yosys_seconds"] = round_to(yr.seconds, 1);
  jt["yosys_warnings"] = yosys_warnings(read_text(tdir / "synth.yosys.log"));
}

// The memories of the flattened design: mapped to logic or left as macros (--ram, --rom).
json asic_memories(const Ctx& c, const Library& lib, const fs::path& tdir) {
  const auto mems = parse_yosys_memories(read_text(tdir / "flat.memories.il"));
  json jm = json::array();
  long long macro_bits = 0, ram_bits = 0, rom_bits = 0;
  // Storage lower bound if built from the library's plain flip-flop (no decoder, no read mux).
  double ff_area = 0;
  std::string ff_cell;
  for (const LibCell& lc : lib.cells)
    if (lc.state && lc.state->kind == LibState::Kind::kFlipFlop && !lc.state->clear && !lc.state->preset &&
        (ff_area == 0 || lc.area < ff_area)) {
      ff_area = lc.area;
      ff_cell = lc.name;
    }
  for (const MemoryInfo& m : mems) {
    const bool rom = m.write_ports == 0;
    const bool mapped = c.opt.ram == "flops" || (rom && c.opt.rom == "logic");
    (rom ? rom_bits : ram_bits) += m.bits();
    if (!mapped) macro_bits += m.bits();
    jm.push_back({{"name", clean_memory_name(m.name)},
                  {"kind", rom ? "ROM" : "RAM"},
                  {"words", m.words},
                  {"width", m.width},
                  {"bits", m.bits()},
                  {"read_ports", m.read_ports},
                  {"write_ports", m.write_ports},
                  {"read", m.sync_read ? "synchronous" : "asynchronous, registered in the logic"},
                  {"implementation", mapped ? "logic (in the area)" : "macro (not in the area)"}});
  }
  return {{"ram_mode", c.opt.ram},
          {"rom_mode", c.opt.ram == "flops" ? "logic" : c.opt.rom},
          {"count", static_cast<long long>(mems.size())},
          {"ram_bits", ram_bits},
          {"rom_bits", rom_bits},
          {"macro_bits", macro_bits},
          {"flip_flop_cell", ff_cell},
          {"macro_flip_flop_storage_um2", round_to(static_cast<double>(macro_bits) * ff_area, 1)},
          {"list", jm}};
}

// An OpenSTA run of the script `tcl` in `dir`, its output in `log`: the log read by `parse` (a report
// with the log's "Error:" lines) and the run's seconds. Throws with the log's tail when OpenSTA exits
// non-zero or reports an error; `what` names the run in that message.
template <class Report>
std::pair<Report, double> run_sta(const fs::path& tcl, const fs::path& log, const fs::path& dir, const std::string& what,
                                  Report (*parse)(const std::string&)) {
  const std::string sta = require_tool("sta", "opensta");
  const ToolRun r = run_tool({sta, "-no_init", "-exit", tcl.string()}, log, dir);
  Report rep = parse(read_text(log));
  if (r.exit_code != 0 || !rep.errors.empty())
    throw std::runtime_error(fmt::format("{} failed (exit {}) on {}; log {}:\n{}", what, r.exit_code, tcl.string(),
                                         log.string(), tail_lines(log, 15)));
  return {std::move(rep), r.seconds};
}

// 3. Static timing: OpenSTA on the flattened netlist `out`.sta.v with the SDC.
json asic_timing(const Ctx& c, const std::string& top, const Library& lib, const fs::path& tdir, const std::string& out,
                 const fs::path& sdc) {
  c.progress(fmt::format("{}: OpenSTA at {:g} MHz ({:.3f} ns)", top, c.cfg.clock.target_mhz, c.period_ns));
  const fs::path tcl = tdir / "sta.tcl";
  write_text(tcl, fill_template(flow_template("sta/sta.tcl"),
                                {{"LIBERTY", c.opt.liberty}, {"NETLIST", out + ".sta.v"}, {"TOP", top}, {"SDC", sdc.string()}},
                                "sta/sta.tcl"));
  const auto [rep, sta_seconds] = run_sta(tcl, tdir / "sta.log", tdir, "OpenSTA", parse_sta_log);
  const auto cells = parse_netlist_cells(read_text(out + ".sta.v"), top);
  json timing;
  timing["target_mhz"] = c.cfg.clock.target_mhz;
  timing["period_ns"] = round_to(c.period_ns, 4);
  timing["registers"] = rep.registers;
  for (const char* sec : {"reg2reg", "worst", "in2reg", "reg2out"}) {
    auto it = rep.sections.find(sec);
    if (it != rep.sections.end() && it->second.found) timing[sec] = sta_path_json(it->second, cells, lib);
  }
  for (const char* sec : {"hold", "hold_reg2reg"}) {
    auto it = rep.sections.find(sec);
    if (it == rep.sections.end() || !it->second.found) continue;
    const json p = sta_path_json(it->second, cells, lib);
    timing[sec] = {{"start_register", p["start_register"]}, {"end_register", p["end_register"]},
                   {"arrival_ns", p["arrival_ns"]}, {"slack_ns", p["slack_ns"]}};
  }
  if (rep.wns) timing["wns_ns"] = *rep.wns;
  if (rep.tns) timing["tns_ns"] = *rep.tns;
  // The design's clock: from the register-to-register paths (I/O paths depend on the assumed
  // budget); a block without registers falls back to its worst path.
  const char* basis_key = timing.contains("reg2reg") ? "reg2reg" : timing.contains("worst") ? "worst" : nullptr;
  if (basis_key) {
    const json basis = timing[basis_key];  // a copy: inserting below may move the elements
    timing["fmax_basis"] = basis_key;
    timing["min_period_ns"] = basis["min_period_ns"];
    timing["fmax_mhz"] = basis["fmax_mhz"];
    timing["meets_target"] = basis["slack_ns"].get<double>() >= 0;
  }
  timing["sta_seconds"] = round_to(sta_seconds, 1);
  return timing;
}

// 5. Power with the activity of a simulated inference (synth/power.hpp): OpenSTA's report_power with
// every cell pin's activity set, the energy over the simulated cycles, and the hand calculation of the
// switching and leakage power beside OpenSTA's.
json asic_power(const Ctx& c, const std::string& top, const Library& lib, const fs::path& tdir, const std::string& out,
                const fs::path& sdc, const ActivityDoc& doc) {
  const ActivityInstance& inst = find_instance(doc, top, c.opt.activity);
  const std::string netlist = read_text(out + ".sta.v");
  const BlockActivity act = map_activity(netlist, top, lib, toggles_below(doc, inst.path), doc.cycles);
  c.progress(fmt::format("{}: OpenSTA power with the activity of {} ({} nets measured, {} propagated, {} defaulted)", top,
                         inst.path, act.nets.measured, act.nets.propagated, act.nets.defaulted));
  const fs::path tcl = tdir / "power.tcl";
  write_text(tcl, power_tcl(c.opt.liberty, out + ".sta.v", top, sdc.string(), act));
  const auto [rep, sta_seconds] = run_sta(tcl, tdir / "power.log", tdir, "OpenSTA power", parse_power_log);
  const double seconds = double(doc.cycles) / (doc.clock_mhz * 1e6);
  auto figures = [&](const PowerFigures& f) {
    return json{{"internal_w", f.internal}, {"switching_w", f.switching}, {"leakage_w", f.leakage}, {"total_w", f.total()}};
  };
  auto energy = [&](const PowerFigures& f) {
    return json{{"internal_pj", f.internal * seconds * 1e12}, {"switching_pj", f.switching * seconds * 1e12},
                {"leakage_pj", f.leakage * seconds * 1e12}, {"total_pj", f.total() * seconds * 1e12}};
  };
  const HandPower hand = hand_power(netlist, top, lib, act, c.period_ns, c.opt.output_load, rep.slews);
  json jp;
  jp["instance"] = inst.path;
  jp["cycles"] = doc.cycles;
  jp["clock_mhz"] = doc.clock_mhz;
  jp["power"] = figures(rep.total);
  jp["sequential"] = figures(rep.sequential);
  jp["combinational"] = figures(rep.combinational);
  jp["energy"] = energy(rep.total);
  jp["nets"] = {{"measured", act.nets.measured}, {"propagated", act.nets.propagated}, {"constant", act.nets.constant},
                {"defaulted", act.nets.defaulted}, {"defaulted_examples", act.nets.defaulted_names}};
  jp["pins_annotated"] = act.pins.size();
  jp["hand"] = {{"switching_w", hand.switching}, {"unclocked_switching_w", hand.unclocked_switching},
                {"internal_w", hand.internal}, {"unclocked_internal_w", hand.unclocked_internal},
                {"leakage_w", hand.leakage}};
  jp["script"] = rel(tcl, c.dir.parent_path());
  jp["sta_seconds"] = round_to(sta_seconds, 1);
  return jp;
}

// The datapath energy document (capsgen.datapath-energy/1) of the tops with power figures.
json datapath_energy_json(const Ctx& c, const ActivityDoc& doc, const json& tops) {
  json j;
  j["schema"] = "capsgen.datapath-energy/1";
  j["preset"] = doc.preset;
  j["network"] = doc.network;
  j["activity"] = c.opt.activity;
  j["cycles"] = doc.cycles;
  j["program_cycles"] = doc.program_cycles;
  j["clock_mhz"] = doc.clock_mhz;
  j["useful_macs"] = doc.useful_macs;
  j["liberty"] = c.opt.liberty;
  j["method"] = "OpenSTA report_power; measured toggles on register and port nets, Najm propagation elsewhere";
  json blocks = json::array();
  double total = 0;
  for (const json& t : tops) {
    if (!t.contains("power")) continue;
    const json& p = t["power"];
    blocks.push_back({{"top", t["top"]}, {"instance", p["instance"]}, {"energy", p["energy"]}, {"power", p["power"]},
                      {"nets", p["nets"]}});
    total += p["energy"]["total_pj"].get<double>();
  }
  j["blocks"] = blocks;
  j["total_pj"] = total;
  return j;
}

// The ASIC flow of one top: constraints, 1. hierarchical and 2. flattened Yosys synthesis, the
// memories, 3. OpenSTA, 4. the gate-level simulation netlist.
json asic_top(const Ctx& c, const std::string& top, const std::vector<Port>& ports, const Library& lib,
              const fs::path& netlist_dir, const ActivityDoc* activity) {
  json jt;
  jt["top"] = top;
  const fs::path tdir = c.dir / top;
  fs::create_directories(tdir);
  const double ge_area = lib.area(c.opt.ge_cell);
  const AsicConstraints k = write_asic_constraints(c, top, ports, tdir);
  jt["sdc"] = rel(k.sdc, c.dir.parent_path());

  if (c.opt.breakdown && !c.rtl.submodules(top).empty())
    jt["hierarchical"] = asic_hierarchical(c, top, lib, tdir, k.abc, ge_area);
  const std::string out = (tdir / "flat").string();
  asic_flat_synthesis(c, top, lib, tdir, k.abc, ge_area, out, jt);
  jt["memories"] = asic_memories(c, lib, tdir);
  jt["timing"] = asic_timing(c, top, lib, tdir, out, k.sdc);
  if (activity) jt["power"] = asic_power(c, top, lib, tdir, out, k.sdc, *activity);

  // 4. gate-level simulation netlist
  const fs::path sim = netlist_dir / (top + ".v");
  fs::copy_file(out + ".sim.v", sim, fs::copy_options::overwrite_existing);
  jt["netlist"] = rel(sim, c.dir.parent_path());
  return jt;
}

json run_asic(const Ctx& c, const std::vector<std::string>& tops) {
  if (!fs::exists(c.opt.liberty))
    throw InputError(c.opt.liberty, 0, 0, "--liberty", "Liberty file not found (Debian package qflow-tech-osu018)");
  const Library lib = load_liberty(c.opt.liberty);
  if (!lib.cell(c.opt.ge_cell))
    throw InputError(c.opt.liberty, 0, 0, "--ge-cell", "no cell " + c.opt.ge_cell + " in the library");
  if (!lib.cell(c.opt.driving_cell))
    throw InputError(c.opt.liberty, 0, 0, "--driving-cell", "no cell " + c.opt.driving_cell + " in the library");
  json j;
  j["liberty"] = {{"file", c.opt.liberty},
                  {"library", lib.name},
                  {"time_unit", lib.time_unit},
                  {"ge_cell", c.opt.ge_cell},
                  {"ge_area_um2", lib.area(c.opt.ge_cell)}};
  j["abc"] = {{"delay_target_ps", std::llround(c.period_ns * 1000)},
              {"driving_cell", c.opt.driving_cell},
              {"output_load", c.opt.output_load}};
  j["io_delay_fraction"] = c.opt.io_delay_frac;
  j["ram_mode"] = c.opt.ram;
  j["rom_mode"] = c.opt.ram == "flops" ? "logic" : c.opt.rom;
  const auto ports = top_ports(c, tops);
  const fs::path nl = c.dir / "netlist";
  fs::create_directories(nl);
  std::optional<ActivityDoc> activity = c.opt.activity_doc;
  if (!activity && !c.opt.activity.empty()) activity = read_activity_of_preset(c.opt.activity, c.cfg.name);
  if (activity)
    for (const std::string& t : tops) find_instance(*activity, t, c.opt.activity);
  json jtops = json::array();
  for (const std::string& t : tops) jtops.push_back(asic_top(c, t, ports.at(t), lib, nl, activity ? &*activity : nullptr));
  j["tops"] = jtops;
  if (activity) {
    const json e = datapath_energy_json(c, *activity, jtops);
    write_text(c.dir / "energy.json", e.dump(2) + "\n");
    j["energy"] = {{"file", rel(c.dir / "energy.json", c.dir.parent_path())}, {"total_pj", e["total_pj"]}};
  }

  // Netlist directory usable wherever the RTL directory is (files.f + cell models + the data files).
  write_text(nl / "osu018_cells.v", cell_models_verilog(lib));
  std::string files = fmt::format(
      "// Generated by capsgen {} -- gate-level netlists of preset {} ({}), for the RTL testbenches.\n"
      "// Cell models from the Liberty functions first, then one flattened netlist per module.\n",
      "synth", c.cfg.name, c.opt.liberty);
  files += "osu018_cells.v\n";
  for (const std::string& t : tops) files += t + ".v\n";
  write_text(nl / "files.f", files);
  // The RTL directory's other files (config.json, activation.json, scratchpad.json, ROM images) for the
  // testbenches, which read them from the directory they are given.
  for (const auto& e : fs::directory_iterator(c.rtl.dir)) {
    const fs::path& f = e.path();
    if (!e.is_regular_file() || f.extension() == ".v" || f.extension() == ".sv" || f.filename() == "files.f") continue;
    fs::copy_file(f, nl / f.filename(), fs::copy_options::overwrite_existing);
  }
  j["netlist_dir"] = rel(nl, c.dir.parent_path());
  return j;
}

// ------------------------------------------------------------------ iCE40

json run_ice40(const Ctx& c, const std::vector<std::string>& tops) {
  const std::string nextpnr = require_tool("nextpnr-ice40", "nextpnr-ice40");
  const auto ports = top_ports(c, tops);
  std::vector<Ice40Device> devices;
  for (const Ice40Device& d : ice40_devices())
    if (c.opt.ice40_device == "auto" || c.opt.ice40_device == d.name) devices.push_back(d);
  if (devices.empty())
    throw InputError("capsgen synth", 0, 0, "--device", "unknown iCE40 device '" + c.opt.ice40_device + "' (auto, up5k, hx8k)");
  json j;
  j["harness"] = "capsgen_fpga_harness: serial I/O shift chains around the top (5 pins)";
  j["freq_target_mhz"] = c.cfg.clock.target_mhz;
  json jtops = json::array();
  for (const std::string& top : tops) {
    json jt;
    jt["top"] = top;
    const fs::path tdir = c.dir / top;
    fs::create_directories(tdir);
    const fs::path harness = tdir / "harness.v";
    write_text(harness, make_fpga_harness(top, ports.at(top)));
    json attempts = json::array();
    for (const Ice40Device& d : devices) {
      json ja;
      ja["device"] = d.name;
      ja["package"] = d.package;
      ja["dsp"] = d.use_dsp;
      const std::string out = (tdir / d.name).string();
      const fs::path sp = tdir / (d.name + ".ys");
      write_text(sp, fill_template(flow_template("yosys/ice40.ys"),
                                   {{"READ_VERILOG", read_verilog_lines(c.rtl)},
                                    {"HARNESS", harness.string()},
                                    {"TOP", top},
                                    {"DSP", d.use_dsp ? "-dsp" : ""},
                                    {"OUT", out}},
                                   "yosys/ice40.ys"));
      c.progress(fmt::format("{}: synth_ice40{} for {}", top, d.use_dsp ? " -dsp" : "", d.name));
      const ToolRun yr = run_yosys(c, sp, tdir / (d.name + ".yosys.log"));
      ja["yosys_seconds"] = round_to(yr.seconds, 1);
      const YosysStat st = parse_yosys_stat_json(read_text(out + ".stat.json"));
      auto counts_json = [](const std::map<std::string, long long>& m) {
        json o = json::object();
        for (const auto& [k, v] : m) o[k] = v;
        return o;
      };
      // The hierarchy is kept (-noflatten): the DUT's cells are its own plus its submodules'.
      std::function<void(const std::string&, long long, std::map<std::string, long long>&)> expand =
          [&](const std::string& m, long long k, std::map<std::string, long long>& acc) {
            auto it = st.modules.find(m);
            if (it == st.modules.end()) return;
            for (const auto& [t, n] : it->second) {
              if (st.modules.count(t)) expand(t, k * n, acc);
              else acc[t] += k * n;
            }
          };
      std::map<std::string, long long> dut;
      expand(top, 1, dut);
      ja["dut_cells"] = counts_json(dut);
      if (st.modules.count(kHarnessModule)) {
        std::map<std::string, long long> h;
        for (const auto& [t, n] : st.modules.at(kHarnessModule))
          if (!st.modules.count(t)) h[t] = n;
        ja["harness_cells"] = counts_json(h);
      }
      ja["dut_netlist"] = rel(fs::path(out + ".dut.v"), c.dir.parent_path());
      const fs::path pcf = c.dir.parent_path() / "constraints" / (top + "." + d.name + ".pcf");
      write_text(pcf, make_pcf(d));
      const fs::path report = tdir / (d.name + ".nextpnr.json");
      const fs::path log = tdir / (d.name + ".nextpnr.log");
      fs::remove(report);
      c.progress(fmt::format("{}: nextpnr-ice40 {} {}", top, d.flag, d.package));
      const ToolRun pr = run_tool({nextpnr, d.flag, "--package", d.package, "--json", out + ".json", "--pcf",
                                   pcf.string(), "--freq", fmt::format("{:g}", c.cfg.clock.target_mhz), "--report",
                                   report.string(), "--timing-allow-fail", "--seed", "1", "-q", "-l", log.string()},
                                  fs::path(log).concat(".out"), tdir);
      ja["nextpnr_seconds"] = round_to(pr.seconds, 1);
      ja["pcf"] = rel(pcf, c.dir.parent_path());
      if (pr.exit_code == 0 && fs::exists(report)) {
        const PnrReport rep = parse_nextpnr_report(read_text(report));
        json u = json::object();
        for (const auto& [k, v] : rep.utilization)
          if (v.first > 0 || k == "ICESTORM_LC" || k == "ICESTORM_RAM" || k == "ICESTORM_DSP")
            u[k] = {{"used", v.first}, {"available", v.second}};
        ja["utilization"] = u;
        double fmax = 0;
        for (const auto& [clk, f] : rep.fmax) fmax = fmax == 0 ? f.first : std::min(fmax, f.first);
        ja["fmax_mhz"] = round_to(fmax, 2);
        ja["fits"] = true;
        attempts.push_back(ja);
        jt["placed"] = ja;
        break;
      }
      // Did not fit (or failed): keep the router's reason.
      std::string reason;
      for (const std::string& l : [&] {
             std::vector<std::string> v;
             std::istringstream in(read_text(log));
             std::string x;
             while (std::getline(in, x))
               if (x.find("ERROR") != std::string::npos || x.find("Error") != std::string::npos) v.push_back(x);
             return v;
           }())
        reason += (reason.empty() ? "" : " | ") + l;
      ja["fits"] = false;
      ja["reason"] = reason.empty() ? fmt::format("nextpnr exit code {}", pr.exit_code) : reason;
      attempts.push_back(ja);
    }
    jt["attempts"] = attempts;
    jtops.push_back(jt);
  }
  j["tops"] = jtops;
  return j;
}

// ------------------------------------------------------------------ Xilinx estimate

json run_xilinx(const Ctx& c, const std::vector<std::string>& tops) {
  json j;
  j["family"] = c.opt.xilinx_family;
  json jtops = json::array();
  for (const std::string& top : tops) {
    const fs::path tdir = c.dir / top;
    fs::create_directories(tdir);
    const std::string out = (tdir / "xilinx").string();
    const fs::path sp = tdir / "synth.ys";
    write_text(sp, fill_template(flow_template("yosys/xilinx.ys"),
                                 {{"READ_VERILOG", read_verilog_lines(c.rtl)},
                                  {"TOP", top},
                                  {"FAMILY", c.opt.xilinx_family},
                                  {"OUT", out}},
                                 "yosys/xilinx.ys"));
    c.progress(fmt::format("{}: synth_xilinx -family {}", top, c.opt.xilinx_family));
    const ToolRun r = run_yosys(c, sp, tdir / "synth.yosys.log");
    const YosysStat st = parse_yosys_stat_json(read_text(out + ".stat.json"));
    // The hierarchy is kept (flows/yosys/xilinx.ys): the "design" section sums it under the top.
    static const std::map<std::string, long long> kNone;
    const auto& counts = st.has_design ? st.design : st.modules.count(top) ? st.modules.at(top) : kNone;
    long long lut = 0, ff = 0, carry = 0, dsp = 0, bram18 = 0, bram36 = 0, lutram = 0, srl = 0, muxf = 0, other = 0;
    static const std::regex lut_re("^LUT[1-6]$");
    json cells = json::object();
    for (const auto& [t, n] : counts) {
      cells[t] = n;
      if (std::regex_match(t, lut_re)) lut += n;
      else if (t.rfind("FD", 0) == 0) ff += n;
      else if (t.rfind("CARRY", 0) == 0) carry += n;
      else if (t.rfind("DSP", 0) == 0) dsp += n;
      else if (t == "RAMB18E1" || t == "RAMB18E2") bram18 += n;
      else if (t == "RAMB36E1" || t == "RAMB36E2") bram36 += n;
      else if (t.rfind("RAM", 0) == 0) lutram += n;
      else if (t.rfind("SRL", 0) == 0) srl += n;
      else if (t.rfind("MUXF", 0) == 0) muxf += n;
      else other += n;
    }
    jtops.push_back({{"top", top},
                     {"netlist", rel(fs::path(out + ".v"), c.dir.parent_path())},
                     {"lut", lut},
                     {"ff", ff},
                     {"carry4", carry},
                     {"dsp", dsp},
                     {"bram18", bram18},
                     {"bram36", bram36},
                     {"bram36_equivalent", round_to(static_cast<double>(bram36) + 0.5 * static_cast<double>(bram18), 1)},
                     {"lutram_cells", lutram},
                     {"srl", srl},
                     {"muxf", muxf},
                     {"other_cells", other},
                     {"cells", cells},
                     {"yosys_seconds", round_to(r.seconds, 1)}});
  }
  j["tops"] = jtops;
  return j;
}

// ------------------------------------------------------------------ check

// Simulation-only constructs in (generated) synthesizable Verilog: a token scan. The assertion block
// (`ifdef CAPSGEN_ASSERTIONS ... `endif, docs/rtl-assertions.md) is verification code that synthesis
// never reads; it is skipped, and any other `ifdef is an issue (the RTL has no other macros).
std::vector<std::string> scan_simulation_only(const fs::path& file) {
  std::vector<std::string> issues;
  const std::string text = read_text(file);
  static const std::string kAssertBegin = "`ifdef CAPSGEN_ASSERTIONS", kAssertEnd = "`endif";
  static const std::set<std::string> allowed_sys = {"$readmemh", "$readmemb", "$signed", "$unsigned", "$clog2"};
  static const std::set<std::string> bad_kw = {"force", "release", "fork", "join", "wait", "forever", "deassign",
                                               "real", "realtime", "time", "event", "specify", "primitive"};
  int line = 1;
  for (std::size_t i = 0; i < text.size();) {
    const char ch = text[i];
    if (ch == '\n') {
      ++line;
      ++i;
    } else if (text.compare(i, 2, "//") == 0) {
      while (i < text.size() && text[i] != '\n') ++i;
    } else if (text.compare(i, 2, "/*") == 0) {
      const auto e = text.find("*/", i + 2);
      const std::size_t end = e == std::string::npos ? text.size() : e + 2;
      line += static_cast<int>(std::count(text.begin() + static_cast<long>(i), text.begin() + static_cast<long>(end), '\n'));
      i = end;
    } else if (ch == '"') {
      ++i;
      while (i < text.size() && text[i] != '"') i += text[i] == '\\' ? 2 : 1;
      ++i;
    } else if (text.compare(i, kAssertBegin.size(), kAssertBegin) == 0) {
      const auto e = text.find(kAssertEnd, i);
      const std::size_t end = e == std::string::npos ? text.size() : e + kAssertEnd.size();
      if (e == std::string::npos)
        issues.push_back(fmt::format("{}:{}: `ifdef CAPSGEN_ASSERTIONS without `endif", file.filename().string(), line));
      line += static_cast<int>(std::count(text.begin() + static_cast<long>(i), text.begin() + static_cast<long>(end), '\n'));
      i = end;
    } else if (ch == '`') {
      issues.push_back(fmt::format("{}:{}: compiler directive outside the assertion block", file.filename().string(), line));
      ++i;
    } else if (ch == '$' || std::isalpha(static_cast<unsigned char>(ch)) || ch == '_') {
      std::size_t j = i + 1;
      while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_' || text[j] == '$')) ++j;
      const std::string w = text.substr(i, j - i);
      if (w[0] == '$' && !allowed_sys.count(w))
        issues.push_back(fmt::format("{}:{}: system task/function {} is simulation-only", file.filename().string(), line, w));
      if (bad_kw.count(w))
        issues.push_back(fmt::format("{}:{}: '{}' is not synthesizable", file.filename().string(), line, w));
      if (w == "initial") {
        // allowed only to load a ROM: the statement must be a $readmem call
        std::size_t k = j;
        while (k < text.size() && std::isspace(static_cast<unsigned char>(text[k]))) ++k;
        std::size_t stmt_end = text.find(';', k);
        const std::string stmt = text.substr(k, stmt_end == std::string::npos ? std::string::npos : stmt_end - k);
        if (stmt.find("$readmem") == std::string::npos)
          issues.push_back(fmt::format("{}:{}: initial block (other than a $readmem ROM load) is simulation-only",
                                       file.filename().string(), line));
      }
      i = j;
    } else if (ch == '#') {
      std::size_t k = i + 1;
      while (k < text.size() && std::isspace(static_cast<unsigned char>(text[k]))) ++k;
      // "#(" is a parameter list; "#<number>" a delay
      if (k < text.size() && std::isdigit(static_cast<unsigned char>(text[k])))
        issues.push_back(fmt::format("{}:{}: delay '#' is simulation-only", file.filename().string(), line));
      i = k;
    } else if (text.compare(i, 3, "===") == 0 || text.compare(i, 3, "!==") == 0) {
      issues.push_back(fmt::format("{}:{}: case equality {} is simulation-only", file.filename().string(), line,
                                   text.substr(i, 3)));
      i += 3;
    } else {
      ++i;
    }
  }
  return issues;
}

json run_check(const Ctx& c, const std::vector<std::string>& tops, bool& ok) {
  json j;
  // 1. Verilator lint
  json lint = json::array();
  if (auto verilator = find_tool("verilator")) {
    for (const std::string& t : tops) {
      std::vector<std::string> argv = {*verilator, "--lint-only", "-Wall", "--top-module", t};
      for (const fs::path& f : c.rtl.files) argv.push_back(f.string());
      const fs::path log = c.dir / fmt::format("lint_{}.log", t);
      c.progress(fmt::format("verilator --lint-only -Wall --top-module {}", t));
      const ToolRun r = run_tool(argv, log, c.dir);
      std::vector<std::string> msgs;
      std::istringstream in(read_text(log));
      std::string l;
      while (std::getline(in, l))
        if (l.rfind("%Warning", 0) == 0 || l.rfind("%Error", 0) == 0) msgs.push_back(l);
      const bool pass = r.exit_code == 0 && msgs.empty();
      ok = ok && pass;
      lint.push_back({{"top", t}, {"pass", pass}, {"exit_code", r.exit_code}, {"messages", msgs}});
    }
  } else {
    ok = false;
    lint.push_back({{"pass", false}, {"messages", {"verilator not found (Debian package verilator)"}}});
  }
  j["verilator_lint"] = lint;

  // 2. Yosys elaboration + generic synthesis check (all modules)
  const fs::path sp = c.dir / "check.ys";
  write_text(sp, fill_template(flow_template("yosys/check.ys"),
                               {{"READ_VERILOG", read_verilog_lines(c.rtl)}, {"TOP", ""}, {"OUT", (c.dir / "check").string()}},
                               "yosys/check.ys"));
  c.progress("Yosys parse / elaboration / synthesis check");
  const fs::path log = c.dir / "check.yosys.log";
  const ToolRun r =
      run_tool({c.yosys, "-q", "-l", log.string(), "-s", sp.string()}, fs::path(log).concat(".out"), c.rtl.dir);
  const auto warnings = yosys_warnings(read_text(log));
  std::vector<std::string> errors;
  {
    std::istringstream in(read_text(log));
    std::string l;
    while (std::getline(in, l))
      if (l.find("ERROR") != std::string::npos || l.find("Assert") != std::string::npos) errors.push_back(l);
  }
  const bool ypass = r.exit_code == 0 && warnings.empty();
  ok = ok && ypass;
  j["yosys"] = {{"pass", ypass}, {"exit_code", r.exit_code}, {"warnings", warnings}, {"errors", errors},
                {"seconds", round_to(r.seconds, 1)}};

  // 3. simulation-only constructs
  json scan = json::array();
  for (const fs::path& f : c.rtl.files)
    for (const std::string& issue : scan_simulation_only(f)) scan.push_back(issue);
  ok = ok && scan.empty();
  j["simulation_only_constructs"] = scan;
  j["pass"] = ok;
  return j;
}

}  // namespace

SynthResult run_synth(const AccelConfig& cfg, const RtlInfo& rtl, const SynthOptions& opt) {
  if (std::find(synth_targets().begin(), synth_targets().end(), opt.target) == synth_targets().end())
    throw InputError("capsgen synth", 0, 0, "--target",
                     fmt::format("unknown target '{}' (asic-osu018, ice40, xilinx-estimate, check)", opt.target));
  if (opt.ram != "macro" && opt.ram != "flops")
    throw InputError("capsgen synth", 0, 0, "--ram", "expected macro or flops, got '" + opt.ram + "'");
  if (opt.rom != "logic" && opt.rom != "macro")
    throw InputError("capsgen synth", 0, 0, "--rom", "expected logic or macro, got '" + opt.rom + "'");
  const std::vector<std::string> tops = resolve_tops(rtl, opt.tops);
  Ctx c{cfg, rtl, opt, fs::absolute(opt.out_dir / opt.target).lexically_normal(), "", 1000.0 / cfg.clock.target_mhz};
  c.yosys = require_tool("yosys", "yosys");
  fs::create_directories(c.dir);
  const auto t0 = std::chrono::steady_clock::now();

  json j;
  j["tool"] = "capsgen synth";
  j["target"] = opt.target;
  j["preset"] = cfg.name;
  j["config"] = cfg.source_path;
  j["array"] = {{"rows", cfg.array.rows}, {"cols", cfg.array.cols}, {"pe_pipeline", cfg.array.pe_pipeline}};
  j["widths"] = {{"data", cfg.widths.data}, {"weight", cfg.widths.weight}, {"psum", cfg.widths.psum}};
  j["clock_target_mhz"] = cfg.clock.target_mhz;
  j["rtl_dir"] = rtl.dir.string();
  json tv;
  tv["yosys"] = tool_version(c.yosys, "-V");
  if (opt.target == "asic-osu018")
    if (auto sta = find_tool("sta")) tv["sta"] = tool_version(*sta, "-version");
  if (opt.target == "ice40")
    if (auto np = find_tool("nextpnr-ice40")) tv["nextpnr-ice40"] = tool_version(*np, "--version");
  if (opt.target == "check")
    if (auto v = find_tool("verilator")) tv["verilator"] = tool_version(*v, "--version");
  j["tools"] = tv;
  j["tops_requested"] = tops;

  SynthResult res;
  res.report_dir = c.dir;
  bool ok = true;
  json body;
  if (opt.target == "asic-osu018") body = run_asic(c, tops);
  else if (opt.target == "ice40") body = run_ice40(c, tops);
  else if (opt.target == "xilinx-estimate") body = run_xilinx(c, tops);
  else body = run_check(c, tops, ok);
  for (auto it = body.begin(); it != body.end(); ++it) j[it.key()] = it.value();
  j["seconds"] = round_to(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 1);
  j["ok"] = ok;
  res.ok = ok;
  res.json = j.dump(2) + "\n";
  res.markdown = synth_report_markdown(j);
  res.summary = synth_report_summary(j);
  write_text(c.dir / "report.json", res.json);
  write_text(c.dir / "report.md", res.markdown);
  return res;
}

}  // namespace capsgen::synth
