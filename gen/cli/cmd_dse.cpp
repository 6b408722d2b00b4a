// capsgen dse: design-space explorations. `capsgen dse dram`: ROMANet's DRAM-aware layer partitioning
// and scheduling, DRAM data mapping and DRAM model (gen/romanet, gen/dram, docs/romanet.md).
#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "core/atomic_file.hpp"
#include "core/input_error.hpp"
#include "dram/dram_spec.hpp"
#include "model/network.hpp"
#include "romanet/evaluate.hpp"

namespace capsgen::cli {
namespace {

const char* kWho = "capsgen dse dram";

// "65536", "64K", "64KB", "1M", "1MB".
long long parse_size(const std::string& text, const std::string& field) {
  std::string s = text;
  long long mult = 1;
  if (s.size() > 1 && (s.back() == 'B' || s.back() == 'b')) s.pop_back();
  if (!s.empty() && (s.back() == 'K' || s.back() == 'k')) {
    mult = 1024;
    s.pop_back();
  } else if (!s.empty() && (s.back() == 'M' || s.back() == 'm')) {
    mult = 1024 * 1024;
    s.pop_back();
  }
  std::size_t pos = 0;
  long long v = 0;
  try {
    v = std::stoll(s, &pos, 10);
  } catch (const std::exception&) {
    pos = 0;
  }
  if (s.empty() || pos != s.size() || v < 1 || v > (1LL << 40) / mult)
    throw InputError(kWho, 0, 0, field, fmt::format("expected a size such as 65536, 64K or 64KB, got '{}'", text));
  return v * mult;
}

std::array<long long, 3> parse_triple(const std::string& text, const std::string& field, bool sizes, long long lo,
                                      long long hi) {
  const std::vector<std::string> parts = split_list(text);
  if (parts.size() != 3)
    throw InputError(kWho, 0, 0, field, fmt::format("expected three comma-separated values, got '{}'", text));
  std::array<long long, 3> v{};
  for (std::size_t k = 0; k < 3; ++k) {
    if (sizes) {
      v[k] = parse_size(parts[k], field);
    } else {
      std::size_t pos = 0;
      try {
        v[k] = std::stoll(parts[k], &pos, 10);
      } catch (const std::exception&) {
        pos = 0;
      }
      if (parts[k].empty() || pos != parts[k].size())
        throw InputError(kWho, 0, 0, field, fmt::format("expected an integer, got '{}'", parts[k]));
    }
    if (v[k] < lo || v[k] > hi)
      throw InputError(kWho, 0, 0, field, fmt::format("{} is outside [{}, {}]", v[k], lo, hi));
  }
  return v;
}

int dse_dram(const std::vector<std::string>& argv) {
  Args args("dse dram", "(--model NET.yaml | --table) [options]",
            "ROMANet (docs/romanet.md): per layer, the partitioning (tiling) and schedule with the fewest DRAM\n"
            "accesses (Alg. 1 over the reuse priority orders of Alg. 2), ROMANet's DRAM data mapping, and both\n"
            "traces run through the DDR3 model (row hits/misses/conflicts, energy, throughput), side by side\n"
            "with the baseline (ofmap/weight-reuse schedules, no overlap reuse, bank-contiguous tiles).\n"
            "--table runs AlexNet, VGG-16, MobileNet and CapsNet-MNIST and writes the results table.");
  args.option("model", "FILE", "network description (models/*.yaml)")
      .flag("table", "evaluate the bundled networks (or --models) and write --report/--json")
      .option("models", "LIST", "networks for --table",
              "models/alexnet.yaml,models/vgg16.yaml,models/mobilenet.yaml,models/capsnet-mnist.yaml")
      .option("dram", "FILE", "DRAM data file", "configs/dram/micron-mt41j256m8-ddr3-1600.yaml")
      .option("buffers", "I,W,O", "iBuff, wBuff, oBuff sizes in bytes (K/KB, M/MB suffixes)", "64K,64K,64K")
      .option("bytes", "I,W,O", "bytes per ifmap, weight and ofmap/partial-sum element", "1,1,1")
      .option("array", "RxC", "systolic array (recorded in the report)", "8x8")
      .option("buffer-banks", "N", "SRAM banks per buffer (recorded in the report)", "8")
      .option("steps", "M,N,J", "Alg. 1 search steps for Tm, Tn, Tj", "1,1,1")
      .option("orders", "alg2|all", "schedules: Alg. 2's orders of the network, or all six of Table I", "alg2")
      .flag("ablation", "also run ROMANet's schedules with the baseline mapping (always on with --table)")
      .flag("no-refresh", "do not issue refresh commands")
      .flag("no-sim", "search and count only; no DRAM simulation")
      .option("report", "FILE", "write the Markdown report (--table: default romanet-results.md)")
      .option("json", "FILE", "write the results as JSON (--table: default romanet-results.json)")
      .option("trace", "FILE", "write the DRAM trace of --trace-layer (one request per line)")
      .option("trace-layer", "NAME", "layer whose trace --trace writes")
      .option("trace-method", "M", "romanet, baseline or ablation", "romanet")
      .option("trace-mode", "MODE", "burst or nonburst", "burst")
      .option("trace-limit", "N", "at most N lines of trace")
      .flag("quiet", "print nothing but errors");
  if (!args.parse(argv)) {
    fmt::print("{}", args.help());
    return 0;
  }
  if (!args.positional().empty()) throw InputError(kWho, 0, 0, args.positional().front(), "unexpected argument");
  const bool table = args.has("table");
  if (table == args.has("model")) throw InputError(kWho, 0, 0, "--model/--table", "give exactly one of them");

  romanet::EvalOptions opt;
  opt.dram = dram::load_dram_spec(args.get("dram"));
  const auto buf = parse_triple(args.get("buffers"), "--buffers", true, 1, 1LL << 40);
  opt.buffers = {buf[0], buf[1], buf[2]};
  const auto eb = parse_triple(args.get("bytes"), "--bytes", false, 1, 8);
  opt.bytes = {int(eb[0]), int(eb[1]), int(eb[2])};
  const auto steps = parse_triple(args.get("steps"), "--steps", false, 1, 1 << 20);
  opt.step_m = int(steps[0]);
  opt.step_n = int(steps[1]);
  opt.step_j = int(steps[2]);
  {
    const std::string a = args.get("array");
    const auto x = a.find('x');
    int r = 0, c = 0;
    try {
      if (x != std::string::npos) {
        r = std::stoi(a.substr(0, x));
        c = std::stoi(a.substr(x + 1));
      }
    } catch (const std::exception&) {
      r = 0;
    }
    if (r < 1 || c < 1) throw InputError(kWho, 0, 0, "--array", fmt::format("expected RxC such as 8x8, got '{}'", a));
    opt.array_rows = r;
    opt.array_cols = c;
  }
  opt.buffer_banks = int(args.get_int("buffer-banks", 1, 1024));
  const std::string orders = args.get("orders");
  if (orders != "alg2" && orders != "all")
    throw InputError(kWho, 0, 0, "--orders", fmt::format("expected alg2 or all, got '{}'", orders));
  opt.all_orders = orders == "all";
  opt.refresh = !args.has("no-refresh");
  opt.simulate = !args.has("no-sim");
  opt.ablation = table || args.has("ablation");

  romanet::TraceDump dump;
  std::ofstream trace_file;
  std::ostringstream trace_text;
  if (auto path = args.get_opt("trace")) {
    if (!args.has("trace-layer")) throw InputError(kWho, 0, 0, "--trace", "needs --trace-layer");
    if (!opt.simulate) throw InputError(kWho, 0, 0, "--trace", "the trace comes from the simulation: drop --no-sim");
    dump.layer = args.get("trace-layer");
    const std::string m = args.get("trace-method");
    if (m == "romanet")
      dump.method = romanet::kRomanet;
    else if (m == "baseline")
      dump.method = romanet::kBaseline;
    else if (m == "ablation") {
      dump.method = romanet::kRomanetBankMapping;
      opt.ablation = true;
    } else
      throw InputError(kWho, 0, 0, "--trace-method", fmt::format("expected romanet, baseline or ablation, got '{}'", m));
    const std::string mode = args.get("trace-mode");
    if (mode != "burst" && mode != "nonburst")
      throw InputError(kWho, 0, 0, "--trace-mode", fmt::format("expected burst or nonburst, got '{}'", mode));
    dump.burst = mode == "burst";
    if (args.has("trace-limit")) dump.limit = args.get_int("trace-limit", 0, 1LL << 50);
    dump.out = &trace_text;
  }

  std::vector<std::string> paths = table ? split_list(args.get("models")) : std::vector<std::string>{args.get("model")};
  std::vector<romanet::NetworkResult> results;
  for (const std::string& p : paths) {
    const Network net = load_network(p);
    if (!dump.layer.empty() && paths.size() == 1 && !net.find(dump.layer))
      throw InputError(kWho, 0, 0, "--trace-layer", fmt::format("network '{}' has no layer '{}'", net.name, dump.layer));
    results.push_back(romanet::evaluate_network(net, opt, dump.out ? &dump : nullptr));
    if (!args.has("quiet") && table)
      fmt::print(stderr, "{}: searched in {:.2f} s, simulated in {:.2f} s\n", net.name,
                 results.back().search_seconds_romanet + results.back().search_seconds_baseline,
                 results.back().simulate_seconds);
  }

  if (auto path = args.get_opt("trace")) {
    write_file_atomic(*path, "# first_command_cycle done_cycle R/W stream channel rank bank row column beats outcome\n" +
                                 trace_text.str());
  }
  std::optional<std::string> report = args.get_opt("report"), json = args.get_opt("json");
  if (table) {
    if (!report) report = "romanet-results.md";  // the current directory, never the repository's docs
    if (!json) json = "romanet-results.json";
  }
  const std::string md = table ? romanet::table_markdown(results, opt) : romanet::network_markdown(results.front(), opt);
  if (report) write_file_atomic(*report, md);
  if (json) write_file_atomic(*json, romanet::results_json(results, opt));
  if (!args.has("quiet")) {
    if (table) {
      const std::string head = md.substr(0, md.find("## Burst"));
      fmt::print("{}", head);
      fmt::print("Full results: {}{}\n", report ? *report : "", json ? " and " + *json : "");
    } else {
      fmt::print("{}", md);
    }
  }
  return 0;
}

}  // namespace

int cmd_dse(const std::vector<std::string>& argv) {
  if (argv.empty() || argv[0] == "--help" || argv[0] == "-h" || argv[0] == "help") {
    fmt::print(
        "usage: capsgen dse <exploration> [options]\n\nexplorations:\n"
        "  dram       ROMANet: DRAM-aware partitioning and scheduling, DRAM mapping, DDR3 model (docs/romanet.md)\n"
        "  memory     DESCNet: scratchpad organizations, sizes and power-gating sectors (docs/dse-memory.md)\n"
        "  routing    PIM-CapsNet: dynamic routing split over HMC vaults by batch, low or high capsules\n"
        "             (docs/pim-capsnet.md)\n"
        "  nas        NASCaps: NSGA-II network search on accuracy, cycles, memory and energy (docs/nas.md)\n"
        "\n'capsgen dse <exploration> --help' describes its options.\n");
    return argv.empty() ? 2 : 0;
  }
  const std::vector<std::string> rest(argv.begin() + 1, argv.end());
  if (argv[0] == "dram") return dse_dram(rest);
  if (argv[0] == "memory") return dse_memory(rest);
  if (argv[0] == "routing") return dse_routing(rest);
  if (argv[0] == "nas") return dse_nas(rest);
  throw InputError("capsgen dse", 0, 0, argv[0], "unknown exploration (available: dram, memory, routing, nas)");
}

}  // namespace capsgen::cli
