#include "compiler/executor.hpp"

#include <stdexcept>

#include "isa/gemm_ref.hpp"
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
  isa::GemmCounters c;
  isa::run_gemm_reference(
      g, {cfg.array.rows, cfg.array.cols, cfg.widths.psum, cfg.widths.act}, [&](std::int64_t a) { return mem.read(a); },
      [&](std::int64_t a, std::int64_t v) { mem.write(a, v); }, &c);
  st.vectors += c.vectors;
  st.psum_saturations += c.psum_saturations;
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
