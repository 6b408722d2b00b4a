// The energy report of capsgen sim --memory dram; see chip_energy.hpp and docs/energy.md.
#include "cli/chip_energy.hpp"

#include <fmt/format.h>

#include <algorithm>


#include "config/text_file.hpp"
#include "core/input_error.hpp"
#include "memory/dse.hpp"
#include "memory/dse_config.hpp"
#include "memory/sram_model.hpp"
#include "synth/datapath_energy.hpp"

namespace capsgen::cli {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

// DESCNet Fig. 12(b): CapsNet (MNIST) on CapsAcc with the on-chip SPM and an off-chip DRAM, 32 nm.
constexpr double kDescnetAcceleratorMj = 0.37, kDescnetOnchipMj = 3.39, kDescnetOffchipMj = 7.11;

// read_datapath, and an InputError when the document is of another preset or network.
synth::DatapathDoc read_datapath_of_run(const fs::path& p, const std::string& preset, const std::string& network) {
  synth::DatapathDoc d = synth::read_datapath(p, "--datapath-energy");
  if (d.preset != preset || d.network != network)
    throw InputError(p.string(), 0, 0, "preset",
                     fmt::format("the document is of {} on {}, this run is {} on {}", d.network, d.preset, network, preset));
  return d;
}


// The datapath's energy: the given document, else the stored one of this preset and network, else an
// estimate from a stored document's energy per MAC (estimate_reference).
void datapath_energy(const EnergyRun& run, const EnergyOptions& opt, ChipEnergy& e) {
  const fs::path stored = opt.stored_dir / fmt::format("{}-{}.json", run.cfg.name, run.network);
  if (opt.datapath || fs::exists(stored)) {
    const fs::path p = opt.datapath.value_or(stored);
    const synth::DatapathDoc d = read_datapath_of_run(p, run.cfg.name, run.network);
    e.datapath_kind = "activity";
    e.datapath_file = p.string();
    e.datapath_uj = d.total_pj * 1e-6;
    for (const auto& [top, pj] : d.blocks) e.datapath_blocks.emplace_back(top, pj * 1e-6);
    e.datapath_note = "activity-based: toggles of a simulation of this network on this preset, OpenSTA report_power";
    return;
  }
  const std::optional<synth::DatapathPerMac> per_mac = synth::datapath_per_mac({}, opt.stored_dir, run.cfg.name);
  if (!per_mac || run.useful_macs <= 0) {
    e.datapath_kind = "none";
    e.datapath_note = fmt::format("no datapath energy: no {} and no stored document in {} to estimate from",
                                  stored.string(), opt.stored_dir.string());
    return;
  }
  e.datapath_kind = "estimate";
  e.datapath_file = per_mac->file.string();
  e.datapath_uj = per_mac->pj * double(run.useful_macs) * 1e-6;
  e.datapath_note = fmt::format("ESTIMATE, not measured for this {}: {:.2f} pJ per useful MAC ({}) x {} MACs",
                                per_mac->preset == run.cfg.name ? "network" : "preset", per_mac->pj,
                                per_mac->source, run.useful_macs);
}

// The memory whose counters `counter` (a memsys range) are accesses of: SMP's acc range and HY's lanes
// range are views of the shared memory.
std::string physical_memory(const AccelConfig& cfg, const std::string& counter) {
  if (counter == "lanes") return "shared";
  if (counter == "acc" && cfg.scratchpad.organization == SpmOrganization::Smp) return "shared";
  return counter;
}

MemoryEnergy memory_energy(const EnergyRun& run, const memory::TechParams& tech, int m) {
  const MemoryConfig& mc = memory::memory_config(run.cfg.scratchpad, m);
  MemoryEnergy me;
  me.name = memory::mem_name(m);
  me.kib = mc.size_kib;
  me.banks = mc.banks;
  me.sectors = run.cfg.scratchpad.power_gating ? mc.sectors : 1;
  me.ports = m == memory::kShared ? 3 : 1;  // the shared memory serves the three engine ports (docs/rtl-memsys.md)
  me.word_bytes = std::max(1, mc.width_bits / 8);
  memory::SramSpec spec{static_cast<long long>(mc.size_kib) * 1024, mc.banks, me.ports, me.sectors};
  spec.block_bytes = me.word_bytes;
  const memory::SramFigures f = memory::evaluate_sram(tech, spec);
  me.read_pj = f.read_pj_per_byte * me.word_bytes;
  me.write_pj = f.write_pj_per_byte * me.word_bytes;
  me.leak_mw = f.leak_mw;
  me.sleep_fraction = f.sleep_leak_fraction;
  me.wake_nj = f.wake_nj_per_sector;
  for (const sim::ChipMemory& c : run.g.memories)
    if (physical_memory(run.cfg, c.name) == me.name) {
      me.reads += c.eng_rd + c.dma_rd;
      me.writes += c.eng_wr + c.dma_wr;
    }
  for (const sim::ChipPmu& p : run.g.pmus)
    if (p.memory == me.name) me.asleep_sector_cycles += p.asleep_sector_cycles;
  for (const sim::ChipSector& s : run.g.sectors)
    if (s.memory == me.name) me.wakes += s.wakes;
  me.awake_sector_cycles = std::max(0LL, me.sectors * run.cycles - me.asleep_sector_cycles);
  const double period_s = 1.0 / (run.cfg.clock.target_mhz * 1e6);
  me.dynamic_uj = (double(me.reads) * me.read_pj + double(me.writes) * me.write_pj) * 1e-6;
  // mW per sector x sector-cycles x period = mJ; x 1e3 = uJ
  me.leakage_uj = me.leak_mw / me.sectors *
                  (double(me.awake_sector_cycles) + double(me.asleep_sector_cycles) * me.sleep_fraction) * period_s * 1e3;
  me.wake_uj = double(me.wakes) * me.wake_nj * 1e-3;
  return me;
}

}  // namespace

