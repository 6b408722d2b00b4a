// Lowering of a network onto the accelerator's instructions (compile_program, docs/compiler.md): one
// function per layer kind on a ProgramBuilder that owns the address space and knows where and in
// which layout every layer's output lives.
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "compiler/compiler.hpp"
#include "core/input_error.hpp"
#include "isa/engine_descriptor.hpp"
#include "isa/engine_timing.hpp"
#include "numerics/activation.hpp"

namespace capsgen {
namespace {

using isa::Activate;
using isa::Fill;
using isa::Gemm;

int ceil_div(long long a, long long b) { return int((a + b - 1) / b); }

// The accumulator block of a Gemm whose vectors x tiles do not fit the accumulators. The fewest blocks
// hold isa::block_size vectors each but may leave a short last block, whose vectors stream against
// each tile in fewer cycles than the tile takes to load (PrimaryCaps' 36 positions on a 16x16 array
// with 512 entries: blocks of 32 and 4); and a large block makes the output writer's bursts long
// (conv1, writer-bound). Candidates: the largest block, equal blocks for the fewest blocks and one or
// two more, and blocks of the array's rows (a block streams at least as long as a tile loads); the
// engine's cycle model picks, the earliest candidate on a tie.
int fastest_block(const Gemm& g, const isa::EngineTimingShape& shape, int acc_depth) {
  const int most = isa::block_size(acc_depth, g.m_total, g.n_tiles);
  if (most >= g.m_total || g.acc_hold || g.acc_continue) return g.m_block;
  const int fewest = ceil_div(g.m_total, most);
  std::vector<int> candidates = {most};
  for (int blocks = fewest; blocks <= fewest + 2; ++blocks) candidates.push_back(ceil_div(g.m_total, blocks));
  if (shape.rows < most) candidates.push_back(shape.rows);
  int best = g.m_block;
  long long best_cycles = -1;
  for (int mb : candidates) {
    Gemm c = g;
    c.m_block = mb;
    isa::EngineTiming t;
    if (!isa::instr_timing(c, shape, &t)) return g.m_block;
    if (best_cycles < 0 || t.cycles < best_cycles) best_cycles = t.cycles, best = mb;
  }
  return best;
}

// The address space. With a routing batch (CompileOptions::routing_batch > 1) every layer but the
// last runs once per input: the tensors of one input (add, add_transposed) carry that input's suffix
// ".k<N>", while weights and constants (add_shared, add_tiled) exist once and later requests of the
// same name return the first one's base.
class Allocator {
 public:
  explicit Allocator(isa::Program& p) : p_(p) {}
  void set_input_suffix(std::string suffix) { suffix_ = std::move(suffix); }
  std::int64_t add(const std::string& name, std::vector<std::size_t> shape, int bits) {
    return place({name + suffix_, 0, std::move(shape), bits});
  }
  // Batched matrices stored transposed (isa::Region::minor_transposed).
  std::int64_t add_transposed(const std::string& name, std::vector<std::size_t> shape, int bits) {
    isa::Region r{name + suffix_, 0, std::move(shape), bits};
    r.minor_transposed = true;
    return place(std::move(r));
  }
  std::int64_t add_shared(const std::string& name, std::vector<std::size_t> shape, int bits) {
    if (const isa::Region* r = p_.region(name)) return r->base;
    return place({name, 0, std::move(shape), bits});
  }
  // A stationary operand stored tile-major (isa::Region::tile_rows).
  std::int64_t add_tiled(const std::string& name, std::vector<std::size_t> shape, int bits, int rows, int cols) {
    if (const isa::Region* r = p_.region(name)) return r->base;
    isa::Region r{name, 0, std::move(shape), bits};
    r.tile_rows = rows;
    r.tile_cols = cols;
    return place(std::move(r));
  }
  void alias(const std::string& name, const std::string& of) {
    const isa::Region* r = p_.region(of + suffix_);
    if (!r) throw std::logic_error("alias of unknown region " + of);
    isa::Region a = *r;
    a.name = name + suffix_;
    p_.regions.push_back(a);
  }

 private:
  std::int64_t place(isa::Region r) {
    r.base = p_.size;
    p_.size += r.stored_size();
    p_.regions.push_back(std::move(r));
    return p_.regions.back().base;
  }

  isa::Program& p_;
  std::string suffix_;
};

// Where a layer's output lives and in which order.
//  - kChannels: channel-major. A feature map [C, H, W]; a capsule grid of T types x D atoms over P = H*W
//    positions as the map of its T*D channels: atom d of capsule (t, p) at base + (t*D + d)*P + p. This
//    is what a convolution reads. Its region is stored minor-transposed with shape [T, P, D], so the
//    golden model's index (t*P + p)*D + d names the same element.
//  - kCapsules: capsule-major [N, D], element (i, d) at base + i*D + d. What routing reads.
struct Operand {
  enum class Layout { kChannels, kCapsules };
  std::int64_t base = 0;
  Layout layout = Layout::kChannels;
  TensorShape shape;
  int frac = 0;  // fraction bits of its codes

  // Capsules as types x positions x atoms (a feature map is C types of one atom; flat capsules one type).
  int types() const { return !shape.capsules ? shape.channels : shape.is_grid() ? shape.grid_types : 1; }
  int positions() const {
    return !shape.capsules ? shape.height * shape.width : shape.is_grid() ? shape.height * shape.width : shape.count;
  }
  int atoms() const { return shape.capsules ? shape.dim : 1; }
  // Address steps between types, positions and atoms.
  std::int64_t type_step() const { return std::int64_t(positions()) * atoms(); }
  std::int64_t position_step() const { return layout == Layout::kChannels ? 1 : atoms(); }
  std::int64_t atom_step() const { return layout == Layout::kChannels ? positions() : 1; }
};

class ProgramBuilder {
 public:
  ProgramBuilder(const AccelConfig& cfg, const Network& net, const QuantizedModel& qm, const CompileOptions& opts)
      : cfg_(cfg),
        net_(net),
        qm_(qm),
        opts_(opts),
        mem_(p_),
        rows_(cfg.array.rows),
        cols_(cfg.array.cols),
        act_(cfg.widths.act) {}

