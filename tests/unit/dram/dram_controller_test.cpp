// DRAM controller policies: fcfs (a request's commands after the previous request's READ/WRITE) and
// fcfs-overlap (open-bank lookahead: PRE/ACT of later requests during earlier requests' tRCD/CL).
// Exact cycle counts of bank-interleaved and row-hit streams worked out by hand from the DDR3-1600
// timings, and every timing constraint checked on the command log of a mixed stream.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "core/input_error.hpp"
#include "dram/address_mapping.hpp"
#include "dram/dram_model.hpp"
#include "dram/dram_spec.hpp"

namespace capsgen::dram {
namespace {

const std::string kRepo = CAPSGEN_REPO_ROOT;

DramAddress at(int bank, int row, int column = 0) {
  DramAddress a;
  a.bank = bank;
  a.row = row;
  a.column = column;
  return a;
}

DramSpec with_policy(DramSpec s, ControllerPolicy p, int depth) {
  s.controller.policy = p;
  s.controller.queue_depth = depth;
  return s;
}

DramSpec overlap_spec(int depth = 8) { return with_policy(ddr3_1600_2gb_x8(), ControllerPolicy::FcfsOverlap, depth); }

// 8 reads to banks 0..7, row 0 (each bank idle: a row miss, ACT + READ), then 8 reads to banks 0..7,
// row 1 (each a row conflict, PRE + ACT + READ). All arrive at cycle 0; refresh off.
std::vector<AccessResult> interleaved_stream(const DramSpec& spec) {
  DramModel m(spec, DramModelOptions{true, false});
  std::vector<AccessResult> r;
  for (int row = 0; row < 2; ++row)
    for (int bank = 0; bank < 8; ++bank) r.push_back(m.access(at(bank, row), false));
  EXPECT_EQ(m.stats().misses, 8u);
  EXPECT_EQ(m.stats().conflicts, 8u);
  return r;
}

TEST(DramController, BankInterleavedStreamFcfs) {
  // DDR3-1600 11-11-11 (cycles of 1.25 ns): tRCD 11, CL 11, tRP 11, tRAS 28, tRC 39, tRRD 5,
  // tFAW 24, tCCD 4, tRTP 6, burst 4 cycles.
  // fcfs: a request's first command issues the cycle after the previous request's READ.
  //   Misses k = 0..7: ACT_k = READ_(k-1) + 1, READ_k = ACT_k + tRCD = ACT_k + 11, so ACT_k = 12 k
  //   (tRRD 5 and tFAW 24 are met: 4 ACTs span 36 cycles); READ_7 = 84 + 11 = 95, done = 95 + CL + 4
  //   = 110.
  //   Conflicts j = 0..7 (bank j): PRE = READ_prev + 1 (tRAS and tRTP long past), ACT = PRE + tRP,
  //   READ = ACT + tRCD: 1 + 11 + 11 = 23 cycles per request. j = 0: PRE 96, ACT 107 (also tRC:
  //   0 + 39), READ 118, done 133; j = 7: READ 118 + 7 * 23 = 279, done 279 + 15 = 294.
  const auto r = interleaved_stream(ddr3_1600_2gb_x8());
  for (int k = 0; k < 8; ++k) {
    EXPECT_EQ(r[k].first_command, std::uint64_t(12 * k)) << k;
    EXPECT_EQ(r[k].column_command, std::uint64_t(12 * k + 11)) << k;
  }
  EXPECT_EQ(r[7].done, 110u);
  EXPECT_EQ(r[8].first_command, 96u);
  EXPECT_EQ(r[8].column_command, 118u);
  for (int j = 0; j < 8; ++j) {
    EXPECT_EQ(r[8 + j].column_command, std::uint64_t(118 + 23 * j)) << j;
  }
  EXPECT_EQ(r[15].done, 294u);
}

TEST(DramController, BankInterleavedStreamOverlap) {
  // fcfs-overlap, queue of 8: the ACTs of later requests issue during earlier requests' tRCD,
  // limited by tRRD, tFAW and row-command order (PRE/ACT in arrival order).
  //   Misses: ACT_0 = 0, ACT_1..3 = 5, 10, 15 (tRRD 5); ACT_4 = max(15 + 5, ACT_0 + tFAW) = 24,
  //   ACT_5..7 = 29, 34, 39 (tFAW: ACT_(k-4) + 24). READ_k = ACT_k + 11 (tCCD 4 and the data bus
  //   never bind: READs are >= 5 apart) = 11, 16, 21, 26, 35, 40, 45, 50; done_7 = 50 + 15 = 65
  //   (fcfs: 110).
  //   Conflicts (bank j, row 1): row commands after the previous row command. j = 0: PRE at
  //   ACT_7 + 1 = 40 is taken by READ_5, so 41; ACT = max(41 + tRP, ACT_0 + tRC = 39, tFAW
  //   ACT_4 + 24 = 48) = 52; READ 63. j >= 1: PRE_j = ACT_(j-1) + 1, ACT_j = PRE_j + 11: ACT 64,
  //   76, 88, 100, 112, 124, 136 (12 apart: tRRD and tFAW hold), READ_j = ACT_j + 11 = 75, ..., 147,
  //   done_15 = 147 + 15 = 162 (fcfs: 294).
  const auto r = interleaved_stream(overlap_spec(8));
  const std::uint64_t act[8] = {0, 5, 10, 15, 24, 29, 34, 39};
  for (int k = 0; k < 8; ++k) {
    EXPECT_EQ(r[k].first_command, act[k]) << k;
    EXPECT_EQ(r[k].column_command, act[k] + 11) << k;
  }
  EXPECT_LT(r[1].first_command, r[0].column_command);  // ACT to bank 1 during bank 0's tRCD
  EXPECT_EQ(r[7].done, 65u);
  EXPECT_EQ(r[8].first_command, 41u);  // PRE
  EXPECT_EQ(r[8].column_command, 63u);
  for (int j = 1; j < 8; ++j) {
    EXPECT_EQ(r[8 + j].first_command, std::uint64_t(52 + 12 * (j - 1) + 1)) << j;  // PRE after the previous ACT
    EXPECT_EQ(r[8 + j].column_command, std::uint64_t(52 + 12 * j + 11)) << j;
  }
  EXPECT_EQ(r[15].done, 162u);
}

TEST(DramController, QueueDepthBoundsTheLookahead) {
  // Queue of 1: a request's commands wait for the previous request's READ, as with fcfs.
  const auto a = interleaved_stream(ddr3_1600_2gb_x8());
  const auto b = interleaved_stream(overlap_spec(1));
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].first_command, b[i].first_command) << i;
    EXPECT_EQ(a[i].done, b[i].done) << i;
  }
  // Queue of 2: request n waits for request n-2's READ. Misses: ACT_0 0, READ 11; ACT_1 5 (tRRD),
  // READ 16; ACT_2 = READ_0 + 1 = 12, READ 23; ACT_3 = max(READ_1 + 1 = 17, 12 + 5) = 17, READ 28;
  // ACT_4 = max(READ_2 + 1 = 24, tFAW 0 + 24) = 24, READ 35: two requests in flight, 6 cycles each.
  const auto c = interleaved_stream(overlap_spec(2));
  const std::uint64_t act[5] = {0, 5, 12, 17, 24};
  for (int k = 0; k < 5; ++k) {
    EXPECT_EQ(c[k].first_command, act[k]) << k;
  }
}

