// The compute engine's descriptor encoding (gen/isa/engine_descriptor.hpp) and the shared Gemm reference
// (gen/isa/gemm_ref.hpp) against hand-computed cases: derived fields of the tile and output
// patterns, the conv builder's tile-major strides, what the engine rejects (naming the field), and a
// 1-chunk Gemm small enough to check every output by hand (bias, shift, ReLU, saturation, the write
// order tile -> vector -> column).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "isa/engine_descriptor.hpp"
#include "isa/gemm_ref.hpp"

using namespace capsgen::isa;

namespace {

void expect_rejects(const Gemm& g, const std::string& field) {
  try {
    encode_engine(g, 4, 4, 64);
    ADD_FAILURE() << "accepted, expected a rejection of " << field;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
  }
}

}  // namespace

TEST(EngineDescriptor, ConvDerivedFields) {
  ConvShape s;
  s.channels = 3;
  s.height = s.width = 8;
  s.out_channels = 10;
  s.kernel_h = s.kernel_w = 3;
  const Gemm g = conv_gemm(s, 4, 4, 64, 1000, 5000, 9000);
  EXPECT_EQ(g.k_chunks, 7);  // R = 27
  EXPECT_EQ(g.n_tiles, 3);
  EXPECT_EQ(g.m_total, 36);
  EXPECT_EQ(g.m_block, 21);  // 64 / 3
  EXPECT_EQ(g.tile.s_c, 1);
  EXPECT_EQ(g.tile.s_r, 4);
  EXPECT_EQ(g.tile.s_n, 16);
  EXPECT_EQ(g.tile.s_k, 48);
  EXPECT_EQ(g.init.kind, AccInit::Kind::kPerColumn);
  Gemm gg = g;
  gg.out = capsule_output(20000, 36, 5);
  const EngineDescriptor d = encode_engine(gg, 4, 4, 64);
  EXPECT_EQ(d.t_top, 12u);  // 3 * s_r
  EXPECT_FALSE(d.t_diag);
  EXPECT_TRUE(d.init_bias);
  EXPECT_EQ(d.init_base, 9000u);
  EXPECT_EQ(d.o_div, 5);
  EXPECT_EQ(d.o_s_o2, 1u);
  EXPECT_EQ(d.o_wrap, std::uint32_t(36 * 5 - 4));  // s_o1 - (o_div - 1) * s_o2
  EXPECT_EQ(d.gather.k_chunks, 7);
  EXPECT_TRUE(d.gather.conv);
}

TEST(EngineDescriptor, DiagDerivedFields) {
  Gemm g;
  g.m_total = 4;
  g.m_block = 4;
  g.r_total = 3;
  g.n_total = 2;
  g.tile.base = 50;
  g.tile.s_r = 2;
  g.tile.diag_groups = 2;
  g.data.s_m = 6;
  g.data.s_r = 1;
  const EngineDescriptor d = encode_engine(g, 5, 4, 64);  // rows 5: group_rows 2, row 4 outside the groups
  EXPECT_TRUE(d.t_diag);
  EXPECT_EQ(d.t_gtop, 2);
  EXPECT_EQ(d.t_etop, 0);
  EXPECT_EQ(d.t_dtop, 0u);
  EXPECT_EQ(d.t_dwrap, 2u);
}

TEST(EngineDescriptor, VectorWideGatherWhereElementsAreConsecutive) {
  Gemm g;
  g.m_total = 4;
  g.m_block = 4;
  g.k_chunks = 3;
  g.r_total = 10;
  g.n_total = 4;
  g.data.s_m = 10;
  g.data.s_k = 4;
  g.data.s_r = 1;
  EngineDescriptor d = encode_engine(g, 4, 4, 64);
  EXPECT_TRUE(d.v_mode);
  EXPECT_EQ(d.v_len, 10);  // chunks of 4, 4 and 2 valid rows
  EXPECT_FALSE(encode_engine(g, 4, 4, 64, false).v_mode);  // element-wise on request
  g.data.s_r = 2;
  EXPECT_FALSE(encode_engine(g, 4, 4, 64).v_mode);  // elements not consecutive
  g.data.s_r = 1;
  g.data.kind = DataSource::Kind::kConv;
  g.data.channels = g.data.height = g.data.width = g.data.kernel_h = g.data.kernel_w = g.data.out_w = 1;
  EXPECT_FALSE(encode_engine(g, 4, 4, 64).v_mode);  // im2col
  // Diag groups: G rows of W side by side are consecutive when each group is exactly r_total rows.
  Gemm dg;
  dg.m_total = 4;
  dg.m_block = 4;
  dg.r_total = 2;
  dg.n_total = 2;
  dg.tile.diag_groups = 2;
  dg.data.s_m = 4;
  dg.data.s_r = 1;
  d = encode_engine(dg, 4, 4, 64);
  EXPECT_TRUE(d.v_mode);
  EXPECT_EQ(d.v_len, 4);
  EXPECT_FALSE(encode_engine(dg, 6, 4, 64).v_mode);  // groups of 3 rows for 2 elements: gaps
}

