// `capsgen generate`: all RTL of one accelerator config, written atomically.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "config/accel_config.hpp"
#include "emit/design.hpp"

namespace capsgen::emit {

// Runs every registered block emitter and adds the file list (files.f) and config.json.
Design build_design(const AccelConfig& cfg);

// Writes build_design(cfg) into out_dir and returns the file names written (relative to out_dir),
// in the order written. Atomic: everything goes into a temporary sibling directory that is renamed
// into place at the end; on any error nothing is left behind and an existing out_dir is unchanged.
// An existing out_dir is only replaced if it is empty or an earlier capsgen output (has files.f
// starting with the capsgen header); otherwise InputError (field "--out"). `extra` files (e.g. the
// preset a configuration was derived into) are written with the RTL, atomically with it.
std::vector<std::string> generate_rtl(const AccelConfig& cfg, const std::filesystem::path& out_dir,
                                      const std::vector<OutputFile>& extra = {});

// Name of the file list, and of the JSON summary of the preset for the testbenches
// (schemas/config.schema.json).
inline constexpr const char* kFileListName = "files.f";
inline constexpr const char* kConfigSummaryName = "config.json";

}  // namespace capsgen::emit
