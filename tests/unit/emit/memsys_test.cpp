// Emitter tests of the memory system (gen/emit/memsys.cpp, docs/rtl-memsys.md): the element map
// (engine ports and the DMA port), the DMA port's legal sizes and its widths against capsgen_dma's,
// the words a run of elements can span, the rejection messages (organization, element widths,
// banks), registration (files.f order after the scratchpads, memsys.json with the reason when not
// generated), port widths, the result writer's two memories, determinism; the HY organization (the
// shared memory as the fourth memory: its map, ports p0/p1/p2, arbitration terms, counters). The tiny preset's capsgen_memsys.v is a golden file
// compared by test_emit (EmitGolden.Tiny2x2). Behaviour: tb/memsys_tb.cpp in Verilator.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

#include "config/accel_config.hpp"
#include "core/input_error.hpp"
#include "emit/design.hpp"
#include "emit/dma.hpp"
#include "emit/generate.hpp"
#include "emit/memsys.hpp"
#include "emit/random_config.hpp"
#include "emit/vast.hpp"
#include "emit_fixtures.hpp"

using namespace capsgen;
using namespace capsgen::emit;
using capsgen::emit::test::find;
using capsgen::emit::test::preset;

namespace {

std::string reject_message(const AccelConfig& cfg) {
  try {
    memsys_geometry(cfg);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// Width of a port of m ("" when it has none).
std::string port_width(const Module& m, const std::string& n) {
  for (const Port& port : m.ports())
    if (port.name == n) return port.width;
  return "";
}

// The engine's and the DMA's ports of a tiny-2x2 variant (2x2 array, 8-bit codes, 20-bit psums, 13-bit
// element addresses), whatever its organization.
void expect_tiny_engine_ports(const Module& m) {
  EXPECT_EQ(port_width(m, "drd_data_o"), "16");
  EXPECT_EQ(port_width(m, "wrd_data_o"), "16");
  EXPECT_EQ(port_width(m, "brd_data_o"), "40");
  EXPECT_EQ(port_width(m, "spm_addr_i"), "13");
}

// Every field of an element's location: memory, word, lane, bank, row, sector, offset.
void expect_location(const MemsysLocation& l, int memory, long long word, long long lane, long long bank, long long row,
                     long long sector, long long offset) {
  EXPECT_EQ(l.memory, memory);
  EXPECT_EQ(l.word, word);
  EXPECT_EQ(l.lane, lane);
  EXPECT_EQ(l.bank, bank);
  EXPECT_EQ(l.row, row);
  EXPECT_EQ(l.sector, sector);
  EXPECT_EQ(l.offset, offset);
}

}  // namespace

TEST(EmitMemsys, WordsSpanned) {
  EXPECT_EQ(memsys_words_spanned(1, 8), 1);
  EXPECT_EQ(memsys_words_spanned(2, 8), 2);   // can start in the last lane
  EXPECT_EQ(memsys_words_spanned(8, 8), 2);
  EXPECT_EQ(memsys_words_spanned(9, 8), 2);   // lanes 7..15
  EXPECT_EQ(memsys_words_spanned(10, 8), 3);  // lanes 7..16
  EXPECT_EQ(memsys_words_spanned(16, 8), 3);  // the 16x16 preset's vector read: 2 or 3 banks
  EXPECT_EQ(memsys_words_spanned(3, 1), 3);
  EXPECT_EQ(memsys_words_spanned(16, 2), 9);
}

TEST(EmitMemsys, AddressMapTiny) {
  // tiny-2x2: data 2 KiB = 2 banks x 2 sectors x 256 words x 16 bits (2 elements per word),
  // weight 4 KiB = 2 x 4 x 256 x 16, acc 1 KiB = 2 x 2 x 64 x 32 (one psum code per word).
  const MemsysGeometry g = memsys_geometry(preset("tiny-2x2"));
  ASSERT_EQ(g.mems.size(), 3u);
  EXPECT_EQ(g.mems[0].elem_base, 0);
  EXPECT_EQ(g.mems[0].elements, 2048);
  EXPECT_EQ(g.mems[1].elem_base, 2048);
  EXPECT_EQ(g.mems[1].elements, 4096);
  EXPECT_EQ(g.mems[2].elem_base, 6144);
  EXPECT_EQ(g.mems[2].elements, 256);
  EXPECT_EQ(g.mems[0].words, 1024);
  EXPECT_EQ(g.mems[2].words, 256);
  EXPECT_EQ(g.total_elements, 6400);
  EXPECT_EQ(g.spm_addr_bits, 13);  // the DMA port addresses elements too
  EXPECT_EQ(g.spm_data_bits, 32);
  EXPECT_EQ(g.spm_max_size, 2);
  EXPECT_EQ(g.spm_size_bits, 2);
  // Element 1027 of the data memory: word 513, lane 1, bank 1, row 256 = sector 1, word 0.
  expect_location(memsys_locate_element(g, 1027), 0, 513, 1, 1, 256, 1, 0);
  // The first weight element and the last acc element.
  MemsysLocation l = memsys_locate_element(g, 2048);
  EXPECT_EQ(l.memory, 1);
  EXPECT_EQ(l.word, 0);
  l = memsys_locate_element(g, 6144 + 255);
  EXPECT_EQ(l.memory, 2);
  EXPECT_EQ(l.word, 255);
  EXPECT_EQ(l.bank, 1);
  EXPECT_EQ(l.sector, 1);
  EXPECT_EQ(l.offset, 63);
  EXPECT_EQ(memsys_locate_element(g, 6144 + 256).memory, -1);
  EXPECT_EQ(memsys_locate_element(g, -1).memory, -1);
}

TEST(EmitMemsys, DmaSizes) {
  // Legal DMA accesses: whole lanes of one word. tiny-2x2: data 16-bit words of 8-bit lanes, acc
  // 32-bit words of one 32-bit lane.
  const MemsysGeometry t = memsys_geometry(preset("tiny-2x2"));
  EXPECT_EQ(memsys_dma_lanes(t.mems[0], 0), 1);
  EXPECT_EQ(memsys_dma_lanes(t.mems[0], 1), 2);
  EXPECT_EQ(memsys_dma_lanes(t.mems[0], 2), 0);  // wider than the word
  EXPECT_EQ(memsys_dma_lanes(t.mems[2], 0), 0);  // a byte is not a psum lane
  EXPECT_EQ(memsys_dma_lanes(t.mems[2], 1), 0);
  EXPECT_EQ(memsys_dma_lanes(t.mems[2], 2), 1);  // a psum code or a widened init code
  EXPECT_EQ(memsys_dma_lanes(t.mems[2], 3), 0);
  const MemsysGeometry c = memsys_geometry(preset("capsacc-16x16"));  // data 64-bit, acc 32-bit words
  EXPECT_EQ(memsys_dma_lanes(c.mems[0], 3), 8);
  EXPECT_EQ(memsys_dma_lanes(c.mems[2], 3), 0);
  EXPECT_EQ(c.spm_max_size, 3);
  // RTL (tiny): a 2-byte access must start in lane 0; byte enables and data shifted to the lane;
  // acc takes only 4-byte accesses; read data shifted down and cut to the access's bytes.
  const std::string v = print_module(build_memsys(preset("tiny-2x2")));
  for (const char* s : {"assign dma_data_fit = (spm_size_i == 2'd0) | ((spm_size_i == 2'd1) & (dma_data_lane == 1'd0));",
                        "assign dma_data_be = {{1{spm_size_i >= 2'd1}}, 1'b1} << dma_data_lane;",
                        "assign dma_data_wdata = spm_wdata_i[15:0] << {dma_data_lane, 3'd0};",
                        "assign dma_acc_fit = (spm_size_i == 2'd2);",
                        "assign dma_keep = {{16{dma_size_q >= 2'd2}}, {8{dma_size_q >= 2'd1}}, 8'hff};",
                        "assign spm_gnt = dma_drop | (dma_data_ok & dma_data_free)"})
    EXPECT_NE(v.find(s), std::string::npos) << s;
  // capsacc: 8 lanes per data word: a 2-byte access may start in lanes 0..6.
  const std::string cv = print_module(build_memsys(preset("capsacc-16x16")));
  EXPECT_NE(cv.find("((spm_size_i == 2'd1) & (dma_data_lane <= 3'd6))"), std::string::npos);
  EXPECT_NE(cv.find("((spm_size_i == 2'd3) & (dma_data_lane == 3'd0))"), std::string::npos);
}

TEST(EmitMemsys, DmaPortMatchesTheDma) {
  // The top level connects capsgen_dma's SPM port to memsys's directly: same address, size, data widths.
  for (const char* p : {"tiny-2x2", "small-4x4", "capsacc-16x16"}) {
    const AccelConfig cfg = preset(p);
    const MemsysGeometry g = memsys_geometry(cfg);
    const DmaGeometry d = dma_geometry(cfg);
    EXPECT_EQ(g.spm_addr_bits, d.spm_addr_bits) << p;
    EXPECT_EQ(g.spm_size_bits, d.size_bits) << p;
    EXPECT_EQ(g.spm_max_size, d.max_size) << p;
    EXPECT_EQ(g.spm_data_bits, d.data_bits) << p;
    EXPECT_EQ(g.spm_addr_bits, memsys_element_addr_bits(cfg)) << p;
  }
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    const AccelConfig cfg = parse_accel_config(random_accel_config_yaml(seed), "random");
    if (!memsys_unsupported_reason(cfg).empty()) continue;
    EXPECT_EQ(memsys_geometry(cfg).spm_addr_bits, dma_geometry(cfg).spm_addr_bits) << seed;
    EXPECT_EQ(memsys_geometry(cfg).spm_size_bits, dma_geometry(cfg).size_bits) << seed;
  }
}

TEST(EmitMemsys, ResultWritesReachDataAndWeight) {
  // wr decodes its address: the data memory (waits on drd), the weight memory (waits on wrd).
  const std::string v = print_module(build_memsys(preset("tiny-2x2")));
  for (const char* s : {"assign wr_ok = wr_lane_ok[0] & (~wr_vec_i | ((wr_mask_i & ~wr_lane_ok) == 2'd0));",
                        "assign wrw_ok = (wr_addr_i >= 32'd2048) & wrw_lane_ok[0]",
                        "assign wr_ready = ((wr_bank & drd_bank) == 2'd0) & ((wrw_bank & wrd_bank) == 2'd0);",
                        "(wr_en_i & ~(wr_ok | wrw_ok))", "assign weight_eng_wr = wrw_bank & {2{wr_go}};",
                        "assign dma_weight_free = ((dma_weight_hit & (wrd_bank | (wrw_bank & {2{wr_go}}))) == 2'd0)",
                        "assign cnt_eng_wr_weight_o = cnt_eng_wr_weight_q;"})
    EXPECT_NE(v.find(s), std::string::npos) << s;
}

TEST(EmitMemsys, NonPowerOfTwoSectors) {
  // capsacc-16x16: 25 KiB data = 16 banks x 2 sectors x 100 words x 64 bits: sector = row / 100.
  const MemsysGeometry g = memsys_geometry(preset("capsacc-16x16"));
  EXPECT_EQ(g.mems[0].g.words_per_sector, 100);
  const MemsysLocation l = memsys_locate_element(g, (16 * 150 + 5) * 8 + 3);
  EXPECT_EQ(l.bank, 5);
  EXPECT_EQ(l.row, 150);
  EXPECT_EQ(l.sector, 1);
  EXPECT_EQ(l.offset, 50);
  EXPECT_EQ(l.lane, 3);
  const std::string v = print_module(build_memsys(preset("capsacc-16x16")));
  EXPECT_NE(v.find(">= 8'd100) ? 1'd1"), std::string::npos) << "sector decode by comparison with 100";
}

TEST(EmitMemsys, RejectsSmpWithNarrowWords) {
  // SMP keeps psum codes in 32-bit lanes of the shared memory's words: 16-bit words hold none.
  AccelConfig cfg = preset("tiny-2x2-smp");
  cfg.scratchpad.shared.width_bits = 16;
  validate_accel_config(cfg);
  EXPECT_NE(memsys_unsupported_reason(cfg).find("scratchpad.shared.width_bits"), std::string::npos);
  EXPECT_NE(memsys_unsupported_reason(cfg).find("32-bit lanes"), std::string::npos) << memsys_unsupported_reason(cfg);
  EXPECT_NE(reject_message(cfg).find("scratchpad.shared.width_bits"), std::string::npos);
  // generate still works: no capsgen_memsys, memsys.json says why.
  const Design d = build_design(cfg);
  EXPECT_FALSE(d.has_module(kMemsysModule));
  const OutputFile* summary = find(d, kMemsysSummaryName);
  ASSERT_NE(summary, nullptr);
  const nlohmann::json j = nlohmann::json::parse(summary->contents);
  EXPECT_EQ(j, nlohmann::json({{"schema", "capsgen.memsys/1"}, {"supported", false}, {"reason", memsys_unsupported_reason(cfg)}}));
}

TEST(EmitMemsys, AddressMapSmp) {
  // tiny-2x2-smp: one 4 KiB memory of 32-bit words (2 banks x 4 sectors x 128 words): the acc range
  // [0, 1024) is its 32-bit lanes (one per word), the shared range [1024, 5120) its bytes.
  const AccelConfig cfg = preset("tiny-2x2-smp");
  EXPECT_EQ(memsys_unsupported_reason(cfg), "");
  const MemsysGeometry g = memsys_geometry(cfg);
  ASSERT_TRUE(g.smp);
  ASSERT_EQ(g.mems.size(), 2u);
  const MemsysMemory &acc = g.mems[0], &sh = g.mems[1];
  EXPECT_EQ(acc.g.name, "acc");
  EXPECT_EQ(acc.phys, "shared");
  EXPECT_TRUE(acc.view());
  EXPECT_EQ(acc.g.module, "capsgen_spm_shared");
  EXPECT_EQ(acc.elem_base, 0);
  EXPECT_EQ(acc.elements, 1024);
  EXPECT_EQ(acc.lanes, 1);
  EXPECT_EQ(acc.lane_bits, 32);
  EXPECT_FALSE(sh.view());
  EXPECT_EQ(sh.elem_base, 1024);
  EXPECT_EQ(sh.elements, 4096);
  EXPECT_EQ(sh.lanes, 4);
  EXPECT_EQ(sh.g.ports, 3);
  EXPECT_EQ(g.index("data"), -1);
  EXPECT_EQ(g.spm_addr_bits, 13);
  EXPECT_EQ(g.spm_addr_bits, memsys_element_addr_bits(cfg));
  EXPECT_EQ(g.spm_addr_bits, dma_geometry(cfg).spm_addr_bits);
  EXPECT_EQ(memsys_dma_lanes(acc, 2), 1);
  EXPECT_EQ(memsys_dma_lanes(acc, 1), 0);
  EXPECT_EQ(memsys_dma_lanes(sh, 2), 4);
  // Acc element 261 and shared bytes 1024 + 4 * 261 + k are one word: 261, bank 1, row 130 = sector 1, word 2.
  expect_location(memsys_locate_element(g, 261), 0, 261, 0, 1, 130, 1, 2);
  for (int k = 0; k < 4; ++k) expect_location(memsys_locate_element(g, 1024 + 4 * 261 + k), 1, 261, k, 1, 130, 1, 2);
  EXPECT_EQ(memsys_locate_element(g, 5120).memory, -1);
  const nlohmann::json summary = memsys_summary(cfg);
  EXPECT_EQ(summary.at("organization"), "smp");
  EXPECT_EQ(summary.at("memories"), nlohmann::json::parse(R"([
    {"name": "acc", "elem_base": 0, "elements": 1024, "words": 1024, "banks": 2, "sectors": 4, "words_per_sector": 128,
     "width_bits": 32, "lane_bits": 32},
    {"name": "shared", "elem_base": 1024, "elements": 4096, "words": 1024, "banks": 2, "sectors": 4,
     "words_per_sector": 128, "width_bits": 32, "lane_bits": 8}])"));
  EXPECT_EQ(summary.at("views"), nlohmann::json::parse(R"([{"range": "acc", "scratchpad": "shared"}])"));
}

TEST(EmitMemsys, SmpPortsCountersAndArbitration) {
  const AccelConfig cfg = preset("tiny-2x2-smp");
  const Module m = build_memsys(cfg);
  const auto width = [&m](const std::string& n) { return port_width(m, n); };
  expect_tiny_engine_ports(m);  // those of SEP and HY (the chip connects the same engine and DMA)
  // One scratchpad: one handshake, sector counters of the shared memory only; per-range access counters.
  EXPECT_EQ(width("sleep_req_shared_i"), "4");
  EXPECT_EQ(width("sleep_req_acc_i"), "");
  EXPECT_EQ(width("cnt_sector_shared_o"), "128");
  EXPECT_EQ(width("cnt_sector_acc_o"), "");
  for (const char* c : {"cnt_eng_rd_acc_o", "cnt_dma_rd_acc_o", "cnt_dma_wr_acc_o", "cnt_dma_wait_acc_o", "cnt_eng_rd_shared_o",
                        "cnt_eng_wr_shared_o", "cnt_dma_rd_shared_o", "cnt_dma_wr_shared_o", "cnt_dma_wait_shared_o"})
    EXPECT_EQ(width(c), "32") << c;
  for (const char* c : {"cnt_eng_rd_data_o", "cnt_eng_wr_acc_o", "sleep_req_data_i"}) EXPECT_EQ(width(c), "") << c;
  const std::string v = print_module(m);
  EXPECT_EQ(v, print_module(build_memsys(cfg))) << "deterministic";
  EXPECT_NE(v.find("Memory system, SMP organization"), std::string::npos);
  EXPECT_EQ(v.find("initial"), std::string::npos);
  for (const char* s :
       {"assign brd_ok = (brd_addr_i < 32'd1023);",
        "assign drs_ok = (drd_addr_i >= 32'd1024) & (drd_vec_i ? (drd_addr_i < 32'd5119) : (drd_addr_i < 32'd5120));",
        "assign wrds_ok = (wrd_addr_i >= 32'd1024) & (wrd_addr_i < 32'd5119);",
        "assign err_range = (brd_en_i & ~brd_ok) | (drd_en_i & ~drs_ok) | (wrd_en_i & ~wrds_ok) | (wr_en_i & "
        "~(wrs_ok)) | "
        "(spm_req_i & dma_drop);",
        // The writer waits only on a wrd of its bank (both port p1).
        "assign wr_ready = ((wrs_bank & wrds_bank) == 2'd0);",
        // The DMA (p2, either range) waits on any engine port of the bank, brd (p2) included.
        "assign dma_acc_free = ((dma_acc_hit & (drs_bank | wrds_bank | (wrs_bank & {2{wr_go}}) | brd_bank)) == 2'd0) & "
        "dma_acc_usable;",
        "assign dma_acc_usable = ~shared_ack[dma_acc_addr[8:7]];",
        // Ports: p0 drd, p1 wrd and wr, p2 brd and the DMA of both ranges.
        "assign shared_p0_en = drs_bank;", "assign shared_p1_en = wrds_bank | shared_eng_wr;",
        "assign shared_dma = (dma_shared_hit | dma_acc_hit) & {2{dma_go}};",
        "assign shared_p2_en = brd_bank | shared_dma;",
        "assign shared_p2_be = {2{(dma_acc_ok ? dma_acc_be : dma_shared_be)}};",
        "assign shared_p2_addr[8:0] = brd_bank[0] ? brd_b0_addr : (dma_acc_ok ? dma_acc_addr : dma_shared_addr);",
        // Reads: brd's lanes from p2, drd's from p0 (no other memory to choose from).
        "assign brd_rot2 = {shared_p2_rdata, shared_p2_rdata} >> {brd_s_q, 5'd0};",
        "assign brd_data_o[39:20] = brd_rot[51:32];", "assign drd_data_o[7:0] = drs_rot[7:0];",
        "assign drd_data_o[15:8] = drd_vec_q ? drs_rot[15:8] : 8'd0;",
        "assign dma_acc_word = shared_p2_rdata[{dma_acc_bank_q, 5'd0} +: 32];",
        // Counters: brd's reads as the acc range's, the sectors over all three ports.
        "cnt_eng_rd_acc_inc_d = {1'd0, (brd_bank[0])} + {1'd0, (brd_bank[1])};",
        "(shared_p2_en[1] & (shared_p2_addr[17:16] == 2'd3))", "capsgen_spm_shared u_spm_shared ("})
    EXPECT_NE(v.find(s), std::string::npos) << s;
  EXPECT_EQ(v.find("u_spm_acc"), std::string::npos);
}

TEST(EmitMemsys, RejectsWideCodes) {
  AccelConfig cfg = preset("tiny-2x2");
  cfg.widths.data = 10;
  cfg.widths.act = 10;
  cfg.widths.weight = 10;
  cfg.widths.psum = 24;
  validate_accel_config(cfg);
  EXPECT_NE(reject_message(cfg).find("widths.data"), std::string::npos) << reject_message(cfg);
  EXPECT_NE(reject_message(cfg).find("8-bit lane"), std::string::npos);
  AccelConfig w = preset("tiny-2x2");
  w.widths.weight = 9;
  w.widths.psum = 20;
  validate_accel_config(w);
  EXPECT_NE(reject_message(w).find("widths.weight"), std::string::npos) << reject_message(w);
  AccelConfig n = preset("tiny-2x2");
  n.norm.sqrt_out_bits = 10;
  validate_accel_config(n);
  EXPECT_NE(reject_message(n).find("norm.sqrt_out_bits"), std::string::npos) << reject_message(n);
}

TEST(EmitMemsys, RejectsTooFewBanks) {
  // 4 rows of 8-bit elements in 16-bit words need up to 3 words: 2 banks are too few.
  AccelConfig cfg = preset("tiny-2x2");
  cfg.array.rows = 4;
  cfg.widths.psum = 21;
  validate_accel_config(cfg);
  const std::string msg = reject_message(cfg);
  EXPECT_NE(msg.find("scratchpad.data.banks"), std::string::npos) << msg;
  EXPECT_NE(msg.find("span up to 3 words"), std::string::npos) << msg;
  // Narrow acc words cannot hold a 32-bit psum lane.
  AccelConfig a = preset("tiny-2x2");
  a.scratchpad.acc.width_bits = 16;
  validate_accel_config(a);
  EXPECT_NE(reject_message(a).find("scratchpad.acc.width_bits"), std::string::npos) << reject_message(a);
}

TEST(EmitMemsys, PortsAndOrder) {
  for (const char* p : {"tiny-2x2", "small-4x4", "capsacc-16x16"}) {
    const AccelConfig cfg = preset(p);
    const Module m = build_memsys(cfg);
    const auto width = [&m](const std::string& n) { return port_width(m, n); };
    EXPECT_EQ(width("drd_data_o"), str(cfg.array.rows * cfg.widths.data)) << p;
    EXPECT_EQ(width("wrd_data_o"), str(cfg.array.cols * cfg.widths.weight)) << p;
    EXPECT_EQ(width("brd_data_o"), str(cfg.array.cols * cfg.widths.psum)) << p;
    EXPECT_EQ(width("wr_ready_o"), "1") << p;
    EXPECT_EQ(width("sleep_req_data_i").empty(), !cfg.scratchpad.power_gating) << p;
    EXPECT_EQ(width("spm_addr_i"), str(memsys_geometry(cfg).spm_addr_bits)) << p;
    EXPECT_EQ(width("spm_size_i"), str(memsys_geometry(cfg).spm_size_bits)) << p;
    EXPECT_EQ(width("cnt_eng_wr_data_o"), "32") << p;
    EXPECT_EQ(width("cnt_eng_wr_weight_o"), "32") << p;
    EXPECT_EQ(width("cnt_eng_wr_acc_o"), "") << p;
    EXPECT_EQ(print_module(m), print_module(build_memsys(cfg))) << "deterministic";
    const std::string v = print_module(m);
    EXPECT_EQ(v.find("$display"), std::string::npos);
    EXPECT_EQ(v.find("initial"), std::string::npos);
    // files.f: memsys after the scratchpads it instantiates.
    const std::vector<std::string> f = build_design(cfg).verilog_files();
    const auto at = [&f](const std::string& n) { return std::find(f.begin(), f.end(), n) - f.begin(); };
    EXPECT_LT(at("capsgen_spm_acc.v"), at("capsgen_memsys.v")) << p;
    EXPECT_LT(at("capsgen_memsys.v"), static_cast<long>(f.size())) << p;
  }
}

TEST(EmitMemsys, RandomConfigsGenerate) {
  // Every random config builds a design; memsys is there exactly when supported.
  int with = 0, without = 0;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    const AccelConfig cfg = parse_accel_config(random_accel_config_yaml(seed), "random");
    const Design d = build_design(cfg);
    const bool supported = memsys_unsupported_reason(cfg).empty();
    EXPECT_EQ(d.has_module(kMemsysModule), supported) << seed;
    (supported ? with : without)++;
  }
  EXPECT_GT(with, 0);
  EXPECT_GT(without, 0);
}

