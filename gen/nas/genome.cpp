#include "nas/genome.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

namespace capsgen::nas {

const char* to_string(GeneKind k) {
  switch (k) {
    case GeneKind::Conv: return "conv";
    case GeneKind::PrimaryCaps: return "primary_caps";
    case GeneKind::ClassCaps: return "class_caps";
    case GeneKind::CapsCell: return "caps_cell";
  }
  return "?";
}

namespace {

int pick(const std::vector<int>& choices, Rng& rng) { return choices[std::size_t(rng.range(0, std::int64_t(choices.size()) - 1))]; }

// A choice other than `cur` (cur itself when there is only one).
int pick_other(const std::vector<int>& choices, int cur, Rng& rng) {
  std::vector<int> other;
  for (int c : choices)
    if (c != cur) other.push_back(c);
  return other.empty() ? cur : pick(other, rng);
}

int nearest(const std::vector<int>& choices, int v) {
  int best = choices.front();
  for (int c : choices)
    if (std::abs(c - v) < std::abs(best - v) || (std::abs(c - v) == std::abs(best - v) && c < best)) best = c;
  return best;
}

int count_kind(const Genome& g, GeneKind k) {
  return int(std::count_if(g.layers.begin(), g.layers.end(), [k](const LayerGene& L) { return L.kind == k; }));
}

// The cells of g in order.
std::vector<const LayerGene*> cells_of(const Genome& g) {
  std::vector<const LayerGene*> c;
  for (const LayerGene& L : g.layers)
    if (L.kind == GeneKind::CapsCell) c.push_back(&L);
  return c;
}

// The skip positions g can take: 0 and every cell before the last with the last cell's dimension.
std::vector<int> valid_skips(const Genome& g) {
  const std::vector<const LayerGene*> c = cells_of(g);
  std::vector<int> v{0};
  for (std::size_t k = 0; k + 1 < c.size(); ++k)
    if (c[k]->caps_dim == c.back()->caps_dim) v.push_back(int(k) + 1);
  return v;
}

LayerGene random_cell(const SearchSpace& s, Rng& rng) {
  LayerGene c;
  c.kind = GeneKind::CapsCell;
  c.kernel = pick(s.cell_kernels, rng);
  c.stride = pick(s.cell_strides, rng);
  c.channels = pick(s.cell_types, rng);
  c.caps_dim = pick(s.cell_dims, rng);
  c.routing = pick(s.cell_routing, rng);
  return c;
}

// The largest choice <= side; when none fits, `none_fits`.
int fitting_kernel(const std::vector<int>& kernels, int side, int none_fits) {
  int fit = 0;
  for (int k : kernels)
    if (k <= side) fit = std::max(fit, k);
  return fit > 0 ? fit : none_fits;
}

}  // namespace

bool well_ordered(const Genome& g, const SearchSpace& s) {
  // Conv+ (PrimaryCaps | CapsCell+) ClassCaps+
  std::size_t i = 0;
  int convs = 0, cells = 0, cls = 0;
  while (i < g.layers.size() && g.layers[i].kind == GeneKind::Conv) ++i, ++convs;
  if (i < g.layers.size() && g.layers[i].kind == GeneKind::PrimaryCaps) {
    if (s.min_cells > 0) return false;
    ++i;
  } else {
    while (i < g.layers.size() && g.layers[i].kind == GeneKind::CapsCell) ++i, ++cells;
    if (cells == 0 || cells < s.min_cells || cells > s.max_cells) return false;
  }
  while (i < g.layers.size() && g.layers[i].kind == GeneKind::ClassCaps) ++i, ++cls;
  return i == g.layers.size() && convs >= s.min_convs && convs <= s.max_convs && cls >= 1 && cls <= s.max_class_caps;
}

Genome random_genome(const SearchSpace& s, Rng& rng) {
  Genome g;
  const int convs = int(rng.range(s.min_convs, s.max_convs)), cls = int(rng.range(1, s.max_class_caps));
  // Drawn only in a space with cells, so the CapsNet-like space draws what it always drew.
  const int cells = s.max_cells > 0 ? int(rng.range(s.min_cells, s.max_cells)) : 0;
  for (int i = 0; i < convs; ++i) {
    LayerGene c;
    c.kind = GeneKind::Conv;
    c.kernel = pick(s.conv_kernels, rng);
    c.stride = pick(s.conv_strides, rng);
    c.channels = pick(s.conv_channels, rng);
    g.layers.push_back(c);
  }
  if (cells == 0) {
    LayerGene p;
    p.kind = GeneKind::PrimaryCaps;
    p.kernel = pick(s.primary_kernels, rng);
    p.stride = pick(s.primary_strides, rng);
    p.channels = pick(s.primary_types, rng);
    p.caps_dim = pick(s.primary_dims, rng);
    g.layers.push_back(p);
  }
  for (int i = 0; i < cells; ++i) g.layers.push_back(random_cell(s, rng));
  for (int i = 0; i < cls; ++i) {
    LayerGene c;
    c.kind = GeneKind::ClassCaps;
    c.caps_count = i + 1 == cls ? s.classes : pick(s.caps_counts, rng);
    c.caps_dim = pick(s.class_dims, rng);
    c.routing = pick(s.routing, rng);
    g.layers.push_back(c);
  }
  if (cells >= 2) g.skip = pick(valid_skips(g), rng);
  repair(g, s);
  return g;
}

void repair(Genome& g, const SearchSpace& s) {
  if (!well_ordered(g, s))
    throw std::invalid_argument("nas::repair: genome is not Conv+ (PrimaryCaps | CapsCell+) ClassCaps+: " +
                                genome_text(g));
  int h = s.in_height, w = s.in_width;
  for (std::size_t i = 0; i < g.layers.size(); ++i) {
    LayerGene& L = g.layers[i];
    const bool last = i + 1 == g.layers.size();
    const int side = std::min(h, w);
    switch (L.kind) {
      case GeneKind::ClassCaps:
        L.kernel = L.stride = L.channels = 0;
        L.caps_count = last ? s.classes : nearest(s.caps_counts, L.caps_count);
        L.caps_dim = nearest(s.class_dims, L.caps_dim);
        L.routing = nearest(s.routing, L.routing);
        break;
      case GeneKind::CapsCell:
        // "Same" padding (kernel / 2): a map of side n leaves a stride-s cell with side ceil(n / s).
        L.kernel = nearest(s.cell_kernels, L.kernel);
        if (L.kernel > side) L.kernel = fitting_kernel(s.cell_kernels, side, s.cell_kernels.front());
        L.stride = nearest(s.cell_strides, L.stride);
        L.channels = nearest(s.cell_types, L.channels);
        L.caps_dim = nearest(s.cell_dims, L.caps_dim);
        L.routing = nearest(s.cell_routing, L.routing);
        L.caps_count = 0;
        h = (h - 1) / L.stride + 1;
        w = (w - 1) / L.stride + 1;
        break;
      case GeneKind::Conv:
      case GeneKind::PrimaryCaps: {
        const bool conv = L.kind == GeneKind::Conv;
        const auto& kernels = conv ? s.conv_kernels : s.primary_kernels;
        L.kernel = nearest(kernels, L.kernel);
        L.stride = nearest(conv ? s.conv_strides : s.primary_strides, L.stride);
        L.channels = nearest(conv ? s.conv_channels : s.primary_types, L.channels);
        L.caps_dim = conv ? 0 : nearest(s.primary_dims, L.caps_dim);
        L.caps_count = L.routing = 0;
        if (L.kernel > side) L.kernel = fitting_kernel(kernels, side, side);
        h = (h - L.kernel) / L.stride + 1;
        w = (w - L.kernel) / L.stride + 1;
        break;
      }
    }
  }
  const std::vector<int> skips = valid_skips(g);
  if (std::find(skips.begin(), skips.end(), g.skip) == skips.end()) g.skip = 0;
}

std::pair<Genome, Genome> crossover(const Genome& a, const Genome& b, const SearchSpace& s, Rng& rng) {
  std::vector<std::pair<std::size_t, std::size_t>> cuts;
  auto child = [](const Genome& x, std::size_t i, const Genome& y, std::size_t j) {
    Genome c;
    c.layers.assign(x.layers.begin(), x.layers.begin() + std::ptrdiff_t(i));
    c.layers.insert(c.layers.end(), y.layers.begin() + std::ptrdiff_t(j), y.layers.end());
    c.skip = y.skip;  // the skip term follows the layers in the genotype: it goes with the tail
    return c;
  };
  for (std::size_t i = 1; i < a.layers.size(); ++i)
    for (std::size_t j = 1; j < b.layers.size(); ++j)
      if (well_ordered(child(a, i, b, j), s) && well_ordered(child(b, j, a, i), s)) cuts.emplace_back(i, j);
  if (cuts.empty()) return {a, b};
  const auto [i, j] = cuts[std::size_t(rng.range(0, std::int64_t(cuts.size()) - 1))];
  Genome c1 = child(a, i, b, j), c2 = child(b, j, a, i);
  repair(c1, s);
  repair(c2, s);
  return {c1, c2};
}

bool mutate(Genome& g, const SearchSpace& s, double p, Rng& rng) {
  if (rng.uniform() >= p) return false;
  // With two or more cells the skip term is one more descriptor to draw (index layers.size()).
  const bool skip_term = count_kind(g, GeneKind::CapsCell) >= 2;
  const std::size_t pick_index = std::size_t(rng.range(0, std::int64_t(g.layers.size()) - (skip_term ? 0 : 1)));
  if (pick_index == g.layers.size()) {
    g.skip = pick_other(valid_skips(g), g.skip, rng);
    repair(g, s);
    return true;
  }
  LayerGene& L = g.layers[pick_index];
  const bool last = &L == &g.layers.back();
  switch (L.kind) {
    case GeneKind::Conv:
      switch (rng.range(0, 2)) {
        case 0: L.kernel = pick_other(s.conv_kernels, L.kernel, rng); break;
        case 1: L.stride = pick_other(s.conv_strides, L.stride, rng); break;
        default: L.channels = pick_other(s.conv_channels, L.channels, rng); break;
      }
      break;
    case GeneKind::PrimaryCaps:
      switch (rng.range(0, 3)) {
        case 0: L.kernel = pick_other(s.primary_kernels, L.kernel, rng); break;
        case 1: L.stride = pick_other(s.primary_strides, L.stride, rng); break;
        case 2: L.channels = pick_other(s.primary_types, L.channels, rng); break;
        default: L.caps_dim = pick_other(s.primary_dims, L.caps_dim, rng); break;
      }
      break;
    case GeneKind::CapsCell:
      switch (rng.range(0, 4)) {
        case 0: L.kernel = pick_other(s.cell_kernels, L.kernel, rng); break;
        case 1: L.stride = pick_other(s.cell_strides, L.stride, rng); break;
        case 2: L.channels = pick_other(s.cell_types, L.channels, rng); break;
        case 3: L.caps_dim = pick_other(s.cell_dims, L.caps_dim, rng); break;
        default: L.routing = pick_other(s.cell_routing, L.routing, rng); break;
      }
      break;
    case GeneKind::ClassCaps:
      // The last layer's capsule count is the class count: only its dimension and routing mutate.
      switch (rng.range(last ? 1 : 0, 2)) {
        case 0: L.caps_count = pick_other(s.caps_counts, L.caps_count, rng); break;
        case 1: L.caps_dim = pick_other(s.class_dims, L.caps_dim, rng); break;
        default: L.routing = pick_other(s.routing, L.routing, rng); break;
      }
      break;
  }
  repair(g, s);
  return true;
}

namespace {

std::string conv_caps_yaml(const std::string& name, const std::string& input, const LayerGene& c, int stride,
                           bool three_d) {
  std::string y = fmt::format("  - name: {}\n    type: {}\n", name, three_d ? "conv_caps3d" : "conv_caps2d");
  if (!input.empty()) y += fmt::format("    input: {}\n", input);
  y += fmt::format("    capsule_types: {}\n    capsule_dim: {}\n    kernel: {}\n    stride: {}\n    padding: {}\n",
                   c.channels, c.caps_dim, c.kernel, stride, c.kernel / 2);
  if (three_d) y += fmt::format("    routing_iterations: {}\n", c.routing);
  return y + "\n";
}

// CapsCell k (1-based), as in models/deepcaps.yaml: ck_0 with the cell's stride; the parallel layer
// ck_skip and the sequence ck_1, ck_2 read ck_0; cellk adds ck_2 and ck_skip.
std::string cell_yaml(int k, const LayerGene& c) {
  const std::string p = fmt::format("c{}_", k), first = p + "0";
  return conv_caps_yaml(first, "", c, c.stride, false) + conv_caps_yaml(p + "skip", first, c, 1, c.routing > 0) +
         conv_caps_yaml(p + "1", first, c, 1, false) + conv_caps_yaml(p + "2", "", c, 1, false) +
         fmt::format("  - name: cell{}\n    type: caps_add\n    inputs: [{}2, {}skip]\n\n", k, p, p);
}

}  // namespace

std::string to_yaml(const Genome& g, const SearchSpace& s, const std::string& name) {
  std::string y = fmt::format("# NASCaps genome {} (docs/nas.md)\n\nname: {}\ndescription: NASCaps candidate {}\n\n", genome_text(g),
                              name, genome_text(g));
  y += fmt::format("input: {{channels: {}, height: {}, width: {}}}\n\nlayers:\n", s.in_channels, s.in_height, s.in_width);
  int conv = 0, caps = 0, cell = 0;
  const int n_class = count_kind(g, GeneKind::ClassCaps), n_cells = count_kind(g, GeneKind::CapsCell);
  for (const LayerGene& L : g.layers) {
    switch (L.kind) {
      case GeneKind::Conv:
        y += fmt::format("  - name: conv{}\n    type: conv2d\n    out_channels: {}\n    kernel: {}\n    stride: {}\n"
                         "    activation: relu\n\n",
                         ++conv, L.channels, L.kernel, L.stride);
        break;
      case GeneKind::PrimaryCaps:
        y += fmt::format("  - name: primary\n    type: primary_caps\n    capsule_types: {}\n    capsule_dim: {}\n"
                         "    kernel: {}\n    stride: {}\n\n",
                         L.channels, L.caps_dim, L.kernel, L.stride);
        break;
      case GeneKind::CapsCell:
        y += cell_yaml(++cell, L);
        if (cell == n_cells)
          y += g.skip > 0 ? fmt::format("  - name: flat\n    type: flatten_caps\n    inputs: [cell{}, cell{}]\n\n", cell, g.skip)
                          : std::string("  - name: flat\n    type: flatten_caps\n\n");
        break;
      case GeneKind::ClassCaps:
        ++caps;
        y += fmt::format("  - name: {}\n    type: class_caps\n    num_capsules: {}\n    capsule_dim: {}\n"
                         "    routing_iterations: {}\n\n",
                         caps == n_class ? std::string("classcaps") : fmt::format("caps{}", caps), L.caps_count,
                         L.caps_dim, L.routing);
        break;
    }
  }
  return y;
}

std::string genome_text(const Genome& g) {
  std::string t;
  for (const LayerGene& L : g.layers) {
    if (!t.empty()) t += ' ';
    switch (L.kind) {
      case GeneKind::Conv: t += fmt::format("C{}s{}c{}", L.kernel, L.stride, L.channels); break;
      case GeneKind::PrimaryCaps: t += fmt::format("P{}s{}t{}d{}", L.kernel, L.stride, L.channels, L.caps_dim); break;
      case GeneKind::CapsCell:
        t += fmt::format("X{}s{}t{}d{}r{}", L.kernel, L.stride, L.channels, L.caps_dim, L.routing);
        break;
      case GeneKind::ClassCaps: t += fmt::format("K{}d{}r{}", L.caps_count, L.caps_dim, L.routing); break;
    }
  }
  if (g.skip > 0) t += fmt::format(" S{}", g.skip);
  return t;
}

std::uint64_t genome_hash(const Genome& g) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  auto mix = [&](std::int64_t v) {
    for (int b = 0; b < 8; ++b) {
      h ^= std::uint64_t(v >> (8 * b)) & 0xff;
      h *= 0x100000001b3ULL;
    }
  };
  mix(std::int64_t(g.layers.size()));
  for (const LayerGene& L : g.layers)
    for (int v : {int(L.kind), L.kernel, L.stride, L.channels, L.caps_dim, L.caps_count, L.routing}) mix(v);
  if (g.skip != 0) mix(-g.skip);  // mixed only when set: a genome without a skip hashes its layers alone
  return h;
}

std::string genome_key(const Genome& g) { return fmt::format("{:016x}", genome_hash(g)); }

std::string network_name(const Genome& g) { return "nas-" + genome_key(g); }

}  // namespace capsgen::nas
