// synth_table: the docs/figures.md table of area, Fmax and FPGA resources, from `capsgen synth` reports.
//
//   synth_table [--md FILE] [--json FILE] [--update FILE]... RUN_DIR...
//
// Each RUN_DIR is a `capsgen synth --out` directory of one preset (and pe_pipeline variant) holding
// asic-osu018/report.json and optionally ice40/ and xilinx-estimate/ reports. Every number comes from
// those reports (which capsgen parsed from the tools' own outputs). --update FILE replaces the text
// between "<!-- synth-table:begin -->" and "<!-- synth-table:end -->" in FILE by the table.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

namespace {

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::optional<json> load(const fs::path& p) {
  if (!fs::exists(p)) return std::nullopt;
  return json::parse(read(p));
}

std::string thousands(double v) {
  std::string s = fmt::format("{:.0f}", v);
  std::string out;
  for (std::size_t k = 0; k < s.size(); ++k) {
    if (k && (s.size() - k) % 3 == 0) out += ',';
    out += s[k];
  }
  return out;
}

const json* find_top(const json& j, const std::string& top) {
  for (const json& t : j["tops"])
    if (t.value("top", "") == top) return &t;
  return nullptr;
}

struct Row {
  json data;
};

Row summarize(const fs::path& dir) {
  Row r;
  json& d = r.data;
  d["run"] = dir.filename().string();
  const auto asic = load(dir / "asic-osu018" / "report.json");
  if (!asic) throw std::runtime_error("no asic-osu018/report.json in " + dir.string());
  const json& a = *asic;
  d["preset"] = a["preset"];
  d["rows"] = a["array"]["rows"];
  d["cols"] = a["array"]["cols"];
  d["pe_pipeline"] = a["array"]["pe_pipeline"];
  d["clock_target_mhz"] = a["clock_target_mhz"];
  d["ge_area_um2"] = a["liberty"]["ge_area_um2"];
  d["tools"] = a["tools"];
  const double ge = a["liberty"]["ge_area_um2"].get<double>();
  const long long pes = a["array"]["rows"].get<long long>() * a["array"]["cols"].get<long long>();
  double total = 0;
  long long macro_bits = 0;
  double min_fmax = 0;
  std::string limiter;
  json blocks = json::array();
  for (const json& t : a["tops"]) {
    const double area = t["area"]["logic_area_um2"].get<double>();
    const double fmax = t["timing"].value("fmax_mhz", 0.0);
    total += area;
    macro_bits += t["memories"].value("macro_bits", 0LL);
    if (fmax > 0 && (min_fmax == 0 || fmax < min_fmax)) {
      min_fmax = fmax;
      limiter = t["top"].get<std::string>();
    }
    json b = {{"top", t["top"]},
              {"logic_area_um2", area},
              {"logic_kge", t["area"]["logic_kge"]},
              {"flip_flops", t["area"]["flip_flops"]},
              {"macro_bits", t["memories"]["macro_bits"]},
              {"fmax_mhz", fmax},
              {"min_period_ns", t["timing"].value("min_period_ns", 0.0)}};
    if (t["timing"].contains("reg2reg"))
      b["critical_path"] = fmt::format("{} -> {}", t["timing"]["reg2reg"]["start_register"].get<std::string>(),
                                       t["timing"]["reg2reg"]["end_register"].get<std::string>());
    blocks.push_back(b);
  }
  d["blocks"] = blocks;
  d["datapath_logic_um2"] = total;
  d["datapath_logic_kge"] = std::round(total / ge / 100.0) / 10.0;
  d["macro_bits"] = macro_bits;
  d["datapath_fmax_mhz"] = min_fmax;
  d["limiting_block"] = limiter;
  if (const json* arr = find_top(a, "capsgen_systolic_array")) {
    const double area = (*arr)["area"]["logic_area_um2"].get<double>();
    d["array_um2"] = area;
    d["array_kge"] = std::round(area / ge / 100.0) / 10.0;
    d["kge_per_pe"] = std::round(area / ge / static_cast<double>(pes)) / 1000.0;
    d["array_fmax_mhz"] = (*arr)["timing"]["fmax_mhz"];
    d["array_min_period_ns"] = (*arr)["timing"]["min_period_ns"];
  }
  if (const auto ice = load(dir / "ice40" / "report.json")) {
    json ji = json::array();
    for (const json& t : (*ice)["tops"]) {
      json e = {{"top", t["top"]}};
      if (t.contains("placed")) {
        const json& p = t["placed"];
        e["device"] = p["device"];
        e["lc_used"] = p["utilization"]["ICESTORM_LC"]["used"];
        e["lc_available"] = p["utilization"]["ICESTORM_LC"]["available"];
        e["dsp"] = p["utilization"].contains("ICESTORM_DSP") ? p["utilization"]["ICESTORM_DSP"]["used"] : json(0);
        e["ram"] = p["utilization"].contains("ICESTORM_RAM") ? p["utilization"]["ICESTORM_RAM"]["used"] : json(0);
        e["fmax_mhz"] = p["fmax_mhz"];
      } else {
        e["device"] = nullptr;
      }
      ji.push_back(e);
    }
    d["ice40"] = ji;
  }
  if (const auto xil = load(dir / "xilinx-estimate" / "report.json")) {
    long long lut = 0, ff = 0, dsp = 0;
    double bram = 0;
    json per = json::array();
    for (const json& t : (*xil)["tops"]) {
      lut += t["lut"].get<long long>();
      ff += t["ff"].get<long long>();
      dsp += t["dsp"].get<long long>();
      bram += t["bram36_equivalent"].get<double>();
      per.push_back({{"top", t["top"]}, {"lut", t["lut"]}, {"ff", t["ff"]}, {"dsp", t["dsp"]},
                     {"bram36_equivalent", t["bram36_equivalent"]}});
    }
    d["xilinx"] = {{"family", (*xil)["family"]}, {"lut", lut}, {"ff", ff}, {"dsp", dsp}, {"bram36_equivalent", bram},
                   {"blocks", per}};
  }
  return r;
}

std::string table(const std::vector<Row>& rows) {
  std::string s;
  s += "| preset | PE pipeline | array µm² | array kGE | kGE/PE | array Fmax MHz | datapath logic kGE | datapath Fmax MHz "
       "(limiting block) | RAM macro bits | iCE40 array: device, LCs, DSP, Fmax MHz | Xilinx 7 (datapath blocks): LUT / FF / "
       "DSP / BRAM36 |\n";
  s += "|---|---|---:|---:|---:|---:|---:|---|---:|---|---|\n";
  for (const Row& r : rows) {
    const json& d = r.data;
    std::string ice = "not run";
    if (d.contains("ice40")) {
      ice = "does not fit";
      for (const json& e : d["ice40"])
        if (e["top"] == "capsgen_systolic_array" && !e["device"].is_null())
          ice = fmt::format("{}, {} / {}, {}, {:.1f}", e["device"].get<std::string>(), e["lc_used"].get<long long>(),
                            e["lc_available"].get<long long>(), e["dsp"].get<long long>(), e["fmax_mhz"].get<double>());
    }
    std::string xil = "not run";
    if (d.contains("xilinx"))
      xil = fmt::format("{} / {} / {} / {:g}", thousands(d["xilinx"]["lut"].get<double>()),
                        thousands(d["xilinx"]["ff"].get<double>()), d["xilinx"]["dsp"].get<long long>(),
                        d["xilinx"]["bram36_equivalent"].get<double>());
    std::string limiting = d["limiting_block"].get<std::string>();
    if (limiting.rfind("capsgen_", 0) == 0) limiting.erase(0, 8);
    s += fmt::format("| {} ({}×{}) | {} | {} | {:.1f} | {:.2f} | {:.1f} | {:.1f} | {:.1f} ({}) | {} | {} | {} |\n",
                     d["preset"].get<std::string>(), d["rows"].get<long long>(), d["cols"].get<long long>(),
                     d["pe_pipeline"].get<bool>() ? "on" : "off", thousands(d.value("array_um2", 0.0)),
                     d.value("array_kge", 0.0), d.value("kge_per_pe", 0.0), d.value("array_fmax_mhz", 0.0),
                     d["datapath_logic_kge"].get<double>(), d["datapath_fmax_mhz"].get<double>(), limiting,
                     thousands(static_cast<double>(d["macro_bits"].get<long long>())), ice, xil);
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  std::string md_path, json_path;
  std::vector<std::string> update_paths;  // --update may be given more than once
  std::vector<fs::path> dirs;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "synth_table: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--md") md_path = value();
    else if (a == "--json") json_path = value();
    else if (a == "--update") update_paths.push_back(value());
    else if (a == "--help" || a == "-h") {
      std::printf("usage: synth_table [--md FILE] [--json FILE] [--update FILE]... RUN_DIR...\n");
      return 0;
    } else dirs.emplace_back(a);
  }
  if (dirs.empty()) {
    std::fprintf(stderr, "usage: synth_table [--md FILE] [--json FILE] [--update FILE]... RUN_DIR...\n");
    return 2;
  }
  try {
    std::vector<Row> rows;
    for (const auto& d : dirs) rows.push_back(summarize(d));
    const std::string t = table(rows);
    json all = json::array();
    for (const Row& r : rows) all.push_back(r.data);
    const json doc = {{"tool", "bench/synth/synth_table"}, {"runs", all}};
    std::string tools;
    if (!rows.empty())
      for (const auto& [k, v] : rows[0].data["tools"].items()) tools += fmt::format("{}{} `{}`", tools.empty() ? "" : ", ", k, v.get<std::string>());
    const std::string block =
        t + fmt::format("\nOSU018 (qflow-tech-osu018), 1 GE = {:g} µm² (NAND2X1); ideal clock, no wire load. Datapath = the "
                        "array, the accumulator bank, the activation bank and the scratchpad memories, each synthesized "
                        "as its own top (the DMA engine: docs/rtl-dma.md). Logic area "
                        "excludes RAM macros (behavioral RAMs, listed by bits); LUT ROMs are synthesized to logic. Fmax "
                        "= 1 / worst register-to-register path. Tools: {}. Generated by `bench/synth/run.sh`.\n",
                        rows.empty() ? 24.0 : rows[0].data["ge_area_um2"].get<double>(), tools);
    std::printf("%s", block.c_str());
    if (!md_path.empty()) std::ofstream(md_path) << block;
    if (!json_path.empty()) std::ofstream(json_path) << doc.dump(2) << "\n";
    for (const std::string& update_path : update_paths) {
      std::string text = read(update_path);
      const std::string b = "<!-- synth-table:begin -->", e = "<!-- synth-table:end -->";
      const auto pb = text.find(b), pe = text.find(e);
      if (pb == std::string::npos || pe == std::string::npos || pe < pb) {
        std::fprintf(stderr, "synth_table: %s has no %s ... %s markers\n", update_path.c_str(), b.c_str(), e.c_str());
        return 1;
      }
      text = text.substr(0, pb + b.size()) + "\n" + block + text.substr(pe);
      std::ofstream(update_path) << text;
    }
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "synth_table: %s\n", ex.what());
    return 1;
  }
  return 0;
}
