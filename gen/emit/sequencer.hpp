// The program sequencer and the accelerator's top level (docs/rtl-sequencer.md):
//   capsgen_sequencer  fetches packed descriptors (isa::pack_engine_program) from a word port, one
//                      descriptor ahead of the engine, and hands them over until the end marker
//   capsgen_accel      the sequencer in front of capsgen_engine: the host writes the memory image and
//                      the program, pulses start_i, and the accelerator runs the whole inference
// The descriptor's fields are sliced out of the fetched words with isa::engine_descriptor_layout, the
// table the packer uses, so the program image and the RTL cannot disagree.
#pragma once

#include "config/accel_config.hpp"
#include "emit/design.hpp"

namespace capsgen::emit {

inline constexpr const char* kSequencerModule = "capsgen_sequencer";
inline constexpr const char* kAccelModule = "capsgen_accel";

Module build_sequencer(const AccelConfig& cfg);
Module build_accel(const AccelConfig& cfg);
// Connects capsgen_engine's packed descriptor input desc_words_i (instance `e`) to the low
// engine_descriptor_words() words of `words` (isa::engine_descriptor_layout). Throws std::logic_error
// when `words` is narrower.
void connect_engine_descriptor(Instance& e, const Module& engine, const Expr& words);
void emit_accel(const AccelConfig& cfg, Design& design);

}  // namespace capsgen::emit
