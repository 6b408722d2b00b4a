#include "cli/dse_pick.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>
#include <zlib.h>

#include <array>
#include <cstdlib>
#include <sstream>
#include <vector>

#include "config/memory_bounds.hpp"
#include "config/yaml_util.hpp"
#include "core/input_error.hpp"
#include "core/parse_number.hpp"
#include "memory/dse_config.hpp"

namespace capsgen::cli {
namespace {

using namespace capsgen::memory;

// The whole file, gunzipped when it is gzip (zlib reads plain files as they are). A truncated or
// corrupt gzip stream is an error, not a shorter file; so is more than kMaxDseCsvBytes of text.
std::string read_maybe_gz(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw InputError(path, 0, 0, "--dse", "cannot open file");
  std::string out;
  char buf[1 << 16];
  int n = 0;
  while ((n = gzread(f, buf, sizeof buf)) > 0) {
    if (out.size() + std::size_t(n) > kMaxDseCsvBytes) {
      gzclose(f);
      throw InputError(path, 0, 0, "--dse", fmt::format("more than {} bytes of CSV text (the limit, docs/limits.md)", kMaxDseCsvBytes));
    }
    out.append(buf, std::size_t(n));
  }
  int err = Z_OK;
  const char* msg = gzerror(f, &err);
  const std::string why = (n < 0 || err != Z_OK) && msg ? msg : "";
  const bool bad = n < 0 || (err != Z_OK && err != Z_STREAM_END);
  gzclose(f);
  if (bad) throw InputError(path, 0, 0, "--dse", "not a readable CSV or gzip file" + (why.empty() ? "" : " (" + why + ")"));
  return out;
}

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  for (std::string c; std::getline(ss, c, ',');) out.push_back(c);
  return out;
}

}  // namespace

DsePick read_dse_pick(const std::string& csv_path, long long id) { return parse_dse_pick(read_maybe_gz(csv_path), csv_path, id); }

DsePick parse_dse_pick(const std::string& text, const std::string& csv_path, long long id) {
  std::istringstream in(text);
  std::string line;
  const std::string want = csv_header().substr(0, csv_header().size() - 1);
  if (!std::getline(in, line) || line != want)
    throw InputError(csv_path, 1, 1, "header", "expected the header of capsgen dse memory's CSV: " + want);
  const std::vector<std::string> cols = split(want);
  int ln = 1;
  while (std::getline(in, line)) {
    ++ln;
    if (line.empty()) continue;
    const std::vector<std::string> f = split(line);
    if (f.size() != cols.size())
      throw InputError(csv_path, ln, 1, "row", fmt::format("{} columns, the header has {}", f.size(), cols.size()));
    // Sizes and counts are exact integers in the preset's ranges; figures are finite and >= 0.
    const auto integer = [&](std::size_t i, long long lo, long long hi) {
      const auto v = parse_decimal_int(f[i]);
      if (!v || *v < lo || *v > hi)
        throw InputError(csv_path, ln, 1, cols[i], fmt::format("expected a decimal integer in [{}, {}], got '{}'", lo, hi, f[i]));
      return *v;
    };
    const auto num = [&](std::size_t i) {
      const auto v = parse_finite_real(f[i]);
      if (!v || *v < 0) throw InputError(csv_path, ln, 1, cols[i], fmt::format("expected a finite number >= 0, got '{}'", f[i]));
      return *v;
    };
    if (integer(0, 0, 1LL << 62) != id) continue;
    DsePick p;
    p.file = csv_path;
    p.line = ln;
    p.point.id = id;
    p.point.option = -1;
    for (int o = 0; o < kOptions; ++o)
      if (f[1] == option_name(o)) p.point.option = o;
    if (p.point.option < 0) throw InputError(csv_path, ln, 1, "option", fmt::format("unknown option '{}'", f[1]));
    for (int m = 0; m < kMems; ++m) {
      // 0 KiB: the option has no such memory. The upper bounds are the preset's (size_kib, sectors).
      p.point.bytes[std::size_t(m)] = integer(2 + 2 * std::size_t(m), 0, kMaxMemoryKib) * 1024;
      p.point.sectors[std::size_t(m)] = int(integer(3 + 2 * std::size_t(m), 0, kMaxMemorySectors));
    }
    p.point.area_mm2 = num(10);
    p.point.dynamic_mj = num(11);
    p.point.static_mj = num(12);
    p.point.wakeup_mj = num(13) * 1e-6;
    p.point.offchip_mj = num(15);
    return p;
  }
  throw InputError(csv_path, 0, 0, "--dse-id", fmt::format("no configuration with id {} in the file", id));
}

std::string dse_preset_yaml(const std::string& preset_path, const DsePick& pick) {
  const AccelConfig base = load_accel_config(preset_path);
  YAML::Node root = yaml::parse(yaml::read_file(preset_path), preset_path);
  const ConfigPoint& p = pick.point;
  const int opt = p.option;
  root["name"] = fmt::format("{}-dse{}", base.name, p.id);
  root["description"] = fmt::format("{} with configuration {} ({}) of {} line {}", base.name, p.id, option_name(opt), pick.file,
                                    pick.line);
  YAML::Node sp = root["scratchpad"];
  const AccelConfig cfg = configured_preset(base, p);
  sp["organization"] = to_string(cfg.scratchpad.organization);
  sp["power_gating"] = cfg.scratchpad.power_gating;
  for (int m = 0; m < kMems; ++m) {
    const MemoryConfig& mc = memory_config(cfg.scratchpad, m);
    if (!mc.present) {
      sp.remove(mem_name(m));
      continue;
    }
    YAML::Node n;
    n["size_kib"] = mc.size_kib;
    n["banks"] = mc.banks;
    n["sectors"] = mc.sectors;
    n["width_bits"] = mc.width_bits;
    sp[mem_name(m)] = n;
  }
  YAML::Emitter e;
  e << root;
  std::string text = fmt::format("# {}: preset {} with configuration {} ({}) of {} (line {}), written by capsgen generate --dse\n",
                                 root["name"].as<std::string>(), preset_path, p.id, option_name(opt), pick.file, pick.line);
  text += e.c_str();
  text += "\n";
  try {
    (void)parse_accel_config(text, "preset.yaml");
  } catch (const InputError& ex) {
    throw InputError(pick.file, pick.line, 1, ex.field(),
                     fmt::format("configuration {} cannot be built on preset {}: {}", p.id, base.name, ex.message()));
  }
  return text;
}

}  // namespace capsgen::cli