  isa::Program build() {
    p_.network = net_.name;
    p_.preset = cfg_.name;
    p_.inputs = opts_.routing_batch;
    if (opts_.routing_batch == 1) {
      place_input();
      for (std::size_t li = 0; li < net_.layers.size(); ++li) outs_.push_back(lower(li));
    } else {
      build_routing_batch();
    }
    const isa::EngineTimingShape shape = engine_timing_shape(cfg_);
    for (isa::Instr& in : p_.instrs)
      if (auto* g = std::get_if<Gemm>(&in)) g->m_block = fastest_block(*g, shape, cfg_.accumulator.depth);
    return std::move(p_);
  }

 private:
  const Operand& produced(int k) const { return k < 0 ? input_ : outs_[std::size_t(k)]; }

  void place_input() {
    input_.base = mem_.add(
        "input", {std::size_t(net_.input.channels), std::size_t(net_.input.height), std::size_t(net_.input.width)},
        act_);
    input_.shape = net_.input;
    input_.frac = qm_.input_frac;
  }

  // PIM-CapsNet's batch-shared routing (golden/shared_routing.hpp): every layer up to the last
  // layer's predictions once per input k, its tensors and instructions named with the suffix ".k<k>";
  // then the routing of the last layer, a class-capsule layer, once for the batch.
  void build_routing_batch() {
    const int K = opts_.routing_batch;
    const Layer& last = shared_routing_layer(net_);
    const std::size_t li_last = net_.layers.size() - 1;
    const int I = last.in.count, Din = last.in.dim, J = last.num_capsules, D = last.capsule_dim;
    const int src = last.input_layers.empty() ? int(li_last) - 1 : last.input_layers[0];
    // Every input's layers up to the capsules the last layer reads: input k's tensors follow input
    // k-1's in the same order and sizes, so its capsules lie a fixed step after k-1's.
    std::vector<std::int64_t> caps;
    for (int k = 0; k < K; ++k) {
      const std::string suffix = routing_batch_name("", k);
      const std::size_t first_instr = p_.instrs.size();
      mem_.set_input_suffix(suffix);
      outs_.clear();
      place_input();
      for (std::size_t li = 0; li < li_last; ++li) outs_.push_back(lower(li));
      if (produced(src).layout != Operand::Layout::kCapsules)
        fail(li_last, ".input", "class_caps reads capsule-major capsules; put a flatten_caps layer before it");
      caps.push_back(produced(src).base);
      // conv1 -> conv1.k0, primary/squash -> primary.k0/squash: input k's operation of each layer.
      for (std::size_t i = first_instr; i < p_.instrs.size(); ++i)
        std::visit([&](auto& instr) { instr.name.insert(std::min(instr.name.find('/'), instr.name.size()), suffix); },
                   p_.instrs[i]);
    }
    mem_.set_input_suffix("");
    const CapsInputs in{caps[0], caps[1] - caps[0], K};
    for (int k = 0; k < K; ++k)
      if (caps[std::size_t(k)] != in.first + k * in.step)
        throw std::logic_error("compile: a batch input's capsules out of step");
    class_caps_predict(last, qm_.layers[li_last], in, I, Din, J, D);
    route_batch(last, qm_.layers[li_last], p_.region(last.name + ".u_hat")->base, I, J, D, K);
  }

  [[noreturn]] void fail(std::size_t li, const std::string& field, const std::string& msg) const {
    const Layer& L = net_.layers[li];
    throw InputError(net_.source_path, L.line, 0, fmt::format("layers[{}]{}", li, field),
                     fmt::format("layer '{}': {}", L.name, msg));
  }

  Operand lower(std::size_t li) {
    const Layer& L = net_.layers[li];
    const LayerQuant& q = qm_.layers[li];
    std::vector<Operand> ins;
    for (int k : L.input_layers) ins.push_back(produced(k));
    switch (L.kind) {
      case LayerKind::Conv2d:
        return conv2d(li, q, channel_major(li, ins[0]));
      case LayerKind::PrimaryCaps:
        return primary_caps(li, q, channel_major(li, ins[0]));
      case LayerKind::ConvCaps2d:
        return conv_caps2d(li, q, channel_major(li, ins[0]));
      case LayerKind::ConvCaps3d:
        return conv_caps3d(li, q, channel_major(li, ins[0]));
      case LayerKind::CapsAdd:
        return caps_add(li, q, ins);
      case LayerKind::FlattenCaps:
        return flatten_caps(li, q, ins);
      case LayerKind::ClassCaps:
        if (ins[0].layout != Operand::Layout::kCapsules)
          fail(li, ".input", "class_caps reads capsule-major capsules; put a flatten_caps layer before it");
        return class_caps(li, q, ins[0]);
      default:
        break;
    }
    fail(li, ".type", fmt::format("the compiler has no hardware mapping for '{}' layers", to_string(L.kind)));
  }

  const Operand& channel_major(std::size_t li, const Operand& in) const {
    if (in.layout != Operand::Layout::kChannels)
      fail(li, ".input", "a convolution reads a channel-major map or capsule grid; this input is capsule-major "
                         "(primary_caps or flatten_caps output)");
    return in;
  }

