// capsgen compile: network + preset + quantized model -> the accelerator program, the memory image
// and analytic statistics per operation (docs/accelerator.md, docs/compiler.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/accel_config.hpp"
#include "core/tensor.hpp"
#include "golden/quant.hpp"
#include "isa/engine_timing.hpp"
#include "isa/program.hpp"
#include "model/network.hpp"

namespace capsgen {

// What of the preset the engine's cycle model depends on besides the descriptor.
isa::EngineTimingShape engine_timing_shape(const AccelConfig& cfg);

struct CompileOptions {
  // Inputs whose class-capsule routing shares its logits (PIM-CapsNet, golden/shared_routing.hpp).
  // Above 1 the program runs every layer before the routing once per input (tensors and operations
  // named routing_batch_name(<name>, N)) and the routing of the last layer, a class-capsule layer,
  // once for the batch.
  int routing_batch = 1;
};
// The largest routing batch the command line takes (compile, sim --routing-batch; dse routing --config).
constexpr int kMaxRoutingBatch = 64;
// The name of input k's tensor or operation `name` in a routing batch's program: <name>.k<k>.
std::string routing_batch_name(const std::string& name, int k);

// Maps every layer onto array passes (Gemm), activation passes and fills, and places every tensor
// (weights, biases, input, each intermediate the golden model exposes) in the address space.
isa::Program compile_program(const AccelConfig& cfg, const Network& net, const QuantizedModel& qm,
                             const CompileOptions& opts = {});

// The initial memory image: weight and bias codes and the input images at their regions (input, or
// input.k<N> for each input of a routing batch), zero elsewhere. One int32 per element (the
// executor's view; the DRAM image packs them by width).
std::vector<std::int32_t> build_image(const isa::Program& prog, const Network& net, const QuantizedModel& qm,
                                      const std::vector<IntTensor>& inputs);
std::vector<std::int32_t> build_image(const isa::Program& prog, const Network& net, const QuantizedModel& qm,
                                      const IntTensor& input);

// Analytic statistics of one operation, grouped as DESCNet's Fig. 1/10 rows: one row per layer
// (conv, primary conv+squash, class-capsule predictions) and per routing step (sum+squash,
// update+softmax); see descnet_group().
struct OpStats {
  std::string name;
  long long cycles = 0;         // cycle model of the engine (isa::engine_timing, docs/compiler.md)
  // Of those, cycles the engine's streamer waits for staged data, a tile load, an output FIFO credit.
  long long stall_data = 0, stall_tile = 0, stall_out = 0;
  int v0_instrs = 0;            // instructions timed by the coarse model v0 (the engine cannot encode them)
  long long useful_macs = 0;    // multiply-accumulates the network needs
  long long issued_macs = 0;    // rows x cols x vectors streamed (array occupancy)
  long long vectors = 0;        // data vectors streamed into the array
  long long tile_loads = 0;     // stationary tiles loaded
  long long data_reads = 0;     // elements read for data vectors (padding excluded)
  long long tile_reads = 0;     // elements read for tiles
  long long init_reads = 0;     // accumulator init values read (bias, logits)
  long long writes = 0;         // elements written (outputs, fills)
  long long acc_entries = 0;    // partial sums resident in the accumulators (A_i, per array)
  // DESCNet on-chip usage in bytes (docs/dse-memory.md section 1): what the data, weight and
  // accumulator memories must hold at once for this operation (max over its instructions).
  long long usage_data = 0, usage_weight = 0, usage_acc = 0;
  // On-chip accesses in bytes per memory, and off-chip traffic in bytes.
  long long data_rd = 0, data_wr = 0, weight_rd = 0, weight_wr = 0, acc_rd = 0, acc_wr = 0;
  long long offchip_rd = 0, offchip_wr = 0;
};

// The DESCNet row an instruction belongs to. A new row starts at each layer and at every
// instruction named <layer>/iterR.sum or <layer>/iterR.update; the others (squash, softmax, the
// first iteration's coupling fill, the class norms) join the row before them.
bool starts_descnet_row(const std::string& prev_instr, const std::string& instr);
// The step an instruction is a part of: its name without part indices (".t<N>" a capsule type,
// ".m<N>" a block of vectors, ".in<N>" an input), e.g. c1_0/squash.t3 -> c1_0/squash,
// cell1/add.m0.in1 -> cell1/add. (The ".k<N>" of a routing batch's inputs stays: one row each.) Parts of one step never
// start a DESCNet row.
std::string instr_step(const std::string& instr);

std::vector<OpStats> analyze_program(const AccelConfig& cfg, const isa::Program& prog);
// The statistics of one instruction alone (named after it).
OpStats instr_stats(const AccelConfig& cfg, const isa::Instr& in);

// The whole program on the accelerator (sequencer + engine): every instruction's modelled cycles
// and the sequencer's fetches and hand-overs (isa::program_cycles), i.e. start_i to done_o.
long long program_cycles(const AccelConfig& cfg, const isa::Program& prog);

std::string stats_json(const AccelConfig& cfg, const isa::Program& prog, const std::vector<OpStats>& stats);

}  // namespace capsgen

namespace capsgen {
// The program as JSON: every descriptor with its fields, and the region map.
std::string program_json(const isa::Program& prog);
}  // namespace capsgen
