// Writes the streamed program of a compiled network for the chip's testbench; see stream_dump.hpp.
#include "cli/stream_dump.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>

#include "compiler/access.hpp"
#include "compiler/compiler.hpp"
#include "compiler/executor.hpp"
#include "compiler/frame_program.hpp"
#include "compiler/stream.hpp"
#include "core/atomic_file.hpp"
#include "core/input_error.hpp"
#include "golden/fixed_model.hpp"
#include "isa/frames.hpp"

namespace capsgen::cli {
namespace {

// The DRAM image in bytes: element a's code in its code_bytes(a) bytes at byte_of(a), little-endian.
std::string dram_image(const DramBytes& bytes, const std::vector<std::int32_t>& dram) {
  std::string b(std::size_t(bytes.total_bytes()), '\0');
  for (std::size_t a = 0; a < dram.size(); ++a) {
    const auto u = static_cast<std::uint32_t>(dram[a]);
    const std::int64_t at = bytes.byte_of(std::int64_t(a));
    for (int k = 0; k < bytes.code_bytes(std::int64_t(a)); ++k) b[std::size_t(at + k)] = static_cast<char>((u >> (8 * k)) & 0xFF);
  }
  return b;
}

}  // namespace

StreamDump dump_stream(const Workload& w, const isa::Program& prog, const std::string& dir, const IntTensor& input,
                       const std::string& input_name, int label) {
  const std::string where = w.cfg.name;
  StreamedProgram sp;
  FrameProgram fp;
  try {
    sp = stream_program(w.cfg, prog);
    fp = build_frame_program(w.cfg, prog, sp);
  } catch (const StreamError& e) {
    throw InputError(where, 0, 0, "--memory dram", e.what());
  }
  if (fp.pending > 0)
    throw InputError(where, 0, 0, "--memory dram",
                     fmt::format("{} of the {} engine frames of {} are parts the engine cannot run yet (a convolution's "
                                 "reduction part starting inside a window: the gather's r_offset, docs/memory-system.md "
                                 "section 8)",
                                 fp.pending, fp.engine, w.net.name));
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw InputError(dir, 0, 0, "--dump-stream", "cannot create directory: " + ec.message());

  const std::vector<std::uint32_t> words = isa::pack_frames(fp.frames, fp.geometry);
  const std::vector<isa::Frame> decoded = isa::unpack_frames(words, fp.geometry);
  const DramBytes bytes(prog, sp);
  std::vector<std::int32_t> flat = build_image(prog, w.net, w.qm, input);
  std::vector<std::int32_t> dram = flat;
  dram.resize(std::size_t(prog.size), 0);
  const std::string initial = dram_image(bytes, dram);
  std::vector<StoreBeat> beats;
  const FrameCheck ck = run_frame_program(w.cfg, prog, sp, decoded, dram, &beats);

  // DMA frame -> part (loads belong to the next engine frame, stores to the last one) -> instruction.
  struct DmaInfo {
    std::size_t frame = 0, part = 0;
    bool store = false;
    long long beats = 0;
  };
  std::vector<DmaInfo> dmas;
  std::vector<std::size_t> engine_frame;
  for (std::size_t fi = 0; fi < decoded.size(); ++fi) {
    const isa::Frame& f = decoded[fi];
    if (f.header.kind == isa::FrameKind::kEngine) engine_frame.push_back(fi);
    if (f.header.kind != isa::FrameKind::kDma) continue;
    const std::size_t e = engine_frame.size();
    if ((f.dma.store && e == 0) || (!f.dma.store && e >= sp.parts.size()))
      throw std::logic_error(fmt::format("dump_stream: DMA frame {} belongs to no part", fi));
    dmas.push_back({fi, f.dma.store ? e - 1 : e, f.dma.store,
                    (long long)f.dma.count[0] * f.dma.count[1] * f.dma.count[2]});
  }
  // Regions of the flat program each instruction stores, and its last DMA frame.
  std::map<std::size_t, std::set<std::size_t>> stored;  // instruction -> region indices
  std::map<std::size_t, long long> last_dma;
  for (const StoreBeat& b : beats) {
    const std::size_t instr = sp.parts.at(dmas.at(std::size_t(b.dma)).part).instr;
    for (std::size_t r = 0; r < prog.regions.size(); ++r)
      if (b.element >= prog.regions[r].base && b.element < prog.regions[r].base + prog.regions[r].stored_size()) {
        stored[instr].insert(r);
        break;
      }
  }
  for (std::size_t k = 0; k < dmas.size(); ++k)
    if (dmas[k].store) last_dma[sp.parts[dmas[k].part].instr] = (long long)k;

  // The flat executor's memory after each instruction: the codes of the regions it stores.
  std::string checks = "# check instr name last_dma region byte_base code_bytes elements, then the codes (flat executor)\n";
  const auto region_check = [&](std::size_t i) {
    const auto it = stored.find(i);
    if (it == stored.end()) return;
    for (std::size_t r : it->second) {
      const isa::Region& reg = prog.regions[r];
      const std::int64_t b0 = bytes.byte_of(reg.base);
      const int cb = bytes.code_bytes(reg.base);
      std::string vals;
      for (std::int64_t j = 0; j < reg.stored_size(); ++j) {
        if (bytes.byte_of(reg.base + j) != b0 + j * cb)
          throw std::logic_error("dump_stream: region " + reg.name + " is not contiguous in DRAM");
        vals += fmt::format("{}{}", j ? " " : "", flat[std::size_t(reg.base + j)]);
      }
      checks += fmt::format("check {} {} {} {} {} {} {}\n{}\n", i, isa::instr_name(prog.instrs[i]), last_dma.at(i), reg.name, b0,
                            cb, reg.stored_size(), vals);
    }
  };
  execute_program(w.cfg, prog, flat, [&](std::size_t i) { region_check(i); });
  for (std::size_t a = 0; a < flat.size(); ++a)
    if (flat[a] != dram[a])
      throw std::logic_error(fmt::format("dump_stream: the frame model leaves DRAM element {} at {}, the flat program at {}", a,
                                         dram[a], flat[a]));

  StreamDump d;
  d.frames = (long long)decoded.size();
  d.engine = fp.engine;
  d.dma = fp.dma;
  d.pmu = fp.pmu;
  d.words = (long long)words.size();
  d.load_beats = ck.load_beats;
  d.store_beats = ck.store_beats;
  d.load_elements = ck.load_elements;
  d.store_elements = ck.store_elements;
  d.wakes = ck.wakes;
  d.sleeps = ck.sleeps;
  d.dram_bytes = bytes.total_bytes();
  d.stream_model_cycles = stream_timing(w.cfg, prog, sp).cycles;
  d.chip_model = chip_timing(w.cfg, sp, fp, dram::offchip_dram(w.cfg.offchip.dram));
  d.golden = run_golden(w.cfg, w.net, w.qm, input).prediction;

  std::string hex = fmt::format("// {} on {}: frame program of {} frames, {} words (isa/frames.hpp)\n", w.net.name, w.cfg.name,
                                decoded.size(), words.size());
  for (std::uint32_t x : words) hex += fmt::format("{:08x}\n", x);
  std::string regions = "# name element_base elements byte_base code_bytes\n";
  for (const isa::Region& r : prog.regions)
    regions += fmt::format("{} {} {} {} {}\n", r.name, r.base, r.stored_size(), bytes.byte_of(r.base), bytes.code_bytes(r.base));
  std::string parts = "# part instr name frame model_cycles\n";
  for (std::size_t p = 0; p < sp.parts.size(); ++p) {
    const long long c = instr_stats(w.cfg, sp.parts[p].op).cycles;
    d.engine_model_cycles += c;
    parts += fmt::format("{} {} {} {} {}\n", p, sp.parts[p].instr, isa::instr_name(prog.instrs[sp.parts[p].instr]),
                         engine_frame.at(p), c);
  }
  std::string dma = "# ordinal frame part instr store beats\n";
  for (std::size_t k = 0; k < dmas.size(); ++k)
    dma += fmt::format("{} {} {} {} {} {}\n", k, dmas[k].frame, dmas[k].part, sp.parts[dmas[k].part].instr, dmas[k].store ? 1 : 0,
                       dmas[k].beats);
  std::string stores = "# ordinal byte bytes value\n";
  for (const StoreBeat& b : beats) stores += fmt::format("{} {} {} {}\n", b.dma, b.byte, b.bytes, b.value);
  const std::string last_name = prog.instrs.empty() ? "" : isa::instr_name(prog.instrs.back());
  std::string summary = fmt::format("# {} on {}: the streamed program (capsgen sim --memory dram)\n", w.net.name, w.cfg.name);
  summary += fmt::format("network {}\npreset {}\ninput {}\nlabel {}\ngolden {}\n", w.net.name, w.cfg.name, input_name, label, d.golden);
  summary += fmt::format("frames {}\nengine {}\ndma {}\npmu {}\nwords {}\n", d.frames, d.engine, d.dma, d.pmu, d.words);
  summary += fmt::format("load_beats {}\nstore_beats {}\nload_elements {}\nstore_elements {}\nwakes {}\nsleeps {}\ndram_bytes {}\n",
                         d.load_beats, d.store_beats, d.load_elements, d.store_elements, d.wakes, d.sleeps, d.dram_bytes);
  summary += fmt::format("engine_model_cycles {}\nstream_model_cycles {}\n", d.engine_model_cycles, d.stream_model_cycles);
  summary += fmt::format("prediction_instr {}\n",
                         last_name.size() >= 5 && last_name.compare(last_name.size() - 5, 5, "/norm") == 0
                             ? (long long)prog.instrs.size() - 1
                             : -1LL);
  write_file_atomic(dir + "/frames.hex", hex);
  write_file_atomic(dir + "/dram.bin", initial);
  write_file_atomic(dir + "/dram_final.bin", dram_image(bytes, dram));
  write_file_atomic(dir + "/regions.txt", regions);
  write_file_atomic(dir + "/parts.txt", parts);
  write_file_atomic(dir + "/dma.txt", dma);
  write_file_atomic(dir + "/stores.txt", stores);
  write_file_atomic(dir + "/checks.txt", checks);
  // The access model, and the sleeps and wake-ups per sector that the frame model ordered.
  std::string access = access_text(count_accesses(w.cfg, sp, fp));
  for (int m = 0; m < kOnchipMemories; ++m)
    for (std::size_t k = 0; k < ck.sector_sleeps[std::size_t(m)].size(); ++k)
      access += fmt::format("pmu {} {} {} {}\n", to_string(Onchip(m)), k, ck.sector_sleeps[std::size_t(m)][k],
                            ck.sector_wakes[std::size_t(m)][k]);
  // The sleep model in DESCNet's terms: per part, the sectors its PMU frame leaves asleep times the
  // part's modelled cycles (stream_timing), against all sector-cycles.
  {
    const StreamTiming st = stream_timing(w.cfg, prog, sp);
    for (int m = 0; m < isa::kFrameMemories; ++m) {
      const int sc = fp.geometry.sectors[m];
      if (sc == 0) continue;
      long long asleep = 0, all = 0;
      for (std::size_t p = 0; p < sp.parts.size(); ++p) {
        const int on = __builtin_popcount(fp.part_awake.at(p)[std::size_t(m)] & (sc >= 32 ? 0xFFFFFFFFu : (1u << sc) - 1));
        asleep += st.part_cycles[p] * (sc - on);
        all += st.part_cycles[p] * sc;
      }
      access += fmt::format("sleep_model {} {} {}\n", to_string(Onchip(m)), asleep, all);
    }
  }
  write_file_atomic(dir + "/access.txt", access);
  write_file_atomic(dir + "/stream.txt", summary);  // last: its presence marks a complete dump
  return d;
}

}  // namespace capsgen::cli
