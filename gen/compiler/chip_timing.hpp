// The chip's timing model: the frame program run cycle by cycle on models of the units of
// capsgen_chip (docs/rtl-chip.md "Timing model"): the frame sequencer's fetch and issue rules, the DMA's
// register-level pipeline (burst requests ahead of the data, the burst-length and data FIFOs, the SPM
// walker), the PMUs' barrier rule, the engine busy for its cycle model per frame, memsys refusing a
// DMA access in a cycle the engine enables its bank and holding an engine write back in a cycle an
// engine read uses its bank (the engine's accesses from the access model, each of a Gemm's in the
// cycle the engine's cycle model schedules it), and the off-chip memory the chip testbench puts
// behind the DMA (dram/offchip_port.hpp). It is the estimate of a streamed program's cycles on the
// chip with DRAM (`capsgen compile --stream`, the `sim --memory dram` report, `dse nas`).
//
// What it leaves out: when within a part an activation pass or a fill makes its accesses (spread
// evenly), a held-back write's effect on the engine's reads (they keep their schedule), and the
// program memory's latency beyond one cycle.
#pragma once

#include <array>
#include <vector>

#include "compiler/frame_program.hpp"
#include "compiler/stream.hpp"
#include "dram/dram_model.hpp"
#include "dram/dram_spec.hpp"

namespace capsgen {

// Busy cycles of the program by the frame sequencer's classes (the RTL's stat_*_o; they sum to
// `cycles`).
struct ChipCycleClasses {
  long long fetch = 0, engine = 0, dma = 0, pmu = 0;
  long long eng_busy = 0, wait_dma = 0, wait_engine = 0, dma_busy = 0, pmu_wait = 0, drain = 0;
  long long sum() const {
    return fetch + engine + dma + pmu + eng_busy + wait_dma + wait_engine + dma_busy + pmu_wait + drain;
  }
};

struct ChipTiming {
  long long cycles = 0;            // start_i to done_o: the sequencer's busy cycles
  ChipCycleClasses classes;
  long long engine_cycles = 0;     // the engine frames' model cycles
  long long engine_write_waits = 0;  // cycles an engine write waited for a bank a read uses (the RTL's wr_wait)
  long long engine_late = 0;  // cycles the engine frames run beyond their model for those waits
  long long read_beats = 0, write_beats = 0;  // off-chip beats
  std::array<long long, kOnchipMemories> dma_wait{};  // per physical memory: cycles the DMA's access waited for the engine
  dram::DramStats dram;            // the DRAM model's figures over the program
  double dram_energy_pj = 0;       // its energy (dram_energy.hpp: commands and background)
};

// Runs `frames` (build_frame_program of `sp`) with `dram_spec` behind the DMA. Throws StreamError
// when a frame is pending (the chip refuses the program) or the engine cannot time a part.
ChipTiming chip_timing(const AccelConfig& cfg, const StreamedProgram& sp, const FrameProgram& frames,
                       const dram::DramSpec& dram_spec);

}  // namespace capsgen
