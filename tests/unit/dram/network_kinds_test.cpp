// The network format's CNN kinds (grouped/depthwise conv2d, max_pool, avg_pool, fc): bundled
// AlexNet/VGG-16/MobileNet, shapes, weights, errors, the DRAM layer view, and the golden models'
// rejection of these kinds.
#include <gtest/gtest.h>

#include "core/input_error.hpp"
#include "golden/float_model.hpp"
#include "model/network.hpp"
#include "romanet/layer_model.hpp"
#include "weights/weight_set.hpp"

namespace capsgen {
namespace {

const std::string kRepo = CAPSGEN_REPO_ROOT;
constexpr const char* kFile = "models/t.yaml";

long long parameters(const Network& n) {
  long long p = 0;
  for (const WeightSpec& s : expected_weights(n)) {
    long long e = 1;
    for (std::size_t d : s.shape) e *= static_cast<long long>(d);
    p += e;
  }
  return p;
}

void expect_error(const std::string& text, const std::string& field, const std::string& fragment) {
  try {
    parse_network(text, kFile);
    ADD_FAILURE() << "expected an error: " << fragment;
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), field) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    EXPECT_GT(e.line(), 0) << e.what();
  }
}

TEST(NetworkKinds, AlexNet) {
  const Network n = load_network(kRepo + "/models/alexnet.yaml");
  ASSERT_EQ(n.layers.size(), 11u);
  EXPECT_EQ(n.layers[0].out.str(), "96x55x55");
  EXPECT_EQ(n.layers[1].kind, LayerKind::MaxPool);
  EXPECT_EQ(n.layers[1].stride, 2);
  EXPECT_EQ(n.layers[7].out.str(), "256x6x6");
  const Layer& fc6 = n.layers[8];
  EXPECT_EQ(fc6.kind, LayerKind::FullyConnected);
  EXPECT_EQ(fc6.in.elements(), 9216);
  EXPECT_EQ(fc6.out.str(), "4096x1x1");
  EXPECT_EQ(n.layers[10].activation, Activation::None);
  EXPECT_EQ(parameters(n), 62378344);
  const auto w = expected_weights(n);
  EXPECT_EQ(w[10].key, "fc6.weight");
  EXPECT_EQ(w[10].shape, (std::vector<std::size_t>{4096, 9216}));
  EXPECT_EQ(w[11].key, "fc6.bias");
}

TEST(NetworkKinds, Vgg16AndMobileNet) {
  const Network v = load_network(kRepo + "/models/vgg16.yaml");
  EXPECT_EQ(v.layers.size(), 21u);
  EXPECT_EQ(parameters(v), 138357544);  // the published VGG-16 parameter count
  EXPECT_EQ(v.find("fc6")->in.elements(), 25088);
  const Network m = load_network(kRepo + "/models/mobilenet.yaml");
  EXPECT_EQ(m.layers.size(), 29u);
  const Layer* dw2 = m.find("dw2");
  ASSERT_NE(dw2, nullptr);
  EXPECT_EQ(dw2->groups, 64);
  EXPECT_EQ(dw2->out.str(), "64x56x56");
  EXPECT_EQ(m.find("pool")->out.str(), "1024x1x1");
  EXPECT_EQ(m.find("fc")->in.elements(), 1024);
  // 3,185,088 convolution weights + 10,944 convolution biases (batch norm folded) + 1,025,000 fc.
  EXPECT_EQ(parameters(m), 3185088 + 10944 + 1025000);
  for (const WeightSpec& s : expected_weights(m)) {
    if (s.key == "dw1.weight") {
      EXPECT_EQ(s.shape, (std::vector<std::size_t>{32, 1, 3, 3}));
    }
  }
}

TEST(NetworkKinds, DramLayerView) {
  std::vector<std::string> notes;
  const auto layers = romanet::dram_layers(load_network(kRepo + "/models/mobilenet.yaml"), &notes);
  EXPECT_EQ(layers.size(), 28u);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("pool"), std::string::npos);
  EXPECT_EQ(layers[1].op, romanet::OpKind::Depthwise);
  EXPECT_EQ(layers[1].weight_elements(), 32 * 9);
  EXPECT_EQ(layers.back().op, romanet::OpKind::FullyConnected);
  const auto caps = romanet::dram_layers(load_network(kRepo + "/models/capsnet-mnist.yaml"));
  ASSERT_EQ(caps.size(), 3u);
  EXPECT_EQ(caps[1].op, romanet::OpKind::Conv);  // primary_caps is a convolution
  EXPECT_EQ(caps[2].op, romanet::OpKind::CapsPredict);
  EXPECT_EQ(caps[2].M, 1152);
  EXPECT_EQ(caps[2].I, 8);
  EXPECT_EQ(caps[2].J, 160);
  EXPECT_EQ(caps[2].weight_elements(), 1152LL * 10 * 16 * 8);
  // Grouped but not depthwise: the DRAM model refuses it.
  const std::string grouped = R"(name: g
