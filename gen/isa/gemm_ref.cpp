#include "isa/gemm_ref.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "isa/gather.hpp"
#include "numerics/activation.hpp"
#include "numerics/fixed.hpp"

namespace capsgen::isa {

void run_gemm_reference(const Gemm& g, const GemmShape& s, const ReadFn& read, const WriteFn& write,
                        GemmCounters* counters, AccState* state) {
  GemmCounters local;
  GemmCounters& st = counters ? *counters : local;
  const int rows = s.rows, cols = s.cols, P = s.psum_bits, A = s.act_bits;
  const int G = g.tile.diag_groups, group_rows = rows / std::max(1, G);
  std::vector<std::int64_t> tile(static_cast<std::size_t>(rows) * cols), x(static_cast<std::size_t>(rows));
  for (int b = 0; b < g.batch; ++b)
    for (int m0 = 0; m0 < g.m_total; m0 += g.m_block) {
      const int mb = std::min(g.m_block, g.m_total - m0);
      // The accumulators of this block: mb vectors x n_tiles x cols.
      std::vector<std::int64_t> acc(std::size_t(mb) * g.n_tiles * cols, 0);
      if (g.acc_continue && (!state || state->sums.size() != acc.size()))
        throw std::logic_error(g.name + ": acc_continue without accumulators of the block's size to continue from");
      for (int k = 0; k < g.k_chunks; ++k)
        for (int n = 0; n < g.n_tiles; ++n) {
          for (int r = 0; r < rows; ++r)
            for (int c = 0; c < cols; ++c) {
              std::int64_t w = 0;
              const int o = n * cols + c;
              if (G > 1) {
                if (r / group_rows == c && r % group_rows < g.r_total && c < g.n_total)
                  w = read(g.tile.base + b * g.tile.s_b + std::int64_t(r % group_rows) * g.tile.s_r);
              } else if (k * rows + r < g.r_total && o < g.n_total) {
                w = read(g.tile.base + b * g.tile.s_b + std::int64_t(k) * g.tile.s_k + std::int64_t(n) * g.tile.s_n +
                         std::int64_t(r) * g.tile.s_r + std::int64_t(c) * g.tile.s_c);
              }
              tile[std::size_t(r) * cols + c] = w;
            }
          for (int mi = 0; mi < mb; ++mi) {
            const int m = m0 + mi;
            // Which element each row receives (affine, conv, diag groups): gen/isa/gather.hpp.
            for (int r = 0; r < rows; ++r) {
              const auto a = data_element_address(g, rows, b, m, k, r);
              x[std::size_t(r)] = a ? read(*a) : 0;
            }
            ++st.vectors;
            for (int c = 0; c < cols; ++c) {
              // One column of the array: the exact sum of rows products (the adder chain).
              std::int64_t chunk = 0;
              for (int r = 0; r < rows; ++r) chunk += x[std::size_t(r)] * tile[std::size_t(r) * cols + c];
              std::int64_t& a = acc[(std::size_t(mi) * g.n_tiles + n) * cols + c];
              if (k == 0) {
                const int o = n * cols + c;
                if (g.acc_continue)
                  a = state->sums[(std::size_t(mi) * g.n_tiles + n) * cols + c];
                else if (g.init.kind == AccInit::Kind::kPerColumn && o < g.n_total)
                  a = fx::sat_s(read(g.init.base + o), P);
                else if (g.init.kind == AccInit::Kind::kPerOutput)
                  a = fx::sat_s(read(g.init.base + b * g.init.s_b + std::int64_t(m) * g.init.s_m) << g.init.shift, P);
                else
                  a = 0;
              }
              if (!fx::fits_s(a + chunk, P)) ++st.psum_saturations;
              a = fx::sat_s(a + chunk, P);
            }
          }
        }
      if (state) state->sums = acc;
      if (g.acc_hold) continue;
      // Outputs in the hardware's write order: tile, vector, column.
      for (int n = 0; n < g.n_tiles; ++n)
        for (int mi = 0; mi < mb; ++mi) {
          const int m = m0 + mi;
          for (int c = 0; c < cols; ++c) {
            const int o = n * cols + c;
            if (o >= g.n_total) break;
            if (g.out.select_mod > 0 && o != m % g.out.select_mod) continue;
            const std::int64_t sum = acc[(std::size_t(mi) * g.n_tiles + n) * cols + c];
            std::int64_t v = fx::reduce(sum, g.shift, A);
            if (g.relu) v = fx::relu(v);
            std::int64_t addr = g.out.base + b * g.out.s_b + std::int64_t(m) * g.out.s_m;
            if (g.out.select_mod == 0)
              addr += std::int64_t(o / g.out.o_div) * g.out.s_o1 + std::int64_t(o % g.out.o_div) * g.out.s_o2;
            write(addr, v);
            ++st.writes;
          }
        }
    }
}

ActTables::ActTables(const fx::ActParams& p)
    : params(p), sqrt_lut(fx::build_sqrt_lut(p)), squash_lut(fx::build_squash_lut(p)), exp_lut(fx::build_exp_lut(p)) {}

void run_activate_reference(const Activate& a, const ActTables& t, const ReadFn& read, const WriteFn& write) {
  std::vector<std::int64_t> in(static_cast<std::size_t>(a.n)), out(static_cast<std::size_t>(a.n));
  for (int v = 0; v < a.count; ++v) {
    for (int e = 0; e < a.n; ++e) in[std::size_t(e)] = read(a.in_base + std::int64_t(v) * a.in_s_v + std::int64_t(e) * a.in_s_e);
    switch (a.func) {
      case Activate::Func::kSquash:
        fx::squash(t.params, t.sqrt_lut, t.squash_lut, in.data(), a.n, out.data());
        break;
      case Activate::Func::kSoftmax:
        fx::softmax(t.params, t.exp_lut, in.data(), a.n, out.data());
        break;
      case Activate::Func::kNorm:
        write(a.out_base + std::int64_t(v) * a.out_s_v, fx::norm(t.params, t.sqrt_lut, in.data(), a.n, a.norm_shift).norm);
        continue;
    }
    for (int e = 0; e < a.n; ++e) write(a.out_base + std::int64_t(v) * a.out_s_v + std::int64_t(e) * a.out_s_e, out[std::size_t(e)]);
  }
}

void run_fill_reference(const Fill& f, const WriteFn& write) {
  for (std::int64_t e = 0; e < f.count; ++e)
    write(f.base + e * f.stride, f.period > 0 ? f.table[std::size_t(e % f.period)] : f.value);
}

}  // namespace capsgen::isa
