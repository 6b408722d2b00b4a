// Strict number parsing, shared by the command-line flags, the YAML readers, the DSE CSV reader and
// the CACTI reader. Integers are decimal only ("010" is ten, "0x1" is not a number); reals are
// decimal or scientific notation and finite. Nothing is truncated, rounded to an integer, or
// clamped: a value that does not fit is a parse failure, not a different value.
#pragma once

#include <optional>
#include <string_view>

namespace capsgen {

// [+-]?[0-9]+ and nothing else (no spaces, no base prefix). nullopt when the text is not of that
// form or the value does not fit a long long.
std::optional<long long> parse_decimal_int(std::string_view text);

// A finite real number: [+-]?digits[.digits][(e|E)[+-]digits]. nullopt for anything else, including
// "nan", "inf", hexadecimal floats, and values whose magnitude overflows a double or underflows to a
// denormal (e.g. 1e400, 1e-320).
std::optional<double> parse_finite_real(std::string_view text);

// A real that is an exact integer (e.g. "1024", "1.0e3") in [lo, hi]; nullopt otherwise ("0.5",
// "1e30" beyond hi, "nan").
std::optional<long long> parse_integral_real(std::string_view text, long long lo, long long hi);

}  // namespace capsgen
