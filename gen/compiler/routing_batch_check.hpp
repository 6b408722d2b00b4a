// The check of a routing batch's program (compile --routing-batch --check; the engine program that
// sim --routing-batch runs): after the functional executor ran it, every input's tensors up to its
// predictions against the golden model's run of that input alone (u_hat in its interleaved place),
// and every input's class norms against GoldenModel::run_shared_routing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "golden/shared_routing.hpp"
#include "golden/workload.hpp"
#include "isa/program.hpp"

namespace capsgen {

struct RoutingBatchCheck {
  std::vector<SharedRoutingResult> shared;  // the golden shared routing, per input
  std::size_t tensors = 0;                  // tensors compared (the class norms included)
  std::string mismatch;                     // the first difference, naming tensor, index and both values; "" if none
};

// `memory`: the executor's memory after `prog` (a program of inputs.size() > 1 inputs) ran on them.
RoutingBatchCheck check_routing_batch(const Workload& w, const isa::Program& prog, const std::vector<IntTensor>& inputs,
                                      const std::vector<std::int32_t>& memory);

}  // namespace capsgen
