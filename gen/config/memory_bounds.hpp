// Bounds of a scratchpad memory's size and sector count (docs/config.md, docs/limits.md), shared by
// the preset reader and the reader of exploration results, so that a CSV row cannot ask for what a
// preset cannot hold.
#pragma once

namespace capsgen {

constexpr long long kMaxMemoryKib = 65536;
constexpr long long kMaxMemorySectors = 256;

}  // namespace capsgen
