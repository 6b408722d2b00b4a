#include "isa/gather.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace capsgen::isa {
namespace {

// Element R (reduction index) of data vector (b, m), R < r_valid; nullopt outside the reduction or
// the feature map (DataSource in program.hpp).
std::optional<std::int64_t> source_address(const DataSource& d, int r_valid, int b, int m, int k, int rows, int r) {
  const long long R = static_cast<long long>(k) * rows + r;
  if (R >= r_valid) return std::nullopt;
  if (d.kind == DataSource::Kind::kAffine)
    return d.base + b * d.s_b + std::int64_t(m) * d.s_m + std::int64_t(k) * d.s_k + std::int64_t(r) * d.s_r;
  const long long Rw = R + d.r_offset;  // index into the whole window
  const long long kx = Rw % d.kernel_w, ky = (Rw / d.kernel_w) % d.kernel_h, c = Rw / (std::int64_t(d.kernel_w) * d.kernel_h);
  const long long y = m / d.out_w, x = m % d.out_w;
  const long long iy = y * d.stride + ky - (d.band ? 0 : d.padding), ix = x * d.stride + kx - d.padding;
  if (iy < 0 || iy >= d.height || ix < 0 || ix >= d.width) return std::nullopt;
  return d.base + b * d.s_b + (std::int64_t(c) * d.height + iy) * d.width + ix;
}

void check_u16(long long v, const char* what) {
  if (v < 0 || v > 65535)
    throw std::invalid_argument(std::string("encode_gather: ") + what + " = " + std::to_string(v) + " outside [0, 65535]");
}

}  // namespace

std::optional<std::int64_t> data_element_address(const Gemm& g, int rows, int b, int m, int k, int r) {
  const int G = g.tile.diag_groups;
  if (G > 1) {
    // Row r belongs to group r / group_rows; its element r' is the (group * r_total + r')-th of the
    // packed data vector (G rows of W side by side), read as chunk 0.
    const int group_rows = rows / G, grp = r / group_rows, rp = r % group_rows;
    if (grp >= G || rp >= g.r_total) return std::nullopt;
    return source_address(g.data, G * g.r_total, b, m, 0, rows, grp * g.r_total + rp);
  }
  return source_address(g.data, g.r_total, b, m, k, rows, r);
}

std::int64_t gather_element_count(const Gemm& g, int rows) {
  if (g.batch <= 0 || g.m_total <= 0 || g.m_block <= 0 || g.k_chunks <= 0 || rows <= 0) return 0;
  return std::int64_t(g.batch) * g.m_total * g.k_chunks * rows;
}

std::vector<GatherElement> gather_sequence(const Gemm& g, int rows) {
  std::vector<GatherElement> seq;
  const std::int64_t n = gather_element_count(g, rows);
  if (n == 0) return seq;
  seq.reserve(std::size_t(n));
  for (int b = 0; b < g.batch; ++b)
    for (int m0 = 0; m0 < g.m_total; m0 += g.m_block) {
      const int mb = std::min(g.m_block, g.m_total - m0);
      for (int k = 0; k < g.k_chunks; ++k)
        for (int mi = 0; mi < mb; ++mi)
          for (int r = 0; r < rows; ++r) {
            GatherElement e;
            const auto a = data_element_address(g, rows, b, m0 + mi, k, r);
            e.zero = !a;
            e.addr = a ? *a : 0;
            e.row = r;
            e.vec = mi;
            e.chunk = k;
            e.vec_last = r == rows - 1;
            e.chunk_last = e.vec_last && mi == mb - 1;
            e.last = e.chunk_last && k == g.k_chunks - 1 && m0 + mb == g.m_total && b == g.batch - 1;
            seq.push_back(e);
          }
    }
  return seq;
}

