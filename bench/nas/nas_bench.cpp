// NASCaps hardware objectives (docs/nas.md): per network of --models, the objectives gen/nas computes
// on --config; with --search P,Q,G, a hardware-only NSGA-II search of the CapsNet-like space on a
// 28x28x1 input (no accuracy objective), its wall time and final front. Prints JSON.
//   build/bench/nas_bench [--config C.yaml] [--models a.yaml,b.yaml] [--tech T.yaml]
//                         [--datapath-energy D.json] [--search P,Q,G] [--seed S] [--json out.json]
// --datapath-energy: the datapath's energy per useful MAC (synth/datapath_energy.hpp; default: the
// stored document of the preset in bench/energy, else tiny-2x2's).
#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>

#include "core/split_list.hpp"
#include "config/accel_config.hpp"
#include "core/input_error.hpp"
#include "core/version.hpp"
#include "model/network.hpp"
#include "nas/search.hpp"
#include "synth/datapath_energy.hpp"

using namespace capsgen;
using namespace capsgen::nas;

namespace {

nlohmann::json to_json(const HwObjectives& o) {
  nlohmann::json j;
  j["ok"] = o.ok;
  if (!o.ok) {
    j["why"] = o.why;
    return j;
  }
  j["cycles"] = o.cycles;
  j["engine_cycles"] = o.engine_cycles;
  j["latency_ms"] = o.latency_ms;
  j["onchip_bytes"] = o.onchip_bytes;
  j["onchip_usage_bytes"] = o.onchip_usage_bytes;
  j["param_bytes"] = o.param_bytes;
  j["energy_mj"] = o.energy_mj;
  j["dram_energy_mj"] = o.dram_energy_mj;
  j["datapath_energy_mj"] = o.datapath_energy_mj;
  j["total_energy_mj"] = o.total_energy_mj;
  j["macs"] = o.macs;
  j["streamed_cycles"] = o.streamed_cycles;
  j["dram_bytes"] = o.dram_bytes;
  j["chip_cycles"] = o.chip_cycles;
  return j;
}

}  // namespace

int main(int argc, char** argv) {
  std::string config = "configs/capsacc-16x16.yaml", tech_path = "configs/tech/sram-32nm.yaml";
  std::string models = "models/capsnet-tiny.yaml,models/capsnet-small.yaml,models/capsnet-mnist.yaml", json_path;
  std::string datapath_path;
  int P = 0, Q = 0, G = 0;
  std::uint64_t seed = 1;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      auto next = [&]() -> std::string {
        if (i + 1 >= argc) throw std::runtime_error("missing value for " + a);
        return argv[++i];
      };
      if (a == "--config") config = next();
      else if (a == "--models") models = next();
      else if (a == "--tech") tech_path = next();
      else if (a == "--datapath-energy") datapath_path = next();
      else if (a == "--json") json_path = next();
      else if (a == "--seed") seed = std::stoull(next());
      else if (a == "--search") {
        const auto v = split_list(next());
        if (v.size() != 3) throw std::runtime_error("--search takes P,Q,G");
        P = std::stoi(v[0]), Q = std::stoi(v[1]), G = std::stoi(v[2]);
      } else throw std::runtime_error("unknown argument " + a);
    }
    const AccelConfig cfg = load_accel_config(config);
    const memory::TechParams tech = memory::load_tech(tech_path);
    const auto per_mac = synth::datapath_per_mac(
        datapath_path.empty() ? std::nullopt : std::optional<std::filesystem::path>(datapath_path),
        std::filesystem::path(CAPSGEN_SOURCE_DIR) / "bench" / "energy", cfg.name);
    const double pj_per_mac = per_mac ? per_mac->pj : -1;
    nlohmann::json out;
    out["capsgen"] = capsgen::kVersion;
    out["config"] = config;
    out["tech"] = tech_path;
    out["datapath_pj_per_mac"] = pj_per_mac;
    out["datapath_source"] = per_mac ? per_mac->source + " (" + per_mac->file.string() + ")" : "none";
    for (const std::string& m : split_list(models)) {
      if (m.empty()) continue;
      const Network net = load_network(m);
      const auto t0 = std::chrono::steady_clock::now();
      nlohmann::json j = to_json(hardware_objectives(cfg, net, tech, pj_per_mac));
      j["model"] = m;
      j["eval_seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      out["networks"].push_back(j);
    }
    if (P > 0) {
      SearchProblem hp;
      hp.cfg = cfg;
      hp.tech = tech;
      Nsga2Options o;
      o.parents = P, o.offspring = Q, o.generations = G, o.seed = seed;
      const auto t0 = std::chrono::steady_clock::now();
      const auto pop = run_nsga2(make_problem(hp), o, [&](int g, const std::vector<Individual<Genome>>&) {
        fmt::print(stderr, "generation {} / {}: {} networks compiled\n", g, G, hp.evaluated->size());
      });
      nlohmann::json s;
      s["parents"] = P, s["offspring"] = Q, s["generations"] = G, s["seed"] = seed;
      s["compiled"] = hp.evaluated->size();
      s["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      for (const auto& ind : pop) {
        if (ind.rank != 0) continue;
        nlohmann::json f;
        f["genome"] = genome_text(ind.genome);
        f["cycles"] = ind.obj[0], f["onchip_bytes"] = ind.obj[1], f["energy_mj"] = ind.obj[2];
        s["front"].push_back(f);
      }
      out["search"] = s;
    }
    const std::string text = out.dump(2);
    fmt::print("{}\n", text);
    if (!json_path.empty()) std::ofstream(json_path) << text << "\n";
  } catch (const InputError& e) {
    fmt::print(stderr, "{}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "nas_bench: {}\n", e.what());
    return 2;
  }
  return 0;
}
