// Hardware objectives: the latency equals what `capsgen compile` reports for the same network and
// preset (its workload path: seed 1 random weights, the shared calibration rule), memory and energy follow
// the memory exploration's SEP sizing, and every random genome of a small space compiles.
#include <gtest/gtest.h>

#include <set>

#include "compiler/compiler.hpp"
#include "golden/workload.hpp"
#include "memory/dse.hpp"
#include "model/network.hpp"
#include "nas/genome.hpp"
#include "nas/objectives.hpp"
#include "nas/search.hpp"

namespace capsgen::nas {
namespace {

const std::string kRoot = CAPSGEN_REPO_ROOT;

memory::TechParams tech() { return memory::load_tech(kRoot + "/configs/tech/sram-32nm.yaml"); }

// What `capsgen compile --config C --model M` computes (cli/workload_input.cpp: seed 1, the default
// WorkloadSpec's calibration).
struct CliTotals {
  long long engine = 0, program = 0;
};
CliTotals cli_compile(const std::string& config, const std::string& model) {
  WorkloadSpec spec;
  spec.config_path = config;
  spec.model_path = model;
  spec.seed = 1;
  const Workload w = prepare_workload(spec);
  const isa::Program prog = compile_program(w.cfg, w.net, w.qm);
  CliTotals t;
  for (const auto& s : analyze_program(w.cfg, prog)) t.engine += s.cycles;
  t.program = program_cycles(w.cfg, prog);
  return t;
}

void check_latency(const std::string& config, const std::string& model) {
  const AccelConfig cfg = load_accel_config(config);
  const Network net = load_network(model);
  const HwObjectives o = hardware_objectives(cfg, net, tech());
  ASSERT_TRUE(o.ok) << o.why;
  const CliTotals t = cli_compile(config, model);
  EXPECT_EQ(o.cycles, t.program);
  EXPECT_EQ(o.engine_cycles, t.engine);
  EXPECT_GT(o.cycles, o.engine_cycles);  // the sequencer's fetches add cycles
  EXPECT_DOUBLE_EQ(o.latency_ms, double(o.cycles) / (cfg.clock.target_mhz * 1e3));
}

TEST(NasObjectives, LatencyIsCapsgenCompileCapsNetTiny16x16) {
  check_latency(kRoot + "/configs/capsacc-16x16.yaml", kRoot + "/models/capsnet-tiny.yaml");
}
TEST(NasObjectives, LatencyIsCapsgenCompileCapsNetTiny4x4) {
  check_latency(kRoot + "/configs/small-4x4.yaml", kRoot + "/models/capsnet-tiny.yaml");
}

TEST(NasObjectives, MemoryAndEnergyFollowTheSepSizing) {
  const AccelConfig cfg = load_accel_config(kRoot + "/configs/capsacc-16x16.yaml");
  const Network net = load_network(kRoot + "/models/capsnet-tiny.yaml");
  const HwObjectives o = hardware_objectives(cfg, net, tech());
  ASSERT_TRUE(o.ok);
  // Recompute from the compiler's statistics: the largest usage per memory, rounded to a power of two.
  const Workload w = prepare_workload(WorkloadSpec{kRoot + "/configs/capsacc-16x16.yaml",
                                                   kRoot + "/models/capsnet-tiny.yaml", std::nullopt, 1, std::nullopt});
  const auto stats = analyze_program(w.cfg, compile_program(w.cfg, w.net, w.qm));
  long long d = 0, wt = 0, a = 0;
  for (const auto& s : stats) d = std::max(d, s.usage_data), wt = std::max(wt, s.usage_weight), a = std::max(a, s.usage_acc);
  EXPECT_EQ(o.onchip_usage_bytes, d + wt + a);
  EXPECT_EQ(o.onchip_bytes, memory::pow2_size(d) + memory::pow2_size(wt) + memory::pow2_size(a));
  EXPECT_GE(o.onchip_bytes, o.onchip_usage_bytes);
  // Parameters: conv1 8x1x5x5 + 8 biases, primary 16x8x3x3 + 16, classcaps 36x5x8x4 (no bias).
  const long long weights = 8 * 25 + 16 * 8 * 9 + 36 * 5 * 8 * 4, biases = 8 + 16;
  EXPECT_EQ(o.param_bytes, weights * cfg.widths.weight / 8 + biases * cfg.widths.psum / 8);
  EXPECT_GT(o.energy_mj, 0.0);
  EXPECT_GT(o.macs, 0);
}

// The whole inference's energy: the DRAM's is the chip model's DRAM energy (the chip's timing model
// run here too), the datapath's the MACs times the energy per MAC, the total their sum with the
// SRAM's; with full_energy the search ranks by the total.
TEST(NasObjectives, FullEnergyAddsTheChipsDramAndTheDatapath) {
  const AccelConfig cfg = load_accel_config(kRoot + "/configs/tiny-2x2.yaml");
  const Network net = load_network(kRoot + "/models/capsnet-tiny.yaml");
  const HwObjectives without = hardware_objectives(cfg, net, tech());
  ASSERT_TRUE(without.ok) << without.why;
  EXPECT_EQ(without.datapath_energy_mj, -1);
  EXPECT_EQ(without.total_energy_mj, -1);
  ASSERT_GT(without.chip_cycles, 0);
  EXPECT_GT(without.dram_energy_mj, 0);
  const double pj = 314.0;
  const HwObjectives o = hardware_objectives(cfg, net, tech(), pj);
  EXPECT_DOUBLE_EQ(o.datapath_energy_mj, pj * double(o.macs) * 1e-9);
  EXPECT_DOUBLE_EQ(o.dram_energy_mj, without.dram_energy_mj);
  EXPECT_DOUBLE_EQ(o.total_energy_mj, o.energy_mj + o.dram_energy_mj + o.datapath_energy_mj);
  SearchProblem p;
  p.cfg = cfg;
  p.tech = tech();
  EXPECT_EQ(search_vector(p, o, std::nullopt).back(), o.energy_mj);
  EXPECT_EQ(objective_names(p).back(), "energy_mj");
  p.full_energy = true;
  EXPECT_EQ(search_vector(p, o, std::nullopt).back(), o.total_energy_mj);
  EXPECT_EQ(objective_names(p).back(), "total_energy_mj");
  // Without a datapath figure the total is unknown, and the network is infeasible for that objective.
  EXPECT_EQ(search_vector(p, without, std::nullopt).back(), kInfeasible);
}

TEST(NasObjectives, LargerNetworkCostsMore) {
  const AccelConfig cfg = load_accel_config(kRoot + "/configs/capsacc-16x16.yaml");
  SearchSpace s;
  s.in_height = s.in_width = 12;
  auto eval = [&](int channels) {
    const Genome g{{LayerGene{GeneKind::Conv, 5, 1, channels, 0, 0, 0}, LayerGene{GeneKind::PrimaryCaps, 3, 2, 4, 4, 0, 0},
                    LayerGene{GeneKind::ClassCaps, 0, 0, 0, 8, 10, 3}}};
    return hardware_objectives(cfg, parse_network(to_yaml(g, s, "cand"), "cand.yaml"), tech());
  };
  const HwObjectives small = eval(16), big = eval(64);
  ASSERT_TRUE(small.ok && big.ok);
  EXPECT_GT(big.cycles, small.cycles);
  EXPECT_GT(big.param_bytes, small.param_bytes);
  EXPECT_GT(big.energy_mj, small.energy_mj);
  EXPECT_GE(big.onchip_bytes, small.onchip_bytes);
}

TEST(NasObjectives, RandomGenomesOfASmallSpaceCompile) {
  const AccelConfig cfg = load_accel_config(kRoot + "/configs/capsacc-16x16.yaml");
  SearchSpace s;
  s.in_height = s.in_width = 12;
  s.conv_channels = {8, 16, 32};
  s.primary_types = {2, 4, 8};
  Rng rng(3);
  for (int i = 0; i < 30; ++i) {
    const Genome g = random_genome(s, rng);
    const HwObjectives o = hardware_objectives(cfg, parse_network(to_yaml(g, s, "cand"), "cand.yaml"), tech());
    EXPECT_TRUE(o.ok) << genome_text(g) << ": " << o.why;
    EXPECT_GT(o.cycles, 0);
  }
}

}  // namespace
}  // namespace capsgen::nas

