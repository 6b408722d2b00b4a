// The bit-exact fixed-point golden model of a capsule-network inference. It computes with the
// numerics module only (gen/numerics), and records every intermediate tensor the accelerator
// produces: each layer's output, each routing iteration's c, s, v and b (docs/golden.md).
#pragma once

#include <vector>

#include "config/accel_config.hpp"
#include "golden/conv_kernel.hpp"
#include "golden/quant.hpp"
#include "golden/shared_routing.hpp"
#include "golden/stats.hpp"
#include "golden/trace.hpp"
#include "model/network.hpp"

namespace capsgen {

// The golden model of one network, its convolution weights packed once for the fast kernel
// (conv_kernel.hpp). It keeps references: cfg, net and qm must outlive it.
class GoldenModel {
 public:
  GoldenModel(const AccelConfig& cfg, const Network& net, const QuantizedModel& qm);

  // One inference; `threads` workers split each convolution's output positions.
  FixedTrace run(const IntTensor& input, GoldenStats* stats = nullptr, int threads = 1) const;

  // One inference per input, `threads` images at a time (one per worker); each result and its
  // stats are those of run() on that input alone.
  std::vector<FixedTrace> run_batch(const std::vector<IntTensor>& inputs, std::vector<GoldenStats>* stats = nullptr,
                                    int threads = 1) const;

  // The inputs as one batch with PIM-CapsNet's shared routing logits (golden/shared_routing.hpp): each
  // input's class norms and prediction; the layers before the routing run per input (`threads` at a time).
  // `routing_stats`: the shared routing's own counts (MACs, saturations of s and b).
  std::vector<SharedRoutingResult> run_shared_routing(const std::vector<IntTensor>& inputs,
                                                      GoldenStats* routing_stats = nullptr, int threads = 1) const;

 private:
  const AccelConfig& cfg_;
  const Network& net_;
  const QuantizedModel& qm_;
  std::vector<PackedConvWeights> packed_;     // per convolution layer; empty codes: scalar path
  std::vector<PackedMatvecWeights> matvec_;  // per ClassCaps layer; empty codes: scalar path
};

// One inference. `input` holds act-width codes [C,H,W] with qm.input_frac fraction bits. Packs the
// weights on every call: for many inferences, a GoldenModel packs them once.
FixedTrace run_golden(const AccelConfig& cfg, const Network& net, const QuantizedModel& qm, const IntTensor& input,
                      GoldenStats* stats = nullptr, int threads = 1);

// GoldenModel(cfg, net, qm).run_batch(inputs, stats, threads).
std::vector<FixedTrace> run_golden_batch(const AccelConfig& cfg, const Network& net, const QuantizedModel& qm,
                                         const std::vector<IntTensor>& inputs, std::vector<GoldenStats>* stats = nullptr,
                                         int threads = 1);

// Real value of a fixed trace tensor, for reports and float comparisons (fraction bits per tensor).
int trace_frac(const Network& net, const QuantizedModel& qm, const std::string& tensor_name);

}  // namespace capsgen
