// The energy of one inference on capsgen_chip (`capsgen sim --memory dram`, docs/energy.md): the
// datapath's (activity-based from a capsgen.datapath-energy/1 document, or an estimate per MAC from
// one, labelled so), every scratchpad memory's (accesses x energy per access of the SRAM model, leakage
// over the sector-cycles the PMUs kept awake and asleep, wake-ups) and the DRAM's (the model behind
// the testbench), beside DESCNet's on-chip / off-chip split for CapsNet.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "config/accel_config.hpp"
#include "sim/results.hpp"

namespace capsgen::cli {

struct EnergyOptions {
  std::filesystem::path tech;                     // SRAM technology file (configs/tech/*.yaml)
  std::optional<std::filesystem::path> datapath;  // --datapath-energy FILE
  std::filesystem::path stored_dir;               // bench/energy: stored <preset>-<network>.json documents
};

// The run the energy is of.
struct EnergyRun {
  const AccelConfig& cfg;
  std::string network;
  const sim::ChipResults& g;
  long long cycles = 0;       // the program's (start_i to done_o)
  long long useful_macs = 0;
};

struct MemoryEnergy {
  std::string name;
  int kib = 0, banks = 0, sectors = 1, ports = 1, word_bytes = 0;
  long long reads = 0, writes = 0;   // bank accesses (engine and DMA)
  double read_pj = 0, write_pj = 0;  // per access
  double leak_mw = 0, sleep_fraction = 0, wake_nj = 0;
  long long awake_sector_cycles = 0, asleep_sector_cycles = 0, wakes = 0;
  double dynamic_uj = 0, leakage_uj = 0, wake_uj = 0;
  double total_uj() const { return dynamic_uj + leakage_uj + wake_uj; }
};

struct ChipEnergy {
  std::string datapath_kind;  // "activity" (this preset and network), "estimate" (per MAC), "none"
  std::string datapath_file, datapath_note;
  double datapath_uj = 0;
  std::vector<std::pair<std::string, double>> datapath_blocks;  // (top, uJ)
  std::string tech;
  std::vector<MemoryEnergy> memories;
  double sram_uj = 0, dram_uj = 0;
  double total_uj() const { return datapath_uj + sram_uj + dram_uj; }
};

// Throws InputError for an unreadable technology or datapath document.
// The input files of chip_energy (--datapath-energy, the technology file) read and checked against the
// run: called before the simulation, so bad input costs no simulation and writes nothing.
void check_energy_inputs(const AccelConfig& cfg, const std::string& network, const EnergyOptions& opt);

ChipEnergy chip_energy(const EnergyRun& run, const EnergyOptions& opt);
std::string chip_energy_md(const ChipEnergy& e);
nlohmann::ordered_json chip_energy_json(const ChipEnergy& e);

}  // namespace capsgen::cli
