#include "emit/pmu.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "emit/activation_internal.hpp"

namespace capsgen::emit {

using detail::lit;
using detail::zext;

std::string pmu_module(const SpmGeometry& g) { return "capsgen_pmu_" + g.name; }

Module build_pmu(const SpmGeometry& g) {
  if (!g.power_gating) throw std::logic_error("build_pmu: memory without power gating");
  const int SC = g.mem.sectors, W = g.wakeup_cycles, KB = kPmuCounterBits;
  if (SC < 1 || W < 0) throw std::logic_error("build_pmu: bad geometry");
  auto bit = [SC](const std::string& n, int i) { return SC == 1 ? n : fmt::format("{}[{}]", n, i); };

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
  m.clock_and_reset()
      .input("cmd_valid_i", "1", "command valid")
      .output("cmd_ready_o", "1", "command accepted when valid")
      .input("cmd_awake_i", str(SC), "sectors that must be on after this command; the others sleep")
      .input("cmd_wait_i", "1", "0: prefetch (accepted at once), 1: barrier (wait until cmd_awake_i is usable)")
      .output("sleep_req_o", str(SC), "to the memory's sleep_req_i: 1 = sleep (registered)")
      .input("sleep_ack_i", str(SC), "from the memory's sleep_ack_o: 1 = asleep or waking")
      .output("usable_o", str(SC), "sector requested on and acknowledged on: may be accessed this cycle")
      .output("asleep_cycles_o", str(SC * KB), fmt::format("per sector s, bits [s*{0} +: {0}]: cycles with sleep_ack_i[s] high", KB))
      .output("wake_count_o", str(KB), "sector wake-ups requested (1 -> 0 transitions of sleep_req_o bits)")
      .output("stall_cycles_o", str(KB), "cycles with a barrier command valid and not ready");

  m.comment("Sleep request levels (1 = sleep) and counters.");
  m.reg("req_q", str(SC));
  for (int s = 0; s < SC; ++s) m.reg(fmt::format("asleep_s{}_q", s), str(KB));
  m.reg("wake_q", str(KB));
  m.reg("stall_q", str(KB));
  m.wire("usable", str(SC));
  m.wire("need", str(SC), "sectors of the command not usable yet");
  m.wire("ready", "1");
  m.wire("wakes", str(SC), "sectors released by this cycle's command");
  m.wire("wake_inc", str(KB), "number of released sectors");

  m.blank();
  m.assign("usable", "~req_q & ~sleep_ack_i");
  m.assign("need", "cmd_awake_i & ~usable");
  m.assign("ready", fmt::format("~cmd_wait_i | (need == {})", lit(SC, 0)));
  m.assign("wakes", fmt::format("req_q & cmd_awake_i & {{{}{{cmd_valid_i}}}}", SC));
  {
    std::string sum;
    for (int s = 0; s < SC; ++s) sum += (s ? " + " : "") + zext(bit("wakes", s), 1, KB);
    m.assign("wake_inc", sum);
  }
  m.always_ff_reset({nb("req_q", lit(SC, 0))}, {if_("cmd_valid_i", {nb("req_q", "~cmd_awake_i")})});

  m.blank();
  m.comment("Counters.");
  {
    Stmts reset = {nb("wake_q", lit(KB, 0)), nb("stall_q", lit(KB, 0))};
    Stmts body = {nb("wake_q", "wake_q + wake_inc"),
                  if_("cmd_valid_i & ~ready", {nb("stall_q", fmt::format("stall_q + {}", lit(KB, 1)))})};
    for (int s = 0; s < SC; ++s) {
      const std::string c = fmt::format("asleep_s{}_q", s);
      reset.push_back(nb(c, lit(KB, 0)));
      body.push_back(if_(bit("sleep_ack_i", s), {nb(c, fmt::format("{} + {}", c, lit(KB, 1)))}));
    }
    m.always_ff_reset(reset, body);
  }

  m.blank();
  m.assign("cmd_ready_o", "ready");
  m.assign("sleep_req_o", "req_q");
  m.assign("usable_o", "usable");
  for (int s = 0; s < SC; ++s) m.assign(expr_slice("asleep_cycles_o", s, str(KB)), fmt::format("asleep_s{}_q", s));
  m.assign("wake_count_o", "wake_q");
  m.assign("stall_cycles_o", "stall_q");
  return m;
}

std::string pmu_summary(const AccelConfig& cfg) {
  std::string s = file_header(cfg, "Power-management units: one per scratchpad memory, read by tb/pmu_tb.cpp.", "#");
  s += fmt::format("counter_bits {}\n", kPmuCounterBits);
  s += "# pmu <memory name> <module> <sectors> <wakeup_cycles>\n";
  for (const SpmGeometry& g : spm_memories(cfg))
    s += fmt::format("pmu {} {} {} {}\n", g.name, pmu_module(g), g.mem.sectors, g.wakeup_cycles);
  return s;
}

void emit_pmu(const AccelConfig& cfg, Design& design) {
  if (!cfg.scratchpad.power_gating) return;
  for (const SpmGeometry& g : spm_memories(cfg)) design.add_module(build_pmu(g));
  design.add_other_file(kPmuSummaryName, pmu_summary(cfg));
}

}  // namespace capsgen::emit
