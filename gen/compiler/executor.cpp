#include "compiler/executor.hpp"

#include <stdexcept>

#include "config/act_params.hpp"
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

// `acc`: the accumulators a split reduction's parts hand on (Gemm::acc_hold, acc_continue).
void run_gemm(const AccelConfig& cfg, const isa::Gemm& g, Memory& mem, ExecStats& st, isa::AccState& acc) {
  isa::GemmCounters c;
  isa::run_gemm_reference(
      g, {cfg.array.rows, cfg.array.cols, cfg.widths.psum, cfg.widths.act}, [&](std::int64_t a) { return mem.read(a); },
      [&](std::int64_t a, std::int64_t v) { mem.write(a, v); }, &c, &acc);
  st.vectors += c.vectors;
  st.psum_saturations += c.psum_saturations;
}

}  // namespace

ExecStats execute_program(const AccelConfig& cfg, const isa::Program& prog, std::vector<std::int32_t>& m,
                          const std::function<void(std::size_t)>& after) {
  const isa::ActTables tables(act_params(cfg));
  Memory mem(m);
  ExecStats st;
  isa::AccState acc;
  for (std::size_t i = 0; i < prog.instrs.size(); ++i) {
    const isa::Instr& in = prog.instrs[i];
    if (const auto* g = std::get_if<isa::Gemm>(&in)) {
      run_gemm(cfg, *g, mem, st, acc);
    } else if (const auto* a = std::get_if<isa::Activate>(&in)) {
      isa::run_activate_reference(*a, tables, [&](std::int64_t x) { return mem.read(x); },
                                  [&](std::int64_t x, std::int64_t v) { mem.write(x, v); });
    } else if (const auto* f = std::get_if<isa::Fill>(&in)) {
      isa::run_fill_reference(*f, [&](std::int64_t x, std::int64_t v) { mem.write(x, v); });
    }
    if (after) after(i);
  }
  return st;
}

}  // namespace capsgen
