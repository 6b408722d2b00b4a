// The activation unit's formats and PIM-CapsNet options from activation.json
// (schemas/activation.schema.json), as gen/numerics takes them: what the activation and engine
// testbenches compute their references with.
#pragma once

#include "common/summary.hpp"
#include "numerics/activation.hpp"
#include "numerics/pim_approx.hpp"

namespace tb {

inline capsgen::fx::ActParams act_params_from_summary(const Summary& kv) {
  capsgen::fx::ActParams p;
  p.act_bits = kv.num("act_bits");
  p.sqrt_in_bits = kv.num("sqrt_in_bits");
  p.sqrt_out_bits = kv.num("sqrt_out_bits");
  p.sq_gain = kv.flag("squash_gain");
  p.sq_elem_bits = kv.num("squash_elem_bits");
  p.sq_gain_bits = kv.num("squash_gain_bits");
  p.sq_norm_bits = kv.num("squash_norm_bits");
  p.sq_out_bits = kv.num("squash_out_bits");
  p.sq_in_frac = kv.num("squash_in_frac");
  p.sq_norm_shift = kv.num("squash_norm_shift");
  p.exp_in_bits = kv.num("exp_in_bits");
  p.exp_out_bits = kv.num("exp_out_bits");
  p.sm_in_frac = kv.num("softmax_in_frac");
  // The PIM-CapsNet units in place of the exp ROM, the sqrt ROM and the divider; the recovery
  // constant is a preset constant computed from the formats (fx::pim::exp_recovery_q).
  p.exp_pim = kv.flag("exp_pim");
  p.exp_recovery_q = p.exp_pim && kv.flag("exp_recovery") ? capsgen::fx::pim::exp_recovery_q(p) : 0;
  p.sqrt_pim = kv.flag("sqrt_pim");
  p.divide_pim = kv.flag("divide_pim");
  return p;
}

}  // namespace tb
