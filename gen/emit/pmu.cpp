#include "emit/pmu.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <vector>

namespace capsgen::emit {

std::string pmu_module(const SpmGeometry& g) { return "capsgen_pmu_" + g.name; }

namespace {

// The command handshake and the PMU's promises (docs/rtl-assertions.md).
void add_pmu_assertions(Module& m, int SC) {
  const Expr cmd_valid_i = m.port("cmd_valid_i"), cmd_ready_o = m.port("cmd_ready_o");
  const Expr cmd_awake_i = m.port("cmd_awake_i"), cmd_wait_i = m.port("cmd_wait_i");
  const Expr sleep_req_o = m.port("sleep_req_o"), usable_o = m.port("usable_o");
  auto implies = [](const Expr& a, const Expr& b) { return ~a | b; };
  m.assumption("a_cmd_held",
               implies(past(cmd_valid_i & ~cmd_ready_o),
                       cmd_valid_i & (cmd_awake_i == past(cmd_awake_i)) & (cmd_wait_i == past(cmd_wait_i))),
               "A command that was valid and not ready stays valid and unchanged (valid/ready).");
  m.assertion("a_prefetch_ready", cmd_wait_i | cmd_ready_o, "A prefetch is accepted in the cycle it is presented.");
  m.assertion("a_barrier_usable", implies(cmd_valid_i & cmd_wait_i & cmd_ready_o, (cmd_awake_i & ~usable_o) == lit(SC, 0)),
              "A barrier is accepted only when every sector it names is usable.");
  m.assertion("a_usable_awake", (usable_o & sleep_req_o) == lit(SC, 0), "A usable sector is requested on.");
  m.assertion("a_req_by_command", past(cmd_valid_i) | (sleep_req_o == past(sleep_req_o)),
              "The sleep requests change only at a command.");
}

}  // namespace

Module build_pmu(const SpmGeometry& g) {
  if (!g.power_gating) throw std::logic_error("build_pmu: memory without power gating");
  const int SC = g.mem.sectors, W = g.wakeup_cycles, KB = kPmuCounterBits;
  if (SC < 1 || W < 0) throw std::logic_error("build_pmu: bad geometry");
  // Sector s of a per-sector vector (the vector itself when there is one sector).
  auto sector = [SC](const Expr& v, int s) { return SC == 1 ? v : v[s]; };

  Module m(pmu_module(g),
           fmt::format(
               "Power-management unit of scratchpad memory '{}' ({}): {} sector{}, wake-up latency W = {}\n"
               "(docs/rtl-pmu.md). Command (valid/ready): cmd_awake_i = the sectors that must be on, every other\n"
               "sector is put to sleep. The request levels sleep_req_o are a register loaded with ~cmd_awake_i at\n"
               "every clock edge where cmd_valid_i is high: a command presented in cycle t changes sleep_req_o in\n"
               "cycle t+1 (holding a waiting command re-loads the same levels).\n"
               "  cmd_wait_i = 0 (prefetch): accepted in the cycle it is presented (cmd_ready_o = 1).\n"
               "  cmd_wait_i = 1 (barrier): cmd_ready_o is high in the first cycle in which every sector of\n"
               "  cmd_awake_i is usable; the command is accepted in that cycle.\n"
               "usable_o[s] = ~sleep_req_o[s] & ~sleep_ack_i[s]. With the memory's handshake (ack falls W+1 cycles\n"
               "after the first cycle with the request low), a barrier presented in cycle t completes in cycle\n"
               "max(t, L_s + W + 2) over its sectors s that are not usable in t, L_s = the last cycle <= t with\n"
               "sleep_req_o[s] high: t + {} when a sector was still requested asleep in t; in t itself when the\n"
               "sectors were released (prefetch command accepted) at least {} cycles before t.\n"
               "Counters since reset ({} bits, wrap): asleep_cycles_o[s] cycles with sleep_ack_i[s] high (sector-\n"
               "cycles asleep or waking), wake_count_o the 1 -> 0 transitions of sleep_req_o bits (summed over\n"
               "sectors), stall_cycles_o the cycles with a barrier valid but not ready. Reset: all sectors on.",
               g.name, g.module, SC, SC == 1 ? "" : "s", W, W + 2, W + 2, KB));
  m.clock_and_reset();
  const Expr cmd_valid_i = m.input("cmd_valid_i", 1, "command valid");
  const Expr cmd_ready_o = m.output("cmd_ready_o", 1, "command accepted when valid");
  const Expr cmd_awake_i = m.input("cmd_awake_i", SC, "sectors that must be on after this command; the others sleep");
  const Expr cmd_wait_i =
      m.input("cmd_wait_i", 1, "0: prefetch (accepted at once), 1: barrier (wait until cmd_awake_i is usable)");
  const Expr sleep_req_o = m.output("sleep_req_o", SC, "to the memory's sleep_req_i: 1 = sleep (registered)");
  const Expr sleep_ack_i = m.input("sleep_ack_i", SC, "from the memory's sleep_ack_o: 1 = asleep or waking");
  const Expr usable_o = m.output("usable_o", SC, "sector requested on and acknowledged on: may be accessed this cycle");
  const Expr asleep_cycles_o =
      m.output("asleep_cycles_o", SC * KB,
               fmt::format("per sector s, bits [s*{0} +: {0}]: cycles with sleep_ack_i[s] high", KB));
  const Expr wake_count_o =
      m.output("wake_count_o", KB, "sector wake-ups requested (1 -> 0 transitions of sleep_req_o bits)");
  const Expr stall_cycles_o = m.output("stall_cycles_o", KB, "cycles with a barrier command valid and not ready");

  m.comment("Sleep request levels (1 = sleep) and counters.");
  FlopGroup group(m);
  const Flop sleep_req = group.flop("sleep_req", SC, "1 = sleep, loaded at every command");
  std::vector<Flop> asleep;
  for (int s = 0; s < SC; ++s)
    asleep.push_back(
        group.flop(fmt::format("asleep_cycles_s{}", s), KB, fmt::format("cycles sector {} was asleep or waking", s)));
  const Flop wake_count = group.flop("wake_count", KB, "sectors released so far");
  const Flop stall_cycles = group.flop("stall_cycles", KB, "cycles a barrier waited");
  const Expr usable = m.wire("usable", SC);
  const Expr need = m.wire("need", SC, "sectors of the command not usable yet");
  const Expr ready = m.wire("ready", 1);
  const Expr wakes = m.wire("wakes", SC, "sectors released by this cycle's command");
  const Expr wake_inc = m.wire("wake_inc", KB, "number of released sectors");

  m.blank();
  m.assign(usable, ~sleep_req.q & ~sleep_ack_i);
  m.assign(need, cmd_awake_i & ~usable);
  m.assign(ready, ~cmd_wait_i | (need == lit(SC, 0)));
  m.assign(wakes, sleep_req.q & cmd_awake_i & rep(SC, cmd_valid_i));
  {
    Expr sum = zext(sector(wakes, 0), KB);
    for (int s = 1; s < SC; ++s) sum = sum + zext(sector(wakes, s), KB);
    m.assign(wake_inc, sum);
  }

  const std::vector<Flop>& flops = group.flops();
  Stmts next = hold_flops(flops);
  next.push_back(if_(cmd_valid_i, {blk(sleep_req.d, ~cmd_awake_i)}));
  next.push_back(blk(wake_count.d, wake_count.q + wake_inc));
  next.push_back(if_(cmd_valid_i & ~ready, {blk(stall_cycles.d, stall_cycles.q + lit(KB, 1))}));
  for (int s = 0; s < SC; ++s)
    next.push_back(if_(sector(sleep_ack_i, s), {blk(asleep[s].d, asleep[s].q + lit(KB, 1))}));
  m.blank();
  m.comment("Next state: the request levels at a command, the counters.");
  m.always_comb(std::move(next));
  m.always_ff_flops(flops);

  m.blank();
  m.assign(cmd_ready_o, ready);
  add_pmu_assertions(m, SC);
  m.assign(sleep_req_o, sleep_req.q);
  m.assign(usable_o, usable);
  for (int s = 0; s < SC; ++s) m.assign(asleep_cycles_o.part(s, KB), asleep[s].q);
  m.assign(wake_count_o, wake_count.q);
  m.assign(stall_cycles_o, stall_cycles.q);
  return m;
}

// pmu.json (schemas/pmu.schema.json): one power-management unit per scratchpad memory, read by
// tb/pmu_tb.cpp.
nlohmann::json pmu_summary(const AccelConfig& cfg) {
  nlohmann::json pmus = nlohmann::json::array();
  for (const SpmGeometry& g : spm_memories(cfg))
    pmus.push_back({{"memory", g.name}, {"module", pmu_module(g)}, {"sectors", g.mem.sectors}, {"wakeup_cycles", g.wakeup_cycles}});
  return {{"counter_bits", kPmuCounterBits}, {"pmus", pmus}};
}

void emit_pmu(const AccelConfig& cfg, Design& design) {
  if (!cfg.scratchpad.power_gating) return;
  for (const SpmGeometry& g : spm_memories(cfg)) design.add_module(build_pmu(g));
  design.add_summary(kPmuSummaryName, pmu_summary(cfg));
}

}  // namespace capsgen::emit
