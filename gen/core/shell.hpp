// Small helpers for code that drives other programs (capsgen sim, capsgen regress, the model
// builds): read a whole file, quote an argument for /bin/sh.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace capsgen {

// The whole file (empty when it cannot be read).
inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// `s` as one /bin/sh word: unchanged when it holds only safe characters (readable repro commands),
// else in single quotes with embedded quotes escaped.
inline std::string quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=+:,") ==
                        std::string::npos)
    return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace capsgen