namespace capsgen::nas {
namespace {

SearchProblem small_problem() {
  SearchProblem hp;
  hp.space.in_height = hp.space.in_width = 12;
  hp.space.conv_channels = {8, 16, 32};
  hp.space.primary_types = {2, 4, 8};
  hp.cfg = load_accel_config(kRoot + "/configs/capsacc-16x16.yaml");
  hp.tech = tech();
  return hp;
}

std::vector<Individual<Genome>> search(const SearchProblem& hp, std::uint64_t seed) {
  Nsga2Options o;
  o.parents = 6;
  o.offspring = 6;
  o.generations = 3;
  o.seed = seed;
  return run_nsga2(make_problem(hp), o);
}

TEST(NasSearch, HardwareSearchIsDeterministicAndItsFrontNonDominated) {
  const SearchProblem hp = small_problem();
  const auto a = search(hp, 4);
  ASSERT_EQ(a.size(), 6u);
  EXPECT_LE(hp.evaluated->size(), 6u + 6u * 3u);  // the cache never compiles a genome twice
  for (const auto& x : a) {
    EXPECT_NO_THROW(parse_network(to_yaml(x.genome, hp.space, "m"), "m.yaml")) << genome_text(x.genome);
    ASSERT_EQ(x.obj.size(), 3u);
    EXPECT_LT(x.obj[0], kInfeasible);
    for (const auto& y : a) {
      if (x.rank == 0 && y.rank == 0) {
        EXPECT_FALSE(dominates(x.obj, y.obj));
      }
    }
  }
  std::set<std::string> distinct;
  for (const auto& x : a) distinct.insert(genome_text(x.genome));
  EXPECT_EQ(distinct.size(), a.size());  // duplicates are drawn again
  const SearchProblem hp2 = small_problem();
  const auto b = search(hp2, 4);
  ASSERT_EQ(b.size(), a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].genome, b[i].genome);
    EXPECT_EQ(a[i].obj, b[i].obj);
  }
}

