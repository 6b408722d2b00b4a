#include "nas/search.hpp"

#include "model/network.hpp"

namespace capsgen::nas {

Objectives hardware_vector(const HwObjectives& o) {
  if (!o.ok) return {kInfeasible, kInfeasible, kInfeasible};
  return {double(o.cycles), double(o.onchip_bytes), o.energy_mj};
}

Problem<Genome> make_problem(const HardwareProblem& hp) {
  Problem<Genome> p;
  p.random = [&hp](Rng& rng) { return random_genome(hp.space, rng); };
  p.crossover = [&hp](const Genome& a, const Genome& b, Rng& rng) { return crossover(a, b, hp.space, rng); };
  p.mutate = [&hp](Genome& g, Rng& rng) { mutate(g, hp.space, hp.p_mutation, rng); };
  p.key = [](const Genome& g) { return genome_hash(g); };
  p.evaluate = [&hp](const Genome& g) {
    const std::uint64_t h = genome_hash(g);
    if (auto it = hp.cache->find(h); it != hp.cache->end()) return it->second;
    const Network net = parse_network(to_yaml(g, hp.space, "candidate"), "candidate.yaml");
    const Objectives o = hardware_vector(hardware_objectives(hp.cfg, net, hp.tech));
    ++*hp.compiled;
    hp.cache->emplace(h, o);
    return o;
  };
  return p;
}

}  // namespace capsgen::nas
