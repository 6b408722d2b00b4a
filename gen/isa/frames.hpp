// The frame program (docs/memory-system.md section 4): what the program sequencer of a streamed
// program fetches. A program is a sequence of frames, each a header word and the payload of its kind:
//   engine: the packed engine descriptor (engine_descriptor_words() words, pack_engine_descriptor)
//   dma:    one capsgen_dma descriptor (one compiler Move, docs/rtl-dma.md "Descriptor")
//   pmu:    the awake mask of every power-gated memory and prefetch/barrier (docs/rtl-pmu.md)
//   end:    no payload; the program ends when the engine and every DMA frame have completed.
// Every payload field keeps its port width and sits in one word, placed first-fit in table order
// like the engine descriptor, so the packer and an RTL slicer share one layout table per kind.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/accel_config.hpp"
#include "isa/engine_descriptor.hpp"

namespace capsgen::isa {

enum class FrameKind : std::uint8_t { kEngine = 0, kDma = 1, kPmu = 2, kEnd = 3 };
const char* to_string(FrameKind k);

// Memories a PMU frame addresses: data, weight, acc, shared (docs/memory-system.md section 2.1).
inline constexpr int kFrameMemories = 4;

// A PMU frame's awake mask of a memory is one 32-bit field: a power-gated memory has at most this
// many sectors on the chip.
inline constexpr int kAwakeFieldSectors = 32;

// Widths of the payload fields for one preset; frame_geometry() derives them, and both the compiler
// (which packs frames) and the emitters (which size capsgen_dma's and the PMUs' ports) use it.
// The DMA frame fields of fixed width: DRAM byte addresses and strides, per-level element counts.
inline constexpr int kFrameDramAddrBits = 32;
inline constexpr int kFrameCountBits = 16;
// capsgen_dma's queues (docs/rtl-dma.md): bursts in flight (its burst-length FIFO) and data FIFO words.
inline constexpr int kDmaMinOutstanding = 8;   // at least 8 bursts in flight,
inline constexpr int kDmaMaxOutstanding = 64;  // more when short bursts must cover a long latency
inline constexpr int kDmaFifoDepth = 4;        // a power of 2

struct FrameGeometry {
  int dram_addr_bits = kFrameDramAddrBits;  // DRAM byte address and DRAM strides (two's complement, mod 2^32)
  int count_bits = kFrameCountBits;         // per-level element counts
  int spm_addr_bits = 1;    // on-chip element address and SPM strides (mod 2^spm_addr_bits)
  int len_bits = 1;         // burst: 0 or > max_burst means max_burst
  int size_bits = 1;        // log2 bytes per beat, 0..max_size
  int max_size = 0;         // log2 of the widest scratchpad word's bytes
  // Sectors of data, weight, acc and (HY) shared (one awake bit each); 0 for a memory without power
  // gating or absent; 0 for all: no power gating, no PMU frames.
  int sectors[kFrameMemories] = {0, 0, 0, 0};
  bool power_gating() const { return sectors[0] + sectors[1] + sectors[2] + sectors[3] > 0; }
};

// The preset's frame geometry: SPM address = clog2 of the on-chip element space (isa/onchip_map.hpp),
// burst = clog2(max_burst + 1), size = 0..log2(widest word bytes), and the sectors of each physical
// memory with power gating (SMP: the shared one; its acc view has no field of its own). Sector counts
// are the config's; the chip refuses more than kAwakeFieldSectors. Needs a preset whose memories form
// an element space (OnchipMap::unsupported_reason empty).
FrameGeometry frame_geometry(const AccelConfig& cfg);

// capsgen_dma's bursts in flight for the preset: the power of 2 (kDmaMinOutstanding to
// kDmaMaxOutstanding) whose full bursts of offchip.max_burst beats cover twice offchip.latency_cycles.
int dma_outstanding_bursts(const AccelConfig& cfg);

// Header word of every frame.
//   kind        FrameKind
//   wait_engine (DMA) the engine must be idle before the frame issues (a store of the engine's results)
//   wait_dma    (engine) issue when at most wait_dma DMA frames issued before it are outstanding
//   pending     (engine) the encoder cannot encode this part yet (split reductions: raw partial sums,
//               partial init, a conv reduction offset; docs/memory-system.md section 8 step 4):
//               the payload is all zeros and a sequencer must refuse the program
struct FrameHeader {
  FrameKind kind = FrameKind::kEnd;
  bool wait_engine = false;
  std::uint32_t wait_dma = 0;
  bool pending = false;
};

// capsgen_dma's descriptor ports (desc_<name>_i).
struct DmaFields {
  bool store = false;
  std::uint32_t dram_addr = 0;  // bytes
  std::uint32_t spm_addr = 0;   // on-chip elements
  std::uint32_t count[3] = {1, 1, 1};
  std::uint32_t dram_stride[3] = {0, 0, 0};  // bytes, two's complement
  std::uint32_t spm_stride[3] = {0, 0, 0};   // elements, two's complement in spm_addr_bits
  std::uint32_t burst = 0;
  std::uint32_t size = 0;
  bool widen = false;
  bool operator==(const DmaFields& o) const;
};

struct PmuFields {
  std::uint32_t awake[kFrameMemories] = {0, 0, 0, 0};  // bit s: sector s of data / weight / acc / shared stays (or becomes) awake
  bool wait = false;                   // 0 prefetch (at once), 1 barrier (when every awake sector is usable)
  bool operator==(const PmuFields& o) const {
    return awake[0] == o.awake[0] && awake[1] == o.awake[1] && awake[2] == o.awake[2] && awake[3] == o.awake[3] && wait == o.wait;
  }
};

struct Frame {
  FrameHeader header;
  EngineDescriptor engine;  // kEngine
  DmaFields dma;            // kDma
  PmuFields pmu;            // kPmu
};

// Layout tables (PackedField: name, bits, word, lsb; words counted within the header / payload).
const std::vector<PackedField>& frame_header_layout();
std::vector<PackedField> dma_frame_layout(const FrameGeometry& g);
std::vector<PackedField> pmu_frame_layout(const FrameGeometry& g);  // empty without power gating
int payload_words(FrameKind k, const FrameGeometry& g);

// Pack/unpack one frame (header + payload). pack throws std::invalid_argument naming the field when a
// value does not fit its width; unpack throws when the words run out or the kind cannot occur (a PMU
// frame without power gating).
std::vector<std::uint32_t> pack_frame(const Frame& f, const FrameGeometry& g);
// Decodes the frame at words[at]; advances `at` past it.
Frame unpack_frame(const std::vector<std::uint32_t>& words, std::size_t& at, const FrameGeometry& g);
// A whole program: the frames, then an end frame if the last one is not one. unpack reads to the end frame.
std::vector<std::uint32_t> pack_frames(const std::vector<Frame>& frames, const FrameGeometry& g);
std::vector<Frame> unpack_frames(const std::vector<std::uint32_t>& words, const FrameGeometry& g);

// One line: kind, dependency fields, the decoded fields (engine: the nonzero ones).
std::string frame_text(const Frame& f, const FrameGeometry& g);

}  // namespace capsgen::isa
