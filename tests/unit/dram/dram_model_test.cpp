// DRAM model: row-buffer classification and timing on hand-made traces, energy per command against
// hand-computed datasheet values, the request interface, refresh, and the data file.
#include <gtest/gtest.h>

#include "core/input_error.hpp"
#include "dram/address_mapping.hpp"
#include "dram/dram_energy.hpp"
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

DramModel quiet_model(bool burst = true) { return DramModel(ddr3_1600_2gb_x8(), DramModelOptions{burst, false}); }

TEST(DramModel, RowBufferClassification) {
  DramModel m = quiet_model();
  EXPECT_EQ(m.access(at(0, 1), false).outcome, RowOutcome::Miss);      // bank 0 idle
  EXPECT_EQ(m.access(at(0, 1, 8), false).outcome, RowOutcome::Hit);    // same row
  EXPECT_EQ(m.access(at(0, 2), false).outcome, RowOutcome::Conflict);  // other row open
  EXPECT_EQ(m.access(at(1, 2), true).outcome, RowOutcome::Miss);       // bank 1 idle
  EXPECT_EQ(m.access(at(0, 2, 16), true).outcome, RowOutcome::Hit);    // bank 0 still has row 2
  EXPECT_EQ(m.access(at(1, 5), false).outcome, RowOutcome::Conflict);
  EXPECT_EQ(m.access(at(1, 5, 8), false).outcome, RowOutcome::Hit);
  const DramStats& s = m.stats();
  EXPECT_EQ(s.hits, 3u);
  EXPECT_EQ(s.misses, 2u);
  EXPECT_EQ(s.conflicts, 2u);
  EXPECT_EQ(s.commands.act, 4u);
  EXPECT_EQ(s.commands.pre, 2u);
  EXPECT_EQ(s.commands.rd, 5u);
  EXPECT_EQ(s.commands.wr, 2u);
  EXPECT_EQ(s.reads, 5u);
  EXPECT_EQ(s.writes, 2u);
  EXPECT_EQ(s.bytes_read, 5u * 8);  // a BL8 burst of a x8 chip: 8 bytes
}

TEST(DramModel, TimingOfHandMadeTraces) {
  // DDR3-1600 11-11-11: tRCD 11, CL 11, CWL 8, tRP 11, tRAS 28, tRC 39, tRTP 6, tWTR 6, tCCD 4, BL8 = 4 cycles.
  {
    DramModel m = quiet_model();
    const AccessResult a = m.access(at(0, 1), false);
    EXPECT_EQ(a.first_command, 0u);   // ACT
    EXPECT_EQ(a.column_command, 11u); // READ after tRCD
    EXPECT_EQ(a.done, 26u);           // + CL + 4
    const AccessResult b = m.access(at(0, 1, 8), false);
    EXPECT_EQ(b.column_command, 15u);  // tCCD
    EXPECT_EQ(b.done, 30u);
    // Conflict: PRE waits for tRAS (ACT at 0 -> 28), ACT for tRP and tRC (39), READ tRCD later.
    const AccessResult c = m.access(at(0, 2), false);
    EXPECT_EQ(c.first_command, 28u);
    EXPECT_EQ(c.column_command, 50u);
    EXPECT_EQ(c.done, 65u);
    // Access latency from the first command, by outcome (ROMANet Fig. 15b): miss tRCD + CL + 4,
    // hit CL + 4, conflict tRP + tRCD + CL + 4.
    EXPECT_DOUBLE_EQ(m.stats().mean_service_cycles(RowOutcome::Miss), 26);
    EXPECT_DOUBLE_EQ(m.stats().mean_service_cycles(RowOutcome::Hit), 15);
    EXPECT_DOUBLE_EQ(m.stats().mean_service_cycles(RowOutcome::Conflict), 37);
  }
  {
    // Another bank: its ACT follows the first READ on the command bus; the READ waits for tRCD.
    DramModel m = quiet_model();
    m.access(at(0, 1), false);
    const AccessResult b = m.access(at(1, 1), false);
    EXPECT_EQ(b.first_command, 12u);
    EXPECT_EQ(b.column_command, 23u);
    EXPECT_EQ(b.done, 38u);
  }
  {
    // Write, then read of the same row: tWTR after the write data (WR at 11, data 19..23).
    DramModel m = quiet_model();
    const AccessResult w = m.access(at(0, 1), true);
    EXPECT_EQ(w.column_command, 11u);
    EXPECT_EQ(w.done, 23u);
    const AccessResult r = m.access(at(0, 1, 8), false);
    EXPECT_EQ(r.column_command, 29u);
    EXPECT_EQ(r.done, 44u);
    // Read, then write: turnaround CL + 4 + 2 - CWL = 9 cycles after the READ.
    const AccessResult w2 = m.access(at(0, 1, 16), true);
    EXPECT_EQ(w2.column_command, 38u);
  }
  {
    // Arrival times delay the start; a request never completes before it arrives + tRCD + CL + 4.
    DramModel m = quiet_model();
    const AccessResult a = m.access(at(3, 7), false, 1000);
    EXPECT_EQ(a.first_command, 1000u);
    EXPECT_EQ(a.done, 1026u);
    EXPECT_EQ(m.stats().first_arrival, 1000u);
    EXPECT_EQ(m.stats().cycles(), 26u);
  }
}