TEST(EngineDescriptor, RejectsWhatTheEngineCannotRun) {
  Gemm ok;
  ok.m_total = 4;
  ok.m_block = 4;
  ok.r_total = 4;
  ok.n_total = 4;
  ok.tile.s_c = 1;
  EXPECT_NO_THROW(encode_engine(ok, 4, 4, 64));
  Gemm g = ok;
  g.batch = 0;
  expect_rejects(g, "batch");
  g = ok;
  g.m_block = 20;
  g.n_tiles = 4;
  expect_rejects(g, "m_block");
  g = ok;
  g.tile.s_c = 4;
  EXPECT_TRUE(encode_engine(g, 4, 4, 64).t_strided);  // read column by column
  EXPECT_EQ(encode_engine(g, 4, 4, 64).t_s_c, 4u);
  g.n_total = 1;
  EXPECT_FALSE(encode_engine(g, 4, 4, 64).t_strided);  // one column: s_c never used
  g = ok;
  g.init = {AccInit::Kind::kPerOutput, 300, 7, 1, 2};
  g.out.select_mod = 10;
  const EngineDescriptor d = encode_engine(g, 4, 4, 64);
  EXPECT_TRUE(d.init_out);
  EXPECT_FALSE(d.init_bias);
  EXPECT_EQ(d.init_base, 300u);
  EXPECT_EQ(d.init_s_b, 7u);
  EXPECT_EQ(d.init_s_m, 1u);
  EXPECT_EQ(d.init_shift, 2);
  EXPECT_EQ(d.o_sel, 10);
  g.init.shift = 32;
  expect_rejects(g, "init.shift");
  g = ok;
  g.out.select_mod = -1;
  expect_rejects(g, "out.select_mod");
  g = ok;
  g.out.o_div = 0;
  expect_rejects(g, "out.o_div");
  g = ok;
  g.shift = 40;
  expect_rejects(g, "shift");
}

// 2x2 array, one chunk, 2 tiles (3 outputs), 2 vectors; by hand.
TEST(GemmReference, HandComputedOutputsInWriteOrder) {
  std::map<std::int64_t, std::int64_t> mem;
  // Data vectors (affine, s_m = 2, s_r = 1) at 0: x0 = (1, 2), x1 = (-3, 4).
  mem[0] = 1, mem[1] = 2, mem[2] = -3, mem[3] = 4;
  // Tiles tile-major at 100 (s_r = 2, s_n = 4): tile 0 = [[1, 2], [3, 4]], tile 1 = [[5, x], [6, x]].
  for (int i = 0; i < 8; ++i) mem[100 + i] = 0;
  mem[100] = 1, mem[101] = 2, mem[102] = 3, mem[103] = 4, mem[104] = 5, mem[106] = 6;
  mem[105] = 99, mem[107] = 99;  // column 3 >= n_total: never used
  mem[200] = 10, mem[201] = -10, mem[202] = 1000;  // biases
  Gemm g;
  g.m_total = 2;
  g.m_block = 2;
  g.n_tiles = 2;
  g.n_total = 3;
  g.r_total = 2;
  g.data = {DataSource::Kind::kAffine, 0, 0, 2, 0, 1};
  g.tile = {100, 0, 0, 4, 2, 1, 1};
  g.init = {AccInit::Kind::kPerColumn, 200, 0, 0, 0};
  g.out = {300, 0, 10, 1, 0, 1, 0};
  g.shift = 1;
  g.relu = true;
  std::vector<std::pair<std::int64_t, std::int64_t>> w;
  GemmCounters c;
  run_gemm_reference(
      g, {2, 2, 12, 8}, [&](std::int64_t a) { return mem.at(a); },
      [&](std::int64_t a, std::int64_t v) { w.emplace_back(a, v); }, &c);
  // o0 = x.(1,3) + 10, o1 = x.(2,4) - 10, o2 = x.(5,6) + 1000; reduce: round-half-up >> 1, then ReLU.
  // x0: 7+10=17 -> 9; 10-10=0 -> 0; 17+1000=1017 -> 509 -> saturates to 127.
  // x1: 9+10=19 -> 10; 10-10=0 -> 0; 9+1000=1009 -> 505 -> 127.
  const std::vector<std::pair<std::int64_t, std::int64_t>> want = {
      {300, 9}, {301, 0}, {310, 10}, {311, 0}, {302, 127}, {312, 127}};
  EXPECT_EQ(w, want);
  EXPECT_EQ(c.vectors, 4);
  EXPECT_EQ(c.writes, 6);
}

