#include "emit/memsys.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <stdexcept>

#include "core/input_error.hpp"
#include "emit/activation.hpp"
#include "emit/activation_internal.hpp"
#include "emit/gather.hpp"
#include "emit/scratchpad.hpp"

namespace capsgen::emit {

namespace {

int log2_exact(long long v) {
  const int k = clog2(v);
  if ((1LL << k) != v) throw std::logic_error("memsys: not a power of 2");
  return k;
}

// The first unsupported property of the preset, as (field, message); empty field: supported.
std::pair<std::string, std::string> unsupported(const AccelConfig& cfg) {
  const ScratchpadConfig& s = cfg.scratchpad;
  const bool smp = s.organization == SpmOrganization::Smp;
  if (smp && s.shared.width_bits < kMemsysPsumLaneBits)
    return {"scratchpad.shared.width_bits",
            fmt::format("capsgen_memsys keeps SMP's psum codes in {}-bit lanes of the shared memory's words: {}-bit words "
                        "hold none (docs/memory-system.md 2.2)",
                        kMemsysPsumLaneBits, s.shared.width_bits)};
  const bool hy = s.organization == SpmOrganization::Hy;
  const ActGeometry ag = act_geometry(cfg);
  const int lane = kMemsysElementLaneBits;
  if (cfg.widths.data > lane)
    return {"widths.data", fmt::format("capsgen_memsys stores one data code per {}-bit lane: {} bits do not fit", lane,
                                       cfg.widths.data)};
  if (cfg.widths.weight > lane)
    return {"widths.weight", fmt::format("capsgen_memsys stores one weight code per {}-bit lane: {} bits do not fit",
                                         lane, cfg.widths.weight)};
  if (cfg.widths.act > lane)
    return {"widths.act", fmt::format("capsgen_memsys stores one result code per {}-bit lane: act codes of {} bits do "
                                      "not fit",
                                      lane, cfg.widths.act)};
  if (ag.out_bits > lane)
    return {"norm.sqrt_out_bits",
            fmt::format("capsgen_memsys stores one result code per {}-bit lane: the engine's results are "
                        "max(act, sqrt_out) = {} bits (norm codes of {} bits do not fit)",
                        lane, ag.out_bits, ag.sqrt_out)};
  if (cfg.widths.psum > kMemsysPsumLaneBits)
    return {"widths.psum", fmt::format("capsgen_memsys stores one psum code per {}-bit lane: {} bits do not fit",
                                       kMemsysPsumLaneBits, cfg.widths.psum)};
  if (!smp && s.acc.width_bits < kMemsysPsumLaneBits)
    return {"scratchpad.acc.width_bits",
            fmt::format("capsgen_memsys needs acc words of at least {} bits (one psum code per 32-bit lane), got {}",
                        kMemsysPsumLaneBits, s.acc.width_bits)};
  struct Access {
    const char* port;
    const char* field;
    const MemoryConfig* mem;
    int lane_bits;
    int n;
    const char* what;
  };
  std::vector<Access> acc;
  if (smp) {
    acc.push_back({"brd (bias row)", "scratchpad.shared.banks", &s.shared, kMemsysPsumLaneBits, cfg.array.cols, "array.cols"});
  } else {
    acc = {{"drd (vector read)", "scratchpad.data.banks", &s.data, lane, cfg.array.rows, "array.rows"},
           {"wr (record write)", "scratchpad.data.banks", &s.data, lane, cfg.array.cols, "array.cols"},
           {"wrd (tile row)", "scratchpad.weight.banks", &s.weight, lane, cfg.array.cols, "array.cols"},
           {"brd (bias row)", "scratchpad.acc.banks", &s.acc, kMemsysPsumLaneBits, cfg.array.cols, "array.cols"}};
  }
  if (hy || smp) {  // the shared memory takes drd vectors, wr records and tile rows too
    acc.push_back({"drd (vector read)", "scratchpad.shared.banks", &s.shared, lane, cfg.array.rows, "array.rows"});
    acc.push_back({"wr (record write)", "scratchpad.shared.banks", &s.shared, lane, cfg.array.cols, "array.cols"});
    acc.push_back({"wrd (tile row)", "scratchpad.shared.banks", &s.shared, lane, cfg.array.cols, "array.cols"});
  }
  for (const Access& a : acc) {
    const int lanes = a.mem->width_bits / a.lane_bits;
    const long long span = memsys_words_spanned(a.n, lanes);
    if (span > a.mem->banks)
      return {a.field, fmt::format("capsgen_memsys reads or writes the words of one {} in one cycle: {} = {} consecutive "
                                   "elements span up to {} words of {} elements, more than the {} bank{} (need at "
                                   "least {} banks or wider words)",
                                   a.port, a.what, a.n, span, lanes, a.mem->banks, a.mem->banks == 1 ? "" : "s", span)};
  }
  return {"", ""};
}

// Bits [hi:lo] of a signal, one bit printed as a bit select (v[hi]).
Expr bits(const Expr& v, int hi, int lo) { return hi == lo ? v[hi] : v.slice(hi, lo); }

// Bit i of a vector, or the signal itself when it has one bit.
Expr bit_or_whole(const Expr& v, int i) { return v.width() == 1 ? v : v[i]; }

// Part i of `width` bits of a vector (the whole signal when it has one part).
Expr part_or_whole(const Expr& v, int i, int width) { return width == v.width() ? v : v.part(i, width); }

// An all-ones constant {W{1'b1}}.
Expr ones(int width) { return rep(width, bit(true)); }

// {sector, offset} of bank row `row` (a wire of mm.row_bits bits; none when row_bits == 0) for the
// memory's per-bank address port.
Expr row_to_addr(const MemsysMemory& mm, const std::optional<Expr>& row) {
  const SpmGeometry& g = mm.g;
  const int sector_bits = g.sector_bits, offset_bits = g.offset_bits, row_bits = mm.row_bits, sectors = g.mem.sectors;
  const long long words_per_sector = g.words_per_sector;
  if (row_bits == 0) return lit(g.addr_bits, 0);
  if ((1LL << clog2(words_per_sector)) == words_per_sector) {
    const int k = clog2(words_per_sector);
    const Expr offset = k > 0 ? bits(*row, k - 1, 0) : bit(false);
    if (sector_bits == 0) return offset;
    if (k == 0) return cat({*row, offset});
    return cat({bits(*row, row_bits - 1, k), offset});
  }
  if (sectors == 1) return *row;  // row_bits == offset_bits
  // Sector = number of sector starts <= row; offset = row - start, exact in offset_bits bits (< words per sector).
  std::vector<std::pair<Expr, Expr>> sector_of, offset_of;
  const Expr low = bits(*row, offset_bits - 1, 0);
  for (int s = sectors - 1; s >= 1; --s) {
    const Expr from_here = *row >= lit(row_bits, s * words_per_sector);
    sector_of.emplace_back(from_here, lit(sector_bits, s));
    offset_of.emplace_back(from_here, low - lit(offset_bits, (s * words_per_sector) % (1LL << offset_bits)));
  }
  return cat({paren(ternary_chain(sector_of, lit(sector_bits, 0))), paren(ternary_chain(offset_of, low))});
}

}  // namespace

long long memsys_words_spanned(long long n, int lanes) { return spm_words_spanned(n, lanes); }

std::string memsys_unsupported_reason(const AccelConfig& cfg) {
  const auto [field, msg] = unsupported(cfg);
  return field.empty() ? "" : field + ": " + msg;
}

MemsysGeometry memsys_geometry(const AccelConfig& cfg) {
  const auto [field, msg] = unsupported(cfg);
  if (!field.empty()) {
    const auto it = cfg.locations.find(field);
    throw InputError(cfg.source_path.empty() ? cfg.name : cfg.source_path, it == cfg.locations.end() ? 0 : it->second.line,
                     it == cfg.locations.end() ? 0 : it->second.column, field, msg);
  }
  MemsysGeometry mg;
  mg.smp = cfg.scratchpad.organization == SpmOrganization::Smp;
  // HY (docs/memory-system.md 2.1): the shared memory's 32-bit lanes are a fifth range, `lanes`, after
  // its bytes, where the acc buffers that do not fit the acc memory go.
  const bool lanes = hy_shared_lanes(cfg.scratchpad, cfg.array.cols);
  std::vector<std::pair<SpmGeometry, std::string>> ranges;  // (geometry named as the range, scratchpad)
  for (const SpmGeometry& g : spm_memories(cfg)) {
    SpmGeometry v = g;
    if (mg.smp) {  // the acc view first: elements [0, S/4), then the bytes
      v.name = "acc";
      ranges.push_back({v, g.name});
    }
    ranges.push_back({g, g.name});
    if (lanes && g.name == "shared") {
      v.name = "lanes";
      ranges.push_back({v, g.name});
    }
  }
  long long elem = 0;
  for (const auto& [g, phys] : ranges) {
    MemsysMemory m;
    m.g = g;
    m.phys = phys;
    m.lane_bits = g.name == "acc" || g.name == "lanes" ? kMemsysPsumLaneBits : kMemsysElementLaneBits;
    m.lanes = g.mem.width_bits / m.lane_bits;
    m.words = static_cast<long long>(g.mem.banks) * g.mem.sectors * g.words_per_sector;
    m.elements = m.words * m.lanes;
    m.elem_base = elem;
    m.lane_log = log2_exact(m.lanes);
    m.bank_log = log2_exact(g.mem.banks);
    m.row_bits = clog2(static_cast<long long>(g.mem.sectors) * g.words_per_sector);
    elem += m.elements;
    mg.spm_data_bits = std::max(mg.spm_data_bits, g.mem.width_bits);
    mg.mems.push_back(m);
  }
  mg.total_elements = elem;
  mg.addr_bits = kGatherAddrBits;
  mg.spm_addr_bits = std::max(1, clog2(elem));
  if (mg.spm_addr_bits != memsys_element_addr_bits(cfg)) throw std::logic_error("memsys: element space differs from the DMA's");
  mg.spm_max_size = log2_exact(mg.spm_data_bits / 8);
  mg.spm_size_bits = std::max(1, clog2(static_cast<long long>(mg.spm_max_size) + 1));
  if (elem >= (1LL << (mg.addr_bits - 1))) throw std::logic_error("memsys: element space too large");
  mg.rows = cfg.array.rows;
  mg.cols = cfg.array.cols;
  mg.data = cfg.widths.data;
  mg.weight = cfg.widths.weight;
  mg.psum = cfg.widths.psum;
  mg.out_bits = act_geometry(cfg).out_bits;
  return mg;
}

int memsys_element_addr_bits(const AccelConfig& cfg) {
  long long elem = 0;
  for (const SpmGeometry& g : spm_memories(cfg)) {
    const int lane_bits = g.name == "acc" ? kMemsysPsumLaneBits : kMemsysElementLaneBits;
    const long long words = static_cast<long long>(g.mem.banks) * g.mem.sectors * g.words_per_sector;
    elem += words * std::max(1, g.mem.width_bits / lane_bits);
    // SMP: the shared memory's 32-bit lanes are a second range of the element space (the acc view);
    // HY: the same, the lanes range, when the words and banks hold bias rows of lanes.
    if (cfg.scratchpad.organization == SpmOrganization::Smp ||
        (g.name == "shared" && hy_shared_lanes(cfg.scratchpad, cfg.array.cols)))
      elem += words * std::max(1, g.mem.width_bits / kMemsysPsumLaneBits);
  }
  return std::max(1, clog2(elem));
}

int memsys_dma_lanes(const MemsysMemory& m, int size) {
  if (size < 0 || size > 30) return 0;
  const long long bytes = 1LL << size, lane_bytes = m.lane_bits / 8;
  if (bytes < lane_bytes || bytes > m.g.mem.width_bits / 8) return 0;
  return static_cast<int>(bytes / lane_bytes);
}

namespace {
MemsysLocation locate(const MemsysMemory& m, int index, long long rel_word, long long lane) {
  MemsysLocation l;
  l.memory = index;
  l.word = rel_word;
  l.lane = lane;
  l.bank = rel_word % m.g.mem.banks;
  l.row = rel_word / m.g.mem.banks;
  l.sector = l.row / m.g.words_per_sector;
  l.offset = l.row % m.g.words_per_sector;
  return l;
}
}  // namespace

MemsysLocation memsys_locate_element(const MemsysGeometry& g, long long addr) {
  for (std::size_t i = 0; i < g.mems.size(); ++i) {
    const MemsysMemory& m = g.mems[i];
    if (addr >= m.elem_base && addr < m.elem_base + m.elements) {
      const long long rel = addr - m.elem_base;
      return locate(m, static_cast<int>(i), rel / m.lanes, rel % m.lanes);
    }
  }
  return {};
}

namespace {

// The organization's choices every part of capsgen_memsys depends on.
struct MemsysOrg {
  const MemsysGeometry& mg;
  bool pg;   // scratchpad power gating: sleep ports, a DMA access waits for a usable sector
  // HY: the shared memory is mems[3], three ports per bank: p0 drd, p1 wrd and wr, p2 the DMA.
  // SMP: mems = {acc view, shared}, one scratchpad: p0 drd, p1 wrd and wr, p2 brd and the DMA.
  bool smp;
  bool hy;
  // The range of the shared memory's 32-bit lanes (SMP: acc, HY: lanes; "" when none) and the brd
  // decoder that reads it through the scratchpad's port p2 (SMP: brd itself, HY: brs).
  std::string lview;
  std::string p2brd;
};

MemsysOrg memsys_org(const AccelConfig& cfg, const MemsysGeometry& mg) {
  const bool smp = mg.smp;
  const bool hy = !smp && mg.index("shared") >= 0;
  const std::string lview = smp ? "acc" : mg.index("lanes") >= 0 ? "lanes" : "";
  const std::string p2brd = smp ? "brd" : lview.empty() ? "" : "brs";
  return MemsysOrg{mg, cfg.scratchpad.power_gating, smp, hy, lview, p2brd};
}

// The address map of the module's description: one line per memory (range of the element space).
std::string address_map_text(const MemsysGeometry& mg) {
  std::string map;
  for (const MemsysMemory& m : mg.mems)
    map += fmt::format("  {:<6} elements [{}, {}) ({}-bit lanes, {} per word): {} bank{} x {} sector{} x {} words x {} bits\n",
                       m.g.name, m.elem_base, m.elem_base + m.elements, m.lane_bits, m.lanes, m.g.mem.banks,
                       m.g.mem.banks == 1 ? "" : "s", m.g.mem.sectors, m.g.mem.sectors == 1 ? "" : "s",
                       m.g.words_per_sector, m.g.mem.width_bits);
  return map;
}

// What a power-gated memory adds to the DMA's grant condition ("" without power gating).
std::string sector_wait_text(const MemsysOrg& org) {
  return org.pg ? " or when the word's sector is not usable (its sleep_ack is high)" : "";
}

// The module's description, one per organization.
std::string sep_description(const MemsysOrg& org) {
  const MemsysGeometry& mg = org.mg;
  return fmt::format(
      "Memory system, SEP organization (docs/rtl-memsys.md): the data, weight and acc scratchpads\n"
      "(capsgen_spm_*, one port per bank) behind the compute engine's memory ports and the DMA's SPM port.\n"
      "Address map (element a of a memory: word (a - base) / E, lane (a - base) % E, bank word % B,\n"
      "bank row word / B = {{sector, word in sector}}):\n"
      "{}"
      "Engine reads (drd -> data, wrd -> weight, brd -> acc) have priority and a fixed latency: data in\n"
      "the cycle after the enable; a vector/row access reads every bank it spans in one cycle and rotates\n"
      "lanes. drd: 1 element in lane 0 (the other lanes 0) or {} with drd_vec_i; wrd: {} weight codes;\n"
      "brd: {} psum codes (the low {} bits of each 32-bit lane). Codes are the low bits of their lanes.\n"
      "wr -> data or weight (the memory holding wr_addr_i; else dropped): 1 result in lane 0, or with\n"
      "wr_vec_i lane c at wr_addr_i + c where wr_mask_i[c]; result codes ({} bits) are stored sign-extended\n"
      "to 8 bits with byte-lane write enables. The write happens in a cycle with wr_en_i & wr_ready_o;\n"
      "wr_ready_o is low exactly when the same memory's read of the same cycle (drd for data, wrd for\n"
      "weight) uses a bank the write needs (it depends combinationally on drd_*, wrd_* and wr_*).\n"
      "DMA (spm_*): an element address in the same space and a size (2^spm_size_i bytes, the low bytes of\n"
      "spm_wdata_i / spm_rdata_o); a write of n lanes writes lanes [lane, lane + n) of the word with byte\n"
      "enables, a read returns the word shifted down by the lane, zeros above the access's bytes (in the\n"
      "cycle after the grant, spm_rvalid_o). Lowest priority: spm_gnt_o is low when the engine reads or\n"
      "writes that bank of that memory in the same cycle{}. An access outside the memories, crossing a\n"
      "word, not a whole number of lanes or wider than the memory's word is granted and dropped (a read\n"
      "returns 0). Out-of-range engine accesses (any element outside the port's memory) are dropped.\n"
      "err_o (sticky, registered): a dropped access or an error flag of a scratchpad (err_sticky_o).\n"
      "Counters ({} bits, wrap): bank accesses (words) per memory by the engine and by the DMA, writer\n"
      "and DMA wait cycles, bank accesses per memory and sector.",
      address_map_text(mg), mg.rows, mg.cols, mg.cols, mg.psum, mg.out_bits, sector_wait_text(org), kMemsysCounterBits);
}

std::string hy_description(const MemsysOrg& org) {
  const MemsysGeometry& mg = org.mg;
  const bool lanes = !org.lview.empty();
  return fmt::format(
      "Memory system, HY organization (docs/rtl-memsys.md): the data, weight and acc scratchpads\n"
      "(capsgen_spm_*, one port per bank) and the shared scratchpad (capsgen_spm_shared, three ports per bank:\n"
      "p0 drd, p1 wrd and wr, p2 {}the DMA) behind the compute engine's memory ports and the DMA's SPM port.\n"
      "{}"
      "Address map (element a of a memory: word (a - base) / E, lane (a - base) % E, bank word % B,\n"
      "bank row word / B = {{sector, word in sector}}):\n"
      "{}"
      "Engine reads (drd -> data or shared, wrd -> weight or shared: the memory that holds the whole access;\n"
      "brd -> acc{}) have priority and a fixed latency: data in the cycle after the enable; a vector/row access\n"
      "reads every bank it spans in one cycle and rotates lanes. drd: 1 element in lane 0 (the other lanes 0)\n"
      "or {} with drd_vec_i; wrd: {} weight codes; brd: {} psum codes (the low {} bits of each 32-bit lane).\n"
      "Codes are the low bits of their lanes.\n"
      "wr -> data, weight or shared (the memory holding wr_addr_i, every masked lane in it; else dropped):\n"
      "1 result in lane 0, or with wr_vec_i lane c at wr_addr_i + c where wr_mask_i[c]; result codes ({} bits)\n"
      "are stored sign-extended to 8 bits with byte-lane write enables. The write happens in a cycle with\n"
      "wr_en_i & wr_ready_o; wr_ready_o is low exactly when the same memory's conflicting read of the same\n"
      "cycle uses a bank the write needs: drd for data, wrd for weight, a wrd into shared for shared (both on\n"
      "port p1; a drd into shared uses p0 and never blocks the write: it reads the word before the write).\n"
      "It depends combinationally on drd_*, wrd_* and wr_*.\n"
      "DMA (spm_*): an element address in the same space and a size (2^spm_size_i bytes, the low bytes of\n"
      "spm_wdata_i / spm_rdata_o); a write of n lanes writes lanes [lane, lane + n) of the word with byte\n"
      "enables, a read returns the word shifted down by the lane, zeros above the access's bytes (in the\n"
      "cycle after the grant, spm_rvalid_o); the shared memory's DMA accesses use port p2. Lowest priority:\n"
      "spm_gnt_o is low when the engine reads or writes that bank of that memory in the same cycle (shared:\n"
      "on any port{}){}.\n"
      "An access outside the memories, crossing a word, not a whole number of lanes or wider than the memory's\n"
      "word is granted and dropped (a read returns 0). Out-of-range engine accesses (any element outside every\n"
      "memory the port reaches) are dropped.\n"
      "err_o (sticky, registered): a dropped access or an error flag of a scratchpad (err_sticky_o).\n"
      "Counters ({} bits, wrap): bank accesses (words) per memory by the engine and by the DMA, writer\n"
      "and DMA wait cycles, bank accesses per memory and sector (shared: of all three ports).",
      lanes ? "brd of the lanes range and " : "",
      lanes ? "The lanes range is the shared memory's words seen as 32-bit psum lanes: lanes element r is the\n"
              "shared bytes 4r .. 4r + 3 (acc buffers that do not fit the acc memory).\n"
            : "",
      address_map_text(mg), lanes ? " or the shared memory's lanes, whichever holds the whole row" : "", mg.rows, mg.cols,
      mg.cols, mg.psum, mg.out_bits, lanes ? ", brd of the lanes too" : "", sector_wait_text(org), kMemsysCounterBits);
}

std::string smp_description(const MemsysOrg& org) {
  const MemsysGeometry& mg = org.mg;
  return fmt::format(
      "Memory system, SMP organization (docs/rtl-memsys.md, docs/memory-system.md 2.2): one shared scratchpad\n"
      "(capsgen_spm_shared, three ports per bank) seen as two ranges of the element space: its 32-bit lanes\n"
      "(acc: bias and init psum codes) and its bytes (shared: data, weights, results). Acc element r is the\n"
      "shared bytes 4r .. 4r + 3 (the same word, bank, row and sector).\n"
      "Address map (element a of a range: word (a - base) / E, lane (a - base) % E, bank word % B,\n"
      "bank row word / B = {{sector, word in sector}}):\n"
      "{}"
      "Ports: p0 drd, p1 wrd and wr, p2 brd and the DMA. Engine reads (drd, wrd -> shared bytes, brd -> acc\n"
      "lanes) have priority and a fixed latency: data in the cycle after the enable; a vector/row access\n"
      "reads every bank it spans in one cycle and rotates lanes. drd: 1 element in lane 0 (the other lanes 0)\n"
      "or {} with drd_vec_i; wrd: {} weight codes; brd: {} psum codes (the low {} bits of each 32-bit lane).\n"
      "wr -> shared bytes: 1 result in lane 0, or with wr_vec_i lane c at wr_addr_i + c where wr_mask_i[c];\n"
      "result codes ({} bits) are stored sign-extended to 8 bits with byte-lane write enables. wr_ready_o is\n"
      "low exactly when a wrd of the same cycle (also port p1) uses a bank the write needs; a drd (p0) never\n"
      "blocks it (it reads the word before the write). It depends combinationally on wrd_* and wr_*.\n"
      "DMA (spm_*, port p2): an element address in either range and a size (2^spm_size_i bytes, the low bytes\n"
      "of spm_wdata_i / spm_rdata_o; acc: whole 4-byte lanes); lowest priority: spm_gnt_o is low when any\n"
      "engine port uses that bank this cycle{}.\n"
      "An access outside the ranges, crossing a word, not a whole number of lanes or wider than the word is\n"
      "granted and dropped (a read returns 0). Out-of-range engine accesses are dropped.\n"
      "err_o (sticky, registered): a dropped access or the scratchpad's error flag (err_sticky_o).\n"
      "Counters ({} bits, wrap): bank accesses per range by the engine and by the DMA, writer and DMA wait\n"
      "cycles, bank accesses per sector of the scratchpad (all three ports).",
      address_map_text(mg), mg.rows, mg.cols, mg.cols, mg.psum, mg.out_bits, sector_wait_text(org), kMemsysCounterBits);
}

// One of the engine's memory ports: a read (drd, wrd, brd) or the result writer (wr).
struct EnginePort {
  Expr en, addr, data;            // data: a read's data_o, the writer's data_i
  std::optional<Expr> vec, mask;  // drd and wr: vector accesses; wr: its lanes
};

// The engine's four memory ports: the reads drd (data vectors), wrd (weight rows), brd (bias rows)
// and the result writer wr.
struct EnginePorts {
  EnginePort drd, wrd, brd, wr;
  Expr wr_ready_o;