TEST(DramModel, StreamThroughput) {
  // One open row read in bursts: after the first access the data bus never idles (tCCD = 4 = BL/2).
  DramModel m = quiet_model();
  for (int c = 0; c < 1024; c += 8) m.access(at(0, 0, c), false);
  EXPECT_EQ(m.stats().end_cycle, 26u + 127u * 4u);
  EXPECT_NEAR(m.throughput_gbps(), 1024.0 / (534 * 1.25), 1e-9);
  EXPECT_DOUBLE_EQ(ddr3_1600_2gb_x8().peak_gbps(), 1.6);
  // Non-burst: one byte per column command, one command per tCCD.
  DramModel n = quiet_model(false);
  for (int c = 0; c < 64; ++c) n.access(at(0, 0, c), false);
  EXPECT_EQ(n.stats().end_cycle, 26u + 63u * 4u);
  EXPECT_EQ(n.stats().bytes_read, 64u);
}

TEST(DramModel, RequestInterfaceSplitsTransfers) {
  const DramSpec spec = ddr3_1600_2gb_x8();
  const AddressMapping map(spec.org);
  DramModel burst(spec, DramModelOptions{true, false});
  // 20 bytes from byte 4: bursts [0,8), [8,16), [16,24): three accesses, 20 useful bytes.
  const AccessResult r = burst.request(4, false, 20, 0, map);
  EXPECT_EQ(burst.stats().reads, 3u);
  EXPECT_EQ(burst.stats().bytes_read, 20u);
  EXPECT_EQ(r.first_command, 0u);
  EXPECT_EQ(r.done, 26u + 2u * 4u);
  DramModel beats(spec, DramModelOptions{false, false});
  beats.request(4, true, 20, 0, map);
  EXPECT_EQ(beats.stats().writes, 20u);
  // Crossing a row boundary in the ROMANet order moves to the next bank, same row.
  DramModel cross(spec, DramModelOptions{true, false});
  cross.request(1024 - 8, false, 16, 0, map);
  EXPECT_EQ(cross.stats().misses, 2u);
  EXPECT_THROW(cross.request(0, false, 0, 0, map), std::invalid_argument);
}

