#include "memory/cacti.hpp"

#include <cstdlib>
#include <optional>
#include <sstream>

#include "config/yaml_util.hpp"
#include "core/input_error.hpp"

namespace capsgen::memory {
namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  const auto e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

struct Report {
  int line = 0;
  std::optional<double> size, block, rw_ports, r_ports, w_ports, banks, rd_nj, wr_nj, leak_mw, height, width, sectors,
      wake_ns, wake_nj;
};

double number(const std::string& v, const std::string& file, int line, const std::string& field) {
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  if (v.empty() || end == v.c_str() || trim(end) != "" || !(x >= 0))
    throw InputError(file, line, 0, field, "expected a non-negative number, got '" + v + "'");
  return x;
}

void finish(const Report& r, const std::string& file, CactiTable& out) {
  const auto need = [&](const std::optional<double>& v, const char* field) {
    if (!v) throw InputError(file, r.line, 0, field, "missing in the CACTI report starting here");
    return *v;
  };
  const long long bytes = (long long)need(r.size, "Cache size");
  const double block = need(r.block, "Block size");
  if (block <= 0) throw InputError(file, r.line, 0, "Block size", "must be positive");
  const int ports = int(r.rw_ports.value_or(0) + r.r_ports.value_or(0) + r.w_ports.value_or(0));
  if (ports < 1) throw InputError(file, r.line, 0, "Read write ports", "missing in the CACTI report starting here");
  const double banks = r.banks.value_or(1);
  CactiPoint p;
  p.read_pj_per_byte = need(r.rd_nj, "Total dynamic read energy per access (nJ)") * 1e3 / block;
  p.write_pj_per_byte = need(r.wr_nj, "Total dynamic write energy per access (nJ)") * 1e3 / block;
  p.leak_mw = need(r.leak_mw, "Total leakage power of a bank (mW)") * banks;
  p.area_mm2 = need(r.height, "Cache height x width (mm)") * need(r.width, "Cache height x width (mm)");
  if (r.wake_ns) p.wake_latency_ns = *r.wake_ns;
  if (r.wake_nj) p.wake_nj_per_sector = *r.wake_nj;
  out[{bytes, ports, int(r.sectors.value_or(1))}] = p;
}

}  // namespace

CactiTable parse_cacti(const std::string& text, const std::string& file) {
  CactiTable out;
  std::optional<Report> cur;
  std::istringstream in(text);
  std::string raw;
  int line = 0;
  while (std::getline(in, raw)) {
    ++line;
    const auto colon = raw.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = trim(raw.substr(0, colon)), val = trim(raw.substr(colon + 1));
    if (key == "Cache size") {
      if (cur) finish(*cur, file, out);
      cur = Report{line};
      cur->size = number(val, file, line, key);
      continue;
    }
    if (!cur) continue;
    const auto set = [&](std::optional<double>& f) { f = number(val, file, line, key); };
    if (key == "Block size") set(cur->block);
    else if (key == "Read write ports") set(cur->rw_ports);
    else if (key == "Read only ports") set(cur->r_ports);
    else if (key == "Write only ports") set(cur->w_ports);
    else if (key == "Number of banks") set(cur->banks);
    else if (key == "Total dynamic read energy per access (nJ)") set(cur->rd_nj);
    else if (key == "Total dynamic write energy per access (nJ)") set(cur->wr_nj);
    else if (key == "Total leakage power of a bank (mW)") set(cur->leak_mw);
    else if (key == "Sectors") set(cur->sectors);
    else if (key == "Wakeup latency (ns)") set(cur->wake_ns);
    else if (key == "Wakeup energy (nJ)") set(cur->wake_nj);
    else if (key == "Cache height x width (mm)") {
      const auto x = val.find('x');
      if (x == std::string::npos) throw InputError(file, line, 0, key, "expected 'H x W', got '" + val + "'");
      cur->height = number(trim(val.substr(0, x)), file, line, key);
      cur->width = number(trim(val.substr(x + 1)), file, line, key);
    }
  }
  if (cur) finish(*cur, file, out);
  if (out.empty()) throw InputError(file, 0, 0, "Cache size", "no CACTI report found");
  return out;
}

CactiTable load_cacti(const std::string& path) { return parse_cacti(yaml::read_file(path), path); }

}  // namespace capsgen::memory
