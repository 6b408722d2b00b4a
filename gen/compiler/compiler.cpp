#include "compiler/compiler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "isa/engine_descriptor.hpp"
#include "isa/engine_timing.hpp"
#include "numerics/activation.hpp"

namespace capsgen {

isa::EngineTimingShape engine_timing_shape(const AccelConfig& cfg) {
  return {cfg.array.rows, cfg.array.cols, cfg.array.pe_pipeline, cfg.widths.act};
}

std::string routing_batch_name(const std::string& name, int k) { return fmt::format("{}.k{}", name, k); }

std::vector<std::int32_t> build_image(const isa::Program& prog, const Network& net, const QuantizedModel& qm,
                                      const IntTensor& input) {
  return build_image(prog, net, qm, std::vector<IntTensor>{input});
}

std::vector<std::int32_t> build_image(const isa::Program& prog, const Network& net, const QuantizedModel& qm,
                                      const std::vector<IntTensor>& inputs) {
  if (inputs.size() != std::size_t(prog.inputs))
    throw std::logic_error(fmt::format("build_image: {} input(s) for a program of {}", inputs.size(), prog.inputs));
  std::vector<std::int32_t> mem(std::size_t(prog.size), 0);
  auto place = [&](const std::string& name, const auto& values) {
    const isa::Region* r = prog.region(name);
    if (!r) throw std::logic_error("build_image: no region " + name);
    if (shape_size(r->shape) != values.size()) throw std::logic_error("build_image: size mismatch for " + name);
    for (std::size_t i = 0; i < values.size(); ++i)
      mem[std::size_t(r->base + r->offset_of(std::int64_t(i)))] = std::int32_t(values[i]);
  };
  if (prog.inputs == 1)
    place("input", inputs[0].data);
  else
    for (int k = 0; k < prog.inputs; ++k) place(routing_batch_name("input", k), inputs[std::size_t(k)].data);
  for (std::size_t li = 0; li < net.layers.size(); ++li) {
    const Layer& L = net.layers[li];
    const LayerQuant& q = qm.layers[li];
    if (!q.weight.data.empty()) place(L.name + (L.kind == LayerKind::ClassCaps ? ".W" : ".weight"), q.weight.data);
    if (!q.bias.empty()) {
      std::vector<std::int32_t> b(q.bias.begin(), q.bias.end());
      place(L.name + ".bias", b);
    }
  }
  for (const isa::Program::Constant& c : prog.constants) place(c.region, c.values);
  return mem;
}

std::string instr_step(const std::string& instr) {
  std::string out;
  std::size_t at = 0;
  while (at <= instr.size()) {
    const std::size_t dot = std::min(instr.find('.', at), instr.size());
    const std::string part = instr.substr(at, dot - at);
    // A part index: t<N> (a capsule type), m<N> (a block of vectors), in<N> (an input).
    const std::size_t digits = part.rfind("in", 0) == 0 ? 2 : part.size() > 1 && (part[0] == 't' || part[0] == 'm') ? 1 : 0;
    const bool index = at > 0 && digits > 0 && part.size() > digits &&
                       part.find_first_not_of("0123456789", digits) == std::string::npos;
    if (!index) out += (at > 0 ? "." : "") + part;
    at = dot + 1;
  }
  return out;
}

bool starts_descnet_row(const std::string& prev_instr, const std::string& instr) {
  const auto layer = [](const std::string& n) { return n.substr(0, n.find('/')); };
  if (prev_instr.empty() || layer(prev_instr) != layer(instr)) return true;
  const auto slash = instr.find('/');
  if (slash == std::string::npos) return true;
  const std::string step = instr_step(instr);
  if (step == instr_step(prev_instr)) return false;  // another part of the same step
  const std::string suffix = step.substr(slash + 1);
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
  if (isa::instr_timing(in, engine_timing_shape(cfg), &t)) {
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
    // Rows are named by steps: the parts of one step (per type, per block, per input) appear once.
    const std::string step = instr_step(name);
    if (out.empty() || starts_descnet_row(prev, name)) {
      out.push_back(OpStats{step});
    } else if (step != instr_step(prev)) {
      const auto slash = step.find('/');
      out.back().name += "+" + (slash == std::string::npos ? step : step.substr(slash + 1));
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
  // A program of a routing batch makes prog.inputs inferences.
  const double inferences = prog.inputs;
  j["inferences"] = prog.inputs;
  j["total_cycles"] = cycles;
  j["useful_macs"] = macs;
  j["inferences_per_second"] = cycles ? inferences * cfg.clock.target_mhz * 1e6 / double(cycles) : 0.0;
  j["array_utilization"] = cycles ? double(macs) / (double(cycles) * cfg.array.rows * cfg.array.cols) : 0.0;
  // End to end on the accelerator: total_cycles plus the sequencer's descriptor fetches and hand-overs.
  const long long prog_cycles = program_cycles(cfg, prog);
  j["program_cycles"] = prog_cycles;
  j["program_inferences_per_second"] =
      prog_cycles ? inferences * cfg.clock.target_mhz * 1e6 / double(prog_cycles) : 0.0;
  return j.dump(2) + "\n";
}

}  // namespace capsgen

namespace capsgen {

std::string program_json(const isa::Program& prog) {
  nlohmann::ordered_json j;
  j["network"] = prog.network;
  j["preset"] = prog.preset;
  j["address_space_elements"] = prog.size;
  if (prog.inputs > 1) j["routing_batch_inputs"] = prog.inputs;  // regions input.k<N>, compile --routing-batch
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
