// NSGA-II (Deb, Pratap, Agarwal, Meyarivan 2002; docs/nas.md section 1): fast non-dominated sorting,
// crowding distance, binary tournament on (rank, crowding) and elitist (mu + lambda) replacement.
// Every objective is minimized. Generic over the genome: the problem supplies random genomes,
// evaluation, crossover and mutation as callbacks. Seeded and deterministic: all random choices
// come from capsgen::Rng (gen/core/rng.hpp) in a fixed order, and every sort breaks ties by index.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <set>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/rng.hpp"

namespace capsgen::nas {

using Objectives = std::vector<double>;

// a dominates b: a is no worse in every objective and better in at least one.
bool dominates(const Objectives& a, const Objectives& b);

// The fronts F1, F2, ... of a set of objective vectors (Deb's fast non-dominated sort); each front
// lists indices into f in ascending order. Every index is in exactly one front.
std::vector<std::vector<int>> non_dominated_sort(const std::vector<Objectives>& f);

// Crowding distance of each member of one front (same order as `front`): infinity for the extreme
// members of every objective, else the sum over objectives of the normalized gap between the two
// neighbours. An objective with one value over the front adds nothing. Fronts of <= 2 members: all
// infinity.
std::vector<double> crowding_distance(const std::vector<Objectives>& f, const std::vector<int>& front);

// Rank (0 = first front) and crowding distance of every member of a population.
struct RankCrowding {
  std::vector<int> rank;
  std::vector<double> crowding;
};
RankCrowding rank_and_crowding(const std::vector<Objectives>& f);

// Crowded comparison: lower rank wins, then larger crowding distance.
inline bool crowded_better(const RankCrowding& rc, int a, int b) {
  if (rc.rank[std::size_t(a)] != rc.rank[std::size_t(b)]) return rc.rank[std::size_t(a)] < rc.rank[std::size_t(b)];
  return rc.crowding[std::size_t(a)] > rc.crowding[std::size_t(b)];
}

// Elitist replacement: n indices of f (parents and offspring together) for the next parents, whole
// fronts first, the last front cut by descending crowding distance (ties: lower index first).
// The result is ascending.
std::vector<int> select_survivors(const std::vector<Objectives>& f, int n);

// Binary tournament: two distinct members drawn uniformly; the crowded-better one, a coin flip on a tie.
int tournament(const RankCrowding& rc, Rng& rng);

template <class G>
struct Individual {
  G genome;
  Objectives obj;
  int rank = 0;
  double crowding = 0;
};

template <class G>
struct Problem {
  std::function<G(Rng&)> random;
  std::function<Objectives(const G&)> evaluate;
  std::function<std::pair<G, G>(const G&, const G&, Rng&)> crossover;
  std::function<void(G&, Rng&)> mutate;
  // Optional: a key equal for equal genomes. When set, a random genome or offspring whose key is
  // already in the population (parents and offspring so far) is drawn again, up to
  // Nsga2Options::duplicate_retries times per member, so that no network is evaluated twice in one
  // generation and the parents do not fill with copies. Unset: Deb's algorithm as published.
  std::function<std::uint64_t(const G&)> key;
};

struct Nsga2Options {
  int parents = 10;    // |P|
  int offspring = 10;  // |Q|
  int generations = 20;
  std::uint64_t seed = 1;
  int duplicate_retries = 20;  // with Problem::key
};

// Runs the search and returns the final parents with their objectives, ranks and crowding distances
// (ranks within the final parents). on_generation(g, parents) is called after the initial population
// (g = 0) and after each generation g = 1..generations.
template <class G>
std::vector<Individual<G>> run_nsga2(const Problem<G>& prob, const Nsga2Options& opt,
                                     const std::type_identity_t<std::function<void(int, const std::vector<Individual<G>>&)>>&
                                         on_generation = {}) {
  if (opt.parents < 2 || opt.offspring < 1 || opt.generations < 0)
    throw std::invalid_argument("run_nsga2: needs >= 2 parents, >= 1 offspring, >= 0 generations");
  Rng rng(opt.seed);
  std::vector<Individual<G>> pop;
  std::set<std::uint64_t> keys;  // of the population being built (with Problem::key)
  // True when g may join: no key function, a new key, or the retries for this member are used up.
  auto admit = [&](const G& g, int& tries) {
    if (!prob.key) return true;
    const std::uint64_t k = prob.key(g);
    if (keys.count(k) && tries++ < opt.duplicate_retries) return false;
    keys.insert(k);
    return true;
  };
  for (int i = 0; i < opt.parents; ++i) {
    Individual<G> ind;
    int tries = 0;
    do ind.genome = prob.random(rng);
    while (!admit(ind.genome, tries));
    ind.obj = prob.evaluate(ind.genome);
    pop.push_back(std::move(ind));
  }
  auto annotate = [](std::vector<Individual<G>>& p) {
    std::vector<Objectives> f;
    for (const auto& x : p) f.push_back(x.obj);
    const RankCrowding rc = rank_and_crowding(f);
    for (std::size_t i = 0; i < p.size(); ++i) {
      p[i].rank = rc.rank[i];
      p[i].crowding = rc.crowding[i];
    }
    return rc;
  };
  RankCrowding rc = annotate(pop);
  if (on_generation) on_generation(0, pop);
  for (int g = 1; g <= opt.generations; ++g) {
    std::vector<Individual<G>> all = pop;
    keys.clear();
    if (prob.key)
      for (const auto& x : pop) keys.insert(prob.key(x.genome));
    int tries = 0;
    while (int(all.size()) < opt.parents + opt.offspring) {
      const int a = tournament(rc, rng), b = tournament(rc, rng);
      auto kids = prob.crossover(pop[std::size_t(a)].genome, pop[std::size_t(b)].genome, rng);
      for (G* k : {&kids.first, &kids.second}) {
        if (int(all.size()) == opt.parents + opt.offspring) break;
        prob.mutate(*k, rng);
        if (!admit(*k, tries)) continue;
        tries = 0;
        Individual<G> ind;
        ind.genome = std::move(*k);
        ind.obj = prob.evaluate(ind.genome);
        all.push_back(std::move(ind));
      }
    }
    std::vector<Objectives> f;
    for (const auto& x : all) f.push_back(x.obj);
    std::vector<Individual<G>> next;
    for (int i : select_survivors(f, opt.parents)) next.push_back(std::move(all[std::size_t(i)]));
    pop = std::move(next);
    rc = annotate(pop);
    if (on_generation) on_generation(g, pop);
  }
  return pop;
}

// Real-valued operators (Deb and Agrawal 1995; Deb and Goyal 1996) for box-bounded problems.
struct RealBounds {
  std::vector<double> lo, hi;
};
// Simulated binary crossover with distribution index eta: with probability p_cross the pair is
// recombined, each variable with probability 1/2 (bounded form: the spread respects lo/hi).
std::pair<std::vector<double>, std::vector<double>> sbx_crossover(const std::vector<double>& a,
                                                                  const std::vector<double>& b,
                                                                  const RealBounds& bounds, double eta,
                                                                  double p_cross, Rng& rng);
// Polynomial mutation with distribution index eta, each variable with probability p_var (bounded form).
void polynomial_mutation(std::vector<double>& x, const RealBounds& bounds, double eta, double p_var, Rng& rng);

}  // namespace capsgen::nas
