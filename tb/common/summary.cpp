#include "common/summary.hpp"

#include <climits>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "core/summary_json.hpp"

namespace tb {

using nlohmann::json;

Summary::Summary(const std::string& dir, const std::string& doc) : where_(dir + "/" + doc + ".json") {
  std::ifstream in(where_);
  if (!in) throw std::runtime_error("cannot read " + where_);
  json j = json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw std::runtime_error(where_ + ": not a JSON object");
  const std::string want = capsgen::summary_schema(doc);
  const auto s = j.find("schema");
  if (s == j.end() || *s != want)
    throw std::runtime_error(where_ + ": \"schema\" is " + (s == j.end() ? std::string("missing") : s->dump()) +
                             ", expected \"" + want + "\"");
  obj_ = std::make_shared<const json>(std::move(j));
}

Summary::Summary(std::string where, std::shared_ptr<const json> obj) : where_(std::move(where)), obj_(std::move(obj)) {}

bool Summary::exists(const std::string& dir, const std::string& doc) {
  return std::filesystem::exists(dir + "/" + doc + ".json");
}

const json& Summary::at(const std::string& key) const {
  const auto it = obj_->find(key);
  if (it == obj_->end()) throw std::runtime_error(where_ + ": missing \"" + key + "\"");
  return *it;
}

void Summary::wrong(const std::string& key, const char* expected) const {
  throw std::runtime_error(where_ + ": \"" + key + "\" is " + at(key).dump() + ", expected " + expected);
}

long long Summary::num64(const std::string& key) const {
  const json& v = at(key);
  if (!v.is_number_integer()) wrong(key, "an integer");
  return v.get<long long>();
}

int Summary::num(const std::string& key) const {
  const long long v = num64(key);
  if (v < INT_MIN || v > INT_MAX) wrong(key, "an integer in int's range");
  return static_cast<int>(v);
}

double Summary::real(const std::string& key) const {
  const json& v = at(key);
  if (!v.is_number()) wrong(key, "a number");
  return v.get<double>();
}

bool Summary::flag(const std::string& key) const {
  const json& v = at(key);
  if (!v.is_boolean()) wrong(key, "true or false");
  return v.get<bool>();
}

std::string Summary::str(const std::string& key) const {
  const json& v = at(key);
  if (!v.is_string()) wrong(key, "a string");
  return v.get<std::string>();
}

std::vector<Summary> Summary::list(const std::string& key) const {
  const json& v = at(key);
  if (!v.is_array()) wrong(key, "an array");
  std::vector<Summary> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string where = where_ + ": " + key + "[" + std::to_string(i) + "]";
    if (!v[i].is_object()) throw std::runtime_error(where + " is " + v[i].dump() + ", expected an object");
    out.push_back(Summary(where, std::make_shared<const json>(v[i])));
  }
  return out;
}

}  // namespace tb
