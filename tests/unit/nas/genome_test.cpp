// The CapsNet-like genome: order rule, repair, crossover and mutation, and decoding into network
// descriptions that gen/model's loader accepts (the check `capsgen validate` runs).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include <unistd.h>

#include <fmt/format.h>

#include "core/input_error.hpp"
#include "model/network.hpp"
#include "nas/genome.hpp"

namespace capsgen::nas {
namespace {

LayerGene conv(int k, int s, int c) { return {GeneKind::Conv, k, s, c, 0, 0, 0}; }
LayerGene prim(int k, int s, int t, int d) { return {GeneKind::PrimaryCaps, k, s, t, d, 0, 0}; }
LayerGene cls(int n, int d, int r) { return {GeneKind::ClassCaps, 0, 0, 0, d, n, r}; }

// Parses the decoded description as `capsgen validate --model` does (load_network = read + parse).
Network decode(const Genome& g, const SearchSpace& s) { return parse_network(to_yaml(g, s, "cand"), "cand.yaml"); }

// g is well ordered and decodes to a network that ends in one capsule per class.
void expect_valid_network(const Genome& g, const SearchSpace& s) {
  ASSERT_TRUE(well_ordered(g, s)) << genome_text(g);
  try {
    EXPECT_EQ(decode(g, s).layers.back().out.count, s.classes) << genome_text(g);
  } catch (const InputError& e) {
    FAIL() << genome_text(g) << ": " << e.what();
  }
}

TEST(NasGenome, CapsNetDecodesToCapsNetShapes) {
  const SearchSpace s;
  const Genome g{{conv(9, 1, 256), prim(9, 2, 32, 8), cls(10, 16, 3)}};
  ASSERT_TRUE(well_ordered(g, s));
  Genome r = g;
  repair(r, s);
  EXPECT_EQ(r, g);  // already legal
  const Network n = decode(g, s);
  ASSERT_EQ(n.layers.size(), 3u);
  EXPECT_EQ(n.layers[0].out.str(), "256x20x20");
  EXPECT_EQ(n.layers[1].out.count, 1152);
  EXPECT_EQ(n.layers[1].out.dim, 8);
  EXPECT_EQ(n.layers[2].out.count, 10);
  EXPECT_EQ(n.layers[2].out.dim, 16);
  EXPECT_EQ(n.layers[2].routing_iterations, 3);
  EXPECT_EQ(genome_text(g), "C9s1c256 P9s2t32d8 K10d16r3");
}

TEST(NasGenome, OrderRule) {
  const SearchSpace s;
  EXPECT_FALSE(well_ordered(Genome{{prim(3, 1, 4, 4), cls(10, 8, 1)}}, s));               // no conv
  EXPECT_FALSE(well_ordered(Genome{{conv(3, 1, 16), cls(10, 8, 1)}}, s));                 // no primary
  EXPECT_FALSE(well_ordered(Genome{{conv(3, 1, 16), prim(3, 1, 4, 4)}}, s));              // no class caps
  EXPECT_FALSE(well_ordered(Genome{{conv(3, 1, 16), prim(3, 1, 4, 4), conv(3, 1, 16), cls(10, 8, 1)}}, s));
  EXPECT_FALSE(well_ordered(Genome{{conv(3, 1, 16), prim(3, 1, 4, 4), prim(3, 1, 4, 4), cls(10, 8, 1)}}, s));
  EXPECT_FALSE(well_ordered(Genome{{conv(3, 1, 16), prim(3, 1, 4, 4), cls(8, 8, 1), cls(8, 8, 1), cls(10, 8, 1)}}, s));
  EXPECT_FALSE(well_ordered(Genome{{conv(3, 1, 16), conv(3, 1, 16), conv(3, 1, 16), conv(3, 1, 16),
                                    prim(3, 1, 4, 4), cls(10, 8, 1)}}, s));  // 4 convs > max 3
  EXPECT_TRUE(well_ordered(Genome{{conv(3, 1, 16), prim(3, 1, 4, 4), cls(8, 8, 1), cls(10, 8, 1)}}, s));
  Genome bad{{cls(10, 8, 1)}};
  EXPECT_THROW(repair(bad, s), std::invalid_argument);
}

TEST(NasGenome, RepairFitsKernelsAndSnapsValues) {
  SearchSpace s;
  s.in_height = s.in_width = 12;
  // 12 -> conv 9 s2 -> 2x2; primary kernel 9 does not fit 2: no choice <= 2, so the kernel becomes 2.
  Genome g{{conv(9, 2, 256), prim(9, 1, 32, 8), cls(7, 16, 3)}};
  repair(g, s);
  EXPECT_EQ(g.layers[1].kernel, 2);
  EXPECT_EQ(g.layers[2].caps_count, 10);  // the last layer has one capsule per class
  EXPECT_NO_THROW(decode(g, s));
  // 12 -> conv 7 s1 -> 6x6: primary kernel 9 becomes 5, the largest choice <= 6.
  Genome h{{conv(7, 1, 16), prim(9, 1, 4, 4), cls(10, 8, 1)}};
  repair(h, s);
  EXPECT_EQ(h.layers[1].kernel, 5);
  // Values off the choices move to the nearest (ties: the smaller); unused fields become 0.
  Genome v{{LayerGene{GeneKind::Conv, 4, 3, 100, 7, 7, 7}, prim(6, 2, 6, 5), cls(10, 12, 9)}};
  repair(v, s);
  EXPECT_EQ(v.layers[0], conv(3, 2, 128));
  EXPECT_EQ(v.layers[1].kernel, 5);  // 12 -> 5x5 after conv 3 s2; 5 fits
  EXPECT_EQ(v.layers[1].channels, 4);
  EXPECT_EQ(v.layers[1].caps_dim, 4);
  EXPECT_EQ(v.layers[2], cls(10, 8, 3));
  Genome again = v;
  repair(again, s);
  EXPECT_EQ(again, v);  // idempotent
}

TEST(NasGenome, RandomGenomesAllValidate) {
  const SearchSpace s;
  Rng rng(2024);
  std::set<std::string> distinct;
  for (int i = 0; i < 500; ++i) {
    const Genome g = random_genome(s, rng);
    expect_valid_network(g, s);
    distinct.insert(genome_text(g));
  }
  EXPECT_GT(distinct.size(), 450u);  // the space is large: random draws rarely repeat
}

TEST(NasGenome, DecodedFilesLoadLikeCapsgenValidate) {
  // load_network on a written file: the call `capsgen validate --model FILE` makes.
  const SearchSpace s;
  Rng rng(77);
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / fmt::format("capsgen_nas_genome_test_{}", ::getpid());
  std::filesystem::create_directories(dir);
  for (int i = 0; i < 20; ++i) {
    const Genome g = random_genome(s, rng);
    const std::string path = (dir / fmt::format("cand{}.yaml", i)).string();
    std::ofstream(path) << to_yaml(g, s, fmt::format("cand{}", i));
    const Network n = load_network(path);
    EXPECT_EQ(n.name, fmt::format("cand{}", i));
    EXPECT_EQ(n.layers.size(), g.layers.size());
    EXPECT_EQ(n.input.height, 28);
  }
  std::filesystem::remove_all(dir);
}

TEST(NasGenome, SmallInputsStillValidate) {
  SearchSpace s;
  s.in_channels = 3;
  s.in_height = 8;
  s.in_width = 10;
  Rng rng(5);
  for (int i = 0; i < 300; ++i) {
    Genome g = random_genome(s, rng);
    EXPECT_NO_THROW(decode(g, s)) << genome_text(g);
  }
}

TEST(NasGenome, CrossoverSwapsTailsAndKeepsOrder) {
  const SearchSpace s;
  const Genome a{{conv(9, 1, 256), conv(3, 1, 32), prim(9, 2, 32, 8), cls(10, 16, 3)}};
  const Genome b{{conv(5, 2, 64), prim(3, 1, 8, 4), cls(16, 8, 2), cls(10, 8, 1)}};
  Rng rng(11);
  std::set<std::string> seen;
  for (int i = 0; i < 200; ++i) {
    const auto [c1, c2] = crossover(a, b, s, rng);
    ASSERT_TRUE(well_ordered(c1, s) && well_ordered(c2, s)) << genome_text(c1) << " / " << genome_text(c2);
    // The children share the parents' layers between them (no kernel needs refitting here).
    EXPECT_EQ(c1.layers.size() + c2.layers.size(), a.layers.size() + b.layers.size());
    EXPECT_EQ(c1.layers.front(), a.layers.front());
    EXPECT_EQ(c2.layers.front(), b.layers.front());
    EXPECT_NO_THROW(decode(c1, s));
    EXPECT_NO_THROW(decode(c2, s));
    seen.insert(genome_text(c1));
  }
  // The cut pairs (i, j) whose children are both well ordered: (1,1) and (2,1) among the convs,
  // (3,2) and (3,3) among the capsule layers; c1 = a[:i] + b[j:].
  EXPECT_EQ(seen, (std::set<std::string>{"C9s1c256 P3s1t8d4 K16d8r2 K10d8r1", "C9s1c256 C3s1c32 P3s1t8d4 K16d8r2 K10d8r1",
                                         "C9s1c256 C3s1c32 P9s2t32d8 K16d8r2 K10d8r1",
                                         "C9s1c256 C3s1c32 P9s2t32d8 K10d8r1"}));
}

TEST(NasGenome, MutationChangesOneParameterWithProbabilityP) {
  const SearchSpace s;
  Rng rng(99);
  int mutated = 0, changed_one = 0;
  const int trials = 2000;
  for (int i = 0; i < trials; ++i) {
    Genome g = random_genome(s, rng);
    const Genome before = g;
    if (mutate(g, s, 0.1, rng)) {
      ++mutated;
      int diff = 0;
      for (std::size_t l = 0; l < g.layers.size(); ++l) diff += g.layers[l] == before.layers[l] ? 0 : 1;
      changed_one += diff >= 1 ? 1 : 0;  // repair may also refit a later kernel
      EXPECT_NO_THROW(decode(g, s)) << genome_text(g);
    } else {
      EXPECT_EQ(g, before);
    }
    EXPECT_EQ(g.layers.back().caps_count, s.classes);
  }
  // Binomial(2000, 0.1): mean 200, sd 13.4; 5 sd either side.
  EXPECT_GT(mutated, 133);
  EXPECT_LT(mutated, 267);
  // A mutation always changes something except when repair undoes it (a kernel that cannot fit).
  EXPECT_GT(changed_one, mutated * 9 / 10);
}

TEST(NasGenome, HashAndTextDistinguishGenomes) {
  const Genome a{{conv(9, 1, 256), prim(9, 2, 32, 8), cls(10, 16, 3)}};
  Genome b = a;
  EXPECT_EQ(genome_hash(a), genome_hash(b));
  b.layers[2].routing = 2;
  EXPECT_NE(genome_hash(a), genome_hash(b));
  EXPECT_NE(genome_text(a), genome_text(b));
}

}  // namespace
}  // namespace capsgen::nas

