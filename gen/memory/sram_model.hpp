// SRAM energy and area model for the DESCNet memory exploration (docs/dse-memory.md): dynamic
// energy per byte accessed, leakage power, area, and the power-gating overheads (sleep-transistor
// area, wake-up energy and latency), as functions of size, banks, ports and sectors. Parameters come
// from a technology file (configs/tech/sram-32nm.yaml, fitted to DESCNet's Table III) and may be
// overridden per size by imported CACTI results (memory/cacti.hpp).
#pragma once

#include <map>
#include <string>
#include <tuple>

namespace capsgen::memory {

struct TechParams {
  std::string name, source_path;
  // area_mm2 = area_coeff * KiB^area_exp * (1 + area_port_k * (ports - 1)) * (banks / ref_banks)^bank_exp
  double area_coeff = 0, area_exp = 1, area_port_k = 0, bank_exp = 0;
  int ref_banks = 16;
  // leak_mw = leak_mw_per_kib * KiB * (1 + leak_port_k * (ports - 1))
  double leak_mw_per_kib = 0, leak_port_k = 0;
  // pJ per byte at ref_kib, scaled by (KiB / ref_kib)^dyn_exp and (1 + dyn_port_k * (ports - 1))
  double read_pj_per_byte = 0, write_pj_per_byte = 0, dyn_ref_kib = 64, dyn_exp = 0.5, dyn_port_k = 0;
  // power gating: sleep transistors pg_coeff * area^pg_area_exp * sectors^pg_sector_exp (mm2),
  // a gated-off sector still leaks off_leak_fraction, waking one sector costs wake_nj_per_mm2 per
  // mm2 of sector area and takes wake_latency_ns.
  double pg_coeff = 0, pg_area_exp = 1, pg_sector_exp = 0, off_leak_fraction = 0, wake_nj_per_mm2 = 0,
         wake_latency_ns = 0;
};

// One memory instance.
struct SramSpec {
  long long bytes = 0;
  int banks = 16;
  int ports = 1;
  int sectors = 1;  // per bank; > 1 means power gated
};

// The model's outputs for one instance.
struct SramFigures {
  double area_mm2 = 0;       // including sleep transistors when sectors > 1
  double pg_area_mm2 = 0;    // the sleep-transistor part
  double read_pj_per_byte = 0, write_pj_per_byte = 0;
  double leak_mw = 0;        // all sectors on
  double wake_nj_per_sector = 0;
  double wake_latency_ns = 0;
};

// A CACTI result for one (size, ports, sectors) point; replaces the fitted figures for it.
struct CactiPoint {
  double area_mm2 = 0, read_pj_per_byte = 0, write_pj_per_byte = 0, leak_mw = 0, wake_nj_per_sector = -1,
         wake_latency_ns = -1;
};
using CactiTable = std::map<std::tuple<long long, int, int>, CactiPoint>;  // (bytes, ports, sectors)

// Loads and checks a technology file; InputError names file, line and field.
TechParams load_tech(const std::string& path);

SramFigures evaluate_sram(const TechParams& t, const SramSpec& s, const CactiTable* cacti = nullptr);

}  // namespace capsgen::memory
