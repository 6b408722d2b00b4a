#include "memory/dse_config.hpp"

#include <algorithm>

namespace capsgen::memory {

const MemoryConfig& memory_config(const ScratchpadConfig& sp, int m) {
  return m == kShared ? sp.shared : m == kData ? sp.data : m == kWeight ? sp.weight : sp.acc;
}

MemoryConfig& memory_config(ScratchpadConfig& sp, int m) {
  return const_cast<MemoryConfig&>(memory_config(static_cast<const ScratchpadConfig&>(sp), m));
}

const MemoryConfig& stand_in_memory(const ScratchpadConfig& sp, int m) {
  const MemoryConfig& own = memory_config(sp, m);
  return own.present ? own : sp.data.present ? sp.data : sp.shared;
}

AccelConfig configured_preset(const AccelConfig& base, const ConfigPoint& p) {
  AccelConfig cfg = base;
  ScratchpadConfig& sp = cfg.scratchpad;
  sp.organization = p.option == kSep || p.option == kSepPg   ? SpmOrganization::Sep
                    : p.option == kSmp || p.option == kSmpPg ? SpmOrganization::Smp
                                                             : SpmOrganization::Hy;
  sp.power_gating = option_pg(p.option);
  for (int m = 0; m < kMems; ++m) {
    const std::size_t i = std::size_t(m);
    MemoryConfig n = stand_in_memory(base.scratchpad, m);
    n.present = p.bytes[i] > 0;
    n.size_kib = int(p.bytes[i] / 1024);
    n.sectors = std::max(1, p.sectors[i]);
    memory_config(sp, m) = n.present ? n : MemoryConfig{};
  }
  return cfg;
}

}  // namespace capsgen::memory
