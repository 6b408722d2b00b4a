// Import of CACTI / CACTI-P text reports (the "cacti -infile" console output), so that users who
// have the tool can replace the fitted SRAM figures by its results for the sizes in question.
#pragma once

#include <string>

#include "memory/sram_model.hpp"

namespace capsgen::memory {

// Parses every report in the text (each starts at a "Cache size" line). Read per report:
//   Cache size (bytes), Block size (bytes: one access), Read write / Read only / Write only ports,
//   Number of banks, Total dynamic read / write energy per access (nJ), Total leakage power of a
//   bank (mW), Total gate leakage power of a bank (mW), Cache height x width (mm);
//   with more than one bank "Inter-bank routing leakage (mW) : X", a line the user adds: CACTI's
//   bank lines hold one bank PLUS the inter-bank routing, so the whole memory's leakage is
//   banks x (subthreshold + gate - routing) + routing, and CACTI does not print the routing alone;
//   CACTI-P runs with power gating (recognised by their "Sub-array Sleep Tx size (um) - X" block):
//   "Sectors : N" (N >= 2, added by the user: the sector count the run stands for), Best Ndwl / Ndbl,
//   the block's wake-up times and Tx energies and "Active mats per access"; their leakage lines are the
//   sleep-state (state-retentive) leakage, paired with the ungated report of the same memory, which the
//   file must hold, for the active leakage (CactiPoint::gated_leak_mw);
// optional overrides: "Wakeup latency (ns)", "Wakeup energy (nJ)" (per sector).
// A missing or malformed field throws InputError naming file, line and field.
CactiTable parse_cacti(const std::string& text, const std::string& file_name);
CactiTable load_cacti(const std::string& path);

}  // namespace capsgen::memory
