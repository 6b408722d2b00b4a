// ROMANet's view of a network layer (docs/romanet.md): the tiled loop nest of Fig. 4 with four tile
// loops, its data types and reuse factors (Eq. 4-6), and the reuse priority orders of Table I and
// Alg. 2 with the schedule (loop order) each order stands for.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "model/network.hpp"

namespace capsgen::romanet {

// Tile loops: h over ofmap rows (tile Tm), w over ofmap columns (Tn), i over input channels (Ti),
// j over output channels (Tj).
enum Dim : int { kDimH = 0, kDimW = 1, kDimI = 2, kDimJ = 3 };
enum DataType : int { kIfmap = 0, kWeight = 1, kOfmap = 2 };
const char* dim_name(int d);        // "h", "w", "i", "j"
const char* data_type_name(int t);  // "ifmaps", "weights", "ofmaps"

enum class OpKind {
  Conv,            // conv2d (groups 1), primary_caps: ifmaps {h,w,i}, weights {i,j} x PxQ, ofmaps {h,w,j}
  Depthwise,       // conv2d with groups == in == out channels: ifmaps {h,w,j}, weights {j} x PxQ, ofmaps {h,w,j}
  FullyConnected,  // fc: Conv with H = W = M = N = P = Q = 1
  CapsPredict,     // class_caps: u_hat[i][j] = W[i][j] u_i, each input capsule a position with its own weights:
                   // ifmaps {h,w,i}, weights {h,w,i,j}, ofmaps {h,w,j}
};
const char* to_string(OpKind k);

struct LayerGeometry {
  std::string name;
  std::string layer_kind;  // the network layer type
  OpKind op = OpKind::Conv;
  int H = 1, W = 1, I = 1;  // ifmaps: height, width, channels (without padding)
  int J = 1;                // ofmap channels
  int M = 1, N = 1;         // ofmap height and width
  int P = 1, Q = 1;         // kernel height and width
  int stride = 1, pad = 0;
  // class_caps: dynamic routing after the predictions (docs/romanet.md, "CapsNet layers").
  int routing_iterations = 0;
  int routing_out = 0;  // elements of v (num_capsules x capsule_dim), written once

  bool depthwise() const { return op == OpKind::Depthwise; }
  // Extent of the i loop: input channels, or 1 for depthwise layers (their channel loop is j).
  int loop_i() const { return depthwise() ? 1 : I; }
  bool depends(int type, int dim) const;
  // Element counts of the whole tensors.
  long long ifmap_elements() const { return static_cast<long long>(H) * W * I; }
  long long weight_elements() const;
  long long ofmap_elements() const { return static_cast<long long>(M) * N * J; }
  long long macs() const;
  std::string shape_str() const;
};

// The layers the DRAM tools model, in network order. Pools are skipped (no weights: a layout step;
// their reads and writes are not counted, as in ROMANet which covers CONV and FC layers): each one
// adds a line to `notes`. Grouped convolutions other than depthwise throw InputError.
std::vector<LayerGeometry> dram_layers(const Network& net, std::vector<std::string>* notes = nullptr);

// Eq. 4-6, generalized: RF_ifmaps = ceil(P/str) ceil(Q/str) J' (J' = output channels fed by one input
// channel: J, or 1 for depthwise); RF_weights = ceil((H+2pad-P+1)/str) ceil((W+2pad-Q+1)/str) (the
// padded input, = M x N; 1 for class_caps, whose weights belong to one input capsule);
// RF_ofmaps = P Q I' (I' = input channels per output channel: I, or 1 for depthwise).
struct ReuseFactors {
  double ifmaps = 0, weights = 0, ofmaps = 0;
  double of(int type) const { return type == kIfmap ? ifmaps : type == kWeight ? weights : ofmaps; }
};
ReuseFactors reuse_factors(const LayerGeometry& g);

// Table I: order k (1..6) lists the data types from the highest reuse priority to the lowest.
std::array<int, 3> reuse_priority(int order);
// Alg. 2, line 5: sort the reuse factors (highest first; ties keep ifmaps, weights, ofmaps). Returns 1..6.
int reuse_priority_order(const ReuseFactors& rf);

// A schedule: the tile loops from the outermost to the innermost.
struct Schedule {
  int order = 0;  // Table I order it derives from (0: none)
  std::array<int, 4> loops{kDimH, kDimW, kDimI, kDimJ};
  std::string loops_str() const;  // "h,w,i,j"
  std::string name() const;       // "ofmaps>weights>ifmaps (j,h,w,i)"
};
// The schedule of a reuse priority order (Fig. 14): the loops a higher-priority data type does not
// index go innermost, so its tile stays on chip while they run; h stays outside w.
Schedule schedule_for_order(int order);
// Alg. 2 over a network: the distinct orders of its layers, ascending.
std::vector<int> network_orders(const std::vector<LayerGeometry>& layers);

}  // namespace capsgen::romanet
