#include "compiler/executor.hpp"

#include <stdexcept>

#include "isa/gather.hpp"
#include "numerics/activation.hpp"
#include "numerics/fixed.hpp"

namespace capsgen {
namespace {

class Memory {
 public:
  explicit Memory(std::vector<std::int32_t>& m) : m_(m) {}
  std::int64_t read(std::int64_t a) const {
    if (a < 0 || a >= std::int64_t(m_.size())) throw std::out_of_range("executor: read outside memory at " + std::to_string(a));
    return m_[std::size_t(a)];
  }
  void write(std::int64_t a, std::int64_t v) {
    if (a < 0 || a >= std::int64_t(m_.size())) throw std::out_of_range("executor: write outside memory at " + std::to_string(a));
    m_[std::size_t(a)] = std::int32_t(v);
  }

 private:
  std::vector<std::int32_t>& m_;
};

void run_gemm(const AccelConfig& cfg, const isa::Gemm& g, Memory& mem, ExecStats& st) {
  const int rows = cfg.array.rows, cols = cfg.array.cols, P = cfg.widths.psum, A = cfg.widths.act;
  const int G = g.tile.diag_groups, group_rows = rows / G;
  std::vector<std::int64_t> tile(static_cast<std::size_t>(rows) * cols), x(static_cast<std::size_t>(rows));
  for (int b = 0; b < g.batch; ++b)
    for (int m0 = 0; m0 < g.m_total; m0 += g.m_block) {
      const int mb = std::min(g.m_block, g.m_total - m0);
      // The accumulators of this block: mb vectors x n_tiles x cols.
      std::vector<std::int64_t> acc(std::size_t(mb) * g.n_tiles * cols, 0);
      for (int k = 0; k < g.k_chunks; ++k)
        for (int n = 0; n < g.n_tiles; ++n) {
          for (int r = 0; r < rows; ++r)
            for (int c = 0; c < cols; ++c) {
              std::int64_t w = 0;
              const int o = n * cols + c;
              if (G > 1) {
                if (r / group_rows == c && r % group_rows < g.r_total && c < g.n_total)
                  w = mem.read(g.tile.base + b * g.tile.s_b + std::int64_t(r % group_rows) * g.tile.s_r);
              } else if (k * rows + r < g.r_total && o < g.n_total) {
                w = mem.read(g.tile.base + b * g.tile.s_b + std::int64_t(k) * g.tile.s_k + std::int64_t(n) * g.tile.s_n +
                             std::int64_t(r) * g.tile.s_r + std::int64_t(c) * g.tile.s_c);
              }
              tile[std::size_t(r) * cols + c] = w;
            }
          for (int mi = 0; mi < mb; ++mi) {
            const int m = m0 + mi;
            // Which element each row receives (affine, conv, diag groups): gen/isa/gather.hpp.
            for (int r = 0; r < rows; ++r) {
              const auto a = isa::data_element_address(g, rows, b, m, k, r);
              x[std::size_t(r)] = a ? mem.read(*a) : 0;
            }
            ++st.vectors;
            for (int c = 0; c < cols; ++c) {
              // One column of the array: the exact sum of rows products (the adder chain).
              std::int64_t chunk = 0;
              for (int r = 0; r < rows; ++r) chunk += x[std::size_t(r)] * tile[std::size_t(r) * cols + c];
              std::int64_t& a = acc[(std::size_t(mi) * g.n_tiles + n) * cols + c];
              if (k == 0) {
                const int o = n * cols + c;
                if (g.init.kind == isa::AccInit::Kind::kPerColumn && o < g.n_total)
                  a = fx::sat_s(mem.read(g.init.base + o), P);
                else if (g.init.kind == isa::AccInit::Kind::kPerOutput)
                  a = fx::sat_s(mem.read(g.init.base + b * g.init.s_b + std::int64_t(m) * g.init.s_m) << g.init.shift, P);
                else
                  a = 0;
              }
              if (!fx::fits_s(a + chunk, P)) ++st.psum_saturations;
              a = fx::sat_s(a + chunk, P);
            }
          }
        }
      for (int mi = 0; mi < mb; ++mi) {
        const int m = m0 + mi;
        for (int o = 0; o < g.n_total; ++o) {
          if (g.out.select_mod > 0 && o != m % g.out.select_mod) continue;
          const int n = o / cols, c = o % cols;
          std::int64_t v = fx::reduce(acc[(std::size_t(mi) * g.n_tiles + n) * cols + c], g.shift, A);
          if (g.relu) v = fx::relu(v);
          std::int64_t addr = g.out.base + b * g.out.s_b + std::int64_t(m) * g.out.s_m;
          if (g.out.select_mod == 0) addr += std::int64_t(o / g.out.o_div) * g.out.s_o1 + std::int64_t(o % g.out.o_div) * g.out.s_o2;
          mem.write(addr, v);
        }
      }
    }
}

void run_activate(const isa::Activate& a, const fx::ActParams& ap, const std::vector<std::uint32_t>& sqrt_lut,
                  const std::vector<std::uint32_t>& squash_lut, const std::vector<std::uint32_t>& exp_lut, Memory& mem) {
  std::vector<std::int64_t> in(static_cast<std::size_t>(a.n)), out(static_cast<std::size_t>(a.n));
  for (int v = 0; v < a.count; ++v) {
    for (int e = 0; e < a.n; ++e) in[std::size_t(e)] = mem.read(a.in_base + std::int64_t(v) * a.in_s_v + std::int64_t(e) * a.in_s_e);
    switch (a.func) {
      case isa::Activate::Func::kSquash:
        fx::squash(ap, sqrt_lut, squash_lut, in.data(), a.n, out.data());
        break;
      case isa::Activate::Func::kSoftmax:
        fx::softmax(ap, exp_lut, in.data(), a.n, out.data());
        break;
      case isa::Activate::Func::kNorm:
        mem.write(a.out_base + std::int64_t(v) * a.out_s_v, fx::norm(ap, sqrt_lut, in.data(), a.n, a.norm_shift).norm);
        continue;
    }
    for (int e = 0; e < a.n; ++e) mem.write(a.out_base + std::int64_t(v) * a.out_s_v + std::int64_t(e) * a.out_s_e, out[std::size_t(e)]);
  }
}

}  // namespace

ExecStats execute_program(const AccelConfig& cfg, const isa::Program& prog, std::vector<std::int32_t>& m,
                          const std::function<void(std::size_t)>& after) {
  const fx::ActParams ap = fx::ActParams::from_config(cfg);
  const auto sqrt_lut = fx::build_sqrt_lut(ap), squash_lut = fx::build_squash_lut(ap), exp_lut = fx::build_exp_lut(ap);
  Memory mem(m);
  ExecStats st;
  for (std::size_t i = 0; i < prog.instrs.size(); ++i) {
    const isa::Instr& in = prog.instrs[i];
    if (const auto* g = std::get_if<isa::Gemm>(&in)) {
      run_gemm(cfg, *g, mem, st);
    } else if (const auto* a = std::get_if<isa::Activate>(&in)) {
      run_activate(*a, ap, sqrt_lut, squash_lut, exp_lut, mem);
    } else if (const auto* f = std::get_if<isa::Fill>(&in)) {
      for (std::int64_t e = 0; e < f->count; ++e)
        mem.write(f->base + e * f->stride, f->period > 0 ? f->table[std::size_t(e % f->period)] : f->value);
    }
    if (after) after(i);
  }
  return st;
}

}  // namespace capsgen
