#include "isa/onchip_map.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace capsgen::isa {

const char* to_string(Onchip m) {
  switch (m) {
    case Onchip::kData: return "data";
    case Onchip::kWeight: return "weight";
    case Onchip::kAcc: return "acc";
    case Onchip::kShared: return "shared";
    case Onchip::kLanes: return "lanes";
  }
  return "?";
}

std::string OnchipMap::unsupported_reason(const AccelConfig& cfg) {
  const ScratchpadConfig& s = cfg.scratchpad;
  if (s.organization == SpmOrganization::Smp && s.shared.width_bits < 32)
    return fmt::format("streaming the smp organization needs scratchpad.shared.width_bits >= 32 (one psum code per "
                       "32-bit lane of a shared word), preset {} has {}",
                       cfg.name, s.shared.width_bits);
  return "";
}

OnchipMap OnchipMap::from_config(const AccelConfig& cfg) {
  if (std::string why = unsupported_reason(cfg); !why.empty()) throw std::invalid_argument(why);
  const ScratchpadConfig& s = cfg.scratchpad;
  OnchipMap m;
  if (s.organization == SpmOrganization::Smp) {
    // One memory of S bytes: the acc view [0, S/4) (32-bit lanes) and the byte view [S/4, S/4 + S).
    const std::int64_t bytes = std::int64_t(s.shared.size_kib) * 1024;
    m.smp = true;
    m.elements[int(Onchip::kAcc)] = bytes / 4;
    m.word_elements[int(Onchip::kAcc)] = s.shared.width_bits / 32;
    m.base[int(Onchip::kShared)] = bytes / 4;
    m.elements[int(Onchip::kShared)] = bytes;
    m.word_elements[int(Onchip::kShared)] = s.shared.width_bits / 8;
    for (int i : {0, 1}) m.base[i] = 0;
    return m;
  }
  const bool hy = s.organization == SpmOrganization::Hy;
  const MemoryConfig* mems[kOnchipMemories] = {&s.data, &s.weight, &s.acc, &s.shared, &s.shared};
  std::int64_t base = 0;
  for (int i = 0; i < kOnchipMemories; ++i) {
    const int lane_bytes = i == 2 || i == 4 ? 4 : 1;
    if ((i >= 3 && !hy) || (i == 4 && !hy_shared_lanes(s, cfg.array.cols))) {
      m.base[i] = base;
      continue;
    }
    m.base[i] = base;
    m.elements[i] = std::int64_t(mems[i]->size_kib) * 1024 / lane_bytes;
    m.word_elements[i] = std::max(1, mems[i]->width_bits / (8 * lane_bytes));
    base += m.elements[i];
  }
  return m;
}

std::vector<std::int64_t> OnchipMap::aliases(std::int64_t a) const {
  const int acc = lane_view(), sh = int(Onchip::kShared);
  if (acc < 0) return {};
  if (a >= base[acc] && a < base[acc] + elements[acc]) {
    const std::int64_t b = base[sh] + 4 * (a - base[acc]);
    return {b, b + 1, b + 2, b + 3};
  }
  if (a >= base[sh] && a < base[sh] + elements[sh]) return {base[acc] + (a - base[sh]) / 4};
  return {};
}

}  // namespace capsgen::isa
