// Network descriptions: bundled models, shape inference, expected weights, errors.
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
constexpr const char* kFile = "models/t.yaml";

const std::string kBase = R"(name: net
input: {channels: 1, height: 12, width: 12}
layers:
  - name: conv1
    type: conv2d
    out_channels: 8
    kernel: 5
  - name: primary
    type: primary_caps
    capsule_types: 4
    capsule_dim: 4
    kernel: 3
    stride: 2
  - name: classcaps
    type: class_caps
    num_capsules: 5
    capsule_dim: 8
)";

Network parse(const std::string& text) { return parse_network(text, kFile); }

void expect_edit_error(const std::string& from, const std::string& to, const std::string& field,
                       const std::string& fragment, const std::string& marker = "") {
  const std::string text = replace(kBase, from, to);
  expect_input_error([&] { parse(text); }, kFile, line_of(text, marker.empty() ? to : marker), field, fragment);
}

Shape shape_of(const std::vector<WeightSpec>& specs, const std::string& key) {
  for (const auto& s : specs) {
    if (s.key == key) return s.shape;
  }
  ADD_FAILURE() << "no weight " << key;
  return {};
}

TEST(Network, CapsNetMnist) {
  const Network net = load_network(kRepo + "/models/capsnet-mnist.yaml");
  EXPECT_EQ(net.name, "capsnet-mnist");
  ASSERT_EQ(net.layers.size(), 3u);
  EXPECT_EQ(net.input.str(), "1x28x28");

  const Layer& conv1 = net.layers[0];
  EXPECT_EQ(conv1.kind, LayerKind::Conv2d);
  EXPECT_EQ(conv1.activation, Activation::Relu);
  EXPECT_TRUE(conv1.bias);
  EXPECT_FALSE(conv1.out.capsules);
  EXPECT_EQ(conv1.out.channels, 256);
  EXPECT_EQ(conv1.out.height, 20);
  EXPECT_EQ(conv1.out.width, 20);
  EXPECT_EQ(conv1.out.elements(), 256 * 20 * 20);

  const Layer& primary = net.layers[1];
  EXPECT_EQ(primary.kind, LayerKind::PrimaryCaps);
  EXPECT_EQ(primary.activation, Activation::Squash);
  EXPECT_EQ(primary.out_channels, 256);
  EXPECT_EQ(primary.stride, 2);
  EXPECT_TRUE(primary.out.capsules);
  EXPECT_EQ(primary.out.count, 1152);
  EXPECT_EQ(primary.out.dim, 8);
  EXPECT_EQ(primary.out.grid_types, 32);
  EXPECT_EQ(primary.out.height, 6);
  EXPECT_EQ(primary.out.width, 6);
  EXPECT_EQ(primary.out.str(), "1152 capsules x 8-D (32 types x 6x6)");

  const Layer& cc = net.layers[2];
  EXPECT_EQ(cc.kind, LayerKind::ClassCaps);
  EXPECT_EQ(cc.routing_iterations, 3);
  EXPECT_EQ(cc.in.count, 1152);
  EXPECT_EQ(cc.out.count, 10);
  EXPECT_EQ(cc.out.dim, 16);
  EXPECT_EQ(cc.out.str(), "10 capsules x 16-D");

  const auto w = expected_weights(net);
  ASSERT_EQ(w.size(), 5u);
  EXPECT_EQ(shape_of(w, "conv1.weight"), (Shape{256, 1, 9, 9}));
  EXPECT_EQ(shape_of(w, "conv1.bias"), (Shape{256}));
  EXPECT_EQ(shape_of(w, "primary.weight"), (Shape{256, 256, 9, 9}));
  EXPECT_EQ(shape_of(w, "primary.bias"), (Shape{256}));
  EXPECT_EQ(shape_of(w, "classcaps.W"), (Shape{1152, 10, 16, 8}));
  EXPECT_EQ(w[4].layer, &net.layers[2]);

  EXPECT_EQ(net.find("primary"), &net.layers[1]);
  EXPECT_EQ(net.find("nope"), nullptr);
}

