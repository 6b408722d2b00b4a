// The bundled DRAM devices and organizations (configs/dram/*.yaml, docs/dram.md): their data files,
// energy per command and per byte against hand calculations from the data-sheet currents, DDR4 bank
// groups, and the 64-bit rank's bandwidth on a sequential stream.
#include <gtest/gtest.h>

#include <string>

#include "core/input_error.hpp"
#include "dram/address_mapping.hpp"
#include "dram/dram_energy.hpp"
#include "dram/dram_model.hpp"
#include "dram/dram_spec.hpp"

namespace capsgen::dram {
namespace {

const std::string kRepo = CAPSGEN_REPO_ROOT;

DramSpec bundled(const std::string& name) { return load_dram_spec(kRepo + "/configs/dram/" + name + ".yaml"); }

DramAddress at(int bank, int row, int column = 0) {
  DramAddress a;
  a.bank = bank;
  a.row = row;
  a.column = column;
  return a;
}

TEST(DramDevices, Ddr3RankFileMatchesBuiltInValues) {
  const DramSpec f = bundled("micron-mt41j256m8-ddr3-1600-x64");
  const DramSpec b = ddr3_1600_2gb_x64_rank();
  const DramSpec chip = ddr3_1600_2gb_x8();
  EXPECT_EQ(f.name, b.name);
  EXPECT_EQ(f.org.chips_per_rank, 8);
  EXPECT_EQ(b.org.chips_per_rank, 8);
  EXPECT_EQ(f.org.word_bytes(), 8);
  EXPECT_EQ(f.org.burst_length * f.org.word_bytes(), 64);  // a BL8 burst moves 64 bytes
  EXPECT_EQ(f.org.capacity_bytes(), std::uint64_t(2) << 30);  // 8 x 2 Gb
  EXPECT_DOUBLE_EQ(f.peak_gbps(), 12.8);
  EXPECT_DOUBLE_EQ(b.peak_gbps(), 12.8);
  // Timings and currents are the chip's.
  for (const DramSpec* s : {&f, &b}) {
    EXPECT_EQ(s->timing.rcd, chip.timing.rcd);
    EXPECT_EQ(s->timing.faw, chip.timing.faw);
    EXPECT_EQ(s->timing.rfc, chip.timing.rfc);
    EXPECT_EQ(s->timing.ccd_l, chip.timing.ccd);
    EXPECT_DOUBLE_EQ(s->power.idd4r, chip.power.idd4r);
    EXPECT_DOUBLE_EQ(s->power.idd5b, chip.power.idd5b);
    EXPECT_EQ(s->controller.policy, ControllerPolicy::Fcfs);
  }
}

TEST(DramDevices, Ddr4FilesHoldTheSpeedBin) {
  // DDR4-2400R 16-16-16 in cycles of 0.833 ns (docs/dram.md gives the ns values and sources).
  for (const char* name : {"micron-mt40a1g8-ddr4-2400", "micron-mt40a1g8-ddr4-2400-x64"}) {
    const DramSpec s = bundled(name);
    EXPECT_EQ(s.org.banks, 16) << name;
    EXPECT_EQ(s.org.bank_groups, 4);
    EXPECT_EQ(s.org.rows, 65536);
    EXPECT_EQ(s.org.columns, 1024);
    const DramTiming& t = s.timing;
    EXPECT_DOUBLE_EQ(t.tck_ns, 0.833);
    EXPECT_EQ(t.cl, 16);
    EXPECT_EQ(t.cwl, 12);
    EXPECT_EQ(t.rcd, 16);
    EXPECT_EQ(t.rp, 16);
    EXPECT_EQ(t.ras, 39);
    EXPECT_EQ(t.rc, 55);
    EXPECT_EQ(t.rrd, 4);
    EXPECT_EQ(t.rrd_l, 6);
    EXPECT_EQ(t.faw, 26);
    EXPECT_EQ(t.ccd, 4);
    EXPECT_EQ(t.ccd_l, 6);
    EXPECT_EQ(t.wtr, 3);
    EXPECT_EQ(t.wtr_l, 9);
    EXPECT_EQ(t.rtp, 9);
    EXPECT_EQ(t.wr, 18);
    EXPECT_EQ(t.rfc, 420);
    EXPECT_EQ(t.refi, 9360);
  }
  EXPECT_EQ(bundled("micron-mt40a1g8-ddr4-2400").org.capacity_bytes(), std::uint64_t(1) << 30);      // 8 Gb
  EXPECT_EQ(bundled("micron-mt40a1g8-ddr4-2400-x64").org.capacity_bytes(), std::uint64_t(8) << 30);  // 8 x 8 Gb
  EXPECT_NEAR(bundled("micron-mt40a1g8-ddr4-2400").peak_gbps(), 2.0 / 0.833, 1e-12);
  EXPECT_NEAR(bundled("micron-mt40a1g8-ddr4-2400-x64").peak_gbps(), 16.0 / 0.833, 1e-12);
}

TEST(DramDevices, EnergyPerCommandFromTheDataSheetCurrents) {
  // E = (current above standby) x time x VDD, per chip, times the chips of the rank (dram_energy.hpp).
  // DDR3-1600 rank of 8 x MT41J256M8 (IDD0 70, IDD2N 43, IDD3N 55, IDD4R 156, IDD4W 145, IDD5B 195 mA,
  // 1.5 V; tRAS 35 ns, tRP 13.75 ns, tBURST 5 ns, tRFC 160 ns): 8 x the chip's energies.
  const CommandEnergy r = command_energy(bundled("micron-mt41j256m8-ddr3-1600-x64"));
  EXPECT_DOUBLE_EQ(r.act_pj, 8 * (70 - 55) * 35.0 * 1.5);    // 6300 pJ
  EXPECT_DOUBLE_EQ(r.pre_pj, 8 * (70 - 43) * 13.75 * 1.5);   // 4455 pJ
  EXPECT_DOUBLE_EQ(r.rd_pj, 8 * (156 - 55) * 5.0 * 1.5);     // 6060 pJ
  EXPECT_DOUBLE_EQ(r.wr_pj, 8 * (145 - 55) * 5.0 * 1.5);     // 5400 pJ
  EXPECT_DOUBLE_EQ(r.ref_pj, 8 * (195 - 55) * 160.0 * 1.5);  // 268.8 nJ
  EXPECT_DOUBLE_EQ(r.act_standby_pj_per_cycle, 8 * 55 * 1.25 * 1.5);
  // DDR4-2400 MT40A1G8 (IDD0 48, IDD2N 34, IDD3N 43, IDD4R 135, IDD4W 123, IDD5B 250 mA, 1.2 V;
  // tCK 0.833 ns: tRAS 39, tRP 16, burst 4, tRFC 420 cycles).
  const CommandEnergy d = command_energy(bundled("micron-mt40a1g8-ddr4-2400"));
  EXPECT_NEAR(d.act_pj, (48 - 43) * (39 * 0.833) * 1.2, 1e-9);     // 194.922 pJ
  EXPECT_NEAR(d.pre_pj, (48 - 34) * (16 * 0.833) * 1.2, 1e-9);     // 223.910 pJ
  EXPECT_NEAR(d.rd_pj, (135 - 43) * (4 * 0.833) * 1.2, 1e-9);      // 367.853 pJ
  EXPECT_NEAR(d.wr_pj, (123 - 43) * (4 * 0.833) * 1.2, 1e-9);      // 319.872 pJ
  EXPECT_NEAR(d.ref_pj, (250 - 43) * (420 * 0.833) * 1.2, 1e-6);   // 86.905 nJ
  EXPECT_NEAR(d.act_standby_pj_per_cycle, 43 * 0.833 * 1.2, 1e-12);
  EXPECT_NEAR(d.pre_standby_pj_per_cycle, 34 * 0.833 * 1.2, 1e-12);
  const CommandEnergy d8 = command_energy(bundled("micron-mt40a1g8-ddr4-2400-x64"));
  EXPECT_NEAR(d8.rd_pj, 8 * d.rd_pj, 1e-9);
}

TEST(DramDevices, EnergyPerByteOfARowHitRead) {
  // A READ burst of an open row moves BL8 x the rank's width: read energy per byte.
  //   DDR3 x8 chip: 757.5 pJ / 8 B = 94.6875 pJ/B; the x64 rank: 6060 pJ / 64 B, the same;
  //   DDR4 x8 chip: 367.8528 pJ / 8 B = 45.9816 pJ/B.
  auto per_byte = [](const DramSpec& s) {
    return command_energy(s).rd_pj / double(s.org.burst_length * s.org.word_bytes());
  };
  EXPECT_DOUBLE_EQ(per_byte(ddr3_1600_2gb_x8()), 94.6875);
  EXPECT_DOUBLE_EQ(per_byte(bundled("micron-mt41j256m8-ddr3-1600-x64")), 94.6875);
  EXPECT_NEAR(per_byte(bundled("micron-mt40a1g8-ddr4-2400")), 45.9816, 1e-9);
}

TEST(DramDevices, Ddr4MissTraceEnergy) {
  // One read of an idle DDR4 bank: ACT 0, READ at tRCD = 16, data 32..36; a bank is open for all
  // 36 cycles: E = E_ACT + E_RD + 36 x IDD3N x tCK x VDD = 194.922 + 367.8528 + 36 x 42.9828 pJ.
  DramModel m(bundled("micron-mt40a1g8-ddr4-2400"), DramModelOptions{true, false});
  const AccessResult r = m.access(at(0, 0), false);
  EXPECT_EQ(r.column_command, 16u);
  EXPECT_EQ(r.done, 36u);
  m.finish();
  EXPECT_EQ(m.stats().commands.active_cycles, 36u);
  EXPECT_NEAR(m.energy().total(), 194.922 + 367.8528 + 36 * 42.9828, 1e-6);
}

TEST(DramDevices, Ddr4BankGroupsSpaceColumnCommands) {
  // tCCD_L = 6 between column commands of one bank group, tCCD_S = 4 across groups (fcfs, CL 16,
  // burst 4). Bank 0 is in group 0, bank 1 in group 1.
  //   miss b0: ACT 0, READ 16 (done 36)
  //   miss b1: ACT 17, READ max(17 + 16, 16 + 4) = 33 (done 53)
  //   hit  b0: READ max(34, 33 + 4, 16 + 6, data 53 - 16) = 37
  //   hit  b0: READ max(38, 37 + 4, 37 + 6 (same group)) = 43
  //   hit  b1: READ max(44, 43 + 4, 33 + 6, data 63 - 16) = 47
  DramModel m(bundled("micron-mt40a1g8-ddr4-2400"), DramModelOptions{true, false});
  EXPECT_EQ(m.access(at(0, 0), false).column_command, 16u);
  EXPECT_EQ(m.access(at(1, 0), false).column_command, 33u);
  EXPECT_EQ(m.access(at(0, 0, 8), false).column_command, 37u);
  EXPECT_EQ(m.access(at(0, 0, 16), false).column_command, 43u);
  const AccessResult last = m.access(at(1, 0, 8), false);
  EXPECT_EQ(last.column_command, 47u);
  EXPECT_EQ(last.done, 67u);
}

TEST(DramDevices, RankBandwidthOnASequentialStream) {
  // 64 KB read from byte 0 of the 64-bit DDR3-1600 rank, in 64-byte bursts (1024 READs), ROMANet's
  // mapping: a row holds 1024 x 8 B = 8 KB, so the stream covers row 0 of banks 0..7 (one miss per
  // bank, 127 hits after each). Peak: 8 B x 2 beats = 16 B per cycle.
  //   fcfs: READ_0 = tRCD = 11; inside a row one READ per tCCD = 4 cycles; at each of the 7 bank
  //   switches the ACT waits for the previous READ (+1) and the READ for tRCD: 12 cycles instead of
  //   4. Last READ = 11 + 1023 x 4 + 7 x 8 = 4159, done = 4159 + CL + 4 = 4174 cycles:
  //   65536 / 4174 = 15.70 B/cycle (98.1% of the peak), 12.56 GB/s.
  //   fcfs-overlap (queue 8): the next bank's ACT issues 8 READs ahead, the data bus never idles:
  //   done = 11 + 1023 x 4 + 15 = 4118 cycles, 15.91 B/cycle (99.5%).
  const DramSpec spec = ddr3_1600_2gb_x64_rank();
  const AddressMapping map(spec.org);
  {
    DramModel m(spec, DramModelOptions{true, false});
    m.request(0, false, 65536, 0, map);
    EXPECT_EQ(m.stats().reads, 1024u);
    EXPECT_EQ(m.stats().misses, 8u);
    EXPECT_EQ(m.stats().end_cycle, 4174u);
    EXPECT_NEAR(m.throughput_gbps(), 65536.0 / (4174 * 1.25), 1e-9);
  }
  {
    DramSpec o = spec;
    o.controller = DramController{ControllerPolicy::FcfsOverlap, 8};
    DramModel m(o, DramModelOptions{true, false});
    m.request(0, false, 65536, 0, map);
    EXPECT_EQ(m.stats().end_cycle, 4118u);
  }
}

TEST(DramDevices, BankGroupErrors) {
  const std::string ddr4 = R"(name: x
organization: {channels: 1, ranks: 1, chips_per_rank: 1, device_width: 8, banks: 16, bank_groups: 4, rows: 65536, columns: 1024, burst_length: 8}
timing: {tck_ns: 0.833, cl: 16, cwl: 12, rcd: 16, rp: 16, ras: 39, rc: 55, rrd: 4, rrd_l: 6, faw: 26, ccd: 4, ccd_l: 6, rtp: 9, wtr: 3, wtr_l: 9, wr: 18, rfc: 420, refi: 9360}
power: {vdd: 1.2, idd0: 48, idd2n: 34, idd3n: 43, idd4r: 135, idd4w: 123, idd5b: 250}
)";
  EXPECT_NO_THROW(parse_dram_spec(ddr4, "d.yaml"));
  auto fails = [&](const std::string& from, const std::string& to, const std::string& fragment, int line) {
    std::string t = ddr4;
    const auto pos = t.find(from);
    ASSERT_NE(pos, std::string::npos) << from;
    t.replace(pos, from.size(), to);
    try {
      parse_dram_spec(t, "d.yaml");
      ADD_FAILURE() << "expected an error: " << fragment;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
      EXPECT_EQ(e.file(), "d.yaml");
      EXPECT_EQ(e.line(), line) << e.what();
    }
  };
  fails(" ccd_l: 6,", "", "ccd_l", 3);                                      // missing with bank groups
  fails("rrd_l: 6", "rrd_l: 3", "rrd_l (3) is shorter than rrd (4)", 3);
  fails("banks: 16", "banks: 2", "4 bank groups for 2 banks", 2);
  fails("bank_groups: 4", "bank_groups: 1", "ccd_l applies to devices with bank groups", 3);
  fails("bank_groups: 4", "bank_groups: 3", "organization.bank_groups: expected a power of 2", 2);
}

}  // namespace
}  // namespace capsgen::dram
