#include "memory/sram_model.hpp"

#include <cmath>

#include "config/yaml_util.hpp"

namespace capsgen::memory {

TechParams load_tech(const std::string& path) {
  const YAML::Node doc = yaml::parse(yaml::read_file(path), path);
  const yaml::MapReader top = yaml::MapReader::root(doc, path);
  top.allow_only({"name", "description", "area", "leakage", "dynamic", "power_gating"});
  TechParams t;
  t.source_path = path;
  t.name = top.get_string("name");
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
  return t;
}

SramFigures evaluate_sram(const TechParams& t, const SramSpec& s, const CactiTable* cacti) {
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
  if (cacti) {
    if (auto it = cacti->find({s.bytes, s.ports, s.sectors}); it != cacti->end()) {
      const CactiPoint& c = it->second;
      // CACTI-P's area already includes the sleep transistors of a gated array.
      if (s.sectors > 1) f.pg_area_mm2 = t.pg_coeff * std::pow(c.area_mm2, t.pg_area_exp) * std::pow(s.sectors, t.pg_sector_exp);
      f.area_mm2 = c.area_mm2;
      f.read_pj_per_byte = c.read_pj_per_byte;
      f.write_pj_per_byte = c.write_pj_per_byte;
      f.leak_mw = c.leak_mw;
      if (c.wake_latency_ns >= 0) f.wake_latency_ns = c.wake_latency_ns;
      f.wake_nj_per_sector = c.wake_nj_per_sector >= 0 ? c.wake_nj_per_sector
                                                        : t.wake_nj_per_mm2 * f.area_mm2 / s.sectors;
      if (s.sectors > 1) f.pg_area_mm2 = std::min(f.pg_area_mm2, f.area_mm2);
      return f;
    }
  }
  if (s.sectors > 1) {
    // Sleep transistors and their drivers: one footer per sector index (DESCNet Fig. 15).
    f.pg_area_mm2 = t.pg_coeff * std::pow(f.area_mm2, t.pg_area_exp) * std::pow(double(s.sectors), t.pg_sector_exp);
    f.area_mm2 += f.pg_area_mm2;
  }
  f.wake_nj_per_sector = t.wake_nj_per_mm2 * (f.area_mm2 - f.pg_area_mm2) / s.sectors;
  return f;
}

}  // namespace capsgen::memory