void check_energy_inputs(const AccelConfig& cfg, const std::string& network, const EnergyOptions& opt) {
  if (opt.datapath) read_datapath_of_run(*opt.datapath, cfg.name, network);
  memory::load_tech(opt.tech.string());
}

ChipEnergy chip_energy(const EnergyRun& run, const EnergyOptions& opt) {
  ChipEnergy e;
  datapath_energy(run, opt, e);
  const memory::TechParams tech = memory::load_tech(opt.tech.string());
  e.tech = fmt::format("{} ({})", tech.name, opt.tech.string());
  for (int m : {memory::kData, memory::kWeight, memory::kAcc, memory::kShared}) {
    if (!memory::memory_config(run.cfg.scratchpad, m).present) continue;
    e.memories.push_back(memory_energy(run, tech, m));
    e.sram_uj += e.memories.back().total_uj();
  }
  e.dram_uj = double(run.g.dram.energy_pj) * 1e-6;
  return e;
}

std::string chip_energy_md(const ChipEnergy& e) {
  const double total = e.total_uj();
  auto share = [&](double v) { return total > 0 ? fmt::format("{:.1f}%", 100.0 * v / total) : "-"; };
  std::string md = "\n## Energy per inference\n\n| part | energy uJ | share | how |\n|---|---:|---:|---|\n";
  md += fmt::format("| datapath | {:.3f} | {} | {} |\n", e.datapath_uj, share(e.datapath_uj), e.datapath_note);
  md += fmt::format("| on-chip SRAM | {:.3f} | {} | {} |\n", e.sram_uj, share(e.sram_uj), e.tech);
  md += fmt::format("| off-chip DRAM | {:.3f} | {} | the DRAM model behind the testbench (energy by command above) |\n", e.dram_uj,
                    share(e.dram_uj));
  md += fmt::format("| **total** | **{:.3f}** | | |\n", total);
  if (!e.datapath_blocks.empty()) {
    md += "\nDatapath blocks (OSU018, activity-based): ";
    for (std::size_t i = 0; i < e.datapath_blocks.size(); ++i)
      md += fmt::format("{}{} {:.3f} uJ", i ? ", " : "", e.datapath_blocks[i].first, e.datapath_blocks[i].second);
    md += fmt::format(" ({})\n", e.datapath_file);
  }
  md += "\n| memory | KiB / banks / sectors / ports | accesses rd / wr | pJ per access rd / wr | dynamic uJ | leakage uJ (awake / asleep "
        "sector-cycles) | wake-ups (uJ) | total uJ |\n|---|---|---:|---:|---:|---|---:|---:|\n";
  for (const MemoryEnergy& m : e.memories)
    md += fmt::format("| {} | {} / {} / {} / {} | {} / {} | {:.2f} / {:.2f} | {:.4f} | {:.4f} ({} / {}) | {} ({:.6f}) | {:.4f} |\n", m.name,
                      m.kib, m.banks, m.sectors, m.ports, m.reads, m.writes, m.read_pj, m.write_pj, m.dynamic_uj, m.leakage_uj,
                      m.awake_sector_cycles, m.asleep_sector_cycles, m.wakes, m.wake_uj, m.total_uj());
  const double onchip = e.datapath_uj + e.sram_uj, d_total = kDescnetAcceleratorMj + kDescnetOnchipMj + kDescnetOffchipMj;
  md += fmt::format(
      "\nBeside DESCNet (Fig. 12b: CapsNet-MNIST on CapsAcc, 32 nm, on-chip SPM + DRAM): accelerator {:.2f} mJ ({:.0f}%), on-chip "
      "memory {:.2f} mJ ({:.0f}%), off-chip {:.2f} mJ ({:.0f}%). This run: datapath {}, on-chip SRAM {}, off-chip {}; on-chip "
      "{:.3f} uJ against off-chip {:.3f} uJ.\n",
      kDescnetAcceleratorMj, 100 * kDescnetAcceleratorMj / d_total, kDescnetOnchipMj, 100 * kDescnetOnchipMj / d_total,
      kDescnetOffchipMj, 100 * kDescnetOffchipMj / d_total, share(e.datapath_uj), share(e.sram_uj), share(e.dram_uj), onchip,
      e.dram_uj);
  md += "\nAssumptions: the datapath is the OSU018 (180 nm, 1.8 V) synthesis of the array, accumulator and activation banks "
        "(ideal clock, no wires, no clock tree; control, gather, DMA and memsys logic not included); the SRAM figures come from the "
        "technology file (CACTI fit) at its node, dynamic energy per bank access = per-byte energy x word bytes, leakage per sector "
        "over the program's sector-cycles awake plus the sleep style's fraction over those asleep (the PMUs' counters), wake-ups at "
        "the model's energy; the DRAM figure is the testbench's DRAM model. Method and validation: docs/energy.md.\n";
  return md;
}

