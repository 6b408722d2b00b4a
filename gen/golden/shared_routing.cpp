#include "golden/shared_routing.hpp"

#include <fmt/format.h>

#include "core/input_error.hpp"

namespace capsgen {

const Layer& shared_routing_layer(const Network& net) {
  if (net.layers.empty() || net.layers.back().kind != LayerKind::ClassCaps)
    throw InputError(net.source_path.empty() ? net.name : net.source_path, 0, 0, "layers",
                     fmt::format("batch-shared routing needs a class-capsule layer last; network '{}' ends with '{}'",
                                 net.name, net.layers.empty() ? std::string("nothing") : net.layers.back().name));
  return net.layers.back();
}

}  // namespace capsgen
