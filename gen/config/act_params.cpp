#include "config/act_params.hpp"

#include "numerics/pim_approx.hpp"

namespace capsgen {

fx::ActParams act_params(const AccelConfig& cfg) {
  fx::ActParams p;
  p.act_bits = cfg.widths.act;
  p.sqrt_in_bits = cfg.norm.sqrt_in_bits;
  p.sqrt_out_bits = cfg.norm.sqrt_out_bits;
  p.sq_gain = cfg.squash.kind == SquashKind::kGain;
  p.sq_elem_bits = cfg.squash.elem_bits;
  p.sq_gain_bits = cfg.squash.gain_bits;
  p.sq_norm_bits = cfg.squash.norm_bits;
  p.sq_out_bits = cfg.squash.out_bits;
  p.sq_in_frac = cfg.squash.in_frac;
  p.sq_norm_shift = cfg.squash.norm_shift;
  p.exp_in_bits = cfg.softmax.exp_in_bits;
  p.exp_out_bits = cfg.softmax.exp_out_bits;
  p.sm_in_frac = cfg.softmax.in_frac;
  p.exp_pim = cfg.softmax.exp_kind == ExpKind::kPimShift;
  p.exp_recovery_q = p.exp_pim && cfg.softmax.exp_recovery ? fx::pim::exp_recovery_q(p) : 0;
  p.divide_pim = cfg.softmax.divide_kind == DivideKind::kPimReciprocal;
  p.sqrt_pim = cfg.norm.sqrt_kind == SqrtKind::kPimRsqrt;
  return p;
}

}  // namespace capsgen
