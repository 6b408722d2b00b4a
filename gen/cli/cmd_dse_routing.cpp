// capsgen dse routing: PIM-CapsNet's workload distribution of dynamic routing over HMC vaults
// (gen/pim/routing_split.hpp, docs/pim-capsnet.md section 2): for each routing shape and PE clock,
// E, M, alpha E + beta M and S of the batch (B), low-level (L) and high-level (H) splits, and the
// split with the largest S.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "core/atomic_file.hpp"
#include "core/input_error.hpp"
#include "core/parse_number.hpp"
#include "model/network.hpp"
#include "pim/routing_split.hpp"

namespace capsgen::cli {
namespace {

const char* kWho = "capsgen dse routing";

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

}  // namespace

int dse_routing(const std::vector<std::string>& argv) {
  Args args("dse routing", "(--model NET.yaml | --table) [options]",
            "PIM-CapsNet's workload distribution of dynamic routing (docs/pim-capsnet.md section 2): the\n"
            "routing of a batch split over HMC vaults along the batch (B), the low-level capsules (L) or the\n"
            "high-level capsules (H); per split the busiest vault's operations E (Eq. 7, 9, 11), the bytes\n"
            "moved between vaults M (Eq. 8, 10, 12) and S = 1 / (alpha E + beta M); the largest S wins.\n"
            "--model takes the shape of the network's last class_caps layer; --table runs Table 1's twelve.");
  args.option("model", "FILE", "network description with a class_caps layer (models/*.yaml)")
      .flag("table", "the paper's Table 1 benchmarks (Caps-MN1 .. Caps-SV3)")
      .option("batch", "N", "batch size N_B with --model", "100")
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
  else shapes.push_back(shape_of_network(args.get("model"), int(args.get_int("batch", 1, 1 << 20))));

  const std::string md = table_markdown(shapes, freqs, device);
  fmt::print("{}", md);
  if (auto path = args.get_opt("report")) write_file_atomic(*path, md);
  if (auto path = args.get_opt("json")) write_file_atomic(*path, results_json(shapes, freqs, device).dump(2) + "\n");
  return 0;
}

}  // namespace capsgen::cli
