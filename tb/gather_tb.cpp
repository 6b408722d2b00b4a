// Block test of the gather address generator (capsgen_gather, docs/rtl-gather.md). The reference is
// gen/isa/gather.hpp: each descriptor is a Gemm, encoded with isa::encode_gather (the same encoder
// the compiler/controller uses) and its element sequence computed with isa::gather_sequence. Every
// element the unit presents is compared in order (address when not zero, zero flag, row, vec, chunk,
// vec_last, chunk_last, last), and the handshake is checked every cycle against the documented
// timing: a descriptor accepted in cycle t gives its first element in cycle t+1, elements follow
// back to back while elem_ready_i is high, done_o is high exactly in the cycle after the last element
// was taken (t+1 for a descriptor with a zero count, which gives no element), desc_ready_o = ~busy_o.
// Stimuli:
//   - CapsNet-MNIST shapes on this preset's rows, with the compiler's field values (gen/compiler/
//     compiler.cpp): Conv1 (1x28x28, 9x9, stride 1), PrimaryCaps (256x20x20, 9x9, stride 2),
//     class-caps predict (the compiler's choice of diag groups for these rows, and a diag variant
//     with Din = rows / 2 when the preset's choice has none), routing sum, routing update; element
//     counts capped (m_total or batch limited) so the test runs in seconds;
//   - directed: padding > 0, r_total not a multiple of rows, m_total not a multiple of m_block,
//     m_block = 1, batch > 1, negative strides and address wrap-around, k_chunks = 1, every count 0;
//   - 200 x --scale random descriptors (affine, diag, conv).
// Phase 1 streams every descriptor with no back-pressure, each presented while the previous one is
// still busy: the run must take exactly elements + descriptors cycles (the one idle cycle per
// descriptor of docs/rtl-gather.md). Phase 2 repeats them (and new random ones) with random
// elem_ready_i back-pressure and random gaps between descriptors (or the next one waiting).
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "Vgather.h"
#include "common/rng.hpp"
#include "common/sim.hpp"
#include "isa/gather.hpp"

