#include "isa/engine_descriptor.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <sstream>
#include <vector>
#include <stdexcept>
#include <string>

namespace capsgen::isa {
namespace {

int ceil_div(long long a, long long b) { return int((a + b - 1) / b); }

void need(bool ok, const std::string& field, const std::string& what) {
  if (!ok) throw std::invalid_argument("engine descriptor: " + field + ": " + what);
}

std::uint32_t u32(std::int64_t v) { return static_cast<std::uint32_t>(v); }

}  // namespace

int block_size(int acc_depth, int m_total, int n_tiles) {
  return std::max(1, std::min(m_total, acc_depth / std::max(1, n_tiles)));
}

Gemm conv_gemm(const ConvShape& s, int rows, int cols, int acc_depth, std::int64_t in_base, std::int64_t w_base,
               std::int64_t bias_base) {
  const int R = s.channels * s.kernel_h * s.kernel_w;
  Gemm g;
  g.m_total = s.out_h() * s.out_w();
  g.k_chunks = ceil_div(R, rows);
  g.n_tiles = ceil_div(s.out_channels, cols);
  g.m_block = block_size(acc_depth, g.m_total, g.n_tiles);
  g.r_total = R;
  g.n_total = s.out_channels;
  // Filters stored tile-major: a tile row is `cols` consecutive elements.
  g.tile = {w_base, 0, std::int64_t(g.n_tiles) * rows * cols, std::int64_t(rows) * cols, cols, 1, 1};
  g.data.kind = DataSource::Kind::kConv;
  g.data.base = in_base;
  g.data.channels = s.channels;
  g.data.height = s.height;
  g.data.width = s.width;
  g.data.kernel_h = s.kernel_h;
  g.data.kernel_w = s.kernel_w;
  g.data.stride = s.stride;
  g.data.padding = s.padding;
  g.data.out_w = s.out_w();
  if (bias_base >= 0) g.init = {AccInit::Kind::kPerColumn, bias_base, 0, 0, 0};
  return g;
}

OutTarget map_output(std::int64_t base, std::int64_t positions) { return {base, 0, 1, positions, 0, 1, 0}; }

OutTarget capsule_output(std::int64_t base, std::int64_t positions, int dim) {
  return {base, 0, dim, positions * dim, 1, dim, 0};
}

EngineDescriptor encode_engine(const Gemm& g, int rows, int cols, int acc_depth, bool vector_gather) {
  for (const auto& [v, f] : {std::pair{g.batch, "batch"}, std::pair{g.m_total, "m_total"}, std::pair{g.m_block, "m_block"},
                             std::pair{g.k_chunks, "k_chunks"}, std::pair{g.n_tiles, "n_tiles"}, std::pair{g.n_total, "n_total"}})
    need(v >= 1 && v <= 65535, f, "must be in [1, 65535] (got " + std::to_string(v) + ")");
  need((long long)g.m_block * g.n_tiles <= acc_depth, "m_block",
       "m_block x n_tiles = " + std::to_string((long long)g.m_block * g.n_tiles) + " exceeds the accumulator depth " +
           std::to_string(acc_depth));
  need(g.m_block <= acc_depth, "m_block", "exceeds the staging buffer (accumulator depth)");
  const bool diag = g.tile.diag_groups > 1;
  need(g.out.select_mod >= 0 && g.out.select_mod <= 65535, "out.select_mod", "must be in [0, 65535]");
  need(!(g.acc_continue || g.acc_hold) || (g.batch == 1 && g.m_total <= g.m_block), "acc_continue",
       "a Gemm that continues or holds the accumulators must be one block (batch 1, m_total <= m_block)");
  need(!g.acc_continue || g.init.kind == AccInit::Kind::kZero, "init.kind",
       "a Gemm that continues the accumulators reads no init");
  need(g.init.kind != AccInit::Kind::kPerOutput || (g.init.shift >= 0 && g.init.shift <= 31), "init.shift",
       "must be in [0, 31]");
  need(g.out.o_div >= 1 && g.out.o_div <= 65535, "out.o_div", "must be in [1, 65535]");
  need(g.shift >= 0 && g.shift <= 31, "shift", "must be in [0, 31]");
  (void)cols;

  EngineDescriptor d;
  d.gather = encode_gather(g, rows);
  d.n_tiles = std::uint16_t(g.n_tiles);
  d.n_total = std::uint16_t(g.n_total);
  d.t_base = u32(g.tile.base);
  d.t_s_b = u32(g.tile.s_b);
  d.t_s_k = u32(g.tile.s_k);
  d.t_s_n = u32(g.tile.s_n);
  d.t_s_r = u32(g.tile.s_r);
  d.t_top = u32(std::int64_t(rows - 1) * g.tile.s_r);
  d.t_strided = !diag && g.tile.s_c != 1 && g.n_total > 1;
  d.t_s_c = d.t_strided ? u32(g.tile.s_c) : 0;
  d.t_diag = diag;
  if (diag) {
    const int gr = rows / g.tile.diag_groups;
    need(gr >= 1, "tile.diag_groups", "more groups than rows");
    d.t_gtop = std::uint16_t((rows - 1) / gr);
    d.t_etop = std::uint16_t((rows - 1) % gr);
    d.t_dtop = u32(std::int64_t(d.t_etop) * g.tile.s_r);
    d.t_dwrap = u32(std::int64_t(gr - 1) * g.tile.s_r);
  }
  // Vector-wide gather: consecutive elements (diag: the groups packed without gaps).
  const int G = std::max(1, g.tile.diag_groups);
  const long long v_len = (long long)G * g.r_total;
  d.v_mode = vector_gather && g.data.kind == DataSource::Kind::kAffine && g.data.s_r == 1 &&
             (G == 1 || rows / G == g.r_total) && v_len <= 65535;
  d.v_len = d.v_mode ? std::uint16_t(v_len) : 0;
  d.init_bias = g.init.kind == AccInit::Kind::kPerColumn;
  d.init_out = g.init.kind == AccInit::Kind::kPerOutput;
  d.init_base = d.init_bias || d.init_out ? u32(g.init.base) : 0;
  if (d.init_out) {
    d.init_s_b = u32(g.init.s_b);
    d.init_s_m = u32(g.init.s_m);
    d.init_shift = std::uint8_t(g.init.shift);
  }
  d.o_sel = std::uint16_t(g.out.select_mod);
  d.o_base = u32(g.out.base);
  d.o_s_b = u32(g.out.s_b);
  d.o_s_m = u32(g.out.s_m);
  d.o_s_o2 = u32(g.out.s_o2);
  d.o_div = std::uint16_t(g.out.o_div);
  d.o_wrap = u32(g.out.s_o1 - std::int64_t(g.out.o_div - 1) * g.out.s_o2);
  d.o_vec = vector_gather && d.o_sel == 0 && d.o_wrap == 1 && (d.o_s_o2 == 1 || d.o_div == 1);
  d.shift = std::uint8_t(g.shift);
  d.relu = g.relu;
  d.acc_continue = g.acc_continue;
  d.acc_hold = g.acc_hold;
  return d;
}

EngineDescriptor encode_activate(const Activate& a, int squash_norm_shift, int max_len) {
  need(a.count >= 1, "count", "must be >= 1");
  need(a.n >= 1 && a.n <= max_len, "n", "vector length must be in [1, " + std::to_string(max_len) + "]");
  EngineDescriptor d;
  d.kind = 1;
  switch (a.func) {
    case Activate::Func::kNorm: d.a_func = 2; d.a_norm_shift = std::uint8_t(a.norm_shift); break;
    case Activate::Func::kSquash: d.a_func = 3; d.a_norm_shift = std::uint8_t(squash_norm_shift); break;
    case Activate::Func::kSoftmax: d.a_func = 4; break;
  }
  need(d.a_norm_shift <= 31, "norm_shift", "must be in [0, 31]");
  d.a_count = u32(a.count);
  d.a_n = std::uint16_t(a.n);
  d.a_in_base = u32(a.in_base);
  d.a_in_s_v = u32(a.in_s_v);
  d.a_in_s_e = u32(a.in_s_e);
  d.a_out_base = u32(a.out_base);
  d.a_out_s_v = u32(a.out_s_v);
  d.a_out_s_e = u32(a.out_s_e);
  return d;
}

EngineDescriptor encode_fill(const Fill& f, int act_bits) {
  need(f.count >= 1 && f.count <= 0xFFFFFFFFLL, "count", "must be in [1, 2^32)");
  std::int64_t v = f.value;
  if (f.period > 0) {
    need(!f.table.empty(), "table", "period without a table");
    v = f.table[0];
    for (std::int64_t t : f.table) need(t == v, "table", "entries differ: the engine fills one value");
  }
  EngineDescriptor d;
  d.kind = 2;
  d.a_count = u32(f.count);
  d.a_out_base = u32(f.base);
  d.a_out_s_e = u32(f.stride);
  d.f_value = std::uint16_t(static_cast<std::uint64_t>(v) & ((1u << act_bits) - 1));
  return d;
}

namespace {

// Every field of the text format, with a getter and a setter (one table for both directions).
struct Field {
  const char* name;
  std::function<std::uint64_t(const EngineDescriptor&)> get;
  std::function<void(EngineDescriptor&, std::uint64_t)> set;
  int bits;
};

#define CAPSGEN_FIELD(name, expr, bits) \
  Field { name, [](const EngineDescriptor& d) { return std::uint64_t(d.expr); }, \
          [](EngineDescriptor& d, std::uint64_t v) { d.expr = static_cast<decltype(d.expr)>(v); }, bits }

const std::vector<Field>& fields() {
  static const std::vector<Field> f = {
      CAPSGEN_FIELD("kind", kind, 2),
      CAPSGEN_FIELD("g_conv", gather.conv, 1),         CAPSGEN_FIELD("g_batch", gather.batch, 16),
      CAPSGEN_FIELD("g_m_total", gather.m_total, 16),  CAPSGEN_FIELD("g_m_block", gather.m_block, 16),
      CAPSGEN_FIELD("g_k_chunks", gather.k_chunks, 16), CAPSGEN_FIELD("g_r_total", gather.r_total, 16),
      CAPSGEN_FIELD("g_base", gather.base, 32),        CAPSGEN_FIELD("g_s_b", gather.s_b, 32),
      CAPSGEN_FIELD("g_s_m", gather.s_m, 32),          CAPSGEN_FIELD("g_s_k", gather.s_k, 32),
      CAPSGEN_FIELD("g_s_r", gather.s_r, 32),          CAPSGEN_FIELD("g_groups", gather.groups, 16),
      CAPSGEN_FIELD("g_group_rows", gather.group_rows, 16), CAPSGEN_FIELD("g_s_g", gather.s_g, 32),
      CAPSGEN_FIELD("g_height", gather.height, 16),    CAPSGEN_FIELD("g_width", gather.width, 16),
      CAPSGEN_FIELD("g_kernel_h", gather.kernel_h, 16), CAPSGEN_FIELD("g_kernel_w", gather.kernel_w, 16),
      CAPSGEN_FIELD("g_stride", gather.stride, 16),    CAPSGEN_FIELD("g_padding", gather.padding, 16),
      CAPSGEN_FIELD("g_out_w", gather.out_w, 16),      CAPSGEN_FIELD("g_pad_off", gather.pad_off, 32),
      CAPSGEN_FIELD("g_ky_step", gather.ky_step, 32),  CAPSGEN_FIELD("g_c_step", gather.c_step, 32),
      CAPSGEN_FIELD("g_y_step", gather.y_step, 32),    CAPSGEN_FIELD("n_tiles", n_tiles, 16),
      CAPSGEN_FIELD("n_total", n_total, 16),           CAPSGEN_FIELD("t_base", t_base, 32),
      CAPSGEN_FIELD("t_s_b", t_s_b, 32),               CAPSGEN_FIELD("t_s_k", t_s_k, 32),
      CAPSGEN_FIELD("t_s_n", t_s_n, 32),               CAPSGEN_FIELD("t_s_r", t_s_r, 32),
      CAPSGEN_FIELD("t_top", t_top, 32),               CAPSGEN_FIELD("t_strided", t_strided, 1),
      CAPSGEN_FIELD("t_s_c", t_s_c, 32),               CAPSGEN_FIELD("t_diag", t_diag, 1),
      CAPSGEN_FIELD("t_gtop", t_gtop, 16),             CAPSGEN_FIELD("t_etop", t_etop, 16),
      CAPSGEN_FIELD("t_dtop", t_dtop, 32),             CAPSGEN_FIELD("t_dwrap", t_dwrap, 32),
      CAPSGEN_FIELD("v_mode", v_mode, 1),              CAPSGEN_FIELD("v_len", v_len, 16),
      CAPSGEN_FIELD("init_bias", init_bias, 1),        CAPSGEN_FIELD("init_base", init_base, 32),
      CAPSGEN_FIELD("init_out", init_out, 1),          CAPSGEN_FIELD("init_s_b", init_s_b, 32),
      CAPSGEN_FIELD("init_s_m", init_s_m, 32),         CAPSGEN_FIELD("init_shift", init_shift, 5),
      CAPSGEN_FIELD("o_sel", o_sel, 16),               CAPSGEN_FIELD("o_vec", o_vec, 1),
      CAPSGEN_FIELD("o_base", o_base, 32),             CAPSGEN_FIELD("o_s_b", o_s_b, 32),
      CAPSGEN_FIELD("o_s_m", o_s_m, 32),               CAPSGEN_FIELD("o_s_o2", o_s_o2, 32),
      CAPSGEN_FIELD("o_wrap", o_wrap, 32),             CAPSGEN_FIELD("o_div", o_div, 16),
      CAPSGEN_FIELD("shift", shift, 8),                CAPSGEN_FIELD("relu", relu, 1),
      CAPSGEN_FIELD("a_func", a_func, 3),              CAPSGEN_FIELD("a_norm_shift", a_norm_shift, 5),
      CAPSGEN_FIELD("a_count", a_count, 32),           CAPSGEN_FIELD("a_n", a_n, 16),
      CAPSGEN_FIELD("a_in_base", a_in_base, 32),       CAPSGEN_FIELD("a_in_s_v", a_in_s_v, 32),
      CAPSGEN_FIELD("a_in_s_e", a_in_s_e, 32),         CAPSGEN_FIELD("a_out_base", a_out_base, 32),
      CAPSGEN_FIELD("a_out_s_v", a_out_s_v, 32),       CAPSGEN_FIELD("a_out_s_e", a_out_s_e, 32),
      CAPSGEN_FIELD("f_value", f_value, 16),           CAPSGEN_FIELD("acc_continue", acc_continue, 1),
      CAPSGEN_FIELD("acc_hold", acc_hold, 1),           CAPSGEN_FIELD("g_kx0", gather.kx0, 7),
      CAPSGEN_FIELD("g_ky0", gather.ky0, 7),          CAPSGEN_FIELD("g_band", gather.band, 1)};
  return f;
}
#undef CAPSGEN_FIELD

}  // namespace

std::string engine_descriptor_text(const EngineDescriptor& d) {
  std::string s;
  for (const Field& f : fields()) s += std::string(f.name) + " " + std::to_string(f.get(d)) + "\n";
  return s;
}

EngineDescriptor parse_engine_descriptor(const std::string& text) {
  EngineDescriptor d;
  std::map<std::string, int> seen;
  std::istringstream in(text);
  std::string line;
  int no = 0;
  while (std::getline(in, line)) {
    ++no;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    std::string key, value, extra;
    ls >> key >> value >> extra;
    const std::string where = "line " + std::to_string(no) + ": " + key;
    const auto it = std::find_if(fields().begin(), fields().end(), [&](const Field& f) { return key == f.name; });
    need(it != fields().end(), where, "unknown field");
    need(!value.empty() && value.size() <= 19 && extra.empty() && value.find_first_not_of("0123456789") == std::string::npos, where,
         "expected one unsigned number");
    need(seen.emplace(key, no).second, where, "given twice");
    const std::uint64_t v = std::stoull(value);
    need(it->bits >= 64 || v < (std::uint64_t{1} << it->bits), where, "does not fit " + std::to_string(it->bits) + " bits");
    it->set(d, v);
  }
  for (const Field& f : fields()) need(seen.count(f.name) > 0, f.name, "missing");
  return d;
}

const std::vector<PackedField>& engine_descriptor_layout() {
  static const std::vector<PackedField> layout = [] {
    std::vector<PackedField> out;
    std::vector<int> used;  // bits used per word
    for (const Field& f : fields()) {
      std::size_t w = 0;
      while (w < used.size() && used[w] + f.bits > 32) ++w;
      if (w == used.size()) used.push_back(0);
      out.push_back({f.name, f.bits, int(w), used[w]});
      used[w] += f.bits;
    }
    return out;
  }();
  return layout;
}

int engine_descriptor_words() {
  int n = 0;
  for (const PackedField& f : engine_descriptor_layout()) n = std::max(n, f.word + 1);
  return n;
}

std::string engine_descriptor_signal(const PackedField& f) {
  const std::string n = f.name.rfind("g_", 0) == 0 ? f.name.substr(2) : f.name;
  return "desc_" + n;
}

std::vector<std::uint32_t> pack_engine_descriptor(const EngineDescriptor& d) {
  std::vector<std::uint32_t> words(std::size_t(engine_descriptor_words()), 0);
  const auto& layout = engine_descriptor_layout();
  for (std::size_t i = 0; i < layout.size(); ++i) {
    const PackedField& p = layout[i];
    const std::uint64_t mask = p.bits >= 32 ? 0xFFFFFFFFull : (std::uint64_t{1} << p.bits) - 1;
    const std::uint64_t v = fields()[i].get(d);
    need((v & ~mask) == 0, p.name, "value " + std::to_string(v) + " does not fit " + std::to_string(p.bits) + " bits");
    words[std::size_t(p.word)] |= static_cast<std::uint32_t>(v << p.lsb);
  }
  return words;
}

EngineDescriptor unpack_engine_descriptor(const std::vector<std::uint32_t>& words) {
  need(words.size() >= std::size_t(engine_descriptor_words()), "words",
       "a packed descriptor has " + std::to_string(engine_descriptor_words()) + " words, got " + std::to_string(words.size()));
  EngineDescriptor d;
  const auto& layout = engine_descriptor_layout();
  for (std::size_t i = 0; i < layout.size(); ++i) {
    const PackedField& p = layout[i];
    const std::uint64_t mask = p.bits >= 32 ? 0xFFFFFFFFull : (std::uint64_t{1} << p.bits) - 1;
    fields()[i].set(d, (std::uint64_t{words[std::size_t(p.word)]} >> p.lsb) & mask);
  }
  return d;
}

std::vector<std::uint32_t> pack_engine_program(const std::vector<EngineDescriptor>& program) {
  std::vector<std::uint32_t> image;
  for (const EngineDescriptor& d : program) {
    need(d.kind != kEngineKindEnd, "kind", "a program descriptor cannot be the end marker");
    const auto w = pack_engine_descriptor(d);
    image.insert(image.end(), w.begin(), w.end());
  }
  EngineDescriptor end;
  end.kind = kEngineKindEnd;
  const auto w = pack_engine_descriptor(end);
  image.insert(image.end(), w.begin(), w.end());
  return image;
}

}  // namespace capsgen::isa