TEST(EngineDescriptor, TextRoundTripAndErrors) {
  ConvShape s;
  s.channels = 2;
  s.height = s.width = 6;
  s.out_channels = 5;
  s.kernel_h = s.kernel_w = 3;
  s.padding = 1;
  Gemm g = conv_gemm(s, 4, 4, 64, 1000, 5000, 9000);
  g.out = capsule_output(20000, 36, 5);
  g.shift = 7;
  g.relu = true;
  const EngineDescriptor d = encode_engine(g, 4, 4, 64);
  const std::string text = engine_descriptor_text(d);
  EXPECT_EQ(engine_descriptor_text(parse_engine_descriptor(text)), text);
  EXPECT_NE(text.find("g_pad_off 4294967289\n"), std::string::npos);  // -(1*6 + 1), 32-bit two's complement
  EXPECT_NE(text.find("relu 1\n"), std::string::npos);
  auto fails = [&](const std::string& t, const std::string& what) {
    try {
      parse_engine_descriptor(t);
      ADD_FAILURE() << "accepted: " << what;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  fails(text + "bogus 1\n", "unknown field");
  fails(text + "relu 0\n", "given twice");
  fails("# header\n" + text.substr(text.find('\n') + 1), "kind: missing");
  std::string bad = text;
  bad.replace(bad.find("relu 1"), 6, "relu 2");
  fails(bad, "does not fit 1 bits");
  bad = text;
  bad.replace(bad.find("shift 7"), 7, "shift -1");
  fails(bad, "expected one unsigned number");
}

TEST(EngineDescriptor, ActivateAndFill) {
  Activate a;
  a.func = Activate::Func::kSquash;
  a.count = 10;
  a.n = 16;
  a.in_base = 100;
  a.in_s_v = 16;
  a.out_base = 400;
  a.out_s_v = 16;
  a.norm_shift = 6;  // ignored for squash: the preset's squash norm shift
  EngineDescriptor d = encode_activate(a, 2, 32);
  EXPECT_EQ(d.kind, 1);
  EXPECT_EQ(d.a_func, 3);
  EXPECT_EQ(d.a_norm_shift, 2);
  EXPECT_EQ(d.a_count, 10u);
  EXPECT_EQ(d.a_n, 16);
  EXPECT_EQ(d.a_out_s_e, 1u);
  a.func = Activate::Func::kNorm;
  EXPECT_EQ(encode_activate(a, 2, 32).a_norm_shift, 6);
  EXPECT_EQ(encode_activate(a, 2, 32).a_func, 2);
  a.func = Activate::Func::kSoftmax;
  EXPECT_EQ(encode_activate(a, 2, 32).a_func, 4);
  a.n = 33;
  EXPECT_THROW(encode_activate(a, 2, 32), std::invalid_argument);
  EXPECT_EQ(engine_descriptor_text(parse_engine_descriptor(engine_descriptor_text(d))), engine_descriptor_text(d));

  Fill f;
  f.base = 7;
  f.count = 20;
  f.stride = 3;
  f.value = -5;
  d = encode_fill(f, 8);
  EXPECT_EQ(d.kind, 2);
  EXPECT_EQ(d.f_value, 0xFB);  // -5 in 8 bits
  EXPECT_EQ(d.a_count, 20u);
  EXPECT_EQ(d.a_out_s_e, 3u);
  f.period = 3;
  f.table = {9, 9, 9};
  EXPECT_EQ(encode_fill(f, 8).f_value, 9);
  f.table = {9, 8, 9};
  EXPECT_THROW(encode_fill(f, 8), std::invalid_argument);
}

// The packed form the sequencer fetches: every field once, inside one word, no two fields sharing a
// bit, kind in bits [1:0] of word 0; pack/unpack round-trips every field at its extremes and at
// random values; values wider than their field are rejected by name; a program ends with the marker.
TEST(PackedDescriptor, LayoutCoversEveryFieldWithoutOverlap) {
  const auto& layout = engine_descriptor_layout();
  const int words = engine_descriptor_words();
  ASSERT_FALSE(layout.empty());
  EXPECT_EQ(layout[0].name, "kind");
  EXPECT_EQ(layout[0].word, 0);
  EXPECT_EQ(layout[0].lsb, 0);
  EXPECT_EQ(layout[0].bits, 2);
  std::vector<std::uint32_t> used(std::size_t(words), 0);
  std::map<std::string, int> names;
  int bits = 0;
  for (const PackedField& f : layout) {
    EXPECT_TRUE(names.emplace(f.name, 1).second) << f.name;
    ASSERT_GE(f.word, 0);
    ASSERT_LT(f.word, words);
    EXPECT_GE(f.lsb, 0);
    EXPECT_LE(f.lsb + f.bits, 32) << f.name << " straddles a word";
    const std::uint32_t mask = f.bits >= 32 ? 0xFFFFFFFFu : ((1u << f.bits) - 1) << f.lsb;
    EXPECT_EQ(used[std::size_t(f.word)] & mask, 0u) << f.name << " overlaps";
    used[std::size_t(f.word)] |= mask;
    bits += f.bits;
  }
  // Every field of the text format is in the layout (the text lists each once).
  const std::string text = engine_descriptor_text(EngineDescriptor{});
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), static_cast<long>(layout.size()));
  // First-fit packing wastes less than one word per 32-bit field boundary: fewer words than bits/32 + 4.
  EXPECT_LT(words, bits / 32 + 4) << bits << " bits in " << words << " words";
  EXPECT_EQ(engine_descriptor_signal(layout[0]), "desc_kind");
  for (const PackedField& f : layout) {
    if (f.name == "g_base") {
      EXPECT_EQ(engine_descriptor_signal(f), "desc_base");
    } else if (f.name == "t_base") {
      EXPECT_EQ(engine_descriptor_signal(f), "desc_t_base");
    }
  }
}