  // The Gemm of a convolution over `in` read as channels (isa::conv_gemm).
  Gemm conv(const Layer& L, const Operand& in, int channels, int out_channels, std::int64_t w, std::int64_t b) const {
    isa::ConvShape s;
    s.channels = channels;
    s.height = in.shape.height;
    s.width = in.shape.width;
    s.out_channels = out_channels;
    s.kernel_h = L.kernel_h;
    s.kernel_w = L.kernel_w;
    s.stride = L.stride;
    s.padding = L.padding;
    return isa::conv_gemm(s, rows_, cols_, cfg_.accumulator.depth, in.base, w, b);
  }

  std::int64_t weight_tiles(const Layer& L, const LayerQuant& q) {
    return mem_.add_tiled(L.name + ".weight", q.weight.shape, cfg_.widths.weight, rows_, cols_);
  }
  std::int64_t bias_codes(const Layer& L, const LayerQuant& q) {
    return q.bias.empty() ? -1 : mem_.add_shared(L.name + ".bias", {q.bias.size()}, cfg_.widths.psum);
  }

  // The convolution of a conv2d, primary_caps or conv_caps2d layer over all of `in`'s channels: its
  // filters tiled and its biases placed, reduced by the layer's shift; the output target left to the caller.
  Gemm layer_conv(const Layer& L, const LayerQuant& q, const Operand& in, const std::string& name) {
    const std::int64_t w = weight_tiles(L, q), b = bias_codes(L, q);
    Gemm g = conv(L, in, in.types() * in.atoms(), L.out_channels, w, b);
    g.shift = q.shift;
    g.name = name;
    return g;
  }

  // An activation pass of `count` vectors of n elements: vector v's element e read at
  // in + v*in_s_v + e*in_s_e, its results written from out + v*out_s_v (steps out_s_e).
  static Activate activation_pass(const std::string& name, Activate::Func func, int count, int n, std::int64_t in,
                                  std::int64_t in_s_v, std::int64_t in_s_e, std::int64_t out, std::int64_t out_s_v,
                                  std::int64_t out_s_e) {
    Activate a;
    a.name = name;
    a.func = func;
    a.count = count;
    a.n = n;
    a.in_base = in;
    a.in_s_v = in_s_v;
    a.in_s_e = in_s_e;
    a.out_base = out;
    a.out_s_v = out_s_v;
    a.out_s_e = out_s_e;
    return a;
  }

  static Activate squash(const std::string& name, int count, int n, std::int64_t in, std::int64_t in_s_v,
                         std::int64_t in_s_e, std::int64_t out, std::int64_t out_s_v, std::int64_t out_s_e) {
    return activation_pass(name, Activate::Func::kSquash, count, n, in, in_s_v, in_s_e, out, out_s_v, out_s_e);
  }

  // Squash of every capsule of a channel-major grid (T types x P positions x D atoms): one pass per
  // type, whose P vectors are consecutive positions and whose atoms are P apart.
  // The passes are named <name>.t<type>.
  void squash_grid(const std::string& name, int T, int P, int D, std::int64_t in, std::int64_t in_step,
                   std::int64_t in_atom, std::int64_t out) {
    for (int t = 0; t < T; ++t)
      p_.instrs.push_back(squash(fmt::format("{}.t{}", name, t), P, D, in + t * std::int64_t(P) * D,
                                 in_step, in_atom, out + t * std::int64_t(P) * D, 1, P));
  }

  Operand conv2d(std::size_t li, const LayerQuant& q, const Operand& in) {
    const Layer& L = net_.layers[li];
    Gemm g = layer_conv(L, q, in, L.name);
    g.relu = L.activation == Activation::Relu;
    const int Ho = L.out.height, Wo = L.out.width;
    const std::int64_t out =
        mem_.add(L.name + ".out", {std::size_t(L.out_channels), std::size_t(Ho), std::size_t(Wo)}, act_);
    g.out = isa::map_output(out, std::int64_t(Ho) * Wo);
    p_.instrs.push_back(g);
    return {out, Operand::Layout::kChannels, L.out, q.next_frac};
  }

  Operand primary_caps(std::size_t li, const LayerQuant& q, const Operand& in) {
    const Layer& L = net_.layers[li];
    Gemm g = layer_conv(L, q, in, L.name + "/conv");
    // Output channel o = t*D + d at position m goes to capsule t*Ho*Wo + m, element d.
    const int P = L.out.height * L.out.width, D = L.capsule_dim, N = L.capsule_types * P;
    const std::int64_t s = mem_.add(L.name + ".s", {std::size_t(N), std::size_t(D)}, act_);
    g.out = isa::capsule_output(s, P, D);
    p_.instrs.push_back(g);
    const std::int64_t u = mem_.add(L.name + ".out", {std::size_t(N), std::size_t(D)}, act_);
    p_.instrs.push_back(squash(L.name + "/squash", N, D, s, D, 1, u, D, 1));
    return {u, Operand::Layout::kCapsules, L.out, q.next_frac};
  }

  // ConvCaps2D: the convolution writes s channel-major, the squash runs per type; the output stays
  // channel-major for the next convolution.
  Operand conv_caps2d(std::size_t li, const LayerQuant& q, const Operand& in) {
    const Layer& L = net_.layers[li];
    Gemm g = layer_conv(L, q, in, L.name + "/conv");
    const int T = L.capsule_types, D = L.capsule_dim, P = L.out.height * L.out.width;
    const std::vector<std::size_t> grid{std::size_t(T), std::size_t(P), std::size_t(D)};
    const std::int64_t s = mem_.add_transposed(L.name + ".s", grid, act_);
    g.out = isa::map_output(s, P);
    p_.instrs.push_back(g);
    const std::int64_t u = mem_.add_transposed(L.name + ".out", grid, act_);
    squash_grid(L.name + "/squash", T, P, D, s, 1, P, u);
    return {u, Operand::Layout::kChannels, L.out, q.next_frac};
  }

