#include "config/accel_config.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "config/memory_bounds.hpp"
#include "config/yaml_util.hpp"
#include "core/bits.hpp"
#include "core/input_error.hpp"

namespace capsgen {
namespace {

// Ranges of single fields, shared by the parser (which reports the offending value's position) and
// validate_accel_config() (which also checks configs built in code, e.g. by the explorations).
struct Limit {
  int lo, hi;
};
constexpr Limit kArrayDim{1, 64};
constexpr Limit kDataBits{2, 16};
constexpr Limit kWeightBits{2, 16};
constexpr int kMaxPsumBits = 48;
constexpr Limit kSqrtInBits{4, 20};
constexpr Limit kSqrtOutBits{2, 16};
constexpr int kMaxSquashLutBits = 16;
constexpr Limit kExpOutBits{2, 16};
constexpr Limit kAccDepth{1, 65536};
constexpr Limit kWakeup{0, 1000};
constexpr Limit kSizeKib{1, int(kMaxMemoryKib)};
constexpr Limit kBanks{1, 64};     // powers of 2
constexpr Limit kSectors{1, int(kMaxMemorySectors)};  // powers of 2
const std::vector<int> kMemWidths{8, 16, 32, 64, 128, 256};
constexpr Limit kBusBits{8, 512};  // powers of 2
constexpr Limit kMaxBurst{1, 256};
constexpr Limit kLatency{0, 10000};
constexpr double kMaxMhz = 2000.0;

const std::vector<std::string_view> kOrgNames{"sep", "smp", "hy"};
const std::vector<std::string_view> kSquashKindNames{"table", "gain"};  // SquashKind order
const std::vector<std::string_view> kSqrtKindNames{"lut", "pim-rsqrt"};             // SqrtKind order
const std::vector<std::string_view> kExpKindNames{"lut", "pim-shift"};              // ExpKind order
const std::vector<std::string_view> kDivideKindNames{"divider", "pim-reciprocal"};  // DivideKind order
const std::vector<std::string_view> kMemNames{"data", "weight", "acc", "shared"};

bool is_preset_name(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                    c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

bool is_pow2(long long v) { return v > 0 && (v & (v - 1)) == 0; }

// Which memories an organization uses (DESCNet Fig. 14).
bool org_uses(SpmOrganization org, std::string_view mem) {
  switch (org) {
    case SpmOrganization::Sep:
      return mem != "shared";
    case SpmOrganization::Smp:
      return mem == "shared";
    case SpmOrganization::Hy:
      return true;
  }
  return false;
}

const char* org_memories(SpmOrganization org) {
  switch (org) {
    case SpmOrganization::Sep:
      return "data, weight and acc";
    case SpmOrganization::Smp:
      return "shared only";
    case SpmOrganization::Hy:
      return "data, weight, acc and shared";
  }
  return "";
}

MemoryConfig& memory(ScratchpadConfig& sp, std::string_view name) {
  if (name == "data") return sp.data;
  if (name == "weight") return sp.weight;
  if (name == "acc") return sp.acc;
  return sp.shared;
}

const MemoryConfig& memory(const ScratchpadConfig& sp, std::string_view name) {
  return memory(const_cast<ScratchpadConfig&>(sp), name);
}

// Cross-field and range checks; errors point at the field's recorded location.
class Checker {
 public:
  explicit Checker(const AccelConfig& cfg) : cfg_(cfg) {}

  [[noreturn]] void fail(const std::string& field, const std::string& message) const {
    // Fall back to the closest enclosing field that has a location (e.g. a missing memory).
    std::string f = field;
    SourceLocation loc;
    while (!f.empty()) {
      auto it = cfg_.locations.find(f);
      if (it != cfg_.locations.end()) {
        loc = it->second;
        break;
      }
      const auto dot = f.rfind('.');
      f = dot == std::string::npos ? "" : f.substr(0, dot);
    }
    throw InputError(cfg_.source_path, loc.line, loc.column, field, message);
  }

  void range(const std::string& field, long long v, Limit l) const {
    if (v < l.lo || v > l.hi) fail(field, fmt::format("expected an integer in [{}, {}], got {}", l.lo, l.hi, v));
  }
  void pow2(const std::string& field, long long v, Limit l) const {
    if (v < l.lo || v > l.hi || !is_pow2(v)) {
      fail(field, fmt::format("expected a power of 2 in [{}, {}], got {}", l.lo, l.hi, v));
    }
  }
  // Range whose upper bound comes from another field, named in the message.
  void range_rel(const std::string& field, long long v, int lo, int hi, std::string_view hi_name) const {
    if (v < lo || v > hi) {
      fail(field, fmt::format("expected an integer in [{}, {}] ({} = {}), got {}", lo, hi, hi_name, hi, v));
    }
  }

 private:
  const AccelConfig& cfg_;
};

void validate_memory(const Checker& c, const std::string& field, const MemoryConfig& m) {
  c.range(field + ".size_kib", m.size_kib, kSizeKib);
  c.pow2(field + ".banks", m.banks, kBanks);
  c.pow2(field + ".sectors", m.sectors, kSectors);
  if (std::find(kMemWidths.begin(), kMemWidths.end(), m.width_bits) == kMemWidths.end()) {
    c.fail(field + ".width_bits", fmt::format("expected one of 8, 16, 32, 64, 128, 256, got {}", m.width_bits));
  }
  // Every sector of every bank must hold a whole, non-zero number of words.
  const long long bytes = static_cast<long long>(m.size_kib) * 1024;
  const long long quantum = static_cast<long long>(m.banks) * m.sectors * (m.width_bits / 8);
  if (bytes % quantum != 0) {
    c.fail(field, fmt::format("{} KiB cannot be split into {} banks x {} sectors of whole {}-bit words "
                              "(the size must be a multiple of {} bytes)",
                              m.size_kib, m.banks, m.sectors, m.width_bits, quantum));
  }
}

// offchip.dram: a path relative to the preset's directory (or absolute) of a file that exists. Its
// contents are read where the DRAM is used (dram::offchip_dram), with their own file and line.
std::string resolve_dram_path(const yaml::MapReader& offchip, const std::string& preset_path) {
  const std::string given = offchip.get_string("dram");
  if (given.empty()) offchip.fail("dram", "expected the path of a DRAM description (configs/dram/*.yaml)");
  std::filesystem::path p(given);
  if (p.is_relative()) p = std::filesystem::path(preset_path).parent_path() / p;
  p = p.lexically_normal();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(p, ec))
    offchip.fail("dram", fmt::format("no DRAM description at '{}' (resolved against the preset's directory: {})", given,
                                     p.string()));
  return p.string();
}

MemoryConfig parse_memory(const yaml::MapReader& mem) {
  mem.allow_only({"size_kib", "banks", "sectors", "width_bits"});
  MemoryConfig m;
  m.present = true;
  m.size_kib = mem.get_int("size_kib", kSizeKib.lo, kSizeKib.hi);
  m.banks = mem.get("banks").as_pow2(kBanks.lo, kBanks.hi);
  m.sectors = mem.get("sectors").as_pow2(kSectors.lo, kSectors.hi);
  m.width_bits = mem.get("width_bits").as_int_in(kMemWidths);
  return m;
}

}  // namespace

const char* to_string(SquashKind k) { return k == SquashKind::kGain ? "gain" : "table"; }
const char* to_string(SqrtKind k) { return k == SqrtKind::kPimRsqrt ? "pim-rsqrt" : "lut"; }
const char* to_string(ExpKind k) { return k == ExpKind::kPimShift ? "pim-shift" : "lut"; }
const char* to_string(DivideKind k) { return k == DivideKind::kPimReciprocal ? "pim-reciprocal" : "divider"; }

int activation_max_len(const AccelConfig& cfg) {
  return cfg.softmax.max_len > 0 ? cfg.softmax.max_len : std::max({32, cfg.array.rows, cfg.array.cols});
}

bool hy_shared_lanes(const ScratchpadConfig& s, int cols) {
  if (s.organization != SpmOrganization::Hy || !s.shared.present || s.shared.width_bits < 32) return false;
  return spm_words_spanned(cols, s.shared.width_bits / 32) <= s.shared.banks;
}

long long spm_words_spanned(long long n, int lanes) {
  if (n <= 1) return 1;
  return (n + lanes - 2) / lanes + 1;
}

const char* to_string(SpmOrganization org) {
  switch (org) {
    case SpmOrganization::Sep:
      return "sep";
    case SpmOrganization::Smp:
      return "smp";
    case SpmOrganization::Hy:
      return "hy";
  }
  return "?";
}

AccelConfig load_accel_config(const std::string& path) { return parse_accel_config(yaml::read_file(path), path); }

AccelConfig parse_accel_config(const std::string& yaml_text, const std::string& file_name) {
  AccelConfig cfg;
  cfg.source_path = file_name;
  auto sink = [&cfg](const std::string& field, yaml::Location loc) {
    cfg.locations[field] = SourceLocation{loc.line, loc.column};
  };
  const YAML::Node doc = yaml::parse(yaml_text, file_name);
  {
    const yaml::MapReader top = yaml::MapReader::root(doc, file_name, sink);
    top.allow_only({"name", "description", "array", "widths", "norm", "squash", "softmax", "accumulator",
                    "scratchpad", "offchip", "clock"});

    const yaml::Value name = top.get("name");
    cfg.name = name.as_string();
    if (!is_preset_name(cfg.name)) {
      name.fail(fmt::format("expected letters, digits, '_', '.' or '-' only, got '{}'", cfg.name));
    }
    cfg.description = top.get_string("description", "");

    {
      const yaml::MapReader a = top.get_map("array");
      a.allow_only({"rows", "cols", "pe_pipeline"});
      cfg.array.rows = a.get_int("rows", kArrayDim.lo, kArrayDim.hi);
      cfg.array.cols = a.get_int("cols", kArrayDim.lo, kArrayDim.hi);
      cfg.array.pe_pipeline = a.get_bool("pe_pipeline", false);
    }
    {
      // psum/act limits depend on other fields: validate_accel_config() checks them.
      const yaml::MapReader w = top.get_map("widths");
      w.allow_only({"data", "weight", "psum", "act"});
      cfg.widths.data = w.get_int("data", kDataBits.lo, kDataBits.hi);
      cfg.widths.weight = w.get_int("weight", kWeightBits.lo, kWeightBits.hi);
      cfg.widths.psum = w.get_int("psum");
      cfg.widths.act = w.get_int("act");
    }
    {
      const yaml::MapReader n = top.get_map("norm");
      n.allow_only({"sqrt_in_bits", "sqrt_out_bits", "sqrt_kind"});
      cfg.norm.sqrt_in_bits = n.get_int("sqrt_in_bits", kSqrtInBits.lo, kSqrtInBits.hi);
      cfg.norm.sqrt_out_bits = n.get_int("sqrt_out_bits", kSqrtOutBits.lo, kSqrtOutBits.hi);
      if (n.has("sqrt_kind")) cfg.norm.sqrt_kind = static_cast<SqrtKind>(n.get("sqrt_kind").as_enum(kSqrtKindNames));
    }
    {
      const yaml::MapReader s = top.get_map("squash");
      s.allow_only({"kind", "elem_bits", "gain_bits", "norm_bits", "out_bits", "in_frac", "norm_shift"});
      if (s.has("kind")) cfg.squash.kind = static_cast<SquashKind>(s.get("kind").as_enum(kSquashKindNames));
      if (cfg.squash.kind == SquashKind::kTable) {
        if (s.has("gain_bits")) s.fail("gain_bits", "only with kind: gain (kind: table uses elem_bits)");
        cfg.squash.elem_bits = s.get_int("elem_bits");
      } else {
        if (s.has("elem_bits")) s.fail("elem_bits", "only with kind: table (kind: gain multiplies the whole element)");
        cfg.squash.gain_bits = s.get_int("gain_bits");
      }
      cfg.squash.norm_bits = s.get_int("norm_bits");
      cfg.squash.out_bits = s.get_int("out_bits");
      cfg.squash.in_frac = s.get_int("in_frac");
      cfg.squash.norm_shift = s.get_int("norm_shift");
    }
    {
      const yaml::MapReader s = top.get_map("softmax");
      s.allow_only({"exp_in_bits", "exp_out_bits", "in_frac", "exp_kind", "exp_recovery", "divide_kind", "max_len"});
      if (s.has("max_len")) cfg.softmax.max_len = s.get_int("max_len");
      cfg.softmax.exp_in_bits = s.get_int("exp_in_bits");
      cfg.softmax.exp_out_bits = s.get_int("exp_out_bits", kExpOutBits.lo, kExpOutBits.hi);
      cfg.softmax.in_frac = s.get_int("in_frac");
      if (s.has("exp_kind")) cfg.softmax.exp_kind = static_cast<ExpKind>(s.get("exp_kind").as_enum(kExpKindNames));
      if (cfg.softmax.exp_kind == ExpKind::kPimShift) {
        cfg.softmax.exp_recovery = s.get_bool("exp_recovery");
      } else if (s.has("exp_recovery")) {
        s.fail("exp_recovery", "only with exp_kind: pim-shift (the recovery multiply belongs to the shift-based exp)");
      }
      if (s.has("divide_kind"))
        cfg.softmax.divide_kind = static_cast<DivideKind>(s.get("divide_kind").as_enum(kDivideKindNames));
    }
    {
      const yaml::MapReader acc = top.get_map("accumulator");
      acc.allow_only({"depth"});
      cfg.accumulator.depth = acc.get_int("depth", kAccDepth.lo, kAccDepth.hi);
    }
    {
      const yaml::MapReader sp = top.get_map("scratchpad");
      sp.allow_only({"organization", "power_gating", "wakeup_cycles", "data", "weight", "acc", "shared"});
      const auto org = static_cast<SpmOrganization>(sp.get("organization").as_enum(kOrgNames));
      cfg.scratchpad.organization = org;
      cfg.scratchpad.power_gating = sp.get_bool("power_gating");
      cfg.scratchpad.wakeup_cycles = sp.get_int("wakeup_cycles", kWakeup.lo, kWakeup.hi);
      for (std::string_view mem : kMemNames) {
        const bool used = org_uses(org, mem);
        if (used && !sp.has(mem)) {
          sp.fail(mem, fmt::format("missing required field (organization '{}' uses {})", to_string(org),
                                   org_memories(org)));
        }
        if (!used && sp.has(mem)) {
          sp.fail(mem, fmt::format("not allowed with organization '{}' (it uses {})", to_string(org),
                                   org_memories(org)));
        }
        if (used) memory(cfg.scratchpad, mem) = parse_memory(sp.get_map(mem));
      }
    }
    {
      const yaml::MapReader o = top.get_map("offchip");
      o.allow_only({"bus_bits", "max_burst", "latency_cycles", "dram"});
      cfg.offchip.bus_bits = o.get("bus_bits").as_pow2(kBusBits.lo, kBusBits.hi);
      cfg.offchip.max_burst = o.get_int("max_burst", kMaxBurst.lo, kMaxBurst.hi);
      cfg.offchip.latency_cycles = o.get_int("latency_cycles", kLatency.lo, kLatency.hi);
      if (o.has("dram")) cfg.offchip.dram = resolve_dram_path(o, cfg.source_path);
    }
    {
      const yaml::MapReader c = top.get_map("clock");
      c.allow_only({"target_mhz"});
      cfg.clock.target_mhz = c.get("target_mhz").as_double(0.0, kMaxMhz, /*lo_open=*/true);
    }
  }
  validate_accel_config(cfg);
  return cfg;
}

void validate_accel_config(const AccelConfig& cfg) {
  const Checker c(cfg);
  if (!is_preset_name(cfg.name)) {
    c.fail("name", fmt::format("expected letters, digits, '_', '.' or '-' only, got '{}'", cfg.name));
  }

  c.range("array.rows", cfg.array.rows, kArrayDim);
  c.range("array.cols", cfg.array.cols, kArrayDim);

  const WidthConfig& w = cfg.widths;
  c.range("widths.data", w.data, kDataBits);
  c.range("widths.weight", w.weight, kWeightBits);
  if (w.act != w.data) {
    c.fail("widths.act", fmt::format("must equal widths.data ({}): activations are the next layer's data, got {}",
                                     w.data, w.act));
  }
  if (w.act > w.weight) {
    c.fail("widths.act", fmt::format("{} bits exceed widths.weight ({}): coupling coefficients go through the "
                                     "weight path",
                                     w.act, w.weight));
  }
  // The activation unit sums up to max(32, rows, cols) squares of act-bit codes; its norm shift
  // (0 .. that sum's width) travels in the engine descriptor's 5-bit a_norm_shift field
  // (isa/engine_descriptor.cpp), so the sum may be at most 31 bits wide: act <= 13.
  {
    const int len = std::max({32, cfg.array.rows, cfg.array.cols});
    const int sum_bits = 2 * w.act - 1 + clog2(len);
    if (clog2(sum_bits + 1) > 5)
      c.fail("widths.data", fmt::format("{} bits: the activation unit's sum of {} squares is {} bits wide, and its norm "
                                        "shift must fit the engine descriptor's 5-bit field (sums of at most 31 bits: "
                                        "widths.data <= 13)",
                                        w.data, len, sum_bits));
  }
  // The column adder chain sums `rows` products without saturation, so it must not overflow.
  const int need = w.data + w.weight + clog2(cfg.array.rows);
  if (w.psum < need) {
    const std::string what = cfg.array.rows == 1
                                 ? fmt::format("a product of {}x{} bits", w.data, w.weight)
                                 : fmt::format("the sum of {} products of {}x{} bits", cfg.array.rows, w.data,
                                               w.weight);
    c.fail("widths.psum", fmt::format("{} bits cannot hold {}; need at least {}", w.psum, what, need));
  }
  if (w.psum > kMaxPsumBits) c.fail("widths.psum", fmt::format("expected at most {} bits, got {}", kMaxPsumBits, w.psum));

  const int act = w.act;
  c.range("norm.sqrt_in_bits", cfg.norm.sqrt_in_bits, kSqrtInBits);
  c.range_rel("norm.sqrt_in_bits", cfg.norm.sqrt_in_bits, kSqrtInBits.lo, 2 * act + 6, "2*widths.act+6");
  c.range("norm.sqrt_out_bits", cfg.norm.sqrt_out_bits, kSqrtOutBits);

  const SquashConfig& s = cfg.squash;
  c.range_rel("squash.norm_bits", s.norm_bits, 1, cfg.norm.sqrt_out_bits, "norm.sqrt_out_bits");
  if (s.kind == SquashKind::kGain) {
    // gain_bits >= out_bits - 1 keeps the product's rounding shift >= in_frac + 1 >= 1.
    c.range_rel("squash.gain_bits", s.gain_bits, std::max(2, s.out_bits - 1), 16, "squash.out_bits-1 .. 16");
  } else {
    c.range_rel("squash.elem_bits", s.elem_bits, 2, act, "widths.act");
  }
  if (s.kind == SquashKind::kTable && s.elem_bits + s.norm_bits > kMaxSquashLutBits) {
    c.fail("squash.norm_bits",
           fmt::format("elem_bits + norm_bits = {} exceeds {} (the squash LUT would have 2^{} entries)",
                       s.elem_bits + s.norm_bits, kMaxSquashLutBits, s.elem_bits + s.norm_bits));
  }
  c.range_rel("squash.out_bits", s.out_bits, 2, act, "widths.act");
  c.range_rel("squash.in_frac", s.in_frac, 0, act + 8, "widths.act+8");
  c.range_rel("squash.norm_shift", s.norm_shift, 0, 2 * act + 6, "2*widths.act+6");
  if (s.norm_shift % 2 != 0) {
    c.fail("squash.norm_shift",
           fmt::format("must be even (the sqrt halves it into a whole shift of the norm), got {}", s.norm_shift));
  }

  const SoftmaxConfig& sm = cfg.softmax;
  c.range_rel("softmax.exp_in_bits", sm.exp_in_bits, 2, act, "widths.act");
  c.range("softmax.exp_out_bits", sm.exp_out_bits, kExpOutBits);
  // The activation units take a column's worth of results at once: at least max(rows, cols).
  if (sm.max_len != 0) c.range("softmax.max_len", sm.max_len, {std::max(cfg.array.rows, cfg.array.cols), 4096});
  c.range_rel("softmax.in_frac", sm.in_frac, 0, act + 8, "widths.act+8");

  if (sm.exp_recovery && sm.exp_kind != ExpKind::kPimShift) {
    c.fail("softmax.exp_recovery", "only with exp_kind: pim-shift (the recovery multiply belongs to the shift-based exp)");
  }

  c.range("accumulator.depth", cfg.accumulator.depth, kAccDepth);

  const ScratchpadConfig& sp = cfg.scratchpad;
  c.range("scratchpad.wakeup_cycles", sp.wakeup_cycles, kWakeup);
  for (std::string_view name : kMemNames) {
    const std::string field = "scratchpad." + std::string(name);
    const MemoryConfig& m = memory(sp, name);
    const bool used = org_uses(sp.organization, name);
    if (used && !m.present) {
      c.fail(field, fmt::format("missing required field (organization '{}' uses {})", to_string(sp.organization),
                                org_memories(sp.organization)));
    }
    if (!used && m.present) {
      c.fail(field, fmt::format("not allowed with organization '{}' (it uses {})", to_string(sp.organization),
                                org_memories(sp.organization)));
    }
    if (m.present) validate_memory(c, field, m);
  }

  c.pow2("offchip.bus_bits", cfg.offchip.bus_bits, kBusBits);
  c.range("offchip.max_burst", cfg.offchip.max_burst, kMaxBurst);
  c.range("offchip.latency_cycles", cfg.offchip.latency_cycles, kLatency);

  const double f = cfg.clock.target_mhz;
  if (!std::isfinite(f) || !(f > 0.0) || f > kMaxMhz) {
    c.fail("clock.target_mhz", fmt::format("expected a number in (0, {}], got {}", kMaxMhz, f));
  }
}

}  // namespace capsgen