TEST(DramController, RowHitStreamIsTheSameUnderBothPolicies) {
  // One miss, then 15 hits in the same row: no row commands to overlap. ACT 0, READ_k = 11 + 4 k
  // (tCCD 4 = the burst), done_15 = 11 + 60 + CL + 4 = 86 under both policies.
  for (const DramSpec& spec : {ddr3_1600_2gb_x8(), overlap_spec(8)}) {
    DramModel m(spec, DramModelOptions{true, false});
    AccessResult last;
    for (int k = 0; k < 16; ++k) {
      last = m.access(at(0, 3, 8 * k), false);
      EXPECT_EQ(last.column_command, std::uint64_t(11 + 4 * k)) << to_string(spec.controller.policy) << " " << k;
    }
    EXPECT_EQ(last.done, 86u);
    EXPECT_EQ(m.stats().hits, 15u);
  }
}

// Checks every constraint the model claims on a command log and the access results.
void check_log(const DramSpec& spec, const std::vector<IssuedCommand>& log, const std::vector<AccessResult>& res) {
  const DramTiming& t = spec.timing;
  using K = IssuedCommand::Kind;
  std::set<std::uint64_t> cycles;
  for (const IssuedCommand& c : log) {
    EXPECT_TRUE(cycles.insert(c.cycle).second) << "two commands at cycle " << c.cycle;
  }
  std::vector<IssuedCommand> sorted = log;
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& x, const auto& y) { return x.cycle < y.cycle; });
  std::vector<std::uint64_t> acts;
  std::map<int, std::uint64_t> last_act, last_pre, last_rd;
  std::map<int, bool> open;
  std::uint64_t ref_end = 0;
  for (const IssuedCommand& c : sorted) {
    EXPECT_GE(c.cycle, ref_end) << "command during tRFC";
    switch (c.kind) {
      case K::Act:
        EXPECT_FALSE(open[c.bank]) << "ACT to an open bank at " << c.cycle;
        if (!acts.empty()) {
          EXPECT_GE(c.cycle, acts.back() + std::uint64_t(t.rrd)) << "tRRD at " << c.cycle;
        }
        if (acts.size() >= 4) {
          EXPECT_GE(c.cycle, acts[acts.size() - 4] + std::uint64_t(t.faw)) << "tFAW: 5 ACTs at " << c.cycle;
        }
        if (last_act.count(c.bank)) {
          EXPECT_GE(c.cycle, last_act[c.bank] + std::uint64_t(t.rc)) << "tRC";
        }
        if (last_pre.count(c.bank)) {
          EXPECT_GE(c.cycle, last_pre[c.bank] + std::uint64_t(t.rp)) << "tRP";
        }
        acts.push_back(c.cycle);
        last_act[c.bank] = c.cycle;
        open[c.bank] = true;
        break;
      case K::Pre:
        EXPECT_TRUE(open[c.bank]);
        EXPECT_GE(c.cycle, last_act[c.bank] + std::uint64_t(t.ras)) << "tRAS";
        if (last_rd.count(c.bank) && last_rd[c.bank] > last_act[c.bank]) {
          EXPECT_GE(c.cycle, last_rd[c.bank] + std::uint64_t(t.rtp)) << "tRTP";
        }
        last_pre[c.bank] = c.cycle;
        open[c.bank] = false;
        break;
      case K::PreAll:
        for (auto& [bank, o] : open) {
          if (o) {
            EXPECT_GE(c.cycle, last_act[bank] + std::uint64_t(t.ras));
            last_pre[bank] = c.cycle;
          }
          o = false;
        }
        break;
      case K::Ref:
        for (auto& [bank, o] : open) {
          EXPECT_FALSE(o) << "REF with bank " << bank << " open";
        }
        ref_end = c.cycle + std::uint64_t(t.rfc);
        break;
      case K::Read:
      case K::Write:
        EXPECT_TRUE(open[c.bank]) << "column command to a closed bank at " << c.cycle;
        EXPECT_GE(c.cycle, last_act[c.bank] + std::uint64_t(t.rcd)) << "tRCD at " << c.cycle;
        if (c.kind == K::Read) last_rd[c.bank] = c.cycle;
        break;
    }
  }
  // Data bursts never overlap on the bus and come in request order.
  for (std::size_t i = 1; i < res.size(); ++i) {
    EXPECT_GE(res[i].done - std::uint64_t(spec.burst_cycles()), res[i - 1].done) << "data bus, request " << i;
  }
}

