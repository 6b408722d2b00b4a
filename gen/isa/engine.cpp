#include "isa/engine.hpp"

#include <algorithm>
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

EngineDescriptor encode_engine(const Gemm& g, int rows, int cols, int acc_depth) {
  for (const auto& [v, f] : {std::pair{g.batch, "batch"}, std::pair{g.m_total, "m_total"}, std::pair{g.m_block, "m_block"},
                             std::pair{g.k_chunks, "k_chunks"}, std::pair{g.n_tiles, "n_tiles"}, std::pair{g.n_total, "n_total"}})
    need(v >= 1 && v <= 65535, f, "must be in [1, 65535] (got " + std::to_string(v) + ")");
  need((long long)g.m_block * g.n_tiles <= acc_depth, "m_block",
       "m_block x n_tiles = " + std::to_string((long long)g.m_block * g.n_tiles) + " exceeds the accumulator depth " +
           std::to_string(acc_depth));
  need(g.m_block <= acc_depth, "m_block", "exceeds the staging buffer (accumulator depth)");
  const bool diag = g.tile.diag_groups > 1;
  need(diag || g.tile.s_c == 1, "tile.s_c", "tile rows must be contiguous (s_c = 1) for the row-wide weight read");
  need(g.init.kind != AccInit::Kind::kPerOutput, "init", "per-output accumulator init is not supported by the engine yet");
  need(g.out.select_mod == 0, "out.select_mod", "column-select outputs are not supported by the engine yet");
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
  d.t_diag = diag;
  if (diag) {
    const int gr = rows / g.tile.diag_groups;
    need(gr >= 1, "tile.diag_groups", "more groups than rows");
    d.t_gtop = std::uint16_t((rows - 1) / gr);
    d.t_etop = std::uint16_t((rows - 1) % gr);
    d.t_dtop = u32(std::int64_t(d.t_etop) * g.tile.s_r);
    d.t_dwrap = u32(std::int64_t(gr - 1) * g.tile.s_r);
  }
  d.init_bias = g.init.kind == AccInit::Kind::kPerColumn;
  d.init_base = d.init_bias ? u32(g.init.base) : 0;
  d.o_base = u32(g.out.base);
  d.o_s_b = u32(g.out.s_b);
  d.o_s_m = u32(g.out.s_m);
  d.o_s_o2 = u32(g.out.s_o2);
  d.o_div = std::uint16_t(g.out.o_div);
  d.o_wrap = u32(g.out.s_o1 - std::int64_t(g.out.o_div - 1) * g.out.s_o2);
  d.shift = std::uint8_t(g.shift);
  d.relu = g.relu;
  return d;
}

}  // namespace capsgen::isa
