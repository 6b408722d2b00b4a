// The datapath energy document `capsgen synth --activity` writes (capsgen.datapath-energy/1, docs/energy.md
// section 1): reading it, and the datapath's energy per useful MAC it gives, for the energy report of
// `capsgen sim --memory dram` and the energy objective of `capsgen dse nas`.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace capsgen::synth {

// A capsgen.datapath-energy/1 document: its total (pJ), blocks and MACs.
struct DatapathDoc {
  std::string preset, network;
  double total_pj = 0;
  long long useful_macs = 0;
  std::vector<std::pair<std::string, double>> blocks;  // (top, pJ)
};

// Throws InputError naming `field` (the option or role the file came in) for an unreadable document.
DatapathDoc read_datapath(const std::filesystem::path& p, const char* field);

// The datapath's energy per useful MAC from a stored document: `file` when given, else one of `preset`
// in `stored_dir` (another network; the first by file name), else tiny-2x2's there; nullopt when there
// is none. Throws InputError for an unreadable document or one without MACs.
struct DatapathPerMac {
  double pj = 0;
  std::filesystem::path file;
  std::string preset;  // the document's
  std::string source;  // "capsnet-mnist on capsacc-16x16, activity-based"
};
std::optional<DatapathPerMac> datapath_per_mac(const std::optional<std::filesystem::path>& file,
                                               const std::filesystem::path& stored_dir, const std::string& preset);

}  // namespace capsgen::synth