  const EnginePort& operator[](const std::string& port) const {
    if (port == "drd") return drd;
    if (port == "wrd") return wrd;
    if (port == "brd") return brd;
    if (port == "wr") return wr;
    throw std::logic_error("memsys: no engine port " + port);
  }
};

EnginePorts declare_engine_ports(Module& m, const MemsysOrg& org) {
  const MemsysGeometry& mg = org.mg;
  const int addr_bits = mg.addr_bits, rows = mg.rows, cols = mg.cols, out_bits = mg.out_bits;
  const bool smp = org.smp, hy = org.hy;
  m.clock_and_reset();
  const Expr drd_en = m.input("drd_en_i", 1, smp ? "engine data read (shared memory)" : hy ? "engine data read (data or shared memory)" : "engine data read (data memory)");
  const Expr drd_vec = m.input("drd_vec_i", 1, fmt::format("with drd_en_i: {} consecutive elements (else one)", rows));
  const Expr drd_addr = m.input("drd_addr_i", addr_bits, "element address (the first one of a vector)");
  const Expr drd_data = m.output("drd_data_o", rows * mg.data, fmt::format("cycle after drd_en_i: element r in [r*{0} +: {0}]", mg.data));
  const Expr wrd_en = m.input("wrd_en_i", 1, smp ? "engine weight row read (shared memory)" : hy ? "engine weight row read (weight or shared memory)" : "engine weight row read (weight memory)");
  const Expr wrd_addr = m.input("wrd_addr_i", addr_bits, "address of the row's first element");
  const Expr wrd_data = m.output("wrd_data_o", cols * mg.weight, fmt::format("cycle after wrd_en_i: {} consecutive weight codes", cols));
  const Expr brd_en = m.input("brd_en_i", 1, smp ? "engine bias read (acc lanes of the shared memory)"
                                               : org.lview.empty() ? "engine bias read (acc memory)" : "engine bias read (acc memory or the shared memory's lanes)");
  const Expr brd_addr = m.input("brd_addr_i", addr_bits, "address of the first psum code");
  const Expr brd_data = m.output("brd_data_o", cols * mg.psum, fmt::format("cycle after brd_en_i: {} consecutive psum codes", cols));
  const Expr wr_en = m.input("wr_en_i", 1, smp ? "engine result write (shared memory)" : hy ? "engine result write (data, weight or shared memory)" : "engine result write (data or weight memory)");
  const Expr wr_vec = m.input("wr_vec_i", 1, fmt::format("with wr_en_i: lane c at wr_addr_i + c where wr_mask_i[c] (c < {})", cols));
  const Expr wr_mask = m.input("wr_mask_i", cols, "lanes of a wr_vec_i write");
  const Expr wr_addr = m.input("wr_addr_i", addr_bits, "element address (lane 0's; selects the memory)");
  const Expr wr_data = m.input("wr_data_i", cols * out_bits, fmt::format("result codes, lane c in [c*{0} +: {0}]", out_bits));
  const Expr wr_ready = m.output("wr_ready_o", 1, "the write happens in this cycle if wr_en_i (low: the same memory's read uses one of its banks)");
  return EnginePorts{EnginePort{drd_en, drd_addr, drd_data, drd_vec, std::nullopt},
                     EnginePort{wrd_en, wrd_addr, wrd_data, std::nullopt, std::nullopt},
                     EnginePort{brd_en, brd_addr, brd_data, std::nullopt, std::nullopt},
                     EnginePort{wr_en, wr_addr, wr_data, wr_vec, wr_mask}, wr_ready};
}

// The DMA's SPM port: one element-addressed access of 2^size bytes.
struct DmaPort {
  Expr spm_req_i, spm_gnt_o, spm_we_i, spm_addr_i, spm_size_i, spm_wdata_i, spm_rvalid_o, spm_rdata_o;
};

DmaPort declare_dma_port(Module& m, const MemsysOrg& org) {
  const MemsysGeometry& mg = org.mg;
  const bool smp = org.smp, hy = org.hy;
  const Expr req = m.input("spm_req_i", 1, "DMA access");
  const Expr gnt = m.output("spm_gnt_o", 1, "DMA access accepted this cycle");
  const Expr we = m.input("spm_we_i", 1, "DMA: 1 write, 0 read");
  const Expr addr = m.input("spm_addr_i", mg.spm_addr_bits, smp ? "DMA element address (acc lanes, shared bytes)" : hy ? "DMA element address (data, weight, acc, shared elements)" : "DMA element address (data, weight, acc elements)");
  const Expr size = m.input("spm_size_i", mg.spm_size_bits, fmt::format("DMA access of 2^size bytes (0..{}; whole lanes of one word)", mg.spm_max_size));
  const Expr wdata = m.input("spm_wdata_i", mg.spm_data_bits, "DMA write data: the access's bytes in the low bytes");
  const Expr rvalid = m.output("spm_rvalid_o", 1, "read data of the read granted in the previous cycle");
  const Expr rdata = m.output("spm_rdata_o", mg.spm_data_bits, "DMA read data: the access's bytes in the low bytes, zeros above");
  return DmaPort{req, gnt, we, addr, size, wdata, rvalid, rdata};
}

// Power gating: each scratchpad's per-sector sleep request and acknowledge, by scratchpad.
struct SleepPorts {
  std::map<std::string, Expr> req_i, ack_o;
};

SleepPorts declare_sleep_ports(Module& m, const MemsysOrg& org) {
  SleepPorts p;
  if (!org.pg) return p;
  for (const MemsysMemory& mm : org.mg.mems) {
    if (mm.view()) continue;  // its scratchpad's sectors
    const std::string& name = mm.g.name;
    p.req_i.emplace(name, m.input(fmt::format("sleep_req_{}_i", name), mm.g.mem.sectors, fmt::format("{} memory: per sector 1 = sleep", name)));
    p.ack_o.emplace(name, m.output(fmt::format("sleep_ack_{}_o", name), mm.g.mem.sectors,
                                   fmt::format("{} memory: per sector 1 = asleep or waking (not usable)", name)));
  }
  return p;
}

// A memory's access counters (outputs, or the registers behind them).
struct MemoryCounters {
  Expr eng_rd;
  std::optional<Expr> eng_wr;  // psum lanes (acc, lanes): read by brd, written by the DMA only
  Expr dma_rd, dma_wr, dma_wait;
  std::vector<Expr> sectors;  // a scratchpad (not a lane view): per sector; the outputs: one vector
};

// The access counters of every memory, the writer's wait counter and the sticky error.
struct CounterOutputs {
  std::vector<MemoryCounters> memories;  // MemsysGeometry::mems order
  Expr cnt_wr_wait_o, err_o;
};

CounterOutputs declare_counter_and_error_outputs(Module& m, const MemsysOrg& org) {
  const int counter_bits = kMemsysCounterBits;
  std::vector<MemoryCounters> memories;
  for (const MemsysMemory& mm : org.mg.mems) {
    const std::string& n = mm.g.name;
    const Expr eng_rd = m.output(fmt::format("cnt_eng_rd_{}_o", n), counter_bits, fmt::format("{} memory: bank reads by the engine", n));
    std::optional<Expr> eng_wr;
    if (mm.lane_bits != kMemsysPsumLaneBits)  // psum lanes (acc, lanes): read by brd, written by the DMA only
      eng_wr = m.output(fmt::format("cnt_eng_wr_{}_o", n), counter_bits, fmt::format("{} memory: bank writes by the engine", n));
    const Expr dma_rd = m.output(fmt::format("cnt_dma_rd_{}_o", n), counter_bits, fmt::format("{} memory: reads by the DMA", n));
    const Expr dma_wr = m.output(fmt::format("cnt_dma_wr_{}_o", n), counter_bits, fmt::format("{} memory: writes by the DMA", n));
    const Expr dma_wait = m.output(fmt::format("cnt_dma_wait_{}_o", n), counter_bits, fmt::format("{} memory: cycles with spm_req_i & ~spm_gnt_o", n));
    MemoryCounters collect{eng_rd, eng_wr, dma_rd, dma_wr, dma_wait, {}};
    if (!mm.view())  // a lane view's sectors are the shared memory's
      collect.sectors.push_back(m.output(fmt::format("cnt_sector_{}_o", n), mm.g.mem.sectors * counter_bits,
                                   fmt::format("{} memory: bank accesses (reads + writes, all ports) per sector s in [s*{} +: {}]", n, counter_bits, counter_bits)));
    memories.push_back(collect);
  }
  const Expr wr_wait = m.output("cnt_wr_wait_o", counter_bits, "cycles with wr_en_i & ~wr_ready_o");
  const Expr err = m.output("err_o", 1, "sticky: a dropped access or a scratchpad error flag");
  return CounterOutputs{memories, wr_wait, err};
}

// The ports of capsgen_memsys.
struct MemsysPorts {
  EnginePorts engine;
  DmaPort dma;
  SleepPorts sleep;
  CounterOutputs counters;
};

// What the parts of capsgen_memsys add to as they are built, emitted at the end: the terms of the
// range error and of err_o, and the statements of the two register blocks.
struct MemsysCollect {
  std::vector<Expr> err_range;          // the accesses dropped this cycle
  std::vector<Expr> scratchpad_errors;  // err_o: the sticky range error, then each scratchpad's sticky flag
  Stmts rd_body;                        // read-side registers without reset (always_ff)
  Stmts reset, body;                    // registers with reset (always_ff_reset): read state, counters
};

// The OR of `terms` (left to right).
Expr any_of(const std::vector<Expr>& terms) {
  Expr e = terms.at(0);
  for (std::size_t i = 1; i < terms.size(); ++i) e = e | terms[i];
  return e;
}

// The scratchpads' wires that the decoders read above their declarations: each scratchpad's read
// data (per port) and, with power gating, its sleep acknowledge.
struct ScratchpadReads {
  std::vector<Expr> rdata;  // port p0 (one port per bank), or p0, p1, p2
  std::optional<Expr> ack;
};

std::map<std::string, ScratchpadReads> forward_scratchpad_reads(Module& m, const MemsysOrg& org) {
  std::map<std::string, ScratchpadReads> reads;
  for (const MemsysMemory& mm : org.mg.mems) {
    if (mm.view()) continue;
    const std::string& name = mm.g.name;
    const int data_bits = mm.g.mem.banks * mm.g.mem.width_bits;
    ScratchpadReads r;
    if (mm.g.ports == 3)
      for (int k = 0; k < 3; ++k) r.rdata.push_back(m.forward_wire(fmt::format("{}_p{}_rdata", name, k), data_bits));
    else
      r.rdata.push_back(m.forward_wire(name + "_rdata", data_bits));
    if (org.pg) r.ack = m.forward_wire(name + "_ack", mm.g.mem.sectors);
    reads.emplace(name, r);
  }
  return reads;
}

// One address decoder of an engine port into one memory the port reaches. The result port wr has one
// decoder per memory it can write: "wr" (data) and "wrw" (weight); HY adds the shared memory's
// decoders "drs" (drd, port p0), "wrs" (wr, p1) and "wrds" (wrd, p1), and with its lanes range "brs"
// (brd, p2). SMP has only the shared memory: brd (its acc lanes, p2), drs, wrs and wrds.
struct Decoder {
  std::string name;  // prefix of the decoder's wires
  std::string in;    // prefix of the port's inputs
  int mem;           // index in MemsysGeometry::mems
  bool write;
  int nmax;          // elements of the widest access (a vector or row)
  int out_bits;      // read: element bits on the port
  int sport = -1;    // the shared memory's port (p0, p1, p2), -1 for a one-port memory
};

// A decoder's wires (prefix: its name).
struct DecoderWires {
  Expr ok, rel, pos, bpos, bank;
  std::optional<Expr> first_row, first_bank, rotation;  // row0, w0b, s (row bits, bank bits, rotation bits > 0)
  std::vector<std::optional<Expr>> bank_row;             // b<b>_row per bank (row bits > 0)
  std::vector<Expr> bank_addr;                           // b<b>_addr per bank
  std::optional<Expr> bdata;                             // a write: the data per bank
  std::optional<Expr> rot;                               // a read: the banks' words rotated back
};

// The engine ports' decoders, in the order their hardware is emitted, and their wires as built.
struct Decoders {
  const MemsysGeometry& mg;
  std::vector<Decoder> all;
  std::map<std::string, DecoderWires> wires;  // by decoder name
  std::optional<Expr> drd_vec_q;               // the previous cycle's drd read was a vector (rows > 1)

