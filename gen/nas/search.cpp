#include "nas/search.hpp"

#include <algorithm>

#include "model/network.hpp"

namespace capsgen::nas {

Objectives hardware_vector(const HwObjectives& o) {
  if (!o.ok) return {kInfeasible, kInfeasible, kInfeasible};
  return {double(o.cycles), double(o.onchip_bytes), o.energy_mj};
}

std::vector<std::string> objective_names(const SearchProblem& p) {
  std::vector<std::string> n;
  if (p.accuracy) n.push_back("error");
  for (const char* h : {"cycles", "onchip_bytes", p.full_energy ? "total_energy_mj" : "energy_mj"}) n.push_back(h);
  return n;
}

Objectives search_vector(const SearchProblem& p, const HwObjectives& hw, std::optional<double> accuracy) {
  Objectives o = hardware_vector(hw);
  // The whole inference's energy: infeasible where the chip cannot run the network (no DRAM energy).
  if (p.full_energy && hw.ok) o[2] = hw.total_energy_mj >= 0 ? hw.total_energy_mj : kInfeasible;
  if (p.accuracy) o.insert(o.begin(), hw.ok && accuracy ? 1.0 - *accuracy : kInfeasible);
  return o;
}

const Evaluation& evaluate(const SearchProblem& p, const Genome& g) {
  const std::uint64_t h = genome_hash(g);
  if (auto it = p.evaluated->find(h); it != p.evaluated->end()) return it->second;
  Evaluation e;
  e.genome = g;
  e.order = int(p.evaluated->size());
  const std::string yaml = to_yaml(g, p.space, network_name(g));
  e.hw = hardware_objectives(p.cfg, parse_network(yaml, network_name(g) + ".yaml"), p.tech, p.datapath_pj_per_mac);
  if (p.accuracy && e.hw.ok) e.accuracy = p.accuracy(g, yaml);
  e.obj = search_vector(p, e.hw, e.accuracy);
  return p.evaluated->emplace(h, std::move(e)).first->second;
}

Problem<Genome> make_problem(const SearchProblem& p) {
  Problem<Genome> pr;
  pr.random = [&p](Rng& rng) { return random_genome(p.space, rng); };
  pr.crossover = [&p](const Genome& a, const Genome& b, Rng& rng) { return crossover(a, b, p.space, rng); };
  pr.mutate = [&p](Genome& g, Rng& rng) { mutate(g, p.space, p.p_mutation, rng); };
  pr.key = [](const Genome& g) { return genome_hash(g); };
  pr.evaluate = [&p](const Genome& g) { return evaluate(p, g).obj; };
  return pr;
}

std::vector<const Evaluation*> in_order(const SearchProblem& p) {
  std::vector<const Evaluation*> v;
  for (const auto& [h, e] : *p.evaluated) v.push_back(&e);
  std::sort(v.begin(), v.end(), [](const Evaluation* a, const Evaluation* b) { return a->order < b->order; });
  return v;
}

}  // namespace capsgen::nas