  // ConvCaps3D (docs/deepcaps.md): the votes of every input type through the shared kernel, one
  // batch item per type, written capsule-major as u_hat [I][J][D]; then the routing of class_caps
  // with a per-type bias. The last iteration's v is written channel-major.
  Operand conv_caps3d(std::size_t li, const LayerQuant& q, const Operand& in) {
    const Layer& L = net_.layers[li];
    const int I = in.types(), Din = in.atoms(), T = L.capsule_types, D = L.capsule_dim;
    const int P = L.out.height * L.out.width, J = T * P;
    const std::int64_t w = weight_tiles(L, q);
    Gemm g = conv(L, in, Din, T * D, w, -1);
    g.name = L.name + "/predict";
    g.batch = I;
    g.data.s_b = in.type_step();
    g.shift = q.shift;
    const std::int64_t b = bias_codes(L, q);
    const std::int64_t uh = mem_.add(L.name + ".u_hat", {std::size_t(I), std::size_t(J), std::size_t(D)}, act_);
    g.out = isa::capsule_output(uh, P, D);
    g.out.s_b = std::int64_t(J) * D;
    p_.instrs.push_back(g);
    const std::int64_t v = route(L, q, uh, I, J, D, b, T);
    return {v, Operand::Layout::kChannels, L.out, q.next_frac};
  }

  Operand class_caps(std::size_t li, const LayerQuant& q, const Operand& in) {
    const Layer& L = net_.layers[li];
    const int I = L.in.count, Din = L.in.dim, J = L.num_capsules, D = L.capsule_dim;
    class_caps_predict(L, q, {in.base, 0, 1}, I, Din, J, D);
    const std::int64_t v = route(L, q, p_.region(L.name + ".u_hat")->base, I, J, D, -1, 0);
    const std::int64_t nrm = mem_.add(L.name + ".norm", {std::size_t(J)}, act_);
    p_.instrs.push_back(class_norm(L.name + "/norm", q, J, D, v, D, 1, nrm));
    return {v, Operand::Layout::kCapsules, L.out, q.next_frac};
  }

  // The class norms ||v_j|| of J capsules of D atoms at in (steps in_s_v, in_s_e), to out.
  static Activate class_norm(const std::string& name, const LayerQuant& q, int J, int D, std::int64_t in,
                             std::int64_t in_s_v, std::int64_t in_s_e, std::int64_t out) {
    Activate an = activation_pass(name, Activate::Func::kNorm, J, D, in, in_s_v, in_s_e, out, 1, 1);
    an.norm_shift = q.norm_shift;
    return an;
  }

  // The inputs of a class-capsule layer: input k's capsules [I][Din] at first + k*step, k < count (a
  // routing batch; count 1 for one input).
  struct CapsInputs {
    std::int64_t first = 0, step = 0;
    int count = 1;
  };

  // The predictions u_hat_i = W_i u_i of class_caps. Two mappings, chosen by the engine's cycle model:
  //  - W streamed (W stored [i][jd][e]): the data vectors are W_i's rows. For one input, G
  //    predictions per vector: the tile holds u_i block-diagonally in G columns and the data vector G
  //    rows of W_i side by side (docs/accelerator.md; G divides J*D so every vector is full); J*D/G
  //    vectors per capsule through the vector-wide gather (rows cycles each where the element-wise
  //    gather has to be used), G results each for the one-per-cycle writer. For a routing batch, the
  //    tile holds the u_i of up to `cols` inputs in its columns and each row of W_i passes once for
  //    all of them (one Gemm per group of `cols` inputs, named .in<group>).
  //  - W stationary (W stored transposed, [i][e][jd]: contiguous tile rows): W_i's tiles, rows e and
  //    columns jd, each input's u_i a data vector. A tile per capsule, so about ceil(J*D/cols) * rows
  //    cycles per capsule; the only choice when W codes are wider than the data input.
  // One input's u_hat is [I][J][D]; a batch's [I][J][D][K], the K inputs' codes of one atom side by
  // side (what route_batch() reads).
  void class_caps_predict(const Layer& L, const LayerQuant& q, const CapsInputs& in, int I, int Din, int J, int D) {
    const int rows = rows_, cols = cols_, JD = J * D, K = in.count;
    // Addresses: W first, u_hat after it (both mappings use the same sizes).
    const std::int64_t wW = p_.size, uh = p_.size + std::int64_t(shape_size(q.weight.shape));
    Gemm base;
    base.name = L.name + "/predict";
    base.batch = I;
    base.shift = q.shift;
    base.r_total = Din;
    base.k_chunks = ceil_div(Din, rows);
    const std::vector<Gemm> streamed = K == 1 ? std::vector<Gemm>{predict_streamed_one(base, in.first, wW, uh, Din, JD)}
                                              : predict_streamed_batch(base, in, wW, uh, Din, JD);
    Gemm stationary = base;
    stationary.m_total = K;
    stationary.n_tiles = ceil_div(JD, cols);
    stationary.n_total = JD;
    stationary.tile = {wW, std::int64_t(JD) * Din, std::int64_t(rows) * JD, cols, JD, 1, 1};
    stationary.data = {isa::DataSource::Kind::kAffine, in.first, Din, in.step, rows, 1};
    stationary.out = {uh, std::int64_t(JD) * K, K == 1 ? 0 : 1, K, 0, 1, 0};
    stationary.m_block = K;
    const isa::EngineTimingShape shape = engine_timing_shape(cfg_);
    isa::EngineTiming t;
    bool ts_ok = true;
    long long ts_cycles = 0;
    for (const Gemm& g : streamed) {
      ts_ok = ts_ok && isa::instr_timing(g, shape, &t);
      ts_cycles += t.cycles;
    }
    // W stationary keeps every tile's partial sums over the chunks of e: it must fit the accumulators.
    bool tw_ok = isa::instr_timing(stationary, shape, &t);
    try {
      isa::encode_engine(stationary, rows, cols, cfg_.accumulator.depth);
    } catch (const std::invalid_argument&) {
      tw_ok = false;
    }
    const bool w_stationary = cfg_.widths.weight > cfg_.widths.data || !ts_ok || (tw_ok && t.cycles < ts_cycles);
    if (w_stationary) {
      mem_.add_transposed(L.name + ".W", q.weight.shape, cfg_.widths.weight);
    } else {
      mem_.add(L.name + ".W", q.weight.shape, cfg_.widths.weight);
    }
    std::vector<std::size_t> uh_shape{std::size_t(I), std::size_t(J), std::size_t(D)};
    if (K > 1) uh_shape.push_back(std::size_t(K));
    if (mem_.add(L.name + ".u_hat", uh_shape, act_) != uh)
      throw std::logic_error("compile: u_hat not where the prediction writes it");
    if (w_stationary) {
      p_.instrs.push_back(stationary);
    } else {
      for (const Gemm& g : streamed) p_.instrs.push_back(g);
    }
  }

