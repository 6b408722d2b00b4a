// Bounded reading of text input files (docs/limits.md).
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

namespace capsgen {

// Largest text input file (preset, network, regression list, technology file, CACTI report): 64 MiB.
// yaml::read_file reads with this cap.
constexpr std::size_t kMaxTextFileBytes = std::size_t(64) << 20;

// Whole file as text. InputError(path, "cannot open file") when it cannot be read, and when it holds
// more than max_bytes (reading stops there: /dev/zero is an error, not an endless read).
std::string read_text_file(const std::string& path, std::size_t max_bytes);

// A JSON document read with the text-file cap; InputError(path, field) when it cannot be read or
// parsed.
nlohmann::ordered_json read_json_file(const std::string& path, const std::string& field);

}  // namespace capsgen
