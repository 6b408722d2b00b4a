// DeepCaps layer kinds in network descriptions: the bundled models' shapes, expected weights,
// input references (skips, concatenation) and every shape-inference error.
#include <gtest/gtest.h>

#include <string>

#include "core/input_error.hpp"
#include "core/tensor.hpp"
#include "model/network.hpp"
#include "test_helpers.hpp"

namespace capsgen {
namespace {

using test::expect_input_error;
using test::line_of;
using test::replace;

const std::string kRepo = CAPSGEN_REPO_ROOT;
constexpr const char* kFile = "models/dc.yaml";

// One CapsCell with a ConvCaps3D skip, a concatenation of two grids and class capsules.
const std::string kCell = R"(name: dc
input: {channels: 1, height: 8, width: 8}
layers:
  - name: conv1
    type: conv2d
    out_channels: 4
    kernel: 3
    padding: 1
  - name: a
    type: conv_caps2d
    capsule_types: 2
    capsule_dim: 3
    kernel: 3
    stride: 2
    padding: 1
  - name: skip
    type: conv_caps3d
    input: a
    capsule_types: 2
    capsule_dim: 3
    kernel: 3
    padding: 1
  - name: b
    type: conv_caps2d
    input: a
    capsule_types: 2
    capsule_dim: 3
    kernel: 3
    padding: 1
  - name: sum
    type: caps_add
    inputs: [b, skip]
  - name: flat
    type: flatten_caps
    inputs: [sum, a]
  - name: classcaps
    type: class_caps
    num_capsules: 3
    capsule_dim: 4
)";

Network parse(const std::string& text) { return parse_network(text, kFile); }

Shape weight_shape(const Network& n, const std::string& key) {
  for (const auto& s : expected_weights(n))
    if (s.key == key) return s.shape;
  ADD_FAILURE() << "no weight " << key;
  return {};
}

// An edit of kCell whose error is reported at the line of layer `layer` (shape inference errors).
void expect_layer_error(const std::string& from, const std::string& to, const std::string& layer,
                        const std::string& field, const std::string& fragment) {
  const std::string text = replace(kCell, from, to);
  expect_input_error([&] { parse(text); }, kFile, line_of(text, "- name: " + layer + "\n"), field, fragment);
}
// An edit whose error is reported at the edited value (parse errors).
void expect_value_error(const std::string& from, const std::string& to, const std::string& field,
                        const std::string& fragment, const std::string& marker = "") {
  const std::string text = replace(kCell, from, to);
  expect_input_error([&] { parse(text); }, kFile, line_of(text, marker.empty() ? to : marker), field, fragment);
}

TEST(NetworkDeepCaps, CellShapesAndInputs) {
  const Network n = parse(kCell);
  ASSERT_EQ(n.layers.size(), 7u);
  EXPECT_EQ(n.layers[1].kind, LayerKind::ConvCaps2d);
  EXPECT_EQ(n.layers[1].in.str(), "4x8x8");  // a feature map enters as 4 types of one atom
  EXPECT_EQ(n.layers[1].out.str(), "32 capsules x 3-D (2 types x 4x4)");
  EXPECT_EQ(n.layers[2].kind, LayerKind::ConvCaps3d);
  EXPECT_EQ(n.layers[2].routing_iterations, 3);
  EXPECT_TRUE(n.layers[2].bias);   // ConvCapsuleLayer3D's b
  EXPECT_FALSE(n.layers[1].bias);  // Conv2DCaps has none
  EXPECT_EQ(n.layers[2].out.str(), "32 capsules x 3-D (2 types x 4x4)");
  EXPECT_EQ(n.layers[3].input_layers, (std::vector<int>{1}));
  EXPECT_EQ(n.layers[4].input_layers, (std::vector<int>{3, 2}));
  EXPECT_EQ(n.layers[4].out.str(), "32 capsules x 3-D (2 types x 4x4)");
  EXPECT_EQ(n.layers[5].input_layers, (std::vector<int>{4, 1}));
  EXPECT_EQ(n.layers[5].out.str(), "64 capsules x 3-D");
  EXPECT_FALSE(n.layers[5].out.is_grid());
  EXPECT_EQ(n.layers[6].in.str(), "64 capsules x 3-D");
  EXPECT_EQ(n.layers[0].input_layers, (std::vector<int>{-1}));
  EXPECT_EQ(n.layers[6].input_layers, (std::vector<int>{5}));
  // Weights: conv over T_in*D_in channels; the 3D kernel spans one capsule's atoms, shared by types.
  EXPECT_EQ(weight_shape(n, "a.weight"), (Shape{6, 4, 3, 3}));
  EXPECT_EQ(weight_shape(n, "b.weight"), (Shape{6, 6, 3, 3}));
  EXPECT_EQ(weight_shape(n, "skip.weight"), (Shape{6, 3, 3, 3}));
  EXPECT_EQ(weight_shape(n, "skip.bias"), (Shape{2, 3}));
  EXPECT_EQ(weight_shape(n, "classcaps.W"), (Shape{64, 3, 4, 3}));
  EXPECT_EQ(expected_weights(n).size(), 7u);  // conv1 weight+bias, a, skip weight+bias, b, classcaps
  // Optional bias on conv_caps2d, none on conv_caps3d.
  const Network nb = parse(replace(replace(kCell, "    stride: 2\n", "    stride: 2\n    bias: true\n"),
                                   "    input: a\n    capsule_types: 2", "    input: a\n    bias: false\n    capsule_types: 2"));
  EXPECT_EQ(weight_shape(nb, "a.bias"), (Shape{6}));
  EXPECT_EQ(expected_weights(nb).size(), 7u);
}

TEST(NetworkDeepCaps, BundledModels) {
  const Network n = load_network(kRepo + "/models/deepcaps.yaml");
  ASSERT_EQ(n.layers.size(), 23u);
  int c2 = 0, c3 = 0, adds = 0;
  for (const Layer& l : n.layers) {
    c2 += l.kind == LayerKind::ConvCaps2d;
    c3 += l.kind == LayerKind::ConvCaps3d;
    adds += l.kind == LayerKind::CapsAdd;
  }
  EXPECT_EQ(c2, 15);  // DESCNet II-A: "15 ConvCaps2D layers"
  EXPECT_EQ(c3, 1);
  EXPECT_EQ(adds, 4);
  EXPECT_EQ(n.find("conv1")->out.str(), "128x28x28");
  EXPECT_EQ(n.find("c1_0")->out.str(), "6272 capsules x 4-D (32 types x 14x14)");
  EXPECT_EQ(n.find("cell2")->out.str(), "1568 capsules x 8-D (32 types x 7x7)");
  EXPECT_EQ(n.find("cell3")->out.str(), "512 capsules x 8-D (32 types x 4x4)");
  EXPECT_EQ(n.find("c4_skip")->kind, LayerKind::ConvCaps3d);
  EXPECT_EQ(n.find("c4_skip")->out.str(), "128 capsules x 8-D (32 types x 2x2)");
  EXPECT_EQ(n.find("flat")->out.str(), "640 capsules x 8-D");
  EXPECT_EQ(n.find("classcaps")->out.str(), "10 capsules x 32-D");
  EXPECT_EQ(weight_shape(n, "c1_0.weight"), (Shape{128, 128, 3, 3}));
  EXPECT_EQ(weight_shape(n, "c4_skip.weight"), (Shape{256, 8, 3, 3}));
  EXPECT_EQ(weight_shape(n, "classcaps.W"), (Shape{640, 10, 32, 8}));

  const Network c = load_network(kRepo + "/models/deepcaps-cifar.yaml");
  EXPECT_EQ(c.input.str(), "3x32x32");
  EXPECT_EQ(c.find("c1_0")->out.str(), "8192 capsules x 4-D (32 types x 16x16)");
  EXPECT_EQ(c.find("cell3")->out.str(), "512 capsules x 8-D (32 types x 4x4)");
  EXPECT_EQ(c.find("flat")->out.str(), "640 capsules x 8-D");
  const Network c64 = load_network(kRepo + "/models/deepcaps-cifar64.yaml");
  EXPECT_EQ(c64.find("c4_skip")->out.str(), "512 capsules x 8-D (32 types x 4x4)");
  EXPECT_EQ(c64.find("flat")->out.str(), "2560 capsules x 8-D");
  const Network t = load_network(kRepo + "/models/deepcaps-tiny.yaml");
  ASSERT_EQ(t.layers.size(), 23u);
  EXPECT_EQ(t.find("c4_skip")->out.str(), "16 capsules x 8-D (4 types x 2x2)");
  EXPECT_EQ(t.find("flat")->out.str(), "80 capsules x 8-D");
}

TEST(NetworkDeepCaps, LayerKinds) {
  const Network n = parse(kCell);
  EXPECT_TRUE(is_capsnet_layer(n.layers[2]));
  EXPECT_TRUE(is_deepcaps_layer(n.layers[4]));
  EXPECT_FALSE(is_deepcaps_layer(n.layers[6]));
  EXPECT_NO_THROW(require_capsnet_layers(n, "the golden model"));
}

TEST(NetworkDeepCaps, InputReferenceErrors) {
  expect_layer_error("    input: a\n    capsule_types: 2\n    capsule_dim: 3\n    kernel: 3\n    padding: 1\n  - name: b",
                     "    input: zz\n    capsule_types: 2\n    capsule_dim: 3\n    kernel: 3\n    padding: 1\n  - name: b",
                     "skip", "layers[2].input", "no layer named 'zz' before this one");
  expect_layer_error("    input: a\n    capsule_types: 2\n    capsule_dim: 3\n    kernel: 3\n    padding: 1\n  - name: b",
                     "    input: b\n    capsule_types: 2\n    capsule_dim: 3\n    kernel: 3\n    padding: 1\n  - name: b",
                     "skip", "layers[2].input", "input 'b' is layers[3], which comes later");
  expect_layer_error("    input: a\n    capsule_types: 2\n    capsule_dim: 3\n    kernel: 3\n    padding: 1\n  - name: b",
                     "    input: skip\n    capsule_types: 2\n    capsule_dim: 3\n    kernel: 3\n    padding: 1\n  - name: b",
                     "skip", "layers[2].input", "cannot take its own output");
  expect_layer_error("inputs: [b, skip]", "inputs: [b, b]", "sum", "layers[4].inputs[1]", "input 'b' is listed twice");
  expect_layer_error("inputs: [sum, a]", "inputs: [sum, zz]", "flat", "layers[5].inputs[1]",
                     "no layer named 'zz' before this one");
  expect_value_error("inputs: [b, skip]", "inputs: [b]", "layers[4].inputs", "caps_add needs at least two inputs");
  expect_value_error("inputs: [b, skip]", "inputs: b", "layers[4].inputs", "expected a list of layer names");
  expect_value_error("inputs: [sum, a]", "inputs: []", "layers[5].inputs", "expected a non-empty list");
  expect_value_error("inputs: [sum, a]", "inputs: [sum, 2x]", "layers[5].inputs[1]", "expected a layer name");
  // caps_add has no default input.
  expect_input_error([&] { parse(replace(kCell, "    inputs: [b, skip]\n", "")); }, kFile,
                     line_of(kCell, "- name: sum\n"), "layers[4].inputs", "missing");
}

TEST(NetworkDeepCaps, ShapeErrors) {
  // Added capsules must be capsules of the same shape.
  expect_layer_error("inputs: [b, skip]", "inputs: [b, conv1]", "sum", "layers[4].inputs[1]",
                     "caps_add adds capsules, but layer 'conv1' outputs a feature map 4x8x8");
  expect_layer_error("inputs: [sum, a]", "inputs: [sum, conv1]", "flat", "layers[5].inputs[1]",
                     "flatten_caps needs capsules, but layer 'conv1' outputs a feature map");
  const std::string wide = replace(kCell, "    input: a\n    capsule_types: 2\n    capsule_dim: 3\n    kernel: 3\n    padding: 1\n  - name: sum",
                                   "    input: a\n    capsule_types: 2\n    capsule_dim: 4\n    kernel: 3\n    padding: 1\n  - name: sum");
  expect_input_error([&] { parse(wide); }, kFile, line_of(wide, "- name: sum\n"), "layers[4].inputs[1]",
                     "layer 'skip' outputs 32 capsules x 3-D (2 types x 4x4), but layer 'b' outputs 32 capsules x 4-D "
                     "(2 types x 4x4): added capsules must have the same shape");
  const std::string cat = replace(wide, "inputs: [b, skip]", "inputs: [b, b2]");
  const std::string cat2 = replace(cat, "  - name: sum\n", R"(  - name: b2
    type: conv_caps2d
    input: a
    capsule_types: 2
    capsule_dim: 4
    kernel: 3
    padding: 1
  - name: sum
)");
  const std::string cat3 = replace(cat2, "inputs: [sum, a]", "inputs: [sum, skip]");
  expect_input_error([&] { parse(cat3); }, kFile, line_of(cat3, "- name: flat\n"), "layers[6].inputs[1]",
                     "layer 'skip' outputs 3-D capsules, but layer 'sum' outputs 4-D ones");
  // Convolutions over capsules need a grid; flat capsules have none.
  expect_layer_error("  - name: classcaps\n    type: class_caps\n    num_capsules: 3\n    capsule_dim: 4\n",
                     "  - name: classcaps\n    type: conv_caps2d\n    capsule_types: 3\n    capsule_dim: 4\n    kernel: 1\n",
                     "classcaps", "layers[6].type",
                     "a conv_caps2d layer needs a capsule grid (types x height x width) or a feature map, but layer "
                     "'flat' outputs 64 capsules x 3-D without a grid");
  expect_layer_error("    input: a\n    capsule_types: 2\n    capsule_dim: 3\n    kernel: 3\n", 
                     "    input: a\n    capsule_types: 2\n    capsule_dim: 3\n    kernel: 7\n", "skip",
                     "layers[2].kernel", "kernel 7x7 does not fit its 4x4 input from layer 'a' (padding 1)");
  // A plain conv2d cannot read capsules (unchanged rule).
  expect_layer_error("  - name: classcaps\n    type: class_caps\n    num_capsules: 3\n    capsule_dim: 4\n",
                     "  - name: classcaps\n    type: conv2d\n    out_channels: 3\n    kernel: 1\n", "classcaps",
                     "layers[6].type", "convolutions cannot follow capsule layers");
}

TEST(NetworkDeepCaps, FieldErrors) {
  expect_value_error("    stride: 2\n    padding: 1\n", "    stride: 2\n    padding: 1\n    activation: relu\n",
                     "layers[1].activation", "conv_caps2d layers always squash", "activation: relu");
  expect_value_error("    kernel: 3\n    padding: 1\n  - name: b", "    kernel: 3\n    padding: 1\n    routing_iterations: 0\n  - name: b",
                     "layers[2].routing_iterations", "", "routing_iterations: 0");
  expect_value_error("inputs: [b, skip]\n", "inputs: [b, skip]\n    groups: 3\n", "layers[4]",
                     "unknown key 'groups' (allowed: name, type, inputs)", "groups: 3");
  expect_value_error("    capsule_types: 2\n    capsule_dim: 3\n    kernel: 3\n    stride: 2",
                     "    capsule_types: 0\n    capsule_dim: 3\n    kernel: 3\n    stride: 2", "layers[1].capsule_types", "",
                     "capsule_types: 0");
  expect_value_error("    input: a\n    capsule_types: 2\n    capsule_dim: 3\n    kernel: 3\n    padding: 1\n  - name: b",
                     "    input: [a]\n    capsule_types: 2\n    capsule_dim: 3\n    kernel: 3\n    padding: 1\n  - name: b",
                     "layers[2].input", "expected a layer name");
}

}  // namespace
}  // namespace capsgen
