#include "romanet/layer_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "core/input_error.hpp"

namespace capsgen::romanet {

const char* dim_name(int d) {
  static const char* names[] = {"h", "w", "i", "j"};
  return d >= 0 && d < 4 ? names[d] : "?";
}

const char* data_type_name(int t) {
  static const char* names[] = {"ifmaps", "weights", "ofmaps"};
  return t >= 0 && t < 3 ? names[t] : "?";
}

const char* to_string(OpKind k) {
  switch (k) {
    case OpKind::Conv:
      return "conv";
    case OpKind::Depthwise:
      return "depthwise";
    case OpKind::FullyConnected:
      return "fc";
    case OpKind::CapsPredict:
      return "caps-predict";
  }
  return "?";
}

bool LayerGeometry::depends(int type, int dim) const {
  switch (type) {
    case kIfmap:
      return dim == kDimH || dim == kDimW || dim == (depthwise() ? kDimJ : kDimI);
    case kWeight:
      if (op == OpKind::CapsPredict) return true;
      if (depthwise()) return dim == kDimJ;
      return dim == kDimI || dim == kDimJ;
    case kOfmap:
      return dim == kDimH || dim == kDimW || dim == kDimJ;
  }
  return false;
}

long long LayerGeometry::weight_elements() const {
  switch (op) {
    case OpKind::Depthwise:
      return static_cast<long long>(P) * Q * J;
    case OpKind::CapsPredict:
      return static_cast<long long>(M) * N * I * J;
    case OpKind::Conv:
    case OpKind::FullyConnected:
      break;
  }
  return static_cast<long long>(P) * Q * I * J;
}

long long LayerGeometry::macs() const {
  const long long per_out = depthwise() ? static_cast<long long>(P) * Q : static_cast<long long>(P) * Q * I;
  return ofmap_elements() * per_out;
}

std::string LayerGeometry::shape_str() const {
  switch (op) {
    case OpKind::FullyConnected:
      return fmt::format("{} -> {}", I, J);
    case OpKind::CapsPredict:
      return fmt::format("{} caps x {}-D -> {} x {}", M * N, I, M * N, J);
    case OpKind::Conv:
    case OpKind::Depthwise:
      break;
  }
  return fmt::format("{}x{}x{} -> {}x{}x{}, {}x{}/{}{}{}", I, H, W, J, M, N, P, Q, stride,
                     pad ? fmt::format(" pad {}", pad) : "", depthwise() ? " dw" : "");
}

std::vector<LayerGeometry> dram_layers(const Network& net, std::vector<std::string>* notes) {
  std::vector<LayerGeometry> out;
  for (std::size_t li = 0; li < net.layers.size(); ++li) {
    const Layer& L = net.layers[li];
    LayerGeometry g;
    g.name = L.name;
    g.layer_kind = to_string(L.kind);
    switch (L.kind) {
      case LayerKind::MaxPool:
      case LayerKind::AvgPool:
        if (notes)
          notes->push_back(fmt::format("{} ({} {}x{}/{}): skipped, no weights; its DRAM traffic is not modelled",
                                       L.name, to_string(L.kind), L.kernel_h, L.kernel_w, L.stride));
        continue;
      case LayerKind::Conv2d:
      case LayerKind::PrimaryCaps: {
        g.H = L.in.height;
        g.W = L.in.width;
        g.I = L.in.channels;
        g.J = L.out_channels;
        g.M = L.out.height;
        g.N = L.out.width;
        g.P = L.kernel_h;
        g.Q = L.kernel_w;
        g.stride = L.stride;
        g.pad = L.padding;
        g.op = OpKind::Conv;
        if (L.kind == LayerKind::Conv2d && L.groups != 1) {
          if (L.groups != g.I || g.J != g.I)
            throw InputError(net.source_path, L.line, 0, fmt::format("layers[{}].groups", li),
                             fmt::format("layer '{}': the DRAM model handles groups = 1 and depthwise convolutions "
                                         "(groups = in = out channels), not groups {} with {} -> {} channels",
                                         L.name, L.groups, g.I, g.J));
          g.op = OpKind::Depthwise;
        }
        break;
      }
      case LayerKind::FullyConnected:
        g.op = OpKind::FullyConnected;
        g.I = static_cast<int>(L.in.elements());
        g.J = L.out_channels;
        break;
      case LayerKind::ConvCaps2d:
      case LayerKind::ConvCaps3d:
      case LayerKind::CapsAdd:
      case LayerKind::FlattenCaps:
        throw InputError(net.source_path, L.line, 0, fmt::format("layers[{}].type", li),
                         fmt::format("layer '{}': the DRAM model has no geometry for '{}' layers yet", L.name,
                                     to_string(L.kind)));
      case LayerKind::ClassCaps:
        g.op = OpKind::CapsPredict;
        g.M = g.H = L.in.count;  // input capsules as positions (one column)
        g.N = g.W = 1;
        g.I = L.in.dim;
        g.J = L.num_capsules * L.capsule_dim;
        g.routing_iterations = L.routing_iterations;
        g.routing_out = L.num_capsules * L.capsule_dim;
        break;
    }
    out.push_back(std::move(g));
  }
  return out;
}

namespace {
long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }
}  // namespace

