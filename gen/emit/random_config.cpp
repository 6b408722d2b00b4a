#include "emit/random_config.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "emit/design.hpp"

namespace capsgen::emit {
namespace {

// splitmix64: tiny, portable, and the same on every platform (unlike std:: distributions).
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  int uniform(int lo, int hi) { return lo + static_cast<int>(next() % static_cast<std::uint64_t>(hi - lo + 1)); }
  bool chance(int percent) { return uniform(0, 99) < percent; }
  int pow2(int lo_log, int hi_log) { return 1 << uniform(lo_log, hi_log); }

 private:
  std::uint64_t s_;
};

int array_dim(Rng& r) {
  const int p = r.uniform(0, 99);
  if (p < 60) return r.uniform(1, 4);
  if (p < 90) return r.uniform(5, 8);
  return r.uniform(9, 32);
}

std::string memory(Rng& r) {
  const int banks = r.pow2(0, 3);
  const int sectors = r.pow2(0, 3);
  const int width = 8 << r.uniform(0, 5);  // 8..256
  const long long quantum = static_cast<long long>(banks) * sectors * width / 8;  // bytes, a power of 2
  const int unit_kib = static_cast<int>(std::max<long long>(1, quantum / 1024));
  const int size = unit_kib * r.uniform(1, 16);
  return fmt::format("{{size_kib: {}, banks: {}, sectors: {}, width_bits: {}}}", size, banks, sectors, width);
}

// PIM-CapsNet's approximations in place of the exp ROM, the softmax divider and the sqrt ROM
// (docs/pim-capsnet.md): each with probability kPimPercent, the recovery multiply half of the time with
// the shift exp. Drawn from a stream of their own, so that every other field of a seed is what it was
// before these were drawn.
constexpr int kPimPercent = 30;

struct PimKinds {
  bool exp = false, recovery = false, divide = false, sqrt = false;
};

PimKinds pim_kinds(std::uint64_t seed) {
  Rng r(seed * 0x9E3779B97F4A7C15ull + 0x50494dull);
  PimKinds k;
  k.exp = r.chance(kPimPercent);
  k.recovery = r.chance(50) && k.exp;
  k.divide = r.chance(kPimPercent);
  k.sqrt = r.chance(kPimPercent);
  return k;
}

}  // namespace

std::string random_accel_config_yaml(std::uint64_t seed) {
  Rng r(seed * 0x2545F4914F6CDD1Dull + 1);
  const int rows = array_dim(r);
  const int cols = r.chance(50) ? rows : array_dim(r);
  const bool pipe = r.chance(50);
  const int data = r.uniform(4, 12);
  const int weight = r.uniform(data, 12);  // act (= data) must not exceed weight
  const int need = data + weight + clog2(rows);
  const int psum = r.uniform(need, need + 6);
  const int act = data;
  const int sqrt_in = r.uniform(4, std::min(20, 2 * act + 6));
  const int sqrt_out = r.uniform(2, 12);
  const int elem = r.uniform(2, act);
  const int norm_bits = r.uniform(1, std::min(sqrt_out, 16 - elem));
  const int sq_out = r.uniform(2, act);
  const int sq_frac = r.uniform(0, act);
  const int norm_shift = 2 * r.uniform(0, 3);
  const int exp_in = r.uniform(2, act);
  const int exp_out = r.uniform(2, 12);
  const int sm_frac = r.uniform(0, act);
  const int depth = r.chance(50) ? r.pow2(1, 8) : r.uniform(3, 300);
  const int org = r.uniform(0, 2);
  const char* org_name = org == 0 ? "sep" : (org == 1 ? "smp" : "hy");
  const PimKinds pim = pim_kinds(seed);

  std::string y;
  y += fmt::format("# Random accelerator config, seed {} (capsgen generate --random-config {}).\n", seed, seed);
  y += fmt::format("name: random-{}\n", seed);
  y += "description: seeded random config for the RTL block-test sweep\n";
  y += fmt::format("array:\n  rows: {}\n  cols: {}\n  pe_pipeline: {}\n", rows, cols, pipe ? "true" : "false");
  y += fmt::format("widths:\n  data: {}\n  weight: {}\n  psum: {}\n  act: {}\n", data, weight, psum, act);
  y += fmt::format("norm:\n  sqrt_in_bits: {}\n  sqrt_out_bits: {}\n", sqrt_in, sqrt_out);
  if (pim.sqrt) y += "  sqrt_kind: pim-rsqrt\n";
  // Even seeds get the gain squash (decided without drawing, so every other field of a seed is as
  // before the gain kind existed).
  if (seed % 2 == 0) {
    const int gain_bits = std::min(16, std::max(2, sq_out - 1) + int((seed / 2) % 4));
    y += fmt::format("squash:\n  kind: gain\n  gain_bits: {}\n", gain_bits);
  } else {
    y += fmt::format("squash:\n  elem_bits: {}\n", elem);
  }
  y += fmt::format("  norm_bits: {}\n  out_bits: {}\n  in_frac: {}\n  norm_shift: {}\n", norm_bits, sq_out, sq_frac,
                   norm_shift);
  y += fmt::format("softmax:\n  exp_in_bits: {}\n  exp_out_bits: {}\n  in_frac: {}\n", exp_in, exp_out, sm_frac);
  if (pim.exp) y += fmt::format("  exp_kind: pim-shift\n  exp_recovery: {}\n", pim.recovery ? "true" : "false");
  if (pim.divide) y += "  divide_kind: pim-reciprocal\n";
  y += fmt::format("accumulator:\n  depth: {}\n", depth);
  y += fmt::format("scratchpad:\n  organization: {}\n  power_gating: {}\n  wakeup_cycles: {}\n", org_name,
                   r.chance(50) ? "true" : "false", r.uniform(0, 8));
  if (org != 1) {
    y += "  data: " + memory(r) + "\n";
    y += "  weight: " + memory(r) + "\n";
    y += "  acc: " + memory(r) + "\n";
  }
  if (org != 0) y += "  shared: " + memory(r) + "\n";
  y += fmt::format("offchip:\n  bus_bits: {}\n  max_burst: {}\n  latency_cycles: {}\n", 8 << r.uniform(0, 4),
                   r.uniform(1, 32), r.uniform(0, 50));
  y += fmt::format("clock:\n  target_mhz: {}\n", 50 + 10 * r.uniform(0, 35));
  return y;
}

}  // namespace capsgen::emit