  // W streamed for one input at `in`: G predictions per vector where u_i fits G times in the rows.
  Gemm predict_streamed_one(Gemm g, std::int64_t in, std::int64_t wW, std::int64_t uh, int Din, int JD) const {
    int G = 1;
    if (Din <= rows_)
      for (int c = std::min(rows_ / Din, cols_); c >= 1; --c)
        if (JD % c == 0) {
          G = c;
          break;
        }
    if (G > 1) {
      g.m_total = JD / G;
      g.k_chunks = 1;
      g.n_total = G;
      g.tile = {in, Din, 0, 0, 1, 0, G};
      g.data = {isa::DataSource::Kind::kAffine, wW, std::int64_t(JD) * Din, std::int64_t(G) * Din, 0, 1};
      g.out = {uh, JD, G, 1, 0, 1, 0};
    } else {
      g.m_total = JD;
      g.n_total = 1;
      g.tile = {in, Din, rows_, 0, 1, 0, 1};
      g.data = {isa::DataSource::Kind::kAffine, wW, std::int64_t(JD) * Din, Din, rows_, 1};
      g.out = {uh, JD, 1, 1, 0, 1, 0};
    }
    g.m_block = isa::block_size(cfg_.accumulator.depth, g.m_total, g.n_tiles);
    return g;
  }

  // W streamed for a routing batch: per group of up to `cols` inputs, the tile holds their u_i in its
  // columns (column c: input k0 + c) and vector m (row m of W_i) gives their predictions m side by side.
  std::vector<Gemm> predict_streamed_batch(const Gemm& base, const CapsInputs& in, std::int64_t wW, std::int64_t uh,
                                           int Din, int JD) const {
    const int K = in.count;
    std::vector<Gemm> groups;
    for (int k0 = 0, n = 0; k0 < K; k0 += cols_, ++n) {
      Gemm g = base;
      if (K > cols_) g.name = fmt::format("{}.in{}", base.name, n);
      g.m_total = JD;
      g.n_total = std::min(cols_, K - k0);
      g.tile = {in.first + k0 * in.step, Din, rows_, 0, 1, in.step, 1};
      g.data = {isa::DataSource::Kind::kAffine, wW, std::int64_t(JD) * Din, Din, rows_, 1};
      g.out = {uh + k0, std::int64_t(JD) * K, K, 1, 0, 1, 0};
      g.m_block = isa::block_size(cfg_.accumulator.depth, g.m_total, g.n_tiles);
      groups.push_back(g);
    }
    return groups;
  }

  // The one-Gemm routing update below over R codes per (i, j): u_hat_j|i's R codes at uh + (i*J + j)*R
  // against v_j's at v + j*R (R = D for one input; D*K for a routing batch's interleaved codes).
  Gemm update_gemm(const std::string& name, const LayerQuant& q, std::int64_t uh, std::int64_t v, std::int64_t b_prev,
                   std::int64_t b, int I, int J, std::int64_t R) const {
    Gemm g;
    g.name = name;
    g.m_total = I * J;
    g.k_chunks = ceil_div(R, rows_);
    g.n_tiles = ceil_div(J, cols_);
    g.m_block = isa::block_size(cfg_.accumulator.depth, g.m_total, g.n_tiles);
    g.r_total = int(R);
    g.n_total = J;
    g.tile = {v, 0, rows_, std::int64_t(cols_) * R, 1, R, 1};
    g.data = {isa::DataSource::Kind::kAffine, uh, 0, R, rows_, 1};
    if (b_prev >= 0) g.init = {isa::AccInit::Kind::kPerOutput, b_prev, 0, 1, q.b_shift};
    g.out = {b, 0, 1, 0, 0, 1, J};
    g.shift = q.b_shift;
    return g;
  }

