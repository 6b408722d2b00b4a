// Command-line options of one capsgen subcommand: declared up front, so --help, unknown-flag
// errors and type errors all come from one table.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/split_list.hpp"

namespace capsgen::cli {

class Args {
 public:
  Args(std::string command, std::string synopsis, std::string description);

  // Declares an option "--name VALUE" (or a flag "--name" when value_name is empty).
  Args& option(const std::string& name, const std::string& value_name, const std::string& help,
               std::optional<std::string> default_value = std::nullopt);
  Args& flag(const std::string& name, const std::string& help) { return option(name, "", help); }
  // How many positional arguments the command takes (default none: any is "unexpected argument").
  Args& allow_positional(std::size_t n) {
    max_positional_ = n;
    return *this;
  }

  // Parses argv (without the program and command names). Throws InputError (field = "--name")
  // for unknown options, missing values, repeated options and positional arguments beyond
  // allow_positional(). A value that starts with "--" must be given inline ("--out=--x"): the next
  // argument of "--out --quiet" is an option, not the value. Returns false if --help was given.
  bool parse(const std::vector<std::string>& argv);

  bool has(const std::string& name) const;
  std::string get(const std::string& name) const;  // value or default; throws if neither
  std::optional<std::string> get_opt(const std::string& name) const;
  long long get_int(const std::string& name, long long lo, long long hi) const;
  const std::vector<std::string>& positional() const { return positional_; }

  std::string help() const;

 private:
  struct Spec {
    std::string value_name;
    std::string help;
    std::optional<std::string> default_value;
  };
  std::string command_, synopsis_, description_;
  std::vector<std::string> order_;
  std::map<std::string, Spec> specs_;
  std::map<std::string, std::string> values_;
  std::vector<std::string> positional_;
  std::size_t max_positional_ = 0;
};

using capsgen::split_list;  // core/split_list.hpp

}  // namespace capsgen::cli
