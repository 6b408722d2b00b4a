// capsgen dse routing: PIM-CapsNet's workload distribution of dynamic routing over HMC vaults
// (gen/pim/routing_split.hpp, docs/pim-capsnet.md section 2): for each routing shape and PE clock,
// E, M, alpha E + beta M and S of the batch (B), low-level (L) and high-level (H) splits, and the
// split with the largest S. With --config, the same model on the preset's array (its columns as the
// vaults) beside the routing as capsgen compiles it, in the RTL's cycles.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "compiler/compiler.hpp"
#include "core/atomic_file.hpp"
#include "core/input_error.hpp"
#include "core/parse_number.hpp"
#include "golden/shared_routing.hpp"
#include "golden/workload.hpp"
#include "model/network.hpp"
#include "pim/routing_split.hpp"

namespace capsgen::cli {
namespace {

const char* kWho = "capsgen dse routing";
// --batch with --config when none is given: a batch the array's compiled routing is measured at.
constexpr int kArrayBatch = 16;

std::vector<double> parse_frequencies(const std::string& list) {
  std::vector<double> out;
  for (const std::string& item : split_list(list)) {
    const std::optional<double> f = parse_finite_real(item);
    if (!f || *f <= 0 || *f > 1e5)
      throw InputError(kWho, 0, 0, "--freq", fmt::format("'{}' is not a PE clock in MHz (0 < f <= 100000)", item));
    out.push_back(*f);
  }
  return out;
}

// The routing shape of a network's last class-capsule layer, at a batch size.
pim::RoutingShape shape_of_network(const std::string& path, int batch) {
  const Network net = load_network(path);
  const Layer* caps = nullptr;
  for (const Layer& l : net.layers)
    if (l.kind == LayerKind::ClassCaps) caps = &l;
  if (!caps)
    throw InputError(path, 0, 0, "layers", "no class_caps layer: dse routing needs a dynamic-routing layer");
  pim::RoutingShape r;
  r.name = net.name;
  r.batch = batch;
  r.l_caps = caps->in.count;
  r.h_caps = caps->num_capsules;
  r.iterations = caps->routing_iterations;
  r.l_dim = caps->in.dim;
  r.h_dim = caps->capsule_dim;
  return r;
}

std::string split_cell(const pim::SplitCost& c) { return fmt::format("{:.3f}", c.seconds * 1e3); }

std::string table_markdown(const std::vector<pim::RoutingShape>& shapes, const std::vector<double>& freqs,
                           const pim::Device& base) {
  std::string md = fmt::format(
      "# Routing workload distribution (PIM-CapsNet, docs/pim-capsnet.md section 2)\n\n"
      "{} vaults, {} PEs per vault, {} GB/s per vault link, {}-byte values, {}-byte packets. Per clock: "
      "alpha E + beta M in ms of the B / L / H splits, and the split with the largest S = 1 / (alpha E + beta M).\n\n"
      "| network | N_B | N_L | N_H | C_L | C_H | I |",
      base.vaults, base.pes_per_vault, base.link_gbs, base.value_bytes, base.packet_bytes);
  for (const double f : freqs) md += fmt::format(" {} MHz: B / L / H ms | choice |", f);
  md += "\n|---|---:|---:|---:|---:|---:|---:|";
  for (std::size_t k = 0; k < freqs.size(); ++k) md += "---|---|";
  md += "\n";
  for (const pim::RoutingShape& r : shapes) {
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} |", r.name, r.batch, r.l_caps, r.h_caps, r.l_dim, r.h_dim,
                      r.iterations);
    for (const double f : freqs) {
      pim::Device d = base;
      d.freq_mhz = f;
      const pim::Choice c = pim::choose(r, d);
      md += fmt::format(" {} / {} / {} | **{}** |", split_cell(c.costs[0]), split_cell(c.costs[1]),
                        split_cell(c.costs[2]), pim::to_string(c.best));
    }
    md += "\n";
  }
  return md;
}

