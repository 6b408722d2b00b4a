#include "synth/datapath_energy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "config/text_file.hpp"
#include "core/input_error.hpp"

namespace capsgen::synth {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

// The stored document an estimate per MAC comes from: one of this preset (another network; the first
// by file name), else tiny-2x2's reference; empty when there is neither.
fs::path estimate_reference(const fs::path& dir, const std::string& preset) {
  std::vector<fs::path> docs;
  std::error_code ec;
  for (const auto& f : fs::directory_iterator(dir, ec))
    if (f.path().extension() == ".json") docs.push_back(f.path());
  std::sort(docs.begin(), docs.end());
  for (const fs::path& p : docs)
    if (read_datapath(p, "reference").preset == preset) return p;
  const fs::path ref = dir / "tiny-2x2-capsnet-tiny.json";
  return fs::exists(ref) ? ref : fs::path();
}

}  // namespace

DatapathDoc read_datapath(const fs::path& p, const char* field) {
  const json j = read_json_file(p.string(), field);
  if (!j.is_object() || j.value("schema", "") != "capsgen.datapath-energy/1")
    throw InputError(p.string(), 0, 0, "schema", "expected \"capsgen.datapath-energy/1\" (capsgen synth --activity)");
  DatapathDoc d;
  try {
    d.preset = j.at("preset").get<std::string>();
    d.network = j.at("network").get<std::string>();
    d.total_pj = j.at("total_pj").get<double>();
    d.useful_macs = j.at("useful_macs").get<long long>();
    for (const json& b : j.at("blocks")) d.blocks.emplace_back(b.at("top").get<std::string>(), b.at("energy").at("total_pj").get<double>());
  } catch (const json::exception& e) {
    throw InputError(p.string(), 0, 0, "total_pj/useful_macs/blocks", e.what());
  }
  return d;
}

std::optional<DatapathPerMac> datapath_per_mac(const std::optional<fs::path>& file, const fs::path& stored_dir,
                                               const std::string& preset) {
  const fs::path ref = file ? *file : estimate_reference(stored_dir, preset);
  if (ref.empty()) return std::nullopt;
  const DatapathDoc d = read_datapath(ref, file ? "--datapath-energy" : "reference");
  if (d.useful_macs <= 0) throw InputError(ref.string(), 0, 0, "useful_macs", "must be positive for an energy per MAC");
  return DatapathPerMac{d.total_pj / double(d.useful_macs), ref, d.preset,
                        fmt::format("{} on {}, activity-based", d.network, d.preset)};
}

}  // namespace capsgen::synth
