// Block test of capsgen_accumulator (one column): random loads/accumulations with random and
// extreme partial sums (saturation in both directions), back-to-back hits on one address
// (forwarding), the finished-entry stream and the read-out port, all checked bit-exactly and at
// the documented cycle against capsgen::fx::sat_add.
#include <cstdio>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "Vacc.h"
#include "common/bits.hpp"
#include "common/rng.hpp"
#include "common/sim.hpp"
#include "numerics/fixed.hpp"

namespace fx = capsgen::fx;

int accumulator_tb_main(int argc, char** argv) {
  const tb::Args args = tb::Args::parse(argc, argv, "");
  const tb::RtlConfig cfg = tb::RtlConfig::load(args.rtl_dir);
  tb::Sim sim(args);
  auto dut = std::make_unique<Vacc>(sim.context(), "acc");
  sim.add(*dut);
  sim.open_trace();
  tb::Rng rng(args.seed);
  tb::Report report("accumulator", args.max_errors);

  const int pw = cfg.psum_bits, aw = cfg.acc_addr_bits(), depth = cfg.acc_depth;
  constexpr int kLatency = 2;      // in_* -> out_* (docs/rtl-datapath.md)
  constexpr int kReadLatency = 1;  // rd_en_i -> rd_valid_o

  // Sequential model: `latest` is the value every input sees (the RTL forwards); `ram` is what the
  // read-out port sees (an input of cycle t is written at the end of cycle t+1).
  std::vector<std::int64_t> latest(depth, 0), ram(depth, 0);
  std::vector<bool> written(depth, false), ram_written(depth, false);
  struct Out {
    std::uint64_t due;
    bool valid;
    int addr;
    std::int64_t value;
  };
  struct Write {
    std::uint64_t at;  // applied to `ram` before reads of cycle `at`
    int addr;
    std::int64_t value;
  };
  std::deque<Out> outs, reads;
  std::deque<Write> writes;
  long long saturations_hi = 0, saturations_lo = 0, forwards = 0;

  sim.reset();
  const long long cycles = static_cast<long long>(30000 * args.scale);
  int prev_addr = -1;
  for (long long i = 0; i < cycles + 4 && !report.too_many(); ++i) {
    const std::uint64_t t = sim.cycle();
    const bool active = i < cycles;
    // ---- stimulus ----
    const int phase = static_cast<int>((i / 2000) % 4);  // 0: random, 1: saturate up, 2: down, 3: hot address
    bool valid = active && rng.chance(80);
    const int hot = std::min(depth, 4);
    int addr = static_cast<int>(phase == 3 || rng.chance(30) ? rng.uniform(0, hot - 1) : rng.uniform(0, depth - 1));
    bool accumulate = rng.chance(70) && written[addr];
    const bool last = rng.chance(40);
    std::int64_t psum = rng.signed_value(pw);
    std::int64_t bias = rng.chance(30) ? 0 : rng.signed_value(pw);
    if (phase == 1) psum = rng.chance(50) ? fx::smax(pw) : rng.uniform(0, fx::smax(pw));
    if (phase == 2) psum = rng.chance(50) ? fx::smin(pw) : rng.uniform(fx::smin(pw), 0);
    const bool rd = active && rng.chance(30);
    const int rd_addr = static_cast<int>(rng.uniform(0, depth - 1));
    dut->in_valid_i = valid;
    dut->in_accumulate_i = accumulate;
    dut->in_last_i = last;
    tb::put(dut->in_addr_i, 0, aw, static_cast<std::uint64_t>(addr));
    tb::put(dut->in_psum_i, 0, pw, static_cast<std::uint64_t>(psum));
    tb::put(dut->in_bias_i, 0, pw, static_cast<std::uint64_t>(bias));
    dut->rd_en_i = rd;
    tb::put(dut->rd_addr_i, 0, aw, static_cast<std::uint64_t>(rd_addr));

    // ---- model ----
    while (!writes.empty() && writes.front().at <= t) {
      ram[writes.front().addr] = writes.front().value;
      ram_written[writes.front().addr] = true;
      writes.pop_front();
    }
    if (valid) {
      const std::int64_t base = accumulate ? latest[addr] : bias;
      const std::int64_t exact = base + psum;
      if (exact > fx::smax(pw)) ++saturations_hi;
      if (exact < fx::smin(pw)) ++saturations_lo;
      if (accumulate && addr == prev_addr) ++forwards;
      const std::int64_t v = fx::sat_add(base, psum, pw);
      latest[addr] = v;
      written[addr] = true;
      writes.push_back({t + 2, addr, v});
      if (last) outs.push_back({t + kLatency, true, addr, v});
    }
    prev_addr = valid ? addr : -1;
    if (rd) {
      // Ignored (rd_valid_o low) in a cycle with an accumulate input: it owns the read port.
      const bool granted = !(valid && accumulate);
      reads.push_back({t + kReadLatency, granted && ram_written[rd_addr], rd_addr, ram[rd_addr]});
      if (granted && !ram_written[rd_addr]) reads.back().valid = false, reads.back().addr = -1;  // undefined data
    }

    // ---- outputs of cycle t ----
    const bool exp_out = !outs.empty() && outs.front().due == t;
    report.check(t, "out_valid_o", exp_out, dut->out_valid_o);
    if (exp_out) {
      const Out o = outs.front();
      outs.pop_front();
      if (dut->out_valid_o) {
        report.check(t, "out_addr_o", o.addr, static_cast<long long>(tb::get(dut->out_addr_o, 0, aw)));
        report.check(t, "out_data_o addr=" + std::to_string(o.addr), o.value, tb::get_signed(dut->out_data_o, 0, pw));
      }
    }
    const bool exp_rd_slot = !reads.empty() && reads.front().due == t;
    if (exp_rd_slot) {
      const Out r = reads.front();
      reads.pop_front();
      if (r.addr >= 0) {  // defined entry (or not granted: valid must be low)
        report.check(t, "rd_valid_o", r.valid, dut->rd_valid_o);
        if (r.valid && dut->rd_valid_o)
          report.check(t, "rd_data_o addr=" + std::to_string(r.addr), r.value, tb::get_signed(dut->rd_data_o, 0, pw));
      } else {
        report.check(t, "rd_valid_o", 1, dut->rd_valid_o);
      }
    } else {
      report.check(t, "rd_valid_o (no request)", 0, dut->rd_valid_o);
    }
    sim.step();
  }
  sim.finish();
  if (saturations_hi == 0 || saturations_lo == 0 || forwards == 0)
    report.fail(sim.cycle(), "stimulus did not cover saturation both ways and forwarding");
  char extra[160];
  std::snprintf(extra, sizeof extra, "%s, %lld saturations up, %lld down, %lld back-to-back accumulations",
                cfg.name.c_str(), saturations_hi, saturations_lo, forwards);
  return report.summary(extra);
}
