// Writes the compute engine's program of a compiled network; see engine_dump.hpp.
#include "cli/engine_dump.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "compiler/compiler.hpp"
#include "compiler/executor.hpp"
#include "compiler/routing_batch_check.hpp"
#include "config/act_params.hpp"
#include "core/atomic_file.hpp"
#include "core/input_error.hpp"
#include "emit/activation.hpp"
#include "golden/fixed_model.hpp"
#include "isa/engine_descriptor.hpp"
#include "isa/gemm_ref.hpp"

namespace capsgen::cli {
namespace {

// Memory image as little-endian int32 words.
std::string image_bytes(const std::vector<std::int32_t>& mem) {
  std::string b(mem.size() * 4, '\0');
  for (std::size_t i = 0; i < mem.size(); ++i) {
    const auto u = static_cast<std::uint32_t>(mem[i]);
    for (int k = 0; k < 4; ++k) b[4 * i + std::size_t(k)] = static_cast<char>((u >> (8 * k)) & 0xFF);
  }
  return b;
}

}  // namespace

void dump_engine(const Workload& w, const isa::Program& prog, const std::string& dir, const IntTensor& input,
                 const std::string& input_name, int label) {
  dump_engine(w, prog, dir, std::vector<IntTensor>{input}, input_name, label);
}

void dump_engine(const Workload& w, const isa::Program& prog, const std::string& dir,
                 const std::vector<IntTensor>& inputs, const std::string& input_name, int label) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw InputError(dir, 0, 0, "--dump-engine", "cannot create directory: " + ec.message());
  std::vector<std::int32_t> mem = build_image(prog, w.net, w.qm, inputs);
  write_file_atomic(dir + "/initial.mem", image_bytes(mem));
  const isa::ActTables tables(act_params(w.cfg));
  const int rows = w.cfg.array.rows, cols = w.cfg.array.cols, max_len = emit::act_geometry(w.cfg).max_len;
  std::string index;  // a line per instruction, after the header written below
  int dumped = 0, skipped = 0;
  std::vector<isa::EngineDescriptor> program;  // what the sequencer runs (program.hex)
  isa::AccState acc;  // the accumulators a split reduction's parts hand on
  auto visit = [&](std::size_t i) {
    const isa::Instr& in = prog.instrs[i];
    const std::string stem = fmt::format("i{:02}", i), name = isa::instr_name(in);
    std::string writes;
    const isa::ReadFn read = [&](std::int64_t a) { return std::int64_t(mem.at(std::size_t(a))); };
    const isa::WriteFn write = [&](std::int64_t a, std::int64_t v) { writes += fmt::format("{} {}\n", a, v); };
    std::string why;
    isa::EngineDescriptor d;
    try {
      if (const auto* g = std::get_if<isa::Gemm>(&in)) {
        isa::run_gemm_reference(*g, {rows, cols, w.cfg.widths.psum, w.cfg.widths.act}, read, write, nullptr, &acc);
        d = isa::encode_engine(*g, rows, cols, w.cfg.accumulator.depth);
      } else if (const auto* a = std::get_if<isa::Activate>(&in)) {
        isa::run_activate_reference(*a, tables, read, write);
        d = isa::encode_activate(*a, tables.params.sq_norm_shift, max_len);
      } else if (const auto* f = std::get_if<isa::Fill>(&in)) {
        isa::run_fill_reference(*f, write);
        d = isa::encode_fill(*f, w.cfg.widths.act);
      }
    } catch (const std::invalid_argument& e) {
      why = e.what();
    }
    write_file_atomic(dir + "/" + stem + ".writes", writes);
    if (why.empty()) {
      write_file_atomic(dir + "/" + stem + ".desc", fmt::format("# {} ({})\n", name, w.cfg.name) + isa::engine_descriptor_text(d));
      program.push_back(d);
      index += fmt::format("{} {}\n", stem, name);
      ++dumped;
    } else {
      index += fmt::format("skip {} {} ({})\n", stem, name, why);
      ++skipped;
    }
  };
  // State before instruction 0, then after each instruction = before the next one.
  if (!prog.instrs.empty()) visit(0);
  execute_program(w.cfg, prog, mem, [&](std::size_t i) {
    if (i + 1 < prog.instrs.size()) visit(i + 1);
  });
  // The golden prediction the RTL's must equal; for a routing batch (whose last descriptor holds the last
  // input's norms) after the executor's memory matched the golden model's per-input tensors and shared routing.
  int golden_prediction = -1;
  if (inputs.size() == 1) {
    golden_prediction = run_golden(w.cfg, w.net, w.qm, inputs[0]).prediction;
  } else {
    const RoutingBatchCheck ck = check_routing_batch(w, prog, inputs, mem);
    if (!ck.mismatch.empty())
      throw std::runtime_error("the routing batch's program differs from the golden model: " + ck.mismatch);
    golden_prediction = ck.shared.back().prediction;
  }
  // "# golden P" is read by the testbench: the golden model's prediction its RTL prediction must equal.
  index = fmt::format("# {} on {}: descriptors for tb_blocks engine --program\n# input {}, label {}\n# golden {}\n",
                      w.net.name, w.cfg.name, input_name, label, golden_prediction) +
          index;
  // The tensors (untiled) by address, so that the testbench names a mismatching write by tensor and
  // index: "name base d0 d1 ..." per line.
  // A minor-transposed region (capsule grids stored channel-major, class_caps' W for W stationary)
  // is listed in its stored order: [first, last, the ones between], so that an index names the element.
  std::string regions = "# tensor base shape: the golden model's tensors in the address space (shapes in stored order)\n";
  for (const isa::Region& r : prog.regions) {
    if (r.tile_rows > 0) continue;
    std::vector<std::size_t> shape = r.shape;
    if (r.minor_transposed && shape.size() >= 2) std::rotate(shape.begin() + 1, shape.end() - 1, shape.end());
    regions += fmt::format("{} {}", r.name, r.base);
    for (std::size_t d : shape) regions += fmt::format(" {}", d);
    regions += "\n";
  }
  write_file_atomic(dir + "/regions.txt", regions);
  // The packed program for the accelerator's sequencer (capsgen_accel), one 32-bit word per line in
  // hex, when the engine can run every instruction; a stale one from an earlier dump is removed.
  const std::string hex_path = dir + "/program.hex";
  if (skipped == 0) {
    const std::vector<std::uint32_t> words = isa::pack_engine_program(program);
    std::string hex = fmt::format("// {} on {}: {} descriptors of {} words, then the end marker (isa::pack_engine_program)\n",
                                  w.net.name, w.cfg.name, program.size(), isa::engine_descriptor_words());
    for (std::uint32_t x : words) hex += fmt::format("{:08x}\n", x);
    write_file_atomic(hex_path, hex);
  } else {
    std::filesystem::remove(hex_path, ec);
  }
  write_file_atomic(dir + "/index.txt", index);
  fmt::print(
      "wrote {} engine descriptor(s) to {} ({} the engine cannot run yet: {}/index.txt); input {}, label {}, golden "
      "prediction {}\n",
      dumped, dir, skipped, dir, input_name, label, golden_prediction);
}

}  // namespace capsgen::cli
