// ROMANet's design-space exploration (Alg. 1) over tilings and schedules, and the baseline it is
// compared with (docs/romanet.md).
#pragma once

#include <cstdint>
#include <vector>

#include "romanet/layer_model.hpp"
#include "romanet/tiling.hpp"

namespace capsgen::romanet {

struct SearchOptions {
  Buffers buffers;
  ElementBytes bytes;
  // Alg. 1's search steps for Th, Tw, Tj (here on the ofmap tile Tm, Tn, which fix Th, Tw by Eq. 12-13):
  // the values 1, 1+step, 1+2*step, ... and always the full extent.
  int step_m = 1, step_n = 1, step_j = 1;
  bool overlap_reuse = true;     // the analytic model counts ifmap overlap once (ROMANet); false: baseline
  bool maximize_tj = false;      // baseline rule: Tj is the largest that fits, then the rest is searched
  std::vector<Schedule> schedules;  // candidates (Alg. 1 line 3)
};

struct SearchResult {
  bool found = false;
  Tiling tiling;
  Schedule schedule;
  AccessCounts counts;
  long long evaluated = 0;  // (tiling, schedule) pairs whose accesses were computed
  long long tiles = 0;      // tile iterations of the chosen schedule (product of the loop trip counts)
};

// Candidate values of one tile factor: 1, 1+step, ..., and `extent`.
std::vector<int> tile_values(int extent, int step);

// Alg. 1 for one layer: every feasible (Tm, Tn, Tj) (Ti from max_ti), every schedule; the fewest
// accesses win, ties go to fewer tile iterations, then to the earlier schedule. Returns found = false
// when not even 1x1x1x1 tiles fit the buffers.
SearchResult search_layer(const LayerGeometry& g, const SearchOptions& opt);

// ROMANet's setup for a network: Alg. 2's orders (or all six) as the schedules.
SearchOptions romanet_options(const std::vector<LayerGeometry>& layers, const Buffers& b, const ElementBytes& eb,
                              bool all_orders);
// The baseline of ROMANet's evaluation (SmartShuttle-style, Sec. IV): ofmap-reuse (order 6) and
// weight-reuse (order 4) schedules, an analytic model without ifmap overlap reuse, Tj maximized first.
SearchOptions baseline_options(const Buffers& b, const ElementBytes& eb);

}  // namespace capsgen::romanet
