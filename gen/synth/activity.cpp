#include "synth/activity.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "config/text_file.hpp"
#include "core/input_error.hpp"

namespace capsgen::synth {
namespace {

using json = nlohmann::ordered_json;

// One point of a verilator_coverage file: C '<\1key\2value...>' count
struct CoveragePoint {
  std::map<std::string, std::string> keys;
  long long count = 0;
};

bool parse_point(const std::string& line, CoveragePoint& p) {
  if (line.size() < 4 || line.compare(0, 3, "C '") != 0) return false;
  const auto close = line.rfind('\'');
  if (close == std::string::npos || close <= 2) return false;
  const std::string body = line.substr(3, close - 3);
  p.keys.clear();
  std::size_t pos = 0;
  while ((pos = body.find('\1', pos)) != std::string::npos) {
    const auto sep = body.find('\2', pos);
    if (sep == std::string::npos) return false;
    auto next = body.find('\1', sep);
    if (next == std::string::npos) next = body.size();
    p.keys[body.substr(pos + 1, sep - pos - 1)] = body.substr(sep + 1, next - sep - 1);
    pos = next;
  }
  try {
    p.count = std::stoll(line.substr(close + 1));
  } catch (const std::exception&) {
    return false;
  }
  return true;
}

template <typename T>
T field(const json& j, const char* key, const std::string& file) {
  if (!j.contains(key)) throw InputError(file, 0, 0, key, "missing");
  try {
    return j.at(key).get<T>();
  } catch (const json::exception& e) {
    throw InputError(file, 0, 0, key, e.what());
  }
}

}  // namespace

ActivityDoc activity_from_coverage(const std::string& text, const std::string& file, const std::string& top) {
  ActivityDoc doc;
  doc.top = top;
  const std::string root = "TOP." + top;
  std::map<std::string, std::string> modules;  // instance path -> module
  std::istringstream in(text);
  std::string line;
  CoveragePoint p;
  while (std::getline(in, line)) {
    if (!parse_point(line, p)) continue;
    const std::string& page = p.keys["page"];
    if (page.compare(0, 9, "v_toggle/") != 0) continue;
    const std::string& hier = p.keys["h"];
    if (hier.compare(0, root.size(), root) != 0) continue;
    std::string path = hier.size() > root.size() ? hier.substr(root.size() + 1) : "";
    modules.emplace(path, page.substr(9));
    const std::string bit = path.empty() ? p.keys["o"] : path + "." + p.keys["o"];
    doc.toggles[bit] += p.count;  // a signal's bit appears once per point; += keeps repeated files summed
  }
  if (doc.toggles.empty())
    throw InputError(file, 0, 0, "toggle points",
                     fmt::format("no toggle coverage of {} (a model built with --coverage writes them)", root));
  for (const auto& [path, module] : modules) doc.instances.push_back({path, module});
  return doc;
}

std::string activity_json(const ActivityDoc& doc) {
  json j;
  j["schema"] = kActivitySchema;
  j["top"] = doc.top;
  j["preset"] = doc.preset;
  j["network"] = doc.network;
  j["cycles"] = doc.cycles;
  j["program_cycles"] = doc.program_cycles;
  j["clock_mhz"] = doc.clock_mhz;
  j["useful_macs"] = doc.useful_macs;
  j["source"] = "Verilator toggle coverage: value changes per bit, counted once per evaluated clock edge";
  json ji = json::array();
  for (const ActivityInstance& i : doc.instances) ji.push_back({{"path", i.path}, {"module", i.module}});
  j["instances"] = ji;
  j["toggles"] = json::object();
  for (const auto& [bit, n] : doc.toggles) j["toggles"][bit] = n;
  return j.dump(1) + "\n";
}

ActivityDoc read_activity(const std::string& path) {
  const json j = read_json_file(path, "--activity");
  if (!j.is_object() || field<std::string>(j, "schema", path) != kActivitySchema)
    throw InputError(path, 0, 0, "schema", fmt::format("expected \"{}\"", kActivitySchema));
  ActivityDoc doc;
  doc.top = field<std::string>(j, "top", path);
  doc.preset = field<std::string>(j, "preset", path);
  doc.network = field<std::string>(j, "network", path);
  doc.cycles = field<long long>(j, "cycles", path);
  doc.program_cycles = field<long long>(j, "program_cycles", path);
  doc.clock_mhz = field<double>(j, "clock_mhz", path);
  doc.useful_macs = field<long long>(j, "useful_macs", path);
  if (doc.cycles <= 0) throw InputError(path, 0, 0, "cycles", "must be positive");
  if (doc.clock_mhz <= 0) throw InputError(path, 0, 0, "clock_mhz", "must be positive");
  const json instances = field<json>(j, "instances", path), toggles = field<json>(j, "toggles", path);
  for (const json& i : instances)
    doc.instances.push_back({field<std::string>(i, "path", path), field<std::string>(i, "module", path)});
  for (const auto& [bit, n] : toggles.items()) {
    if (!n.is_number_integer() || n.get<long long>() < 0)
      throw InputError(path, 0, 0, "toggles." + bit, "expected a count >= 0");
    doc.toggles[bit] = n.get<long long>();
  }
  return doc;
}

ActivityDoc read_activity_of_preset(const std::string& path, const std::string& preset) {
  ActivityDoc doc = read_activity(path);
  if (doc.preset != preset)
    throw InputError(path, 0, 0, "preset",
                     fmt::format("the activity was simulated on {}, this run synthesizes {}", doc.preset, preset));
  return doc;
}

const ActivityInstance& find_instance(const ActivityDoc& doc, const std::string& module, const std::string& file) {
  const ActivityInstance* found = nullptr;
  for (const ActivityInstance& i : doc.instances)
    if (i.module == module) {
      if (found)
        throw InputError(file, 0, 0, "instances",
                         fmt::format("{} is instantiated more than once ({}, {}): its activity is ambiguous", module,
                                     found->path, i.path));
      found = &i;
    }
  if (!found) throw InputError(file, 0, 0, "instances", fmt::format("no instance of {} in the simulated {}", module, doc.top));
  return *found;
}

std::map<std::string, long long> toggles_below(const ActivityDoc& doc, const std::string& path) {
  std::map<std::string, long long> out;
  const std::string prefix = path.empty() ? "" : path + ".";
  for (auto it = doc.toggles.lower_bound(prefix); it != doc.toggles.end(); ++it) {
    if (it->first.compare(0, prefix.size(), prefix) != 0) break;
    out.emplace(it->first.substr(prefix.size()), it->second);
  }
  return out;
}

}  // namespace capsgen::synth