namespace capsgen::nas {
namespace {

LayerGene cell(int k, int s, int t, int d, int r) { return {GeneKind::CapsCell, k, s, t, d, 0, r}; }

SearchSpace cell_space() {
  SearchSpace s;
  s.min_cells = 0;
  s.max_cells = 4;
  return s;
}

// DeepCaps' structure (models/deepcaps-tiny.yaml): four cells, the last with a ConvCaps3D parallel
// layer, the third cell's capsules concatenated after the fourth's, then class capsules.
TEST(NasGenomeCells, DeepCapsLikeGenomeDecodesToDeepCapsStructure) {
  const SearchSpace s = cell_space();
  Genome g{{conv(3, 1, 16), cell(3, 2, 4, 4, 0), cell(3, 2, 4, 8, 0), cell(3, 2, 4, 8, 0), cell(3, 2, 4, 8, 3),
            cls(10, 16, 3)},
           3};
  ASSERT_TRUE(well_ordered(g, s));
  const Genome before = g;
  repair(g, s);
  EXPECT_EQ(g, before);
  EXPECT_EQ(genome_text(g), "C3s1c16 X3s2t4d4r0 X3s2t4d8r0 X3s2t4d8r0 X3s2t4d8r3 K10d16r3 S3");
  const Network n = decode(g, s);
  ASSERT_EQ(n.layers.size(), 1u + 4u * 5u + 1u + 1u);
  int caps3d = 0, adds = 0;
  for (const Layer& L : n.layers) {
    caps3d += L.kind == LayerKind::ConvCaps3d;
    adds += L.kind == LayerKind::CapsAdd;
  }
  EXPECT_EQ(caps3d, 1);
  EXPECT_EQ(adds, 4);
  // 26x26 after conv1, then ceil(n / 2) per cell: 13, 7, 4, 2. The flatten holds the last cell's
  // 4 x 2 x 2 capsules and the third's 4 x 4 x 4.
  const Layer& flat = n.layers[n.layers.size() - 2];
  ASSERT_EQ(flat.kind, LayerKind::FlattenCaps);
  EXPECT_EQ(flat.out.count, 4 * 2 * 2 + 4 * 4 * 4);
  EXPECT_EQ(flat.out.dim, 8);
  EXPECT_EQ(n.layers.back().out.count, 10);
}

TEST(NasGenomeCells, RepairDropsASkipOfAnotherDimensionOrPosition) {
  const SearchSpace s = cell_space();
  Genome g{{conv(3, 1, 16), cell(3, 2, 4, 4, 0), cell(3, 2, 4, 8, 0), cls(10, 16, 3)}, 1};
  repair(g, s);
  EXPECT_EQ(g.skip, 0);  // cell 1 has 4-D capsules, the last cell 8-D ones
  g.skip = 2;            // the last cell itself
  repair(g, s);
  EXPECT_EQ(g.skip, 0);
  g.layers[1].caps_dim = 8;
  g.skip = 1;
  repair(g, s);
  EXPECT_EQ(g.skip, 1);
  // A cell after a primary-capsule layer, or cells in a space without cells, break the order rule.
  EXPECT_FALSE(well_ordered(Genome{{conv(3, 1, 16), prim(3, 2, 4, 4), cell(3, 2, 4, 8, 0), cls(10, 16, 3)}}, s));
  EXPECT_FALSE(well_ordered(g, SearchSpace{}));
}

TEST(NasGenomeCells, RandomGenomesOfBothFamiliesAllValidate) {
  const SearchSpace s = cell_space();
  Rng rng(11);
  int capsnet = 0, deepcaps = 0, skips = 0, three_d = 0;
  for (int i = 0; i < 300; ++i) {
    const Genome g = random_genome(s, rng);
    expect_valid_network(g, s);
    bool cells = false;
    for (const LayerGene& L : g.layers) {
      cells |= L.kind == GeneKind::CapsCell;
      three_d += L.kind == GeneKind::CapsCell && L.routing > 0;
    }
    (cells ? deepcaps : capsnet)++;
    skips += g.skip > 0;
  }
  EXPECT_GT(capsnet, 30);  // a fifth of the draws have no cell
  EXPECT_GT(deepcaps, 200);
  EXPECT_GT(skips, 20);
  EXPECT_GT(three_d, 100);
}

TEST(NasGenomeCells, OperatorsMixTheFamiliesAndMoveTheSkip) {
  const SearchSpace s = cell_space();
  Rng rng(5);
  int mixed = 0, skip_moves = 0;
  for (int i = 0; i < 300; ++i) {
    const Genome a = random_genome(s, rng), b = random_genome(s, rng);
    auto [c1, c2] = crossover(a, b, s, rng);
    ASSERT_TRUE(well_ordered(c1, s) && well_ordered(c2, s)) << genome_text(c1) << " / " << genome_text(c2);
    EXPECT_NO_THROW(decode(c1, s)) << genome_text(c1);
    Genome m = c1;
    const int skip = m.skip;
    if (mutate(m, s, 1.0, rng)) {
      ASSERT_TRUE(well_ordered(m, s));
      EXPECT_NO_THROW(decode(m, s)) << genome_text(m);
      skip_moves += m.skip != skip && m.layers == c1.layers;
    }
    const bool a_cells = a.layers[1].kind == GeneKind::CapsCell || a.layers.size() > 2;
    mixed += a_cells && c1 != a && c1 != b;
  }
  EXPECT_GT(mixed, 50);
  EXPECT_GT(skip_moves, 5);
}

TEST(NasGenomeCells, SkipIsPartOfHashAndText) {
  Genome a{{conv(3, 1, 16), cell(3, 2, 4, 8, 0), cell(3, 2, 4, 8, 0), cls(10, 16, 3)}, 0};
  Genome b = a;
  b.skip = 1;
  EXPECT_NE(genome_hash(a), genome_hash(b));
  EXPECT_EQ(genome_text(b), genome_text(a) + " S1");
  // A genome without a skip hashes its layers alone: the key of a CapsNet-like genome is pinned, so
  // the file names of a search's outputs stay stable.
  const Genome capsnet{{conv(3, 2, 32), conv(7, 1, 256), prim(5, 1, 8, 4), cls(10, 16, 3)}};
  EXPECT_EQ(genome_key(capsnet), "db7323846ae42b73");
}

}  // namespace
}  // namespace capsgen::nas
