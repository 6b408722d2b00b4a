// The compute engine's program of a compiled network (`capsgen compile --dump-engine`, `capsgen sim`):
// the files tb/engine_tb.cpp --program reads (docs/rtl-engine.md "Compiled networks").
#pragma once

#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "golden/workload.hpp"
#include "isa/program.hpp"

namespace capsgen::cli {

// --dump-engine DIR: runs the program in the functional executor and writes what the compute engine
// needs to run the whole program and check every step: initial.mem (the memory image before the first
// instruction), and for instruction NN iNN.writes (address value per line, in the order the engine
// writes them: the isa reference functions on the executor's memory before NN) and, when the engine
// can run it, iNN.desc (isa::engine_descriptor_text); index.txt lists "iNN name" or "skip iNN name
// (reason)" per instruction, in program order; regions.txt the tensors' addresses and shapes; and when
// the engine can run every instruction, program.hex: the packed program the accelerator's sequencer
// fetches (isa::pack_engine_program, one 32-bit word per line in hex).
void dump_engine(const Workload& w, const isa::Program& prog, const std::string& dir, const IntTensor& input,
                 const std::string& input_name, int label);
// The same for a program of a routing batch (prog.inputs == inputs.size() > 1): the golden prediction
// is the shared routing's for the last input (its norms are the program's last descriptor), and every
// input's class norms in the executor's memory must equal GoldenModel::run_shared_routing's codes
// (std::runtime_error naming the input and class otherwise). `label`: the last input's.
void dump_engine(const Workload& w, const isa::Program& prog, const std::string& dir,
                 const std::vector<IntTensor>& inputs, const std::string& input_name, int label);

}  // namespace capsgen::cli