json chip_energy_json(const ChipEnergy& e) {
  json j;
  j["total_uj"] = e.total_uj();
  j["datapath"] = {{"kind", e.datapath_kind}, {"uj", e.datapath_uj}, {"file", e.datapath_file}, {"note", e.datapath_note}};
  json blocks = json::object();
  for (const auto& [top, uj] : e.datapath_blocks) blocks[top] = uj;
  j["datapath"]["blocks_uj"] = blocks;
  j["sram"] = {{"uj", e.sram_uj}, {"tech", e.tech}};
  json mems = json::array();
  for (const MemoryEnergy& m : e.memories)
    mems.push_back({{"name", m.name},          {"kib", m.kib},
                    {"banks", m.banks},        {"sectors", m.sectors},
                    {"ports", m.ports},        {"word_bytes", m.word_bytes},
                    {"reads", m.reads},        {"writes", m.writes},
                    {"read_pj", m.read_pj},    {"write_pj", m.write_pj},
                    {"leak_mw", m.leak_mw},    {"sleep_leak_fraction", m.sleep_fraction},
                    {"awake_sector_cycles", m.awake_sector_cycles}, {"asleep_sector_cycles", m.asleep_sector_cycles},
                    {"wakes", m.wakes},        {"wake_nj_per_sector", m.wake_nj},
                    {"dynamic_uj", m.dynamic_uj}, {"leakage_uj", m.leakage_uj},
                    {"wake_uj", m.wake_uj},    {"total_uj", m.total_uj()}});
  j["sram"]["memories"] = mems;
  j["dram"] = {{"uj", e.dram_uj}};
  j["descnet_fig12b_mj"] = {{"accelerator", kDescnetAcceleratorMj}, {"onchip_memory", kDescnetOnchipMj}, {"offchip", kDescnetOffchipMj}};
  return j;
}

}  // namespace capsgen::cli