TEST(DramController, OverlapHonoursEveryConstraintOnAMixedStream) {
  // Reads and writes over 8 banks and 3 rows, hits, misses and conflicts, with refresh, spread over
  // two refresh intervals; a small deterministic generator.
  for (int depth : {2, 8, 32}) {
    const DramSpec spec = overlap_spec(depth);
    DramModel m(spec, DramModelOptions{true, true, true});
    std::vector<AccessResult> res;
    std::uint32_t x = 12345;
    std::uint64_t arrival = 0;
    for (int i = 0; i < 3000; ++i) {
      x = x * 1103515245u + 12345u;
      const int bank = int((x >> 8) % 8), row = int((x >> 12) % 3), col = int((x >> 16) % 128) * 8;
      const bool write = ((x >> 20) % 4) == 0;
      if ((x >> 24) % 8 == 0) arrival += 40;
      res.push_back(m.access(at(bank, row, col), write, arrival));
    }
    m.finish();
    EXPECT_GE(m.stats().commands.ref, 1u);
    EXPECT_GT(m.stats().conflicts, 100u);
    check_log(spec, m.command_log(), res);
    // The lookahead happened: ACTs issued before the column command of an earlier request.
    std::uint64_t latest_column = 0, early_acts = 0;
    for (const IssuedCommand& c : m.command_log()) {
      if (c.kind == IssuedCommand::Kind::Read || c.kind == IssuedCommand::Kind::Write)
        latest_column = std::max(latest_column, c.cycle);
      else if (c.kind == IssuedCommand::Kind::Act && c.cycle < latest_column)
        ++early_acts;
    }
    EXPECT_GT(early_acts, 100u) << "queue " << depth;
  }
}