ReuseFactors reuse_factors(const LayerGeometry& g) {
  ReuseFactors rf;
  const long long jp = g.depthwise() ? 1 : g.J;
  const long long ip = g.depthwise() ? 1 : g.I;
  rf.ifmaps = double(ceil_div(g.P, g.stride) * ceil_div(g.Q, g.stride) * jp);
  if (g.op == OpKind::CapsPredict) {
    rf.weights = 1;
  } else {
    rf.weights = double(ceil_div(g.H + 2LL * g.pad - g.P + 1, g.stride) * ceil_div(g.W + 2LL * g.pad - g.Q + 1, g.stride));
  }
  rf.ofmaps = double(static_cast<long long>(g.P) * g.Q * ip);
  return rf;
}

std::array<int, 3> reuse_priority(int order) {
  static const std::array<std::array<int, 3>, 6> table{{{kIfmap, kWeight, kOfmap},
                                                        {kIfmap, kOfmap, kWeight},
                                                        {kWeight, kIfmap, kOfmap},
                                                        {kWeight, kOfmap, kIfmap},
                                                        {kOfmap, kIfmap, kWeight},
                                                        {kOfmap, kWeight, kIfmap}}};
  if (order < 1 || order > 6) throw std::out_of_range("reuse priority order must be 1..6");
  return table[std::size_t(order - 1)];
}

int reuse_priority_order(const ReuseFactors& rf) {
  std::array<int, 3> t{kIfmap, kWeight, kOfmap};
  std::stable_sort(t.begin(), t.end(), [&](int a, int b) { return rf.of(a) > rf.of(b); });
  for (int k = 1; k <= 6; ++k)
    if (reuse_priority(k) == t) return k;
  return 1;
}

std::string Schedule::loops_str() const {
  return fmt::format("{},{},{},{}", dim_name(loops[0]), dim_name(loops[1]), dim_name(loops[2]), dim_name(loops[3]));
}

std::string Schedule::name() const {
  if (order == 0) return "(" + loops_str() + ")";
  const auto p = reuse_priority(order);
  return fmt::format("{}>{}>{} ({})", data_type_name(p[0]), data_type_name(p[1]), data_type_name(p[2]), loops_str());
}

Schedule schedule_for_order(int order) {
  // The loops each data type does not index (for convolutions).
  auto unused = [](int type) -> std::vector<int> {
    switch (type) {
      case kIfmap:
        return {kDimJ};
      case kWeight:
        return {kDimH, kDimW};
      default:
        return {kDimI};
    }
  };
  const auto prio = reuse_priority(order);
  std::vector<int> inner_to_outer;
  auto place = [&](int type) {
    std::vector<int> dims = unused(type);
    // Innermost first: w inside h.
    std::reverse(dims.begin(), dims.end());
    for (int d : dims)
      if (std::find(inner_to_outer.begin(), inner_to_outer.end(), d) == inner_to_outer.end())
        inner_to_outer.push_back(d);
  };
  place(prio[0]);
  place(prio[1]);
  place(prio[2]);
  for (int d : {kDimW, kDimH, kDimJ, kDimI})  // whatever is left goes outermost (h outside w)
    if (std::find(inner_to_outer.begin(), inner_to_outer.end(), d) == inner_to_outer.end()) inner_to_outer.push_back(d);
  Schedule s;
  s.order = order;
  for (int k = 0; k < 4; ++k) s.loops[std::size_t(k)] = inner_to_outer[std::size_t(3 - k)];
  return s;
}

std::vector<int> network_orders(const std::vector<LayerGeometry>& layers) {
  std::set<int> orders;
  for (const auto& g : layers) orders.insert(reuse_priority_order(reuse_factors(g)));
  return {orders.begin(), orders.end()};
}

}  // namespace capsgen::romanet
