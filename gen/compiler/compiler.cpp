#include "compiler/compiler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "isa/engine.hpp"
#include "isa/engine_timing.hpp"
#include "numerics/activation.hpp"

namespace capsgen {
namespace {

using isa::Activate;
using isa::Fill;
using isa::Gemm;

int ceil_div(long long a, long long b) { return int((a + b - 1) / b); }

class Allocator {
 public:
  explicit Allocator(isa::Program& p) : p_(p) {}
  std::int64_t add(const std::string& name, std::vector<std::size_t> shape, int bits) {
    const std::int64_t base = p_.size;
    p_.size += std::int64_t(shape_size(shape));
    p_.regions.push_back({name, base, std::move(shape), bits});
    return base;
  }
  // Batched matrices stored transposed (isa::Region::minor_transposed).
  std::int64_t add_transposed(const std::string& name, std::vector<std::size_t> shape, int bits) {
    const std::int64_t base = add(name, std::move(shape), bits);
    p_.regions.back().minor_transposed = true;
    return base;
  }
  // A stationary operand stored tile-major (isa::Region::tile_rows).
  std::int64_t add_tiled(const std::string& name, std::vector<std::size_t> shape, int bits, int rows, int cols) {
    isa::Region r{name, p_.size, std::move(shape), bits};
    r.tile_rows = rows;
    r.tile_cols = cols;
    p_.size += r.stored_size();
    p_.regions.push_back(std::move(r));
    return p_.regions.back().base;
  }
  void alias(const std::string& name, const std::string& of) {
    const isa::Region* r = p_.region(of);
    if (!r) throw std::logic_error("alias of unknown region " + of);
    isa::Region a = *r;
    a.name = name;
    p_.regions.push_back(a);
  }

