// ROMANet's tiling model (Sec. III-A2/A3): tiles along each loop dimension, the overlapping ifmap
// tiles (base, intermediate, last: Eq. 7-13), buffer constraints (Eq. 2) and the number of DRAM
// accesses of a tiling and schedule (Eq. 14-17, exact for every loop order).
//
// Accesses are counted by walking the schedule's loop nest in closed form: the first tile of a data
// type is fetched whole; at every later step where loop `l` advances (the loops inside it wrap), the
// new tile costs its size minus what it shares with the tile on chip (the buffer holds one tile of
// each type; with overlap reuse an ifmap tile keeps the rows/columns it shares with the previous one,
// as Eq. 7-8's intermediate tiles do). Because tiles are boxes, the sum over all steps of one level is
// a product over the four dimensions of per-dimension sums (DimStats), so one evaluation is O(1).
// Ofmaps: every visit of an ofmap tile ends with a write (partial sums or final values); every visit
// but the first starts with a read of the partial sums (Eq. 17).
#pragma once

#include <array>
#include <vector>

#include "romanet/layer_model.hpp"

namespace capsgen::romanet {

struct Tiling {
  int Tm = 1, Tn = 1, Ti = 1, Tj = 1;  // ofmap rows, ofmap columns, input channels, output channels per tile
  bool operator==(const Tiling&) const = default;
};

struct Buffers {
  long long ifmap = 64 * 1024, weight = 64 * 1024, ofmap = 64 * 1024;  // bytes (iBuff, wBuff, oBuff)
};
struct ElementBytes {
  int ifmap = 1, weight = 1, ofmap = 1;  // ofmap also holds the partial sums moved to and from DRAM
};

// A half-open interval of one dimension (rows, columns or channels).
struct Interval {
  int lo = 0, hi = 0;
  int size() const { return hi - lo; }
};
// Ofmap (and channel) tiles of `extent` split into tiles of T.
std::vector<Interval> split(int extent, int T);
// Input rows (or columns) each ofmap tile of T rows needs: [m0*s - pad, (m1-1)*s + P - pad), clipped to
// the real input [0, in_extent) (padding is not stored in DRAM).
std::vector<Interval> input_span(int out_extent, int T, int stride, int kernel, int pad, int in_extent);

// Per-dimension sums used by the closed-form count.
struct DimStats {
  long long n = 1;              // tiles
  long long first = 0;          // size of tile 0
  long long sum = 0;            // sum of sizes
  long long sum_adj_ov = 0;     // sum over t of |tile t  cap  tile t+1|
  long long ov_last_first = 0;  // |last tile cap tile 0| (= first when n == 1)
  long long max = 0;            // largest tile
};
DimStats dim_stats(const std::vector<Interval>& tiles);

// The DimStats of every (data type, dimension) of a layer for one tiling, and the loop trip counts.
struct LayerDims {
  std::array<std::array<DimStats, 4>, 3> st{};  // [type][dim], meaningful where the type depends on dim
  std::array<std::array<bool, 4>, 3> dep{};
  std::array<long long, 3> mult{};  // factor outside the tiled dims (P*Q for conv weights)
  std::array<long long, 4> n{};     // tiles per loop
};
LayerDims layer_dims(const LayerGeometry& g, const Tiling& t);

// Elements moved between DRAM and the buffers (reads of ifmaps and weights, reads and writes of
// ofmaps/partial sums, and for class_caps the routing traffic).
struct AccessCounts {
  long long ifmap_rd = 0, weight_rd = 0, ofmap_rd = 0, ofmap_wr = 0;
  long long routing_rd = 0, routing_wr = 0;  // class_caps: u_hat read per routing iteration, v written
  long long reads() const { return ifmap_rd + weight_rd + ofmap_rd + routing_rd; }
  long long writes() const { return ofmap_wr + routing_wr; }
  long long total() const { return reads() + writes(); }
  AccessCounts& operator+=(const AccessCounts& o);
};

// Fetches of one data type for a schedule (elements), from the dims' stats.
long long fetched_elements(const LayerDims& d, int type, const std::array<int, 4>& loops, bool overlap_reuse);
// All counts of a tiling and schedule. overlap_reuse = false fetches every new ifmap tile whole (the
// baseline's model).
AccessCounts analytic_counts(const LayerDims& d, const LayerGeometry& g, const std::array<int, 4>& loops,
                             bool overlap_reuse);
AccessCounts analytic_counts(const LayerGeometry& g, const Tiling& t, const Schedule& s, bool overlap_reuse);
// class_caps routing traffic (independent of the tiling): u_hat (M*N x J) read once per iteration
// (b_ij and c_ij stay on chip, the b update of iteration r and the s sum of r+1 share one pass), v
// written once.
AccessCounts routing_counts(const LayerGeometry& g);

// Ifmap tile extent (Alg. 1's Th, Tw) for ofmap tiles Tm, Tn: (T-1)*str + P.
long long ifmap_rows(const LayerGeometry& g, int Tm);
long long ifmap_cols(const LayerGeometry& g, int Tn);
// Bytes of the largest tile of each type (Eq. 2's left-hand sides).
long long ifmap_tile_bytes(const LayerGeometry& g, const Tiling& t, const ElementBytes& eb);
long long weight_tile_bytes(const LayerGeometry& g, const Tiling& t, const ElementBytes& eb);
long long ofmap_tile_bytes(const LayerGeometry& g, const Tiling& t, const ElementBytes& eb);
bool fits(const LayerGeometry& g, const Tiling& t, const Buffers& b, const ElementBytes& eb);
// Alg. 1 line 9: the largest Ti (<= I) for which the ifmap and weight tiles fit; 0 if none does.
// (More input channels per tile never costs accesses: fewer i tiles mean fewer partial-sum trips.)
int max_ti(const LayerGeometry& g, int Tm, int Tn, int Tj, const Buffers& b, const ElementBytes& eb);

// Eq. 7-13 for a tiling, in the paper's terms (padded input coordinates, whole tiles):
// base, intermediate and last tile sizes per direction, the overlap and the number of intermediate tiles.
struct DirectionPartition {
  long long base = 0, overlap = 0, intermediate = 0, last = 0, n_intermediate = 0, n_tiles = 1;
};
struct Partition {
  DirectionPartition h, w;                 // ifmaps: Eq. 8 (height), Eq. 7 (width)
  long long ti_base = 0, ti_last = 0, n_ti = 1;  // Eq. 9 / 11
  long long tj_base = 0, tj_last = 0, n_tj = 1;  // Eq. 10
  long long tm_base = 0, tm_last = 0, tn_base = 0, tn_last = 0;  // Eq. 12-13
};
Partition partition(const LayerGeometry& g, const Tiling& t);

}  // namespace capsgen::romanet
