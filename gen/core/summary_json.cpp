#include "core/summary_json.hpp"

#include <fstream>
#include <sstream>

#include "core/input_error.hpp"

namespace capsgen {

std::string summary_text(const std::string& doc, nlohmann::json facts) {
  facts["schema"] = summary_schema(doc);
  return facts.dump(2) + "\n";
}

nlohmann::json read_summary(const std::filesystem::path& file, const std::string& field) {
  std::ifstream in(file);
  if (!in) throw InputError(file.string(), 0, 0, field, "missing or unreadable");
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw InputError(file.string(), 0, 0, field, "not a JSON object");
  const std::string want = summary_schema(file.stem().string());
  const auto s = j.find("schema");
  if (s == j.end() || !s->is_string() || s->get<std::string>() != want)
    throw InputError(file.string(), 0, 0, field,
                     "\"schema\" is " + (s == j.end() ? std::string("missing") : s->dump()) + ", expected \"" + want + "\"");
  return j;
}

}  // namespace capsgen
