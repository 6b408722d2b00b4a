// DESCNet memory design-space exploration (Marchisio et al., DESCNet, Section V; docs/dse-memory.md):
// the organizations SMP (one shared 3-port memory), SEP (separate data, weight and accumulator
// memories) and HY (a shared memory beside smaller separate ones), each without and with sector
// power gating, sized from the compiler's per-operation usage (Eq. 1-2, Algorithm 1) with sector
// counts from sigma(s) (Algorithm 2), evaluated for area and on-chip energy over one inference.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "compiler/compiler.hpp"
#include "memory/sram_model.hpp"

namespace capsgen::memory {

class StreamedEvaluator;  // memory/streamed.hpp

enum Mem { kShared = 0, kData = 1, kWeight = 2, kAcc = 3 };
constexpr int kMems = 4;
const char* mem_name(int m);  // "shared", "data", "weight", "acc"

// The six design options, in DESCNet's order.
enum Option { kSep = 0, kSepPg, kSmp, kSmpPg, kHy, kHyPg };
constexpr int kOptions = 6;
const char* option_name(int o);  // "SEP", "SEP-PG", ...
inline bool option_pg(int o) { return o % 2 == 1; }

// One operation as the exploration sees it: cycles, usage and on-chip accesses (bytes) of the data
// (1), weight (2) and accumulator (3) memories; index 0 unused.
struct OpProfile {
  std::string name;
  long long cycles = 0;
  std::array<long long, kMems> usage{}, reads{}, writes{};
  long long offchip_rd = 0, offchip_wr = 0;
};
std::vector<OpProfile> profiles_from(const std::vector<OpStats>& stats);

struct DseOptions {
  int banks = 16;            // per memory (DESCNet: one per array row/column)
  int max_sectors = 512;     // cap on sigma(s)
  // Word bytes per memory (shared, data, weight, acc); > 0 keeps only the sector counts that split the
  // memory into whole words (sector_pool's granule = banks x word bytes). 0: DESCNet's sigma(s) as is.
  std::array<int, kMems> word_bytes{};
  // Bytes of one access per memory (its word), for the SRAM model's per-access energies.
  std::array<int, kMems> block_bytes{16, 16, 16, 16};
  // Sizes (bytes) acceptable besides the powers of two; DESCNet adds 25, 108, 450 and 460 KiB.
  std::vector<long long> extra_sizes;
  // SEP beyond Eq. 2: each memory also 1..size_steps powers of two larger than its Eq. 2 size (with the
  // streamed evaluation a larger memory means fewer parts, fewer cycles and less DRAM traffic).
  int size_steps = 0;
  // SEP beyond Eq. 2: every size of Algorithm 1's range for each memory (fit(min_i U_ik) .. Eq. 2's),
  // smaller memories that the streamed program handles with more parts.
  bool sep_range = false;
  int threads = 1;
  double clock_mhz = 250;
  const CactiTable* cacti = nullptr;
  // Called after each batch of configurations with (evaluated, total).
  std::function<void(long long, long long)> progress;
  // Receives the CSV rows of all configurations in id order (none if empty).
  std::function<void(const std::string&)> csv_sink;
  // Applied to each job's CSV text on the worker thread before csv_sink (e.g. compression).
  std::function<std::string(const std::string&)> csv_transform;
  long long sample_every = 0;  // keep every n-th configuration in DseResult::sample (0: none)
  // Streamed evaluation (docs/dse-memory.md section 7): each configuration's cycles, accesses and sector
  // power from the program the chip runs with its memories (one compile per size tuple, shared by the
  // option with and without power gating). Size tuples the chip cannot run are not evaluated
  // (DseResult::skipped). Null: the flat program's per-operation profile `ops`.
  const StreamedEvaluator* streamed = nullptr;
  // Off-chip DRAM energy per byte read and written (docs/dse-memory.md section 2).
  double offchip_rd_pj_per_byte = 0, offchip_wr_pj_per_byte = 0;
  // Rank by on-chip plus off-chip energy (DESCNet ranks by on-chip energy: false).
  bool objective_total = false;
  // Called after each size tuple the streamed evaluation compiled, with (compiled, total).
  std::function<void(long long, long long)> compile_progress;
};

// One configuration: sizes (bytes, 0 = absent) and sectors per memory, and its figures.
struct ConfigPoint {
  long long id = 0;
  int option = 0;
  std::array<long long, kMems> bytes{};
  std::array<int, kMems> sectors{};
  double area_mm2 = 0, dynamic_mj = 0, static_mj = 0, wakeup_mj = 0;
  double energy_mj() const { return dynamic_mj + static_mj + wakeup_mj; }  // on-chip memories
  // Off-chip DRAM energy of the program (flat: the same for every configuration; streamed: the traffic
  // of the program compiled for these memories), and the part of it the ranking counts.
  double offchip_mj = 0, ranked_offchip_mj = 0;
  // What the Pareto filter and the best per option minimize besides area (DseOptions::objective_total).
  double ranked_mj() const { return energy_mj() + ranked_offchip_mj; }
};

// Everything about one configuration, for reports and plots.
struct ConfigDetail {
  ConfigPoint point;
  std::array<SramFigures, kMems> figures{};
  std::array<double, kMems> area{}, dynamic{}, leak{}, wakeup{};  // mm2, mJ
  std::vector<std::array<int, kMems>> sectors_on;                  // per operation
  // Streamed evaluation: per operation, memory and sector the fraction of the operation's cycles the
  // sector is awake (sectors_on: how many are awake at some time in the operation).
  std::vector<std::array<std::vector<double>, kMems>> awake_fraction;
  long long cycles = 0;  // per inference (flat: the operations' sum; streamed: the stream timing model)
  long long dram_read_bytes = -1, dram_write_bytes = -1;  // streamed: the program's DRAM traffic (-1: flat)
  std::vector<double> op_energy_mj;                                // per operation, all memories
};

struct DseResult {
  long long evaluated = 0;  // enumerated; skipped ones included
  // Streamed evaluation: configurations not evaluated (sizes the chip cannot run), with one
  // reason per organization and size tuple.
  long long skipped = 0;
  std::vector<std::string> skipped_why;
  std::array<long long, kOptions> per_option{};
  std::vector<ConfigPoint> pareto;  // ascending area, strictly descending energy
  std::array<ConfigPoint, kOptions> best{};  // lowest energy (then area) per option
  std::array<bool, kOptions> has_best{};
  std::vector<ConfigPoint> sample;  // every sample_every-th configuration, by id
};

// sigma(s): the powers of two in [2, s/128], at most max_sectors (DESCNet footnote 11). With granule > 0
// (banks x word bytes) only counts that split the memory into whole words per bank and sector, i.e.
// bytes % (granule x sectors) == 0: what capsgen's scratchpads can be built with.
std::vector<int> sector_pool(long long bytes, int max_sectors, long long granule = 0);
// The smallest power of two >= x (x <= 0 gives 0), at least 1 KiB.
long long pow2_size(long long x);
// The smallest acceptable size >= x: pow2_size(x) or a smaller extra size >= x (DESCNet footnote 12).
long long fit_size(long long x, const std::vector<long long>& extra);

// Number of configurations the exploration will evaluate (without evaluating them).
long long count_configs(const std::vector<OpProfile>& ops, const DseOptions& opt);

DseResult run_dse(const std::vector<OpProfile>& ops, const TechParams& tech, const DseOptions& opt);

ConfigDetail evaluate_config(const std::vector<OpProfile>& ops, const TechParams& tech, const DseOptions& opt,
                             const ConfigPoint& cfg);

// Pareto filter (minimize area and ranked_mj()): ascending area, strictly descending energy; ties keep
// the lowest id.
std::vector<ConfigPoint> pareto_front(std::vector<ConfigPoint> pts);

std::string csv_header();
std::string csv_row(const ConfigPoint& p);

}  // namespace capsgen::memory
