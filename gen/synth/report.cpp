#include "synth/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

namespace capsgen::synth {
namespace {

using json = nlohmann::ordered_json;

double num(const json& j, const char* k, double def = 0) {
  return j.contains(k) && j[k].is_number() ? j[k].get<double>() : def;
}
long long inum(const json& j, const char* k, long long def = 0) {
  return j.contains(k) && j[k].is_number() ? j[k].get<long long>() : def;
}
std::string str(const json& j, const char* k, const std::string& def = "") {
  return j.contains(k) && j[k].is_string() ? j[k].get<std::string>() : def;
}

std::string thousands(double v, int decimals = 0) {
  std::string s = fmt::format("{:.{}f}", v, decimals);
  const auto dot = s.find('.');
  std::string ip = s.substr(0, dot == std::string::npos ? s.size() : dot);
  const std::string fp = dot == std::string::npos ? "" : s.substr(dot);
  std::string out;
  const bool neg = !ip.empty() && ip[0] == '-';
  if (neg) ip.erase(0, 1);
  for (std::size_t k = 0; k < ip.size(); ++k) {
    if (k && (ip.size() - k) % 3 == 0) out += ',';
    out += ip[k];
  }
  return (neg ? "-" : "") + out + fp;
}

std::string header(const json& j, const std::string& what) {
  std::string s = fmt::format("# capsgen synth: {} — {}\n\n", str(j, "preset"), what);
  const json& a = j["array"];
  s += fmt::format("- preset `{}`: {}×{} array, pe_pipeline {}, data/weight/psum {}/{}/{} bits, clock target {:g} MHz\n",
                   str(j, "config"), inum(a, "rows"), inum(a, "cols"), a.value("pe_pipeline", false) ? "on" : "off",
                   inum(j["widths"], "data"), inum(j["widths"], "weight"), inum(j["widths"], "psum"),
                   num(j, "clock_target_mhz"));
  s += "- tools:";
  for (const auto& [k, v] : j["tools"].items()) s += fmt::format(" {} (`{}`);", k, v.get<std::string>());
  s += "\n";
  s += fmt::format("- RTL: `{}`; run time {:g} s\n", str(j, "rtl_dir"), num(j, "seconds"));
  return s;
}

std::string path_line(const json& p) {
  std::string types;
  std::vector<std::pair<std::string, long long>> t;
  for (const auto& [k, v] : p["cell_types_on_path"].items()) t.emplace_back(k, v.get<long long>());
  std::sort(t.begin(), t.end(), [](auto& a, auto& b) { return a.second > b.second; });
  for (std::size_t i = 0; i < t.size() && i < 6; ++i) types += fmt::format("{}{} ×{}", i ? ", " : "", t[i].first, t[i].second);
  return fmt::format("`{}` → `{}`: arrival {:.3f} ns + setup {:.3f} ns = **{:.3f} ns → {:.1f} MHz**; {} cells on the path ({})",
                     str(p, "start_register"), str(p, "end_register"), num(p, "arrival_ns"), num(p, "setup_ns"),
                     num(p, "min_period_ns"), num(p, "fmax_mhz"), inum(p, "cells_on_path"), types);
}

std::string asic_md(const json& j) {
  std::string s = header(j, "ASIC synthesis on " + str(j["liberty"], "library") + " (asic-osu018)");
  const json& lib = j["liberty"];
  const double ge = num(lib, "ge_area_um2", 1);
  s += fmt::format("- library `{}`; 1 GE = {} = {:g} µm² (kGE = area / {:g} µm² / 1000)\n", str(lib, "file"),
                   str(lib, "ge_cell"), ge, ge);
  s += fmt::format(
      "- mapping: Yosys generic synthesis, `dfflibmap`, `abc -D {} -constr` (driving cell {}, output load {:g} pF); "
      "OpenSTA with the generated SDC: ideal clock, no wire load, I/O delay {:g}% of the period\n",
      inum(j["abc"], "delay_target_ps"), str(j["abc"], "driving_cell"), num(j["abc"], "output_load"),
      num(j, "io_delay_fraction") * 100);
  s += fmt::format(
      "- ROMs ({}): {}\n", str(j, "rom_mode"),
      str(j, "rom_mode") == "logic" ? "LUT ROMs synthesized to logic, included in the logic area"
                                    : "LUT ROMs kept as macros like the RAMs");
  s += fmt::format(
      "- RAMs ({} mode): {}\n\n",
      str(j, "ram_mode"),
      str(j, "ram_mode") == "flops"
          ? "mapped to flip-flops and multiplexers, included in the logic area"
          : "behavioral memories stay Verilog memories (an SRAM macro in a chip): not in the logic area, listed with "
            "their bits; their registered read data are ordinary flip-flops, so timing paths from RAM data start at a "
            "flip-flop; RAM access time is not modelled");
  s += "## Summary\n\n| top | logic area µm² | logic kGE | cells | flip-flops | RAM bits | critical path ns | Fmax MHz | "
       "meets target |\n|---|---:|---:|---:|---:|---:|---:|---:|---|\n";
  for (const json& t : j["tops"]) {
    const json& a = t["area"];
    const json& tm = t["timing"];
    s += fmt::format("| `{}` | {} | {:.1f} | {} | {} | {} | {:.3f} | {:.1f} | {} |\n", str(t, "top"),
                     thousands(num(a, "logic_area_um2")), num(a, "logic_kge"), thousands(num(a, "cells")),
                     thousands(num(a, "flip_flops")), thousands(num(t["memories"], "macro_bits")), num(tm, "min_period_ns"),
                     num(tm, "fmax_mhz"), tm.value("meets_target", false) ? "yes" : "no");
  }
  s += "\nCritical path = the worst register-to-register path (data arrival + setup with an ideal clock); "
       "Fmax = 1 / critical path. Area = sum of the mapped cells' Liberty areas (cross-checked against Yosys `stat`).\n";
  for (const json& t : j["tops"]) {
    s += fmt::format("\n## `{}`\n\n", str(t, "top"));
    const json& tm = t["timing"];
    if (tm.contains("reg2reg")) s += "- critical path (register to register): " + path_line(tm["reg2reg"]) + "\n";
    for (const auto& [k, label] : std::vector<std::pair<std::string, std::string>>{
             {"in2reg", "worst input path"}, {"reg2out", "worst output path"}, {"worst", "worst path overall"}}) {
      if (!tm.contains(k)) continue;
      const json& p = tm[k];
      s += fmt::format("- {}: `{}` → `{}`, arrival {:.3f} ns, slack {:+.3f} ns at {:.3f} ns\n", label,
                       str(p, "start_register"), str(p, "end_register"), num(p, "arrival_ns"), num(p, "slack_ns"),
                       num(tm, "period_ns"));
    }
    for (const auto& [k, label] : std::vector<std::pair<std::string, std::string>>{
             {"hold_reg2reg", "hold, register to register"}, {"hold", "hold, worst overall"}}) {
      if (!tm.contains(k)) continue;
      const json& p = tm[k];
      s += fmt::format("- {}: `{}` → `{}`, slack {:+.3f} ns{}\n", label, str(p, "start_register"), str(p, "end_register"),
                       num(p, "slack_ns"),
                       k == "hold" && num(p, "slack_ns") < 0 && tm.contains("hold_reg2reg") && num(tm.at("hold_reg2reg"), "slack_ns") >= 0
                           ? " (an input with zero input delay straight into a flip-flop: in the enclosing design it "
                             "comes from a flip-flop's clock-to-Q)"
                           : "");
    }
    if (tm.contains("wns_ns"))
      s += fmt::format("- at the target period {:.3f} ns: WNS {:.3f} ns, TNS {:.3f} ns\n", num(tm, "period_ns"),
                       num(tm, "wns_ns"), num(tm, "tns_ns"));
    const json& a = t["area"];
    s += fmt::format("- flattened: {} µm² = {:.2f} kGE in {} cells, {} flip-flops (Yosys `stat`: {} µm²); SDC `{}`; "
                     "netlist `{}`\n",
                     thousands(num(a, "logic_area_um2"), 1), num(a, "logic_kge"), thousands(num(a, "cells")),
                     thousands(num(a, "flip_flops")),
                     a["yosys_chip_area_um2"].is_number() ? thousands(a["yosys_chip_area_um2"].get<double>(), 1) : "-",
                     str(t, "sdc"), str(t, "netlist"));
    if (t.contains("hierarchical")) {
      const json& h = t["hierarchical"];
      s += fmt::format("\n### Area by module (hierarchical synthesis: {} µm² = {:.2f} kGE in total; flattening saves "
                       "{:.1f}%)\n\n",
                       thousands(num(h, "total_area_um2"), 1), num(h, "total_kge"),
                       num(h, "total_area_um2") > 0
                           ? 100.0 * (1.0 - num(a, "logic_area_um2") / num(h, "total_area_um2"))
                           : 0.0);
      s += "| module | instances | µm² each | kGE each | flip-flops each | µm² all instances | share |\n"
           "|---|---:|---:|---:|---:|---:|---:|\n";
      for (const json& m : h["modules"])
        s += fmt::format("| `{}` | {} | {} | {:.3f} | {} | {} | {:.1f}% |\n", str(m, "module"), inum(m, "instances"),
                         thousands(num(m, "own_area_um2"), 1), num(m, "own_kge"), inum(m, "own_flip_flops"),
                         thousands(num(m, "area_all_instances_um2")),
                         100.0 * num(m, "area_all_instances_um2") / std::max(1.0, num(h, "total_area_um2")));
      s += "\n(µm² each = the module's own cells, without its submodules.)\n";
    }
    s += "\n### Cells (flattened)\n\n| cell | count | µm² | share |\n|---|---:|---:|---:|\n";
    std::vector<std::pair<std::string, json>> cells;
    for (const auto& [k, v] : a["by_cell"].items()) cells.emplace_back(k, v);
    std::sort(cells.begin(), cells.end(), [](auto& x, auto& y) { return num(x.second, "area_um2") > num(y.second, "area_um2"); });
    for (const auto& [k, v] : cells)
      s += fmt::format("| {} | {} | {} | {:.1f}% |\n", k, thousands(num(v, "count")), thousands(num(v, "area_um2")),
                       100.0 * num(v, "area_um2") / std::max(1.0, num(a, "logic_area_um2")));
    const json& m = t["memories"];
    if (inum(m, "count") > 0) {
      s += fmt::format("\n### Memories: {} RAM bits, {} ROM bits; {} bits kept as macros (not in the logic area)\n\n"
                       "| memory | kind | words × width | bits | read / write ports | read | implementation |\n"
                       "|---|---|---|---:|---|---|---|\n",
                       thousands(num(m, "ram_bits")), thousands(num(m, "rom_bits")), thousands(num(m, "macro_bits")));
      for (const json& r : m["list"])
        s += fmt::format("| `{}` | {} | {} × {} | {} | {} / {} | {} | {} |\n", str(r, "name"), str(r, "kind"),
                         inum(r, "words"), inum(r, "width"), thousands(num(r, "bits")), inum(r, "read_ports"),
                         inum(r, "write_ports"), str(r, "read"), str(r, "implementation"));
      if (inum(m, "macro_bits") > 0)
        s += fmt::format("\nMacros are not in the logic area. As a lower bound for a flip-flop implementation, their "
                         "storage alone would take {} µm² ({} bits × {}); an SRAM macro is far smaller. `--ram flops` "
                         "synthesizes them to cells.\n",
                         thousands(num(m, "macro_flip_flop_storage_um2")), thousands(num(m, "macro_bits")),
                         str(m, "flip_flop_cell"));
    }
  }
  return s;
}

std::string cell_cols(const json& cells) {
  std::string s;
  for (const auto& [k, v] : cells.items()) s += fmt::format("{}{} {}", s.empty() ? "" : ", ", k, v.get<long long>());
  return s;
}

std::string ice40_md(const json& j) {
  std::string s = header(j, "iCE40 place and route (ice40)");
  s += fmt::format("- flow: Yosys `synth_ice40` (with `-dsp` on the UP5K), nextpnr-ice40 at --freq {:g}; {}\n"
                   "- the harness adds one flip-flop per DUT input and output bit (and a LUT per output bit); the DUT "
                   "cells are counted separately\n\n",
                   num(j, "freq_target_mhz"), str(j, "harness"));
  s += "| top | device | LCs used / available | RAM | DSP | Fmax MHz (router) | DUT cells (Yosys) |\n"
       "|---|---|---:|---:|---:|---:|---|\n";
  for (const json& t : j["tops"]) {
    if (t.contains("placed")) {
      const json& p = t["placed"];
      const json& u = p["utilization"];
      auto ua = [&](const char* k) {
        if (!u.contains(k)) return std::string("-");
        return fmt::format("{} / {}", inum(u[k], "used"), inum(u[k], "available"));
      };
      const long long lc = u.contains("ICESTORM_LC") ? inum(u["ICESTORM_LC"], "used") : 0;
      const long long lca = u.contains("ICESTORM_LC") ? inum(u["ICESTORM_LC"], "available") : 1;
      s += fmt::format("| `{}` | {} {} | {} / {} ({:.0f}%) | {} | {} | {:.1f} | {} |\n", str(t, "top"), str(p, "device"),
                       str(p, "package"), lc, lca, 100.0 * static_cast<double>(lc) / static_cast<double>(lca),
                       ua("ICESTORM_RAM"), ua("ICESTORM_DSP"), num(p, "fmax_mhz"),
                       p.contains("dut_cells") ? cell_cols(p["dut_cells"]) : "");
    } else {
      s += fmt::format("| `{}` | does not fit | | | | | |\n", str(t, "top"));
    }
  }
  for (const json& t : j["tops"])
    for (const json& a : t["attempts"])
      if (!a.value("fits", false))
        s += fmt::format("\n- `{}` on {}: {}\n", str(t, "top"), str(a, "device"), str(a, "reason"));
  return s;
}

std::string xilinx_md(const json& j) {
  std::string s = header(j, "Xilinx resource estimate (xilinx-estimate)");
  s += fmt::format("- flow: Yosys `synth_xilinx -family {} -flatten -noiopad -noclkbuf`; no place and route\n\n",
                   str(j, "family"));
  s += "| top | LUT | FF | CARRY4 | DSP | BRAM (36 Kb eq.) | LUTRAM cells | SRL |\n|---|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const json& t : j["tops"])
    s += fmt::format("| `{}` | {} | {} | {} | {} | {:g} | {} | {} |\n", str(t, "top"), thousands(num(t, "lut")),
                     thousands(num(t, "ff")), inum(t, "carry4"), inum(t, "dsp"), num(t, "bram36_equivalent"),
                     inum(t, "lutram_cells"), inum(t, "srl"));
  return s;
}

std::string check_md(const json& j) {
  std::string s = header(j, "RTL checks (check)");
  s += fmt::format("\n**{}**\n\n", j.value("pass", false) ? "PASS" : "FAIL");
  s += "## verilator --lint-only -Wall\n\n";
  for (const json& l : j["verilator_lint"]) {
    s += fmt::format("- `{}`: {}\n", str(l, "top"), l.value("pass", false) ? "clean" : "FAIL");
    for (const json& m : l["messages"]) s += "  - `" + m.get<std::string>() + "`\n";
  }
  const json& y = j["yosys"];
  s += fmt::format("\n## Yosys: elaboration, `check -assert`, no latches / initial values / assertion cells, generic "
                   "synthesis\n\n- {}\n",
                   y.value("pass", false) ? "clean (no warnings)" : "FAIL");
  for (const json& w : y["warnings"]) s += "  - `" + w.get<std::string>() + "`\n";
  for (const json& w : y["errors"]) s += "  - `" + w.get<std::string>() + "`\n";
  s += "\n## Simulation-only constructs (system tasks, delays, initial blocks other than ROM loads, case equality, "
       "force/fork/wait, real/time)\n\n";
  if (j["simulation_only_constructs"].empty()) s += "- none\n";
  for (const json& w : j["simulation_only_constructs"]) s += "- " + w.get<std::string>() + "\n";
  return s;
}

}  // namespace

std::string synth_report_markdown(const json& j) {
  const std::string t = j.value("target", "");
  if (t == "asic-osu018") return asic_md(j);
  if (t == "ice40") return ice40_md(j);
  if (t == "xilinx-estimate") return xilinx_md(j);
  return check_md(j);
}

std::string synth_report_summary(const json& j) {
  const std::string t = j.value("target", "");
  std::string s;
  if (t == "asic-osu018") {
    for (const json& x : j["tops"])
      s += fmt::format("  {}: {} um2 = {:.1f} kGE logic, {} flip-flops, {} macro RAM bits; critical path {:.3f} ns -> Fmax "
                       "{:.1f} MHz\n",
                       str(x, "top"), thousands(num(x["area"], "logic_area_um2")), num(x["area"], "logic_kge"),
                       inum(x["area"], "flip_flops"), inum(x["memories"], "macro_bits"), num(x["timing"], "min_period_ns"),
                       num(x["timing"], "fmax_mhz"));
  } else if (t == "ice40") {
    for (const json& x : j["tops"]) {
      if (!x.contains("placed")) {
        s += fmt::format("  {}: does not fit an iCE40 UP5K/HX8K\n", str(x, "top"));
        continue;
      }
      const json& p = x["placed"];
      const json& u = p["utilization"];
      s += fmt::format("  {}: {} {}/{} LCs, {} DSP, {} RAM; Fmax {:.1f} MHz\n", str(x, "top"), str(p, "device"),
                       inum(u["ICESTORM_LC"], "used"), inum(u["ICESTORM_LC"], "available"),
                       u.contains("ICESTORM_DSP") ? inum(u["ICESTORM_DSP"], "used") : 0,
                       u.contains("ICESTORM_RAM") ? inum(u["ICESTORM_RAM"], "used") : 0, num(p, "fmax_mhz"));
    }
  } else if (t == "xilinx-estimate") {
    for (const json& x : j["tops"])
      s += fmt::format("  {}: {} LUT, {} FF, {} DSP, {:g} BRAM36\n", str(x, "top"), inum(x, "lut"), inum(x, "ff"),
                       inum(x, "dsp"), num(x, "bram36_equivalent"));
  } else {
    s += fmt::format("  check: {}\n", j.value("pass", false) ? "PASS" : "FAIL");
  }
  return s;
}

}  // namespace capsgen::synth
