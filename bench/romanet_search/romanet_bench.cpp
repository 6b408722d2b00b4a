// ROMANet search speed: wall time of Alg. 1 (over Alg. 2's schedules) and of the baseline's search,
// per network, best of --runs repetitions; optionally the DRAM simulation of both traces too.
// Prints and writes machine-readable JSON.
//   build/bench/romanet_bench [--models a.yaml,b.yaml] [--runs N] [--steps M,N,J] [--all-orders]
//                             [--simulate] [--json out.json]
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "core/split_list.hpp"
#include "core/version.hpp"
#include "model/network.hpp"
#include "romanet/evaluate.hpp"
#include "romanet/search.hpp"

using namespace capsgen;
using namespace capsgen::romanet;


int main(int argc, char** argv) {
  std::string models = "models/alexnet.yaml,models/vgg16.yaml,models/mobilenet.yaml,models/capsnet-mnist.yaml";
  std::string json_path;
  int runs = 3;
  int steps[3] = {1, 1, 1};
  bool all_orders = false, simulate = false;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      auto next = [&]() -> std::string {
        if (i + 1 >= argc) throw std::runtime_error("missing value for " + a);
        return argv[++i];
      };
      if (a == "--models") {
        models = next();
      } else if (a == "--runs") {
        runs = std::max(1, std::stoi(next()));
      } else if (a == "--steps") {
        const auto v = split_list(next());
        if (v.size() != 3) throw std::runtime_error("--steps takes M,N,J");
        for (int k = 0; k < 3; ++k) steps[k] = std::max(1, std::stoi(v[std::size_t(k)]));
      } else if (a == "--all-orders") {
        all_orders = true;
      } else if (a == "--simulate") {
        simulate = true;
      } else if (a == "--json") {
        json_path = next();
      } else {
        throw std::runtime_error("unknown option " + a);
      }
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "romanet_bench: {}\nusage: romanet_bench [--models LIST] [--runs N] [--steps M,N,J] "
                       "[--all-orders] [--simulate] [--json out.json]\n", e.what());
    return 2;
  }

  using clock = std::chrono::steady_clock;
  nlohmann::json out;
  out["bench"] = "romanet_search";
  out["version"] = kVersion;
  out["runs"] = runs;
  out["steps"] = {steps[0], steps[1], steps[2]};
  out["schedules"] = all_orders ? "all" : "alg2";
  out["hardware_threads"] = std::thread::hardware_concurrency();
  out["networks"] = nlohmann::json::array();
  for (const std::string& path : split_list(models)) {
    const Network net = load_network(path);
    const std::vector<LayerGeometry> layers = dram_layers(net);
    SearchOptions ro = romanet_options(layers, Buffers{}, ElementBytes{}, all_orders);
    SearchOptions bo = baseline_options(Buffers{}, ElementBytes{});
    for (SearchOptions* o : {&ro, &bo}) {
      o->step_m = steps[0];
      o->step_n = steps[1];
      o->step_j = steps[2];
    }
    double best_r = 1e300, best_b = 1e300;
    long long evaluated_r = 0, evaluated_b = 0, accesses_r = 0, accesses_b = 0;
    nlohmann::json per_layer = nlohmann::json::array();
    std::vector<double> layer_best(layers.size(), 1e300);
    for (int run = 0; run < runs; ++run) {
      evaluated_r = evaluated_b = accesses_r = accesses_b = 0;
      double total_r = 0;
      for (std::size_t k = 0; k < layers.size(); ++k) {
        const auto t0 = clock::now();
        const SearchResult r = search_layer(layers[k], ro);
        const double dt = std::chrono::duration<double>(clock::now() - t0).count();
        total_r += dt;
        layer_best[k] = std::min(layer_best[k], dt);
        evaluated_r += r.evaluated;
        accesses_r += r.counts.total();
      }
      const auto t1 = clock::now();
      for (const LayerGeometry& g : layers) {
        const SearchResult b = search_layer(g, bo);
        evaluated_b += b.evaluated;
        accesses_b += b.counts.total();
      }
      best_r = std::min(best_r, total_r);
      best_b = std::min(best_b, std::chrono::duration<double>(clock::now() - t1).count());
    }
    for (std::size_t k = 0; k < layers.size(); ++k)
      per_layer.push_back({{"layer", layers[k].name}, {"seconds", layer_best[k]}});
    nlohmann::json n = {{"network", net.name},
                        {"model", path},
                        {"layers", layers.size()},
                        {"schedules", ro.schedules.size()},
                        {"romanet_search_seconds", best_r},
                        {"romanet_points_evaluated", evaluated_r},
                        {"romanet_points_per_second", best_r > 0 ? double(evaluated_r) / best_r : 0.0},
                        {"baseline_search_seconds", best_b},
                        {"baseline_points_evaluated", evaluated_b},
                        {"romanet_accesses", accesses_r},
                        {"baseline_accesses", accesses_b},
                        {"romanet_layer_seconds", per_layer}};
    std::string sim;
    if (simulate) {
      EvalOptions opt;
      opt.step_m = steps[0];
      opt.step_n = steps[1];
      opt.step_j = steps[2];
      opt.all_orders = all_orders;
      const NetworkResult r = evaluate_network(net, opt);
      n["simulate_seconds"] = r.simulate_seconds;
      n["simulated_requests"] = r.totals[kRomanet].burst.stats.requests() + r.totals[kRomanet].nonburst.stats.requests() +
                                r.totals[kBaseline].burst.stats.requests() + r.totals[kBaseline].nonburst.stats.requests();
      sim = fmt::format(", simulation {:.2f} s", r.simulate_seconds);
    }
    fmt::print("{:<14} {:>2} layers: ROMANet search {:8.4f} s ({} points, {:.1f} M/s), baseline {:8.4f} s{}\n",
               net.name, layers.size(), best_r, evaluated_r, best_r > 0 ? double(evaluated_r) / best_r / 1e6 : 0.0,
               best_b, sim);
    out["networks"].push_back(std::move(n));
  }
  const std::string text = out.dump(2) + "\n";
  if (!json_path.empty()) {
    std::ofstream f(json_path);
    f << text;
    if (!f) {
      fmt::print(stderr, "romanet_bench: cannot write {}\n", json_path);
      return 1;
    }
  } else {
    fmt::print("{}", text);
  }
  return 0;
}
