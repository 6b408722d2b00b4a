// Hardware objectives of a candidate network on an accelerator preset (docs/nas.md section 3), from
// capsgen's own models and without training: the compiler's cycle model (equal to the RTL per
// descriptor), the DESCNet on-chip usage of the compiled program, and the SRAM energy model of the
// memory exploration for separate memories sized to that usage.
#pragma once

#include <string>

#include "config/accel_config.hpp"
#include "memory/sram_model.hpp"
#include "model/network.hpp"

namespace capsgen::nas {

struct HwObjectives {
  bool ok = false;
  std::string why;  // when !ok: why the network cannot be compiled for the preset
  // Latency: the whole program on the accelerator, start to done, with the sequencer's descriptor
  // fetches (isa::program_cycles, the second total `capsgen compile` prints), and in milliseconds at
  // the preset's clock.
  long long cycles = 0;
  double latency_ms = 0;
  // The engine's cycles alone (the sum of the per-operation cycles, the first total `capsgen compile` prints).
  long long engine_cycles = 0;
  // Memory: on-chip bytes of DESCNet's SEP organization sized by its Eq. 2 (per data, weight and
  // accumulator memory the largest per-operation usage, rounded up to a power of two of at least
  // 1 KiB), i.e. the scratchpad the flat program needs without streaming.
  long long onchip_bytes = 0;
  // The usage itself before rounding (sum over the three memories of the largest usage).
  long long onchip_usage_bytes = 0;
  // The network's parameters: weights and biases in the preset's weight and psum widths (bytes).
  long long param_bytes = 0;
  // Energy of one inference in the on-chip memories (mJ): dynamic (bytes read and written per memory
  // x pJ per byte) plus leakage over the program's engine cycles, from the SRAM model for those SEP
  // sizes without power gating. The datapath and DRAM are not in it.
  double energy_mj = 0;
  // The rest of an inference's energy (mJ): the DRAM's, from the chip's timing model (its DRAM model's
  // commands and background over the program; -1 when the chip cannot run it), and the datapath's,
  // the useful MACs times an energy per MAC (-1 without one); total = the three, -1 when one is
  // unknown.
  double dram_energy_mj = -1, datapath_energy_mj = -1, total_energy_mj = -1;
  long long macs = 0;  // useful multiply-accumulates
  // The program split into parts that fit the preset's own scratchpad, with the DMA moves to and
  // from DRAM (compiler/stream.hpp): its modelled cycles with double buffering (stream_timing, the
  // figure `capsgen compile --stream` prints) and its DRAM bytes read plus written. -1 when no split
  // of some instruction fits the preset's memories. Informative: not a search objective.
  long long streamed_cycles = -1, dram_bytes = -1;
  // The same program on the chip with the preset's DRAM (compiler/chip_timing.hpp: the frame program
  // on models of capsgen_chip's units and the DRAM): the estimate of `capsgen sim --memory dram`'s
  // cycles. -1 when the chip cannot run it (no split fits, or a part the engine cannot encode).
  long long chip_cycles = -1;
};

// Compiles `net` for `cfg` (seeded random weights: the cycles and usage depend on shapes only) and
// evaluates the objectives. Networks the compiler or the quantizer reject, and programs with an
// operation the preset's engine cannot encode (compiler/frame_program.hpp: unrunnable_operation), come back
// with ok = false.
// `datapath_pj_per_mac` < 0: no datapath energy (and no total).
HwObjectives hardware_objectives(const AccelConfig& cfg, const Network& net, const memory::TechParams& tech,
                                 double datapath_pj_per_mac = -1);

}  // namespace capsgen::nas
