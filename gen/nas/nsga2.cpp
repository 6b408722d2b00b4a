#include "nas/nsga2.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace capsgen::nas {

bool dominates(const Objectives& a, const Objectives& b) {
  bool better = false;
  for (std::size_t k = 0; k < a.size(); ++k) {
    if (a[k] > b[k]) return false;
    if (a[k] < b[k]) better = true;
  }
  return better;
}

std::vector<std::vector<int>> non_dominated_sort(const std::vector<Objectives>& f) {
  const int n = int(f.size());
  std::vector<std::vector<int>> dominated(std::size_t(n), std::vector<int>{});  // S_p: those p dominates
  std::vector<int> count(std::size_t(n), 0);                                     // n_p: how many dominate p
  std::vector<std::vector<int>> fronts;
  std::vector<int> cur;
  for (int p = 0; p < n; ++p) {
    for (int q = 0; q < n; ++q) {
      if (p == q) continue;
      if (dominates(f[std::size_t(p)], f[std::size_t(q)])) dominated[std::size_t(p)].push_back(q);
      else if (dominates(f[std::size_t(q)], f[std::size_t(p)])) ++count[std::size_t(p)];
    }
    if (count[std::size_t(p)] == 0) cur.push_back(p);
  }
  while (!cur.empty()) {
    fronts.push_back(cur);
    std::vector<int> next;
    for (int p : cur)
      for (int q : dominated[std::size_t(p)])
        if (--count[std::size_t(q)] == 0) next.push_back(q);
    std::sort(next.begin(), next.end());
    cur = std::move(next);
  }
  return fronts;
}

std::vector<double> crowding_distance(const std::vector<Objectives>& f, const std::vector<int>& front) {
  const std::size_t n = front.size();
  constexpr double inf = std::numeric_limits<double>::infinity();
  std::vector<double> d(n, 0.0);
  if (n <= 2) return std::vector<double>(n, inf);
  const std::size_t m = f[std::size_t(front[0])].size();
  std::vector<std::size_t> order(n);
  for (std::size_t k = 0; k < m; ++k) {
    std::iota(order.begin(), order.end(), std::size_t{0});
    auto val = [&](std::size_t i) { return f[std::size_t(front[i])][k]; };
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return val(a) < val(b); });
    const double lo = val(order.front()), hi = val(order.back());
    if (!(hi > lo)) continue;
    d[order.front()] = inf;
    d[order.back()] = inf;
    for (std::size_t r = 1; r + 1 < n; ++r)
      if (d[order[r]] != inf) d[order[r]] += (val(order[r + 1]) - val(order[r - 1])) / (hi - lo);
  }
  return d;
}

RankCrowding rank_and_crowding(const std::vector<Objectives>& f) {
  RankCrowding rc;
  rc.rank.assign(f.size(), 0);
  rc.crowding.assign(f.size(), 0.0);
  const auto fronts = non_dominated_sort(f);
  for (std::size_t r = 0; r < fronts.size(); ++r) {
    const auto d = crowding_distance(f, fronts[r]);
    for (std::size_t i = 0; i < fronts[r].size(); ++i) {
      rc.rank[std::size_t(fronts[r][i])] = int(r);
      rc.crowding[std::size_t(fronts[r][i])] = d[i];
    }
  }
  return rc;
}

std::vector<int> select_survivors(const std::vector<Objectives>& f, int n) {
  std::vector<int> out;
  for (const auto& front : non_dominated_sort(f)) {
    if (int(out.size()) >= n) break;
    if (int(out.size() + front.size()) <= n) {
      out.insert(out.end(), front.begin(), front.end());
      continue;
    }
    const auto d = crowding_distance(f, front);
    std::vector<std::size_t> order(front.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return d[a] > d[b]; });
    for (std::size_t i = 0; int(out.size()) < n; ++i) out.push_back(front[order[i]]);
  }
  std::sort(out.begin(), out.end());
  return out;
}

int tournament(const RankCrowding& rc, Rng& rng) {
  const int n = int(rc.rank.size());
  const int a = int(rng.range(0, n - 1));
  int b = int(rng.range(0, n - 2));
  if (b >= a) ++b;
  if (crowded_better(rc, a, b)) return a;
  if (crowded_better(rc, b, a)) return b;
  return rng.uniform() < 0.5 ? a : b;
}

std::pair<std::vector<double>, std::vector<double>> sbx_crossover(const std::vector<double>& a,
                                                                  const std::vector<double>& b,
                                                                  const RealBounds& bounds, double eta,
                                                                  double p_cross, Rng& rng) {
  std::vector<double> c1 = a, c2 = b;
  if (rng.uniform() >= p_cross) return {c1, c2};
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (rng.uniform() >= 0.5) continue;
    if (std::fabs(a[i] - b[i]) <= 1e-14) continue;
    const double y1 = std::min(a[i], b[i]), y2 = std::max(a[i], b[i]);
    const double lo = bounds.lo[i], hi = bounds.hi[i];
    const double u = rng.uniform();
    // The spread factor's distribution is truncated so that each child stays within its bound.
    auto betaq = [&](double beta) {
      const double alpha = 2.0 - std::pow(beta, -(eta + 1.0));
      return u <= 1.0 / alpha ? std::pow(u * alpha, 1.0 / (eta + 1.0))
                              : std::pow(1.0 / (2.0 - u * alpha), 1.0 / (eta + 1.0));
    };
    double x1 = 0.5 * ((y1 + y2) - betaq(1.0 + 2.0 * (y1 - lo) / (y2 - y1)) * (y2 - y1));
    double x2 = 0.5 * ((y1 + y2) + betaq(1.0 + 2.0 * (hi - y2) / (y2 - y1)) * (y2 - y1));
    x1 = std::clamp(x1, lo, hi);
    x2 = std::clamp(x2, lo, hi);
    if (rng.uniform() < 0.5) std::swap(x1, x2);
    c1[i] = x1;
    c2[i] = x2;
  }
  return {c1, c2};
}

void polynomial_mutation(std::vector<double>& x, const RealBounds& bounds, double eta, double p_var, Rng& rng) {
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (rng.uniform() >= p_var) continue;
    const double lo = bounds.lo[i], hi = bounds.hi[i];
    if (!(hi > lo)) continue;
    const double d1 = (x[i] - lo) / (hi - lo), d2 = (hi - x[i]) / (hi - lo);
    const double u = rng.uniform(), p = 1.0 / (eta + 1.0);
    double dq;
    if (u < 0.5) {
      const double v = 2.0 * u + (1.0 - 2.0 * u) * std::pow(1.0 - d1, eta + 1.0);
      dq = std::pow(v, p) - 1.0;
    } else {
      const double v = 2.0 * (1.0 - u) + 2.0 * (u - 0.5) * std::pow(1.0 - d2, eta + 1.0);
      dq = 1.0 - std::pow(v, p);
    }
    x[i] = std::clamp(x[i] + dq * (hi - lo), lo, hi);
  }
}

}  // namespace capsgen::nas
