// The network search problem for NSGA-II (docs/nas.md section 4): random genomes, crossover and
// mutation of the CapsNet-like space, evaluated on the hardware objectives of a preset and, when an
// accuracy proxy is given, on the proxy's test error. Every network evaluated is kept with all its
// figures, so a search can report more than the objectives it ranks by.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nas/genome.hpp"
#include "nas/nsga2.hpp"
#include "nas/objectives.hpp"

namespace capsgen::nas {

// The objective value of a network the preset cannot run (every objective): dominated by every
// network that runs, equal among themselves.
constexpr double kInfeasible = 1e30;

// (cycles, on-chip bytes, on-chip energy in mJ), all minimized; kInfeasible for each when !o.ok.
Objectives hardware_vector(const HwObjectives& o);

// The accuracy proxy: the test accuracy in [0, 1] of `g` (described by `yaml`) after a short training.
// Called only for networks the preset runs. Throws on a failure it cannot score (a crashed trainer).
using AccuracyProxy = std::function<double(const Genome& g, const std::string& yaml)>;

struct Evaluation {
  Genome genome;
  HwObjectives hw;
  std::optional<double> accuracy;  // the proxy's test accuracy (a proxy was given and hw.ok)
  Objectives obj;                  // what NSGA-II ranks: search_vector()
  int order = 0;                   // 0, 1, ... in the order the networks were first evaluated
};

struct SearchProblem {
  SearchSpace space;
  AccelConfig cfg;
  memory::TechParams tech;
  double datapath_pj_per_mac = -1;  // the datapath's energy per useful MAC; < 0: none
  // The energy objective: false, the on-chip SRAM's (energy_mj); true, the whole inference's
  // (total_energy_mj: SRAM, DRAM and datapath).
  bool full_energy = false;
  double p_mutation = 0.1;  // NASCaps: 10%
  AccuracyProxy accuracy;   // empty: the hardware objectives alone
  // Every network evaluated, by genome_hash: a genome met again (a copy from crossover without a
  // valid cut, or a mutation repair undid) is neither compiled nor trained twice. Shared by the
  // problem's copies.
  std::shared_ptr<std::map<std::uint64_t, Evaluation>> evaluated =
      std::make_shared<std::map<std::uint64_t, Evaluation>>();
};

// The objective names of a problem, in the order of search_vector(): "error" (1 - accuracy) first
// when the problem has an accuracy proxy, then "cycles", "onchip_bytes", and "energy_mj" or, with
// full_energy, "total_energy_mj".
std::vector<std::string> objective_names(const SearchProblem& p);

// The objective vector of an evaluation: [1 - accuracy,] cycles, on-chip bytes, energy; every entry
// kInfeasible when the preset cannot run the network.
Objectives search_vector(const SearchProblem& p, const HwObjectives& hw, std::optional<double> accuracy);

// Evaluates `g` (or returns its earlier evaluation): compiles it for the preset and, when it runs
// and the problem has a proxy, trains it.
const Evaluation& evaluate(const SearchProblem& p, const Genome& g);

// NSGA-II callbacks over `p` (which must outlive the result), with genome_hash as the duplicate key.
Problem<Genome> make_problem(const SearchProblem& p);

// The evaluations in evaluation order.
std::vector<const Evaluation*> in_order(const SearchProblem& p);

}  // namespace capsgen::nas