  // The routing update b_ij = reduce((b_ij << b_shift) + u_hat_j|i . v_j, b_shift) (b_prev < 0: b = 0
  // before). Two mappings:
  //  - one Gemm: the tile holds v_0..v_{J-1} in columns, data vector m = i*J + j is u_hat_j|i, and only
  //    column j of vector m is kept. Every vector passes all ceil(J/cols) tiles: for J <= cols that is
  //    one tile and the fewest tile loads. class_caps always uses it.
  //  - one Gemm per block of cols outputs j (named .m<n>): a batch item per input i, the block's
  //    vectors u_hat_j|i against one tile of their v_j. Each vector passes one tile, at the price of a
  //    tile load per input. With `blocked`, the engine's cycle model chooses between the two: the
  //    blocks win for conv_caps3d's wide J = types x positions.
  std::vector<Gemm> update_gemms(const std::string& name, const LayerQuant& q, std::int64_t uh, std::int64_t v,
                                 std::int64_t b_prev, std::int64_t b, int I, int J, int D, bool blocked) const {
    const int rows = rows_, cols = cols_;
    const Gemm one = update_gemm(name, q, uh, v, b_prev, b, I, J, D);
    if (!blocked || J <= cols) return {one};
    // A block's outputs are its vectors' accumulators, one each: at most min(cols, depth) of them.
    const int step = std::min(cols, cfg_.accumulator.depth);
    std::vector<Gemm> blocks;
    for (int j0 = 0, n = 0; j0 < J; j0 += step, ++n) {
      const int w = std::min(step, J - j0);
      Gemm g = one;
      g.name = fmt::format("{}.m{}", name, n);
      g.batch = I;
      g.m_total = w;
      g.n_tiles = 1;
      g.m_block = w;
      g.n_total = w;
      g.tile = {v + std::int64_t(j0) * D, 0, rows, 0, 1, D, 1};
      g.data = {isa::DataSource::Kind::kAffine, uh + std::int64_t(j0) * D, std::int64_t(J) * D, D, rows, 1};
      if (b_prev >= 0) g.init = {isa::AccInit::Kind::kPerOutput, b_prev + j0, J, 1, q.b_shift};
      g.out = {b + j0, J, 1, 0, 0, 1, w};
      blocks.push_back(g);
    }
    const isa::EngineTimingShape shape = engine_timing_shape(cfg_);
    isa::EngineTiming t;
    long long one_cycles = 0, block_cycles = 0;
    if (!isa::instr_timing(one, shape, &t)) return blocks;
    one_cycles = t.cycles;
    for (const Gemm& g : blocks) {
      if (!isa::instr_timing(g, shape, &t)) return {one};
      block_cycles += t.cycles;
    }
    return block_cycles < one_cycles ? blocks : std::vector<Gemm>{one};
  }

  // Dynamic routing over u_hat [I][J][D] at uh (docs/numerics.md, "Dynamic routing"); returns the base
  // of the last iteration's v, which `<layer>.out` names. bias: [J*D] accumulator codes or -1.
  // grid_types T > 0: the J outputs are T types x J/T positions (conv_caps3d); the sums then run per
  // type (the accumulators start at a per-column bias), and the last v is stored channel-major.
  std::int64_t route(const Layer& L, const LayerQuant& q, std::int64_t uh, int I, int J, int D, std::int64_t bias,
                     int T) {
    const int rows = rows_, cols = cols_, JD = J * D, P = T > 0 ? J / T : J;
    std::int64_t b_prev = -1, v = -1;
    for (int r = 0; r < L.routing_iterations; ++r) {
      const bool last = r + 1 == L.routing_iterations;
      const std::string it = fmt::format("{}.iter{}", L.name, r);
      const std::int64_t c = coupling(L, r, I, J, b_prev);
      // s_j = sum_i c_ij u_hat_j|i: tiles of u_hat (rows = i, cols = d), data vector c_.j. With a
      // bias, one Gemm per output type t (its J/T capsules share the bias of t's D columns).
      const std::int64_t s = mem_.add(it + ".s", {std::size_t(J), std::size_t(D)}, act_);
      const int parts = bias >= 0 ? T : 1, per = J / parts;
      for (int t = 0; t < parts; ++t) {
        Gemm sum;
        sum.name = parts == 1 ? fmt::format("{}/iter{}.sum", L.name, r) : fmt::format("{}/iter{}.sum.t{}", L.name, r, t);
        sum.batch = per;
        sum.m_total = 1;
        sum.m_block = 1;
        sum.k_chunks = ceil_div(I, rows);
        sum.n_tiles = ceil_div(D, cols);
        sum.r_total = I;
        sum.n_total = D;
        const std::int64_t j0 = std::int64_t(t) * per;
        sum.tile = {uh + j0 * D, D, std::int64_t(rows) * JD, cols, JD, 1, 1};
        sum.data = {isa::DataSource::Kind::kAffine, c + j0, 1, 0, std::int64_t(rows) * J, J};
        if (bias >= 0) sum.init = {isa::AccInit::Kind::kPerColumn, bias + j0 * D, 0, 0, 0};
        sum.out = {s + j0 * D, D, 0, 1, 0, 1, 0};
        sum.shift = q.s_shift;
        p_.instrs.push_back(sum);
      }
      if (last && T > 0) {
        v = mem_.add_transposed(it + ".v", {std::size_t(T), std::size_t(P), std::size_t(D)}, act_);
        squash_grid(fmt::format("{}/iter{}.squash", L.name, r), T, P, D, s, D, 1, v);
      } else {
        v = mem_.add(it + ".v", {std::size_t(J), std::size_t(D)}, act_);
        p_.instrs.push_back(squash(fmt::format("{}/iter{}.squash", L.name, r), J, D, s, D, 1, v, D, 1));
      }
      if (!last) {
        const std::int64_t b = mem_.add(it + ".b", {std::size_t(I), std::size_t(J)}, act_);
        for (Gemm& g : update_gemms(fmt::format("{}/iter{}.update", L.name, r), q, uh, v, b_prev, b, I, J, D, T > 0))
          p_.instrs.push_back(std::move(g));
        b_prev = b;
      }
    }
    mem_.alias(L.name + ".out", fmt::format("{}.iter{}.v", L.name, L.routing_iterations - 1));
    return v;
  }

