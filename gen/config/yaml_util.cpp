#include "config/yaml_util.hpp"
#include "config/text_file.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "core/input_error.hpp"
#include "core/parse_number.hpp"

namespace capsgen::yaml {
namespace {

// yaml-cpp gives quoted scalars the non-specific tag "!", plain ones "?".
bool is_quoted(const YAML::Node& n) { return n.Tag() == "!"; }

std::string clip(const std::string& s) {
  constexpr std::size_t kMax = 40;
  return s.size() <= kMax ? s : s.substr(0, kMax) + "...";
}

// Strict decimal integer and finite decimal number (core/parse_number.hpp).
bool parse_integer(const std::string& s, long long* out) {
  const auto v = parse_decimal_int(s);
  if (v) *out = *v;
  return v.has_value();
}

bool parse_number(const std::string& s, double* out) {
  const auto v = parse_finite_real(s);
  if (v) *out = *v;
  return v.has_value();
}

std::string int_range_text(int lo, int hi) {
  if (lo == INT_MIN && hi == INT_MAX) return "an integer";
  if (hi == INT_MAX) return fmt::format("an integer >= {}", lo);
  if (lo == INT_MIN) return fmt::format("an integer <= {}", hi);
  return fmt::format("an integer in [{}, {}]", lo, hi);
}

std::string join(const std::vector<std::string_view>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i) out += ", ";
    out += names[i];
  }
  return out;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

Location location_of(const YAML::Node& node) {
  if (!node.IsDefined()) return {};
  const YAML::Mark m = node.Mark();
  if (m.is_null() || m.line < 0) return {};
  return {m.line + 1, m.column + 1};
}

std::string read_file(const std::string& path) { return read_text_file(path, kMaxTextFileBytes); }

}  // namespace capsgen::yaml

namespace capsgen {

std::string read_text_file(const std::string& path, std::size_t max_bytes) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw InputError(path, 0, 0, "", "cannot open file (it is a directory)");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, 0, 0, "", "cannot open file");
  // Read in chunks up to the limit: /dev/zero or a FIFO must not fill the memory.
  std::string out;
  char buf[1 << 16];
  while (in) {
    in.read(buf, sizeof buf);
    const std::size_t n = std::size_t(in.gcount());
    if (out.size() + n > max_bytes)
      throw InputError(path, 0, 0, "", fmt::format("larger than {} bytes (the limit for text input files, docs/limits.md)", max_bytes));
    out.append(buf, n);
  }
  if (in.bad()) throw InputError(path, 0, 0, "", "cannot read file");
  return out;
}

nlohmann::ordered_json read_json_file(const std::string& path, const std::string& field) {
  std::string text;
  try {
    text = read_text_file(path, kMaxTextFileBytes);
  } catch (const InputError& e) {
    throw InputError(path, 0, 0, field, e.message());
  }
  try {
    return nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(path, 0, 0, field, e.what());
  }
}

}  // namespace capsgen

namespace capsgen::yaml {

namespace {
// Line (1-based) of the "---" marker that starts a second document, 0 if there is none. A marker
// is "---" at the start of a line, alone or followed by a space; the first one starts the first
// document when nothing but comments precedes it. (yaml-cpp's LoadAll can loop on malformed input,
// so documents are counted on the text.)
int second_document_line(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  int n = 0;
  bool content_before = false, started = false;
  while (std::getline(in, line)) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const bool marker = line.rfind("---", 0) == 0 && (line.size() == 3 || line[3] == ' ' || line[3] == '\t');
    if (marker) {
      if (content_before || started) return n;
      started = true;
    } else if (!line.empty() && line[0] != '#' && line.find_first_not_of(" \t") != std::string::npos) {
      content_before = true;
    }
  }
  return 0;
}
}  // namespace

YAML::Node parse(const std::string& text, const std::string& file_name) {
  YAML::Node doc;
  try {
    doc = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    Location loc;
    if (!e.mark.is_null() && e.mark.line >= 0) loc = {e.mark.line + 1, e.mark.column + 1};
    throw InputError(file_name, loc.line, loc.column, "", "YAML syntax error: " + e.msg);
  }
  // One document per file: a second one would be silently ignored.
  if (const int line = second_document_line(text); line > 0)
    throw InputError(file_name, line, 1, "", "a second YAML document ('---') is not read; put everything in one document");
  return doc;
}

// ---------------------------------------------------------------------------------------------
// Value

Value::Value(YAML::Node node, std::string file, std::string field, Location key_loc, LocationSink sink)
    : node_(std::move(node)),
      file_(std::move(file)),
      field_(std::move(field)),
      key_loc_(key_loc),
      sink_(std::move(sink)) {}