TEST(DramModel, RefreshClosesRows) {
  const DramSpec spec = ddr3_1600_2gb_x8();
  DramModel m(spec, DramModelOptions{true, true});
  m.access(at(0, 1), false);
  m.access(at(2, 4), false);
  // After tREFI a refresh is due: PRE for both open banks, REF, then the row must be opened again.
  const AccessResult r = m.access(at(0, 1, 8), false, std::uint64_t(spec.timing.refi) + 10);
  EXPECT_EQ(r.outcome, RowOutcome::Miss);
  EXPECT_EQ(m.stats().commands.ref, 1u);
  EXPECT_EQ(m.stats().commands.pre, 2u);
  // The refresh fell due at tREFI while the controller was idle: PRE all there, REF tRP later; the
  // banks are blocked for tRFC after it.
  const std::uint64_t ref_at = std::uint64_t(spec.timing.refi) + std::uint64_t(spec.timing.rp);
  EXPECT_EQ(r.first_command, ref_at + std::uint64_t(spec.timing.rfc));
  m.finish();
  // Accounted time covers the whole span.
  const CommandCounts& c = m.stats().commands;
  EXPECT_GE(c.active_cycles + c.precharged_cycles, std::uint64_t(spec.timing.refi));
}

TEST(DramEnergy, PerCommandValuesFromTheDatasheet) {
  // Micron MT41J256M8 DDR3-1600: IDD0 70, IDD2N 43, IDD3N 55, IDD4R 156, IDD4W 145, IDD5B 195 mA,
  // VDD 1.5 V; tCK 1.25 ns, tRAS 28, tRP 11, tRC 39, tRFC 128 cycles, BL8 = 4 cycles.
  const CommandEnergy e = command_energy(ddr3_1600_2gb_x8());
  EXPECT_DOUBLE_EQ(e.act_pj, (70 - 55) * 35.0 * 1.5);    // 787.5 pJ
  EXPECT_DOUBLE_EQ(e.pre_pj, (70 - 43) * 13.75 * 1.5);   // 556.875 pJ
  EXPECT_DOUBLE_EQ(e.rd_pj, (156 - 55) * 5.0 * 1.5);     // 757.5 pJ
  EXPECT_DOUBLE_EQ(e.wr_pj, (145 - 55) * 5.0 * 1.5);     // 675 pJ
  EXPECT_DOUBLE_EQ(e.ref_pj, (195 - 55) * 160.0 * 1.5);  // 33.6 nJ
  EXPECT_DOUBLE_EQ(e.act_standby_pj_per_cycle, 55 * 1.25 * 1.5);
  EXPECT_DOUBLE_EQ(e.pre_standby_pj_per_cycle, 43 * 1.25 * 1.5);
  // TN-41-01: one ACT-PRE pair over tRC costs (IDD0 tRC - IDD3N tRAS - IDD2N (tRC - tRAS)) VDD.
  EXPECT_NEAR(e.act_pj + e.pre_pj, (70 * 48.75 - 55 * 35.0 - 43 * 13.75) * 1.5, 1e-9);
  // Four chips per rank: four times the energy.
  DramSpec wide = ddr3_1600_2gb_x8();
  wide.org.chips_per_rank = 4;
  EXPECT_DOUBLE_EQ(command_energy(wide).rd_pj, 4 * e.rd_pj);
}

TEST(DramEnergy, HandTraceEnergy) {
  DramModel m = quiet_model();
  m.access(at(0, 1), false);  // ACT 0, READ 11, data until 26
  m.access(at(0, 2), true);   // PRE 28, ACT 39, WRITE 50, data 58..62
  m.finish();
  const DramStats& s = m.stats();
  EXPECT_EQ(s.commands.act, 2u);
  EXPECT_EQ(s.commands.pre, 1u);
  EXPECT_EQ(s.commands.rd, 1u);
  EXPECT_EQ(s.commands.wr, 1u);
  // A bank is open all the time except between PRE (28) and ACT (39): 51 active, 11 precharged cycles.
  EXPECT_EQ(s.commands.active_cycles, 51u);
  EXPECT_EQ(s.commands.precharged_cycles, 11u);
  const EnergyBreakdown e = m.energy();
  const double expected = 2 * 787.5 + 556.875 + 757.5 + 675 + 51 * 103.125 + 11 * 80.625;
  EXPECT_NEAR(e.total(), expected, 1e-6);
  EXPECT_NEAR(e.act_standby, 51 * 103.125, 1e-9);
}

