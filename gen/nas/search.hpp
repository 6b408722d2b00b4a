// The network search problem for NSGA-II (docs/nas.md section 4): random genomes, crossover and
// mutation of the CapsNet-like space, evaluated on the hardware objectives of a preset. Accuracy is
// not an objective yet (no training proxy), so on its own this search drives toward the cheapest
// networks; it exists to run and time the machinery and to be extended by the accuracy objective.
#pragma once

#include <cstdint>
#include <map>
#include <memory>

#include "nas/genome.hpp"
#include "nas/nsga2.hpp"
#include "nas/objectives.hpp"

namespace capsgen::nas {

// The objective value of a network the preset cannot run (every objective): dominated by every
// network that runs, equal among themselves.
constexpr double kInfeasible = 1e30;

// (cycles, on-chip bytes, on-chip energy in mJ), all minimized; kInfeasible for each when !o.ok.
Objectives hardware_vector(const HwObjectives& o);

struct HardwareProblem {
  SearchSpace space;
  AccelConfig cfg;
  memory::TechParams tech;
  double p_mutation = 0.1;  // NASCaps: 10%
  // Objectives by genome_hash: a genome met again (a copy from crossover without a valid cut, or a
  // mutation repair undid) is not compiled twice. Shared by the problem's copies.
  std::shared_ptr<std::map<std::uint64_t, Objectives>> cache = std::make_shared<std::map<std::uint64_t, Objectives>>();
  std::shared_ptr<long long> compiled = std::make_shared<long long>(0);  // networks compiled
};

// NSGA-II callbacks over `hp` (which must outlive the result), with genome_hash as the duplicate key.
Problem<Genome> make_problem(const HardwareProblem& hp);

}  // namespace capsgen::nas