Location Value::location() const {
  if (node_.IsDefined() && node_.IsScalar()) return location_of(node_);
  // Empty values and block collections: yaml-cpp's mark is the next token or the first child;
  // the key that introduced the value is where a reader looks.
  if (key_loc_.line > 0) return key_loc_;
  return location_of(node_);
}

void Value::fail(const std::string& message) const {
  const Location loc = location();
  throw InputError(file_, loc.line, loc.column, field_, message);
}

std::string Value::describe() const {
  if (!node_.IsDefined() || node_.IsNull()) return "nothing";
  if (node_.IsMap()) return "a mapping";
  if (node_.IsSequence()) return "a list";
  if (is_quoted(node_)) return fmt::format("the quoted string \"{}\"", clip(node_.Scalar()));
  return fmt::format("'{}'", clip(node_.Scalar()));
}

int Value::as_int(int lo, int hi) const {
  long long v = 0;
  const std::string expected = int_range_text(lo, hi);
  if (!node_.IsScalar() || is_quoted(node_) || !parse_integer(node_.Scalar(), &v)) {
    // A digit string that overflowed long long is still a number, just out of range.
    const std::string& text = node_.IsScalar() ? node_.Scalar() : std::string();
    if (node_.IsScalar() && !is_quoted(node_) && text.find_first_of("0123456789") != std::string::npos &&
        text.find_first_not_of("+-0123456789") == std::string::npos) {
      fail(fmt::format("expected {}, got {}", expected, clip(text)));
    }
    fail(fmt::format("expected {}, got {}", expected, describe()));
  }
  if (v < lo || v > hi) fail(fmt::format("expected {}, got {}", expected, v));
  return static_cast<int>(v);
}

int Value::as_pow2(int lo, int hi) const {
  const std::string expected = fmt::format("a power of 2 in [{}, {}]", lo, hi);
  long long v = 0;
  if (!node_.IsScalar() || is_quoted(node_) || !parse_integer(node_.Scalar(), &v)) {
    fail(fmt::format("expected {}, got {}", expected, describe()));
  }
  if (v < lo || v > hi || v <= 0 || (v & (v - 1)) != 0) fail(fmt::format("expected {}, got {}", expected, v));
  return static_cast<int>(v);
}

int Value::as_int_in(const std::vector<int>& allowed) const {
  std::string list;
  for (std::size_t i = 0; i < allowed.size(); ++i) list += (i ? ", " : "") + std::to_string(allowed[i]);
  const std::string expected = "one of " + list;
  long long v = 0;
  if (!node_.IsScalar() || is_quoted(node_) || !parse_integer(node_.Scalar(), &v)) {
    fail(fmt::format("expected {}, got {}", expected, describe()));
  }
  if (std::find(allowed.begin(), allowed.end(), v) == allowed.end()) {
    fail(fmt::format("expected {}, got {}", expected, v));
  }
  return static_cast<int>(v);
}

bool Value::as_bool() const {
  if (node_.IsScalar() && !is_quoted(node_)) {
    const std::string& s = node_.Scalar();
    if (s == "true" || s == "True" || s == "TRUE") return true;
    if (s == "false" || s == "False" || s == "FALSE") return false;
  }
  fail("expected true or false, got " + describe());
}

double Value::as_double(double lo, double hi, bool lo_open, bool hi_open) const {
  const std::string expected =
      fmt::format("a number in {}{}, {}{}", lo_open ? "(" : "[", lo, hi, hi_open ? ")" : "]");
  double v = 0;
  if (!node_.IsScalar() || is_quoted(node_) || !parse_number(node_.Scalar(), &v)) {
    fail(fmt::format("expected {}, got {}", expected, describe()));
  }
  const bool below = lo_open ? !(v > lo) : !(v >= lo);
  const bool above = hi_open ? !(v < hi) : !(v <= hi);
  if (below || above) fail(fmt::format("expected {}, got {}", expected, node_.Scalar()));
  return v;
}

std::string Value::as_string() const {
  if (!node_.IsScalar()) fail("expected a string, got " + describe());
  return node_.Scalar();
}

int Value::as_enum(const std::vector<std::string_view>& names) const {
  if (node_.IsScalar()) {
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (node_.Scalar() == names[i]) return static_cast<int>(i);
    }
  }
  fail(fmt::format("expected one of {}, got {}", join(names), describe()));
}

MapReader Value::as_map() const {
  if (!node_.IsMap()) fail("expected a mapping, got " + describe());
  const Location where = key_loc_.line > 0 ? key_loc_ : location_of(node_);
  return MapReader(node_, file_, field_, where, sink_);
}

