#include "memory/cacti.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <optional>
#include <sstream>

#include "config/yaml_util.hpp"
#include "core/input_error.hpp"
#include "core/parse_number.hpp"

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

// What one report field may hold. Integers (sizes, counts) must be exact integers; physical
// figures must be finite, non-negative and below a plausibility bound (docs/limits.md), so that a
// typo such as 1e308 cannot turn into an infinite energy downstream.
struct FieldRule {
  bool integer;
  double lo, hi;
};

constexpr double kMaxCactiBytes = 1LL << 40;  // 1 TiB: far beyond any on-chip memory
FieldRule rule_of(const std::string& key) {
  if (key == "Cache size" || key == "Block size") return {true, 1, kMaxCactiBytes};
  if (key == "Read write ports" || key == "Read only ports" || key == "Write only ports") return {true, 0, 64};
  if (key == "Number of banks" || key == "Sectors") return {true, 1, 1 << 16};
  if (key == "Total leakage power of a bank (mW)") return {false, 0, 1e6};
  if (key == "Cache height x width (mm)") return {false, 0, 1e4};
  if (key == "Wakeup latency (ns)") return {false, 0, 1e9};
  return {false, 0, 1e6};  // energies (nJ)
}

double number(const std::string& v, const std::string& file, int line, const std::string& field) {
  const FieldRule r = rule_of(field);
  if (r.integer) {
    const auto x = parse_integral_real(v, (long long)r.lo, (long long)r.hi);
    if (!x)
      throw InputError(file, line, 0, field, fmt::format("expected an integer in [{}, {}], got '{}'", (long long)r.lo,
                                                         (long long)r.hi, v));
    return double(*x);
  }
  const auto x = parse_finite_real(v);
  if (!x || *x < r.lo || *x > r.hi)
    throw InputError(file, line, 0, field, fmt::format("expected a number in [{}, {:g}], got '{}'", r.lo, r.hi, v));
  return *x;
}

void finish(const Report& r, const std::string& file, CactiTable& out) {
  const auto need = [&](const std::optional<double>& v, const char* field) {
    if (!v) throw InputError(file, r.line, 0, field, "missing in the CACTI report starting here");
    return *v;
  };
  const long long bytes = (long long)need(r.size, "Cache size");
  const double block = need(r.block, "Block size");
  if (block > double(bytes))
    throw InputError(file, r.line, 0, "Block size", fmt::format("{} bytes exceed the cache size {}", block, bytes));
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