TEST(NasSearch, InfeasibleIsDominatedByEveryFeasible) {
  HwObjectives bad;
  HwObjectives good;
  good.ok = true;
  good.cycles = 1LL << 40;
  good.onchip_bytes = 1LL << 40;
  good.energy_mj = 1e6;
  EXPECT_TRUE(dominates(hardware_vector(good), hardware_vector(bad)));
  EXPECT_FALSE(dominates(hardware_vector(bad), hardware_vector(bad)));
}

}  // namespace
}  // namespace capsgen::nas

namespace capsgen::nas {
namespace {

// With an accuracy proxy the error comes first, the proxy runs once per distinct network the preset
// runs, and its accuracy is what the evaluation and the objective carry.
TEST(NasSearch, AccuracyProxyIsTheFirstObjectiveAndRunsOncePerNetwork) {
  SearchProblem hp = small_problem();
  std::map<std::uint64_t, int> calls;
  hp.accuracy = [&calls](const Genome& g, const std::string& yaml) {
    ++calls[genome_hash(g)];
    EXPECT_NE(yaml.find("name: " + network_name(g)), std::string::npos);
    // A made-up score that favours wide first convolutions: a trade-off with the hardware objectives.
    return 0.5 + 0.4 * g.layers.front().channels / 32.0;
  };
  EXPECT_EQ(objective_names(hp), (std::vector<std::string>{"error", "cycles", "onchip_bytes", "energy_mj"}));
  const auto pop = search(hp, 7);
  for (const auto& [h, n] : calls) EXPECT_EQ(n, 1) << h;
  ASSERT_EQ(calls.size(), hp.evaluated->size());  // every network of this space runs on the preset
  for (const Evaluation* e : in_order(hp)) {
    ASSERT_TRUE(e->accuracy.has_value());
    ASSERT_EQ(e->obj.size(), 4u);
    EXPECT_DOUBLE_EQ(e->obj[0], 1.0 - *e->accuracy);
    EXPECT_EQ(e->obj[1], double(e->hw.cycles));
  }
  // The proxy's trade-off shows in the front: it holds a network wider than the narrowest choice.
  int widest = 0;
  for (const auto& x : pop)
    if (x.rank == 0) widest = std::max(widest, x.genome.layers.front().channels);
  EXPECT_GT(widest, 8);
}

TEST(NasSearch, InfeasibleWithAccuracyIsInfeasibleInEveryObjective) {
  SearchProblem hp = small_problem();
  hp.accuracy = [](const Genome&, const std::string&) { return 1.0; };
  HwObjectives good;
  good.ok = true;
  EXPECT_EQ(search_vector(hp, HwObjectives{}, std::nullopt),
            (Objectives{kInfeasible, kInfeasible, kInfeasible, kInfeasible}));
  EXPECT_EQ(search_vector(hp, HwObjectives{}, 0.99).front(), kInfeasible);  // no accuracy rescues it
  EXPECT_TRUE(dominates(search_vector(hp, good, 0.1), search_vector(hp, HwObjectives{}, std::nullopt)));
}

}  // namespace
}  // namespace capsgen::nas
