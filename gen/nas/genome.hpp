// The genome of NASCaps' CapsNet-like search space (docs/nas.md section 2): a list of layer
// descriptors in the paper's style (Marchisio et al., NASCaps, Section 3.1), decoded into a capsgen
// network description (models/*.yaml). The list is one or more conv layers, one primary-capsule
// layer and one or more class-capsule layers (fully connected capsules with dynamic routing), the
// last with one capsule per class. Input shapes are not stored: the decoder and repair() derive
// every layer's input from the one before it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/rng.hpp"

namespace capsgen::nas {

// The layer kinds. Conv, PrimaryCaps and ClassCaps make CapsNet-like networks; CapsCell is DeepCaps'
// block (docs/deepcaps.md): a ConvCaps2D layer with the cell's stride whose output feeds two
// branches, two more ConvCaps2D layers in sequence and one parallel layer (ConvCaps2D, or ConvCaps3D
// with dynamic routing), their outputs added.
enum class GeneKind { Conv, PrimaryCaps, ClassCaps, CapsCell };
const char* to_string(GeneKind k);

// One layer descriptor. Conv: kernel, stride, channels (output channels). PrimaryCaps: kernel,
// stride, channels (capsule types), caps_dim. ClassCaps: caps_count (output capsules), caps_dim,
// routing (iterations). CapsCell: kernel (of all four layers, "same" padding), stride (of its first
// layer), channels (capsule types), caps_dim, routing (0: the parallel layer is ConvCaps2D; n > 0:
// it is ConvCaps3D with n routing iterations). Fields a kind does not use stay 0.
struct LayerGene {
  GeneKind kind = GeneKind::Conv;
  int kernel = 0, stride = 0, channels = 0;
  int caps_dim = 0, caps_count = 0, routing = 0;
  bool operator==(const LayerGene&) const = default;
};

// The layers and NASCaps' skip-connection term. skip = 0: FlattenCaps reads the last CapsCell only;
// skip = k >= 1: the k-th CapsCell's capsules are concatenated after the last cell's (DeepCaps' skip
// from its third cell), which needs k below the cell count and the two cells' capsule dimensions
// equal.
struct Genome {
  std::vector<LayerGene> layers;
  int skip = 0;
  bool operator==(const Genome&) const = default;
};

// The choices of every gene, the input and the class count.
struct SearchSpace {
  int in_channels = 1, in_height = 28, in_width = 28;
  int classes = 10;
  int min_convs = 1, max_convs = 3;
  int max_class_caps = 2;  // class-capsule layers, the last one included
  // CapsCells per network: a count drawn from [min_cells, max_cells]; 0 means a PrimaryCaps layer
  // instead (a CapsNet-like network). The default space has no cells.
  int min_cells = 0, max_cells = 0;
  std::vector<int> conv_kernels{3, 5, 7, 9}, conv_strides{1, 2}, conv_channels{16, 32, 64, 128, 256};
  std::vector<int> primary_kernels{3, 5, 7, 9}, primary_strides{1, 2}, primary_types{4, 8, 16, 32},
      primary_dims{4, 8};
  std::vector<int> caps_counts{8, 16, 32};  // class-capsule layers before the last
  std::vector<int> class_dims{8, 16}, routing{1, 2, 3};
  std::vector<int> cell_kernels{3, 5}, cell_strides{1, 2}, cell_types{4, 8, 16, 32}, cell_dims{4, 8, 16},
      cell_routing{0, 3};
};

// The order rule: Conv+ (PrimaryCaps | CapsCell+) ClassCaps+ with the counts of the space (paper:
// at least one conv layer and two capsule layers, no conv layer after a capsule layer).
bool well_ordered(const Genome& g, const SearchSpace& s);

// A random genome: uniform layer counts, then uniform choices per gene; repaired.
Genome random_genome(const SearchSpace& s, Rng& rng);

// Repair (docs/nas.md section 2.3), in this order: every value moves to the nearest choice of its
// gene (ties: the smaller); fields the kind does not use become 0; walking the layers with the
// feature map each receives, a kernel larger than the map's smaller side becomes the largest choice
// that fits, or that side itself (conv, primary) or the smallest choice (cells, padded) when no
// choice fits, so every map stays >= 1x1; the last class-capsule layer gets one capsule per class;
// a skip that names no cell before the last, or one of another capsule dimension, becomes 0.
// Idempotent. Needs well_ordered(g).
void repair(Genome& g, const SearchSpace& s);

// Single-point crossover (paper Fig. 8): a cut point in each parent, the tails swapped. Among all
// cut pairs whose two children are well ordered, one is drawn uniformly; with none, the children
// are copies of the parents. Children are repaired.
std::pair<Genome, Genome> crossover(const Genome& a, const Genome& b, const SearchSpace& s, Rng& rng);

// Mutation: with probability p, one layer descriptor drawn uniformly and one of its parameters
// drawn uniformly gets a different value from its choices; with two or more cells the skip term is
// one more descriptor to draw, and it moves to another valid position (or none). Then repair.
// Returns whether it mutated.
bool mutate(Genome& g, const SearchSpace& s, double p, Rng& rng);

// The network description (same format as models/*.yaml) named `name`; parse_network() accepts it
// for every repaired genome.
std::string to_yaml(const Genome& g, const SearchSpace& s, const std::string& name);

// A short text of the genome, e.g. "C9s1c256 P9s2t32d8 K10d16r3", or with cells and a skip
// "C3s1c128 X3s2t32d4r0 X3s2t32d8r0 X3s2t32d8r0 X3s2t32d8r3 K10d16r3 S3" (X = CapsCell with kernel,
// stride, types, dim, 3D routing iterations; S = skip).
std::string genome_text(const Genome& g);

// Stable 64-bit hash of the genome (FNV-1a over its genes), for caches keyed by genome.
std::uint64_t genome_hash(const Genome& g);
// genome_hash as 16 hexadecimal digits (file names of a search's outputs), and the network name
// "nas-<key>" its description carries.
std::string genome_key(const Genome& g);
std::string network_name(const Genome& g);

}  // namespace capsgen::nas
