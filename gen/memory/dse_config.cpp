#include "memory/dse_config.hpp"

#include <algorithm>

namespace capsgen::memory {

AccelConfig configured_preset(const AccelConfig& base, const ConfigPoint& p) {
  AccelConfig cfg = base;
  ScratchpadConfig& sp = cfg.scratchpad;
  const ScratchpadConfig& b = base.scratchpad;
  sp.organization = p.option == kSep || p.option == kSepPg   ? SpmOrganization::Sep
                    : p.option == kSmp || p.option == kSmpPg ? SpmOrganization::Smp
                                                             : SpmOrganization::Hy;
  sp.power_gating = option_pg(p.option);
  const MemoryConfig& like = b.data.present ? b.data : b.shared;
  const std::array<const MemoryConfig*, kMems> from = {&b.shared, &b.data, &b.weight, &b.acc};
  const std::array<MemoryConfig*, kMems> to = {&sp.shared, &sp.data, &sp.weight, &sp.acc};
  for (int m = 0; m < kMems; ++m) {
    const std::size_t i = std::size_t(m);
    MemoryConfig n = from[i]->present ? *from[i] : like;
    n.present = p.bytes[i] > 0;
    n.size_kib = int(p.bytes[i] / 1024);
    n.sectors = std::max(1, p.sectors[i]);
    *to[i] = n.present ? n : MemoryConfig{};
  }
  return cfg;
}

}  // namespace capsgen::memory