TEST(DramController, FcfsHonoursEveryConstraintOnTheSameStream) {
  const DramSpec spec = ddr3_1600_2gb_x8();
  DramModel m(spec, DramModelOptions{true, true, true});
  std::vector<AccessResult> res;
  for (int i = 0; i < 400; ++i) res.push_back(m.access(at(i % 8, (i / 8) % 3), i % 5 == 0, 0));
  check_log(spec, m.command_log(), res);
}

TEST(DramController, TfawLimitsActsOnAManyBankStream) {
  // 16 banks (DDR4), 16 misses under fcfs-overlap: tRRD_S 4 but tFAW 26, so ACTs go 4 per 26 cycles.
  DramSpec spec = load_dram_spec(kRepo + "/configs/dram/micron-mt40a1g8-ddr4-2400.yaml");
  spec.controller = DramController{ControllerPolicy::FcfsOverlap, 16};
  DramModel m(spec, DramModelOptions{true, false, true});
  std::vector<AccessResult> res;
  for (int b = 0; b < 16; ++b) res.push_back(m.access(at(b, 0), false));
  // Banks 0,1,2,3 are in groups 0,1,2,3: tRRD_S = 4 apart: ACT 0, 4, 8, 12; the fifth waits for
  // ACT_0 + tFAW = 26, then 30, 34, 38, then 52 (ACT_4 + 26), ...
  EXPECT_EQ(res[0].first_command, 0u);
  EXPECT_EQ(res[3].first_command, 12u);
  EXPECT_EQ(res[4].first_command, 26u);
  EXPECT_EQ(res[7].first_command, 38u);
  EXPECT_EQ(res[8].first_command, 52u);
  for (std::size_t k = 4; k < res.size(); ++k) {
    EXPECT_GE(res[k].first_command, res[k - 4].first_command + std::uint64_t(spec.timing.faw)) << k;
  }
}

TEST(DramController, PolicyIsAFieldOfTheDramDescription) {
  const std::string base = R"(name: x
organization: {channels: 1, ranks: 1, chips_per_rank: 1, device_width: 8, banks: 8, rows: 32768, columns: 1024, burst_length: 8}
timing: {tck_ns: 1.25, cl: 11, cwl: 8, rcd: 11, rp: 11, ras: 28, rc: 39, rrd: 5, faw: 24, ccd: 4, rtp: 6, wtr: 6, wr: 12, rfc: 128, refi: 6240}
power: {vdd: 1.5, idd0: 70, idd2n: 43, idd3n: 55, idd4r: 156, idd4w: 145, idd5b: 195}
)";
  EXPECT_EQ(parse_dram_spec(base, "d.yaml").controller.policy, ControllerPolicy::Fcfs);  // the default
  const DramSpec o = parse_dram_spec(base + "controller: {policy: fcfs-overlap}\n", "d.yaml");
  EXPECT_EQ(o.controller.policy, ControllerPolicy::FcfsOverlap);
  EXPECT_EQ(o.controller.queue_depth, 8);
  EXPECT_EQ(parse_dram_spec(base + "controller: {policy: fcfs-overlap, queue_depth: 3}\n", "d.yaml").controller.queue_depth, 3);
  auto fails = [&](const std::string& extra, const std::string& fragment, int line) {
    try {
      parse_dram_spec(base + extra, "d.yaml");
      ADD_FAILURE() << "expected an error: " << fragment;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
      EXPECT_EQ(e.file(), "d.yaml");
      EXPECT_EQ(e.line(), line) << e.what();
    }
  };
  fails("controller: {policy: frfcfs}\n", "controller.policy: expected one of", 5);
  fails("controller: {policy: fcfs, queue_depth: 4}\n", "queue_depth applies to policy fcfs-overlap", 5);
  fails("controller: {policy: fcfs-overlap, queue_depth: 0}\n", "controller.queue_depth", 5);
  fails("controller: {policy: fcfs-overlap, depth: 4}\n", "unknown key 'depth'", 5);
  // The bundled files keep fcfs.
  for (const char* f : {"micron-mt41j256m8-ddr3-1600", "micron-mt41j256m8-ddr3-1600-x64", "micron-mt40a1g8-ddr4-2400",
                        "micron-mt40a1g8-ddr4-2400-x64"}) {
    EXPECT_EQ(load_dram_spec(kRepo + "/configs/dram/" + f + ".yaml").controller.policy, ControllerPolicy::Fcfs) << f;
  }
}

}  // namespace
}  // namespace capsgen::dram
