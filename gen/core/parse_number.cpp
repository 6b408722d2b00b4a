#include "core/parse_number.hpp"

#include <charconv>
#include <cmath>
#include <limits>

namespace capsgen {

std::optional<long long> parse_decimal_int(std::string_view s) {
  if (s.empty()) return std::nullopt;
  std::size_t start = (s[0] == '+' || s[0] == '-') ? 1 : 0;
  if (start == s.size()) return std::nullopt;
  for (std::size_t i = start; i < s.size(); ++i)
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
  const char* first = s.data() + (s[0] == '+' ? 1 : 0);
  long long v = 0;
  auto [ptr, ec] = std::from_chars(first, s.data() + s.size(), v, 10);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<double> parse_finite_real(std::string_view s) {
  // Grammar check first: from_chars alone accepts "inf", "nan" and "infinity".
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  std::size_t digits = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++digits;
  }
  if (digits == 0) return std::nullopt;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    std::size_t exp_digits = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++exp_digits;
    if (exp_digits == 0) return std::nullopt;
  }
  if (i != s.size()) return std::nullopt;
  const char* first = s.data() + (s[0] == '+' ? 1 : 0);
  double v = 0;
  auto [ptr, ec] = std::from_chars(first, s.data() + s.size(), v, std::chars_format::general);
  if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  if (v != 0 && std::fabs(v) < std::numeric_limits<double>::min()) return std::nullopt;  // denormal
  return v;
}

std::optional<long long> parse_integral_real(std::string_view s, long long lo, long long hi) {
  if (auto i = parse_decimal_int(s)) {
    if (*i < lo || *i > hi) return std::nullopt;
    return i;
  }
  const auto d = parse_finite_real(s);
  if (!d || *d != std::floor(*d)) return std::nullopt;
  // A double beyond the long long range must not be cast (2^63 itself does not fit).
  if (std::fabs(*d) >= 9223372036854775808.0) return std::nullopt;
  const long long v = static_cast<long long>(*d);
  if (v < lo || v > hi) return std::nullopt;
  return v;
}

}  // namespace capsgen
