#include "dram/dram_energy.hpp"

namespace capsgen::dram {

CommandEnergy command_energy(const DramSpec& s) {
  const DramPower& p = s.power;
  const DramTiming& t = s.timing;
  const double chips = s.org.chips_per_rank;
  const double ns = t.tck_ns;  // mA * ns * V = pJ
  CommandEnergy e;
  e.act_pj = chips * (p.idd0 - p.idd3n) * (t.ras * ns) * p.vdd;
  e.pre_pj = chips * (p.idd0 - p.idd2n) * (t.rp * ns) * p.vdd;
  e.rd_pj = chips * (p.idd4r - p.idd3n) * (s.burst_cycles() * ns) * p.vdd;
  e.wr_pj = chips * (p.idd4w - p.idd3n) * (s.burst_cycles() * ns) * p.vdd;
  e.ref_pj = chips * (p.idd5b - p.idd3n) * (t.rfc * ns) * p.vdd;
  e.act_standby_pj_per_cycle = chips * p.idd3n * ns * p.vdd;
  e.pre_standby_pj_per_cycle = chips * p.idd2n * ns * p.vdd;
  return e;
}

EnergyBreakdown& EnergyBreakdown::operator+=(const EnergyBreakdown& o) {
  act += o.act;
  pre += o.pre;
  rd += o.rd;
  wr += o.wr;
  ref += o.ref;
  act_standby += o.act_standby;
  pre_standby += o.pre_standby;
  return *this;
}

EnergyBreakdown energy_of(const CommandEnergy& e, const CommandCounts& c) {
  EnergyBreakdown b;
  b.act = e.act_pj * double(c.act);
  b.pre = e.pre_pj * double(c.pre);
  b.rd = e.rd_pj * double(c.rd);
  b.wr = e.wr_pj * double(c.wr);
  b.ref = e.ref_pj * double(c.ref);
  b.act_standby = e.act_standby_pj_per_cycle * double(c.active_cycles);
  b.pre_standby = e.pre_standby_pj_per_cycle * double(c.precharged_cycles);
  return b;
}

}  // namespace capsgen::dram
