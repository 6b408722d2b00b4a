// The check of a routing batch's program; see routing_batch_check.hpp.
#include "compiler/routing_batch_check.hpp"

#include <fmt/format.h>

#include <functional>
#include <stdexcept>

#include "compiler/compiler.hpp"
#include "golden/fixed_model.hpp"

namespace capsgen {

RoutingBatchCheck check_routing_batch(const Workload& w, const isa::Program& prog, const std::vector<IntTensor>& inputs,
                                      const std::vector<std::int32_t>& memory) {
  using Address = std::function<std::int64_t(const isa::Region&, std::size_t)>;
  RoutingBatchCheck out;
  // Compares `want` with region `name` read through `address`; false (and the mismatch noted) at the first difference.
  const auto compare = [&](const std::string& name, const IntTensor& want, const Address& address) {
    const isa::Region* r = prog.region(name);
    if (!r) throw std::logic_error("check_routing_batch: the program has no region " + name);
    for (std::size_t i = 0; i < want.size(); ++i) {
      const std::int32_t got = memory.at(std::size_t(address(*r, i)));
      if (got != want[i]) {
        out.mismatch =
            fmt::format("tensor {} index {}: program {}, golden {}", name, index_str(want.shape, i), got, want[i]);
        return false;
      }
    }
    ++out.tensors;
    return true;
  };
  const Address flat = [](const isa::Region& r, std::size_t i) { return r.base + r.offset_of(std::int64_t(i)); };
  const GoldenModel golden(w.cfg, w.net, w.qm);
  const std::string last = w.net.layers.back().name;
  const std::int64_t K = std::int64_t(inputs.size());
  for (std::int64_t k = 0; k < K; ++k) {
    const FixedTrace alone = golden.run(inputs[std::size_t(k)]);
    for (const auto& [name, t] : alone.tensors) {
      if (name.rfind(last + ".", 0) == 0) continue;  // the class-capsule layer's: shared by the batch
      if (!compare(routing_batch_name(name, int(k)), t, flat)) return out;
    }
    // u_hat [I][J][D][K]: input k's prediction (i, j, d) at ((i*J + j)*D + d)*K + k.
    const Address interleaved = [&](const isa::Region& r, std::size_t i) { return r.base + std::int64_t(i) * K + k; };
    if (!compare(last + ".u_hat", alone.get(last + ".u_hat"), interleaved)) return out;
  }
  out.shared = golden.run_shared_routing(inputs);
  for (std::int64_t k = 0; k < K; ++k)
    if (!compare(routing_batch_name(last + ".norm", int(k)), out.shared[std::size_t(k)].norm_codes, flat)) return out;
  return out;
}

}  // namespace capsgen
