// DESCNet scratchpad memories (DESCNet Sec. V-A/V-B): per memory, banks x sectors of behavioral
// synchronous RAM, one sleep request/acknowledge pair per sector index (shared by all banks), a
// wake-up latency of scratchpad.wakeup_cycles, and error flags for accesses to sleeping sectors.
// SEP emits the data, weight and acc memories (one port per bank), SMP the shared memory (three
// ports per bank: weights, data, partial sums in parallel), HY all four.
// Interface, handshake waveforms and the lost-contents model: docs/rtl-scratchpad.md.
#pragma once

#include <string>
#include <vector>

#include "config/accel_config.hpp"
#include "emit/design.hpp"

namespace capsgen::emit {

// Behavioral sector RAM with P read/write ports (synchronous read). One module per port count;
// Width, Depth and AddrWidth are real parameters. An ASIC flow swaps an SRAM macro in here.
std::string spm_ram_module(int ports);  // "capsgen_spm_ram_p<ports>"
// JSON summary of the memories for the block testbenches (schemas/scratchpad.schema.json).
inline constexpr const char* kScratchpadSummaryName = "scratchpad.json";

struct SpmGeometry {
  std::string name;          // data, weight, acc, shared
  std::string module;        // capsgen_spm_<name>
  MemoryConfig mem;
  int ports = 1;             // read/write ports per bank
  long long words_per_sector = 0;
  int sector_bits = 0;       // address bits selecting the sector (0 with one sector)
  int offset_bits = 0;       // address bits of a word within a sector (>= 1)
  int addr_bits = 0;         // per-bank address: {sector, offset}
  bool power_gating = false;
  int wakeup_cycles = 0;
};

// The memories of the preset's organization, in emission order.
std::vector<SpmGeometry> spm_memories(const AccelConfig& cfg);

Module build_spm_ram(int ports);
Module build_spm_memory(const SpmGeometry& g);
nlohmann::json scratchpad_summary(const AccelConfig& cfg);

// RAM modules, one memory module per memory of the organization, scratchpad.json.
void emit_scratchpad(const AccelConfig& cfg, Design& design);

}  // namespace capsgen::emit