std::vector<Value> Value::as_seq() const {
  if (!node_.IsSequence()) fail("expected a list, got " + describe());
  std::vector<Value> out;
  std::size_t i = 0;
  for (const YAML::Node& elem : node_) {
    std::string f = fmt::format("{}[{}]", field_, i++);
    if (sink_) sink_(f, location_of(elem));
    out.emplace_back(elem, file_, std::move(f), location_of(elem), sink_);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// MapReader

MapReader::MapReader(YAML::Node node, std::string file, std::string path, Location where, LocationSink sink)
    : file_(std::move(file)), path_(std::move(path)), where_(where), sink_(std::move(sink)) {
  if (!node.IsMap()) throw InputError(file_, where_.line, where_.column, path_, "expected a mapping");
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (!it->first.IsScalar()) {
      const Location loc = location_of(it->first);
      throw InputError(file_, loc.line, loc.column, path_, "keys must be plain names");
    }
    entries_.push_back({it->first.Scalar(), it->first, it->second});
  }
}

MapReader MapReader::root(const YAML::Node& doc, const std::string& file_name, LocationSink sink) {
  if (!doc.IsDefined() || doc.IsNull()) {
    throw InputError(file_name, 0, 0, "", "the file is empty; expected a mapping");
  }
  const Location loc = location_of(doc);
  if (!doc.IsMap()) {
    Value v(doc, file_name, "", loc, {});
    throw InputError(file_name, loc.line, loc.column, "", "expected a mapping at the top level, got " + v.describe());
  }
  return MapReader(doc, file_name, "", loc, std::move(sink));
}

std::string MapReader::field(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

void MapReader::allow_only(const std::vector<std::string_view>& allowed) const {
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    const Entry& e = entries_[i];
    const Location loc = location_of(e.key_node);
    if (std::find(allowed.begin(), allowed.end(), e.key) == allowed.end()) {
      std::string hint;
      std::size_t best = 3;  // suggest only close matches (a typo, not a different word)
      for (std::string_view a : allowed) {
        const std::size_t d = edit_distance(e.key, a);
        if (d < best && d < a.size()) {
          best = d;
          hint = fmt::format("did you mean '{}'? ", a);
        }
      }
      throw InputError(file_, loc.line, loc.column, path_,
                       fmt::format("unknown key '{}' ({}allowed: {})", e.key, hint, join(allowed)));
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (entries_[j].key == e.key) {
        throw InputError(file_, loc.line, loc.column, path_,
                         fmt::format("duplicate key '{}' (first given at line {})", e.key,
                                     location_of(entries_[j].key_node).line));
      }
    }
  }
}

const MapReader::Entry* MapReader::lookup(std::string_view key) const {
  for (const Entry& e : entries_) {
    if (e.key == key) return &e;
  }
  return nullptr;
}

Value MapReader::make_value(const Entry& e) const {
  Value v(e.value, file_, field(e.key), location_of(e.key_node), sink_);
  if (sink_) sink_(v.field(), v.location());
  return v;
}

bool MapReader::has(std::string_view key) const { return lookup(key) != nullptr; }

Value MapReader::get(std::string_view key) const {
  const Entry* e = lookup(key);
  if (!e) throw InputError(file_, where_.line, where_.column, field(key), "missing required field");
  return make_value(*e);
}

std::optional<Value> MapReader::find(std::string_view key) const {
  const Entry* e = lookup(key);
  if (!e) return std::nullopt;
  return make_value(*e);
}

Location MapReader::key_location(std::string_view key) const {
  const Entry* e = lookup(key);
  return e ? location_of(e->key_node) : where_;
}

int MapReader::get_int(std::string_view key, int lo, int hi) const { return get(key).as_int(lo, hi); }

int MapReader::get_int(std::string_view key, int lo, int hi, int default_value) const {
  auto v = find(key);
  return v ? v->as_int(lo, hi) : default_value;
}

bool MapReader::get_bool(std::string_view key) const { return get(key).as_bool(); }

bool MapReader::get_bool(std::string_view key, bool default_value) const {
  auto v = find(key);
  return v ? v->as_bool() : default_value;
}

std::string MapReader::get_string(std::string_view key) const { return get(key).as_string(); }

std::string MapReader::get_string(std::string_view key, const std::string& default_value) const {
  auto v = find(key);
  return v ? v->as_string() : default_value;
}

MapReader MapReader::get_map(std::string_view key) const { return get(key).as_map(); }

void MapReader::fail(const std::string& message) const {
  throw InputError(file_, where_.line, where_.column, path_, message);
}

void MapReader::fail(std::string_view key, const std::string& message) const {
  if (const Entry* e = lookup(key)) make_value(*e).fail(message);
  throw InputError(file_, where_.line, where_.column, field(key), message);
}

}  // namespace capsgen::yaml