TEST(EmitMemsys, AddressMapHy) {
  // tiny-2x2-hy: data 1 KiB, weight 2 KiB, acc 1 KiB (256 psum lanes), then the shared 2 KiB of 16-bit
  // words with one 8-bit code per byte lane (2 banks x 4 sectors x 128 words).
  const AccelConfig cfg = preset("tiny-2x2-hy");
  EXPECT_EQ(memsys_unsupported_reason(cfg), "");
  const MemsysGeometry g = memsys_geometry(cfg);
  ASSERT_EQ(g.mems.size(), 4u);
  const char* names[] = {"data", "weight", "acc", "shared"};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(g.mems[static_cast<std::size_t>(i)].g.name, names[i]);
  EXPECT_EQ(g.mems[0].elements, 1024);
  EXPECT_EQ(g.mems[1].elem_base, 1024);
  EXPECT_EQ(g.mems[2].elem_base, 3072);
  EXPECT_EQ(g.mems[2].elements, 256);
  const MemsysMemory& sh = g.mems[3];
  EXPECT_EQ(sh.elem_base, 3328);
  EXPECT_EQ(sh.elements, 2048);
  EXPECT_EQ(sh.lane_bits, 8);
  EXPECT_EQ(sh.lanes, 2);
  EXPECT_EQ(sh.words, 1024);
  EXPECT_EQ(sh.g.ports, 3);
  EXPECT_EQ(g.total_elements, 5376);
  EXPECT_EQ(g.spm_addr_bits, 13);
  EXPECT_EQ(g.spm_addr_bits, memsys_element_addr_bits(cfg));
  EXPECT_EQ(g.spm_addr_bits, dma_geometry(cfg).spm_addr_bits);
  EXPECT_EQ(g.spm_size_bits, dma_geometry(cfg).size_bits);
  EXPECT_EQ(memsys_dma_lanes(sh, 0), 1);
  EXPECT_EQ(memsys_dma_lanes(sh, 1), 2);
  EXPECT_EQ(memsys_dma_lanes(sh, 2), 0);
  // Element 3328 + 2 * (2 * 130 + 1) + 1 of shared: word 261, lane 1, bank 1, row 130 = sector 1, word 2.
  expect_location(memsys_locate_element(g, 3328 + 2 * (2 * 130 + 1) + 1), 3, 261, 1, 1, 130, 1, 2);
  EXPECT_EQ(memsys_locate_element(g, 3327).memory, 2);
  EXPECT_EQ(memsys_locate_element(g, 5376).memory, -1);
  const nlohmann::json summary = memsys_summary(cfg);
  EXPECT_EQ(summary.at("supported"), true);
  EXPECT_EQ(summary.at("organization"), "hy");
  ASSERT_EQ(summary.at("memories").size(), 4u);
  EXPECT_EQ(summary.at("memories")[3], nlohmann::json::parse(R"(
    {"name": "shared", "elem_base": 3328, "elements": 2048, "words": 1024, "banks": 2, "sectors": 4,
     "words_per_sector": 128, "width_bits": 16, "lane_bits": 8})"));
  EXPECT_EQ(summary.at("views"), nlohmann::json::array());
}

TEST(EmitMemsys, HyPortsCountersAndArbitration) {
  const AccelConfig cfg = preset("tiny-2x2-hy");
  const Module m = build_memsys(cfg);
  const auto width = [&m](const std::string& n) { return port_width(m, n); };
  expect_tiny_engine_ports(m);  // those of SEP (the chip connects the same engine and DMA)
  // The shared memory's handshake and counters.
  EXPECT_EQ(width("sleep_req_shared_i"), "4");
  EXPECT_EQ(width("sleep_ack_shared_o"), "4");
  for (const char* c : {"cnt_eng_rd_shared_o", "cnt_eng_wr_shared_o", "cnt_dma_rd_shared_o", "cnt_dma_wr_shared_o",
                        "cnt_dma_wait_shared_o"})
    EXPECT_EQ(width(c), "32") << c;
  EXPECT_EQ(width("cnt_sector_shared_o"), "128");
  EXPECT_EQ(width("cnt_eng_wr_acc_o"), "");
  const std::string v = print_module(m);
  EXPECT_EQ(v, print_module(build_memsys(cfg))) << "deterministic";
  EXPECT_NE(v.find("Memory system, HY organization"), std::string::npos);
  EXPECT_EQ(v.find("$display"), std::string::npos);
  EXPECT_EQ(v.find("initial"), std::string::npos);
  for (const char* s :
       {// drd / wrd / wr decode the shared memory too; dropped only when no memory holds the access.
        "assign drs_ok = (drd_addr_i >= 32'd3328) & (drd_vec_i ? (drd_addr_i < 32'd5375) : (drd_addr_i < 32'd5376));",
        "assign wrds_ok = (wrd_addr_i >= 32'd3328) & (wrd_addr_i < 32'd5375);",
        "assign wrs_ok = (wr_addr_i >= 32'd3328) & wrs_lane_ok[0]", "(drd_en_i & ~drd_ok & ~drs_ok)",
        "(wrd_en_i & ~wrd_ok & ~wrds_ok)", "(brd_en_i & ~brd_ok)", "(wr_en_i & ~(wr_ok | wrw_ok | wrs_ok))",
        // The writer waits on the wrd of the shared memory (both port p1), never on its drd (p0).
        "assign wr_ready = ((wr_bank & drd_bank) == 2'd0) & ((wrw_bank & wrd_bank) == 2'd0) & ((wrs_bank & wrds_bank) "
        "== 2'd0);",
        // The DMA (p2) waits on any engine port of the bank.
        "assign dma_shared_free = ((dma_shared_hit & (drs_bank | wrds_bank | (wrs_bank & {2{wr_go}}))) == 2'd0) & "
        "dma_shared_usable;",
        // Ports: p0 drd, p1 wrd and wr, p2 DMA.
        "assign shared_p0_en = drs_bank;", "assign shared_p1_en = wrds_bank | shared_eng_wr;",
        "assign shared_p1_we = shared_eng_wr;", "assign shared_eng_wr = wrs_bank & {2{wr_go}};",
        "assign shared_p2_en = shared_dma;", "assign shared_p2_we = shared_dma & {2{spm_we_i}};",
        "assign shared_p1_addr[8:0] = wrds_bank[0] ? wrds_b0_addr : wrs_b0_addr;", "capsgen_spm_shared u_spm_shared (",
        ".p2_en_i(shared_p2_en)", ".err_conflict_o(shared_err_conflict)", "assign dma_shared_word = shared_p2_rdata[",
        // Read data from the memory the read went to.
        "assign drd_data_o[7:0] = (drd_shared_q ? drs_rot[7:0] : drd_rot[7:0]);",
        "assign wrd_data_o[15:8] = (wrd_shared_q ? wrds_rot[15:8] : wrd_rot[15:8]);", "drd_shared_d = drs_ok;",
        "assign drs_rot2 = {shared_p0_rdata, shared_p0_rdata}", "assign wrds_rot2 = {shared_p1_rdata, shared_p1_rdata}",
        // Counters: drd and wrd reads of one bank count 2; sectors count every port's banks.
        "cnt_eng_rd_shared_inc_d = {2'd0, (drs_bank[0])} + {2'd0, (drs_bank[1])} + {2'd0, (wrds_bank[0])} + {2'd0, "
        "(wrds_bank[1])};",
        "(shared_p2_en[1] & (shared_p2_addr[17:16] == 2'd3))", "assign cnt_eng_wr_shared_o = cnt_eng_wr_shared_q;",
        "assign sleep_ack_shared_o = shared_ack;", " | shared_err;"})
    EXPECT_NE(v.find(s), std::string::npos) << s;
  // Data and weight keep counting only their own memory.
  EXPECT_NE(v.find("assign data_eng_rd = drd_bank;"), std::string::npos);
  EXPECT_NE(v.find("assign weight_eng_rd = wrd_bank;"), std::string::npos);
}

TEST(EmitMemsys, AddressMapHyLanes) {
  // tiny-2x2-hy-lanes: data 1 KiB, weight 1 KiB, acc 1 KiB, shared 8 KiB of 32-bit words (2 banks x 4
  // sectors x 256 words); its words hold 32-bit lanes, so the lanes range follows its bytes: lanes
  // element r is shared bytes 4r .. 4r + 3, the same word.
  const AccelConfig cfg = preset("tiny-2x2-hy-lanes");
  EXPECT_EQ(memsys_unsupported_reason(cfg), "");
  const MemsysGeometry g = memsys_geometry(cfg);
  ASSERT_EQ(g.mems.size(), 5u);
  EXPECT_FALSE(g.smp);
  EXPECT_EQ(g.index("lanes"), 4);
  const MemsysMemory& sh = g.mems[3];
  const MemsysMemory& ln = g.mems[4];
  EXPECT_EQ(sh.elem_base, 2304);
  EXPECT_EQ(sh.elements, 8192);
  EXPECT_FALSE(sh.view());
  EXPECT_TRUE(ln.view());
  EXPECT_EQ(ln.phys, "shared");
  EXPECT_EQ(ln.elem_base, 2304 + 8192);
  EXPECT_EQ(ln.elements, 2048);
  EXPECT_EQ(ln.lane_bits, 32);
  EXPECT_EQ(ln.lanes, 1);
  EXPECT_EQ(ln.words, sh.words);
  EXPECT_EQ(g.total_elements, 12544);
  EXPECT_EQ(g.spm_addr_bits, 14);
  EXPECT_EQ(g.spm_addr_bits, memsys_element_addr_bits(cfg));
  EXPECT_EQ(g.spm_addr_bits, dma_geometry(cfg).spm_addr_bits);
  EXPECT_EQ(memsys_dma_lanes(ln, 1), 0);  // whole 4-byte lanes only
  EXPECT_EQ(memsys_dma_lanes(ln, 2), 1);
  // Lanes element 10496 + 1025 is word 1025 (bank 1, row 512 = sector 2, word 0), as are shared bytes
  // 2304 + 4 * 1025 .. + 3.
  expect_location(memsys_locate_element(g, 10496 + 1025), 4, 1025, 0, 1, 512, 2, 0);
  expect_location(memsys_locate_element(g, 2304 + 4 * 1025 + 3), 3, 1025, 3, 1, 512, 2, 0);
  const nlohmann::json summary = memsys_summary(cfg);
  EXPECT_EQ(summary.at("organization"), "hy");
  ASSERT_EQ(summary.at("memories").size(), 5u);
  EXPECT_EQ(summary.at("memories")[4], nlohmann::json::parse(R"(
    {"name": "lanes", "elem_base": 10496, "elements": 2048, "words": 2048, "banks": 2, "sectors": 4,
     "words_per_sector": 256, "width_bits": 32, "lane_bits": 32})"));
  EXPECT_EQ(summary.at("views"), nlohmann::json::parse(R"([{"range": "lanes", "scratchpad": "shared"}])"));
  // With 16-bit shared words (tiny-2x2-hy) there are no lanes.
  EXPECT_EQ(memsys_geometry(preset("tiny-2x2-hy")).index("lanes"), -1);
  // Nor with too few shared banks for a bias row of psum lanes: 4 columns in 32-bit words span up to
  // 4 words, more than 2 banks (the acc buffers then stay in the acc memory).
  AccelConfig narrow = cfg;
  narrow.array.cols = 4;
  EXPECT_FALSE(hy_shared_lanes(narrow.scratchpad, narrow.array.cols));
  EXPECT_TRUE(hy_shared_lanes(cfg.scratchpad, cfg.array.cols));
}

TEST(EmitMemsys, HyLanesPortsCountersAndArbitration) {
  const AccelConfig cfg = preset("tiny-2x2-hy-lanes");
  const Module m = build_memsys(cfg);
  const auto width = [&m](const std::string& n) { return port_width(m, n); };
  for (const char* c : {"cnt_eng_rd_lanes_o", "cnt_dma_rd_lanes_o", "cnt_dma_wr_lanes_o", "cnt_dma_wait_lanes_o"})
    EXPECT_EQ(width(c), "32") << c;
  // A view: no engine writes, no sectors or sleep handshake of its own (the shared memory's).
  EXPECT_EQ(width("cnt_eng_wr_lanes_o"), "");
  EXPECT_EQ(width("cnt_sector_lanes_o"), "");
  EXPECT_EQ(width("sleep_req_lanes_i"), "");
  EXPECT_EQ(width("sleep_req_shared_i"), "4");
  const std::string v = print_module(m);
  EXPECT_EQ(v, print_module(build_memsys(cfg))) << "deterministic";
  for (const char* s :
       {// brd reaches the acc memory or the lanes, whichever holds the whole row; else dropped.
        "assign brs_ok = (brd_addr_i >= 32'd10496) & (brd_addr_i < 32'd12543);", "(brd_en_i & ~brd_ok & ~brs_ok)",
        "assign brd_data_o[39:20] = (brd_shared_q ? brs_rot[51:32] : brd_rot[51:32]);", "brd_shared_d = brs_ok;",
        // brd of the lanes on port p2, before the DMA of either range; the DMA waits on it.
        "assign shared_p2_en = brs_bank | shared_dma;",
        "assign shared_dma = (dma_shared_hit | dma_lanes_hit) & {2{dma_go}};",
        "assign shared_p2_addr[9:0] = brs_bank[0] ? brs_b0_addr : (dma_lanes_ok ? dma_lanes_addr : dma_shared_addr);",
        "assign shared_p2_be = {2{(dma_lanes_ok ? dma_lanes_be : dma_shared_be)}};",
        "assign dma_shared_free = ((dma_shared_hit & (drs_bank | wrds_bank | (wrs_bank & {2{wr_go}}) | brs_bank)) == "
        "2'd0) & "
        "dma_shared_usable;",
        "assign dma_lanes_free = ((dma_lanes_hit & (drs_bank | wrds_bank | (wrs_bank & {2{wr_go}}) | brs_bank)) == "
        "2'd0) & "
        "dma_lanes_usable;",
        // The writer still waits only on the shared memory's wrd (port p1).
        "assign wr_ready = ((wr_bank & drd_bank) == 2'd0) & ((wrw_bank & wrd_bank) == 2'd0) & ((wrs_bank & wrds_bank) "
        "== 2'd0);",
        // Counters: brd's bank reads of the lanes; the shared memory's sectors count p2 (brd included).
        "cnt_eng_rd_lanes_inc_d = {1'd0, (brs_bank[0])} + {1'd0, (brs_bank[1])};",
        "(shared_p2_en[1] & (shared_p2_addr[19:18] == 2'd3))"})
    EXPECT_NE(v.find(s), std::string::npos) << s;
}

TEST(EmitMemsys, HyNeedsBanksForSharedVectors) {
  // The shared memory takes drd vectors, wr records and tile rows: with 4 rows of 8-bit codes in
  // 16-bit words a vector spans up to 3 words, more than 2 shared banks.
  AccelConfig cfg = preset("tiny-2x2-hy");
  cfg.array.rows = 4;
  cfg.widths.psum = 21;
  cfg.scratchpad.data.banks = 4;
  validate_accel_config(cfg);
  const std::string msg = reject_message(cfg);
  EXPECT_NE(msg.find("scratchpad.shared.banks"), std::string::npos) << msg;
  EXPECT_NE(msg.find("span up to 3 words"), std::string::npos) << msg;
}