namespace {

using capsgen::isa::DataSource;
using capsgen::isa::Gemm;

struct Stim {
  std::string name;
  Gemm g;
};

int ceil_div(long long a, long long b) { return static_cast<int>((a + b - 1) / b); }

constexpr long long kMaxElements = 200000;  // per descriptor (big layers: m_total or batch limited)

// Limits a Gemm's element count by shrinking m_total (then batch).
Gemm capped(Gemm g, int rows) {
  const long long per_vec = static_cast<long long>(g.k_chunks) * rows;
  while (g.batch > 1 && static_cast<long long>(g.batch) * g.m_total * per_vec > kMaxElements) --g.batch;
  if (static_cast<long long>(g.m_total) * per_vec > kMaxElements)
    g.m_total = static_cast<int>(std::max<long long>(1, kMaxElements / per_vec));
  g.m_block = std::min(g.m_block, std::max(1, g.m_total));
  return g;
}

int block_size(const tb::RtlConfig& c, int m_total, int n_tiles) {
  return std::max(1, std::min(m_total, c.acc_depth / std::max(1, n_tiles)));
}

Gemm conv_gemm(const tb::RtlConfig& c, std::int64_t base, int ch, int h, int w, int k, int stride, int pad, int out_ch) {
  const int ho = (h + 2 * pad - k) / stride + 1, wo = (w + 2 * pad - k) / stride + 1, R = ch * k * k;
  Gemm g;
  g.m_total = ho * wo;
  g.k_chunks = ceil_div(R, c.rows);
  g.n_tiles = ceil_div(out_ch, c.cols);
  g.m_block = block_size(c, g.m_total, g.n_tiles);
  g.r_total = R;
  g.data.kind = DataSource::Kind::kConv;
  g.data.base = base;
  g.data.channels = ch;
  g.data.height = h;
  g.data.width = w;
  g.data.kernel_h = g.data.kernel_w = k;
  g.data.stride = stride;
  g.data.padding = pad;
  g.data.out_w = wo;
  return g;
}

// Class-caps prediction as compile_program() maps it (I input capsules of Din, J x D outputs).
Gemm predict_gemm(const tb::RtlConfig& c, std::int64_t wW, int I, int Din, int J, int D, bool force_diag) {
  const int rows = c.rows, JD = J * D;
  int G = 1;
  if (force_diag) {
    G = 2;
  } else if (Din <= rows) {
    for (int g = std::min(rows / Din, c.cols); g >= 1; --g)
      if (JD % g == 0) {
        G = g;
        break;
      }
  }
  Gemm g;
  g.batch = I;
  if (G > 1) {
    g.m_total = JD / G;
    g.k_chunks = 1;
    g.r_total = Din;
    g.tile.diag_groups = G;
    g.data = {DataSource::Kind::kAffine, wW, std::int64_t(JD) * Din, std::int64_t(G) * Din, 0, 1};
  } else {
    g.m_total = JD;
    g.k_chunks = ceil_div(Din, rows);
    g.r_total = Din;
    g.data = {DataSource::Kind::kAffine, wW, std::int64_t(JD) * Din, Din, rows, 1};
  }
  g.m_block = block_size(c, g.m_total, 1);
  return g;
}

std::vector<Stim> directed_stimuli(const tb::RtlConfig& c) {
  const int rows = c.rows;
  std::vector<Stim> v;
  auto add = [&](const std::string& n, const Gemm& g) { v.push_back({n, capped(g, rows)}); };
  // CapsNet-MNIST (models/capsnet-mnist.yaml), field values as gen/compiler/compiler.cpp sets them.
  const int I = 1152, J = 10, D = 16, Din = 8;
  add("conv1", conv_gemm(c, 0, 1, 28, 28, 9, 1, 0, 256));
  add("primary/conv", conv_gemm(c, 784, 256, 20, 20, 9, 2, 0, 256));
  {
    Gemm g = predict_gemm(c, 0x10000, I, Din, J, D, false);
    g.batch = 3;  // 3 of the 1152 input capsules
    add(g.tile.diag_groups > 1 ? "classcaps/predict(diag)" : "classcaps/predict", g);
    if (g.tile.diag_groups == 1 && rows >= 2) {
      // The diag mapping with Din = rows / 2 (2 groups fill the rows), as on 16x16 with Din = 8.
      Gemm d = predict_gemm(c, 0x10000, I, rows / 2, J, D, true);
      d.batch = 3;
      add("classcaps/predict(diag, Din=rows/2)", d);
    }
  }
  {
    Gemm sum;  // s_j = sum_i c_ij u_hat_j|i: data vector c_.j
    sum.batch = J;
    sum.m_total = 1;
    sum.m_block = 1;
    sum.k_chunks = ceil_div(I, rows);
    sum.n_tiles = ceil_div(D, c.cols);
    sum.r_total = I;
    sum.data = {DataSource::Kind::kAffine, 0x20000, 1, 0, std::int64_t(rows) * J, J};
    add("classcaps/iter0.sum", sum);
    Gemm up;  // b_ij update: data vector m = i*J + j is u_hat_j|i
    up.m_total = I * J;
    up.k_chunks = ceil_div(D, rows);
    up.n_tiles = ceil_div(J, c.cols);
    up.m_block = block_size(c, up.m_total, up.n_tiles);
    up.r_total = D;
    up.data = {DataSource::Kind::kAffine, 0x30000, 0, D, rows, 1};
    add("classcaps/iter0.update", up);
  }
  // Padding > 0.
  add("conv pad1 3x5x7 k3 s1", conv_gemm(c, 1000, 3, 5, 7, 3, 1, 1, 4));
  add("conv pad2 2x9x6 k5 s2", conv_gemm(c, 2000, 2, 9, 6, 5, 2, 2, 4));
  add("conv pad3 1x2x2 k5 s1 (kernel larger than the map)", conv_gemm(c, 3000, 1, 2, 2, 5, 1, 3, 1));
  add("conv 1x4x4 k3 s1 pad1", conv_gemm(c, 100, 1, 4, 4, 3, 1, 1, 1));
  {
    Gemm g = conv_gemm(c, 5, 2, 6, 6, 3, 1, 1, 2);  // batch 2, negative batch stride, m_block 1
    g.batch = 2;
    g.m_block = 1;
    g.data.s_b = -72;
    add("conv batch 2 s_b < 0 m_block 1", g);
    g.m_block = 5;  // 36 vectors in blocks of 5
    g.data.base = 0xFFFFFFF0ll;
    g.data.s_b = 0x7FFFFFF0ll;  // wraps modulo 2^32
    add("conv blocks of 5, address wrap", g);
  }
  {
    Gemm g;  // affine: r_total not a multiple of rows, m_total not a multiple of m_block, negative strides
    g.batch = 3;
    g.m_total = 7;
    g.m_block = 3;
    g.r_total = 2 * rows + 1;
    g.k_chunks = ceil_div(g.r_total, rows);
    g.data = {DataSource::Kind::kAffine, 4096, -1000, -7, -3 * rows, -3};
    add("affine negative strides", g);
    g.k_chunks = 1;
    g.r_total = rows > 1 ? rows - 1 : 1;
    g.m_block = 1;
    add("affine k_chunks 1 m_block 1", g);
    g.data.base = 0;
    g.data.s_m = -1;  // below address 0: modulo 2^32
    add("affine below 0", g);
    g.r_total = 0;
    add("affine r_total 0 (all zero)", g);
    for (const char* f : {"batch", "m_total", "m_block", "k_chunks"}) {
      Gemm z = g;
      (f[0] == 'b' ? z.batch : f[2] == 't' ? z.m_total : f[2] == 'b' ? z.m_block : z.k_chunks) = 0;
      v.push_back({std::string("zero count ") + f, z});
    }
  }
  if (rows >= 3) {
    Gemm g;  // diag with rows not a multiple of G: trailing rows outside the groups
    g.batch = 2;
    g.m_total = 5;
    g.m_block = 2;
    g.k_chunks = 2;  // k is ignored by diag
    g.r_total = rows / 2;
    g.tile.diag_groups = 2;
    g.data = {DataSource::Kind::kAffine, 77, 500, -9, 123, 2};
    add("diag rows/2, k_chunks 2", g);
    g.tile.diag_groups = rows;
    g.r_total = 1;
    add("diag G = rows", g);
    g.tile.diag_groups = rows - 1;  // rows / G = 1: the last row is in group G, outside
    add("diag G = rows - 1 (last row outside the groups)", g);
  }
  return v;
}

Stim random_stim(tb::Rng& rng, const tb::RtlConfig& c, int i) {
  const int rows = c.rows;
  Gemm g;
  const int kind = static_cast<int>(rng.uniform(0, 9));
  auto stride = [&rng]() -> std::int64_t {
    switch (rng.uniform(0, 3)) {
      case 0: return rng.uniform(-4, 4);
      case 1: return rng.uniform(-100000, 100000);
      case 2: return static_cast<std::int32_t>(static_cast<std::uint32_t>(rng.next()));
      default: return rng.uniform(0, 64);
    }
  };
  g.batch = static_cast<int>(rng.uniform(1, 3));
  std::string name;
  if (kind < 4) {  // conv
    const int ch = static_cast<int>(rng.uniform(1, 3)), h = static_cast<int>(rng.uniform(1, 10)),
              w = static_cast<int>(rng.uniform(1, 10)), kh = static_cast<int>(rng.uniform(1, 5)),
              kw = static_cast<int>(rng.uniform(1, 5)), s = static_cast<int>(rng.uniform(1, 3)),
              pad = static_cast<int>(rng.uniform(0, 3));
    const int ho = std::max(1, (h + 2 * pad - kh) / s + 1), wo = std::max(1, (w + 2 * pad - kw) / s + 1);
    const int R = ch * kh * kw;
    g.m_total = ho * wo - (rng.chance(20) ? static_cast<int>(rng.uniform(0, ho * wo - 1)) : 0);
    g.r_total = rng.chance(80) ? R : static_cast<int>(rng.uniform(0, R));
    g.k_chunks = std::max(1, ceil_div(g.r_total, rows) + (rng.chance(20) ? 1 : 0));
    g.data.kind = DataSource::Kind::kConv;
    g.data.base = static_cast<std::uint32_t>(rng.next());
    g.data.s_b = stride();
    g.data.channels = ch;
    g.data.height = h;
    g.data.width = w;
    g.data.kernel_h = kh;
    g.data.kernel_w = kw;
    g.data.stride = s;
    g.data.padding = pad;
    g.data.out_w = wo;
    name = "conv";
    // A third of them start inside the window (a split reduction's part: DataSource::r_offset).
    if (rng.chance(33) && kh * kw > 1) {
      g.data.r_offset = static_cast<int>(rng.uniform(1, kh * kw - 1));
      g.r_total = std::min(g.r_total, R - g.data.r_offset);
      g.k_chunks = std::max(1, ceil_div(g.r_total, rows));
      name = "conv-offset";
    }
    // A quarter of the padded ones are bands of a larger map (no zero rows above: DataSource::band).
    if (pad > 0 && rng.chance(25)) {
      g.data.band = true;
      name += "-band";
    }
  } else if (kind < 6 && rows >= 2) {  // diag
    const int G = static_cast<int>(rng.uniform(2, std::min(rows, 8)));
    g.tile.diag_groups = G;
    g.r_total = static_cast<int>(rng.uniform(0, rows / G + 1));
    g.k_chunks = static_cast<int>(rng.uniform(1, 2));
    g.m_total = static_cast<int>(rng.uniform(1, 12));
    g.data = {DataSource::Kind::kAffine, static_cast<std::uint32_t>(rng.next()), stride(), stride(), stride(), stride()};
    name = "diag";
  } else {  // affine
    g.r_total = static_cast<int>(rng.uniform(0, 3 * rows + 2));
    g.k_chunks = std::max(1, ceil_div(g.r_total, rows) + static_cast<int>(rng.uniform(-1, 1)));
    g.m_total = static_cast<int>(rng.uniform(1, 20));
    g.data = {DataSource::Kind::kAffine, static_cast<std::uint32_t>(rng.next()), stride(), stride(), stride(), stride()};
    name = "affine";
  }
  g.m_block = rng.chance(20) ? 1 : static_cast<int>(rng.uniform(1, g.m_total + 2));
  if (rng.chance(3)) g.m_total = 0;
  return {"random " + std::to_string(i) + " " + name, g};
}

class GatherBench {
 public:
  explicit GatherBench(const tb::Args& args)
      : args_(args), cfg_(tb::RtlConfig::load(args.rtl_dir)), sim_(args), rng_(args.seed * 7919 + 13),
        report_("gather", args.max_errors) {
    dut_ = std::make_unique<Vgather>(sim_.context(), "gather");
    sim_.add(*dut_);
    sim_.open_trace();
    sim_.reset();
    dut_->elem_ready_i = 1;
    dut_->desc_valid_i = 0;
    dut_->eval();
  }