GatherDescriptor encode_gather(const Gemm& g, int rows) {
  if (rows < 1 || rows > 65535) throw std::invalid_argument("encode_gather: rows outside [1, 65535]");
  check_u16(g.batch, "batch");
  check_u16(g.m_total, "m_total");
  check_u16(g.m_block, "m_block");
  check_u16(g.k_chunks, "k_chunks");
  check_u16(g.r_total, "r_total");
  const DataSource& d = g.data;
  GatherDescriptor e;
  auto u32 = [](std::int64_t v) { return static_cast<std::uint32_t>(static_cast<std::uint64_t>(v)); };
  e.conv = d.kind == DataSource::Kind::kConv;
  e.batch = std::uint16_t(g.batch);
  e.m_total = std::uint16_t(g.m_total);
  e.m_block = std::uint16_t(g.m_block);
  e.k_chunks = std::uint16_t(g.k_chunks);
  e.r_total = std::uint16_t(g.r_total);
  e.base = u32(d.base);
  e.s_b = u32(d.s_b);
  e.s_m = u32(d.s_m);
  e.s_k = u32(d.s_k);
  e.s_r = u32(d.s_r);
  const int G = g.tile.diag_groups;
  if (G > 1) {
    if (e.conv) throw std::invalid_argument("encode_gather: diag groups with a conv data source");
    if (G > rows) throw std::invalid_argument("encode_gather: diag_groups > rows");
    e.groups = std::uint16_t(G);
    e.group_rows = std::uint16_t(rows / G);
    e.s_g = u32(std::int64_t(g.r_total) * d.s_r);
  } else {
    e.groups = 1;
    e.group_rows = std::uint16_t(rows);
  }
  if (e.conv) {
    check_u16(d.height, "height");
    check_u16(d.width, "width");
    check_u16(d.kernel_h, "kernel_h");
    check_u16(d.kernel_w, "kernel_w");
    check_u16(d.stride, "stride");
    check_u16(d.padding, "padding");
    check_u16(d.out_w, "out_w");
    if (d.height < 1 || d.width < 1 || d.kernel_h < 1 || d.kernel_w < 1 || d.stride < 1 || d.out_w < 1)
      throw std::invalid_argument("encode_gather: conv source with a zero height, width, kernel, stride or out_w");
    // Input coordinates iy = y*stride - padding + ky, ix = x*stride - padding + kx over the vectors
    // the descriptor visits must fit kGatherCoordBits signed bits.
    const long long lim = 1LL << (kGatherCoordBits - 1);
    const long long y_max = g.m_total > 0 ? (g.m_total - 1) / d.out_w : 0;
    const long long x_max = std::min<long long>(d.out_w, std::max(1, g.m_total)) - 1;
    const long long pad_top = d.band ? 0 : d.padding;
    const long long hi = std::max(y_max * d.stride + d.kernel_h - pad_top, x_max * d.stride + d.kernel_w - d.padding) - 1;
    if (d.padding > lim || hi >= lim)
      throw std::invalid_argument("encode_gather: conv input coordinates exceed the unit's signed " +
                                  std::to_string(kGatherCoordBits) + "-bit range");
    e.height = std::uint16_t(d.height);
    e.width = std::uint16_t(d.width);
    e.kernel_h = std::uint16_t(d.kernel_h);
    e.kernel_w = std::uint16_t(d.kernel_w);
    e.stride = std::uint16_t(d.stride);
    e.padding = std::uint16_t(d.padding);
    e.out_w = std::uint16_t(d.out_w);
    const std::int64_t H = d.height, W = d.width, KH = d.kernel_h, KW = d.kernel_w, S = d.stride, P = d.padding;
    e.band = d.band;
    e.pad_off = u32(-((d.band ? 0 : P) * W + P));
    // A part starting inside the window: the mixed-radix counter starts at (kx0, ky0) of channel 0 and
    // the base moves to that element's offset in the window.
    if (d.r_offset < 0 || d.r_offset >= KH * KW)
      throw std::invalid_argument("encode_gather: r_offset " + std::to_string(d.r_offset) + " outside the first window [0, " +
                                  std::to_string(KH * KW) + ")");
    const long long ky0 = d.r_offset / KW, kx0 = d.r_offset % KW;
    if (ky0 >= (1 << kGatherStartBits) || kx0 >= (1 << kGatherStartBits))
      throw std::invalid_argument("encode_gather: the reduction offset's window position (" + std::to_string(ky0) + ", " +
                                  std::to_string(kx0) + ") exceeds " + std::to_string(kGatherStartBits) + " bits");
    e.ky0 = std::uint8_t(ky0);
    e.kx0 = std::uint8_t(kx0);
    e.base = u32(d.base + ky0 * W + kx0);
    e.ky_step = u32(W - (KW - 1));
    e.c_step = u32(H * W - (KH - 1) * W - (KW - 1));
    e.y_step = u32(S * W - (std::int64_t(d.out_w) - 1) * S);
  }
  return e;
}

}  // namespace capsgen::isa