TEST(Network, CapsNetTiny) {
  const Network net = load_network(kRepo + "/models/capsnet-tiny.yaml");
  ASSERT_EQ(net.layers.size(), 3u);
  EXPECT_EQ(net.input.str(), "1x12x12");
  EXPECT_EQ(net.layers[0].out.str(), "8x8x8");
  EXPECT_EQ(net.layers[1].out.count, 36);
  EXPECT_EQ(net.layers[1].out.dim, 4);
  EXPECT_EQ(net.layers[1].out.height, 3);
  EXPECT_EQ(net.layers[2].out.count, 5);
  EXPECT_EQ(net.layers[2].out.dim, 8);
  EXPECT_EQ(net.layers[2].routing_iterations, 3);
  const auto w = expected_weights(net);
  EXPECT_EQ(shape_of(w, "classcaps.W"), (Shape{36, 5, 8, 4}));
  EXPECT_EQ(shape_of(w, "primary.weight"), (Shape{16, 8, 3, 3}));
}

TEST(Network, CapsNetSmall) {
  const Network net = load_network(kRepo + "/models/capsnet-small.yaml");
  ASSERT_EQ(net.layers.size(), 3u);
  EXPECT_EQ(net.layers[0].out.str(), "32x20x20");
  EXPECT_EQ(net.layers[1].out.count, 288);
  EXPECT_EQ(net.layers[1].out.grid_types, 8);
  EXPECT_EQ(net.layers[2].out.count, 10);
  EXPECT_EQ(net.layers[2].out.dim, 16);
  const auto w = expected_weights(net);
  EXPECT_EQ(shape_of(w, "primary.weight"), (Shape{64, 32, 9, 9}));
  EXPECT_EQ(shape_of(w, "classcaps.W"), (Shape{288, 10, 16, 8}));
}

TEST(Network, DefaultsAndOptions) {
  const Network net = parse(kBase);
  EXPECT_EQ(net.layers[0].stride, 1);
  EXPECT_EQ(net.layers[0].padding, 0);
  EXPECT_TRUE(net.layers[0].bias);
  EXPECT_EQ(net.layers[0].activation, Activation::Relu);
  EXPECT_EQ(net.layers[2].routing_iterations, 3);
  EXPECT_EQ(net.layers[0].line, 4);
  EXPECT_EQ(net.layers[1].line, 8);
  EXPECT_EQ(net.description, "");

  // Rectangular kernel, padding, no bias, no activation.
  std::string text = replace(kBase, "    kernel: 5\n", "    kernel: [5, 3]\n    padding: 1\n    bias: false\n    activation: none\n");
  Network n2 = parse(text);
  EXPECT_EQ(n2.layers[0].kernel_h, 5);
  EXPECT_EQ(n2.layers[0].kernel_w, 3);
  EXPECT_EQ(n2.layers[0].activation, Activation::None);
  EXPECT_EQ(n2.layers[0].out.str(), "8x10x12");  // (12+2-5)+1 = 10, (12+2-3)+1 = 12
  const auto w = expected_weights(n2);
  EXPECT_EQ(shape_of(w, "conv1.weight"), (Shape{8, 1, 5, 3}));
  EXPECT_EQ(w.size(), 4u);  // no conv1.bias

  // primary_caps accepts 'activation: squash' and nothing else.
  EXPECT_NO_THROW(parse(replace(kBase, "    stride: 2\n", "    stride: 2\n    activation: squash\n")));
  EXPECT_STREQ(to_string(LayerKind::PrimaryCaps), "primary_caps");
  EXPECT_STREQ(to_string(Activation::Relu), "relu");
}

TEST(Network, StackedClassCaps) {
  const std::string text = kBase + "  - name: cc2\n    type: class_caps\n    num_capsules: 3\n    capsule_dim: 4\n";
  const Network net = parse(text);
  EXPECT_EQ(shape_of(expected_weights(net), "cc2.W"), (Shape{5, 3, 4, 8}));
}

