#include "pim/routing_split.hpp"

#include <stdexcept>

namespace capsgen::pim {
namespace {

double ceil_div(double a, double b) {
  const auto q = static_cast<long long>(a) / static_cast<long long>(b);
  return double(q + (static_cast<long long>(a) % static_cast<long long>(b) != 0));
}

}  // namespace

const char* to_string(Split s) {
  switch (s) {
    case Split::kB:
      return "B";
    case Split::kL:
      return "L";
    case Split::kH:
      return "H";
  }
  return "?";
}

double Device::alpha() const { return 1.0 / (double(pes_per_vault) * freq_mhz * 1e6); }
double Device::beta() const { return 1.0 / (link_gbs * 1e9); }

Device hmc_gen3(double freq_mhz) {
  Device d;
  d.freq_mhz = freq_mhz;
  return d;
}

// Eq. 7: E_B = ceil(N_B/N_vault) N_L N_H [(4I - 1) C_H + 2 C_L C_H - I].
double work_b(const RoutingShape& r, int vaults) {
  const double I = r.iterations, CH = r.h_dim, CL = r.l_dim;
  return ceil_div(r.batch, vaults) * r.l_caps * r.h_caps * ((4 * I - 1) * CH + 2 * CL * CH - I);
}

// Eq. 9: E_L = N_B ceil(N_L/N_vault) N_H [2I(2 C_H - 1) + C_H (2 C_L - 1)].
double work_l(const RoutingShape& r, int vaults) {
  const double I = r.iterations, CH = r.h_dim, CL = r.l_dim;
  return double(r.batch) * ceil_div(r.l_caps, vaults) * r.h_caps * (2 * I * (2 * CH - 1) + CH * (2 * CL - 1));
}

// Eq. 11: E_H = N_B N_L ceil(N_H/N_vault) C_H [2 C_L - 1 + 2I].
double work_h(const RoutingShape& r, int vaults) {
  const double I = r.iterations, CH = r.h_dim, CL = r.l_dim;
  return double(r.batch) * r.l_caps * ceil_div(r.h_caps, vaults) * CH * (2 * CL - 1 + 2 * I);
}

// Eq. 8: gathering the pre-aggregated b_ij and scattering c_ij, per iteration.
double move_b(const RoutingShape& r, const Device& d) {
  const double n = double(d.vaults - 1) * r.l_caps * r.h_caps;
  return r.iterations * (n * (d.value_bytes + d.packet_bytes) + n * (d.value_bytes + d.packet_bytes));
}

// Eq. 10: all-reducing s_j^k and broadcasting v_j^k (C_H-vectors), per iteration.
double move_l(const RoutingShape& r, const Device& d) {
  const double n = double(r.batch) * (d.vaults - 1) * r.h_caps;
  const double vec = double(r.h_dim) * d.value_bytes + d.packet_bytes;
  return r.iterations * (n * vec + n * vec);
}

// Eq. 12: all-reducing b_ij and broadcasting c_ij, per iteration.
double move_h(const RoutingShape& r, const Device& d) {
  const double pkt = d.value_bytes + d.packet_bytes;
  return r.iterations * (double(d.vaults - 1) * r.l_caps * pkt + double(r.l_caps) * pkt);
}

Device array_device(int rows, int cols, int act_bits, double clock_mhz) {
  Device d;
  d.vaults = cols;
  d.pes_per_vault = 2 * rows;
  d.freq_mhz = clock_mhz;
  d.value_bytes = (act_bits + 7) / 8;
  d.packet_bytes = 0;
  d.link_gbs = double(d.value_bytes) * clock_mhz * 1e6 / 1e9;
  return d;
}

SplitCost evaluate(const RoutingShape& r, const Device& d, Split s) {
  if (r.batch < 1 || r.l_caps < 1 || r.h_caps < 1 || r.iterations < 1 || r.l_dim < 1 || r.h_dim < 1)
    throw std::invalid_argument("pim::evaluate: every routing dimension must be >= 1 (" + r.name + ")");
  if (d.vaults < 1 || d.pes_per_vault < 1 || !(d.freq_mhz > 0) || !(d.link_gbs > 0))
    throw std::invalid_argument("pim::evaluate: vaults, PEs, clock and bandwidth must be positive");
  SplitCost c;
  c.split = s;
  switch (s) {
    case Split::kB:
      c.e_ops = work_b(r, d.vaults);
      c.m_bytes = move_b(r, d);
      break;
    case Split::kL:
      c.e_ops = work_l(r, d.vaults);
      c.m_bytes = move_l(r, d);
      break;
    case Split::kH:
      c.e_ops = work_h(r, d.vaults);
      c.m_bytes = move_h(r, d);
      break;
  }
  c.seconds = d.alpha() * c.e_ops + d.beta() * c.m_bytes;
  c.score = 1.0 / c.seconds;
  return c;
}

Choice choose(const RoutingShape& r, const Device& d) {
  Choice ch;
  for (Split s : {Split::kB, Split::kL, Split::kH}) ch.costs[std::size_t(s)] = evaluate(r, d, s);
  for (Split s : {Split::kL, Split::kH})
    if (ch.costs[std::size_t(s)].score > ch.costs[std::size_t(ch.best)].score) ch.best = s;
  return ch;
}

const std::vector<RoutingShape>& table1() {
  // name, N_B, N_L, N_H, I (Table 1).
  static const std::vector<RoutingShape> t{
      {"Caps-MN1", 100, 1152, 10, 3}, {"Caps-MN2", 200, 1152, 10, 3}, {"Caps-MN3", 300, 1152, 10, 3},
      {"Caps-CF1", 100, 2304, 11, 3}, {"Caps-CF2", 100, 3456, 11, 3}, {"Caps-CF3", 100, 4608, 11, 3},
      {"Caps-EN1", 100, 1152, 26, 3}, {"Caps-EN2", 100, 1152, 47, 3}, {"Caps-EN3", 100, 1152, 62, 3},
      {"Caps-SV1", 100, 576, 10, 3},  {"Caps-SV2", 100, 576, 10, 6},  {"Caps-SV3", 100, 576, 10, 9},
  };
  return t;
}

const RoutingShape& table1(const std::string& name) {
  for (const RoutingShape& r : table1())
    if (r.name == name) return r;
  throw std::out_of_range("pim::table1: no benchmark '" + name + "'");
}

const std::vector<PaperChoice>& paper_choices() {
  static const std::vector<PaperChoice> c{
      {"Caps-SV3", 312.5, Split::kL},  // section 6.4: "the L-dimension distribution can achieve the best
      {"Caps-SV3", 937.5, Split::kH},  // performance under 312.5MHz ... the H-dimension ... 937.5MHz"
  };
  return c;
}

}  // namespace capsgen::pim
