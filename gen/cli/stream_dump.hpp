// The streamed program of a compiled network as the chip runs it (`capsgen sim --memory dram`,
// `capsgen compile --dump-stream DIR`): the files tb/chip_tb.cpp reads (docs/rtl-chip.md "Testbench").
#pragma once

#include <string>

#include "compiler/chip_timing.hpp"
#include "core/tensor.hpp"
#include "golden/workload.hpp"
#include "isa/program.hpp"

namespace capsgen::cli {

struct StreamDump {
  long long frames = 0, engine = 0, dma = 0, pmu = 0, words = 0;
  long long load_beats = 0, store_beats = 0, wakes = 0, sleeps = 0;  // DMA beats (packed moves: several elements each)
  long long load_elements = 0, store_elements = 0;
  long long dram_bytes = 0;         // the DRAM image (program regions and partial-sum buffers)
  long long engine_model_cycles = 0;  // sum over parts of the engine's cycle model
  long long stream_model_cycles = 0;  // compiler/stream.hpp stream_timing (ideal port, no DRAM latency)
  ChipTiming chip_model;              // compiler/chip_timing.hpp: the frame program on the chip's timing model
  int golden = -1;
};

// Streams the program (compiler/stream.hpp), builds its frame program (compiler/frame_program.hpp), runs
// the frame model on the DRAM image of `input` and writes into `dir`:
//   frames.hex       the frame program, one 32-bit word per line in hex (the chip's program memory)
//   dram.bin         the DRAM image before the run (the regions' codes packed by width, little-endian)
//   dram_final.bin   the DRAM image the program must leave (equal to the flat program's memory)
//   stream.txt       key/value summary: counts, model cycles, golden prediction
//   regions.txt      "name element_base elements byte_base code_bytes" per region (partial-sum buffers too)
//   parts.txt        "part instr name frame model_cycles" per engine frame
//   dma.txt          "ordinal frame part instr store beats" per DMA frame
//   stores.txt       "ordinal byte bytes value" per element a store writes, in the DMA's order
//   checks.txt       per instruction and region it stores: "check instr name last_dma region byte_base
//                    code_bytes elements", then the region's codes after the instruction (the flat
//                    executor's memory), one line
// Throws InputError naming the preset when the program cannot run on the chip (pending engine frames:
// split reductions, docs/memory-system.md section 8 step 4; an organization other than SEP).
StreamDump dump_stream(const Workload& w, const isa::Program& prog, const std::string& dir, const IntTensor& input,
                       const std::string& input_name, int label);

}  // namespace capsgen::cli