TEST(DramSpec, DataFileMatchesBuiltInValues) {
  const DramSpec f = load_dram_spec(kRepo + "/configs/dram/micron-mt41j256m8-ddr3-1600.yaml");
  const DramSpec b = ddr3_1600_2gb_x8();
  EXPECT_EQ(f.name, b.name);
  EXPECT_EQ(f.org.banks, b.org.banks);
  EXPECT_EQ(f.org.rows, b.org.rows);
  EXPECT_EQ(f.org.columns, b.org.columns);
  EXPECT_EQ(f.org.chips_per_rank, b.org.chips_per_rank);
  EXPECT_EQ(f.org.word_bytes(), 1);
  EXPECT_EQ(f.org.capacity_bytes(), 256u << 20);  // 2 Gb
  EXPECT_EQ(f.timing.cl, b.timing.cl);
  EXPECT_EQ(f.timing.rcd, b.timing.rcd);
  EXPECT_EQ(f.timing.rp, b.timing.rp);
  EXPECT_EQ(f.timing.ras, b.timing.ras);
  EXPECT_EQ(f.timing.rc, b.timing.rc);
  EXPECT_EQ(f.timing.rfc, b.timing.rfc);
  EXPECT_EQ(f.timing.refi, b.timing.refi);
  EXPECT_EQ(f.timing.cwl, b.timing.cwl);
  EXPECT_EQ(f.timing.wr, b.timing.wr);
  EXPECT_DOUBLE_EQ(f.timing.tck_ns, b.timing.tck_ns);
  EXPECT_DOUBLE_EQ(f.power.idd0, b.power.idd0);
  EXPECT_DOUBLE_EQ(f.power.idd2n, b.power.idd2n);
  EXPECT_DOUBLE_EQ(f.power.idd3n, b.power.idd3n);
  EXPECT_DOUBLE_EQ(f.power.idd4r, b.power.idd4r);
  EXPECT_DOUBLE_EQ(f.power.idd4w, b.power.idd4w);
  EXPECT_DOUBLE_EQ(f.power.idd5b, b.power.idd5b);
  EXPECT_DOUBLE_EQ(f.power.vdd, b.power.vdd);
}

TEST(DramSpec, Errors) {
  const std::string text = R"(name: x
organization: {channels: 1, ranks: 1, chips_per_rank: 1, device_width: 8, banks: 8, rows: 32768, columns: 1024, burst_length: 8}
timing: {tck_ns: 1.25, cl: 11, cwl: 8, rcd: 11, rp: 11, ras: 28, rc: 39, rrd: 5, faw: 24, ccd: 4, rtp: 6, wtr: 6, wr: 12, rfc: 128, refi: 6240}
power: {vdd: 1.5, idd0: 70, idd2n: 43, idd3n: 55, idd4r: 156, idd4w: 145, idd5b: 195}
)";
  EXPECT_NO_THROW(parse_dram_spec(text, "d.yaml"));
  auto fails = [&](const std::string& from, const std::string& to, const std::string& fragment) {
    std::string t = text;
    const auto pos = t.find(from);
    ASSERT_NE(pos, std::string::npos) << from;
    t.replace(pos, from.size(), to);
    try {
      parse_dram_spec(t, "d.yaml");
      ADD_FAILURE() << "expected an error: " << fragment;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
      EXPECT_EQ(e.file(), "d.yaml");
    }
  };
  fails("rc: 39", "rc: 30", "rc (30) must be at least ras + rp (28 + 11)");
  fails("banks: 8", "banks: 6", "organization.banks: expected a power of 2 in [1, 64], got 6");
  fails("idd0: 70", "idd0: 50", "power.idd0: idd0 must exceed idd3n");
  fails("cl: 11,", "cl: 11, tcl: 3,", "unknown key 'tcl'");
  fails("columns: 1024", "columns: 4", "expected a power of 2 in [8, 65536], got 4");
}

}  // namespace
}  // namespace capsgen::dram