  const MemsysMemory& mem(const Decoder& decoder) const { return mg.mems[static_cast<std::size_t>(decoder.mem)]; }
  bool on_shared(const Decoder& decoder) const { return mem(decoder).phys == "shared"; }
  // The shared memory's decoder of an input port ("" when none): the port reaches that memory too.
  std::string shared_of(const std::string& in) const {
    for (const Decoder& decoder : all)
      if (on_shared(decoder) && decoder.in == in) return decoder.name;
    return "";
  }
  // The port's decoder of a one-port memory ("" when none: SMP).
  std::string single_of(const std::string& in) const {
    for (const Decoder& decoder : all)
      if (!on_shared(decoder) && decoder.in == in && !decoder.write) return decoder.name;
    return "";
  }
  const DecoderWires& operator[](const std::string& name) const { return wires.at(name); }
};

Decoders engine_decoders(const MemsysOrg& org) {
  const MemsysGeometry& mg = org.mg;
  const int rows = mg.rows, cols = mg.cols, out_bits = mg.out_bits;
  const int shared = mg.index("shared");
  Decoders decoders{mg, {}, {}, std::nullopt};
  if (org.smp) {  // brd reaches the acc lanes (mems[0]) through the scratchpad's port p2
    decoders.all = {{"brd", "brd", mg.index("acc"), false, cols, mg.psum, 2}};
  } else {
    decoders.all = {{"drd", "drd", 0, false, rows, mg.data},     {"wr", "wr", 0, true, cols, out_bits},
             {"wrw", "wr", 1, true, cols, out_bits},      {"wrd", "wrd", 1, false, cols, mg.weight},
             {"brd", "brd", 2, false, cols, mg.psum}};
  }
  if (shared >= 0) {
    decoders.all.push_back({"drs", "drd", shared, false, rows, mg.data, 0});
    decoders.all.push_back({"wrs", "wr", shared, true, cols, out_bits, 1});
    decoders.all.push_back({"wrds", "wrd", shared, false, cols, mg.weight, 1});
  }
  if (org.hy && !org.lview.empty())  // HY's lanes: p2
    decoders.all.push_back({"brs", "brd", mg.index(org.lview), false, cols, mg.psum, 2});
  return decoders;
}

// A decoder's memory seen as lane positions: `banks` banks of `lanes` lanes of `lane_bits` bits,
// `positions` = banks * lanes in all, `total_bits` bits. The element address relative to the memory
// has rel_bits = row_bits + bank_log + lane_log bits {bank row, bank, lane}; its low rotation_bits =
// bank_log + lane_log bits rotate the positions to the banks.
struct LanePositions {
  int banks, lanes, lane_log, bank_log, row_bits, rel_bits, rotation_bits, positions, lane_bits, total_bits;
};

LanePositions lane_positions(const MemsysMemory& mm) {
  const int banks = mm.g.mem.banks, lanes = mm.lanes;
  return LanePositions{banks,
                       lanes,
                       mm.lane_log,
                       mm.bank_log,
                       mm.row_bits,
                       mm.lane_log + mm.bank_log + mm.row_bits,
                       mm.lane_log + mm.bank_log,
                       banks * lanes,
                       mm.lane_bits,
                       banks * lanes * mm.lane_bits};
}

// The decoder's wires (prefix: its name), declared ahead of their logic.
DecoderWires declare_decoder_wires(Module& m, const Decoders& decoders, const Decoder& decoder, const LanePositions& layout) {
  const MemsysMemory& mm = decoders.mem(decoder);
  const std::string& prefix = decoder.name;
  m.blank();
  m.comment(fmt::format("Engine port {} -> {} memory{}: range check, bank row per bank, lane positions rotated to banks.", decoder.in,
                        mm.g.name, decoder.sport >= 0 ? fmt::format(" (port p{})", decoder.sport) : ""));
  const Expr ok = m.wire(prefix + "_ok", 1, "every element of the access lies in the memory");
  const Expr rel = m.wire(prefix + "_rel", layout.rel_bits, "element address relative to the memory (mod 2^bits)");
  const Expr pos = m.wire(prefix + "_pos", layout.positions, "lane positions used, before rotation (element i at position i)");
  const Expr bpos = m.wire(prefix + "_bpos", layout.positions, "lane positions used, per bank: bank b has [b*E +: E]");
  const Expr bank = m.wire(prefix + "_bank", layout.banks, "banks the access uses (in range)");
  DecoderWires wires{ok, rel, pos, bpos, bank, std::nullopt, std::nullopt, std::nullopt, {}, {}, std::nullopt, std::nullopt};
  if (layout.row_bits > 0) wires.first_row = m.wire(prefix + "_row0", layout.row_bits, "bank row of the first word");
  if (layout.bank_log > 0) wires.first_bank = m.wire(prefix + "_w0b", layout.bank_log, "bank of the first word");
  if (layout.rotation_bits > 0) wires.rotation = m.wire(prefix + "_s", layout.rotation_bits, "rotation: (rel mod positions)");
  for (int b = 0; b < layout.banks; ++b) {
    wires.bank_row.push_back(layout.row_bits > 0 ? std::optional<Expr>(m.wire(fmt::format("{}_b{}_row", prefix, b), layout.row_bits)) : std::nullopt);
    wires.bank_addr.push_back(m.wire(fmt::format("{}_b{}_addr", prefix, b), mm.g.addr_bits));
  }
  return wires;
}

// Whether the access lies in the decoder's memory: base <= address and address + (last element) < end.
void check_decoder_range(Module& m, const Decoders& decoders, const Decoder& decoder, const EnginePort& port, const DecoderWires& wires) {
  const MemsysMemory& mm = decoders.mem(decoder);
  const int addr_bits = decoders.mg.addr_bits, cols = decoders.mg.cols;
  const Expr& address = port.addr;
  const long long base = mm.elem_base, end = mm.elem_base + mm.elements;
  const auto below = [&](long long k) {  // a + k < end
    return end - k <= 0 ? bit(false) : paren(address < lit(addr_bits, end - k));
  };
  const std::optional<Expr> from_base = base > 0 ? std::optional<Expr>(paren(address >= lit(addr_bits, base))) : std::nullopt;
  const auto after_base = [&](const Expr& e) { return from_base ? *from_base & e : e; };
  if (decoder.in == "drd") {
    m.assign(wires.ok, after_base(paren(ternary(*port.vec, below(decoders.mg.rows - 1), below(0)))));
  } else if (decoder.write) {
    // The memory is the one holding lane 0's address; every masked lane must lie in it.
    const Expr lane_ok = m.wire(decoder.name + "_lane_ok", cols, "lane c's element is in the memory");
    for (int lane = 0; lane < cols; ++lane) m.assign(bit_or_whole(lane_ok, lane), below(lane));
    m.assign(wires.ok, after_base(bit_or_whole(lane_ok, 0)) & (~*port.vec | ((*port.mask & ~lane_ok) == lit(cols, 0))));
  } else {
    m.assign(wires.ok, after_base(below(decoder.nmax - 1)));
  }
}

// A read is dropped when no memory the port reaches holds it whole (err_range; writes: writer_arbitration).
void decoder_range_errors(const Decoders& decoders, const EnginePorts& ports, MemsysCollect& collect) {
  for (const Decoder& decoder : decoders.all) {
    if (decoder.write) continue;
    const Expr& en = ports[decoder.in].en;
    const std::string shared = decoders.shared_of(decoder.in);
    if (!decoders.on_shared(decoder))
      collect.err_range.push_back(paren(shared.empty() ? en & ~decoders[decoder.name].ok : en & ~decoders[decoder.name].ok & ~decoders[shared].ok));
    else if (decoders.single_of(decoder.in).empty())
      collect.err_range.push_back(paren(en & ~decoders[decoder.name].ok));
  }
}

// The relative address {row, bank, lane} of a port's address in memory mm (mod 2^rel_bits).
Expr relative_address(const Expr& addr, const MemsysMemory& mm, int rel_bits) {
  const Expr low = bits(addr, rel_bits - 1, 0);
  return mm.elem_base > 0 ? low - lit(rel_bits, mm.elem_base % (1LL << rel_bits)) : low;
}

// The access's lane positions before rotation: element i at position i.
Expr unrotated_positions(const Decoders& decoders, const Decoder& decoder, const EnginePort& port, int positions) {
  if (decoder.in == "drd") return ternary(*port.vec, zext(ones(decoders.mg.rows), positions), lit(positions, 1));
  if (decoder.write) return ternary(*port.vec, zext(*port.mask, positions), lit(positions, 1));
  return zext(ones(decoders.mg.cols), positions);
}

// The access's lane positions (element i at position i) rotated by the relative address to the
// banks, the banks it uses, and each bank's row (banks before the first word's bank are a row further)
// and address.
void rotate_positions_to_banks(Module& m, const Decoders& decoders, const Decoder& decoder, const EnginePort& port,
                               const LanePositions& layout, const DecoderWires& wires) {
  const MemsysMemory& mm = decoders.mem(decoder);
  const int positions = layout.positions, rel_bits = layout.rel_bits, rotation_bits = layout.rotation_bits;
  m.assign(wires.rel, relative_address(port.addr, mm, rel_bits));
  if (wires.first_row) m.assign(*wires.first_row, bits(wires.rel, rel_bits - 1, rotation_bits));
  if (wires.first_bank) m.assign(*wires.first_bank, bits(wires.rel, rotation_bits - 1, layout.lane_log));
  if (wires.rotation) m.assign(*wires.rotation, bits(wires.rel, rotation_bits - 1, 0));
  m.assign(wires.pos, unrotated_positions(decoders, decoder, port, positions));
  if (wires.rotation) {
    m.lint_off("UNUSEDSIGNAL", "rotation: only the upper half of the doubled vector is used.");
    const Expr doubled = m.wire(decoder.name + "_pos2", 2 * positions);
    m.lint_on("UNUSEDSIGNAL");
    m.assign(doubled, shl(cat({wires.pos, wires.pos}), *wires.rotation));
    m.assign(wires.bpos, bits(doubled, 2 * positions - 1, positions));
  } else {
    m.assign(wires.bpos, wires.pos);
  }
  const Expr gate = decoder.write ? wires.ok : port.en & wires.ok;
  for (int b = 0; b < layout.banks; ++b) {
    m.assign(bit_or_whole(wires.bank, b), gate & reduce_or(part_or_whole(wires.bpos, b, layout.lanes)));
    if (const std::optional<Expr>& row = wires.bank_row[static_cast<std::size_t>(b)]) {
      if (wires.first_bank && b < layout.banks - 1)
        m.assign(*row, *wires.first_row + ternary(*wires.first_bank > lit(layout.bank_log, b), lit(layout.row_bits, 1), lit(layout.row_bits, 0)));
      else
        m.assign(*row, *wires.first_row);
    }
    m.assign(wires.bank_addr[static_cast<std::size_t>(b)], row_to_addr(mm, wires.bank_row[static_cast<std::size_t>(b)]));
  }
}

// Result code i of the writer in an 8-bit lane, sign-extended (lane positions past the port's
// columns are 0).
Expr result_lane(const Decoders& decoders, const EnginePort& wr, int i, int lane_bits) {
  const int cols = decoders.mg.cols, out_bits = decoders.mg.out_bits;
  if (i >= cols) return lit(lane_bits, 0);
  const Expr code = part_or_whole(wr.data, i, out_bits);
  if (out_bits == lane_bits) return code;
  if (out_bits == 1) return rep(lane_bits, code);
  return cat({rep(lane_bits - out_bits, wr.data[i * out_bits + out_bits - 1]), code});
}

// Result codes sign-extended to 8-bit lanes, rotated to the banks like the positions.
void rotate_write_data_to_banks(Module& m, const Decoders& decoders, const Decoder& decoder, const EnginePort& wr,
                                const LanePositions& layout, DecoderWires& wires) {
  const int total_bits = layout.total_bits;
  const Expr pdata = m.wire(decoder.name + "_pdata", total_bits, "result codes in 8-bit lanes, element i in lane i");
  std::vector<Expr> lanes;
  for (int i = layout.positions - 1; i >= 0; --i) lanes.push_back(result_lane(decoders, wr, i, layout.lane_bits));
  m.assign(pdata, lanes.size() == 1 ? lanes[0] : cat(lanes));
  wires.bdata = m.wire(decoder.name + "_bdata", total_bits, "write data per bank: bank b has [b*W +: W]");
  if (wires.rotation) {
    m.lint_off("UNUSEDSIGNAL", "rotation: only the upper half of the doubled vector is used.");
    const Expr doubled = m.wire(decoder.name + "_pdata2", 2 * total_bits);
    m.lint_on("UNUSEDSIGNAL");
    m.assign(doubled, shl(cat({pdata, pdata}), cat({*wires.rotation, lit(clog2(layout.lane_bits), 0)})));
    m.assign(*wires.bdata, bits(doubled, 2 * total_bits - 1, total_bits));
  } else {
    m.assign(*wires.bdata, pdata);
  }
}

// Read data: the memory's banks rotated back by the registered rotation (element i in lane i).
void rotate_read_data_back(Module& m, Decoders& decoders, const Decoder& decoder, const EnginePorts& ports, const LanePositions& layout,
                           const std::map<std::string, ScratchpadReads>& scratchpads, DecoderWires& wires, MemsysCollect& collect) {
  const MemsysMemory& mm = decoders.mem(decoder);
  const int total_bits = layout.total_bits;
  const Expr& rdata = scratchpads.at(mm.phys).rdata.at(decoder.sport >= 0 ? static_cast<std::size_t>(decoder.sport) : 0);
  std::optional<Expr> rotation_q;
  if (wires.rotation) {
    rotation_q = m.reg(decoder.name + "_s_q", layout.rotation_bits, "rotation of the read issued in the previous cycle");
    collect.rd_body.push_back(if_(ports[decoder.in].en, {nb(*rotation_q, *wires.rotation)}));
  }
  // Once, with drd's first decoder; only with more than one row: lanes 1.. of a drd read are zero
  // unless it was a vector read, and one row has no such lanes.
  if (decoders.mg.rows > 1 && decoder.name == (decoders.single_of("drd").empty() ? decoders.shared_of("drd") : "drd")) {
    decoders.drd_vec_q = m.reg("drd_vec_q", 1, "the previous cycle's read was a vector");
    collect.reset.push_back(nb(*decoders.drd_vec_q, bit(false)));
    collect.body.push_back(if_(ports.drd.en, {nb(*decoders.drd_vec_q, *ports.drd.vec)}));
  }
  m.lint_off("UNUSEDSIGNAL", fmt::format("read rotation: only the lower half is used, and of each {}-bit lane only the code's "
                                         "low bits.",
                                         layout.lane_bits));
  wires.rot = m.wire(decoder.name + "_rot", total_bits, "the read's words rotated: element i in lane i");
  if (rotation_q) {
    const Expr doubled = m.wire(decoder.name + "_rot2", 2 * total_bits);
    m.assign(doubled, shr(cat({rdata, rdata}), cat({*rotation_q, lit(clog2(layout.lane_bits), 0)})));
    m.assign(*wires.rot, bits(doubled, total_bits - 1, 0));
  } else {
    m.assign(*wires.rot, rdata);
  }
  m.lint_on("UNUSEDSIGNAL");
}

// The port's data: from this memory, or (a port that reaches the shared memory too, assigned with
// its shared decoder) from the memory the read went to.
void read_data_mux(Module& m, const Decoders& decoders, const Decoder& decoder, const EnginePorts& ports, const LanePositions& layout,
                   MemsysCollect& collect) {
  const EnginePort& port = ports[decoder.in];
  const Expr& rot = *decoders[decoder.name].rot;
  std::optional<Expr> other_rot, shared_q;
  if (decoders.on_shared(decoder) && !decoders.single_of(decoder.in).empty()) {
    other_rot = *decoders[decoders.single_of(decoder.in)].rot;  // the port's one-port memory's decoder (HY)
    shared_q = m.reg(decoder.in + "_shared_q", 1, "the previous cycle's read went to the shared memory");
    collect.reset.push_back(nb(*shared_q, bit(false)));
    collect.body.push_back(if_(port.en, {nb(*shared_q, decoders[decoder.name].ok)}));
  }
  if (!decoders.on_shared(decoder) && !decoders.shared_of(decoder.in).empty()) return;  // the shared decoder assigns the port
  for (int i = 0; i < decoder.nmax; ++i) {
    const int lo = i * layout.lane_bits, hi = lo + decoder.out_bits - 1;
    Expr v = bits(rot, hi, lo);
    if (shared_q) v = paren(ternary(*shared_q, v, bits(*other_rot, hi, lo)));
    m.assign(part_or_whole(port.data, i, decoder.out_bits),
             decoder.in == "drd" && i > 0 ? ternary(*decoders.drd_vec_q, v, lit(decoder.out_bits, 0)) : v);
  }
}

// One engine port's decoder into one memory: range check, bank row per bank, lane positions rotated
// to banks; the write data rotated to the banks or the read data rotated back to the port.
void engine_port_decoder(Module& m, Decoders& decoders, const Decoder& decoder, const EnginePorts& ports,
                         const std::map<std::string, ScratchpadReads>& scratchpads, MemsysCollect& collect) {
  const LanePositions layout = lane_positions(decoders.mem(decoder));
  const EnginePort& port = ports[decoder.in];
  DecoderWires wires = declare_decoder_wires(m, decoders, decoder, layout);
  check_decoder_range(m, decoders, decoder, port, wires);
  rotate_positions_to_banks(m, decoders, decoder, port, layout, wires);
  if (decoder.write) {
    rotate_write_data_to_banks(m, decoders, decoder, port, layout, wires);
    decoders.wires.emplace(decoder.name, wires);
  } else {
    rotate_read_data_back(m, decoders, decoder, ports, layout, scratchpads, wires, collect);
    decoders.wires.emplace(decoder.name, wires);
    read_data_mux(m, decoders, decoder, ports, layout, collect);
  }
}

// The writer's handshake: it waits while the same memory's read of this cycle uses one of its banks.
struct Writer {
  Expr ready, go;
};

// The writer waits while the same memory's read of this cycle uses one of its banks; a write in none
// of the memories it reaches is dropped.
Writer writer_arbitration(Module& m, const MemsysOrg& org, const Decoders& decoders, const EnginePorts& ports, MemsysCollect& collect) {
  const MemsysGeometry& mg = org.mg;
  m.blank();
  m.comment(org.smp ? "The writer waits while a wrd of this cycle (port p1, like the writer) uses one of its banks; a drd\n"
                    "(port p0) reads the word before the write; a write outside the shared bytes is dropped."
           : org.hy ? "The writer waits while the same memory's read of this cycle uses one of its banks (data: drd, weight:\n"
                    "wrd, shared: wrd on port p1; a drd of the shared memory uses p0 and reads the word before the write);\n"
                    "a write in none of the memories is dropped."
                  : "The writer waits while the same memory's read of this cycle uses one of its banks (data: drd, weight:\n"
                    "wrd); a write in neither memory is dropped.");
  const Writer wr{m.wire("wr_ready", 1), m.wire("wr_go", 1, "the write happens this cycle")};
  std::vector<Expr> free_banks, in_memory;
  const auto conflict = [&](const std::string& writer, const std::string& reader, int mem) {
    in_memory.push_back(decoders[writer].ok);
    free_banks.push_back(paren((decoders[writer].bank & decoders[reader].bank) == lit(mg.mems[std::size_t(mem)].g.mem.banks, 0)));
  };
  if (!org.smp) {
    conflict("wr", "drd", 0);
    conflict("wrw", "wrd", 1);
  }
  const int shared = mg.index("shared");
  if (shared >= 0) conflict("wrs", "wrds", shared);
  Expr ready = free_banks.at(0);
  for (std::size_t i = 1; i < free_banks.size(); ++i) ready = ready & free_banks[i];
  m.assign(wr.ready, ready);
  collect.err_range.push_back(paren(ports.wr.en & ~paren(any_of(in_memory))));
  m.assign(wr.go, ports.wr.en & wr.ready);
  m.assign(ports.wr_ready_o, wr.ready);
  return wr;
}

// The DMA's wires for memory mm (prefix dma_<memory>).
struct DmaWires {
  Expr in, rel;
  std::optional<Expr> lane;
  Expr fit, ok, addr, hit, usable, free, be, wdata;
  // The registers of the DMA's read of this memory (register_dma_read) and the word read.
  std::optional<Expr> rd_q, bank_q, lane_q;
};

// The DMA's wires for memory mm, declared ahead of their logic.
DmaWires declare_dma_decoder_wires(Module& m, const MemsysMemory& mm, const LanePositions& layout) {
  const std::string prefix = "dma_" + mm.g.name;
  const int width = mm.g.mem.width_bits;
  const Expr in = m.wire(prefix + "_in", 1, "the address is in this memory");
  const Expr rel = m.wire(prefix + "_rel", layout.rel_bits, "element relative to the memory");
  const std::optional<Expr> lane =
      layout.lane_log > 0 ? std::optional<Expr>(m.wire(prefix + "_lane", layout.lane_log, "lane of the element in its word")) : std::nullopt;
  const Expr fit = m.wire(prefix + "_fit", 1, "the size is whole lanes, at most a word, and the lanes stay in the word");
  const Expr ok = m.wire(prefix + "_ok", 1, "a legal access to this memory");
  const Expr addr = m.wire(prefix + "_addr", mm.g.addr_bits, "{sector, word} in the bank");
  const Expr hit = m.wire(prefix + "_hit", layout.banks, "the bank addressed (one-hot, 0 when not a legal access to this memory)");
  const Expr usable = m.wire(prefix + "_usable", 1, "the word's sector is usable");
  const Expr free = m.wire(prefix + "_free", 1, "no engine access on the bank, sector usable");
  const Expr be = m.wire(prefix + "_be", width / 8, "byte enables of a write: the access's bytes at the lane");
  const Expr wdata = m.wire(prefix + "_wdata", width, "write data shifted to the lane");
  return DmaWires{in, rel, lane, fit, ok, addr, hit, usable, free, be, wdata, std::nullopt, std::nullopt, std::nullopt};
}

// Legal sizes: 2^s bytes = n whole lanes (n = 1, 2, .. E), starting at a lane <= E - n.
Expr dma_size_fits(const MemsysGeometry& mg, const MemsysMemory& mm, const LanePositions& layout, const DmaPort& dma,
                   const DmaWires& wires) {
  std::vector<Expr> fits;
  for (int size = 0; size <= mg.spm_max_size; ++size) {
    const int lanes = memsys_dma_lanes(mm, size);
    if (lanes == 0) continue;
    Expr t = paren(dma.spm_size_i == lit(mg.spm_size_bits, size));
    if (lanes == layout.lanes && layout.lane_log > 0) t = paren(t & (*wires.lane == lit(layout.lane_log, 0)));
    else if (lanes > 1) t = paren(t & (*wires.lane <= lit(layout.lane_log, layout.lanes - lanes)));
    fits.push_back(t);
  }
  if (fits.empty()) throw std::logic_error("memsys: no DMA access size fits memory " + mm.g.name);
  return any_of(fits);
}

// Which memory, word, lane and bank the DMA addresses; whether the size fits the lanes.
void locate_dma_access(Module& m, const MemsysGeometry& mg, const MemsysMemory& mm, const LanePositions& layout,
                       const DmaPort& dma, const DmaWires& wires) {
  const int addr_bits = mg.spm_addr_bits, lane_log = layout.lane_log, bank_log = layout.bank_log, rel_bits = layout.rel_bits;
  const long long base = mm.elem_base, end = mm.elem_base + mm.elements;
  if (rel_bits == 0) throw std::logic_error("memsys: a memory of one element");
  std::vector<Expr> in;
  if (base > 0) in.push_back(paren(dma.spm_addr_i >= lit(addr_bits, base)));
  if (end < (1LL << addr_bits)) in.push_back(paren(dma.spm_addr_i < lit(addr_bits, end)));
  m.assign(wires.in, in.empty() ? bit(true) : in.size() == 1 ? in[0] : in[0] & in[1]);
  m.assign(wires.rel, relative_address(dma.spm_addr_i, mm, rel_bits));
  if (wires.lane) m.assign(*wires.lane, bits(wires.rel, lane_log - 1, 0));
  m.assign(wires.fit, dma_size_fits(mg, mm, layout, dma, wires));
  m.assign(wires.ok, wires.in & wires.fit);
  if (layout.row_bits > 0) {
    const Expr row = m.wire("dma_" + mm.g.name + "_row", layout.row_bits);
    m.assign(row, bits(wires.rel, rel_bits - 1, lane_log + bank_log));
    m.assign(wires.addr, row_to_addr(mm, row));
  } else {
    m.assign(wires.addr, row_to_addr(mm, std::nullopt));
  }
  for (int b = 0; b < layout.banks; ++b)
    m.assign(bit_or_whole(wires.hit, b),
             bank_log > 0 ? wires.ok & (bits(wires.rel, lane_log + bank_log - 1, lane_log) == lit(bank_log, b)) : wires.ok);
}

// The engine's banks of memory mm this cycle (shared: all three ports' engine accesses; both ranges of
// the shared memory are one scratchpad, whose p2 also serves brd of its lanes).
Expr engine_banks(const MemsysOrg& org, const MemsysMemory& mm, const Decoders& decoders, const Writer& wr) {
  const auto writes = [&](const char* writer) { return decoders[writer].bank & rep(mm.g.mem.banks, wr.go); };
  if (mm.phys == "shared") {
    const Expr banks = decoders["drs"].bank | decoders["wrds"].bank | writes("wrs");
    return org.p2brd.empty() ? banks : banks | decoders[org.p2brd].bank;
  }
  if (mm.g.name == "data") return decoders["drd"].bank | writes("wr");
  if (mm.g.name == "weight") return decoders["wrd"].bank | writes("wrw");
  return decoders["brd"].bank;
}

// The DMA's bank is free when the engine leaves it alone and (power gating) the word's sector is usable.
void dma_bank_free(Module& m, const MemsysOrg& org, const MemsysMemory& mm, const Decoders& decoders, const Writer& wr,
                   const std::map<std::string, ScratchpadReads>& scratchpads, const DmaWires& wires) {
  if (org.pg) {
    const Expr& ack = *scratchpads.at(mm.phys).ack;
    m.assign(wires.usable, mm.g.sector_bits > 0 ? ~ack.at(bits(wires.addr, mm.g.addr_bits - 1, mm.g.offset_bits)) : ~ack);
  } else {
    m.assign(wires.usable, bit(true));
  }
  m.assign(wires.free, ((wires.hit & engine_banks(org, mm, decoders, wr)) == lit(mm.g.mem.banks, 0)) & wires.usable);
}

// Byte enables: the low 2^size bytes (byte k iff size >= floor(log2 k) + 1), shifted to the lane;
// the write data shifted to the lane.
void dma_write_lanes(Module& m, const MemsysGeometry& mg, const MemsysMemory& mm, const DmaPort& dma, const DmaWires& wires) {
  const int width = mm.g.mem.width_bits, bytes = width / 8, lane_byte_log = clog2(mm.lane_bits / 8);
  const Expr data = width == mg.spm_data_bits ? dma.spm_wdata_i : bits(dma.spm_wdata_i, width - 1, 0);
  if (mm.lane_log > 0) {
    std::vector<Expr> low;
    for (int k = clog2(bytes); k >= 1; --k) low.push_back(rep(1 << (k - 1), dma.spm_size_i >= lit(mg.spm_size_bits, k)));
    low.push_back(bit(true));
    const Expr lane_bytes = lane_byte_log > 0 ? cat({*wires.lane, lit(lane_byte_log, 0)}) : *wires.lane;
    m.assign(wires.be, shl(cat(low), lane_bytes));
    m.assign(wires.wdata, shl(data, cat({*wires.lane, lit(clog2(mm.lane_bits), 0)})));
  } else {
    m.assign(wires.be, ones(bytes));  // one lane per word: only whole-word accesses are legal
    m.assign(wires.wdata, data);
  }
}

// The DMA's handshake: the access happens (or is dropped) when granted.
struct DmaAccess {
  Expr drop, spm_gnt, go;
  std::map<std::string, DmaWires> memories;  // by memory name
};

// DMA port: which memory, word, lane and bank; whether the size fits the lanes; granted when the
// engine leaves the bank alone and the sector is usable. An illegal access is granted and dropped.
DmaAccess dma_decode_and_grant(Module& m, const MemsysOrg& org, const MemsysPorts& ports, const Decoders& decoders,
                               const Writer& wr, const std::map<std::string, ScratchpadReads>& scratchpads,
                               MemsysCollect& collect) {
  m.blank();
  m.comment("DMA port: which memory, word, lane and bank; whether the size fits the lanes; granted when the engine\n"
            "leaves the bank alone and the sector is usable.");
  std::map<std::string, DmaWires> memories;
  std::vector<Expr> legal, granted;
  for (const MemsysMemory& mm : org.mg.mems) {
    const LanePositions layout = lane_positions(mm);
    const DmaWires wires = declare_dma_decoder_wires(m, mm, layout);
    locate_dma_access(m, org.mg, mm, layout, ports.dma, wires);
    dma_bank_free(m, org, mm, decoders, wr, scratchpads, wires);
    dma_write_lanes(m, org.mg, mm, ports.dma, wires);
    legal.push_back(wires.ok);
    granted.push_back(paren(wires.ok & wires.free));
    memories.emplace(mm.g.name, wires);
  }
  const Expr drop = m.wire("dma_drop", 1, "not a legal access to any memory (granted, dropped)");
  const Expr spm_gnt = m.wire("spm_gnt", 1);
  const Expr go = m.wire("dma_go", 1, "a DMA access happens this cycle (or is dropped)");
  m.assign(drop, ~paren(any_of(legal)));
  std::vector<Expr> grant{drop};
  grant.insert(grant.end(), granted.begin(), granted.end());
  m.assign(spm_gnt, any_of(grant));
  m.assign(go, ports.dma.spm_req_i & spm_gnt);
  m.assign(ports.dma.spm_gnt_o, spm_gnt);
  collect.err_range.push_back(paren(ports.dma.spm_req_i & drop));
  return DmaAccess{drop, spm_gnt, go, memories};
}

// A counter adds the number of its 1-bit `terms` that are high, one cycle late: the sum is
// registered first (<name>_inc_q), so the address decode that makes the terms does not reach the
// counter's adder in the same cycle (it was the chip's critical path, docs/rtl-chip.md).
Expr add_counter(Module& m, MemsysCollect& collect, const std::string& name, const std::vector<Expr>& terms) {
  const int counter_bits = kMemsysCounterBits;
  const int increment_bits = std::max(1, clog2(static_cast<long long>(terms.size()) + 1));
  const Expr count = m.reg(name + "_q", counter_bits);
  const Expr increment = m.reg(name + "_inc_q", increment_bits);
  Expr sum = zext(paren(terms.at(0)), increment_bits);
  for (std::size_t i = 1; i < terms.size(); ++i) sum = sum + zext(paren(terms[i]), increment_bits);
  collect.reset.push_back(nb(count, lit(counter_bits, 0)));
  collect.reset.push_back(nb(increment, lit(increment_bits, 0)));
  collect.body.push_back(nb(increment, sum));
  collect.body.push_back(nb(count, count + zext(increment, counter_bits)));
  return count;
}

// The bits of a vector, each a term of a counter.
std::vector<Expr> bit_terms(const Expr& v) {
  std::vector<Expr> t;
  for (int i = 0; i < v.width(); ++i) t.push_back(bit_or_whole(v, i));
  return t;
}

// One port of a scratchpad: per bank enable, write enable, byte enables, address, data.
struct ScratchpadPort {
  Expr en;
  std::optional<Expr> we, be, wdata;  // none on the shared memory's read-only port p0
  Expr addr, rdata;
};

// A scratchpad's sleep acknowledge and error flags.
struct ScratchpadStatus {
  std::optional<Expr> ack;
  Expr err, err_sleep;
  std::vector<Expr> rvalid;  // per port, unused
  std::optional<Expr> err_addr, err_conflict;
};

// A scratchpad's wires: the engine's and the DMA's banks, its ports, its status.
struct ScratchpadWires {
  std::optional<Expr> eng_rd;  // one port per bank: the banks the engine reads
  std::optional<Expr> eng_wr;  // the banks the engine writes (none without a writer)
  Expr dma;
  std::vector<ScratchpadPort> ports;  // p0, or p0, p1, p2
  std::optional<ScratchpadStatus> status;
};

// A scratchpad's sleep acknowledge and error flags, the same for one port per bank and for three: the
// wires (its read-valid outputs `rvalid_names` and per-cycle errors are unused: memsys tracks its reads
// itself and uses the sticky flag).
ScratchpadStatus scratchpad_status_wires(Module& m, const MemsysOrg& org, const MemsysMemory& mm,
                                         const std::vector<std::string>& rvalid_names) {
  const std::string& name = mm.g.name;
  const std::optional<Expr> ack = org.pg ? std::optional<Expr>(m.wire(name + "_ack", mm.g.mem.sectors)) : std::nullopt;
  const Expr err = m.wire(name + "_err", 1, "the scratchpad's err_sticky_o");
  m.lint_off("UNUSEDSIGNAL", "the scratchpad's rvalid and per-cycle error outputs: memsys tracks its reads itself and uses\n"
                             "the sticky error flag.");
  std::vector<Expr> rvalid;
  for (const std::string& r : rvalid_names) rvalid.push_back(m.wire(r, mm.g.mem.banks));
  const Expr err_sleep = m.wire(name + "_err_sleep", 1);
  ScratchpadStatus s{ack, err, err_sleep, rvalid, std::nullopt, std::nullopt};
  if ((1LL << mm.g.offset_bits) != mm.g.words_per_sector) s.err_addr = m.wire(name + "_err_addr", 1);
  if (mm.g.ports > 1) s.err_conflict = m.wire(name + "_err_conflict", 1);
  m.lint_on("UNUSEDSIGNAL");
  return s;
}

// The scratchpad's sleep and error connections; its sticky flag joins err_o. `inst` is not used after
// this (an item added to the module may move it).
void connect_scratchpad_status(Module& m, const MemsysOrg& org, const MemsysMemory& mm, const SleepPorts& sleep,
                               const ScratchpadStatus& s, Instance& inst, MemsysCollect& collect) {
  const std::string& name = mm.g.name;
  if (org.pg) inst.connect("sleep_req_i", sleep.req_i.at(name)).connect("sleep_ack_o", *s.ack);
  inst.connect("err_sleep_o", s.err_sleep);
  if (s.err_addr) inst.connect("err_addr_o", *s.err_addr);
  if (s.err_conflict) inst.connect("err_conflict_o", *s.err_conflict);
  inst.connect("err_sticky_o", s.err);
  if (org.pg) m.assign(sleep.ack_o.at(name), *s.ack);
  collect.scratchpad_errors.push_back(s.err);
}

// A one-port memory's reader and result writer decoders (the shared memory's ports: drive_shared_ports).
std::string reader_of(const MemsysMemory& mm) {
  const std::string& name = mm.g.name;
  return name == "data" ? "drd" : (name == "weight" ? "wrd" : "brd");
}
std::string writer_of(const MemsysMemory& mm) {
  const std::string& name = mm.g.name;
  return name == "data" ? "wr" : (name == "weight" ? "wrw" : "");
}

// A one-port memory (data, weight, acc): the engine's and the DMA's banks, the scratchpad's port.
ScratchpadWires declare_one_port_wires(Module& m, const MemsysOrg& org, const MemsysMemory& mm) {
  const std::string& name = mm.g.name;
  const int banks = mm.g.mem.banks, width = mm.g.mem.width_bits;
  m.blank();
  m.comment(fmt::format("{} memory: bank enables, addresses, write data; the scratchpad.", name));
  const Expr eng_rd = m.wire(name + "_eng_rd", banks, "banks read by the engine");
  const std::optional<Expr> eng_wr =
      writer_of(mm).empty() ? std::nullopt : std::optional<Expr>(m.wire(name + "_eng_wr", banks, "banks written by the engine"));
  const Expr dma = m.wire(name + "_dma", banks, "bank accessed by the DMA");
  const Expr en = m.wire(name + "_en", banks);
  const Expr we = m.wire(name + "_we", banks);
  const Expr be = m.wire(name + "_be", banks * width / 8);
  const Expr addr = m.wire(name + "_addr", banks * mm.g.addr_bits);
  const Expr wdata = m.wire(name + "_wdata", banks * width);
  const Expr rdata = m.wire(name + "_rdata", banks * width);
  ScratchpadWires scratchpad{eng_rd, eng_wr, dma, {ScratchpadPort{en, we, be, wdata, addr, rdata}}, std::nullopt};
  scratchpad.status = scratchpad_status_wires(m, org, mm, {name + "_rvalid"});
  return scratchpad;
}

// A one-port memory's banks: the engine's read, else its write, else the DMA.
void drive_one_port_banks(Module& m, const MemsysMemory& mm, const Decoders& decoders, const Writer& writer,
                          const MemsysPorts& ports, const DmaAccess& dma, const ScratchpadWires& scratchpad) {
  const DecoderWires& reader = decoders[reader_of(mm)];
  const std::optional<DecoderWires> wr =
      writer_of(mm).empty() ? std::nullopt : std::optional<DecoderWires>(decoders[writer_of(mm)]);
  const DmaWires& dma_wires = dma.memories.at(mm.g.name);
  const ScratchpadPort& p = scratchpad.ports[0];
  const int banks = mm.g.mem.banks, width = mm.g.mem.width_bits, addr_bits = mm.g.addr_bits;
  m.assign(*scratchpad.eng_rd, reader.bank);
  if (wr) m.assign(*scratchpad.eng_wr, wr->bank & rep(banks, writer.go));
  m.assign(scratchpad.dma, dma_wires.hit & rep(banks, dma.go));
  const Expr engine = wr ? *scratchpad.eng_rd | *scratchpad.eng_wr : *scratchpad.eng_rd;
  m.assign(p.en, engine | scratchpad.dma);
  const Expr dma_writes = scratchpad.dma & rep(banks, ports.dma.spm_we_i);
  m.assign(*p.we, wr ? *scratchpad.eng_wr | dma_writes : dma_writes);
  for (int b = 0; b < banks; ++b) {
    std::vector<std::pair<Expr, Expr>> addr{{bit_or_whole(*scratchpad.eng_rd, b), reader.bank_addr[std::size_t(b)]}};
    if (wr) addr.emplace_back(bit_or_whole(*scratchpad.eng_wr, b), wr->bank_addr[std::size_t(b)]);
    m.assign(part_or_whole(p.addr, b, addr_bits), ternary_chain(addr, dma_wires.addr));
    if (wr) {
      const Expr written = bit_or_whole(*scratchpad.eng_wr, b);
      m.assign(part_or_whole(*p.be, b, width / 8), ternary(written, part_or_whole(wr->bpos, b, width / 8), dma_wires.be));
      m.assign(part_or_whole(*p.wdata, b, width), ternary(written, part_or_whole(*wr->bdata, b, width), dma_wires.wdata));
    } else {
      m.assign(part_or_whole(*p.be, b, width / 8), dma_wires.be);
      m.assign(part_or_whole(*p.wdata, b, width), dma_wires.wdata);
    }
  }
}

// A one-port memory's scratchpad (capsgen_spm_<memory>).
void instantiate_one_port_scratchpad(Module& m, const MemsysOrg& org, const MemsysMemory& mm, const SleepPorts& sleep,
                                     const ScratchpadWires& scratchpad, MemsysCollect& collect) {
  const ScratchpadPort& p = scratchpad.ports[0];
  Instance& inst = m.instance(build_spm_memory(mm.g), "u_spm_" + mm.g.name);
  inst.connect("clk_i", m.clk()).connect("rst_ni", m.rst_n());
  inst.connect("p0_en_i", p.en).connect("p0_we_i", *p.we).connect("p0_be_i", *p.be);
  inst.connect("p0_addr_i", p.addr).connect("p0_wdata_i", *p.wdata);
  inst.connect("p0_rdata_o", p.rdata).connect("p0_rvalid_o", scratchpad.status->rvalid[0]);
  connect_scratchpad_status(m, org, mm, sleep, *scratchpad.status, inst, collect);
}

// The shared memory (HY, SMP): port p0 serves drd (decoder drs), p1 wrd (wrds) and the result writer
// (wrs), p2 the DMA. A drd and a write of one word in one cycle: the read gets the word before the write.
// With a lane view (SMP's acc, HY's lanes) p2 serves brd of it too (SMP: decoder brd, HY: brs),
// and the DMA's accesses of both ranges (lanes, bytes).
ScratchpadWires declare_shared_port_wires(Module& m, const MemsysOrg& org, const MemsysMemory& mm) {
  const std::string& name = mm.g.name;
  const int banks = mm.g.mem.banks, width = mm.g.mem.width_bits;
  m.blank();
  m.comment(fmt::format("{} memory: three ports per bank (p0 drd, p1 wrd and wr, p2 {}the DMA): enables, addresses,\n"
                        "write data; the scratchpad.",
                        name, org.p2brd.empty() ? "" : "brd and "));
  const Expr eng_wr = m.wire(name + "_eng_wr", banks, "banks written by the engine (port p1)");
  const Expr dma = m.wire(name + "_dma", banks, "bank accessed by the DMA (port p2)");
  ScratchpadWires scratchpad{std::nullopt, eng_wr, dma, {}, std::nullopt};
  for (int k = 0; k < 3; ++k) {
    const std::string pk = fmt::format("{}_p{}_", name, k);
    const Expr en = m.wire(pk + "en", banks);
    std::optional<Expr> we, be, wdata;
    if (k > 0) {
      we = m.wire(pk + "we", banks);
      be = m.wire(pk + "be", banks * width / 8);
      wdata = m.wire(pk + "wdata", banks * width);
    }
    const Expr addr = m.wire(pk + "addr", banks * mm.g.addr_bits);
    const Expr rdata = m.wire(pk + "rdata", banks * width);
    scratchpad.ports.push_back(ScratchpadPort{en, we, be, wdata, addr, rdata});
  }
  scratchpad.status = scratchpad_status_wires(m, org, mm, {name + "_p0_rvalid", name + "_p1_rvalid", name + "_p2_rvalid"});
  return scratchpad;
}

// The shared memory's three ports: enables, write enables, byte enables, write data and per-bank
// addresses from the engine's decoders and the DMA.
void drive_shared_ports(Module& m, const MemsysOrg& org, const MemsysMemory& mm, const Decoders& decoders, const Writer& writer,
                        const MemsysPorts& ports, const DmaAccess& dma, const ScratchpadWires& scratchpad) {
  const int banks = mm.g.mem.banks, addr_bits = mm.g.addr_bits;
  const DmaWires& bytes = dma.memories.at(mm.g.name);
  const std::optional<DmaWires> lanes =
      org.lview.empty() ? std::nullopt : std::optional<DmaWires>(dma.memories.at(org.lview));
  const std::optional<DecoderWires> p2_reader =
      org.p2brd.empty() ? std::nullopt : std::optional<DecoderWires>(decoders[org.p2brd]);
  const DecoderWires &drs = decoders["drs"], &wrds = decoders["wrds"], &wrs = decoders["wrs"];
  const ScratchpadPort &p0 = scratchpad.ports[0], &p1 = scratchpad.ports[1], &p2 = scratchpad.ports[2];
  m.assign(*scratchpad.eng_wr, wrs.bank & rep(banks, writer.go));
  m.assign(scratchpad.dma, (lanes ? bytes.hit | lanes->hit : bytes.hit) & rep(banks, dma.go));
  m.assign(p0.en, drs.bank);
  m.assign(p1.en, wrds.bank | *scratchpad.eng_wr);
  m.assign(*p1.we, *scratchpad.eng_wr);
  m.assign(*p1.be, wrs.bpos);
  m.assign(*p1.wdata, *wrs.bdata);
  m.assign(p2.en, p2_reader ? p2_reader->bank | scratchpad.dma : scratchpad.dma);
  m.assign(*p2.we, scratchpad.dma & rep(banks, ports.dma.spm_we_i));
  // The DMA's access on p2: the lane view's (psum lanes) or the bytes'.
  const auto dma_of = [&](Expr DmaWires::*field) {
    return lanes ? paren(ternary(lanes->ok, (*lanes).*field, bytes.*field)) : bytes.*field;
  };
  m.assign(*p2.be, banks == 1 ? dma_of(&DmaWires::be) : rep(banks, dma_of(&DmaWires::be)));
  m.assign(*p2.wdata, banks == 1 ? dma_of(&DmaWires::wdata) : rep(banks, dma_of(&DmaWires::wdata)));
  for (int b = 0; b < banks; ++b) {
    const std::size_t i = static_cast<std::size_t>(b);
    m.assign(part_or_whole(p0.addr, b, addr_bits), drs.bank_addr[i]);
    m.assign(part_or_whole(p1.addr, b, addr_bits), ternary(bit_or_whole(wrds.bank, b), wrds.bank_addr[i], wrs.bank_addr[i]));
    m.assign(part_or_whole(p2.addr, b, addr_bits),
             p2_reader ? ternary(bit_or_whole(p2_reader->bank, b), p2_reader->bank_addr[i], dma_of(&DmaWires::addr))
                       : dma_of(&DmaWires::addr));
  }
}

// The shared scratchpad (capsgen_spm_shared); port p0 only reads.
void instantiate_shared_scratchpad(Module& m, const MemsysOrg& org, const MemsysMemory& mm, const SleepPorts& sleep,
                                   const ScratchpadWires& scratchpad, MemsysCollect& collect) {
  const int banks = mm.g.mem.banks, width = mm.g.mem.width_bits;
  Instance& inst = m.instance(build_spm_memory(mm.g), "u_spm_" + mm.g.name);
  inst.connect("clk_i", m.clk()).connect("rst_ni", m.rst_n());
  inst.connect("p0_en_i", scratchpad.ports[0].en).connect("p0_we_i", zero(banks)).connect("p0_be_i", zero(banks * width / 8));
  inst.connect("p0_addr_i", scratchpad.ports[0].addr).connect("p0_wdata_i", zero(banks * width));
  for (int k = 1; k < 3; ++k) {
    const ScratchpadPort& p = scratchpad.ports[static_cast<std::size_t>(k)];
    const std::string pi = fmt::format("p{}_", k);
    inst.connect(pi + "en_i", p.en).connect(pi + "we_i", *p.we).connect(pi + "be_i", *p.be);
    inst.connect(pi + "addr_i", p.addr).connect(pi + "wdata_i", *p.wdata);
  }
  for (int k = 0; k < 3; ++k)
    inst.connect(fmt::format("p{}_rdata_o", k), scratchpad.ports[static_cast<std::size_t>(k)].rdata)
        .connect(fmt::format("p{}_rvalid_o", k), scratchpad.status->rvalid[static_cast<std::size_t>(k)]);
  connect_scratchpad_status(m, org, mm, sleep, *scratchpad.status, inst, collect);
}

// The registers of the DMA's read of this memory: whether it was read, and the bank and lane to
// select in the next cycle.
void register_dma_read(Module& m, const MemsysMemory& mm, const MemsysPorts& ports, DmaAccess& dma, MemsysCollect& collect) {
  const std::string prefix = "dma_" + mm.g.name;
  DmaWires& wires = dma.memories.at(mm.g.name);
  const int bank_log = mm.bank_log, lane_log = mm.lane_log;
  wires.rd_q = m.reg(prefix + "_rd_q", 1, "the DMA read this memory in the previous cycle");
  collect.reset.push_back(nb(*wires.rd_q, bit(false)));
  collect.body.push_back(nb(*wires.rd_q, dma.go & ~ports.dma.spm_we_i & wires.ok));
  if (bank_log > 0) {
    wires.bank_q = m.reg(prefix + "_bank_q", bank_log);
    collect.rd_body.push_back(if_(dma.go, {nb(*wires.bank_q, bits(wires.rel, lane_log + bank_log - 1, lane_log))}));
  }
  if (lane_log > 0) {
    wires.lane_q = m.reg(prefix + "_lane_q", lane_log);
    collect.rd_body.push_back(if_(dma.go, {nb(*wires.lane_q, *wires.lane)}));
  }
}

// Bank accesses per sector of a scratchpad: every port's enabled banks (the shared memory: p0, p1, p2,
// each once) whose address is in the sector.
std::vector<Expr> sector_counters(Module& m, const MemsysMemory& mm, const ScratchpadWires& scratchpad, MemsysCollect& collect) {
  const int banks = mm.g.mem.banks, addr_bits = mm.g.addr_bits, sector_bits = mm.g.sector_bits;
  std::vector<Expr> counters;
  for (int s = 0; s < mm.g.mem.sectors; ++s) {
    std::vector<Expr> terms;
    for (const ScratchpadPort& p : scratchpad.ports)
      for (int b = 0; b < banks; ++b) {
        Expr t = bit_or_whole(p.en, b);
        if (sector_bits > 0)
          t = t & (bits(p.addr, b * addr_bits + addr_bits - 1, b * addr_bits + mm.g.offset_bits) == lit(sector_bits, s));
        terms.push_back(t);
      }
    counters.push_back(add_counter(m, collect, fmt::format("cnt_sector_{}_s{}", mm.g.name, s), terms));
  }
  return counters;
}

// A memory's counters: the engine's bank reads and writes, the DMA's reads, writes and waits, and
// (a scratchpad, not a lane view) the bank accesses per sector.
MemoryCounters memory_counters(Module& m, const MemsysOrg& org, const MemsysMemory& mm, const Decoders& decoders,
                               const MemsysPorts& ports, const DmaAccess& dma, const ScratchpadWires* scratchpad, MemsysCollect& collect) {
  const std::string& name = mm.g.name;
  const DmaWires& dma_wires = dma.memories.at(name);
  m.comment(fmt::format("{} memory counters.", name));
  std::optional<Expr> eng_rd, eng_wr;
  if (mm.view()) {  // a lane view: brd's bank reads of it
    eng_rd = add_counter(m, collect, fmt::format("cnt_eng_rd_{}", name), bit_terms(decoders[org.p2brd].bank));
  } else if (mm.g.ports == 3) {  // drd (p0) and wrd (p1) reads on one bank in one cycle count 2
    std::vector<Expr> reads = bit_terms(decoders["drs"].bank);
    for (const Expr& t : bit_terms(decoders["wrds"].bank)) reads.push_back(t);
    eng_rd = add_counter(m, collect, fmt::format("cnt_eng_rd_{}", name), reads);
    eng_wr = add_counter(m, collect, fmt::format("cnt_eng_wr_{}", name), bit_terms(*scratchpad->eng_wr));
  } else {
    eng_rd = add_counter(m, collect, fmt::format("cnt_eng_rd_{}", name), bit_terms(*scratchpad->eng_rd));
    if (scratchpad->eng_wr) eng_wr = add_counter(m, collect, fmt::format("cnt_eng_wr_{}", name), bit_terms(*scratchpad->eng_wr));
  }
  const DmaPort& p = ports.dma;
  const Expr dma_rd = add_counter(m, collect, fmt::format("cnt_dma_rd_{}", name), {dma.go & ~p.spm_we_i & dma_wires.ok});
  const Expr dma_wr = add_counter(m, collect, fmt::format("cnt_dma_wr_{}", name), {dma.go & p.spm_we_i & dma_wires.ok});
  const Expr dma_wait = add_counter(m, collect, fmt::format("cnt_dma_wait_{}", name), {p.spm_req_i & ~dma.spm_gnt & dma_wires.ok});
  MemoryCounters counters{*eng_rd, eng_wr, dma_rd, dma_wr, dma_wait, {}};
  if (!mm.view()) counters.sectors = sector_counters(m, mm, *scratchpad, collect);
  return counters;
}

// The memories' bank control and scratchpads and their counters.
struct MemoryBlocks {
  std::map<std::string, ScratchpadWires> scratchpads;  // by scratchpad
  std::vector<MemoryCounters> counters;                // MemsysGeometry::mems order
  Expr wr_wait;                                        // the writer's wait counter
};

// Per memory: its bank control and scratchpad (a lane view has none of its own: the shared memory's
// serves it), the registers of its DMA reads, its counters; then the writer's wait counter.
MemoryBlocks memories_and_counters(Module& m, const MemsysOrg& org, const Decoders& decoders, const Writer& writer,
                                   const MemsysPorts& ports, DmaAccess& dma, MemsysCollect& collect) {
  std::map<std::string, ScratchpadWires> scratchpads;
  std::vector<MemoryCounters> counters;
  for (const MemsysMemory& mm : org.mg.mems) {
    if (mm.view()) {
      // SMP's acc lanes, HY's lanes: no scratchpad of their own (the shared memory's block serves them).
    } else if (mm.g.ports == 3) {
      const ScratchpadWires& scratchpad = scratchpads.emplace(mm.g.name, declare_shared_port_wires(m, org, mm)).first->second;
      drive_shared_ports(m, org, mm, decoders, writer, ports, dma, scratchpad);
      instantiate_shared_scratchpad(m, org, mm, ports.sleep, scratchpad, collect);
    } else {
      const ScratchpadWires& scratchpad = scratchpads.emplace(mm.g.name, declare_one_port_wires(m, org, mm)).first->second;
      drive_one_port_banks(m, mm, decoders, writer, ports, dma, scratchpad);
      instantiate_one_port_scratchpad(m, org, mm, ports.sleep, scratchpad, collect);
    }
    register_dma_read(m, mm, ports, dma, collect);
    const auto it = scratchpads.find(mm.phys);
    counters.push_back(memory_counters(m, org, mm, decoders, ports, dma, it == scratchpads.end() ? nullptr : &it->second, collect));
  }
  const Expr wr_wait = add_counter(m, collect, "cnt_wr_wait", {ports.engine.wr.en & ~writer.ready});
  return MemoryBlocks{scratchpads, counters, wr_wait};
}

// DMA read data: the word of the bank read in the previous cycle shifted down by the lane, the access's
// 2^size bytes kept (0 for a dropped read).
void dma_read_data(Module& m, const MemsysGeometry& mg, const MemsysPorts& ports, const DmaAccess& dma,
                   const MemoryBlocks& blocks, MemsysCollect& collect) {
  const int data_bits = mg.spm_data_bits, size_bits = mg.spm_size_bits;
  const DmaPort& p = ports.dma;
  m.blank();
  m.comment("DMA read data: the word of the bank read in the previous cycle shifted down by the lane, the access's\n"
            "2^size bytes kept (0 for a dropped read).");
  const Expr rvalid_q = m.reg("dma_rvalid_q", 1);
  const Expr size_q = m.reg("dma_size_q", size_bits, "size of the DMA read issued in the previous cycle");
  collect.reset.push_back(nb(rvalid_q, bit(false)));
  collect.body.push_back(nb(rvalid_q, dma.go & ~p.spm_we_i));
  collect.rd_body.push_back(if_(dma.go, {nb(size_q, p.spm_size_i)}));
  std::vector<Expr> read;
  for (const MemsysMemory& mm : mg.mems) {
    const DmaWires& wires = dma.memories.at(mm.g.name);
    const int width = mm.g.mem.width_bits;
    const ScratchpadWires& scratchpad = blocks.scratchpads.at(mm.phys);
    const Expr& rdata = scratchpad.ports[mm.g.ports == 3 ? 2 : 0].rdata;  // the shared memory's DMA port: p2
    const Expr word = wires.bank_q ? rdata.part_from(cat({*wires.bank_q, lit(clog2(width), 0)}), width) : rdata;
    const Expr shifted = m.wire("dma_" + mm.g.name + "_word", width, "the word read, shifted down by the lane");
    m.assign(shifted, wires.lane_q ? shr(word, cat({*wires.lane_q, lit(clog2(mm.lane_bits), 0)})) : word);
    read.push_back(paren(ternary(*wires.rd_q, zext(shifted, data_bits), zero(data_bits))));
  }
  // Bytes of the read: byte k iff size >= floor(log2 k) + 1 (byte 0 always).
  std::vector<Expr> keep;
  for (int k = mg.spm_max_size; k >= 1; --k) keep.push_back(rep(8 << (k - 1), size_q >= lit(size_bits, k)));
  keep.push_back(lit_hex(8, 0xff));
  const Expr kept = m.wire("dma_keep", data_bits, "bits of the read word inside the access");
  m.assign(kept, cat(keep));
  m.assign(p.spm_rvalid_o, rvalid_q);
  m.assign(p.spm_rdata_o, paren(any_of(read)) & kept);
}

// Read-side registers, counters, the sticky range error: the two always blocks of everything collected.
Expr sticky_error_and_registers(Module& m, MemsysCollect& collect) {
  m.blank();
  m.comment("Read-side registers, counters, the sticky range error.");
  const Expr err_range = m.wire("err_range", 1, "an access outside its memory this cycle");
  const Expr err_range_q = m.reg("err_range_q", 1);
  m.assign(err_range, any_of(collect.err_range));
  collect.reset.push_back(nb(err_range_q, bit(false)));
  collect.body.push_back(if_(err_range, {nb(err_range_q, bit(true))}));
  if (!collect.rd_body.empty()) m.always_ff(collect.rd_body);
  m.always_ff_next(collect.reset, collect.body);
  return err_range_q;
}

// The counter outputs from their registers, and err_o.
void drive_counter_and_error_outputs(Module& m, const MemsysGeometry& mg, const CounterOutputs& out,
                                     const MemoryBlocks& blocks, const Expr& err_range_q, const MemsysCollect& collect) {
  for (std::size_t i = 0; i < mg.mems.size(); ++i) {
    const MemoryCounters &org = out.memories[i], &q = blocks.counters[i];
    m.assign(org.eng_rd, q.eng_rd);
    if (org.eng_wr) m.assign(*org.eng_wr, *q.eng_wr);
    m.assign(org.dma_rd, q.dma_rd);
    m.assign(org.dma_wr, q.dma_wr);
    m.assign(org.dma_wait, q.dma_wait);
    for (std::size_t s = 0; s < q.sectors.size(); ++s)
      m.assign(org.sectors.at(0).part(static_cast<int>(s), kMemsysCounterBits), q.sectors[s]);
  }
  m.assign(out.cnt_wr_wait_o, blocks.wr_wait);
  std::vector<Expr> errors{err_range_q};
  errors.insert(errors.end(), collect.scratchpad_errors.begin(), collect.scratchpad_errors.end());
  m.assign(out.err_o, any_of(errors));
}

}  // namespace

Module build_memsys(const AccelConfig& cfg) {
  const MemsysGeometry mg = memsys_geometry(cfg);
  const MemsysOrg org = memsys_org(cfg, mg);
  Module m(kMemsysModule, org.smp ? smp_description(org) : org.hy ? hy_description(org) : sep_description(org));
  const EnginePorts engine = declare_engine_ports(m, org);
  const DmaPort dma_port = declare_dma_port(m, org);
  const SleepPorts sleep = declare_sleep_ports(m, org);
  const CounterOutputs counters = declare_counter_and_error_outputs(m, org);
  const MemsysPorts ports{engine, dma_port, sleep, counters};
  const std::map<std::string, ScratchpadReads> scratchpads = forward_scratchpad_reads(m, org);

  MemsysCollect collect;
  Decoders decoders = engine_decoders(org);
  for (const Decoder& decoder : decoders.all) engine_port_decoder(m, decoders, decoder, engine, scratchpads, collect);
  decoder_range_errors(decoders, engine, collect);
  const Writer writer = writer_arbitration(m, org, decoders, engine, collect);
  DmaAccess dma = dma_decode_and_grant(m, org, ports, decoders, writer, scratchpads, collect);
  const MemoryBlocks blocks = memories_and_counters(m, org, decoders, writer, ports, dma, collect);
  dma_read_data(m, mg, ports, dma, blocks, collect);
  const Expr err_range_q = sticky_error_and_registers(m, collect);
  drive_counter_and_error_outputs(m, mg, counters, blocks, err_range_q, collect);
  return m;
}

// memsys.json (schemas/memsys.schema.json): the address map, read by tb/memsys_tb.cpp and tb/dma_tb.cpp.
// The memories in element-space order; a view (SMP's acc, HY's lanes) is a range whose words are a
// scratchpad's (no sectors of its own). The shared memory's ports: p0 drd, p1 wrd and wr, p2 brd (of
// SMP's acc or HY's lanes) and the DMA.
nlohmann::json memsys_summary(const AccelConfig& cfg) {
  const std::string reason = memsys_unsupported_reason(cfg);
  if (!reason.empty()) return {{"supported", false}, {"reason", reason}};
  const MemsysGeometry g = memsys_geometry(cfg);
  nlohmann::json mems = nlohmann::json::array(), views = nlohmann::json::array();
  for (const MemsysMemory& m : g.mems) {
    mems.push_back({{"name", m.g.name},
                    {"elem_base", m.elem_base},
                    {"elements", m.elements},
                    {"words", m.words},
                    {"banks", m.g.mem.banks},
                    {"sectors", m.g.mem.sectors},
                    {"words_per_sector", m.g.words_per_sector},
                    {"width_bits", m.g.mem.width_bits},
                    {"lane_bits", m.lane_bits}});
    if (m.view()) views.push_back({{"range", m.g.name}, {"scratchpad", m.phys}});
  }
  return {{"supported", true},
          {"addr_bits", g.addr_bits},
          {"spm_addr_bits", g.spm_addr_bits},
          {"spm_data_bits", g.spm_data_bits},
          {"spm_size_bits", g.spm_size_bits},
          {"spm_max_size", g.spm_max_size},
          {"counter_bits", kMemsysCounterBits},
          {"rows", g.rows},
          {"cols", g.cols},
          {"data_bits", g.data},
          {"weight_bits", g.weight},
          {"psum_bits", g.psum},
          {"out_bits", g.out_bits},
          {"power_gating", cfg.scratchpad.power_gating},
          {"wakeup_cycles", cfg.scratchpad.wakeup_cycles},
          {"organization", to_string(cfg.scratchpad.organization)},
          {"memories", mems},
          {"views", views}};
}

void emit_memsys(const AccelConfig& cfg, Design& design) {
  if (memsys_unsupported_reason(cfg).empty()) design.add_module(build_memsys(cfg));
  design.add_summary(kMemsysSummaryName, memsys_summary(cfg));
}

}  // namespace capsgen::emit
