// Verilog expression helpers shared by the activation-unit emitters (activation*.cpp) and the
// scratchpad emitter. Widths are numbers here: these blocks are specialized to one preset (their
// ROM contents and unrolled pipelines depend on it), so they carry no overridable parameters.
// The typed forms (taking an Expr) come first; the text forms below them remain for the emitters
// not yet migrated.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>

#include "config/accel_config.hpp"
#include "emit/vast.hpp"

namespace capsgen::emit::detail {

// ---- Typed ---------------------------------------------------------------------------------------

// Bits [hi:lo] of a declared signal: a bit select when hi == lo (`v[3]`, not `v[3:3]`).
inline Expr bits(const Expr& v, int hi, int lo) { return hi == lo ? v[hi] : v.slice(hi, lo); }

// All-ones constant of `width` bits: {W{1'b1}}.
inline Expr all_ones(int width) { return rep(width, bit(true)); }

// fx::sat_s of a signed declared signal to `to` bits (its width >= to >= 2):
// ((&v[F-1:T-1]) | ~(|v[F-1:T-1])) ? v[T-1:0] : {v[F-1], {T-1{~v[F-1]}}}.
inline Expr sat_s(const Expr& v, int to) {
  const int from = v.width();
  if (from < to || to < 2) throw std::logic_error("sat_s: bad widths");
  if (from == to) return v;
  const Expr high = bits(v, from - 1, to - 1);
  const Expr sign = v[from - 1];
  return ternary(paren(reduce_and(high) | ~reduce_or(high)), bits(v, to - 1, 0),
                 cat({sign, rep(to - 1, ~sign)}));
}

// fx::sat_u of an unsigned declared signal to `to` bits (zero extension when it is not wider):
// (|v[F-1:T]) ? {T{1'b1}} : v[T-1:0].
inline Expr sat_u(const Expr& v, int to) {
  const int from = v.width();
  if (from <= to) return zext(v, to);
  return ternary(paren(reduce_or(bits(v, from - 1, to))), all_ones(to), bits(v, to - 1, 0));
}

// The ports every activation ROM (and its drop-ins) has: clk_i, addr_i, data_o.
struct ActRomPorts {
  Expr clk, addr, data;
};
ActRomPorts declare_act_rom_ports(Module& m, int addr_bits, int data_bits);
// A module with only those ports: what an instance of such a ROM is checked against, without
// building its table.
Module act_rom_interface(const std::string& name, int addr_bits, int data_bits);

// The formats at the ports of the softmax divider and of its drop-ins (the PIM-CapsNet reciprocal).
struct DivideFormat {
  int num = 0;   // num_i: an exp value
  int den = 0;   // den_i: their sum
  int frac = 0;  // coupling coefficients are Q0.frac (frac = act - 1)
  int quot = 0;  // quot_o: frac + 1 bits (q <= 2^frac when num <= den)
};
DivideFormat divide_format(const AccelConfig& cfg);

// Their ports: clk_i, rst_ni, a division per cycle in (in_valid_i, in_last_i, num_i, den_i), the
// quotient out (out_valid_o, out_last_o, quot_o of 0 .. 2^frac - 1) and busy_o.
struct DividerPorts {
  Expr in_valid, in_last, num, den, out_valid, out_last, quot, busy;
};
DividerPorts declare_divider_ports(Module& m, const DivideFormat& f);

// ---- Verilog text (deprecated) -------------------------------------------------------------------

inline std::string lit(int width, long long value) { return fmt::format("{}'d{}", width, value); }

// All-ones constant of `width` bits.
inline std::string ones(int width) { return fmt::format("{{{}{{1'b1}}}}", width); }

// Zero extension of an unsigned `from`-bit expression to `to` bits.
inline std::string zext(const std::string& v, int from, int to) {
  if (to < from) throw std::logic_error("zext: narrowing");
  if (to == from) return v;
  return fmt::format("{{{}'d0, {}}}", to - from, v);
}

// Sign extension of a signed `from`-bit expression (a plain name) to `to` bits.
inline std::string sext(const std::string& name, int from, int to) {
  if (to < from) throw std::logic_error("sext: narrowing");
  if (to == from) return name;
  if (from == 1) return fmt::format("{{{}{{{}}}}}", to, name);
  return fmt::format("{{{{{}{{{}[{}]}}}}, {}}}", to - from, name, from - 1, name);
}

// Bits [hi:lo] of a plain name (a single bit when hi == lo).
inline std::string bits(const std::string& name, int hi, int lo) {
  return hi == lo ? fmt::format("{}[{}]", name, hi) : fmt::format("{}[{}:{}]", name, hi, lo);
}

// fx::sat_s of a signed `from`-bit name to `to` bits (from >= to >= 2).
inline std::string sat_s(const std::string& name, int from, int to) {
  if (from < to || to < 2) throw std::logic_error("sat_s: bad widths");
  if (from == to) return name;
  const std::string hi = bits(name, from - 1, to - 1);
  return fmt::format("((&{0}) | ~(|{0})) ? {1} : {{{2}[{3}], {{{4}{{~{2}[{3}]}}}}}}", hi, bits(name, to - 1, 0), name,
                     from - 1, to - 1);
}

// fx::sat_u of an unsigned `from`-bit name to `to` bits (zero extension when from <= to).
inline std::string sat_u(const std::string& name, int from, int to) {
  if (from <= to) return zext(name, from, to);
  return fmt::format("(|{}) ? {} : {}", bits(name, from - 1, to), ones(to), bits(name, to - 1, 0));
}

}  // namespace capsgen::emit::detail
