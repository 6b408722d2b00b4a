// SRAM energy and area model for the DESCNet memory exploration (docs/dse-memory.md section 2):
// dynamic energy per byte accessed, leakage power, area, and the power-gating costs (sectoring
// overhead, sleep leakage, wake-up energy and latency), as functions of size, banks, ports, block
// width and sectors. Two calibrations, chosen by the technology file's `model`:
//   cacti7  (configs/tech/sram-cacti7-*.yaml, written by scripts/fit_sram_cacti7.py): log-quadratic
//           power laws fitted to CACTI 7 / CACTI-P results (tests/data/cacti7/cacti7-sram.csv);
//   descnet (configs/tech/sram-32nm.yaml): fitted to DESCNet's Table III (CACTI-P figures of the paper).
// Either may be overridden per size by imported CACTI results (memory/cacti.hpp).
#pragma once

#include <array>
#include <map>
#include <string>
#include <tuple>

namespace capsgen::memory {

// The CACTI-7 fit's figures, in the order of a group's coefficient rows.
enum FitFigure { kFitArea = 0, kFitRead, kFitWrite, kFitLeak, kFitPgArea, kFitPgLeak, kFitWakeNs, kFitWakeNj };
constexpr int kFitFigures = 8;
const char* fit_figure_name(int f);  // the technology file's key: "area_mm2", "read_nj", ...

// Sleep style of a gated sector: state lost (DESCNet's deep sleep) or kept (CACTI-P's).
enum class SleepStyle { NonRetentive, Retentive };

struct TechParams {
  std::string name, source_path;
  enum class Model { DescNet, Cacti7 } model = Model::DescNet;
  SleepStyle sleep = SleepStyle::NonRetentive;
  // cacti7: node, the fitted size range (KiB), and per (ports 1|3, block 1|16 B, banks 1|16) the
  // coefficients of ln y = c0 + c1 L + c2 L^2, L = log2(KiB); index = 4 (ports==3) + 2 (block==16) + (banks==16).
  int node_nm = 32;
  double fit_lo_kib = 8, fit_hi_kib = 8192;
  std::array<std::array<std::array<double, 3>, kFitFigures>, 8> fit{};
  // Both: a non-retentive sleeping sector still leaks off_leak_fraction of its share.
  // descnet (the rest): area_mm2 = area_coeff * KiB^area_exp * (1 + area_port_k * (ports - 1)) * (banks / ref_banks)^bank_exp
  double area_coeff = 0, area_exp = 1, area_port_k = 0, bank_exp = 0;
  int ref_banks = 16;
  // leak_mw = leak_mw_per_kib * KiB * (1 + leak_port_k * (ports - 1))
  double leak_mw_per_kib = 0, leak_port_k = 0;
  // pJ per byte at ref_kib, scaled by (KiB / ref_kib)^dyn_exp and (1 + dyn_port_k * (ports - 1))
  double read_pj_per_byte = 0, write_pj_per_byte = 0, dyn_ref_kib = 64, dyn_exp = 0.5, dyn_port_k = 0;
  // power gating: sleep transistors pg_coeff * area^pg_area_exp * sectors^pg_sector_exp (mm2),
  // waking one sector costs wake_nj_per_mm2 per mm2 of sector area and takes wake_latency_ns.
  double pg_coeff = 0, pg_area_exp = 1, pg_sector_exp = 0, off_leak_fraction = 0, wake_nj_per_mm2 = 0,
         wake_latency_ns = 0;
};

// One memory instance.
struct SramSpec {
  long long bytes = 0;
  int banks = 16;
  int ports = 1;
  int sectors = 1;  // per bank; > 1 means power gated
  int block_bytes = 16;  // bytes of one access (the memory's word); the cacti7 model depends on it
};

// The model's outputs for one instance.
struct SramFigures {
  double area_mm2 = 0;       // including the gating's area when sectors > 1
  double pg_area_mm2 = 0;    // the gating's part: sleep transistors (cacti7: and the sectors' periphery)
  double read_pj_per_byte = 0, write_pj_per_byte = 0;
  double leak_mw = 0;        // all sectors on
  double wake_nj_per_sector = 0;
  double wake_latency_ns = 0;
  // A sleeping sector's leakage as a fraction of its share of leak_mw (the sleep style's).
  double sleep_leak_fraction = 0;
  // Where the figures come from: "model" (the technology file), "cacti" (an imported report for this
  // size, ports and sectors), "cacti + model gating" (an imported ungated report with the model's
  // sectoring and sleep figures applied on top).
  std::string source = "model";
};

// Wake-up latency in whole cycles at clock_mhz (0 when there is none).
int wake_cycles(const SramFigures& f, double clock_mhz);

// The cacti7 model's raw figure f for a memory (no sectoring): KiB, ports, block bytes, banks.
// Sizes outside the fitted range continue along the fit's tangent; ports, block and banks are
// interpolated log-linearly between the fitted 1 and 3 ports, 1 and 16 B, 1 and 16 banks (ports and
// block clamped to that range, banks extrapolated).
double cacti7_figure(const TechParams& t, int f, double kib, int ports, int block_bytes, double banks);

// A CACTI result for one (size, ports, sectors) point; replaces the fitted figures for it.
// leak_mw is the whole memory (all banks plus the inter-bank routing). Gated points (sectors > 1) may
// carry CACTI-P's own sleep leakage (gated_leak_mw, whole memory asleep; -1: not in the report).
struct CactiPoint {
  double area_mm2 = 0, read_pj_per_byte = 0, write_pj_per_byte = 0, leak_mw = 0, wake_nj_per_sector = -1,
         wake_latency_ns = -1, gated_leak_mw = -1;
};
using CactiTable = std::map<std::tuple<long long, int, int>, CactiPoint>;  // (bytes, ports, sectors)

// Loads and checks a technology file; InputError names file, line and field.
TechParams load_tech(const std::string& path);

SramFigures evaluate_sram(const TechParams& t, const SramSpec& s, const CactiTable* cacti = nullptr);

}  // namespace capsgen::memory
