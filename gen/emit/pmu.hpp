// Power-management unit (DESCNet Sec. V-B, docs/rtl-pmu.md): one capsgen_pmu_<name> per scratchpad
// memory of the organization when scratchpad.power_gating is on. It sits between the controller and
// the memory's sleep handshake (docs/rtl-scratchpad.md): the controller says which sectors must be on
// (valid/ready command: "prefetch" applies the new request levels and is accepted at once, "barrier"
// also waits until every requested sector is usable), the PMU drives the registered sleep requests,
// reports which sectors are usable, and counts asleep sector-cycles, wake-ups and barrier stalls.
#pragma once

#include <string>

#include "config/accel_config.hpp"
#include "emit/design.hpp"
#include "emit/scratchpad.hpp"

namespace capsgen::emit {

// JSON summary of the PMUs for the block testbench (schemas/pmu.schema.json; only written with
// power gating).
inline constexpr const char* kPmuSummaryName = "pmu.json";
inline constexpr int kPmuCounterBits = 32;  // every counter, wraps

// "capsgen_pmu_<memory name>".
std::string pmu_module(const SpmGeometry& g);
Module build_pmu(const SpmGeometry& g);
nlohmann::json pmu_summary(const AccelConfig& cfg);
// One PMU per memory of spm_memories(cfg) and pmu.json; nothing without power gating.
void emit_pmu(const AccelConfig& cfg, Design& design);

}  // namespace capsgen::emit
