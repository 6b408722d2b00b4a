// The bit-exact fixed-point golden model of a capsule-network inference. It computes with the
// numerics module only (gen/numerics), and records every intermediate tensor the accelerator
// produces: each layer's output, each routing iteration's c, s, v and b (docs/golden.md).
#pragma once

#include "config/accel_config.hpp"
#include "golden/quant.hpp"
#include "golden/trace.hpp"
#include "model/network.hpp"

namespace capsgen {

struct GoldenStats {
  long long macs = 0;                // multiply-accumulates executed (array work)
  long long psum_saturations = 0;    // accumulator saturation events
  long long output_saturations = 0;  // 25->8 reductions that clipped
};

// One inference. `input` holds act-width codes [C,H,W] with qm.input_frac fraction bits.
FixedTrace run_golden(const AccelConfig& cfg, const Network& net, const QuantizedModel& qm, const IntTensor& input,
                      GoldenStats* stats = nullptr);

// Real value of a fixed trace tensor, for reports and float comparisons (fraction bits per tensor).
int trace_frac(const Network& net, const QuantizedModel& qm, const std::string& tensor_name);

}  // namespace capsgen
