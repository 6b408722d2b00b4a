// Shared helpers of the config tests: error expectations with file, line and field.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <string_view>

#include "core/input_error.hpp"

namespace capsgen::test {

// 1-based line of the first line of `text` containing `needle` (0 if none).
inline int line_of(std::string_view text, std::string_view needle) {
  const auto pos = text.find(needle);
  if (pos == std::string_view::npos) return 0;
  int line = 1;
  for (std::size_t i = 0; i < pos; ++i) line += text[i] == '\n';
  return line;
}

// `text` with the first occurrence of `from` replaced by `to` (the test fails if absent).
inline std::string replace(std::string text, std::string_view from, std::string_view to) {
  const auto pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << "test bug: '" << from << "' not in the YAML";
  if (pos != std::string::npos) text.replace(pos, from.size(), to);
  return text;
}

// Runs `fn`, expects an InputError for `file` at `line` (0 = none) naming `field`, whose message
// contains `fragment`; what() must start with "file:line:" and contain "field: ".
inline void expect_input_error(const std::function<void()>& fn, const std::string& file, int line,
                               const std::string& field, const std::string& fragment) {
  try {
    fn();
    ADD_FAILURE() << "expected an InputError (" << field << ": " << fragment << ")";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.file(), file) << what;
    EXPECT_EQ(e.line(), line) << what;
    EXPECT_EQ(e.field(), field) << what;
    const std::string shown = file.empty() ? "<input>" : file;
    const std::string prefix = line > 0 ? shown + ":" + std::to_string(line) + ":" : shown + ": ";
    EXPECT_EQ(what.rfind(prefix, 0), 0u) << what;
    if (!field.empty()) {
      EXPECT_NE(what.find(field + ": "), std::string::npos) << what;
    }
    EXPECT_NE(what.find(fragment), std::string::npos) << "message: " << what << "\nexpected: " << fragment;
  }
}

}  // namespace capsgen::test