TEST(Network, DuplicateName) {
  const std::string text = replace(kBase, "  - name: classcaps", "  - name: conv1");
  expect_input_error([&] { parse(text); }, kFile, line_of(text, "  - name: conv1\n    type: class_caps"), "layers[2].name",
                     "duplicate layer name 'conv1' (first used by layers[0] at line 4)");
}

TEST(Network, BadType) {
  expect_edit_error("    type: conv2d", "    type: conv3d", "layers[0].type",
                    "expected one of conv2d, primary_caps, class_caps, conv_caps2d, conv_caps3d, caps_add, flatten_caps, "
                    "got 'conv3d'");
  const std::string text = replace(kBase, "    type: conv2d\n", "");
  expect_input_error([&] { parse(text); }, kFile, 4, "layers[0].type", "missing required field");
}

TEST(Network, KernelLargerThanInput) {
  const std::string text = replace(kBase, "    kernel: 3\n", "    kernel: 9\n");
  expect_input_error([&] { parse(text); }, kFile, line_of(text, "  - name: primary"), "layers[1].kernel",
                     "layer 'primary': kernel 9x9 does not fit its 8x8 input from layer 'conv1' (padding 0)");
  expect_edit_error("    kernel: 5", "    kernel: 13", "layers[0].kernel",
                    "layer 'conv1': kernel 13x13 does not fit its 12x12 input from the network input", "  - name: conv1");
  // Padding makes it fit: 12 + 2*3 - 13 + 1 = 6.
  const Network net = parse(replace(kBase, "    kernel: 5\n", "    kernel: 13\n    padding: 3\n    stride: 1\n"));
  EXPECT_EQ(net.layers[0].out.str(), "8x6x6");
  EXPECT_EQ(net.layers[1].out.count, 4 * 2 * 2);
}

TEST(Network, ConvAfterCapsules) {
  const std::string text = kBase + "  - name: conv2\n    type: conv2d\n    out_channels: 4\n    kernel: 1\n";
  expect_input_error([&] { parse(text); }, kFile, line_of(text, "  - name: conv2"), "layers[3].type",
                     "layer 'conv2': a conv2d layer needs a feature map, but layer 'classcaps' outputs 5 capsules x 8-D");
}

TEST(Network, ClassCapsNeedsCapsules) {
  const std::string direct = R"(name: net
input: {channels: 1, height: 12, width: 12}
layers:
  - name: conv1
    type: conv2d
    out_channels: 8
    kernel: 5
  - name: classcaps
    type: class_caps
    num_capsules: 5
    capsule_dim: 8
)";
  expect_input_error([&] { parse(direct); }, kFile, 8, "layers[1].type",
                     "layer 'classcaps': class_caps needs capsules, but layer 'conv1' outputs a feature map 8x8x8");
}

TEST(Network, EmptyOrMissingLayers) {
  expect_input_error([&] { parse("name: net\ninput: {channels: 1, height: 4, width: 4}\nlayers: []\n"); }, kFile, 3,
                     "layers", "expected a non-empty list of layers");
  expect_input_error([&] { parse("name: net\ninput: {channels: 1, height: 4, width: 4}\nlayers:\n"); }, kFile, 3,
                     "layers", "expected a list, got nothing");
  expect_input_error([&] { parse("name: net\ninput: {channels: 1, height: 4, width: 4}\n"); }, kFile, 1, "layers",
                     "missing required field");
}