  int run() {
    std::vector<Stim> stims = directed_stimuli(cfg_);
    const int n_random = std::max(1, static_cast<int>(200 * args_.scale));
    for (int i = 0; i < n_random; ++i) stims.push_back(random_stim(rng_, cfg_, i));
    // Phase 1: no back-pressure, every descriptor waiting: exactly elements + descriptors cycles.
    const Totals t1 = stream(stims, false);
    report_.check(sim_.cycle(), "phase 1 cycles (elements + descriptors)", t1.elements + t1.descs, t1.cycles);
    // Phase 2: random back-pressure and gaps, the same descriptors and new random ones.
    for (int i = 0; i < n_random; ++i) stims.push_back(random_stim(rng_, cfg_, n_random + i));
    const Totals t2 = stream(stims, true);
    sim_.finish();
    char extra[600];
    std::snprintf(extra, sizeof extra,
                  "rows %d; no back-pressure: %lld descriptors, %lld elements, %lld cycles, %.4f elements/cycle "
                  "(1 idle cycle per descriptor); back-pressure + gaps: %lld descriptors, %lld elements, %lld cycles, "
                  "%.4f elements/cycle, %lld zero elements in all",
                  cfg_.rows, t1.descs, t1.elements, t1.cycles, double(t1.elements) / double(std::max(1LL, t1.cycles)),
                  t2.descs, t2.elements, t2.cycles, double(t2.elements) / double(std::max(1LL, t2.cycles)),
                  t1.zeros + t2.zeros);
    return report_.summary(extra);
  }

