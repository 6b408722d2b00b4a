#include "memory/cacti.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <vector>
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
  // Leakage beyond the subthreshold line, and CACTI-P's power-gating block (data array).
  std::optional<double> gate_leak_mw, routing_mw, ndwl, ndbl, pg_tx_um, pg_array_ns, pg_wl_ns, pg_bl_ns, pg_array_nj, pg_wl_nj,
      pg_active_mats;
};

// What one report gives before gated and ungated reports of the same memory are paired.
struct Parsed {
  int line = 0;
  long long bytes = 0;
  int ports = 0, sectors = 1;
  bool gated = false;  // CACTI-P ran with power gating (its "Sleep Tx" block is present)
  CactiPoint p;        // gated: leak_mw is the sleep-state leakage until paired
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

// CACTI's "Total (gate) leakage power of a bank" lines give ONE bank plus the inter-bank routing
// (tests/data/cacti7/README.md), so the whole memory is banks x (bank lines - routing) + routing. CACTI
// does not print the routing alone: with more than one bank the report needs the added line
// "Inter-bank routing leakage (mW) : X" (like "Sectors : N"), else the total cannot be known.
void finish(const Report& r, const std::string& file, std::vector<Parsed>& out) {
  const auto need = [&](const std::optional<double>& v, const char* field) {
    if (!v) throw InputError(file, r.line, 0, field, "missing in the CACTI report starting here");
    return *v;
  };
  Parsed q;
  q.line = r.line;
  q.bytes = (long long)need(r.size, "Cache size");
  const double block = need(r.block, "Block size");
  if (block <= 0) throw InputError(file, r.line, 0, "Block size", "must be positive");
  if (block > double(q.bytes))
    throw InputError(file, r.line, 0, "Block size", fmt::format("{} bytes exceed the cache size {}", block, q.bytes));
  q.ports = int(r.rw_ports.value_or(0) + r.r_ports.value_or(0) + r.w_ports.value_or(0));
  if (q.ports < 1) throw InputError(file, r.line, 0, "Read write ports", "missing in the CACTI report starting here");
  q.sectors = int(r.sectors.value_or(1));
  q.gated = r.pg_tx_um.has_value();
  if (q.gated && q.sectors < 2)
    throw InputError(file, r.line, 0, "Sectors",
                     "a power-gated CACTI-P report needs 'Sectors : N' (N >= 2): the sector count it stands for");
  const double banks = r.banks.value_or(1);
  CactiPoint& p = q.p;
  p.read_pj_per_byte = need(r.rd_nj, "Total dynamic read energy per access (nJ)") * 1e3 / block;
  p.write_pj_per_byte = need(r.wr_nj, "Total dynamic write energy per access (nJ)") * 1e3 / block;
  const double bank_line = need(r.leak_mw, "Total leakage power of a bank (mW)") +
                           need(r.gate_leak_mw, "Total gate leakage power of a bank (mW)");
  double routing = 0;
  if (banks > 1) {
    routing = need(r.routing_mw, "Inter-bank routing leakage (mW)");
    if (routing > bank_line)
      throw InputError(file, r.line, 0, "Inter-bank routing leakage (mW)", "larger than the bank's leakage lines");
  }
  p.leak_mw = banks * (bank_line - routing) + routing;
  p.area_mm2 = need(r.height, "Cache height x width (mm)") * need(r.width, "Cache height x width (mm)");
  if (q.gated) {
    // CACTI-P's wake-up: the slowest of its array, wordline and bitline-floating wake-ups; its energies
    // are for the mats one access activates, scaled to all mats (banks x Ndwl x Ndbl / 4) and shared
    // by the sectors.
    p.wake_latency_ns = std::max({r.pg_array_ns.value_or(0), r.pg_wl_ns.value_or(0), r.pg_bl_ns.value_or(0)});
    const double mats = banks * need(r.ndwl, "Best Ndwl") * need(r.ndbl, "Best Ndbl") / 4;
    const double active = need(r.pg_active_mats, "Active mats per access");
    if (active <= 0) throw InputError(file, r.line, 0, "Active mats per access", "must be positive");
    p.wake_nj_per_sector = (need(r.pg_array_nj, "Sub-array Tx energy (nJ)") + need(r.pg_wl_nj, "WL Tx energy (nJ)")) *
                           mats / active / q.sectors;
  }
  if (r.wake_ns) p.wake_latency_ns = *r.wake_ns;
  if (r.wake_nj) p.wake_nj_per_sector = *r.wake_nj;
  out.push_back(q);
}

// A CACTI-P (gated) report's leakage lines give the sleep-state leakage; the active leakage is the
// ungated report's of the same size and ports, which the file must then hold.
CactiTable pair(const std::vector<Parsed>& reports, const std::string& file) {
  CactiTable out;
  std::map<std::pair<long long, int>, const Parsed*> ungated;
  for (const Parsed& q : reports)
    if (!q.gated) ungated[{q.bytes, q.ports}] = &q;
  for (const Parsed& q : reports) {
    CactiPoint p = q.p;
    if (q.gated) {
      const auto it = ungated.find({q.bytes, q.ports});
      if (it == ungated.end())
        throw InputError(file, q.line, 0, "Total leakage power of a bank (mW)",
                         "a power-gated CACTI-P report needs the ungated report of the same memory in the file (its "
                         "active leakage)");
      p.gated_leak_mw = q.p.leak_mw;
      p.leak_mw = it->second->p.leak_mw;
    }
    out[{q.bytes, q.ports, q.sectors}] = p;
  }
  return out;
}

}  // namespace

