// The JSON summaries `capsgen generate` writes beside the RTL (config.json, chip.json, dma.json, ...):
// one object per file with the facts of one block, described by schemas/<doc>.schema.json. Every
// document names its schema in a top-level "schema" field, "capsgen.<doc>/<version>", and readers
// refuse another. The emitters, the flows, `capsgen sim` and the testbenches (tb/common/summary.cpp)
// share these definitions.
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace capsgen {

inline constexpr int kSummaryVersion = 1;

// "capsgen.<doc>/1": the schema of the document <doc>.json.
inline std::string summary_schema(const std::string& doc) {
  return "capsgen." + doc + "/" + std::to_string(kSummaryVersion);
}

// `facts` with the "schema" field of <doc>, as file contents: pretty-printed (two spaces, keys in
// sorted order) with a trailing newline.
std::string summary_text(const std::string& doc, nlohmann::json facts);

// Reads `file`, a document <doc>.json. InputError naming the file and `field` when it cannot be
// read, is not a JSON object, or names another schema (or version) than summary_schema(<doc>).
nlohmann::json read_summary(const std::filesystem::path& file, const std::string& field);

}  // namespace capsgen
