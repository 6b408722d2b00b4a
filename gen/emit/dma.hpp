// DMA engine between the off-chip memory port and the scratchpad (docs/rtl-dma.md):
// one descriptor at a time (valid/ready), a 3-level address pattern walked twice (burst requests on
// the DRAM side, one word per beat on the SPM side), up to DmaGeometry::outstanding bursts in flight so the
// next request overlaps the previous burst's data (prefetch), busy/done and beat counters.
// One beat = one scratchpad word (the widest bank word of the organization); a descriptor's size
// narrows every beat to its low 2^size bytes (element-sized transfers, write strobes), and a 1-byte
// load can sign-extend each element into a 32-bit lane (widen).
#pragma once

#include <string>

#include "config/accel_config.hpp"
#include "isa/frames.hpp"
#include "emit/design.hpp"

namespace capsgen::emit {

inline constexpr const char* kDmaModule = "capsgen_dma";
// JSON summary of the DMA's widths and limits for the block testbench (schemas/dma.schema.json).
inline constexpr const char* kDmaSummaryName = "dma.json";
using isa::kDmaFifoDepth;  // data FIFO words
inline constexpr int kDmaCountBits = isa::kFrameCountBits;        // per-level element counts
inline constexpr int kDmaDramAddrBits = isa::kFrameDramAddrBits;  // DRAM byte address and DRAM strides
inline constexpr int kDmaCounterBits = 32;   // beat counters

struct DmaGeometry {
  int data_bits = 0;      // beat = SPM word
  int word_bytes = 0;
  int spm_addr_bits = 0;  // SPM element address: memsys_element_addr_bits (the on-chip element space)
  int len_bits = 0;       // burst length field: 1..max_burst beats
  int max_burst = 0;
  int outstanding = 0;    // bursts in flight, a power of 2: covers 2 x latency_cycles of max_burst beats
  int max_size = 0;       // log2(word_bytes): desc_size_i of a whole-word transfer
  int size_bits = 0;      // desc_size_i / req_size_o: holds 0..max_size (at least 1 bit)
  int widen_bytes = 0;    // bytes of a widened lane: min(4, word_bytes) (1: no widening possible)
  int widen_size = 0;     // spm_size_o of a widened load: log2(widen_bytes)
};

// Write strobes of a beat of 2^size bytes (size clamped to max_size): the low 2^size bits set.
unsigned long long dma_strobe(int size, int word_bytes);

DmaGeometry dma_geometry(const AccelConfig& cfg);
Module build_dma(const AccelConfig& cfg);
nlohmann::json dma_summary(const AccelConfig& cfg);
void emit_dma(const AccelConfig& cfg, Design& design);

}  // namespace capsgen::emit
