// capsgen dse nas: NASCaps' hardware-aware network search (gen/nas, docs/nas.md): NSGA-II over
// CapsNet- and DeepCaps-like networks with the validation error of a short training run
// (scripts/train_capsnet.py) and the preset's cycles, on-chip memory and on-chip energy as objectives.
//
// The search is deterministic for its seed, so a stopped search resumes by running the same
// command again: it replays, takes every network trained before from OUT/train/, and goes on. A
// larger --generations extends a finished search the same way.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <sys/wait.h>
#include <vector>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "core/shell.hpp"
#include "config/yaml_util.hpp"
#include "core/atomic_file.hpp"
#include "core/input_error.hpp"
#include "core/parse_number.hpp"
#include "core/version.hpp"
#include "memory/svg.hpp"
#include "memory/sram_model.hpp"
#include "nas/search.hpp"
#include "nas/space_file.hpp"
#include "synth/datapath_energy.hpp"

namespace capsgen::cli {
namespace {

namespace fs = std::filesystem;
using nas::Evaluation;
using nas::Genome;

const char* kWho = "capsgen dse nas";

// A training run that did not produce an accuracy (the trainer failed or was interrupted).
struct TrainFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The accuracy proxy: scripts/train_capsnet.py for a few epochs on a fixed subset of the training
// split, scored on held-out training images (validation); the test split's accuracy is reported, never
// used to select.
struct TrainProxy {
  std::string python, trainer, dataset;
  int epochs = 1, train_images = 2000, val_images = 500, test_images = 500, batch = 8, seed = 1, threads = 1;
  fs::path dir;         // OUT/train: <hash>.npz (weights), <hash>.json (the trainer's log), <hash>.log
  fs::path models_dir;  // OUT/networks: <hash>.yaml
  int trained = 0, reused = 0;
  double train_seconds = 0;
};

// The validation and test accuracies of a finished run of `epochs` epochs that left its log in `log`.
struct ProxyResult {
  double validation = 0, test = 0;
};
std::optional<ProxyResult> finished_run(const fs::path& log, int epochs) {
  if (!fs::exists(log)) return std::nullopt;
  const nlohmann::json j = nlohmann::json::parse(slurp(log), nullptr, false);
  if (j.is_discarded() || !j.contains("epochs_done") || j["epochs_done"] != epochs || !j.contains("val_acc") ||
      !j["val_acc"].is_number() || !j["test_acc"].is_number())
    return std::nullopt;
  return ProxyResult{j["val_acc"].get<double>(), j["test_acc"].get<double>()};
}

double train_network(TrainProxy& p, const Genome& g, const std::string& yaml) {
  const std::string key = nas::genome_key(g);
  const fs::path model = p.models_dir / (key + ".yaml"), log = p.dir / (key + ".json"), out = p.dir / (key + ".log");
  write_file_atomic(model.string(), yaml);
  if (auto run = finished_run(log, p.epochs)) {
    ++p.reused;
    return run->validation;
  }
  const std::string cmd =
      fmt::format("{} {} --model {} --dataset {} --epochs {} --limit {} --validation {} --test-limit {} --batch {} "
                  "--seed {} --threads {} --out {} --log {} > {} 2>&1",
                  quote(p.python), quote(p.trainer), quote(model.string()), p.dataset, p.epochs, p.train_images,
                  p.val_images, p.test_images, p.batch, p.seed, p.threads, quote((p.dir / (key + ".npz")).string()), quote(log.string()),
                  quote(out.string()));
  const auto t0 = std::chrono::steady_clock::now();
  const int status = std::system(cmd.c_str());
  p.train_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw TrainFailure(fmt::format("training {} ({}) failed{}: see {}", key, nas::genome_text(g),
                                   WIFSIGNALED(status) ? fmt::format(" (signal {})", WTERMSIG(status))
                                   : WIFEXITED(status) ? fmt::format(" (exit {})", WEXITSTATUS(status))
                                                       : std::string(),
                                   out.string()));
  const std::optional<ProxyResult> run = finished_run(log, p.epochs);
  if (!run) throw TrainFailure(fmt::format("training {} left no finished log {}", key, log.string()));
  ++p.trained;
  return run->validation;
}

// What decides every evaluation: a search in OUT resumes only with the same.
nlohmann::ordered_json evaluation_settings(const Args& args, const nas::SearchProblem& prob, bool train,
                                           const TrainProxy& p) {
  nlohmann::ordered_json j;
  j["config"] = yaml::read_file(args.get("config"));
  j["tech"] = yaml::read_file(args.get("tech"));
  j["energy"] = prob.full_energy ? "full" : "onchip";
  j["datapath_pj_per_mac"] = prob.datapath_pj_per_mac;
  const nas::SearchSpace& space = prob.space;
  j["space"] = nas::search_space_yaml(space);
  j["mutation"] = args.get("mutation");
  j["accuracy"] = train ? "train" : "none";
  if (train)
    j["proxy"] = {{"dataset", p.dataset},           {"epochs", p.epochs},           {"train_images", p.train_images},
                  {"val_images", p.val_images},     {"test_images", p.test_images},   {"batch", p.batch},             {"seed", p.seed},               {"trainer", slurp(p.trainer)}};
  return j;
}

// The first field where `now` differs from `before` ("proxy.epochs"), or "" when they are equal.
std::string first_difference(const nlohmann::ordered_json& before, const nlohmann::ordered_json& now,
                             const std::string& path) {
  if (before.is_object() && now.is_object()) {
    for (const auto& [field, value] : now.items()) {
      const std::string sub = path.empty() ? field : path + "." + field;
      if (!before.contains(field)) return sub;
      if (std::string d = first_difference(before[field], value, sub); !d.empty()) return d;
    }
    return before.size() == now.size() ? "" : path;
  }
  return before == now ? "" : path;
}

// Refuses an OUT that holds a search with other evaluation settings.
void check_resumable(const fs::path& settings_file, const nlohmann::ordered_json& settings) {
  if (!fs::exists(settings_file)) return;
  const nlohmann::ordered_json old = nlohmann::ordered_json::parse(slurp(settings_file), nullptr, false);
  if (old.is_discarded() || !old.contains("evaluation"))
    throw InputError(settings_file.string(), 0, 0, "evaluation", "not a search settings file; give another --out");
  if (const std::string d = first_difference(old["evaluation"], settings, ""); !d.empty())
    throw InputError(settings_file.string(), 0, 0, "evaluation." + d,
                     "the search in this directory was run with another value; give the same one to resume, or "
                     "another --out");
}

std::string csv_header() {
  return "order,hash,genome,feasible,val_accuracy,test_accuracy,cycles,latency_ms,engine_cycles,onchip_bytes,"
         "energy_mj,dram_energy_mj,datapath_energy_mj,total_energy_mj,macs,param_bytes,streamed_cycles,dram_bytes,"
         "chip_cycles,in_front,network,weights,why\n";
}

// One network; `test` is the proxy's test accuracy (when it was trained).
std::string csv_row(const Evaluation& e, bool in_front, std::optional<double> test) {
  const nas::HwObjectives& h = e.hw;
  std::string why = h.why;
  std::replace(why.begin(), why.end(), '"', '\'');
  std::replace(why.begin(), why.end(), '\n', ' ');
  const std::string key = nas::genome_key(e.genome);
  const auto pct = [](std::optional<double> a) { return a ? fmt::format("{:.4f}", *a) : std::string(); };
  return fmt::format("{},{},{},{},{},{},{},{:.6f},{},{},{:.6f},{:.6f},{:.6f},{:.6f},{},{},{},{},{},{},networks/{}.yaml,{},\"{}\"\n",
                     e.order, key, nas::genome_text(e.genome), h.ok ? 1 : 0, pct(e.accuracy), pct(test), h.cycles,
                     h.latency_ms, h.engine_cycles, h.onchip_bytes, h.energy_mj, h.dram_energy_mj, h.datapath_energy_mj,
                     h.total_energy_mj, h.macs, h.param_bytes,
                     h.streamed_cycles, h.dram_bytes, h.chip_cycles, in_front ? 1 : 0, key,
                     test ? fmt::format("train/{}.npz", key) : "", why);
}

// The first front of every feasible network evaluated, on the search's objectives.
std::vector<const Evaluation*> pareto_front(const std::vector<const Evaluation*>& all) {
  std::vector<nas::Objectives> f;
  for (const Evaluation* e : all) f.push_back(e->obj);
  std::vector<const Evaluation*> front;
  if (all.empty()) return front;
  const std::vector<std::vector<int>> fronts = nas::non_dominated_sort(f);
  for (int i : fronts.front())
    if (all[std::size_t(i)]->hw.ok) front.push_back(all[std::size_t(i)]);
  return front;
}

struct Axis {
  std::string name, label;
  double (*value)(const Evaluation&);
};

const Axis kLatency{"latency", "latency (ms)", [](const Evaluation& e) { return e.hw.latency_ms; }};
const Axis kEnergy{"energy", "on-chip energy (mJ)", [](const Evaluation& e) { return e.hw.energy_mj; }};
const Axis kTotalEnergy{"energy", "energy: SRAM + DRAM + datapath (mJ)", [](const Evaluation& e) { return e.hw.total_energy_mj; }};
const Axis kMemory{"memory", "on-chip memory (KiB)", [](const Evaluation& e) { return e.hw.onchip_bytes / 1024.0; }};
const Axis kAccuracy{"accuracy", "proxy validation accuracy (%)", [](const Evaluation& e) { return 100 * e.accuracy.value_or(0); }};

// One 2-D projection: every feasible network, the search's front highlighted, and the front of the
// projection itself (x minimized; y maximized when it is the accuracy, else minimized) as a line.
std::string projection_svg(const std::vector<const Evaluation*>& all, const std::vector<const Evaluation*>& front,
                           const Axis& x, const Axis& y) {
  const bool y_up = &y == &kAccuracy;
  std::vector<memory::ScatterPoint> pts, line;
  for (const Evaluation* e : all)
    if (e->hw.ok) pts.push_back({x.value(*e), y.value(*e), 0});
  for (const Evaluation* e : front) pts.push_back({x.value(*e), y.value(*e), 1});
  std::vector<memory::ScatterPoint> sorted = pts;
  std::sort(sorted.begin(), sorted.end(), [&](const auto& a, const auto& b) {
    return a.x != b.x ? a.x < b.x : (y_up ? a.y > b.y : a.y < b.y);
  });
  for (const auto& p : sorted)
    if (line.empty() || (y_up ? p.y > line.back().y : p.y < line.back().y)) line.push_back(p);
  return memory::svg_scatter(fmt::format("NASCaps search: {} against {}", y.name, x.name), x.label, y.label, pts,
                             {"evaluated", "Pareto front (all objectives)"}, line);
}

void write_results(const fs::path& out, const nas::SearchProblem& prob, const TrainProxy* proxy) {
  const std::vector<const Evaluation*> all = nas::in_order(prob);
  const std::vector<const Evaluation*> front = pareto_front(all);
  std::string evaluated = csv_header(), front_csv = csv_header();
  for (const Evaluation* e : all) {
    const bool in_front = std::find(front.begin(), front.end(), e) != front.end();
    std::optional<double> test;
    if (proxy && e->accuracy)
      if (auto run = finished_run(proxy->dir / (nas::genome_key(e->genome) + ".json"), proxy->epochs)) test = run->test;
    evaluated += csv_row(*e, in_front, test);
    if (in_front) front_csv += csv_row(*e, true, test);
    write_file_atomic((out / "networks" / (nas::genome_key(e->genome) + ".yaml")).string(),
                      nas::to_yaml(e->genome, prob.space, nas::network_name(e->genome)));
  }
  write_file_atomic((out / "evaluated.csv").string(), evaluated);
  write_file_atomic((out / "front.csv").string(), front_csv);
  const Axis* energy = prob.full_energy ? &kTotalEnergy : &kEnergy;
  const std::vector<std::pair<const Axis*, const Axis*>> views =
      proxy ? std::vector<std::pair<const Axis*, const Axis*>>{{&kLatency, &kAccuracy}, {energy, &kAccuracy}, {&kMemory, &kAccuracy}}
            : std::vector<std::pair<const Axis*, const Axis*>>{{&kLatency, energy}, {&kLatency, &kMemory}};
  for (const auto& [x, y] : views)
    write_file_atomic((out / fmt::format("front-{}-{}.svg", y->name, x->name)).string(),
                      projection_svg(all, front, *x, *y));
}

TrainProxy proxy_from(const Args& args, const fs::path& out) {
  TrainProxy p;
  p.python = args.get("python");
  p.trainer = args.get("trainer");
  p.dataset = args.get("dataset");
  if (p.dataset != "mnist" && p.dataset != "fashion")
    throw InputError(kWho, 0, 0, "--dataset", fmt::format("'{}' is not mnist or fashion", p.dataset));
  if (!fs::exists(p.trainer)) throw InputError(p.trainer, 0, 0, "--trainer", "no such file");
  p.epochs = int(args.get_int("epochs", 1, 100));
  p.train_images = int(args.get_int("train-images", 10, 1 << 20));
  p.val_images = int(args.get_int("val-images", 10, 1 << 20));
  p.test_images = int(args.get_int("test-images", 10, 1 << 20));
  p.batch = int(args.get_int("train-batch", 1, 4096));
  p.seed = int(args.get_int("train-seed", 0, 1 << 30));
  p.threads = int(args.get_int("train-threads", 1, 256));
  p.dir = out / "train";
  p.models_dir = out / "networks";
  return p;
}

Args make_args() {
  Args args("dse nas", "--out DIR [options]",
            "NASCaps' hardware-aware network search (docs/nas.md): NSGA-II over the CapsNet-like space (conv+,\n"
            "primary capsules or DeepCaps' CapsCells, class capsules with dynamic routing) with four objectives,\n"
            "all minimized: the validation error after a short training run (scripts/train_capsnet.py,\n"
            "PyTorch; validation images held out of the training split), and the preset's\n"
            "cycles, on-chip memory and on-chip energy from the compiler and the memory model. Writes\n"
            "OUT/evaluated.csv (every network), OUT/front.csv, 2-D projections OUT/front-*.svg, every\n"
            "network's description OUT/networks/<hash>.yaml and the trained weights OUT/train/<hash>.npz.\n"
            "Running the same command again resumes a stopped search without training anything twice.");
  args.option("out", "DIR", "output directory (created; a search already in it is resumed)")
      .option("config", "FILE", "accelerator preset", "configs/capsacc-16x16.yaml")
      .option("tech", "FILE", "SRAM technology of the energy objective", "configs/tech/sram-32nm.yaml")
      .option("energy", "MODE",
              "the energy objective: 'onchip' (the SRAM's) or 'full' (SRAM, DRAM from the chip's timing model, datapath)",
              "onchip")
      .option("datapath-energy", "FILE",
              "capsgen.datapath-energy/1 document whose energy per useful MAC is the datapath's (default: the stored one "
              "of the preset in bench/energy, else tiny-2x2's)")
      .option("space", "FILE", "search space (configs/nas/*.yaml); default: the paper's CapsNet-like space")
      .option("population", "N", "parents |P|", "10")
      .option("offspring", "N", "offspring per generation |Q|", "10")
      .option("generations", "N", "generations g", "20")
      .option("seed", "N", "seed of the search", "1")
      .option("mutation", "P", "mutation probability", "0.1")
      .option("accuracy", "MODE", "'train': the proxy's validation error is an objective; 'none': hardware objectives only",
              "train")
      .option("dataset", "NAME", "the proxy's data set: mnist or fashion", "mnist")
      .option("epochs", "N", "the proxy's training epochs", "1")
      .option("train-images", "N", "the proxy's training images (a fixed class-balanced subset)", "2000")
      .option("val-images", "N",
              "the proxy's validation images: held out of the training split, the accuracy objective", "500")
      .option("test-images", "N", "test images the proxy's accuracy is reported on (a fixed subset; never selects)",
              "500")
      .option("train-batch", "N",
              "the proxy's minibatch (small: a short run needs optimizer steps more than large batches)", "8")
      .option("train-seed", "N", "the proxy's seed (weights initialization and batch order)", "1")
      .option("train-threads", "N", "PyTorch threads per training run", "1")
      .option("python", "FILE", "the Python that runs the trainer (Debian's, with python3-torch)", "/usr/bin/python3")
      .option("trainer", "FILE", "the training script", CAPSGEN_SOURCE_DIR "/scripts/train_capsnet.py");
  return args;
}

}  // namespace

int dse_nas(const std::vector<std::string>& argv) {
  Args args = make_args();
  if (!args.parse(argv)) {
    fmt::print("{}", args.help());
    return 0;
  }
  if (!args.has("out")) throw InputError(kWho, 0, 0, "--out", "missing: the directory of the search");
  const fs::path out = args.get("out");
  const std::string mode = args.get("accuracy");
  if (mode != "train" && mode != "none")
    throw InputError(kWho, 0, 0, "--accuracy", fmt::format("'{}' is not train or none", mode));
  const bool train = mode == "train";

  nas::SearchProblem prob;
  if (auto s = args.get_opt("space")) prob.space = nas::load_search_space(*s);
  prob.cfg = load_accel_config(args.get("config"));
  prob.tech = memory::load_tech(args.get("tech"));
  const std::string energy = args.get("energy");
  if (energy != "onchip" && energy != "full")
    throw InputError(kWho, 0, 0, "--energy", fmt::format("'{}' is not onchip or full", energy));
  prob.full_energy = energy == "full";
  const std::optional<fs::path> datapath_file =
      args.get_opt("datapath-energy") ? std::optional<fs::path>(*args.get_opt("datapath-energy")) : std::nullopt;
  if (const auto per_mac = synth::datapath_per_mac(datapath_file, fs::path(CAPSGEN_SOURCE_DIR) / "bench" / "energy", prob.cfg.name))
    prob.datapath_pj_per_mac = per_mac->pj;
  else if (prob.full_energy)
    throw InputError(kWho, 0, 0, "--energy", "full: no datapath energy document for the preset; give --datapath-energy FILE");
  const std::optional<double> pm = parse_finite_real(args.get("mutation"));
  if (!pm || *pm < 0 || *pm > 1) throw InputError(kWho, 0, 0, "--mutation", "expected a probability in [0, 1]");
  prob.p_mutation = *pm;
  nas::Nsga2Options opt;
  opt.parents = int(args.get_int("population", 2, 10000));
  opt.offspring = int(args.get_int("offspring", 1, 10000));
  opt.generations = int(args.get_int("generations", 0, 100000));
  opt.seed = std::uint64_t(args.get_int("seed", 0, (1LL << 62)));

  TrainProxy proxy = proxy_from(args, out);
  const nas::SearchSpace& sp = prob.space;
  if (train && (sp.in_channels != 1 || sp.in_height != 28 || sp.in_width != 28 || sp.classes != 10))
    throw InputError(args.get_opt("space").value_or(kWho), 0, 0, "input",
                     fmt::format("the proxy trains on {} (1x28x28, 10 classes), the space's input is {}x{}x{} with {} "
                                 "classes; use --accuracy none",
                                 proxy.dataset, sp.in_channels, sp.in_height, sp.in_width, sp.classes));

  const nlohmann::ordered_json settings = evaluation_settings(args, prob, train, proxy);
  const fs::path settings_file = out / "search.json";
  check_resumable(settings_file, settings);
  fs::create_directories(out / "networks");
  if (train) {
    fs::create_directories(proxy.dir);
    prob.accuracy = [&proxy](const Genome& g, const std::string& yaml) { return train_network(proxy, g, yaml); };
  }

  nlohmann::ordered_json record;
  record["capsgen"] = kVersion;
  record["evaluation"] = settings;
  record["search"] = {{"population", opt.parents}, {"offspring", opt.offspring}, {"generations", opt.generations},
                      {"seed", opt.seed}, {"objectives", nas::objective_names(prob)}};
  record["progress"] = nlohmann::ordered_json::array();
  const auto t0 = std::chrono::steady_clock::now();
  const auto on_generation = [&](int g, const std::vector<nas::Individual<Genome>>& parents) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const long front = std::count_if(parents.begin(), parents.end(), [](const auto& x) { return x.rank == 0; });
    // Time left: the mean time of a generation so far (the initial population counts as one) times
    // the generations to go. Replayed generations of a resumed search are quick, so it runs low then.
    const double left = s / (g + 1) * (opt.generations - g);
    fmt::print("generation {}/{}: {} networks evaluated ({} trained now, {} trained before), {} parents in the first "
               "front, {:.0f} s, about {:.0f} s left\n",
               g, opt.generations, prob.evaluated->size(), proxy.trained, proxy.reused, front, s, left);
    std::fflush(stdout);
    record["progress"].push_back({{"generation", g}, {"evaluated", prob.evaluated->size()},
                                  {"trained", proxy.trained}, {"reused", proxy.reused}, {"seconds", s},
                                  {"train_seconds", proxy.train_seconds}});
    write_results(out, prob, train ? &proxy : nullptr);
    write_file_atomic(settings_file.string(), record.dump(1) + "\n");
  };
  try {
    nas::run_nsga2(nas::make_problem(prob), opt, on_generation);
  } catch (const TrainFailure& e) {
    write_results(out, prob, train ? &proxy : nullptr);
    fmt::print(stderr, "{}: error: {}\n", kWho, e.what());
    return 1;
  }
  const auto front = pareto_front(nas::in_order(prob));
  fmt::print("front: {} of {} networks (OUT/front.csv); wrote {}\n", front.size(), prob.evaluated->size(), out.string());
  return 0;
}

}  // namespace capsgen::cli
