// ROMANet vs its baseline on a whole network: per layer the searched partitioning and schedule, the
// analytic access counts, and the address traces of both run through the DRAM model in burst and
// non-burst mode (row-buffer statistics, energy, throughput). Reports as Markdown and JSON.
#pragma once

#include <array>
#include <iosfwd>
#include <string>
#include <vector>

#include "dram/dram_model.hpp"
#include "dram/dram_spec.hpp"
#include "model/network.hpp"
#include "romanet/layer_model.hpp"
#include "romanet/search.hpp"
#include "romanet/tiling.hpp"

namespace capsgen::romanet {

struct EvalOptions {
  Buffers buffers;      // iBuff, wBuff, oBuff (bytes)
  ElementBytes bytes;   // bytes per ifmap, weight, ofmap/partial-sum element
  int array_rows = 8, array_cols = 8;  // the systolic array (recorded; the DRAM traffic does not depend on it)
  int buffer_banks = 8;                // SRAM banks per buffer (recorded; see docs/romanet.md)
  dram::DramSpec dram = dram::ddr3_1600_2gb_x8();
  int step_m = 1, step_n = 1, step_j = 1;  // Alg. 1 search steps
  bool all_orders = false;  // false: the orders of Alg. 2 over the network's layers; true: all six
  bool refresh = true;
  bool simulate = true;     // run the traces through the DRAM model
  bool ablation = false;    // also: ROMANet's schedules with the baseline's bank-contiguous mapping
};

// Methods compared. Romanet: Alg. 1/2 search, overlap reuse, ROMANet mapping. Baseline: OR/WR
// schedules, no overlap reuse, max Tj, bank-contiguous tiles. RomanetBankMapping (ablation):
// ROMANet's partitioning and schedule with the baseline's mapping.
enum Method : int { kRomanet = 0, kBaseline = 1, kRomanetBankMapping = 2 };
const char* method_key(int m);    // "romanet", "baseline", "romanet_bank_mapping"
const char* method_label(int m);  // "ROMANet", "baseline", "ROMANet schedule + baseline mapping"

struct ModeResult {
  bool valid = false;
  dram::DramStats stats;
  dram::EnergyBreakdown energy;  // pJ
  double throughput_gbps = 0;
};

struct MethodLayer {
  SearchResult search;
  Partition partition;
  AccessCounts counts;  // elements, with class_caps routing
  long long dram_accesses = 0;  // DRAM words (beats) read and written: Eq. 14-17's units
  ModeResult burst, nonburst;
};

struct LayerResult {
  LayerGeometry geo;
  ReuseFactors rf;
  int priority_order = 0;  // Alg. 2 (Table I)
  std::array<MethodLayer, 3> method;
};

struct MethodTotals {
  AccessCounts counts;
  long long dram_accesses = 0;
  ModeResult burst, nonburst;
};

struct NetworkResult {
  std::string name, model_path;
  std::vector<std::string> notes;
  std::vector<int> orders;  // Alg. 2's orders of this network
  std::vector<LayerResult> layers;
  std::array<MethodTotals, 3> totals;
  // Where ROMANet's fewer accesses come from (analytic, Sec. V-A's breakdown): ROMANet's search
  // (Alg. 2 schedules, free Tj) counted without ifmap overlap reuse, i.e. the baseline's model.
  AccessCounts romanet_without_overlap;
  // The baseline's schedules and model without its max-Tj rule (Tm, Tn, Tj all searched).
  AccessCounts baseline_free_tj;
  bool has_ablation = false;
  double search_seconds_romanet = 0, search_seconds_baseline = 0, simulate_seconds = 0;
};

// Optional dump of one layer's DRAM trace (one line per request with its cycles and outcome).
struct TraceDump {
  std::string layer;  // layer name
  int method = kRomanet;
  bool burst = true;
  std::ostream* out = nullptr;
  long long limit = -1;  // lines (-1: all)
};

// Throws InputError for layers the model cannot handle, std::length_error when a layer does not fit
// the DRAM, std::logic_error if the trace generator disagrees with the analytic counts.
NetworkResult evaluate_network(const Network& net, const EvalOptions& opt, const TraceDump* dump = nullptr);

// Reports. `paper_reference` adds ROMANet's published savings for the networks it evaluated.
std::string network_markdown(const NetworkResult& r, const EvalOptions& opt);
std::string table_markdown(const std::vector<NetworkResult>& results, const EvalOptions& opt);
std::string results_json(const std::vector<NetworkResult>& results, const EvalOptions& opt);

// ROMANet's reported DRAM access energy savings vs its baseline (percent), or a negative value if the
// paper did not evaluate the network ("alexnet" 12, "vgg16" 36, "mobilenet" 46).
double paper_energy_saving(const std::string& network_name);

}  // namespace capsgen::romanet
