// The streamed program as a frame program (docs/memory-system.md section 4, isa/frames.hpp): engine,
// DMA and PMU frames in the sequencer's issue order with their dependency fields, and a reference
// model that runs the decoded frames and checks the ordering and sector-power rules.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/stream.hpp"
#include "isa/frames.hpp"

namespace capsgen {

// The preset's frame geometry (isa::frame_geometry); throws StreamError for a power-gated memory with
// more sectors than a PMU frame's awake field holds (isa::kAwakeFieldSectors).
isa::FrameGeometry checked_frame_geometry(const AccelConfig& cfg);

// The first operation of `prog` the preset's engine has no descriptor for ("i61 c2_skip/iter1.softmax:
// n: vector length must be in [1, 32]"), or nullopt when the engine runs every operation. The
// compiler's cycle model covers programs the RTL cannot run; a caller that ranks programs by those
// cycles needs this check.
std::optional<std::string> unrunnable_operation(const AccelConfig& cfg, const isa::Program& prog);

// DRAM byte layout of the streamed program's image (docs/memory-system.md section 1): the regions in
// element order, each element taking its code's bytes rounded up to a power of 2 (1 for 8-bit codes,
// 4 for psum codes of 17..32 bits: one DMA beat of 2^size bytes; stream_stats counts ceil(bits/8)); the
// byte address of element a of region r is r's first byte + (a - r.base) x r's code bytes. Elements
// outside every region take 1 byte.
class DramBytes {
 public:
  DramBytes(const isa::Program& prog, const StreamedProgram& sp);
  bool contains(std::int64_t element) const { return seg_of(element) != nullptr; }
  std::int64_t byte_of(std::int64_t element) const;
  int code_bytes(std::int64_t element) const;
  // The element at a byte address: -1 when no element starts there.
  std::int64_t element_at(std::int64_t byte) const;
  std::int64_t total_bytes() const;

 private:
  struct Seg {
    std::int64_t base = 0, end = 0, byte = 0;
    int bytes = 1;
  };
  const Seg* seg_of(std::int64_t element) const;
  std::vector<Seg> segs_;
};

// One Move as capsgen_dma's descriptor: DRAM byte address and strides (element x code bytes), on-chip
// element address and strides, size = log2 of the element's bytes (data/weight: 0; acc: 2; a
// widened init code: 0 with widen), burst 0 (the DMA's max_burst). Throws StreamError starting with
// `where` when the DMA cannot express it: more than 3 dimensions, an element outside the DRAM image, a
// count outside [1, 2^count_bits),
// a stride or address outside its field, a move across regions of different code widths, or a code
// width the memory's lanes do not hold.
// With `map`, a move whose innermost run is contiguous and aligned moves k elements per beat (k a power of
// 2, k x code bytes at most the memory's word; size = log2 of that): every run must start on a multiple
// of k elements on chip and of k x code bytes in DRAM, and its length and outer strides be multiples.
isa::DmaFields lower_move(const Move& m, const DramBytes& bytes, const isa::FrameGeometry& g, const std::string& where,
                          const OnchipMap* map = nullptr);

struct FrameProgram {
  isa::FrameGeometry geometry;
  std::vector<isa::Frame> frames;  // ends with the end frame
  long long engine = 0, dma = 0, pmu = 0, pending = 0;  // frame counts (pending: engine frames not encodable yet)
  long long serialized = 0;  // parts whose stores precede the next part's loads (it loads what they store)
  // Per part: the sectors awake while its engine frame runs (the PMU frame issued before it; every
  // sector without power gating), per memory (data, weight, acc, shared).
  std::vector<std::array<std::uint32_t, kOnchipMemories>> part_awake;
  long long words() const;
};

// Issue order (section 4): PMU barrier waking part 0's sectors, part 0's loads; then for each part p:
// PMU prefetch (keeps awake what is in flight and part p's sectors, wakes part p+1's), engine p
// (wait_dma = the DMA frames issued after p's last load), PMU barrier on the same mask when the
// prefetch woke a sector (before p+1's loads write it), the loads of p+1, the stores of p (each
// wait_engine; before the loads of p+1 when p+1 loads DRAM that p stores), PMU prefetch putting to
// sleep every sector that no frame in flight, not part p+1 and not part p+2's kept loads use (when it
// drops one); end. A part's sectors are those its moves' on-chip ranges touch, kept loads included.
// Throws StreamError naming the part and move for what the frames cannot express.
// `engine_masks`: engine_sectors(cfg, sp) when the caller has it (computed here otherwise).
FrameProgram build_frame_program(const AccelConfig& cfg, const isa::Program& prog, const StreamedProgram& sp,
                                 const std::vector<std::array<std::uint32_t, kOnchipMemories>>* engine_masks = nullptr);

struct FrameCheck {
  long long frames = 0, engine = 0, dma = 0, pmu = 0, sleeps = 0, wakes = 0;
  long long load_elements = 0, store_elements = 0;  // elements the DMA moves
  long long load_beats = 0, store_beats = 0;        // its beats (several elements each where a move is packed)
  // Per memory (data, weight, acc, shared) and sector: the sleeps and wake-ups the PMU frames order.
  std::array<std::vector<long long>, kOnchipMemories> sector_sleeps, sector_wakes;
};

// One element a DMA store frame writes to DRAM, in the DMA's order (what the chip's off-chip write
// port must show): the frame, the DMA frame's ordinal among DMA frames, the DRAM byte address, the
// code's bytes and value, and the DRAM element.
struct StoreBeat {
  std::size_t frame = 0;
  long long dma = 0;
  std::int64_t byte = 0;
  int bytes = 1;
  std::int32_t value = 0;
  std::int64_t element = 0;
};

// Runs the decoded frames on `dram` (the flat image) and bounded on-chip
// memories: DMA frames from their decoded fields (byte addresses mapped back to elements), engine
// frame k as part k's instruction (the decoded descriptor must equal the encoding of that part, or the
// frame be marked pending when the encoder rejects it), PMU frames on per-sector state. Throws
// StreamError naming the frame when: an engine frame reads or writes an element that a DMA frame
// it may still overlap (not complete by its wait_dma, or issued after it without wait_engine) writes
// or reads; a DMA frame or an engine access touches a sector that is asleep or woken by a prefetch
// but not yet by a barrier; a PMU frame puts to sleep a sector that a frame in flight uses; an engine
// read or a store touches an element nothing defined since its sector last slept.
FrameCheck run_frame_program(const AccelConfig& cfg, const isa::Program& prog, const StreamedProgram& sp,
                             const std::vector<isa::Frame>& frames, std::vector<std::int32_t>& dram,
                             std::vector<StoreBeat>* stores = nullptr);

}  // namespace capsgen