input: {channels: 8, height: 6, width: 6}
layers:
  - {name: c, type: conv2d, out_channels: 8, kernel: 3, groups: 2}
)";
  const Network gn = parse_network(grouped, kFile);
  EXPECT_EQ(expected_weights(gn)[0].shape, (std::vector<std::size_t>{8, 4, 3, 3}));
  EXPECT_THROW(romanet::dram_layers(gn), InputError);
}

TEST(NetworkKinds, Errors) {
  const std::string head = "name: n\ninput: {channels: 4, height: 8, width: 8}\nlayers:\n";
  expect_error(head + "  - {name: c, type: conv2d, out_channels: 6, kernel: 3, groups: 4}\n", "layers[0].groups",
               "groups 4 must divide the 4 input channels from the network input and the 6 output channels");
  expect_error(head + "  - {name: p, type: max_pool, kernel: 9}\n", "layers[0].kernel",
               "window 9x9 does not fit its 8x8 input");
  expect_error(head + "  - {name: p, type: max_pool, kernel: [2, 3]}\n", "layers[0].kernel",
               "needs an explicit stride");
  expect_error(head + "  - {name: p, type: avg_pool, kernel: 2, padding: 2}\n", "layers[0].padding",
               "padding 2 is more than half the 2x2 window");
  expect_error(head + "  - {name: f, type: fc, out_features: 10, kernel: 3}\n", "layers[0]",
               "unknown key 'kernel' (allowed: name, type, out_features, bias, activation)");
  expect_error(head + "  - {name: f, type: fc, out_features: 0}\n", "layers[0].out_features",
               "expected an integer in [1, 16777216], got 0");
  expect_error(head + "  - {name: f, type: fcc, out_features: 3}\n", "layers[0].type",
               "expected one of conv2d, primary_caps, class_caps, conv_caps2d, conv_caps3d, caps_add, flatten_caps, "
               "got 'fcc' (CNN layers for the analytic tools: "
               "max_pool, avg_pool, fc)");
  expect_error(head +
                   "  - {name: c, type: conv2d, out_channels: 8, kernel: 3}\n"
                   "  - {name: p, type: primary_caps, capsule_types: 2, capsule_dim: 4, kernel: 3}\n"
                   "  - {name: f, type: fc, out_features: 3}\n",
               "layers[2].type", "an fc layer needs a feature map");
  expect_error(head +
                   "  - {name: c, type: conv2d, out_channels: 8, kernel: 3}\n"
                   "  - {name: p, type: primary_caps, capsule_types: 2, capsule_dim: 4, kernel: 3}\n"
                   "  - {name: q, type: max_pool, kernel: 2}\n",
               "layers[2].type", "a max_pool layer needs a feature map");
  // Pools: stride defaults to the window, shapes floor.
  const Network n = parse_network(head + "  - {name: p, type: max_pool, kernel: 3}\n  - {name: f, type: fc, out_features: 5, bias: false}\n", kFile);
  EXPECT_EQ(n.layers[0].out.str(), "4x2x2");
  EXPECT_EQ(expected_weights(n).size(), 1u);
  EXPECT_EQ(expected_weights(n)[0].shape, (std::vector<std::size_t>{5, 16}));
}

TEST(NetworkKinds, GoldenModelsRejectThem) {
  const Network n = load_network(kRepo + "/models/alexnet.yaml");
  EXPECT_FALSE(is_capsnet_layer(n.layers[1]));
  EXPECT_TRUE(is_capsnet_layer(n.layers[0]));
  try {
    require_capsnet_layers(n, "the golden model");
    ADD_FAILURE() << "expected an error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "layers[1].type");
    EXPECT_EQ(e.line(), n.layers[1].line);
    EXPECT_NE(std::string(e.what()).find("layer 'pool1': the golden model runs conv2d (groups 1), primary_caps and "
                                         "class_caps layers (and the DeepCaps kinds) only, not 'max_pool' layers"),
              std::string::npos)
        << e.what();
  }
  // The float model checks before touching weights or the input.
  EXPECT_THROW(run_float(n, WeightSet{}, FloatTensor({3, 227, 227})), InputError);
  const Network m = load_network(kRepo + "/models/mobilenet.yaml");
  try {
    require_capsnet_layers(m, "the golden model");
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("grouped conv2d (groups 32)"), std::string::npos) << e.what();
  }
  // random_weights handles fc weights ([out, in]).
  const Network small = parse_network(
      "name: s\ninput: {channels: 2, height: 4, width: 4}\nlayers:\n  - {name: f, type: fc, out_features: 3}\n", kFile);
  const WeightSet w = random_weights(small, 1);
  EXPECT_EQ(w.at("f.weight").shape, (std::vector<std::size_t>{3, 32}));
  EXPECT_EQ(w.at("f.bias").shape, (std::vector<std::size_t>{3}));
  // CapsNets are unaffected.
  EXPECT_NO_THROW(require_capsnet_layers(load_network(kRepo + "/models/capsnet-mnist.yaml"), "x"));
}

}  // namespace
}  // namespace capsgen