TEST(Network, FieldErrors) {
  expect_edit_error("    out_channels: 8", "    out_channels: 0", "layers[0].out_channels",
                    "expected an integer in [1, 65536], got 0");
  expect_edit_error("    kernel: 5", "    kernel: [5, 5, 5]", "layers[0].kernel",
                    "expected an integer or a list [kh, kw], got a list of 3");
  expect_edit_error("    kernel: 5", "    kernel: [5, x]", "layers[0].kernel[1]", "expected an integer in [1, 65536], got 'x'");
  expect_edit_error("    stride: 2", "    stride: 0", "layers[1].stride", "expected an integer in [1, 65536], got 0");
  expect_edit_error("    capsule_dim: 8", "    capsule_dim: 8\n    routing_iterations: 0", "layers[2].routing_iterations",
                    "expected an integer in [1, 32], got 0", "routing_iterations");
  // Caps (docs/limits.md): each used to be accepted and to fail later or run for hours.
  expect_edit_error("    capsule_dim: 8", "    capsule_dim: 8\n    routing_iterations: 65537", "layers[2].routing_iterations",
                    "expected an integer in [1, 32], got 65537", "routing_iterations");
  expect_edit_error("    capsule_dim: 8", "    capsule_dim: 65536", "layers[2].capsule_dim",
                    "expected an integer in [1, 256], got 65536");
  // Padding used to wrap the output size around (1073741825 gave 8x1x1).
  expect_edit_error("    kernel: 5", "    kernel: 5\n    padding: 1073741825", "layers[0].padding",
                    "expected an integer in [0, 65536], got 1073741825", "    padding: 1073741825");
  expect_edit_error("    kernel: 5", "    kernel: 5\n    padding: 32765", "layers[0].padding",
                    "layer 'conv1': output 65538x65538 exceeds the 65536 limit", "  - name: conv1");
  expect_edit_error("  - name: conv1", "  - name: Conv-1", "layers[0].name",
                    "expected a lower-case identifier ([a-z_][a-z0-9_]*), got 'Conv-1'");
  expect_edit_error("    stride: 2", "    stride: 2\n    activation: relu", "layers[1].activation",
                    "primary_caps layers always squash; expected 'squash', got 'relu'", "activation: relu");
  expect_edit_error("input: {channels: 1,", "input: {channels: 0,", "input.channels", "expected an integer in [1, 65536], got 0");
}

TEST(Network, UnknownKeys) {
  // A key of another layer type is unknown for this one.
  expect_edit_error("    num_capsules: 5", "    num_capsules: 5\n    stride: 7", "layers[2]",
                    "unknown key 'stride' (allowed: name, type, num_capsules, capsule_dim, routing_iterations)",
                    "stride: 7");
  expect_edit_error("    out_channels: 8", "    out_chanels: 8", "layers[0]",
                    "unknown key 'out_chanels' (did you mean 'out_channels'?");
  expect_edit_error("name: net", "name: net\nweights: x.npz", "", "unknown key 'weights' (allowed: name, description, input, layers)",
                    "weights:");
  expect_edit_error("input: {channels: 1,", "input: {chanels: 1,", "input", "unknown key 'chanels'");
}

TEST(Network, SyntaxErrorAndMissingFile) {
  const std::string text = replace(kBase, "    kernel: 3", "    kernel: [3, 3");
  expect_input_error([&] { parse(text); }, kFile, line_of(text, "    stride: 2"), "", "YAML syntax error");
  const std::string path = kRepo + "/models/no-such-net.yaml";
  expect_input_error([&] { load_network(path); }, path, 0, "", "cannot open file");
}

TEST(Network, InferShapesOnProgrammaticNetwork) {
  Network net;
  net.input.channels = 2;
  net.input.height = 5;
  net.input.width = 5;
  Layer conv;
  conv.name = "c";
  conv.kind = LayerKind::Conv2d;
  conv.out_channels = 3;
  conv.kernel_h = conv.kernel_w = 3;
  net.layers.push_back(conv);
  infer_shapes(net);
  EXPECT_EQ(net.layers[0].out.str(), "3x3x3");
  EXPECT_EQ(net.layers[0].in.str(), "2x5x5");
  net.layers[0].stride = 0;
  expect_input_error([&] { infer_shapes(net); }, "", 0, "layers[0].stride", "layer 'c': stride must be >= 1");
}

}  // namespace
}  // namespace capsgen