 private:
  struct Totals {
    long long descs = 0, elements = 0, cycles = 0, zeros = 0;
  };

  void drive_descriptor(const capsgen::isa::GatherDescriptor& d) {
    dut_->desc_conv_i = d.conv;
    dut_->desc_batch_i = d.batch;
    dut_->desc_m_total_i = d.m_total;
    dut_->desc_m_block_i = d.m_block;
    dut_->desc_k_chunks_i = d.k_chunks;
    dut_->desc_r_total_i = d.r_total;
    dut_->desc_base_i = d.base;
    dut_->desc_s_b_i = d.s_b;
    dut_->desc_s_m_i = d.s_m;
    dut_->desc_s_k_i = d.s_k;
    dut_->desc_s_r_i = d.s_r;
    dut_->desc_groups_i = d.groups;
    dut_->desc_group_rows_i = d.group_rows;
    dut_->desc_s_g_i = d.s_g;
    dut_->desc_height_i = d.height;
    dut_->desc_width_i = d.width;
    dut_->desc_kernel_h_i = d.kernel_h;
    dut_->desc_kernel_w_i = d.kernel_w;
    dut_->desc_stride_i = d.stride;
    dut_->desc_padding_i = d.padding;
    dut_->desc_out_w_i = d.out_w;
    dut_->desc_pad_off_i = d.pad_off;
    dut_->desc_ky_step_i = d.ky_step;
    dut_->desc_c_step_i = d.c_step;
    dut_->desc_y_step_i = d.y_step;
    dut_->desc_kx0_i = d.kx0;
    dut_->desc_ky0_i = d.ky0;
    dut_->desc_band_i = d.band;
  }

