// The JSON summaries `capsgen generate` writes beside the RTL (config.json, activation.json,
// scratchpad.json, pmu.json, dma.json, memsys.json, chip.json; schemas/<doc>.schema.json), read key
// by key. The document must name its schema ("capsgen.<doc>/1"); every error names the file and the
// key. nlohmann::json stays out of this header (tb/common/summary.cpp).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace tb {

class Summary {
 public:
  // Reads <dir>/<doc>.json.
  Summary(const std::string& dir, const std::string& doc);
  // Whether <dir>/<doc>.json exists (pmu.json is written only with power gating).
  static bool exists(const std::string& dir, const std::string& doc);

  int num(const std::string& key) const;         // an integer in int's range
  long long num64(const std::string& key) const;  // any integer
  double real(const std::string& key) const;     // any number
  bool flag(const std::string& key) const;       // a boolean
  std::string str(const std::string& key) const;  // a string
  // An array of objects, each read like a document (errors name "<file>: <key>[<i>]").
  std::vector<Summary> list(const std::string& key) const;

 private:
  Summary(std::string where, std::shared_ptr<const nlohmann::json> obj);
  const nlohmann::json& at(const std::string& key) const;
  [[noreturn]] void wrong(const std::string& key, const char* expected) const;

  std::string where_;  // the file, and for an element of a list its key and index
  std::shared_ptr<const nlohmann::json> obj_;
};

}  // namespace tb
