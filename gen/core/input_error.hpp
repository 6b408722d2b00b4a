// Errors in user input (YAML, network descriptions, weight files, CLI flags).
// Every message names the file, the line (when known) and the field.
#pragma once

#include <stdexcept>
#include <string>

namespace capsgen {

class InputError : public std::runtime_error {
 public:
  // line/column are 1-based; 0 means unknown.
  InputError(std::string file, int line, int column, std::string field, std::string message);

  const std::string& file() const { return file_; }
  int line() const { return line_; }
  int column() const { return column_; }
  const std::string& field() const { return field_; }
  const std::string& message() const { return message_; }

 private:
  std::string file_;
  int line_;
  int column_;
  std::string field_;
  std::string message_;
};

}  // namespace capsgen
