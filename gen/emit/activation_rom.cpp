// LUT ROMs of the activation unit: contents from the numerics LUT builders, emitted as `case` ROMs
// with a registered output (Verilator, Icarus and Yosys all accept them; Yosys' proc_rom turns
// them into ROM cells that FPGA flows map to block RAM and ASIC flows to logic), plus .hex images.
#include <fmt/format.h>

#include <stdexcept>

#include "emit/activation.hpp"
#include "emit/activation_internal.hpp"
#include "numerics/activation.hpp"

namespace capsgen::emit {

using detail::ActRomPorts;
using detail::bits;
using detail::declare_act_rom_ports;

std::vector<std::uint32_t> act_sqrt_table(const AccelConfig& cfg) {
  return fx::build_sqrt_lut(fx::ActParams::from_config(cfg));
}
std::vector<std::uint32_t> act_squash_table(const AccelConfig& cfg) {
  return fx::build_squash_lut(fx::ActParams::from_config(cfg));
}
std::vector<std::uint32_t> act_exp_table(const AccelConfig& cfg) {
  return fx::build_exp_lut(fx::ActParams::from_config(cfg));
}

std::string rom_hex(const std::vector<std::uint32_t>& table, int data_bits) {
  const int digits = (data_bits + 3) / 4;
  std::string s;
  s.reserve(table.size() * static_cast<std::size_t>(digits + 1));
  for (std::uint32_t v : table) s += fmt::format("{:0{}x}\n", v, digits);
  return s;
}

namespace detail {

ActRomPorts declare_act_rom_ports(Module& m, int addr_bits, int data_bits) {
  const Expr clk = m.input("clk_i", 1, "clock");
  const Expr addr = m.input("addr_i", addr_bits, "entry address");
  const Expr data = m.output("data_o", data_bits, "entry addressed in the previous cycle");
  return {clk, addr, data};
}

Module act_rom_interface(const std::string& name, int addr_bits, int data_bits) {
  Module m(name, "");
  declare_act_rom_ports(m, addr_bits, data_bits);
  return m;
}

}  // namespace detail

Module build_act_rom(const std::string& name, const std::string& what, const std::vector<std::uint32_t>& table,
                     int addr_bits, int data_bits) {
  if (table.size() != (std::size_t{1} << addr_bits)) throw std::logic_error("build_act_rom: table size");
  Module m(name, fmt::format("{}\n{} entries of {} bits, read synchronously: data_o holds the entry addressed in the\n"
                             "previous cycle. Contents written from the numerics LUT builder (also in {}.hex).",
                             what, table.size(), data_bits, name));
  const ActRomPorts ports = declare_act_rom_ports(m, addr_bits, data_bits);
  const Expr data = m.reg("data_q", data_bits, "registered ROM output");
  std::vector<std::pair<Expr, Stmts>> entries;
  entries.reserve(table.size());
  const std::uint64_t max = (std::uint64_t{1} << data_bits) - 1;
  for (std::size_t a = 0; a < table.size(); ++a) {
    if (table[a] > max) throw std::logic_error("build_act_rom: value wider than the data width");
    entries.emplace_back(lit(addr_bits, a), Stmts{nb(data, lit(data_bits, table[a]))});
  }
  m.blank();
  m.always_ff({case_(ports.addr, std::move(entries))});
  m.assign(ports.data, data);
  return m;
}

namespace {

// The radicand Y of the computed sqrt table: the address shifted left by 2*sf + 2 (or right, dropping
// low bits that cannot change the result), with a leading zero to an even width.
Expr sqrt_radicand(const Expr& addr, int sqrt_frac) {
  Expr y = addr;
  if (sqrt_frac >= -1) {
    const int shift = 2 * sqrt_frac + 2;
    if (shift > 0) y = cat({addr, lit(shift, 0)});
  } else {
    const int drop = -2 * (sqrt_frac + 1);
    if (addr.width() <= drop) throw std::logic_error("build_act_sqrt_computed: sqrt table is constant");
    y = bits(addr, addr.width() - 1, drop);
  }
  if (y.width() % 2) y = cat({bit(false), y});
  return y;
}

// The restoring square root of y, unrolled: two radicand bits per step, the remainder compared with
// 4*root + 1, one root bit per step.
Stmts restoring_sqrt(const Expr& y, const Expr& remainder, const Expr& trial, const Expr& root) {
  const int root_bits = root.width();
  Stmts body = {blk(remainder, lit(root_bits + 2, 0)), blk(root, lit(root_bits, 0))};
  for (int i = root_bits - 1; i >= 0; --i) {
    body.push_back(blk(remainder, cat({remainder.slice(root_bits - 1, 0), y.slice(2 * i + 1, 2 * i)})));
    body.push_back(blk(trial, cat({root, lit_bin(2, 1)})));
    body.push_back(if_(remainder >= trial,
                       {blk(remainder, remainder - trial), blk(root, cat({root.slice(root_bits - 2, 0), bit(true)}))},
                       {blk(root, cat({root.slice(root_bits - 2, 0), bit(false)}))}));
  }
  return body;
}

}  // namespace

// round(sqrt(a) * 2^sf) saturated to sqrt_out bits, as build_sqrt_lut defines it, for tables too
// large to store. With Y = floor(a * 4^(sf+1)) (a shift), s = floor(sqrt(Y)) = floor(2 * sqrt(a) * 2^sf)
// and round-half-up(v) = floor((floor(2v) + 1) / 2) = floor(s / 2) + (s & 1). s comes from the
// restoring (digit-by-digit) square root, unrolled in one combinational block.
Module build_act_sqrt_computed(const AccelConfig& cfg) {
  const int in_bits = cfg.norm.sqrt_in_bits, out_bits = cfg.norm.sqrt_out_bits;
  const int sqrt_frac = fx::ActParams::from_config(cfg).sqrt_frac();
  Module m(kActSqrtRomModule,
           fmt::format("sqrt table of the Norm unit, computed rather than stored ({} entries would be too many for a\n"
                       "case ROM): data = min({}, round(sqrt(addr) * 2^{})), exactly the numerics build_sqrt_lut\n"
                       "table, read synchronously (data_o holds the entry addressed in the previous cycle).\n"
                       "Restoring square root of Y = floor(addr * 4^{}) gives s = floor(2*sqrt(addr)*2^{});\n"
                       "the rounded value is floor(s/2) + s[0].",
                       std::uint64_t{1} << in_bits, (1 << out_bits) - 1, sqrt_frac, sqrt_frac + 1, sqrt_frac));
  const ActRomPorts ports = declare_act_rom_ports(m, in_bits, out_bits);
  const Expr y_value = sqrt_radicand(ports.addr, sqrt_frac);
  const int root_bits = y_value.width() / 2;
  if (root_bits < 2) throw std::logic_error("build_act_sqrt_computed: root too narrow");
  if (sqrt_frac < -1) {
    const int drop = -2 * (sqrt_frac + 1);
    m.lint_off("UNUSEDSIGNAL",
               fmt::format("the {} low address bits cannot change floor(sqrt(addr / 4^{})) (= floor(sqrt(floor(.))).", drop,
                           drop / 2));
    const Expr unused = m.wire("unused_addr", drop);
    m.lint_on("UNUSEDSIGNAL");
    m.assign(unused, bits(ports.addr, drop - 1, 0));
  }
  const Expr y = m.wire("sq_y", y_value.width(), "radicand Y");
  const Expr remainder = m.reg("sq_rem", root_bits + 2, "partial remainder");
  const Expr trial = m.reg("sq_trial", root_bits + 2, "4*root + 1");
  const Expr root = m.reg("sq_root", root_bits, "partial root; s = floor(sqrt(Y)) at the end");
  const Expr rounded = m.wire("sq_round", root_bits, "round(s / 2), half up");
  const Expr data = m.reg("data_q", out_bits, "registered output");
  m.blank();
  m.assign(y, y_value);
  m.always_comb(restoring_sqrt(y, remainder, trial, root));
  m.assign(rounded, cat({bit(false), root.slice(root_bits - 1, 1)}) + zext(root[0], root_bits));
  m.always_ff({nb(data, detail::sat_u(rounded, out_bits))});
  m.assign(ports.data, data);
  return m;
}

}  // namespace capsgen::emit