CactiTable parse_cacti(const std::string& text, const std::string& file) {
  std::vector<Parsed> reports;
  std::optional<Report> cur;
  std::istringstream in(text);
  std::string raw;
  int line = 0;
  while (std::getline(in, raw)) {
    ++line;
    auto colon = raw.find(':');
    // CACTI-P's power-gating block separates its values with " - ".
    if (colon == std::string::npos) colon = raw.rfind(" - ") == std::string::npos ? colon : raw.rfind(" - ") + 1;
    if (colon == std::string::npos) continue;
    const std::string key = trim(raw.substr(0, colon)), val = trim(raw.substr(colon + 1));
    if (key == "Cache size") {
      if (cur) finish(*cur, file, reports);
      cur = Report{};
      cur->line = line;
      cur->size = number(val, file, line, key);
      continue;
    }
    if (!cur) continue;
    const auto set = [&](std::optional<double>& f) { f = number(val, file, line, key); };
    // The power-gating block repeats for a tag array; the data array's comes first.
    const auto set_first = [&](std::optional<double>& f) {
      if (!f) set(f);
    };
    if (key == "Block size") set(cur->block);
    else if (key == "Read write ports") set(cur->rw_ports);
    else if (key == "Read only ports") set(cur->r_ports);
    else if (key == "Write only ports") set(cur->w_ports);
    else if (key == "Number of banks" || key == "Cache banks (UCA)") set(cur->banks);
    else if (key == "Total dynamic read energy per access (nJ)") set(cur->rd_nj);
    else if (key == "Total dynamic write energy per access (nJ)") set(cur->wr_nj);
    else if (key == "Total leakage power of a bank (mW)") set(cur->leak_mw);
    else if (key == "Total gate leakage power of a bank (mW)") set(cur->gate_leak_mw);
    else if (key == "Inter-bank routing leakage (mW)") set(cur->routing_mw);
    else if (key == "Best Ndwl") set(cur->ndwl);
    else if (key == "Best Ndbl") set(cur->ndbl);
    else if (key == "Sub-array Sleep Tx size (um)") set_first(cur->pg_tx_um);
    else if (key == "Sub-array wakeup time (ns)") set_first(cur->pg_array_ns);
    else if (key == "WL wakeup time (ns)") set_first(cur->pg_wl_ns);
    else if (key == "BL floating wakeup time (ns)") set_first(cur->pg_bl_ns);
    else if (key == "Sub-array Tx energy (nJ)") set_first(cur->pg_array_nj);
    else if (key == "WL Tx energy (nJ)") set_first(cur->pg_wl_nj);
    else if (key == "Active mats per access") set_first(cur->pg_active_mats);
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
  if (cur) finish(*cur, file, reports);
  if (reports.empty()) throw InputError(file, 0, 0, "Cache size", "no CACTI report found");
  return pair(reports, file);
}

CactiTable load_cacti(const std::string& path) { return parse_cacti(yaml::read_file(path), path); }

}  // namespace capsgen::memory
