#include "core/input_error.hpp"

#include <fmt/format.h>

namespace capsgen {
namespace {
std::string format_input_error(const std::string& file, int line, int column, const std::string& field,
                               const std::string& message) {
  std::string loc = file.empty() ? std::string("<input>") : file;
  if (line > 0) loc += fmt::format(":{}", line);
  if (line > 0 && column > 0) loc += fmt::format(":{}", column);
  return field.empty() ? fmt::format("{}: {}", loc, message) : fmt::format("{}: {}: {}", loc, field, message);
}
}  // namespace

InputError::InputError(std::string file, int line, int column, std::string field, std::string message)
    : std::runtime_error(format_input_error(file, line, column, field, message)),
      file_(std::move(file)),
      line_(line),
      column_(column),
      field_(std::move(field)),
      message_(std::move(message)) {}

}  // namespace capsgen
