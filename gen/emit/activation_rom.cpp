// LUT ROMs of the activation unit: contents from the numerics LUT builders, emitted as `case` ROMs
// with a registered output (Verilator, Icarus and Yosys all accept them; Yosys' proc_rom turns
// them into ROM cells that FPGA flows map to block RAM and ASIC flows to logic), plus .hex images.
#include <fmt/format.h>

#include <stdexcept>

#include "emit/activation.hpp"
#include "emit/activation_internal.hpp"
#include "numerics/activation.hpp"

namespace capsgen::emit {

using detail::lit;

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

Module build_act_rom(const std::string& name, const std::string& what, const std::vector<std::uint32_t>& table,
                     int addr_bits, int data_bits) {
  if (table.size() != (std::size_t{1} << addr_bits)) throw std::logic_error("build_act_rom: table size");
  Module m(name, fmt::format("{}\n{} entries of {} bits, read synchronously: data_o holds the entry addressed in the\n"
                             "previous cycle. Contents written from the numerics LUT builder (also in {}.hex).",
                             what, table.size(), data_bits, name));
  m.input("clk_i", "1", "clock");
  m.input("addr_i", str(addr_bits), "entry address");
  m.output("data_o", str(data_bits), "entry addressed in the previous cycle");
  m.reg("data_q", str(data_bits), "registered ROM output");
  std::vector<std::pair<std::string, Stmts>> cases;
  cases.reserve(table.size());
  const std::uint64_t max = (std::uint64_t{1} << data_bits) - 1;
  for (std::size_t a = 0; a < table.size(); ++a) {
    if (table[a] > max) throw std::logic_error("build_act_rom: value wider than the data width");
    cases.emplace_back(lit(addr_bits, static_cast<long long>(a)), Stmts{nb("data_q", lit(data_bits, table[a]))});
  }
  m.blank();
  m.always_ff({case_("addr_i", std::move(cases))});
  m.assign("data_o", "data_q");
  return m;
}

// round(sqrt(a) * 2^sf) saturated to sqrt_out bits, as build_sqrt_lut defines it, for tables too
// large to store. With Y = floor(a * 4^(sf+1)) (a shift), s = floor(sqrt(Y)) = floor(2 * sqrt(a) * 2^sf)
// and round-half-up(v) = floor((floor(2v) + 1) / 2) = floor(s / 2) + (s & 1). s comes from the
// restoring (digit-by-digit) square root, unrolled in one combinational block.
Module build_act_sqrt_computed(const AccelConfig& cfg) {
  const int in = cfg.norm.sqrt_in_bits, out = cfg.norm.sqrt_out_bits;
  const int sf = fx::ActParams::from_config(cfg).sqrt_frac();
  std::string y;
  int yw = 0;
  if (sf >= -1) {
    const int sh = 2 * sf + 2;
    yw = in + sh;
    y = sh == 0 ? "addr_i" : fmt::format("{{addr_i, {}'d0}}", sh);
  } else {
    const int drop = -2 * (sf + 1);
    yw = in - drop;
    if (yw < 1) throw std::logic_error("build_act_sqrt_computed: sqrt table is constant");
    y = detail::bits("addr_i", in - 1, drop);
  }
  if (yw % 2) {
    y = fmt::format("{{1'b0, {}}}", y);
    ++yw;
  }
  const int rw = yw / 2;  // root bits
  if (rw < 2) throw std::logic_error("build_act_sqrt_computed: root too narrow");
  Module m(kActSqrtRomModule,
           fmt::format("sqrt table of the Norm unit, computed rather than stored ({} entries would be too many for a\n"
                       "case ROM): data = min({}, round(sqrt(addr) * 2^{})), exactly the numerics build_sqrt_lut\n"
                       "table, read synchronously (data_o holds the entry addressed in the previous cycle).\n"
                       "Restoring square root of Y = floor(addr * 4^{}) gives s = floor(2*sqrt(addr)*2^{});\n"
                       "the rounded value is floor(s/2) + s[0].",
                       std::uint64_t{1} << in, (1 << out) - 1, sf, sf + 1, sf));
  m.input("clk_i", "1", "clock");
  m.input("addr_i", str(in), "entry address");
  m.output("data_o", str(out), "entry addressed in the previous cycle");
  if (sf < -1) {
    const int drop = -2 * (sf + 1);
    m.lint_off("UNUSEDSIGNAL",
               fmt::format("the {} low address bits cannot change floor(sqrt(addr / 4^{})) (= floor(sqrt(floor(.))).", drop,
                           drop / 2));
    m.wire("unused_addr", str(drop));
    m.lint_on("UNUSEDSIGNAL");
    m.assign("unused_addr", detail::bits("addr_i", drop - 1, 0));
  }
  m.wire("sq_y", str(yw), "radicand Y");
  m.reg("sq_rem", str(rw + 2), "partial remainder");
  m.reg("sq_trial", str(rw + 2), "4*root + 1");
  m.reg("sq_root", str(rw), "partial root; s = floor(sqrt(Y)) at the end");
  m.wire("sq_round", str(rw), "round(s / 2), half up");
  m.reg("data_q", str(out), "registered output");
  m.blank();
  m.assign("sq_y", y);
  Stmts body = {blk("sq_rem", lit(rw + 2, 0)), blk("sq_root", lit(rw, 0))};
  for (int i = rw - 1; i >= 0; --i) {
    body.push_back(blk("sq_rem", fmt::format("{{sq_rem[{}:0], sq_y[{}:{}]}}", rw - 1, 2 * i + 1, 2 * i)));
    body.push_back(blk("sq_trial", "{sq_root, 2'b01}"));
    body.push_back(if_("sq_rem >= sq_trial",
                       {blk("sq_rem", "sq_rem - sq_trial"), blk("sq_root", fmt::format("{{sq_root[{}:0], 1'b1}}", rw - 2))},
                       {blk("sq_root", fmt::format("{{sq_root[{}:0], 1'b0}}", rw - 2))}));
  }
  m.always_comb(body);
  m.assign("sq_round", fmt::format("{{1'b0, sq_root[{}:1]}} + {}", rw - 1, detail::zext("sq_root[0]", 1, rw)));
  m.always_ff({nb("data_q", detail::sat_u("sq_round", rw, out))});
  m.assign("data_o", "data_q");
  return m;
}

}  // namespace capsgen::emit
