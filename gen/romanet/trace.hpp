// DRAM address traces of a layer's schedule (ROMANet Sec. III-C and the evaluation's "memory access
// generator"): walks the tile loops in schedule order, fetches the tiles the way the analytic model
// counts them, places every tile in DRAM with a mapping policy, and emits one request per burst (or
// per beat in non-burst mode).
//
// Data layout. Tiles of weights and ofmaps do not overlap: each is one contiguous allocation, placed
// when first touched. Ifmap tiles overlap:
//   - with overlap reuse (ROMANet) the ifmap is cut into blocks along every tile edge (the base,
//     intermediate and last pieces of Eq. 7-9, in both directions); a block is one allocation, placed
//     when first fetched, so a tile's first fetch is contiguous and a later fetch of only its new part
//     reads whole blocks;
//   - without (the baseline) every ifmap tile is stored whole (its overlap duplicated, as tile-wise
//     contiguous storage needs; those duplicate writes by the producing layer are not counted).
// Allocations follow the mapping policy (dram::TileAllocator): ROMANet's order, or contiguous in one
// bank with banks taken in turn. Each tensor has its own rows.
#pragma once

#include <array>
#include <cstdint>

#include "dram/address_mapping.hpp"
#include "romanet/layer_model.hpp"
#include "romanet/tiling.hpp"

namespace capsgen::romanet {

enum TraceStream : int { kStreamIfmap = 0, kStreamWeight = 1, kStreamOfmap = 2, kStreamRouting = 3 };

struct TraceConfig {
  dram::MappingPolicy policy = dram::MappingPolicy::Romanet;
  bool overlap_reuse = true;
  ElementBytes bytes;
  int word_bytes = 1;         // bytes per DRAM beat (dram::DramOrganization::word_bytes())
  int beats_per_request = 8;  // burst length, or 1 in non-burst mode
};

class AccessSink {
 public:
  virtual ~AccessSink() = default;
  // One DRAM request of `beats` beats (1..beats_per_request) starting at `a` (all in one row).
  virtual void on_request(const dram::DramAddress& a, bool write, int beats, int stream) = 0;
};

struct TraceTotals {
  std::array<long long, 4> read_elements{}, write_elements{};  // by TraceStream
  std::array<long long, 4> read_words{}, write_words{};        // DRAM accesses (beats)
  long long requests = 0;
  long long words() const;
  long long elements() const;
};

// Generates the trace of one layer. `alloc` is reset (each layer maps its tensors afresh).
// Throws std::length_error if the layer's tensors do not fit the DRAM.
TraceTotals generate_trace(const LayerGeometry& g, const Tiling& t, const Schedule& s, const TraceConfig& cfg,
                           dram::TileAllocator& alloc, AccessSink& sink);

}  // namespace capsgen::romanet
