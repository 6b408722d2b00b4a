// The block emitters generate_rtl() runs, in dependency order (a block after the blocks it
// instantiates). Add new blocks here: one line each.
#include "emit/accumulator.hpp"
#include "emit/activation.hpp"
#include "emit/chip.hpp"
#include "emit/design.hpp"
#include "emit/dma.hpp"
#include "emit/engine.hpp"
#include "emit/gather.hpp"
#include "emit/memsys.hpp"
#include "emit/pe.hpp"
#include "emit/pmu.hpp"
#include "emit/scratchpad.hpp"
#include "emit/sequencer.hpp"
#include "emit/staging.hpp"
#include "emit/systolic_array.hpp"
#include "emit/trace_groups.hpp"

namespace capsgen::emit {

const std::vector<BlockEmitter>& block_emitters() {
  static const std::vector<BlockEmitter> list = {
      {"pe", emit_pe},
      {"systolic_array", emit_systolic_array},
      {"accumulator", emit_accumulator},
      {"activation", emit_activation},
      {"scratchpad", emit_scratchpad},
      {"pmu", emit_pmu},
      {"dma", emit_dma},
      {"memsys", emit_memsys},
      {"gather", emit_gather},
      {"staging", emit_staging},
      {"engine", emit_engine},
      {"accel", emit_accel},
      {"chip", emit_chip},
      {"trace_groups", emit_trace_groups},
  };
  return list;
}

}  // namespace capsgen::emit
