// Import of CACTI / CACTI-P text reports (the "cacti -infile" console output), so that users who
// have the tool can replace the fitted SRAM figures by its results for the sizes in question.
#pragma once

#include <string>

#include "memory/sram_model.hpp"

namespace capsgen::memory {

// Parses every report in the text (each starts at a "Cache size" line). Read per report:
//   Cache size (bytes), Block size (bytes: one access), Read write / Read only / Write only ports,
//   Number of banks, Total dynamic read / write energy per access (nJ), Total leakage power of a
//   bank (mW), Cache height x width (mm);
// optional: "Sectors : N" (the power-gating sectors the run was set up for; CACTI-P does not echo
// them, so users add the line), "Wakeup latency (ns)", "Wakeup energy (nJ)" (per sector).
// A missing or malformed field throws InputError naming file, line and field.
CactiTable parse_cacti(const std::string& text, const std::string& file_name);
CactiTable load_cacti(const std::string& path);

}  // namespace capsgen::memory