  // The coupling coefficients c [I][J] of routing iteration r: CapsAcc's shortcut for r = 0 (b = 0, so
  // every input capsule's coefficients are softmax(0), a constant fill), else the softmax of each
  // input capsule's logits at b_prev. Returns c's base.
  std::int64_t coupling(const Layer& L, int r, int I, int J, std::int64_t b_prev) {
    const std::int64_t c = mem_.add(fmt::format("{}.iter{}.c", L.name, r), {std::size_t(I), std::size_t(J)}, act_);
    if (r == 0) {
      std::vector<std::int64_t> zeros(static_cast<std::size_t>(J), 0), c_init(static_cast<std::size_t>(J));
      fx::softmax(qm_.act, qm_.exp_lut, zeros.data(), J, c_init.data());
      Fill f;
      f.name = fmt::format("{}/iter{}.c", L.name, r);
      f.base = c;
      f.count = std::int64_t(I) * J;
      f.period = J;
      f.table = c_init;
      p_.instrs.push_back(f);
    } else {
      p_.instrs.push_back(activation_pass(fmt::format("{}/iter{}.softmax", L.name, r), Activate::Func::kSoftmax, I, J,
                                          b_prev, J, 1, c, J, 1));
    }
    return c;
  }

  // The routing of a class-capsule layer for a batch of K inputs with shared logits (the golden
  // model's routing_fixed_batch). Every tensor of the batch keeps its K inputs' codes of one atom side
  // by side: u_hat [I][J][D][K] at uh, s and v [J][D][K]; c and b [I][J] are shared; the norms are per
  // input (<layer>.norm.k<k>). Then each routing step is one pass for the whole batch:
  //  - the sums: as route()'s, with the D*K codes of u_hat_j|i (contiguous) as the tile's columns;
  //  - the update: the D*K codes of u_hat_j|i against v_j's in one accumulation, so that every input's
  //    agreement adds to the same b_ij.
  // Only the squash and the norms run per input (strided by K).
  void route_batch(const Layer& L, const LayerQuant& q, std::int64_t uh, int I, int J, int D, int K) {
    const int rows = rows_, cols = cols_;
    const std::int64_t DK = std::int64_t(D) * K, JDK = std::int64_t(J) * DK;
    const std::vector<std::size_t> batch_caps{std::size_t(J), std::size_t(D), std::size_t(K)};
    std::int64_t b_prev = -1, v = -1;
    for (int r = 0; r < L.routing_iterations; ++r) {
      const std::string it = fmt::format("{}.iter{}", L.name, r);
      const std::int64_t c = coupling(L, r, I, J, b_prev);
      // s^k_j = sum_i c_ij u_hat^k_j|i: tiles of u_hat (rows = i, cols = (d, k)), data vector c_.j.
      const std::int64_t s = mem_.add(it + ".s", batch_caps, act_);
      Gemm sum;
      sum.name = fmt::format("{}/iter{}.sum", L.name, r);
      sum.batch = J;
      sum.k_chunks = ceil_div(I, rows);
      sum.n_tiles = ceil_div(DK, cols);
      sum.r_total = I;
      sum.n_total = int(DK);
      sum.tile = {uh, DK, std::int64_t(rows) * JDK, cols, JDK, 1, 1};
      sum.data = {isa::DataSource::Kind::kAffine, c, 1, 0, std::int64_t(rows) * J, J};
      sum.out = {s, DK, 0, 1, 0, 1, 0};
      sum.shift = q.s_shift;
      p_.instrs.push_back(sum);
      v = mem_.add(it + ".v", batch_caps, act_);
      for (int k = 0; k < K; ++k)
        p_.instrs.push_back(squash(routing_batch_name(fmt::format("{}/iter{}.squash", L.name, r), k), J, D, s + k, DK,
                                   K, v + k, DK, K));
      if (r + 1 == L.routing_iterations) break;
      const std::int64_t b = mem_.add(it + ".b", {std::size_t(I), std::size_t(J)}, act_);
      p_.instrs.push_back(update_gemm(fmt::format("{}/iter{}.update", L.name, r), q, uh, v, b_prev, b, I, J, DK));
      b_prev = b;
    }
    mem_.alias(L.name + ".out", fmt::format("{}.iter{}.v", L.name, L.routing_iterations - 1));
    for (int k = 0; k < K; ++k)
      p_.instrs.push_back(class_norm(routing_batch_name(L.name + "/norm", k), q, J, D, v + k, DK, K,
                                     mem_.add(routing_batch_name(L.name + ".norm", k), {std::size_t(J)}, act_)));
  }

  // The weight code that aligns a code of `frac` fraction bits to F (fx::align_sum: a left shift by
  // F - frac), checked against the weight width.
  std::int64_t align_weight(std::size_t li, int r, int F, int frac) const {
    const int bits = F - frac;
    if (bits > cfg_.widths.weight - 2)
      fail(li, fmt::format(".inputs[{}]", r),
           fmt::format("aligning its {} fraction bits to {} needs a weight of 2^{}, beyond the {}-bit weight codes",
                       frac, F, bits, cfg_.widths.weight));
    return std::int64_t{1} << bits;
  }

  // A stationary tile of w times the n x n identity, stored tile-major: the constant operand of a
  // requantizing copy or add.
  std::int64_t scaled_identity(const std::string& name, int n, std::int64_t w) {
    if (const isa::Region* r = p_.region(name)) return r->base;  // an earlier input of a routing batch
    const std::int64_t base =
        mem_.add_tiled(name, {std::size_t(n), std::size_t(n)}, cfg_.widths.weight, rows_, cols_);
    std::vector<std::int32_t> values(std::size_t(n) * std::size_t(n), 0);
    for (int i = 0; i < n; ++i) values[std::size_t(i) * std::size_t(n) + std::size_t(i)] = std::int32_t(w);
    p_.constants.push_back({name, std::move(values)});
    return base;
  }

  // The tile source of a tiled region of `outputs` x `reduction` (isa::Region::tile_rows).
  isa::TileSource tiled(std::int64_t base, int outputs) const {
    const std::int64_t n_tiles = ceil_div(outputs, cols_);
    return {base, 0, n_tiles * rows_ * cols_, std::int64_t(rows_) * cols_, cols_, 1, 1};
  }

