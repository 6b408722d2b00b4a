// isa::frame_geometry (isa/frames.hpp), apart from the frame format in frames.cpp: the testbenches
// compile frames.cpp from source without the preset's element space (isa/onchip_map.hpp).
#include <algorithm>

#include "core/bits.hpp"
#include "isa/frames.hpp"
#include "isa/onchip_map.hpp"

namespace capsgen::isa {

FrameGeometry frame_geometry(const AccelConfig& cfg) {
  const OnchipMap map = OnchipMap::from_config(cfg);
  FrameGeometry g;
  g.spm_addr_bits = std::max(1, clog2(map.size()));
  g.len_bits = clog2(cfg.offchip.max_burst + 1LL);
  const ScratchpadConfig& s = cfg.scratchpad;
  const MemoryConfig* mems[kOnchipMemories] = {&s.data, &s.weight, &s.acc, &s.shared, &s.shared};
  int widest = 8;
  for (int i = 0; i < kOnchipMemories; ++i)
    if (map.elements[i] > 0) widest = std::max(widest, mems[map.phys(i)]->width_bits);
  g.max_size = clog2(widest / 8);
  g.size_bits = std::max(1, clog2(g.max_size + 1LL));
  for (int i = 0; i < kFrameMemories; ++i)
    g.sectors[i] = s.power_gating && map.elements[i] > 0 && map.phys(i) == i ? std::max(1, mems[i]->sectors) : 0;
  return g;
}

int dma_outstanding_bursts(const AccelConfig& cfg) {
  const long long need = (2LL * cfg.offchip.latency_cycles + cfg.offchip.max_burst - 1) / cfg.offchip.max_burst + 1;
  return std::clamp(1 << clog2(need), kDmaMinOutstanding, kDmaMaxOutstanding);
}

}  // namespace capsgen::isa