nlohmann::ordered_json results_json(const std::vector<pim::RoutingShape>& shapes, const std::vector<double>& freqs,
                                    const pim::Device& base) {
  nlohmann::ordered_json j;
  j["exploration"] = "routing";
  j["device"] = {{"vaults", base.vaults},         {"pes_per_vault", base.pes_per_vault},
                 {"link_gbs", base.link_gbs},     {"value_bytes", base.value_bytes},
                 {"packet_bytes", base.packet_bytes}};
  j["results"] = nlohmann::ordered_json::array();
  for (const pim::RoutingShape& r : shapes)
    for (const double f : freqs) {
      pim::Device d = base;
      d.freq_mhz = f;
      const pim::Choice c = pim::choose(r, d);
      nlohmann::ordered_json row = {{"network", r.name}, {"batch", r.batch},       {"l_caps", r.l_caps},
                                    {"h_caps", r.h_caps}, {"l_dim", r.l_dim},      {"h_dim", r.h_dim},
                                    {"iterations", r.iterations}, {"freq_mhz", f}, {"choice", pim::to_string(c.best)}};
      for (const pim::SplitCost& s : c.costs)
        row["splits"][pim::to_string(s.split)] = {
            {"e_ops", s.e_ops}, {"m_bytes", s.m_bytes}, {"seconds", s.seconds}, {"score", s.score}};
      j["results"].push_back(row);
    }
  return j;
}

// The class-capsule layer's work as capsgen compiles it, per kind of step, in the engine's cycles
// (the compiler's cycle model, equal to the RTL's per descriptor).
struct CompiledRouting {
  struct Step {
    std::string kind, columns;  // what the step is; what the array's columns hold in it
    long long cycles = 0, macs = 0;
  };
  std::vector<Step> steps;  // predictions, sums, updates, activation passes
  long long cycles() const {
    long long n = 0;
    for (const Step& s : steps) n += s.cycles;
    return n;
  }
};

// What the array's columns hold in a Gemm of step `kind` (0 predictions, 1 sums, 2 updates) of a
// class-capsule layer of J capsules of D atoms routing K inputs, read from the Gemm's output columns.
std::string columns_hold(std::size_t kind, const isa::Gemm& g, int J, int D, int K) {
  if (kind == 0)
    return g.n_total == J * D ? "H x C_H: an output atom each (W stationary)"
           : K > 1            ? "B: an input each"
                              : fmt::format("H x C_H: {} output atoms (rows of W side by side)", g.n_total);
  if (kind == 1) return K > 1 && g.n_total == D * K ? "C_H x B: an atom of an input each" : "C_H: an atom each";
  return "H: a class each";
}

CompiledRouting compiled_routing(const Workload& w, int batch) {
  const isa::Program prog = compile_program(w.cfg, w.net, w.qm, {batch});
  const Layer& caps = w.net.layers.back();
  const std::string layer = caps.name + "/";
  CompiledRouting r;
  r.steps = {{"predictions", ""},
             {"sums s_j", ""},
             {"updates b_ij", ""},
             {"softmax, squash, norms, fill", "one activation unit"}};
  for (const isa::Instr& in : prog.instrs) {
    const std::string& name = isa::instr_name(in);
    if (name.rfind(layer, 0) != 0) continue;
    const OpStats s = instr_stats(w.cfg, in);
    const std::size_t kind = name.find("/predict") != std::string::npos  ? 0
                             : name.find(".sum") != std::string::npos    ? 1
                             : name.find(".update") != std::string::npos ? 2
                                                                         : 3;
    if (const auto* g = std::get_if<isa::Gemm>(&in); g && r.steps[kind].columns.empty())
      r.steps[kind].columns = columns_hold(kind, *g, caps.num_capsules, caps.capsule_dim, batch);
    r.steps[kind].cycles += s.cycles;
    r.steps[kind].macs += s.useful_macs;
  }
  return r;
}