TEST(PackedDescriptor, RoundTripAtExtremesAndRandomValues) {
  const auto& layout = engine_descriptor_layout();
  std::uint64_t state = 12345;
  auto next = [&state] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 11;
  };
  for (int round = 0; round < 50; ++round) {
    // Round 0: every field all-ones; round 1: all zero; then random values that fit.
    std::string text;
    for (const PackedField& f : layout) {
      const std::uint64_t max = f.bits >= 64 ? ~0ull : (std::uint64_t{1} << f.bits) - 1;
      std::uint64_t v = round == 0 ? max : round == 1 ? 0 : next() & max;
      text += f.name + " " + std::to_string(v) + "\n";
    }
    const EngineDescriptor d = parse_engine_descriptor(text);
    const std::vector<std::uint32_t> w = pack_engine_descriptor(d);
    ASSERT_EQ(w.size(), std::size_t(engine_descriptor_words()));
    EXPECT_EQ(engine_descriptor_text(unpack_engine_descriptor(w)), text) << "round " << round;
    if (round == 0) {
      // All ones: every bit of the layout is set, no other.
      for (const PackedField& f : layout) {
        const std::uint32_t mask = f.bits >= 32 ? 0xFFFFFFFFu : ((1u << f.bits) - 1) << f.lsb;
        EXPECT_EQ(w[std::size_t(f.word)] & mask, mask) << f.name;
      }
    }
  }
}

TEST(PackedDescriptor, RejectsValuesWiderThanTheirFieldAndShortInput) {
  EngineDescriptor d;
  d.a_norm_shift = 40;  // a 5-bit field
  try {
    pack_engine_descriptor(d);
    ADD_FAILURE() << "packed a 6-bit value into a 5-bit field";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("a_norm_shift"), std::string::npos) << e.what();
  }
  EXPECT_THROW(unpack_engine_descriptor(std::vector<std::uint32_t>(2, 0)), std::invalid_argument);
}

TEST(PackedDescriptor, ProgramEndsWithTheEndMarker) {
  Activate a;
  a.func = Activate::Func::kSquash;
  a.count = 10;
  a.n = 16;
  a.in_s_v = a.out_s_v = 16;
  a.in_s_e = a.out_s_e = 1;
  Fill f;
  f.count = 5;
  f.stride = 1;
  f.value = -3;
  const std::vector<EngineDescriptor> prog = {encode_activate(a, 2, 32), encode_fill(f, 8)};
  const std::vector<std::uint32_t> image = pack_engine_program(prog);
  const std::size_t W = std::size_t(engine_descriptor_words());
  ASSERT_EQ(image.size(), 3 * W);
  EXPECT_EQ(image[0] & 3u, 1u);      // Activate
  EXPECT_EQ(image[W] & 3u, 2u);      // Fill
  EXPECT_EQ(image[2 * W] & 3u, 3u);  // end
  const EngineDescriptor back = unpack_engine_descriptor(std::vector<std::uint32_t>(image.begin() + long(W), image.begin() + long(2 * W)));
  EXPECT_EQ(engine_descriptor_text(back), engine_descriptor_text(prog[1]));
  EngineDescriptor end;
  end.kind = kEngineKindEnd;
  EXPECT_THROW(pack_engine_program({end}), std::invalid_argument);
}
