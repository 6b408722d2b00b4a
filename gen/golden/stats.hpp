// Work and saturation counts of a golden-model run. Every field is a sum over outputs, so counts of
// disjoint parts of a run (threads, layers) add up to the count of the whole run.
#pragma once

namespace capsgen {

struct GoldenStats {
  long long macs = 0;                // multiply-accumulates executed (array work)
  long long psum_saturations = 0;    // accumulator saturation events
  long long output_saturations = 0;  // 25->8 reductions that clipped

  GoldenStats& operator+=(const GoldenStats& o) {
    macs += o.macs;
    psum_saturations += o.psum_saturations;
    output_saturations += o.output_saturations;
    return *this;
  }
};

}  // namespace capsgen