  // caps_add: out = align_sum(inputs) element by element. The inputs share one layout; their elements
  // in address order are cut into vectors of E consecutive codes (E the largest divisor of the
  // element count that fits a tile). Each input is one part of a split reduction through a tile of
  // 2^(F - frac) times the identity: the accumulators hold a block's sums from the first input to the
  // last, whose part reduces them by F - out_frac (the one rounding of fx::align_sum).
  Operand caps_add(std::size_t li, const LayerQuant& q, const std::vector<Operand>& ins) {
    const Layer& L = net_.layers[li];
    for (std::size_t r = 1; r < ins.size(); ++r)
      if (ins[r].layout != ins[0].layout)
        fail(li, fmt::format(".inputs[{}]", r), "the added capsules are stored in different layouts (channel-major "
                                                "grid and capsule-major); add outputs of the same kind of layer");
    const long long n_el = ins[0].shape.elements();
    int F = q.out_frac;
    for (const Operand& o : ins) F = std::max(F, o.frac);
    const int shift = F - q.out_frac;
    int E = 1;
    for (int e = std::min(rows_, cols_); e >= 1; --e)
      if (n_el % e == 0) {
        E = e;
        break;
      }
    const Operand& first = ins[0];
    const std::int64_t out = first.layout == Operand::Layout::kChannels && first.shape.capsules
                                 ? mem_.add_transposed(L.name + ".out", {std::size_t(first.types()),
                                                                         std::size_t(first.positions()),
                                                                         std::size_t(first.atoms())}, act_)
                                 : mem_.add(L.name + ".out", {std::size_t(first.types()) * std::size_t(first.positions()),
                                                              std::size_t(first.atoms())}, act_);
    std::vector<std::int64_t> tiles;
    for (std::size_t r = 0; r < ins.size(); ++r)
      tiles.push_back(scaled_identity(fmt::format("{}.align{}", L.name, r), E,
                                      align_weight(li, int(r), F, ins[r].frac)));
    const int M = int(n_el / E), block = std::min(M, cfg_.accumulator.depth);
    for (int m0 = 0, blk = 0; m0 < M; m0 += block, ++blk) {
      const int m = std::min(block, M - m0);
      for (std::size_t r = 0; r < ins.size(); ++r) {
        Gemm g;
        g.name = fmt::format("{}/add.m{}.in{}", L.name, blk, r);
        g.m_total = m;
        g.m_block = m;
        g.r_total = E;
        g.n_total = E;
        g.tile = tiled(tiles[r], E);
        g.data = {isa::DataSource::Kind::kAffine, ins[r].base + std::int64_t(m0) * E, 0, E, rows_, 1};
        g.out = {out + std::int64_t(m0) * E, 0, E, 1, 0, 1, 0};
        g.shift = shift;
        g.acc_continue = r > 0;
        g.acc_hold = r + 1 < ins.size();
        p_.instrs.push_back(g);
      }
    }
    return {out, first.layout, L.out, q.next_frac};
  }

  // flatten_caps: each input's capsules, requantized (fx::align_sum of one code), copied capsule-major
  // after the previous input's. One Gemm per input: a batch item per type, a vector per position
  // (its D atoms, wherever the layout puts them), through a tile of 2^(F - frac) times the identity.
  Operand flatten_caps(std::size_t li, const LayerQuant& q, const std::vector<Operand>& ins) {
    const Layer& L = net_.layers[li];
    const int D = L.out.dim;
    const std::int64_t out = mem_.add(L.name + ".out", {std::size_t(L.out.count), std::size_t(D)}, act_);
    std::int64_t at = 0;
    for (std::size_t r = 0; r < ins.size(); ++r) {
      const Operand& in = ins[r];
      const int F = std::max(q.out_frac, in.frac);
      const std::int64_t tile =
          scaled_identity(fmt::format("{}.align{}", L.name, r), D, align_weight(li, int(r), F, in.frac));
      Gemm g;
      g.name = fmt::format("{}/copy.in{}", L.name, r);
      g.batch = in.types();
      g.m_total = in.positions();
      g.k_chunks = ceil_div(D, rows_);
      g.n_tiles = ceil_div(D, cols_);
      g.m_block = isa::block_size(cfg_.accumulator.depth, g.m_total, g.n_tiles);
      g.r_total = D;
      g.n_total = D;
      g.tile = tiled(tile, D);
      g.data = {isa::DataSource::Kind::kAffine, in.base, in.type_step(), in.position_step(),
                std::int64_t(rows_) * in.atom_step(), in.atom_step()};
      g.out = {out + at * D, in.type_step(), D, 1, 0, 1, 0};
      g.shift = F - q.out_frac;
      p_.instrs.push_back(g);
      at += std::int64_t(in.types()) * in.positions();
    }
    return {out, Operand::Layout::kCapsules, L.out, q.next_frac};
  }

  const AccelConfig& cfg_;
  const Network& net_;
  const QuantizedModel& qm_;
  const CompileOptions opts_;
  isa::Program p_;
  Allocator mem_;
  const int rows_, cols_, act_;
  Operand input_;
  std::vector<Operand> outs_;
};

}  // namespace

isa::Program compile_program(const AccelConfig& cfg, const Network& net, const QuantizedModel& qm,
                             const CompileOptions& opts) {
  if (qm.layers.size() != net.layers.size()) throw std::logic_error("compile_program: model/network mismatch");
  if (opts.routing_batch < 1) throw std::invalid_argument("compile_program: routing batch below 1");
  require_capsnet_layers(net, "the compiler");
  return ProgramBuilder(cfg, net, qm, opts).build();
}

}  // namespace capsgen
