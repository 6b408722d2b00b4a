// DRAM energy per command from datasheet currents and timings (Micron TN-41-01, "Calculating Memory
// System Power for DDR3"; the ACT/PRE split of DRAMPower, Chandrasekar et al. 2011). All energies in
// picojoules for one rank (every chip of the rank executes each command).
//
//   E_ACT  = (IDD0 - IDD3N) * tRAS * VDD        E_PRE = (IDD0 - IDD2N) * tRP * VDD
//            (E_ACT + E_PRE = (IDD0*tRC - IDD3N*tRAS - IDD2N*tRP) * VDD: TN-41-01's P_ACT over one tRC)
//   E_RD   = (IDD4R - IDD3N) * tBURST * VDD      E_WR  = (IDD4W - IDD3N) * tBURST * VDD,  tBURST = BL/2 * tCK
//   E_REF  = (IDD5B - IDD3N) * tRFC * VDD
//   standby: IDD3N * VDD per cycle with a bank open (active standby), IDD2N * VDD with all banks
//   precharged (precharge standby); power-down and I/O/termination power are not modelled.
#pragma once

#include <cstdint>

#include "dram/dram_spec.hpp"

namespace capsgen::dram {

struct CommandEnergy {
  double act_pj = 0, pre_pj = 0, rd_pj = 0, wr_pj = 0, ref_pj = 0;
  double act_standby_pj_per_cycle = 0, pre_standby_pj_per_cycle = 0;
};

CommandEnergy command_energy(const DramSpec& spec);

// Energy of a run, by command (pJ).
struct EnergyBreakdown {
  double act = 0, pre = 0, rd = 0, wr = 0, ref = 0, act_standby = 0, pre_standby = 0;
  double total() const { return act + pre + rd + wr + ref + act_standby + pre_standby; }
  EnergyBreakdown& operator+=(const EnergyBreakdown& o);
};

struct CommandCounts {
  std::uint64_t act = 0, pre = 0, rd = 0, wr = 0, ref = 0;
  std::uint64_t active_cycles = 0;       // some bank open
  std::uint64_t precharged_cycles = 0;   // all banks precharged
};

EnergyBreakdown energy_of(const CommandEnergy& e, const CommandCounts& c);

}  // namespace capsgen::dram
