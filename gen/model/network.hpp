// Network descriptions (models/<net>.yaml): a list of layers with their shapes.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace capsgen {

// conv2d, primary_caps and class_caps make up capsule networks (golden models, accelerator). The
// DeepCaps kinds (docs/deepcaps.md) conv_caps2d, conv_caps3d, caps_add and flatten_caps run in the
// golden models and on the accelerator (gen/compiler/lower.cpp). max_pool, avg_pool, fc and grouped
// conv2d describe the CNNs of the DRAM exploration (AlexNet, VGG-16, MobileNet, docs/romanet.md);
// the golden models reject them (require_capsnet_layers()).
enum class LayerKind {
  Conv2d,
  PrimaryCaps,
  ClassCaps,
  MaxPool,
  AvgPool,
  FullyConnected,
  ConvCaps2d,
  ConvCaps3d,
  CapsAdd,
  FlattenCaps
};
enum class Activation { None, Relu, Squash };

const char* to_string(LayerKind k);
const char* to_string(Activation a);

// Shape of a layer's output: a feature map [channels, height, width], or capsules [count, dim].
struct TensorShape {
  bool capsules = false;
  int channels = 0, height = 0, width = 0;  // feature map
  int count = 0, dim = 0;                   // capsules
  // Capsule tensors that came from a primary_caps or conv-capsule layer keep their grid
  // (types x height x width); capsule i = (t*height + y)*width + x.
  int grid_types = 0;

  bool is_grid() const { return capsules && grid_types > 0; }

  std::string str() const;
  long long elements() const;
};

struct Layer {
  std::string name;
  LayerKind kind = LayerKind::Conv2d;
  int line = 0;  // line in the description file (for messages)

  // conv2d and primary_caps (kernel, stride and padding also for max_pool/avg_pool)
  int out_channels = 0;  // conv2d; primary_caps: capsule_types * capsule_dim; fc: out_features
  int kernel_h = 0, kernel_w = 0;
  int stride = 1;
  int padding = 0;
  int groups = 1;  // conv2d: in and out channels split into groups (depthwise: groups == in channels)
  bool bias = true;  // conv2d, primary_caps, fc (false for pools)
  Activation activation = Activation::None;

  // primary_caps: capsule_types x capsule_dim output channels, o = t*capsule_dim + d
  int capsule_types = 0;
  int capsule_dim = 0;  // primary_caps and class_caps

  // class_caps
  int num_capsules = 0;
  int routing_iterations = 3;  // class_caps and conv_caps3d

  // Producers of this layer's inputs, as written in the description (`input:` / `inputs:`); empty
  // means the previous layer. input_layers holds the resolved indices (-1 = the network input),
  // filled by shape inference for every layer.
  std::vector<std::string> inputs;
  std::vector<int> input_layers;

  TensorShape in;   // filled by shape inference
  TensorShape out;  // filled by shape inference
};

struct Network {
  std::string name;
  std::string description;
  std::string source_path;
  TensorShape input;  // feature map
  std::vector<Layer> layers;

  const Layer* find(const std::string& layer_name) const;
};

// One weight tensor a network expects, keyed "<layer>.<param>" (docs/weights.md).
struct WeightSpec {
  std::string key;
  std::vector<std::size_t> shape;
  const Layer* layer = nullptr;
};

std::vector<WeightSpec> expected_weights(const Network& net);

// True for conv2d (groups 1), primary_caps, class_caps and the DeepCaps kinds: the layers the golden
// models run. Pools, fc and grouped convolutions exist for the analytic tools (capsgen dse dram).
bool is_capsnet_layer(const Layer& l);
// True for the DeepCaps kinds (conv_caps2d, conv_caps3d, caps_add, flatten_caps).
bool is_deepcaps_layer(const Layer& l);
// Throws InputError naming file, line and the first layer that is not a capsnet layer; `who` says
// what cannot run it ("the golden model").
void require_capsnet_layers(const Network& net, const std::string& who);

// Loads, validates and runs shape inference. Throws InputError naming file, line and layer/field.
Network load_network(const std::string& path);
Network parse_network(const std::string& yaml_text, const std::string& file_name);

// Shape inference alone (run by the loaders): fills Layer::in/out, checks consecutive layers fit.
void infer_shapes(Network& net);

}  // namespace capsgen