 private:
  isa::Program& p_;
};

int block_size(const AccelConfig& cfg, int m_total, int n_tiles) {
  return isa::block_size(cfg.accumulator.depth, m_total, n_tiles);
}

// Conv2d and the convolution of a primary_caps layer (isa::conv_gemm).
Gemm conv_gemm(const AccelConfig& cfg, const Layer& L, std::int64_t in_base, std::int64_t w_base,
               std::int64_t bias_base) {
  isa::ConvShape s;
  s.channels = L.in.channels;
  s.height = L.in.height;
  s.width = L.in.width;
  s.out_channels = L.out_channels;
  s.kernel_h = L.kernel_h;
  s.kernel_w = L.kernel_w;
  s.stride = L.stride;
  s.padding = L.padding;
  return isa::conv_gemm(s, cfg.array.rows, cfg.array.cols, cfg.accumulator.depth, in_base, w_base, bias_base);
}

}  // namespace

isa::Program compile_program(const AccelConfig& cfg, const Network& net, const QuantizedModel& qm) {
  if (qm.layers.size() != net.layers.size()) throw std::logic_error("compile_program: model/network mismatch");
  require_mapped_layers(net, "the compiler");
  const int rows = cfg.array.rows, cols = cfg.array.cols;
  isa::Program p;
  p.network = net.name;
  p.preset = cfg.name;
  Allocator mem(p);
  const int A = cfg.widths.act;
  std::int64_t cur = mem.add("input", {std::size_t(net.input.channels), std::size_t(net.input.height),
                                       std::size_t(net.input.width)}, A);

  for (std::size_t li = 0; li < net.layers.size(); ++li) {
    const Layer& L = net.layers[li];
    const LayerQuant& q = qm.layers[li];
    if (L.kind == LayerKind::Conv2d || L.kind == LayerKind::PrimaryCaps) {
      const int Ho = (L.in.height + 2 * L.padding - L.kernel_h) / L.stride + 1;
      const int Wo = (L.in.width + 2 * L.padding - L.kernel_w) / L.stride + 1;
      const std::int64_t w = mem.add_tiled(L.name + ".weight", q.weight.shape, cfg.widths.weight, rows, cols);
      const std::int64_t b = q.bias.empty() ? -1 : mem.add(L.name + ".bias", {q.bias.size()}, cfg.widths.psum);
      Gemm g = conv_gemm(cfg, L, cur, w, b);
      g.shift = q.shift;
      if (L.kind == LayerKind::Conv2d) {
        g.name = L.name;
        g.relu = L.activation == Activation::Relu;
        const std::int64_t out = mem.add(L.name + ".out", {std::size_t(L.out_channels), std::size_t(Ho), std::size_t(Wo)}, A);
        g.out = isa::map_output(out, std::int64_t(Ho) * Wo);
        p.instrs.push_back(g);
        cur = out;
      } else {
        // Output channel o = t*D + d at position m goes to capsule t*Ho*Wo + m, element d.
        const int D = L.capsule_dim, N = L.capsule_types * Ho * Wo;
        g.name = L.name + "/conv";
        const std::int64_t s = mem.add(L.name + ".s", {std::size_t(N), std::size_t(D)}, A);
        g.out = isa::capsule_output(s, std::int64_t(Ho) * Wo, D);
        p.instrs.push_back(g);
        const std::int64_t u = mem.add(L.name + ".out", {std::size_t(N), std::size_t(D)}, A);
        Activate sq;
        sq.name = L.name + "/squash";
        sq.func = Activate::Func::kSquash;
        sq.count = N;
        sq.n = D;
        sq.in_base = s;
        sq.in_s_v = D;
        sq.out_base = u;
        sq.out_s_v = D;
        p.instrs.push_back(sq);
        cur = u;
      }
      continue;
    }

    // class_caps: predictions, then the routing iterations.
    const int I = L.in.count, Din = L.in.dim, J = L.num_capsules, D = L.capsule_dim, JD = J * D;
    {
      // Two mappings of the predictions u_hat_i = W_i u_i, chosen by the engine's cycle model:
      //  - W streamed (W stored [i][jd][e]): G predictions per vector, the tile holds u_i
      //    block-diagonally in G columns and the data vector G rows of W_i side by side
      //    (docs/accelerator.md; G divides J*D so every vector is full). Every vector is used once:
      //    J*D/G vectors per capsule through the vector-wide gather (rows cycles each where the
      //    element-wise gather has to be used), G results each for the one-per-cycle writer.
      //  - W stationary (W stored transposed, [i][e][jd]: contiguous tile rows): W_i's tiles, rows e
      //    and columns jd, u_i the one data vector. A tile per vector, so about ceil(J*D/cols) *
      //    rows cycles per capsule; the only choice when W codes are wider than the data input.
      int G = 1;
      if (Din <= rows)
        for (int g = std::min(rows / Din, cols); g >= 1; --g)
          if (JD % g == 0) {
            G = g;
            break;
          }
      // Addresses: W first, u_hat after it (both mappings use the same sizes).
      const std::int64_t wW = p.size, uh = p.size + std::int64_t(shape_size(q.weight.shape));
      Gemm streamed;
      streamed.name = L.name + "/predict";
      streamed.batch = I;
      streamed.shift = q.shift;
      Gemm stationary = streamed;
      if (G > 1) {
        streamed.m_total = JD / G;
        streamed.k_chunks = 1;
        streamed.n_tiles = 1;
        streamed.r_total = Din;
        streamed.n_total = G;
        streamed.tile = {cur, Din, 0, 0, 1, 0, G};
        streamed.data = {isa::DataSource::Kind::kAffine, wW, std::int64_t(JD) * Din, std::int64_t(G) * Din, 0, 1};
        streamed.out = {uh, JD, G, 1, 0, 1, 0};
      } else {
        streamed.m_total = JD;
        streamed.k_chunks = ceil_div(Din, rows);
        streamed.n_tiles = 1;
        streamed.r_total = Din;
        streamed.n_total = 1;
        streamed.tile = {cur, Din, rows, 0, 1, 0, 1};
        streamed.data = {isa::DataSource::Kind::kAffine, wW, std::int64_t(JD) * Din, Din, rows, 1};
        streamed.out = {uh, JD, 1, 1, 0, 1, 0};
      }
      streamed.m_block = block_size(cfg, streamed.m_total, streamed.n_tiles);
      stationary.m_total = 1;
      stationary.k_chunks = ceil_div(Din, rows);
      stationary.n_tiles = ceil_div(JD, cols);
      stationary.r_total = Din;
      stationary.n_total = JD;
      stationary.tile = {wW, std::int64_t(JD) * Din, std::int64_t(rows) * JD, cols, JD, 1, 1};
      stationary.data = {isa::DataSource::Kind::kAffine, cur, Din, 0, rows, 1};
      stationary.out = {uh, JD, 0, 1, 0, 1, 0};
      stationary.m_block = 1;
      const isa::EngineTimingShape shape{rows, cols, cfg.array.pe_pipeline, cfg.widths.act};
      isa::EngineTiming ts, tw;
      const bool ts_ok = isa::instr_timing(streamed, shape, &ts);
      // W stationary keeps every tile's partial sums over the chunks of e: it must fit the accumulators.
      bool tw_ok = isa::instr_timing(stationary, shape, &tw);
      try {
        isa::encode_engine(stationary, rows, cols, cfg.accumulator.depth);
      } catch (const std::invalid_argument&) {
        tw_ok = false;
      }
      const bool w_stationary = cfg.widths.weight > cfg.widths.data || !ts_ok || (tw_ok && tw.cycles < ts.cycles);
      if (w_stationary) {
        mem.add_transposed(L.name + ".W", q.weight.shape, cfg.widths.weight);
      } else {
        mem.add(L.name + ".W", q.weight.shape, cfg.widths.weight);
      }
      if (mem.add(L.name + ".u_hat", {std::size_t(I), std::size_t(J), std::size_t(D)}, A) != uh)
        throw std::logic_error("compile: u_hat not where the prediction writes it");
      p.instrs.push_back(w_stationary ? stationary : streamed);
    }
    const std::int64_t uh = p.region(L.name + ".u_hat")->base;

    std::vector<std::int64_t> zeros(static_cast<std::size_t>(J), 0), c_init(static_cast<std::size_t>(J));
    fx::softmax(qm.act, qm.exp_lut, zeros.data(), J, c_init.data());
    std::int64_t b_prev = -1;
    std::int64_t v = -1;
    for (int r = 0; r < L.routing_iterations; ++r) {
      const std::string it = fmt::format("{}.iter{}", L.name, r);
      const std::int64_t c = mem.add(it + ".c", {std::size_t(I), std::size_t(J)}, A);
      if (r == 0) {
        // CapsAcc's shortcut: b = 0, so every input capsule's coefficients are softmax(0).
        Fill f;
        f.name = fmt::format("{}/iter{}.c", L.name, r);
        f.base = c;
        f.count = std::int64_t(I) * J;
        f.period = J;
        f.table = c_init;
        p.instrs.push_back(f);
      } else {
        Activate sm;
        sm.name = fmt::format("{}/iter{}.softmax", L.name, r);
        sm.func = Activate::Func::kSoftmax;
        sm.count = I;
        sm.n = J;
        sm.in_base = b_prev;
        sm.in_s_v = J;
        sm.out_base = c;
        sm.out_s_v = J;
        p.instrs.push_back(sm);
      }
      // s_j = sum_i c_ij u_hat_j|i: tiles of u_hat (rows = i, cols = d), data vector c_.j.
      const std::int64_t s = mem.add(it + ".s", {std::size_t(J), std::size_t(D)}, A);
      Gemm sum;
      sum.name = fmt::format("{}/iter{}.sum", L.name, r);
      sum.batch = J;
      sum.m_total = 1;
      sum.m_block = 1;
      sum.k_chunks = ceil_div(I, rows);
      sum.n_tiles = ceil_div(D, cols);
      sum.r_total = I;
      sum.n_total = D;
      sum.tile = {uh, D, std::int64_t(rows) * JD, cols, JD, 1, 1};
      sum.data = {isa::DataSource::Kind::kAffine, c, 1, 0, std::int64_t(rows) * J, J};
      sum.out = {s, D, 0, 1, 0, 1, 0};
      sum.shift = q.s_shift;
      p.instrs.push_back(sum);
      v = mem.add(it + ".v", {std::size_t(J), std::size_t(D)}, A);
      Activate sq;
      sq.name = fmt::format("{}/iter{}.squash", L.name, r);
      sq.func = Activate::Func::kSquash;
      sq.count = J;
      sq.n = D;
      sq.in_base = s;
      sq.in_s_v = D;
      sq.out_base = v;
      sq.out_s_v = D;
      p.instrs.push_back(sq);
      if (r + 1 < L.routing_iterations) {
        // b_ij = reduce((b_ij << b_shift) + u_hat_j|i . v_j): tile = v_0..v_{J-1} in columns,
        // data vector m = i*J + j is u_hat_j|i, and only column j of vector m is kept.
        const std::int64_t b = mem.add(it + ".b", {std::size_t(I), std::size_t(J)}, A);
        Gemm up;
        up.name = fmt::format("{}/iter{}.update", L.name, r);
        up.m_total = I * J;
        up.k_chunks = ceil_div(D, rows);
        up.n_tiles = ceil_div(J, cols);
        up.m_block = block_size(cfg, up.m_total, up.n_tiles);
        up.r_total = D;
        up.n_total = J;
        up.tile = {v, 0, rows, std::int64_t(cols) * D, 1, D, 1};
        up.data = {isa::DataSource::Kind::kAffine, uh, 0, D, rows, 1};
        if (b_prev >= 0) up.init = {isa::AccInit::Kind::kPerOutput, b_prev, 0, 1, q.b_shift};
        up.out = {b, 0, 1, 0, 0, 1, J};
        up.shift = q.b_shift;
        p.instrs.push_back(up);
        b_prev = b;
      }
    }
    mem.alias(L.name + ".out", fmt::format("{}.iter{}.v", L.name, L.routing_iterations - 1));
    const std::int64_t nrm = mem.add(L.name + ".norm", {std::size_t(J)}, A);
    Activate an;
    an.name = L.name + "/norm";
    an.func = Activate::Func::kNorm;
    an.count = J;
    an.n = D;
    an.in_base = v;
    an.in_s_v = D;
    an.out_base = nrm;
    an.out_s_v = 1;
    an.norm_shift = q.norm_shift;
    p.instrs.push_back(an);
    cur = v;
  }
  return p;
}

std::vector<std::int32_t> build_image(const isa::Program& prog, const Network& net, const QuantizedModel& qm,
                                      const IntTensor& input) {
  std::vector<std::int32_t> mem(std::size_t(prog.size), 0);
  auto place = [&](const std::string& name, const auto& values) {
    const isa::Region* r = prog.region(name);
    if (!r) throw std::logic_error("build_image: no region " + name);
    if (shape_size(r->shape) != values.size()) throw std::logic_error("build_image: size mismatch for " + name);
    for (std::size_t i = 0; i < values.size(); ++i)
      mem[std::size_t(r->base + r->offset_of(std::int64_t(i)))] = std::int32_t(values[i]);
  };
  place("input", input.data);
  for (std::size_t li = 0; li < net.layers.size(); ++li) {
    const Layer& L = net.layers[li];
    const LayerQuant& q = qm.layers[li];
    place(L.name + (L.kind == LayerKind::ClassCaps ? ".W" : ".weight"), q.weight.data);
    if (!q.bias.empty()) {
      std::vector<std::int32_t> b(q.bias.begin(), q.bias.end());
      place(L.name + ".bias", b);
    }
  }
  return mem;
}

bool starts_descnet_row(const std::string& prev_instr, const std::string& instr) {
  const auto layer = [](const std::string& n) { return n.substr(0, n.find('/')); };
  if (prev_instr.empty() || layer(prev_instr) != layer(instr)) return true;
  const auto slash = instr.find('/');
  if (slash == std::string::npos) return true;
  const std::string suffix = instr.substr(slash + 1);
  const auto dot = suffix.rfind('.');
  const std::string kind = dot == std::string::npos ? suffix : suffix.substr(dot + 1);
  return kind == "sum" || kind == "update";
}

// Cycles of one instruction: the engine's cycle model (isa::engine_timing, exact against the RTL's
// measured cycles, docs/rtl-engine.md), or for an instruction the engine cannot encode the coarse
// model v0: one (chunk, tile) costs max(vectors, rows), plus rows + cols per Gemm; an activation pass
// count x n + n; a fill its count.
void add_cycles(const AccelConfig& cfg, const isa::Instr& in, OpStats& s) {
  const long long rows = cfg.array.rows, cols = cfg.array.cols;
  isa::EngineTiming t;
  if (isa::instr_timing(in, {cfg.array.rows, cfg.array.cols, cfg.array.pe_pipeline, cfg.widths.act}, &t)) {
    s.cycles += t.cycles;
    s.stall_data += t.stall_data;
    s.stall_tile += t.stall_tile;
    s.stall_out += t.stall_out;
    return;
  }
  ++s.v0_instrs;
  if (const auto* g = std::get_if<isa::Gemm>(&in)) {
    long long cyc = 0;
    for (long long m0 = 0; m0 < g->m_total; m0 += g->m_block)
      cyc += g->k_chunks * g->n_tiles * std::max(std::min<long long>(g->m_block, g->m_total - m0), rows);
    s.cycles += g->batch * cyc + rows + cols;
  } else if (const auto* a = std::get_if<isa::Activate>(&in)) {
    s.cycles += (long long)a->count * a->n + a->n;
  } else {
    s.cycles += std::get<isa::Fill>(in).count;
  }
}

// Adds one instruction's statistics to s (cycles, MACs, accesses; usage as a maximum).
void add_instr_stats(const AccelConfig& cfg, const isa::Instr& in, OpStats& s) {
  const long long rows = cfg.array.rows, cols = cfg.array.cols;
  // Bytes per element in each memory: data and weight codes, and partial sums (bias and logit
  // codes live at psum width too).
  const long long db = (cfg.widths.data + 7) / 8, wb = (cfg.widths.weight + 7) / 8, pb = (cfg.widths.psum + 7) / 8;
  add_cycles(cfg, in, s);
  if (const auto* g = std::get_if<isa::Gemm>(&in)) {
    const long long blocks = (g->m_total + g->m_block - 1) / g->m_block;
    const long long vec = (long long)g->batch * g->m_total * g->k_chunks * g->n_tiles;
    s.vectors += vec;
    s.issued_macs += vec * rows * cols;
    s.tile_loads += (long long)g->batch * blocks * g->k_chunks * g->n_tiles;
    const bool diag = g->tile.diag_groups > 1;
    const long long outputs_used = g->out.select_mod > 0 ? (long long)g->m_total : (long long)g->m_total * g->n_total;
    s.useful_macs += (long long)g->batch * outputs_used * g->r_total;
    // A gathered block is reused by every tile; a block-diagonal tile reads u_i once.
    const long long data_reads =
        (long long)g->batch * g->m_total * (diag ? (long long)g->r_total * g->n_total : g->r_total);
    const long long tile_reads = (long long)g->batch * blocks * (diag ? g->r_total : (long long)g->r_total * g->n_total);
    long long init_reads = 0;
    if (g->init.kind == isa::AccInit::Kind::kPerColumn) init_reads = (long long)g->batch * blocks * g->n_total;
    if (g->init.kind == isa::AccInit::Kind::kPerOutput) init_reads = (long long)g->batch * g->m_total;
    const long long writes = (long long)g->batch * outputs_used;
    s.data_reads += data_reads;
    s.tile_reads += tile_reads;
    s.init_reads += init_reads;
    s.writes += writes;
    const long long entries = (long long)g->m_block * g->n_tiles * cols;
    s.acc_entries = std::max<long long>(s.acc_entries, entries);

    // Usage (docs/dse-memory.md): the data memory holds the current block's vectors for two
    // chunks (one streaming, one prefetched) and the block's outputs; the weight memory the
    // tiles of two chunks; the accumulators every partial sum of the block. Never more than
    // the whole operand.
    const long long out_cols = g->out.select_mod > 0 ? 1 : g->n_total;
    const long long m_blk = std::min<long long>(g->m_block, g->m_total);
    const long long vec_len = diag ? (long long)g->r_total * g->n_total / std::max(1, g->k_chunks) : rows;
    const long long d_in = std::min<long long>(2 * m_blk * vec_len, data_reads / g->batch);
    const long long w_tiles = std::min<long long>(2 * rows * g->n_tiles * cols, tile_reads / g->batch / blocks);
    s.usage_data = std::max(s.usage_data, (d_in + m_blk * out_cols) * db);
    s.usage_weight = std::max(s.usage_weight, w_tiles * wb);
    s.usage_acc = std::max(s.usage_acc, entries * pb);
    // Accesses: every streamed vector reads and writes a column of partial sums (the last
    // chunk's reduction reads them once more), tiles come from off-chip through the weight
    // memory, the operand's distinct elements from off-chip through the data memory, and
    // outputs go to the data memory and off-chip (write-through).
    const long long in_elems = g->data.kind == isa::DataSource::Kind::kConv
                                   ? std::min<long long>(data_reads, (long long)g->batch * g->data.channels *
                                                                         g->data.height * g->data.width)
                                   : data_reads;
    s.data_rd += data_reads * db + init_reads * pb;
    s.data_wr += in_elems * db + writes * db;
    s.weight_rd += tile_reads * wb;
    s.weight_wr += tile_reads * wb;
    s.acc_rd += (vec * cols + (long long)g->batch * g->m_total * g->n_tiles * cols) * pb;
    s.acc_wr += vec * cols * pb;
    s.offchip_rd += tile_reads * wb + in_elems * db + init_reads * pb;
    s.offchip_wr += writes * db;
  } else if (const auto* a = std::get_if<isa::Activate>(&in)) {
    const long long rd = (long long)a->count * a->n;
    const long long wr = a->func == isa::Activate::Func::kNorm ? a->count : (long long)a->count * a->n;
    s.data_reads += rd;
    s.writes += wr;
    // Vectors stay on chip: the input and output tensors are resident in the data memory.
    s.usage_data = std::max(s.usage_data, (rd + wr) * db);
    s.data_rd += rd * db;
    s.data_wr += wr * db;
  } else if (const auto* f = std::get_if<isa::Fill>(&in)) {
    s.writes += f->count;
    s.usage_data = std::max(s.usage_data, f->count * db);
    s.data_wr += f->count * db;
  }
}

OpStats instr_stats(const AccelConfig& cfg, const isa::Instr& in) {
  OpStats s{isa::instr_name(in)};
  add_instr_stats(cfg, in, s);
  return s;
}

std::vector<OpStats> analyze_program(const AccelConfig& cfg, const isa::Program& prog) {
  std::vector<OpStats> out;
  std::string prev;
  auto stats_for = [&](const isa::Instr& in) -> OpStats& {
    const std::string& name = isa::instr_name(in);
    if (out.empty() || starts_descnet_row(prev, name)) {
      out.push_back(OpStats{name});
    } else {
      const auto slash = name.find('/');
      out.back().name += "+" + (slash == std::string::npos ? name : name.substr(slash + 1));
    }
    prev = name;
    return out.back();
  };
  for (const auto& in : prog.instrs) add_instr_stats(cfg, in, stats_for(in));
  return out;
}

long long program_cycles(const AccelConfig& cfg, const isa::Program& prog) {
  std::vector<long long> cycles;
  for (const auto& in : prog.instrs) cycles.push_back(instr_stats(cfg, in).cycles);
  return isa::program_cycles(cycles, isa::engine_descriptor_words());
}

std::string stats_json(const AccelConfig& cfg, const isa::Program& prog, const std::vector<OpStats>& stats) {
  nlohmann::ordered_json j;
  j["network"] = prog.network;
  j["preset"] = cfg.name;
  j["array"] = {{"rows", cfg.array.rows}, {"cols", cfg.array.cols}};
  j["clock_mhz"] = cfg.clock.target_mhz;
  int v0 = 0;
  for (const auto& s : stats) v0 += s.v0_instrs;
  j["cycle_model"] = v0 == 0 ? "engine (isa::engine_timing: the RTL's cycles, docs/compiler.md)"
                             : fmt::format("engine, {} instruction(s) the engine cannot encode by v0 (docs/compiler.md)", v0);
  long long cycles = 0, macs = 0;
  for (const auto& s : stats) {
    cycles += s.cycles;
    macs += s.useful_macs;
    j["operations"].push_back({{"name", s.name},
                               {"cycles", s.cycles},
                               {"stall_cycles", {{"data", s.stall_data}, {"tile", s.stall_tile}, {"output", s.stall_out}}},
                               {"cycle_model", s.v0_instrs ? "v0" : "engine"},
                               {"useful_macs", s.useful_macs},
                               {"issued_macs", s.issued_macs},
                               {"utilization", s.issued_macs ? double(s.useful_macs) / double(s.issued_macs) : 0.0},
                               {"vectors", s.vectors},
                               {"tile_loads", s.tile_loads},
                               {"data_reads", s.data_reads},
                               {"tile_reads", s.tile_reads},
                               {"init_reads", s.init_reads},
                               {"writes", s.writes},
                               {"acc_entries", s.acc_entries},
                               {"usage_bytes", {{"data", s.usage_data}, {"weight", s.usage_weight}, {"acc", s.usage_acc}}},
                               {"onchip_bytes",
                                {{"data", {{"read", s.data_rd}, {"write", s.data_wr}}},
                                 {"weight", {{"read", s.weight_rd}, {"write", s.weight_wr}}},
                                 {"acc", {{"read", s.acc_rd}, {"write", s.acc_wr}}}}},
                               {"offchip_bytes", {{"read", s.offchip_rd}, {"write", s.offchip_wr}}}});
  }
  j["total_cycles"] = cycles;
  j["useful_macs"] = macs;
  j["inferences_per_second"] = cycles ? cfg.clock.target_mhz * 1e6 / double(cycles) : 0.0;
  j["array_utilization"] = cycles ? double(macs) / (double(cycles) * cfg.array.rows * cfg.array.cols) : 0.0;
  // End to end on the accelerator: total_cycles plus the sequencer's descriptor fetches and hand-overs.
  const long long prog_cycles = program_cycles(cfg, prog);
  j["program_cycles"] = prog_cycles;
  j["program_inferences_per_second"] = prog_cycles ? cfg.clock.target_mhz * 1e6 / double(prog_cycles) : 0.0;
  return j.dump(2) + "\n";
}

}  // namespace capsgen