// --config: the model on the preset's array beside the compiled routing of one batch (Markdown), and
// the same as JSON.
std::string array_markdown(const Workload& w, const pim::RoutingShape& shape, const pim::Device& d,
                           const pim::Choice& choice, const CompiledRouting& per_input, const CompiledRouting& shared,
                           nlohmann::ordered_json& j) {
  const AccelConfig& cfg = w.cfg;
  const double f = cfg.clock.target_mhz * 1e6;
  std::string md = fmt::format(
      "\n## On {}'s array ({}x{} at {} MHz)\n\n"
      "The model with the array's {} columns as the vaults ({} operations per column per cycle, exchanges "
      "through the {}-bit output writer at one code per cycle), in cycles at the preset's clock:\n\n"
      "| split | E (operations of the busiest column) | M (bytes between columns) | alpha E + beta M (cycles) |\n"
      "|---|---:|---:|---:|\n",
      cfg.name, cfg.array.rows, cfg.array.cols, cfg.clock.target_mhz, d.vaults, d.pes_per_vault, cfg.widths.act);
  j["array"] = {{"preset", cfg.name},     {"rows", cfg.array.rows},
                {"cols", cfg.array.cols}, {"clock_mhz", cfg.clock.target_mhz},
                {"batch", shape.batch},   {"choice", pim::to_string(choice.best)}};
  for (const pim::SplitCost& c : choice.costs) {
    md += fmt::format("| {}{} | {:.0f} | {:.0f} | {:.0f} |\n", pim::to_string(c.split),
                      c.split == choice.best ? " (largest S)" : "", c.e_ops, c.m_bytes, c.seconds * f);
    j["array"]["splits"][pim::to_string(c.split)] = {
        {"e_ops", c.e_ops}, {"m_bytes", c.m_bytes}, {"cycles", c.seconds * f}};
  }
  md += fmt::format(
      "\nThe class-capsule layer as capsgen compiles it for {} input(s) (`capsgen compile`; the engine's cycles, equal "
      "to the "
      "RTL's per descriptor): {} programs of one input, and one program of the batch with shared routing logits "
      "(`--routing-batch {}`):\n\n"
      "| step | the columns hold (one input / batch) | cycles, {} x one input | cycles, shared batch | useful MACs | "
      "MAC bound |\n"
      "|---|---|---:|---:|---:|---:|\n",
      shape.batch, shape.batch, shape.batch, shape.batch);
  const long long pes = (long long)cfg.array.rows * cfg.array.cols;
  for (std::size_t k = 0; k < per_input.steps.size(); ++k) {
    const auto& a = per_input.steps[k];
    const auto& b = shared.steps[k];
    md += fmt::format("| {} | {} / {} | {} | {} | {} | {} |\n", a.kind, a.columns, b.columns, a.cycles * shape.batch,
                      b.cycles, b.macs, (b.macs + pes - 1) / pes);
    j["array"]["compiled"].push_back({{"step", a.kind},
                                      {"per_input_cycles", a.cycles * shape.batch},
                                      {"shared_cycles", b.cycles},
                                      {"useful_macs", b.macs}});
  }
  const double model = choice.costs[std::size_t(choice.best)].seconds * f;
  md += fmt::format(
      "| all | | {} | {} | | |\n\nThe model's best split ({}) takes {:.0f} cycles; the compiled shared routing {} "
      "({:.1f}x the model): the model counts operations and inter-column bytes only, while the array also waits for "
      "its operands (a row of W or a tile per cycle).\n",
      per_input.cycles() * shape.batch, shared.cycles(), pim::to_string(choice.best), model, shared.cycles(),
      double(shared.cycles()) / model);
  j["array"]["per_input_cycles"] = per_input.cycles() * shape.batch;
  j["array"]["shared_cycles"] = shared.cycles();
  j["array"]["model_cycles"] = model;
  return md;
}

}  // namespace

