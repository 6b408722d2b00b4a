// Splits [0, n) into `threads` contiguous ranges run on std::threads, each with its own
// GoldenStats, summed at the end (the counts are sums, so the total is independent of the split).
#pragma once

#include <algorithm>
#include <thread>
#include <vector>

#include "golden/stats.hpp"

namespace capsgen {

// fn(begin, end, stats) for each range; runs inline when one range suffices.
template <typename Fn>
void parallel_ranges(int n, int threads, GoldenStats& st, const Fn& fn) {
  const int workers = std::max(1, std::min(threads, n));
  if (workers == 1) {
    fn(0, n, st);
    return;
  }
  std::vector<GoldenStats> part(static_cast<std::size_t>(workers));
  std::vector<std::thread> pool;
  for (int t = 1; t < workers; ++t)
    pool.emplace_back([&, t] { fn(n * t / workers, n * (t + 1) / workers, part[std::size_t(t)]); });
  fn(0, n / workers, part[0]);
  for (auto& th : pool) th.join();
  for (const GoldenStats& p : part) st += p;
}

}  // namespace capsgen