  // Random values on every descriptor input (desc_valid_i low: the unit must ignore them).
  void drive_garbage() {
    capsgen::isa::GatherDescriptor d;
    d.conv = rng_.chance(50);
    d.batch = static_cast<std::uint16_t>(rng_.next()), d.m_total = static_cast<std::uint16_t>(rng_.next());
    d.m_block = static_cast<std::uint16_t>(rng_.next()), d.k_chunks = static_cast<std::uint16_t>(rng_.next());
    d.base = static_cast<std::uint32_t>(rng_.next()), d.s_r = static_cast<std::uint32_t>(rng_.next());
    d.groups = static_cast<std::uint16_t>(rng_.next()), d.kernel_w = static_cast<std::uint16_t>(rng_.next());
    d.kx0 = static_cast<std::uint8_t>(rng_.next() & 0x7F), d.ky0 = static_cast<std::uint8_t>(rng_.next() & 0x7F);
    drive_descriptor(d);
  }

  std::string where(const Stim& s, std::size_t di, long long idx, const char* field) const {
    return "desc=\"" + s.name + "\"(#" + std::to_string(di) + ") element=" + std::to_string(idx) + " field=" + field;
  }

  Totals stream(const std::vector<Stim>& stims, bool pressure) {
    Totals tot;
    encoded_for_ = static_cast<std::size_t>(-1);
    std::size_t next = 0;          // next descriptor to present
    long long present_at = 0;      // cycle from which it is presented (-1: after the current one's done)
    bool active = false;           // a descriptor is being walked
    std::size_t cur = 0;           // its index
    std::vector<capsgen::isa::GatherElement> seq;
    std::size_t idx = 0;
    long long done_at = -1;        // the cycle done_o must be high in
    const long long t_start = static_cast<long long>(sim_.cycle());
    long long first_accept = -1, last_done = -1;
    auto schedule = [&](long long now) {  // when the next descriptor is presented
      if (!pressure || rng_.chance(40)) present_at = now;  // waiting while the unit is busy
      else present_at = -1;                                // a random gap after done
    };
    present_at = t_start;
    while ((next < stims.size() || active || done_at >= static_cast<long long>(sim_.cycle())) && !report_.too_many()) {
      const long long t = static_cast<long long>(sim_.cycle());
      const bool present = next < stims.size() && present_at >= 0 && t >= present_at;
      if (present) {
        if (encoded_for_ != next) {
          encoded_ = capsgen::isa::encode_gather(stims[next].g, cfg_.rows);
          encoded_for_ = next;
        }
        drive_descriptor(encoded_);
        dut_->desc_valid_i = 1;
      } else {
        drive_garbage();
        dut_->desc_valid_i = 0;
      }
      const bool ready = !pressure || rng_.chance(65);
      dut_->elem_ready_i = ready;
      dut_->eval();
      // Handshake and timing (the location string is built only for a mismatch).
      const std::size_t di = active ? cur : (next > 0 ? next - 1 : 0);
      const long long ii = static_cast<long long>(idx);
      auto chk = [&](const char* field, long long exp, long long act) {
        static const std::string kNone;
        report_.check(static_cast<std::uint64_t>(t), exp == act ? kNone : where(stims[di], di, ii, field), exp, act);
      };
      chk("elem_valid_o", active, dut_->elem_valid_o);
      chk("busy_o", active, dut_->busy_o);
      chk("desc_ready_o", !active, dut_->desc_ready_o);
      chk("done_o", t == done_at, dut_->done_o);
      if (active && dut_->elem_valid_o) {
        const capsgen::isa::GatherElement& e = seq[idx];
        chk("elem_zero_o", e.zero, dut_->elem_zero_o);
        if (!e.zero) chk("elem_addr_o", static_cast<std::uint32_t>(static_cast<std::uint64_t>(e.addr)), dut_->elem_addr_o);
        chk("elem_row_o", e.row, dut_->elem_row_o);
        chk("elem_vec_o", e.vec, dut_->elem_vec_o);
        chk("elem_chunk_o", e.chunk, dut_->elem_chunk_o);
        chk("elem_vec_last_o", e.vec_last, dut_->elem_vec_last_o);
        chk("elem_chunk_last_o", e.chunk_last, dut_->elem_chunk_last_o);
        chk("elem_last_o", e.last, dut_->elem_last_o);
      }
      const bool accept = present && !active;
      const bool fire = active && ready;
      sim_.step();
      if (fire) {
        ++tot.elements;
        if (seq[idx].zero) ++tot.zeros;
        if (++idx == seq.size()) {
          active = false;
          done_at = t + 1;
          last_done = t + 1;
          if (present_at < 0) present_at = t + 1 + rng_.uniform(0, 6);
        }
      }
      if (accept) {
        if (first_accept < 0) first_accept = t;
        ++tot.descs;
        cur = next++;
        seq = capsgen::isa::gather_sequence(stims[cur].g, cfg_.rows);
        idx = 0;
        if (seq.empty()) {
          done_at = t + 1;
          last_done = t + 1;
          schedule(t + 1);
          if (present_at < 0) present_at = t + 1 + rng_.uniform(0, 6);
        } else {
          active = true;
          schedule(t + 1);
        }
      }
    }
    // One more cycle: done_o low again.
    dut_->desc_valid_i = 0;
    dut_->eval();
    report_.check(sim_.cycle(), "after the last descriptor: done_o", 0, dut_->done_o);
    report_.check(sim_.cycle(), "after the last descriptor: busy_o", 0, dut_->busy_o);
    sim_.step();
    tot.cycles = (first_accept < 0 || last_done < first_accept) ? 0 : last_done - first_accept;
    return tot;
  }

  const tb::Args& args_;
  tb::RtlConfig cfg_;
  tb::Sim sim_;
  tb::Rng rng_;
  tb::Report report_;
  std::unique_ptr<Vgather> dut_;
  capsgen::isa::GatherDescriptor encoded_;
  std::size_t encoded_for_ = static_cast<std::size_t>(-1);
};

}  // namespace

int gather_tb_main(int argc, char** argv) {
  const tb::Args args = tb::Args::parse(argc, argv, "");
  GatherBench b(args);
  return b.run();
}
