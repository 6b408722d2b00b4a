// Strict reading of YAML input files (presets, network descriptions) on top of yaml-cpp.
//
// yaml-cpp converts leniently ("16" -> 16, "yes" -> true) and reports neither unknown nor duplicate
// keys. These helpers do: every value is type- and range-checked where it is read, and every error is
// an InputError with the file, the 1-based line and column and the dotted field path
// ("scratchpad.data.banks", "layers[2].kernel").
#pragma once

#include <climits>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace capsgen::yaml {

// 1-based position in a file; 0 = unknown.
struct Location {
  int line = 0;
  int column = 0;
};

// yaml-cpp marks are 0-based (-1 when unknown).
Location location_of(const YAML::Node& node);

// Whole file as text. InputError(path, "cannot open file") when it cannot be read.
std::string read_file(const std::string& path);

// Parses one YAML document. Syntax errors become InputError with yaml-cpp's line and column.
YAML::Node parse(const std::string& text, const std::string& file_name);

// Called with (dotted field path, location) for every value that is read, so cross-field checks
// done later (without the YAML tree) can still point at the right line.
using LocationSink = std::function<void(const std::string& field, Location loc)>;

class MapReader;

// One value together with what is needed to report errors about it.
class Value {
 public:
  Value(YAML::Node node, std::string file, std::string field, Location key_loc, LocationSink sink);

  const YAML::Node& node() const { return node_; }
  const std::string& file() const { return file_; }
  const std::string& field() const { return field_; }
  // Where messages about this value point: the value itself, or its key when the value is empty
  // (yaml-cpp places an empty value's mark at the next token, often on another line).
  Location location() const;

  [[noreturn]] void fail(const std::string& message) const;

  bool is_null() const { return node_.IsNull(); }
  bool is_scalar() const { return node_.IsScalar(); }
  bool is_map() const { return node_.IsMap(); }
  bool is_seq() const { return node_.IsSequence(); }

  // Plain decimal integer in [lo, hi]; quoted strings are rejected.
  int as_int(int lo = INT_MIN, int hi = INT_MAX) const;
  // Power of two in [lo, hi].
  int as_pow2(int lo, int hi) const;
  // One of the listed integers.
  int as_int_in(const std::vector<int>& allowed) const;
  // true/True/TRUE or false/False/FALSE (the YAML 1.2 core schema; no yes/no/on/off).
  bool as_bool() const;
  // Decimal number in the interval; lo_open / hi_open exclude the bound.
  double as_double(double lo, double hi, bool lo_open = false, bool hi_open = false) const;
  // Any scalar (quoted or plain), as written.
  std::string as_string() const;
  // Index of the value in `names` (case-sensitive).
  int as_enum(const std::vector<std::string_view>& names) const;
  // A mapping, for further strict reading.
  MapReader as_map() const;
  // Elements of a sequence, each with field path "<field>[i]".
  std::vector<Value> as_seq() const;

  // "'sixteen'", "a mapping", "nothing", ... for "got ..." in messages.
  std::string describe() const;

 private:
  YAML::Node node_;
  std::string file_;
  std::string field_;
  Location key_loc_;
  LocationSink sink_;
};

// Strict reader of one mapping: lookups by key, unknown/duplicate key detection, missing-key errors.
class MapReader {
 public:
  // `where` is used for errors about the mapping as a whole (a missing key): the key that introduced
  // the mapping, or the mapping itself for the document root and list elements.
  MapReader(YAML::Node node, std::string file, std::string path, Location where, LocationSink sink = {});

  // The top-level mapping of a document (InputError if the document is empty or not a mapping).
  static MapReader root(const YAML::Node& doc, const std::string& file_name, LocationSink sink = {});

  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }
  Location where() const { return where_; }
  // Dotted path of a key of this mapping.
  std::string field(std::string_view key) const;

  // Throws on the first key not in `allowed` (naming it, a close match, and the allowed keys), and on
  // duplicate keys. Call it before reading, so a typo is reported rather than the missing key.
  void allow_only(const std::vector<std::string_view>& allowed) const;

  bool has(std::string_view key) const;
  // Required value: InputError "missing required field" at where() when absent.
  Value get(std::string_view key) const;
  // Optional value.
  std::optional<Value> find(std::string_view key) const;
  // Location of a key itself (where() if absent).
  Location key_location(std::string_view key) const;

  // Shorthands for the common cases.
  int get_int(std::string_view key, int lo = INT_MIN, int hi = INT_MAX) const;
  int get_int(std::string_view key, int lo, int hi, int default_value) const;
  bool get_bool(std::string_view key) const;
  bool get_bool(std::string_view key, bool default_value) const;
  std::string get_string(std::string_view key) const;
  std::string get_string(std::string_view key, const std::string& default_value) const;
  MapReader get_map(std::string_view key) const;

  // Error about the mapping as a whole, or about one of its keys (at the value if present).
  [[noreturn]] void fail(const std::string& message) const;
  [[noreturn]] void fail(std::string_view key, const std::string& message) const;

 private:
  struct Entry {
    std::string key;
    YAML::Node key_node;
    YAML::Node value;
  };
  const Entry* lookup(std::string_view key) const;
  Value make_value(const Entry& e) const;

  std::string file_;
  std::string path_;
  Location where_;
  LocationSink sink_;
  std::vector<Entry> entries_;
};

}  // namespace capsgen::yaml
