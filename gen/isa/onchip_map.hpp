// The on-chip element space: the addresses that engine descriptors and DMA frames use for the
// scratchpad memories (docs/memory-system.md section 2). The compiler rebases operands into it,
// the frame format sizes its SPM address field from it, and capsgen_memsys decodes it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "config/accel_config.hpp"

namespace capsgen::isa {

// The ranges of the on-chip element space (docs/memory-system.md section 2): SEP's three memories,
// with HY the shared memory beside them (section 2.1) and, when its words hold 32-bit lanes, `lanes`:
// a view of the shared memory's words as psum lanes, where acc buffers that do not fit the acc
// memory go (section 2.1). SMP's acc range is such a view too (section 2.2).
enum class Onchip { kData = 0, kWeight = 1, kAcc = 2, kShared = 3, kLanes = 4 };
inline constexpr int kOnchipMemories = 5;
const char* to_string(Onchip m);

// The on-chip element space: range m holds elements [base[m], base[m] + elements[m]) (in the order
// data, weight, acc, shared, lanes; the shared memory has 0 elements with SEP, lanes 0 without HY or
// with HY's shared words narrower than 32 bits); data, weight and shared memories one code per byte,
// the acc memory and the lanes view one psum code per 32-bit lane.
// HY's lanes view: lanes element base[lanes] + r is the shared bytes base[shared] + 4r .. + 4r + 3.
// SMP (docs/memory-system.md section 2.2): one physical memory, the shared one, seen through two
// views: its bytes (the `shared` range, data and weight codes) and its 32-bit lanes (the `acc` range,
// psum codes), which alias: acc element base[acc] + r is the shared bytes base[shared] + 4r .. + 4r + 3.
// Data and weight have 0 elements; the compiler keeps the buffers of a part disjoint.
struct OnchipMap {
  std::int64_t base[kOnchipMemories] = {0, 0, 0, 0, 0};
  std::int64_t elements[kOnchipMemories] = {0, 0, 0, 0, 0};
  int word_elements[kOnchipMemories] = {1, 1, 1, 1, 1};  // elements per scratchpad word
  bool smp = false;  // the acc range is a view of the shared memory
  std::int64_t half(Onchip m) const { return elements[int(m)] / 2; }
  std::int64_t size() const {  // the end of the last range (SMP has none after its shared bytes)
    std::int64_t e = 0;
    for (int m = 0; m < kOnchipMemories; ++m) e = std::max(e, base[m] + elements[m]);
    return e;
  }
  // A range of 32-bit psum lanes: the acc memory (SMP: the acc view) or HY's lanes view.
  static bool psum_lanes(Onchip m) { return m == Onchip::kAcc || m == Onchip::kLanes; }
  bool has_shared() const { return elements[3] > 0; }
  bool has_lanes() const { return elements[4] > 0; }  // HY: acc buffers may overflow into the shared memory
  // The range whose words are the shared memory's seen as 32-bit lanes: SMP's acc, HY's lanes, or -1.
  int lane_view() const { return smp ? int(Onchip::kAcc) : has_lanes() ? int(Onchip::kLanes) : -1; }
  // The physical memory holding range m's words (a lane view -> shared; else m itself).
  int phys(int m) const { return m == lane_view() ? int(Onchip::kShared) : m; }
  // The elements of the other view that share storage with element a ({} without a lane view).
  std::vector<std::int64_t> aliases(std::int64_t a) const;
  // "" when the preset's memories form an element space, else why not (an SMP shared memory whose
  // words are narrower than a 32-bit lane); from_config throws std::invalid_argument with it.
  static std::string unsupported_reason(const AccelConfig& cfg);
  static OnchipMap from_config(const AccelConfig& cfg);
};

}  // namespace capsgen::isa