namespace capsgen {

std::string program_json(const isa::Program& prog) {
  nlohmann::ordered_json j;
  j["network"] = prog.network;
  j["preset"] = prog.preset;
  j["address_space_elements"] = prog.size;
  for (const auto& r : prog.regions) {
    nlohmann::json jr = {{"name", r.name}, {"base", r.base}, {"shape", r.shape}, {"bits", r.bits}};
    if (r.tile_rows > 0) jr["tiles"] = {{"rows", r.tile_rows}, {"cols", r.tile_cols}, {"size", r.stored_size()}};
    j["regions"].emplace_back(std::move(jr));
  }
  for (const auto& in : prog.instrs) {
    nlohmann::ordered_json d;
    if (const auto* g = std::get_if<isa::Gemm>(&in)) {
      d = {{"op", "gemm"}, {"name", g->name}, {"batch", g->batch}, {"m_total", g->m_total}, {"m_block", g->m_block},
           {"k_chunks", g->k_chunks}, {"n_tiles", g->n_tiles}, {"r_total", g->r_total}, {"n_total", g->n_total},
           {"shift", g->shift}, {"relu", g->relu}};
      d["tile"] = {{"base", g->tile.base}, {"s_b", g->tile.s_b}, {"s_k", g->tile.s_k}, {"s_n", g->tile.s_n},
                   {"s_r", g->tile.s_r}, {"s_c", g->tile.s_c}, {"diag_groups", g->tile.diag_groups}};
      if (g->data.kind == isa::DataSource::Kind::kConv)
        d["data"] = {{"kind", "conv"}, {"base", g->data.base}, {"channels", g->data.channels}, {"height", g->data.height},
                     {"width", g->data.width}, {"kernel", {g->data.kernel_h, g->data.kernel_w}}, {"stride", g->data.stride},
                     {"padding", g->data.padding}, {"out_w", g->data.out_w}};
      else
        d["data"] = {{"kind", "affine"}, {"base", g->data.base}, {"s_b", g->data.s_b}, {"s_m", g->data.s_m},
                     {"s_k", g->data.s_k}, {"s_r", g->data.s_r}};
      static const char* kInit[] = {"zero", "per_column", "per_output"};
      d["init"] = {{"kind", kInit[int(g->init.kind)]}, {"base", g->init.base}, {"s_b", g->init.s_b}, {"s_m", g->init.s_m},
                   {"shift", g->init.shift}};
      d["out"] = {{"base", g->out.base}, {"s_b", g->out.s_b}, {"s_m", g->out.s_m}, {"s_o1", g->out.s_o1},
                  {"s_o2", g->out.s_o2}, {"o_div", g->out.o_div}, {"select_mod", g->out.select_mod}};
    } else if (const auto* a = std::get_if<isa::Activate>(&in)) {
      static const char* kFunc[] = {"squash", "softmax", "norm"};
      d = {{"op", "activate"}, {"name", a->name}, {"func", kFunc[int(a->func)]}, {"count", a->count}, {"n", a->n},
           {"in", {a->in_base, a->in_s_v, a->in_s_e}}, {"out", {a->out_base, a->out_s_v, a->out_s_e}},
           {"norm_shift", a->norm_shift}};
    } else if (const auto* f = std::get_if<isa::Fill>(&in)) {
      d = {{"op", "fill"}, {"name", f->name}, {"base", f->base}, {"count", f->count}, {"stride", f->stride}};
      if (f->period > 0) d["table"] = f->table;
      else d["value"] = f->value;
    }
    j["program"].push_back(d);
  }
  return j.dump(2) + "\n";
}

}  // namespace capsgen