int dse_routing(const std::vector<std::string>& argv) {
  Args args("dse routing", "(--model NET.yaml | --table) [options]",
            "PIM-CapsNet's workload distribution of dynamic routing (docs/pim-capsnet.md section 2): the\n"
            "routing of a batch split over HMC vaults along the batch (B), the low-level capsules (L) or the\n"
            "high-level capsules (H); per split the busiest vault's operations E (Eq. 7, 9, 11), the bytes\n"
            "moved between vaults M (Eq. 8, 10, 12) and S = 1 / (alpha E + beta M); the largest S wins.\n"
            "--model takes the shape of the network's last class_caps layer; --table runs Table 1's twelve.\n"
            "With --config, also the model on the preset's array (its columns as the vaults) beside the\n"
            "class-capsule layer as capsgen compiles it for --batch inputs, per input and with shared logits.");
  args.option("model", "FILE", "network description with a class_caps layer (models/*.yaml)")
      .option("config", "FILE", "with --model: an accelerator preset whose array the model also runs on")
      .flag("table", "the paper's Table 1 benchmarks (Caps-MN1 .. Caps-SV3)")
      .option("batch", "N",
              fmt::format("batch size N_B with --model (with --config at most {}, default {})", kMaxRoutingBatch,
                          kArrayBatch),
              "100")
      .option("freq", "LIST", "PE clocks in MHz", "312.5,625,937.5")
      .option("vaults", "N", "vaults (HMC Gen3: 32)", "32")
      .option("pes", "N", "PEs per vault", "16")
      .option("link-gbs", "X", "GB/s of one vault's link (512 GB/s shared by 32 vaults)", "16")
      .option("report", "FILE", "also write the Markdown table to FILE")
      .option("json", "FILE", "write the results (every split's E, M, time and S) as JSON");
  if (!args.parse(argv)) {
    fmt::print("{}", args.help());
    return 0;
  }
  if (!args.positional().empty()) throw InputError(kWho, 0, 0, args.positional().front(), "unexpected argument");
  const bool table = args.has("table");
  if (table == args.has("model")) throw InputError(kWho, 0, 0, "--model/--table", "give exactly one of them");
  if (table && args.has("batch"))
    throw InputError(kWho, 0, 0, "--batch", "Table 1 gives each benchmark's batch; --batch goes with --model");

  pim::Device device = pim::hmc_gen3();
  device.vaults = int(args.get_int("vaults", 1, 1 << 16));
  device.pes_per_vault = int(args.get_int("pes", 1, 1 << 16));
  const std::optional<double> link = parse_finite_real(args.get("link-gbs"));
  if (!link || *link <= 0) throw InputError(kWho, 0, 0, "--link-gbs", "expected a bandwidth in GB/s above 0");
  device.link_gbs = *link;
  const std::vector<double> freqs = parse_frequencies(args.get("freq"));

  std::vector<pim::RoutingShape> shapes;
  if (table) shapes = pim::table1();
  else
    shapes.push_back(shape_of_network(args.get("model"), args.get_opt("config") && !args.has("batch")
                                                             ? kArrayBatch
                                                             : int(args.get_int("batch", 1, 1 << 20))));

  std::string md = table_markdown(shapes, freqs, device);
  nlohmann::ordered_json j = results_json(shapes, freqs, device);
  if (auto config = args.get_opt("config")) {
    if (table) throw InputError(kWho, 0, 0, "--config", "goes with --model");
    if (shapes[0].batch > kMaxRoutingBatch)
      throw InputError(kWho, 0, 0, "--batch",
                       fmt::format("{} inputs: with --config at most {} (compile --routing-batch)", shapes[0].batch,
                                   kMaxRoutingBatch));
    WorkloadSpec spec;
    spec.config_path = *config;
    spec.model_path = args.get("model");
    const Workload w = prepare_workload(spec);
    shared_routing_layer(w.net);  // InputError unless the network ends with its class-capsule layer
    const pim::Device d =
        pim::array_device(w.cfg.array.rows, w.cfg.array.cols, w.cfg.widths.act, w.cfg.clock.target_mhz);
    md += array_markdown(w, shapes[0], d, pim::choose(shapes[0], d), compiled_routing(w, 1),
                         compiled_routing(w, shapes[0].batch), j);
  }
  fmt::print("{}", md);
  if (auto path = args.get_opt("report")) write_file_atomic(*path, md);
  if (auto path = args.get_opt("json")) write_file_atomic(*path, j.dump(2) + "\n");
  return 0;
}

}  // namespace capsgen::cli
