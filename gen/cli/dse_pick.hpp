// From an exploration to RTL in one step: `capsgen generate --dse FILE --dse-id N` reads one
// configuration of `capsgen dse memory`'s CSV (configs.csv.gz or pareto.csv) and applies its
// organization, power gating, memory sizes and sector counts to the preset; banks and word widths stay
// the preset's (a memory the preset lacks takes the data memory's, the shared memory's when there is no
// data memory). docs/dse-memory.md section 5.
#pragma once

#include <cstddef>
#include <string>

#include "config/accel_config.hpp"
#include "memory/dse.hpp"

namespace capsgen::cli {

// Largest CSV text (after gunzip) read_dse_pick accepts: 1 GiB (docs/limits.md).
constexpr std::size_t kMaxDseCsvBytes = std::size_t(1) << 30;

struct DsePick {
  memory::ConfigPoint point;
  std::string file;
  int line = 0;  // of the row in the CSV (1-based)
};

// The row with `id` of a configs.csv(.gz) or pareto.csv file. InputError naming the file, the line and
// the column for a malformed row or header, field "--dse-id" when no row has the id.
DsePick read_dse_pick(const std::string& csv_path, long long id);
// The same from the CSV text (gunzipped); `csv_path` names it in errors.
DsePick parse_dse_pick(const std::string& text, const std::string& csv_path, long long id);

// The preset's YAML with the configuration applied (name "<preset>-dse<id>", description naming the
// exploration file and row). Checked by parsing it back: a configuration the preset's memories cannot
// be built with (sectors that do not split a memory into whole words) is an InputError naming the CSV
// file, the row's line and the memory's field.
std::string dse_preset_yaml(const std::string& preset_path, const DsePick& pick);

}  // namespace capsgen::cli
