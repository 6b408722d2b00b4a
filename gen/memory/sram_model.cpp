#include "memory/sram_model.hpp"

#include <algorithm>
#include <cmath>

#include "config/yaml_util.hpp"
#include "core/input_error.hpp"

namespace capsgen::memory {

const char* fit_figure_name(int f) {
  static const char* n[] = {"area_mm2", "read_nj", "write_nj", "leak_mw", "pg_area_mm2", "pg_leak_mw", "wake_ns", "wake_nj"};
  return n[f];
}

int wake_cycles(const SramFigures& f, double clock_mhz) {
  return f.wake_latency_ns > 0 ? int(std::ceil(f.wake_latency_ns * clock_mhz / 1000.0 - 1e-9)) : 0;
}

namespace {

void load_descnet(const yaml::MapReader& top, TechParams& t) {
  top.allow_only({"name", "description", "model", "area", "leakage", "dynamic", "power_gating"});
  const auto pos = [](const yaml::MapReader& m, std::string_view k, double hi) {
    return m.get(k).as_double(0.0, hi, true);
  };
  const auto nonneg = [](const yaml::MapReader& m, std::string_view k, double hi) {
    return m.get(k).as_double(0.0, hi);
  };
  const yaml::MapReader a = top.get_map("area");
  a.allow_only({"coeff_mm2", "size_exp", "port_k", "bank_exp", "ref_banks"});
  t.area_coeff = pos(a, "coeff_mm2", 1e3);
  t.area_exp = a.get("size_exp").as_double(0.5, 2.0);
  t.area_port_k = nonneg(a, "port_k", 100);
  t.bank_exp = nonneg(a, "bank_exp", 1);
  t.ref_banks = a.get_int("ref_banks", 1, 1024);
  const yaml::MapReader l = top.get_map("leakage");
  l.allow_only({"mw_per_kib", "port_k"});
  t.leak_mw_per_kib = pos(l, "mw_per_kib", 1e3);
  t.leak_port_k = nonneg(l, "port_k", 100);
  const yaml::MapReader d = top.get_map("dynamic");
  d.allow_only({"read_pj_per_byte", "write_pj_per_byte", "ref_kib", "size_exp", "port_k"});
  t.read_pj_per_byte = pos(d, "read_pj_per_byte", 1e4);
  t.write_pj_per_byte = pos(d, "write_pj_per_byte", 1e4);
  t.dyn_ref_kib = pos(d, "ref_kib", 1e7);
  t.dyn_exp = nonneg(d, "size_exp", 2);
  t.dyn_port_k = nonneg(d, "port_k", 100);
  const yaml::MapReader p = top.get_map("power_gating");
  p.allow_only({"coeff_mm2", "area_exp", "sector_exp", "off_leak_fraction", "wake_nj_per_mm2", "wake_latency_ns"});
  t.pg_coeff = nonneg(p, "coeff_mm2", 1e3);
  t.pg_area_exp = nonneg(p, "area_exp", 2);
  t.pg_sector_exp = nonneg(p, "sector_exp", 2);
  t.off_leak_fraction = p.get("off_leak_fraction").as_double(0.0, 1.0);
  t.wake_nj_per_mm2 = nonneg(p, "wake_nj_per_mm2", 1e6);
  t.wake_latency_ns = nonneg(p, "wake_latency_ns", 1e6);
}

void load_cacti7(const yaml::MapReader& top, TechParams& t) {
  top.allow_only({"name", "description", "model", "node_nm", "fitted_kib", "sleep", "groups"});
  t.node_nm = top.get_int("node_nm", 1, 1000);
  const std::vector<yaml::Value> range = top.get("fitted_kib").as_seq();
  if (range.size() != 2) throw InputError(top.file(), top.get("fitted_kib").location().line, 0, top.field("fitted_kib"), "expected [lo, hi]");
  t.fit_lo_kib = range[0].as_double(1e-3, 1e9, true);
  t.fit_hi_kib = range[1].as_double(t.fit_lo_kib, 1e9, true);
  const yaml::MapReader sl = top.get_map("sleep");
  sl.allow_only({"style", "off_leak_fraction"});
  t.sleep = sl.get("style").as_enum({"non_retentive", "retentive"}) == 0 ? SleepStyle::NonRetentive : SleepStyle::Retentive;
  t.off_leak_fraction = sl.get("off_leak_fraction").as_double(0.0, 1.0);
  std::array<bool, 8> seen{};
  const yaml::Value groups = top.get("groups");
  for (const yaml::Value& gv : groups.as_seq()) {
    const yaml::MapReader g = gv.as_map();
    std::vector<std::string_view> keys{"ports", "block_bytes", "banks", "source"};
    for (int f = 0; f < kFitFigures; ++f) keys.push_back(fit_figure_name(f));
    g.allow_only(keys);
    const int ports = g.get("ports").as_int_in({1, 3}), block = g.get("block_bytes").as_int_in({1, 16}),
              banks = g.get("banks").as_int_in({1, 16});
    const int idx = 4 * (ports == 3) + 2 * (block == 16) + (banks == 16);
    if (seen[std::size_t(idx)])
      throw InputError(g.file(), g.where().line, 0, g.path(), "a second group for these ports, block_bytes and banks");
    seen[std::size_t(idx)] = true;
    for (int f = 0; f < kFitFigures; ++f) {
      const yaml::Value v = g.get(fit_figure_name(f));
      const std::vector<yaml::Value> c = v.as_seq();
      if (c.size() != 3) throw InputError(g.file(), v.location().line, 0, v.field(), "expected [c0, c1, c2]");
      for (int k = 0; k < 3; ++k) t.fit[std::size_t(idx)][std::size_t(f)][std::size_t(k)] = c[std::size_t(k)].as_double(-1e3, 1e3);
    }
  }
  for (int i = 0; i < 8; ++i)
    if (!seen[std::size_t(i)])
      throw InputError(top.file(), groups.location().line, 0, top.field("groups"),
                       "needs one group for each of ports 1|3, block_bytes 1|16, banks 1|16");
}

// ln y of one group's fit at L = log2(KiB); outside the fitted range along the tangent at its edge.
double fit_ln(const std::array<double, 3>& c, double L, double lo, double hi) {
  const double e = std::clamp(L, lo, hi);
  return c[0] + c[1] * e + c[2] * e * e + (c[1] + 2 * c[2] * e) * (L - e);
}

}  // namespace

TechParams load_tech(const std::string& path) {
  const YAML::Node doc = yaml::parse(yaml::read_file(path), path);
  const yaml::MapReader top = yaml::MapReader::root(doc, path);
  TechParams t;
  t.source_path = path;
  t.name = top.get_string("name");
  const std::string model = top.get_string("model", "descnet");
  if (model == "cacti7") {
    t.model = TechParams::Model::Cacti7;
    load_cacti7(top, t);
  } else if (model == "descnet") {
    load_descnet(top, t);
  } else {
    throw InputError(path, top.key_location("model").line, 0, "model", "expected descnet or cacti7, got '" + model + "'");
  }
  return t;
}

double cacti7_figure(const TechParams& t, int f, double kib, int ports, int block_bytes, double banks) {
  const double L = std::log2(kib), lo = std::log2(t.fit_lo_kib), hi = std::log2(t.fit_hi_kib);
  const double wp = std::clamp((ports - 1) / 2.0, 0.0, 1.0);
  const double wb = std::clamp(std::log2(double(std::max(1, block_bytes))) / 4.0, 0.0, 1.0);
  const double wk = std::log2(std::max(1.0, banks)) / 4.0;
  double y = 0;
  for (int p = 0; p < 2; ++p)
    for (int b = 0; b < 2; ++b) {
      const double w = (p ? wp : 1 - wp) * (b ? wb : 1 - wb);
      if (w == 0) continue;
      const int i = 4 * p + 2 * b;
      const double y1 = fit_ln(t.fit[std::size_t(i)][std::size_t(f)], L, lo, hi);
      const double y16 = fit_ln(t.fit[std::size_t(i + 1)][std::size_t(f)], L, lo, hi);
      y += w * (y1 + wk * (y16 - y1));
    }
  return std::exp(y);
}

namespace {

SramFigures eval_descnet(const TechParams& t, const SramSpec& s) {
  SramFigures f;
  const double kib = double(s.bytes) / 1024.0;
  const double ports = double(s.ports - 1);
  f.area_mm2 = t.area_coeff * std::pow(kib, t.area_exp) * (1 + t.area_port_k * ports) *
               std::pow(double(s.banks) / t.ref_banks, t.bank_exp);
  const double dyn = std::pow(kib / t.dyn_ref_kib, t.dyn_exp) * (1 + t.dyn_port_k * ports);
  f.read_pj_per_byte = t.read_pj_per_byte * dyn;
  f.write_pj_per_byte = t.write_pj_per_byte * dyn;
  f.leak_mw = t.leak_mw_per_kib * kib * (1 + t.leak_port_k * ports);
  f.wake_latency_ns = t.wake_latency_ns;
  f.sleep_leak_fraction = t.off_leak_fraction;
  if (s.sectors > 1) {
    // Sleep transistors and their drivers: one footer per sector index (DESCNet Fig. 15).
    f.pg_area_mm2 = t.pg_coeff * std::pow(f.area_mm2, t.pg_area_exp) * std::pow(double(s.sectors), t.pg_sector_exp);
    f.area_mm2 += f.pg_area_mm2;
  }
  f.wake_nj_per_sector = t.wake_nj_per_mm2 * (f.area_mm2 - f.pg_area_mm2) / s.sectors;
  return f;
}

// docs/dse-memory.md section 2.3: a memory of B banks with SC sectors per bank is B x SC independently
// powered arrays. Its periphery (decoders, sense amplifiers, drivers, the isolation at each array's
// edge) and the wiring to the parts cost what CACTI charges for cutting one bank into SC banks:
// area and leakage scale by X(bank, SC banks) / X(bank, 1 bank), X the fit at the bank's size (clamped
// to the fitted range). CACTI-P's sleep transistors and their control come on top (pg_area - area).
SramFigures eval_cacti7(const TechParams& t, const SramSpec& s) {
  SramFigures f;
  const double kib = double(s.bytes) / 1024.0;
  const int w = std::max(1, s.block_bytes);
  const auto fig = [&](int k, double size_kib, double banks) { return cacti7_figure(t, k, size_kib, s.ports, w, banks); };
  f.area_mm2 = fig(kFitArea, kib, s.banks);
  f.read_pj_per_byte = fig(kFitRead, kib, s.banks) * 1e3 / w;
  f.write_pj_per_byte = fig(kFitWrite, kib, s.banks) * 1e3 / w;
  f.leak_mw = fig(kFitLeak, kib, s.banks);
  f.wake_latency_ns = fig(kFitWakeNs, kib, s.banks);
  const double retained = std::min(1.0, fig(kFitPgLeak, kib, s.banks) / f.leak_mw);
  f.sleep_leak_fraction = t.sleep == SleepStyle::Retentive ? retained : t.off_leak_fraction;
  if (s.sectors > 1) {
    const double bank_kib = std::clamp(kib / s.banks, t.fit_lo_kib, t.fit_hi_kib);
    const double fa = fig(kFitArea, bank_kib, s.sectors) / fig(kFitArea, bank_kib, 1);
    const double fl = fig(kFitLeak, bank_kib, s.sectors) / fig(kFitLeak, bank_kib, 1);
    const double sleep_tx = std::max(0.0, fig(kFitPgArea, kib, s.banks) - f.area_mm2);
    f.pg_area_mm2 = f.area_mm2 * (std::max(1.0, fa) - 1) + sleep_tx;
    f.area_mm2 += f.pg_area_mm2;
    f.leak_mw *= std::max(1.0, fl);
  }
  // Waking a sector charges its share of the virtual rails CACTI-P charges for the whole memory.
  f.wake_nj_per_sector = fig(kFitWakeNj, kib, s.banks) / s.sectors;
  return f;
}

SramFigures eval_model(const TechParams& t, const SramSpec& s) {
  return t.model == TechParams::Model::Cacti7 ? eval_cacti7(t, s) : eval_descnet(t, s);
}

}  // namespace

SramFigures evaluate_sram(const TechParams& t, const SramSpec& s, const CactiTable* cacti) {
  SramFigures f = eval_model(t, s);
  if (!cacti) return f;
  if (auto it = cacti->find({s.bytes, s.ports, s.sectors}); it != cacti->end()) {
    // CACTI's own figures for this size, ports and sector count (CACTI-P's area includes its sleep
    // transistors). What the report lacks keeps the model's value, and the source says so.
    const CactiPoint& c = it->second;
    f.pg_area_mm2 = s.sectors > 1 ? std::min(f.pg_area_mm2, c.area_mm2) : 0.0;
    f.area_mm2 = c.area_mm2;
    f.read_pj_per_byte = c.read_pj_per_byte;
    f.write_pj_per_byte = c.write_pj_per_byte;
    f.leak_mw = c.leak_mw;
    bool all_cacti = true;
    if (c.wake_latency_ns >= 0) f.wake_latency_ns = c.wake_latency_ns;
    else all_cacti = s.sectors == 1;
    if (c.wake_nj_per_sector >= 0) f.wake_nj_per_sector = c.wake_nj_per_sector;
    else all_cacti = all_cacti && s.sectors == 1;
    if (s.sectors > 1) {
      if (t.sleep == SleepStyle::Retentive && c.gated_leak_mw >= 0) f.sleep_leak_fraction = std::min(1.0, c.gated_leak_mw / c.leak_mw);
      else all_cacti = false;  // CACTI models no non-retentive sleep: the model's residual
    }
    f.source = all_cacti ? "cacti" : "cacti + model gating";
    return f;
  }
  if (s.sectors > 1) {
    if (auto it = cacti->find({s.bytes, s.ports, 1}); it != cacti->end()) {
      // The report has this memory ungated only: its figures, with the model's sectoring overheads
      // (as ratios to the model's ungated memory) and the model's sleep and wake-up figures.
      const CactiPoint& c = it->second;
      SramSpec u = s;
      u.sectors = 1;
      const SramFigures m1 = eval_model(t, u);
      const double ka = c.area_mm2 / m1.area_mm2, kl = c.leak_mw / m1.leak_mw;
      f.area_mm2 *= ka;
      f.pg_area_mm2 *= ka;
      f.leak_mw *= kl;
      f.read_pj_per_byte = c.read_pj_per_byte;
      f.write_pj_per_byte = c.write_pj_per_byte;
      f.source = "cacti + model gating";
    }
  }
  return f;
}

}  // namespace capsgen::memory
