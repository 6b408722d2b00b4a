#include "model/network.hpp"

#include <algorithm>
#include <climits>
#include <map>
#include <optional>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/yaml_util.hpp"
#include "model/network_limits.hpp"
#include "core/checked.hpp"
#include "core/input_error.hpp"
#include "core/limits.hpp"

namespace capsgen {
namespace {

// YAML names of the layer kinds: the capsule-network kinds, then the CNN kinds of the DRAM exploration.
const std::vector<std::string_view> kCapsKindNames{"conv2d",      "primary_caps", "class_caps", "conv_caps2d",
                                                   "conv_caps3d", "caps_add",     "flatten_caps"};
const std::vector<std::string_view> kCnnKindNames{"max_pool", "avg_pool", "fc"};

LayerKind parse_kind(const yaml::Value& v) {
  static const LayerKind caps[] = {LayerKind::Conv2d,     LayerKind::PrimaryCaps, LayerKind::ClassCaps,
                                   LayerKind::ConvCaps2d, LayerKind::ConvCaps3d,  LayerKind::CapsAdd,
                                   LayerKind::FlattenCaps};
  static const LayerKind cnn[] = {LayerKind::MaxPool, LayerKind::AvgPool, LayerKind::FullyConnected};
  if (v.is_scalar()) {
    for (std::size_t i = 0; i < kCapsKindNames.size(); ++i)
      if (v.node().Scalar() == kCapsKindNames[i]) return caps[i];
    for (std::size_t i = 0; i < kCnnKindNames.size(); ++i)
      if (v.node().Scalar() == kCnnKindNames[i]) return cnn[i];
  }
  v.fail(fmt::format("expected one of {}, got {} (CNN layers for the analytic tools: {})",
                     fmt::join(kCapsKindNames, ", "), v.describe(), fmt::join(kCnnKindNames, ", ")));
}

// Keys each layer type accepts (besides name and type).
std::vector<std::string_view> allowed_keys(LayerKind kind) {
  switch (kind) {
    case LayerKind::Conv2d:
      return {"name", "type", "out_channels", "kernel", "stride", "padding", "groups", "bias", "activation"};
    case LayerKind::MaxPool:
    case LayerKind::AvgPool:
      return {"name", "type", "kernel", "stride", "padding"};
    case LayerKind::FullyConnected:
      return {"name", "type", "out_features", "bias", "activation"};
    case LayerKind::PrimaryCaps:
      return {"name", "type", "capsule_types", "capsule_dim", "kernel", "stride", "padding", "bias", "activation"};
    case LayerKind::ClassCaps:
      return {"name", "type", "num_capsules", "capsule_dim", "routing_iterations"};
    case LayerKind::ConvCaps2d:
      return {"name", "type", "input", "capsule_types", "capsule_dim", "kernel", "stride", "padding", "bias",
              "activation"};
    case LayerKind::ConvCaps3d:
      return {"name", "type", "input", "capsule_types", "capsule_dim", "kernel", "stride", "padding", "bias",
              "routing_iterations"};
    case LayerKind::CapsAdd:
      return {"name", "type", "inputs"};
    case LayerKind::FlattenCaps:
      return {"name", "type", "inputs"};
  }
  return {};
}

bool is_network_name(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                    c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

// Layer names become weight keys and Verilog/C identifiers: [a-z_][a-z0-9_]*.
bool is_layer_name(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

void parse_kernel(const yaml::Value& v, Layer& layer) {
  if (v.is_seq()) {
    const std::vector<yaml::Value> dims = v.as_seq();
    if (dims.size() != 2) v.fail(fmt::format("expected an integer or a list [kh, kw], got a list of {}", dims.size()));
    layer.kernel_h = dims[0].as_int(1, kMaxFeatureDim);
    layer.kernel_w = dims[1].as_int(1, kMaxFeatureDim);
  } else if (v.is_scalar()) {
    layer.kernel_h = layer.kernel_w = v.as_int(1, kMaxFeatureDim);
  } else {
    v.fail("expected an integer or a list [kh, kw], got " + v.describe());
  }
}

// A reference to an earlier layer (`input:` / `inputs:` entries).
std::string parse_layer_ref(const yaml::Value& v) {
  if (!v.is_scalar()) v.fail("expected a layer name, got " + v.describe());
  const std::string name = v.as_string();
  if (!is_layer_name(name)) v.fail(fmt::format("expected a layer name ([a-z_][a-z0-9_]*), got '{}'", name));
  return name;
}

// The convolution part shared by conv2d and primary_caps.
void parse_conv_fields(const yaml::MapReader& m, Layer& layer) {
  parse_kernel(m.get("kernel"), layer);
  layer.stride = m.get_int("stride", 1, kMaxFeatureDim, 1);
  layer.padding = m.get_int("padding", 0, kMaxFeatureDim, 0);
  layer.bias = m.get_bool("bias", true);
}

Layer parse_layer(const yaml::Value& v) {
  const yaml::MapReader m = v.as_map();
  Layer layer;
  layer.line = m.where().line;
  layer.kind = parse_kind(m.get("type"));
  m.allow_only(allowed_keys(layer.kind));

  const yaml::Value name = m.get("name");
  layer.name = name.as_string();
  if (!is_layer_name(layer.name)) {
    name.fail(fmt::format("expected a lower-case identifier ([a-z_][a-z0-9_]*), got '{}'", layer.name));
  }

  switch (layer.kind) {
    case LayerKind::Conv2d: {
      layer.out_channels = m.get_int("out_channels", 1, kMaxFeatureDim);
      parse_conv_fields(m, layer);
      layer.groups = m.get_int("groups", 1, kMaxFeatureDim, 1);
      layer.activation = Activation::Relu;
      if (auto act = m.find("activation")) {
        layer.activation = act->as_enum({"none", "relu"}) == 0 ? Activation::None : Activation::Relu;
      }
      break;
    }
    case LayerKind::MaxPool:
    case LayerKind::AvgPool: {
      const yaml::Value kernel = m.get("kernel");
      parse_kernel(kernel, layer);
      if (auto stride = m.find("stride")) {
        layer.stride = stride->as_int(1, kMaxFeatureDim);
      } else if (layer.kernel_h == layer.kernel_w) {
        layer.stride = layer.kernel_h;  // non-overlapping windows
      } else {
        kernel.fail(fmt::format("a {}x{} pooling window needs an explicit stride (the default is the kernel size "
                                "of square windows)",
                                layer.kernel_h, layer.kernel_w));
      }
      layer.padding = m.get_int("padding", 0, kMaxFeatureDim, 0);
      if (2LL * layer.padding > std::min(layer.kernel_h, layer.kernel_w)) {
        m.fail("padding", fmt::format("padding {} is more than half the {}x{} window", layer.padding, layer.kernel_h,
                                      layer.kernel_w));
      }
      layer.bias = false;
      layer.activation = Activation::None;
      break;
    }
    case LayerKind::FullyConnected: {
      layer.out_channels = m.get_int("out_features", 1, kMaxCount);
      layer.kernel_h = layer.kernel_w = 1;
      layer.bias = m.get_bool("bias", true);
      layer.activation = Activation::Relu;
      if (auto act = m.find("activation")) {
        layer.activation = act->as_enum({"none", "relu"}) == 0 ? Activation::None : Activation::Relu;
      }
      break;
    }
    case LayerKind::PrimaryCaps: {
      layer.capsule_types = m.get_int("capsule_types", 1, kMaxCount);
      const yaml::Value dim = m.get("capsule_dim");
      layer.capsule_dim = dim.as_int(1, kMaxCapsuleDim);
      const long long channels = static_cast<long long>(layer.capsule_types) * layer.capsule_dim;
      if (channels > INT_MAX) dim.fail(fmt::format("capsule_types x capsule_dim = {} is too large", channels));
      layer.out_channels = static_cast<int>(channels);
      parse_conv_fields(m, layer);
      // The key exists only so a description can say so explicitly.
      if (auto act = m.find("activation")) {
        if (!act->is_scalar() || act->node().Scalar() != "squash") {
          act->fail("primary_caps layers always squash; expected 'squash', got " + act->describe());
        }
      }
      layer.activation = Activation::Squash;
      break;
    }
    case LayerKind::ClassCaps: {
      layer.num_capsules = m.get_int("num_capsules", 1, kMaxCount);
      layer.capsule_dim = m.get_int("capsule_dim", 1, kMaxCapsuleDim);
      layer.routing_iterations = m.get_int("routing_iterations", 1, kMaxRoutingIterations, 3);
      layer.activation = Activation::Squash;
      break;
    }
    case LayerKind::ConvCaps2d:
    case LayerKind::ConvCaps3d: {
      if (auto in = m.find("input")) layer.inputs.push_back(parse_layer_ref(*in));
      layer.capsule_types = m.get_int("capsule_types", 1);
      const yaml::Value dim = m.get("capsule_dim");
      layer.capsule_dim = dim.as_int(1);
      const long long channels = static_cast<long long>(layer.capsule_types) * layer.capsule_dim;
      if (channels > INT_MAX) dim.fail(fmt::format("capsule_types x capsule_dim = {} is too large", channels));
      layer.out_channels = static_cast<int>(channels);
      parse_kernel(m.get("kernel"), layer);
      layer.stride = m.get_int("stride", 1, INT_MAX, 1);
      layer.padding = m.get_int("padding", 0, INT_MAX, 0);
      if (layer.kind == LayerKind::ConvCaps2d) {
        layer.bias = m.get_bool("bias", false);  // DeepCaps' Conv2DCaps has no bias (docs/deepcaps.md)
        if (auto act = m.find("activation")) {
          if (!act->is_scalar() || act->node().Scalar() != "squash") {
            act->fail("conv_caps2d layers always squash; expected 'squash', got " + act->describe());
          }
        }
      } else {
        layer.bias = m.get_bool("bias", true);  // ConvCapsuleLayer3D's b, added to s every iteration
        layer.routing_iterations = m.get_int("routing_iterations", 1, INT_MAX, 3);
      }
      layer.activation = Activation::Squash;
      break;
    }
    case LayerKind::CapsAdd:
    case LayerKind::FlattenCaps: {
      const std::optional<yaml::Value> list =
          layer.kind == LayerKind::CapsAdd ? std::optional<yaml::Value>(m.get("inputs")) : m.find("inputs");
      if (list) {
        if (!list->is_seq()) list->fail("expected a list of layer names, got " + list->describe());
        const std::vector<yaml::Value> refs = list->as_seq();
        if (layer.kind == LayerKind::CapsAdd && refs.size() < 2)
          list->fail(fmt::format("caps_add needs at least two inputs, got {}", refs.size()));
        if (refs.empty()) list->fail("expected a non-empty list of layer names");
        for (const yaml::Value& r : refs) layer.inputs.push_back(parse_layer_ref(r));
      }
      layer.bias = false;
      layer.activation = Activation::None;
      break;
    }
  }
  return layer;
}

}  // namespace

const char* to_string(LayerKind k) {
  switch (k) {
    case LayerKind::Conv2d:
      return "conv2d";
    case LayerKind::PrimaryCaps:
      return "primary_caps";
    case LayerKind::ClassCaps:
      return "class_caps";
    case LayerKind::MaxPool:
      return "max_pool";
    case LayerKind::AvgPool:
      return "avg_pool";
    case LayerKind::FullyConnected:
      return "fc";
    case LayerKind::ConvCaps2d:
      return "conv_caps2d";
    case LayerKind::ConvCaps3d:
      return "conv_caps3d";
    case LayerKind::CapsAdd:
      return "caps_add";
    case LayerKind::FlattenCaps:
      return "flatten_caps";
  }
  return "?";
}

const char* to_string(Activation a) {
  switch (a) {
    case Activation::None:
      return "none";
    case Activation::Relu:
      return "relu";
    case Activation::Squash:
      return "squash";
  }
  return "?";
}

std::string TensorShape::str() const {
  if (!capsules) return fmt::format("{}x{}x{}", channels, height, width);
  std::string s = fmt::format("{} capsules x {}-D", count, dim);
  if (grid_types > 0) s += fmt::format(" ({} types x {}x{})", grid_types, height, width);
  return s;
}

long long TensorShape::elements() const {
  if (capsules) return static_cast<long long>(count) * dim;
  return static_cast<long long>(channels) * height * width;
}

const Layer* Network::find(const std::string& layer_name) const {
  for (const Layer& l : layers) {
    if (l.name == layer_name) return &l;
  }
  return nullptr;
}

std::vector<WeightSpec> expected_weights(const Network& net) {
  std::vector<WeightSpec> out;
  for (const Layer& l : net.layers) {
    const auto in_ch = static_cast<std::size_t>(l.in.channels);
    const auto kh = static_cast<std::size_t>(l.kernel_h);
    const auto kw = static_cast<std::size_t>(l.kernel_w);
    switch (l.kind) {
      case LayerKind::Conv2d:
      case LayerKind::PrimaryCaps: {
        const auto oc = static_cast<std::size_t>(l.out_channels);
        out.push_back({l.name + ".weight", {oc, in_ch / static_cast<std::size_t>(l.groups), kh, kw}, &l});
        if (l.bias) out.push_back({l.name + ".bias", {oc}, &l});
        break;
      }
      case LayerKind::FullyConnected: {
        const auto oc = static_cast<std::size_t>(l.out_channels);
        out.push_back({l.name + ".weight", {oc, static_cast<std::size_t>(l.in.elements())}, &l});
        if (l.bias) out.push_back({l.name + ".bias", {oc}, &l});
        break;
      }
      case LayerKind::MaxPool:
      case LayerKind::AvgPool:
      case LayerKind::CapsAdd:
      case LayerKind::FlattenCaps:
        break;
      case LayerKind::ConvCaps2d: {
        // Over the input capsule grid seen as T_in*D_in channels, channel t*D_in + d (docs/deepcaps.md).
        const auto oc = static_cast<std::size_t>(l.out_channels);
        const auto ic = static_cast<std::size_t>(l.in.is_grid() ? l.in.grid_types * l.in.dim : l.in.channels);
        out.push_back({l.name + ".weight", {oc, ic, kh, kw}, &l});
        if (l.bias) out.push_back({l.name + ".bias", {oc}, &l});
        break;
      }
      case LayerKind::ConvCaps3d: {
        // One kernel over the D_in atoms of a capsule, shared by every input capsule type.
        const auto oc = static_cast<std::size_t>(l.out_channels);
        const auto din = static_cast<std::size_t>(l.in.is_grid() ? l.in.dim : 1);
        out.push_back({l.name + ".weight", {oc, din, kh, kw}, &l});
        if (l.bias)
          out.push_back({l.name + ".bias",
                         {static_cast<std::size_t>(l.capsule_types), static_cast<std::size_t>(l.capsule_dim)}, &l});
        break;
      }
      case LayerKind::ClassCaps:
        out.push_back({l.name + ".W",
                       {static_cast<std::size_t>(l.in.count), static_cast<std::size_t>(l.num_capsules),
                        static_cast<std::size_t>(l.capsule_dim), static_cast<std::size_t>(l.in.dim)},
                       &l});
        break;
    }
  }
  return out;
}

bool is_capsnet_layer(const Layer& l) {
  switch (l.kind) {
    case LayerKind::Conv2d:
      return l.groups == 1;
    case LayerKind::PrimaryCaps:
    case LayerKind::ClassCaps:
    case LayerKind::ConvCaps2d:
    case LayerKind::ConvCaps3d:
    case LayerKind::CapsAdd:
    case LayerKind::FlattenCaps:
      return true;
    case LayerKind::MaxPool:
    case LayerKind::AvgPool:
    case LayerKind::FullyConnected:
      return false;
  }
  return false;
}

void require_capsnet_layers(const Network& net, const std::string& who) {
  for (std::size_t i = 0; i < net.layers.size(); ++i) {
    const Layer& l = net.layers[i];
    if (is_capsnet_layer(l)) continue;
    const std::string what = l.kind == LayerKind::Conv2d ? fmt::format("grouped conv2d (groups {})", l.groups)
                                                         : fmt::format("'{}'", to_string(l.kind));
    throw InputError(net.source_path, l.line, 0, fmt::format("layers[{}].type", i),
                     fmt::format("layer '{}': {} runs conv2d (groups 1), primary_caps and class_caps layers (and the "
                                 "DeepCaps kinds) only, not {} layers (those are for the analytic tools, e.g. "
                                 "capsgen dse dram)",
                                 l.name, who, what));
  }
}

bool is_deepcaps_layer(const Layer& l) {
  return l.kind == LayerKind::ConvCaps2d || l.kind == LayerKind::ConvCaps3d || l.kind == LayerKind::CapsAdd ||
         l.kind == LayerKind::FlattenCaps;
}

namespace {
// Elements of one weight array, or -1 when the product overflows.
long long weight_elements(const WeightSpec& w) {
  std::optional<long long> n = 1;
  for (std::size_t d : w.shape)
    if (n) n = checked_mul(*n, (long long)d);
  return n ? *n : -1;
}
}  // namespace

void check_runnable_network(const Network& net, const std::string& who) {
  require_capsnet_layers(net, who);
  const long long cap = (long long)input_limits().max_model_elements;
  long long total = 0;
  for (const WeightSpec& w : expected_weights(net)) {
    const long long n = weight_elements(w);
    const auto sum = n < 0 ? std::nullopt : checked_add(total, n);
    if (!sum || *sum > cap) {
      const auto it = std::find_if(net.layers.begin(), net.layers.end(), [&](const Layer& l) { return &l == w.layer; });
      throw InputError(net.source_path, w.layer ? w.layer->line : 0, 0,
                       fmt::format("layers[{}]", it - net.layers.begin()),
                       fmt::format("layer '{}': the weights up to {} pass {} elements, the limit for {} (raise it with "
                                   "--max-model-elements)",
                                   w.layer ? w.layer->name : "?", w.key, cap, who));
    }
    total = *sum;
  }
  for (std::size_t i = 0; i < net.layers.size(); ++i) {
    const Layer& l = net.layers[i];
    if (l.out.elements() > cap)
      throw InputError(net.source_path, l.line, 0, fmt::format("layers[{}]", i),
                       fmt::format("layer '{}': its output of {} elements passes {}, the limit for {} (raise it with "
                                   "--max-model-elements)",
                                   l.name, l.out.elements(), cap, who));
  }
}

Network load_network(const std::string& path) { return parse_network(yaml::read_file(path), path); }

Network parse_network(const std::string& yaml_text, const std::string& file_name) {
  Network net;
  net.source_path = file_name;
  const YAML::Node doc = yaml::parse(yaml_text, file_name);
  const yaml::MapReader top = yaml::MapReader::root(doc, file_name);
  top.allow_only({"name", "description", "input", "layers"});

  const yaml::Value name = top.get("name");
  net.name = name.as_string();
  if (!is_network_name(net.name)) {
    name.fail(fmt::format("expected letters, digits, '_', '.' or '-' only, got '{}'", net.name));
  }
  net.description = top.get_string("description", "");

  const yaml::MapReader in = top.get_map("input");
  in.allow_only({"channels", "height", "width"});
  net.input.capsules = false;
  net.input.channels = in.get_int("channels", 1, kMaxFeatureDim);
  net.input.height = in.get_int("height", 1, kMaxFeatureDim);
  net.input.width = in.get_int("width", 1, kMaxFeatureDim);

  const yaml::Value layers = top.get("layers");
  const std::vector<yaml::Value> items = layers.as_seq();
  if (items.empty()) layers.fail("expected a non-empty list of layers");
  std::map<std::string, std::size_t> seen;
  for (const yaml::Value& item : items) {
    Layer layer = parse_layer(item);
    if (auto it = seen.find(layer.name); it != seen.end()) {
      const Layer& first = net.layers[it->second];
      item.as_map().fail("name", fmt::format("duplicate layer name '{}' (first used by layers[{}] at line {})",
                                              layer.name, it->second, first.line));
    }
    seen.emplace(layer.name, net.layers.size());
    net.layers.push_back(std::move(layer));
  }

  infer_shapes(net);
  return net;
}

namespace {

// Shape inference of one layer (layers[i]): its inputs resolved to earlier layers, its input and output
// shapes checked and set per layer kind. Every error names the layer and the field at fault.
class LayerShaper {
 public:
  LayerShaper(Network& net, std::size_t i)
      : net_(net), i_(i), l_(net.layers[i]), field_(fmt::format("layers[{}]", i)) {}

  void infer() {
    resolve_inputs();
    const TensorShape cur = shape_of(l_.input_layers[0]);
    const std::string producer = producer_of(l_.input_layers[0]);
    l_.in = cur;
    switch (l_.kind) {
      case LayerKind::Conv2d:
      case LayerKind::PrimaryCaps: convolution(cur, producer); break;
      case LayerKind::MaxPool:
      case LayerKind::AvgPool: pooling(cur, producer); break;
      case LayerKind::FullyConnected: fully_connected(cur, producer); break;
      case LayerKind::ClassCaps: class_caps(cur, producer); break;
      case LayerKind::ConvCaps2d:
      case LayerKind::ConvCaps3d: conv_caps(cur, producer); break;
      case LayerKind::CapsAdd: caps_add(cur, producer); break;
      case LayerKind::FlattenCaps: flatten_caps(cur, producer); break;
    }
    // Every tensor and every weight array stays countable in int-sized indices.
    if (l_.out.elements() >= kMaxElements)
      fail("", fmt::format("its output of {} elements reaches the limit of {}", l_.out.elements(), kMaxElements));
  }

 private:
  [[noreturn]] void fail(std::string_view sub, const std::string& message) const {
    throw InputError(net_.source_path, l_.line, 0, field_ + std::string(sub), fmt::format("layer '{}': {}", l_.name, message));
  }
  const TensorShape& shape_of(int k) const { return k < 0 ? net_.input : net_.layers[std::size_t(k)].out; }
  std::string producer_of(int k) const {
    return k < 0 ? std::string("the network input") : fmt::format("layer '{}'", net_.layers[std::size_t(k)].name);
  }

  // The output of a capsule convolution: capsule_types x ho x wo capsules of capsule_dim atoms.
  TensorShape capsule_grid(int ho, int wo) {
    const long long count = static_cast<long long>(l_.capsule_types) * ho * wo;
    if (count > INT_MAX) fail(".capsule_types", fmt::format("{} capsules are too many", count));
    l_.out_channels = l_.capsule_types * l_.capsule_dim;
    TensorShape out;
    out.capsules = true;
    out.count = static_cast<int>(count);
    out.dim = l_.capsule_dim;
    out.grid_types = l_.capsule_types;
    out.height = ho;
    out.width = wo;
    return out;
  }

  // Resolve `input:` / `inputs:`: earlier layers only, so the list order is an execution order.
  void resolve_inputs() {
    Layer& l = l_;
    l.input_layers.clear();
    if (l.inputs.empty()) {
      l.input_layers.push_back(static_cast<int>(i_) - 1);
      return;
    }
    const bool single = l.kind == LayerKind::ConvCaps2d || l.kind == LayerKind::ConvCaps3d;
    for (std::size_t r = 0; r < l.inputs.size(); ++r) {
      const std::string sub = single ? std::string(".input") : fmt::format(".inputs[{}]", r);
      const std::string& ref = l.inputs[r];
      int found = -1;
      for (std::size_t k = 0; k < i_; ++k)
        if (net_.layers[k].name == ref) found = static_cast<int>(k);
      if (found < 0) {
        if (ref == l.name) fail(sub, "a layer cannot take its own output as input");
        for (std::size_t k = i_ + 1; k < net_.layers.size(); ++k)
          if (net_.layers[k].name == ref)
            fail(sub, fmt::format("input '{}' is layers[{}], which comes later; inputs must be earlier layers", ref,
                                  k));
        fail(sub, fmt::format("no layer named '{}' before this one", ref));
      }
      if (std::find(l.input_layers.begin(), l.input_layers.end(), found) != l.input_layers.end())
        fail(sub, fmt::format("input '{}' is listed twice", ref));
      l.input_layers.push_back(found);
    }
  }

  // The kernel, stride and padding of a window over a feature map or capsule grid.
  void check_window() const {
    if (l_.kernel_h < 1 || l_.kernel_w < 1) fail(".kernel", "kernel sizes must be >= 1");
    if (l_.stride < 1) fail(".stride", "stride must be >= 1");
    if (l_.padding < 0) fail(".padding", "padding must be >= 0");
  }

  // conv2d and primary_caps: a feature map in, a feature map or a capsule grid out.
  void convolution(const TensorShape& cur, const std::string& producer) {
    Layer& l = l_;
    if (cur.capsules) {
      fail(".type", fmt::format("a {} layer needs a feature map, but {} outputs {}; convolutions cannot "
                                "follow capsule layers",
                                to_string(l.kind), producer, cur.str()));
    }
    check_window();
    const long long span_h = static_cast<long long>(cur.height) + 2LL * l.padding - l.kernel_h;
    const long long span_w = static_cast<long long>(cur.width) + 2LL * l.padding - l.kernel_w;
    if (span_h < 0 || span_w < 0) {
      fail(".kernel", fmt::format("kernel {}x{} does not fit its {}x{} input from {} (padding {})", l.kernel_h,
                                  l.kernel_w, cur.height, cur.width, producer, l.padding));
    }
    // Computed in long long and capped before narrowing: padding 1073741825 must not wrap around.
    const long long ho_ll = span_h / l.stride + 1, wo_ll = span_w / l.stride + 1;
    if (ho_ll > kMaxFeatureDim || wo_ll > kMaxFeatureDim)
      fail(".padding", fmt::format("output {}x{} exceeds the {} limit on feature-map sides", ho_ll, wo_ll, kMaxFeatureDim));
    const int ho = static_cast<int>(ho_ll);
    const int wo = static_cast<int>(wo_ll);
    TensorShape out;
    if (l.kind == LayerKind::Conv2d) {
      if (l.out_channels < 1) fail(".out_channels", "out_channels must be >= 1");
      if (l.groups < 1) fail(".groups", "groups must be >= 1");
      if (cur.channels % l.groups != 0 || l.out_channels % l.groups != 0) {
        fail(".groups", fmt::format("groups {} must divide the {} input channels from {} and the {} output "
                                    "channels",
                                    l.groups, cur.channels, producer, l.out_channels));
      }
      out.channels = l.out_channels;
      out.height = ho;
      out.width = wo;
    } else {
      if (l.capsule_types < 1 || l.capsule_dim < 1) fail(".capsule_types", "capsule_types and capsule_dim must be >= 1");
      out = capsule_grid(ho, wo);
    }
    l.out = out;
  }

  // max_pool and avg_pool: a feature map in, the same channels out.
  void pooling(const TensorShape& cur, const std::string& producer) {
    Layer& l = l_;
    if (cur.capsules) {
      fail(".type", fmt::format("a {} layer needs a feature map, but {} outputs {}", to_string(l.kind), producer,
                                cur.str()));
    }
    check_window();
    const long long span_h = static_cast<long long>(cur.height) + 2LL * l.padding - l.kernel_h;
    const long long span_w = static_cast<long long>(cur.width) + 2LL * l.padding - l.kernel_w;
    if (span_h < 0 || span_w < 0) {
      fail(".kernel", fmt::format("window {}x{} does not fit its {}x{} input from {} (padding {})", l.kernel_h,
                                  l.kernel_w, cur.height, cur.width, producer, l.padding));
    }
    if (span_h / l.stride + 1 > kMaxFeatureDim || span_w / l.stride + 1 > kMaxFeatureDim)
      fail(".padding", fmt::format("output {}x{} exceeds the {} limit on feature-map sides", span_h / l.stride + 1,
                                   span_w / l.stride + 1, kMaxFeatureDim));
    TensorShape out;
    out.channels = cur.channels;
    out.height = static_cast<int>(span_h / l.stride + 1);
    out.width = static_cast<int>(span_w / l.stride + 1);
    l.out_channels = cur.channels;
    l.out = out;
  }

  // fc: a feature map flattened in, out_features out.
  void fully_connected(const TensorShape& cur, const std::string& producer) {
    Layer& l = l_;
    if (cur.capsules) {
      fail(".type", fmt::format("an fc layer needs a feature map (it flattens C x H x W), but {} outputs {}",
                                producer, cur.str()));
    }
    if (l.out_channels < 1) fail(".out_features", "out_features must be >= 1");
    if (cur.elements() > INT_MAX) fail(".type", fmt::format("{} input features are too many", cur.elements()));
    TensorShape out;
    out.channels = l.out_channels;
    out.height = 1;
    out.width = 1;
    l.out = out;
  }

  // class_caps: capsules in, num_capsules capsules out (dynamic routing).
  void class_caps(const TensorShape& cur, const std::string& producer) {
    Layer& l = l_;
    if (!cur.capsules) {
      fail(".type", fmt::format("class_caps needs capsules, but {} outputs a feature map {} (put a "
                                "primary_caps layer before it)",
                                producer, cur.str()));
    }
    if (l.num_capsules < 1) fail(".num_capsules", "num_capsules must be >= 1");
    if (l.capsule_dim < 1) fail(".capsule_dim", "capsule_dim must be >= 1");
    if (l.routing_iterations < 1) fail(".routing_iterations", "routing_iterations must be >= 1");
    TensorShape out;
    out.capsules = true;
    out.count = l.num_capsules;
    out.dim = l.capsule_dim;
    l.out = out;
  }

  // conv_caps2d and conv_caps3d (DeepCaps): a capsule grid or a feature map in, a capsule grid out.
  void conv_caps(const TensorShape& cur, const std::string& producer) {
    Layer& l = l_;
    // A feature map enters as C capsule types of one atom each (DeepCaps' ConvertToCaps).
    if (cur.capsules && !cur.is_grid()) {
      fail(l.inputs.empty() ? ".type" : ".input",
           fmt::format("a {} layer needs a capsule grid (types x height x width) or a feature map, but {} "
                       "outputs {} without a grid",
                       to_string(l.kind), producer, cur.str()));
    }
    check_window();
    if (l.capsule_types < 1) fail(".capsule_types", "capsule_types must be >= 1");
    if (l.capsule_dim < 1) fail(".capsule_dim", "capsule_dim must be >= 1");
    if (l.kind == LayerKind::ConvCaps3d && l.routing_iterations < 1)
      fail(".routing_iterations", "routing_iterations must be >= 1");
    const long long span_h = static_cast<long long>(cur.height) + 2LL * l.padding - l.kernel_h;
    const long long span_w = static_cast<long long>(cur.width) + 2LL * l.padding - l.kernel_w;
    if (span_h < 0 || span_w < 0) {
      fail(".kernel", fmt::format("kernel {}x{} does not fit its {}x{} input from {} (padding {})", l.kernel_h,
                                  l.kernel_w, cur.height, cur.width, producer, l.padding));
    }
    const int ho = static_cast<int>(span_h / l.stride + 1);
    const int wo = static_cast<int>(span_w / l.stride + 1);
    l.out = capsule_grid(ho, wo);
  }

  // caps_add: two or more capsule tensors of one shape in, their sum out.
  void caps_add(const TensorShape& cur, const std::string& producer) {
    Layer& l = l_;
    if (l.input_layers.size() < 2) fail(".inputs", "caps_add needs at least two inputs");
    for (std::size_t r = 0; r < l.input_layers.size(); ++r) {
      const TensorShape& s = shape_of(l.input_layers[r]);
      const std::string sub = fmt::format(".inputs[{}]", r);
      if (!s.capsules)
        fail(sub, fmt::format("caps_add adds capsules, but {} outputs a feature map {}", producer_of(l.input_layers[r]),
                              s.str()));
      if (s.count != cur.count || s.dim != cur.dim || s.grid_types != cur.grid_types || s.height != cur.height ||
          s.width != cur.width)
        fail(sub, fmt::format("{} outputs {}, but {} outputs {}: added capsules must have the same shape",
                              producer_of(l.input_layers[r]), s.str(), producer, cur.str()));
    }
    l.out = cur;
  }

  // flatten_caps: capsules of one dimension in, their concatenation out.
  void flatten_caps(const TensorShape& cur, const std::string& producer) {
    Layer& l = l_;
    long long count = 0;
    for (std::size_t r = 0; r < l.input_layers.size(); ++r) {
      const TensorShape& s = shape_of(l.input_layers[r]);
      const std::string sub = l.inputs.empty() ? std::string(".type") : fmt::format(".inputs[{}]", r);
      if (!s.capsules)
        fail(sub, fmt::format("flatten_caps needs capsules, but {} outputs a feature map {}",
                              producer_of(l.input_layers[r]), s.str()));
      if (s.dim != cur.dim)
        fail(sub, fmt::format("{} outputs {}-D capsules, but {} outputs {}-D ones: concatenated capsules must "
                              "have the same dimension",
                              producer_of(l.input_layers[r]), s.dim, producer, cur.dim));
      count += s.count;
    }
    if (count > INT_MAX) fail(".inputs", fmt::format("{} capsules are too many", count));
    TensorShape out;
    out.capsules = true;
    out.count = static_cast<int>(count);
    out.dim = cur.dim;
    l.out = out;
  }

  Network& net_;
  std::size_t i_;
  Layer& l_;
  std::string field_;
};

}  // namespace

void infer_shapes(Network& net) {
  const std::string& file = net.source_path;
  if (net.layers.empty()) throw InputError(file, 0, 0, "layers", "expected a non-empty list of layers");
  const TensorShape& input = net.input;
  if (input.capsules || input.channels < 1 || input.height < 1 || input.width < 1) {
    throw InputError(file, 0, 0, "input", "expected a feature map with channels, height and width >= 1, got " +
                                              input.str());
  }
  for (std::size_t i = 0; i < net.layers.size(); ++i) LayerShaper(net, i).infer();
}

}  // namespace capsgen
