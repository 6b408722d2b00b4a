#include "nas/objectives.hpp"

#include <algorithm>
#include <stdexcept>

#include "compiler/chip_timing.hpp"
#include "compiler/compiler.hpp"
#include "compiler/frame_program.hpp"
#include "compiler/stream.hpp"
#include "core/input_error.hpp"
#include "golden/quant.hpp"
#include "memory/dse.hpp"
#include "weights/weight_set.hpp"

namespace capsgen::nas {

HwObjectives hardware_objectives(const AccelConfig& cfg, const Network& net, const memory::TechParams& tech,
                                 double datapath_pj_per_mac) {
  HwObjectives o;
  isa::Program prog;
  try {
    const WeightSet weights = random_weights(net, 1);
    // No calibration: the formats change shifts, not shapes, and the cycle model sees shapes only.
    const QuantizedModel qm = quantize_model(cfg, net, weights, CalibrationStats{});
    prog = compile_program(cfg, net, qm);
    if (auto why = unrunnable_operation(cfg, prog)) {
      o.why = "the engine has no descriptor for " + *why;
      return o;
    }
    for (const LayerQuant& q : qm.layers)
      o.param_bytes += (long long)(shape_size(q.weight.shape)) * cfg.widths.weight / 8 +
                       (long long)(q.bias.size()) * cfg.widths.psum / 8;
  } catch (const InputError& e) {
    o.why = e.what();
    return o;
  } catch (const std::invalid_argument& e) {
    o.why = e.what();
    return o;
  }
  const auto stats = analyze_program(cfg, prog);
  for (const auto& s : stats) {
    o.engine_cycles += s.cycles;
    o.macs += s.useful_macs;
  }
  o.cycles = program_cycles(cfg, prog);
  o.latency_ms = double(o.cycles) / (cfg.clock.target_mhz * 1e3);

  const auto ops = memory::profiles_from(stats);
  memory::ConfigPoint sep;
  sep.option = memory::kSep;
  for (int k = memory::kData; k <= memory::kAcc; ++k) {
    long long u = 0;
    for (const auto& op : ops) u = std::max(u, op.usage[std::size_t(k)]);
    o.onchip_usage_bytes += u;
    sep.bytes[std::size_t(k)] = memory::pow2_size(u);
    sep.sectors[std::size_t(k)] = 1;
    o.onchip_bytes += sep.bytes[std::size_t(k)];
  }
  memory::DseOptions opt;
  opt.clock_mhz = cfg.clock.target_mhz;
  const memory::ConfigDetail d = memory::evaluate_config(ops, tech, opt, sep);
  o.energy_mj = d.point.energy_mj();
  try {
    const StreamedProgram sp = stream_program(cfg, prog);
    o.streamed_cycles = stream_timing(cfg, prog, sp).cycles;
    const StreamStats st = stream_stats(prog, sp);
    o.dram_bytes = st.dram_read_bytes + st.dram_write_bytes;
    const FrameProgram fp = build_frame_program(cfg, prog, sp);
    if (fp.pending == 0) {
      const ChipTiming ct = chip_timing(cfg, sp, fp, dram::offchip_dram(cfg.offchip.dram));
      o.chip_cycles = ct.cycles;
      o.dram_energy_mj = ct.dram_energy_pj * 1e-9;
    }
  } catch (const StreamError&) {
    // The figures the split reached stay; the rest stay -1.
  }
  if (datapath_pj_per_mac >= 0) o.datapath_energy_mj = datapath_pj_per_mac * double(o.macs) * 1e-9;
  if (o.dram_energy_mj >= 0 && o.datapath_energy_mj >= 0) o.total_energy_mj = o.energy_mj + o.dram_energy_mj + o.datapath_energy_mj;
  o.ok = true;
  return o;
}

}  // namespace capsgen::nas
