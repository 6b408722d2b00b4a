#include "emit/memsys.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "core/input_error.hpp"
#include "emit/activation.hpp"
#include "emit/activation_internal.hpp"
#include "emit/gather.hpp"

namespace capsgen::emit {

using detail::bits;
using detail::lit;
using detail::ones;
using detail::zext;

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

// {sector, offset} of bank row `row` (a wire of mm.row_bits bits; unused when row_bits == 0) for
// the memory's per-bank address port.
std::string row_to_addr(const MemsysMemory& mm, const std::string& row) {
  const SpmGeometry& g = mm.g;
  const int SB = g.sector_bits, OB = g.offset_bits, RB = mm.row_bits, SC = g.mem.sectors;
  const long long WPS = g.words_per_sector;
  if (RB == 0) return lit(g.addr_bits, 0);
  if ((1LL << clog2(WPS)) == WPS) {
    const int k = clog2(WPS);
    const std::string off = k > 0 ? bits(row, k - 1, 0) : "1'b0";
    if (SB == 0) return off;
    if (k == 0) return fmt::format("{{{}, {}}}", row, off);
    return fmt::format("{{{}, {}}}", bits(row, RB - 1, k), off);
  }
  if (SC == 1) return row;  // RB == OB
  // Sector = number of sector starts <= row; offset = row - start, exact in OB bits (< WPS).
  std::string sec, off;
  for (int s = SC - 1; s >= 1; --s) {
    const std::string cond = fmt::format("({} >= {})", row, lit(RB, s * WPS));
    sec += fmt::format("{} ? {} : ", cond, lit(SB, s));
    off += fmt::format("{} ? {} - {} : ", cond, bits(row, OB - 1, 0), lit(OB, (s * WPS) % (1LL << OB)));
  }
  sec += lit(SB, 0);
  off += bits(row, OB - 1, 0);
  return fmt::format("{{({}), ({})}}", sec, off);
}

std::string bit_of(const std::string& v, int i, int n) { return n == 1 ? v : fmt::format("{}[{}]", v, i); }

// Slice i of width w of a `total`-bit vector (the whole name when it has one slice).
std::string sl(const std::string& v, int i, int w, int total) { return w == total ? v : expr_slice(v, i, str(w)); }

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
std::string sector_wait_text(const MemsysOrg& o) {
  return o.pg ? " or when the word's sector is not usable (its sleep_ack is high)" : "";
}

// The module's description, one per organization.
std::string sep_description(const MemsysOrg& o) {
  const MemsysGeometry& mg = o.mg;
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
      address_map_text(mg), mg.rows, mg.cols, mg.cols, mg.psum, mg.out_bits, sector_wait_text(o), kMemsysCounterBits);
}

std::string hy_description(const MemsysOrg& o) {
  const MemsysGeometry& mg = o.mg;
  const bool lanes = !o.lview.empty();
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
      mg.cols, mg.psum, mg.out_bits, lanes ? ", brd of the lanes too" : "", sector_wait_text(o), kMemsysCounterBits);
}

std::string smp_description(const MemsysOrg& o) {
  const MemsysGeometry& mg = o.mg;
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
      address_map_text(mg), mg.rows, mg.cols, mg.cols, mg.psum, mg.out_bits, sector_wait_text(o), kMemsysCounterBits);
}

// The engine's four memory ports: the reads drd (data vectors), wrd (weight rows), brd (bias rows)
// and the result writer wr.
void declare_engine_ports(Module& m, const MemsysOrg& o) {
  const MemsysGeometry& mg = o.mg;
  const int AW = mg.addr_bits, R = mg.rows, C = mg.cols, OB = mg.out_bits;
  const bool smp = o.smp, hy = o.hy;
  m.clock_and_reset()
      .input("drd_en_i", "1", smp ? "engine data read (shared memory)" : hy ? "engine data read (data or shared memory)" : "engine data read (data memory)")
      .input("drd_vec_i", "1", fmt::format("with drd_en_i: {} consecutive elements (else one)", R))
      .input("drd_addr_i", str(AW), "element address (the first one of a vector)")
      .output("drd_data_o", str(R * mg.data), fmt::format("cycle after drd_en_i: element r in [r*{0} +: {0}]", mg.data))
      .input("wrd_en_i", "1", smp ? "engine weight row read (shared memory)" : hy ? "engine weight row read (weight or shared memory)" : "engine weight row read (weight memory)")
      .input("wrd_addr_i", str(AW), "address of the row's first element")
      .output("wrd_data_o", str(C * mg.weight), fmt::format("cycle after wrd_en_i: {} consecutive weight codes", C))
      .input("brd_en_i", "1", smp ? "engine bias read (acc lanes of the shared memory)"
                              : o.lview.empty() ? "engine bias read (acc memory)" : "engine bias read (acc memory or the shared memory's lanes)")
      .input("brd_addr_i", str(AW), "address of the first psum code")
      .output("brd_data_o", str(C * mg.psum), fmt::format("cycle after brd_en_i: {} consecutive psum codes", C))
      .input("wr_en_i", "1", smp ? "engine result write (shared memory)" : hy ? "engine result write (data, weight or shared memory)" : "engine result write (data or weight memory)")
      .input("wr_vec_i", "1", fmt::format("with wr_en_i: lane c at wr_addr_i + c where wr_mask_i[c] (c < {})", C))
      .input("wr_mask_i", str(C), "lanes of a wr_vec_i write")
      .input("wr_addr_i", str(AW), "element address (lane 0's; selects the memory)")
      .input("wr_data_i", str(C * OB), fmt::format("result codes, lane c in [c*{0} +: {0}]", OB))
      .output("wr_ready_o", "1",
              "the write happens in this cycle if wr_en_i (low: the same memory's read uses one of its banks)");
}

// The DMA's SPM port: one element-addressed access of 2^size bytes.
void declare_dma_port(Module& m, const MemsysOrg& o) {
  const MemsysGeometry& mg = o.mg;
  const bool smp = o.smp, hy = o.hy;
  m.input("spm_req_i", "1", "DMA access")
      .output("spm_gnt_o", "1", "DMA access accepted this cycle")
      .input("spm_we_i", "1", "DMA: 1 write, 0 read")
      .input("spm_addr_i", str(mg.spm_addr_bits), smp ? "DMA element address (acc lanes, shared bytes)" : hy ? "DMA element address (data, weight, acc, shared elements)" : "DMA element address (data, weight, acc elements)")
      .input("spm_size_i", str(mg.spm_size_bits), fmt::format("DMA access of 2^size bytes (0..{}; whole lanes of one word)", mg.spm_max_size))
      .input("spm_wdata_i", str(mg.spm_data_bits), "DMA write data: the access's bytes in the low bytes")
      .output("spm_rvalid_o", "1", "read data of the read granted in the previous cycle")
      .output("spm_rdata_o", str(mg.spm_data_bits), "DMA read data: the access's bytes in the low bytes, zeros above");
}

// Power gating: each scratchpad's per-sector sleep request and acknowledge.
void declare_sleep_ports(Module& m, const MemsysOrg& o) {
  if (!o.pg) return;
  for (const MemsysMemory& mm : o.mg.mems) {
    if (mm.view()) continue;  // its scratchpad's sectors
    m.input(fmt::format("sleep_req_{}_i", mm.g.name), str(mm.g.mem.sectors), fmt::format("{} memory: per sector 1 = sleep", mm.g.name));
    m.output(fmt::format("sleep_ack_{}_o", mm.g.name), str(mm.g.mem.sectors),
             fmt::format("{} memory: per sector 1 = asleep or waking (not usable)", mm.g.name));
  }
}

// The access counters of every memory, the writer's wait counter and the sticky error.
void declare_counter_and_error_outputs(Module& m, const MemsysOrg& o) {
  const int KB = kMemsysCounterBits;
  for (const MemsysMemory& mm : o.mg.mems) {
    const std::string& n = mm.g.name;
    m.output(fmt::format("cnt_eng_rd_{}_o", n), str(KB), fmt::format("{} memory: bank reads by the engine", n));
    if (mm.lane_bits != kMemsysPsumLaneBits)  // psum lanes (acc, lanes): read by brd, written by the DMA only
      m.output(fmt::format("cnt_eng_wr_{}_o", n), str(KB), fmt::format("{} memory: bank writes by the engine", n));
    m.output(fmt::format("cnt_dma_rd_{}_o", n), str(KB), fmt::format("{} memory: reads by the DMA", n));
    m.output(fmt::format("cnt_dma_wr_{}_o", n), str(KB), fmt::format("{} memory: writes by the DMA", n));
    m.output(fmt::format("cnt_dma_wait_{}_o", n), str(KB), fmt::format("{} memory: cycles with spm_req_i & ~spm_gnt_o", n));
    if (mm.view()) continue;  // a lane view's sectors are the shared memory's
    m.output(fmt::format("cnt_sector_{}_o", n), str(mm.g.mem.sectors * KB),
             fmt::format("{} memory: bank accesses (reads + writes, all ports) per sector s in [s*{} +: {}]", n, KB, KB));
  }
  m.output("cnt_wr_wait_o", str(KB), "cycles with wr_en_i & ~wr_ready_o");
  m.output("err_o", "1", "sticky: a dropped access or a scratchpad error flag");
}

// What the parts of capsgen_memsys add to as they are built, emitted at the end: the terms of the
// range error and of err_o, and the statements of the two register blocks.
struct MemsysCollect {
  std::string err_range;                // " | " of the accesses dropped this cycle
  std::string err_any = "err_range_q";  // err_o: the sticky range error, then each scratchpad's sticky flag
  Stmts rd_body;                        // read-side registers without reset (always_ff)
  Stmts reset, body;                    // registers with reset (always_ff_reset): read state, counters
};

void or_term(std::string& acc, const std::string& t) { acc += (acc.empty() ? "" : " | ") + t; }

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

// The engine ports' decoders, in the order their hardware is emitted.
struct Decoders {
  const MemsysGeometry& mg;
  std::vector<Decoder> all;

  const MemsysMemory& mem(const Decoder& p) const { return mg.mems[static_cast<std::size_t>(p.mem)]; }
  bool on_shared(const Decoder& p) const { return mem(p).phys == "shared"; }
  // The shared memory's decoder of an input port ("" when none): the port reaches that memory too.
  std::string shared_of(const std::string& in) const {
    for (const Decoder& p : all)
      if (on_shared(p) && p.in == in) return p.name;
    return "";
  }
  // The port's decoder of a one-port memory ("" when none: SMP).
  std::string single_of(const std::string& in) const {
    for (const Decoder& p : all)
      if (!on_shared(p) && p.in == in && !p.write) return p.name;
    return "";
  }
};

Decoders engine_decoders(const MemsysOrg& o) {
  const MemsysGeometry& mg = o.mg;
  const int R = mg.rows, C = mg.cols, OB = mg.out_bits;
  const int ish = mg.index("shared");
  Decoders d{mg, {}};
  if (o.smp) {  // brd reaches the acc lanes (mems[0]) through the scratchpad's port p2
    d.all = {{"brd", "brd", mg.index("acc"), false, C, mg.psum, 2}};
  } else {
    d.all = {{"drd", "drd", 0, false, R, mg.data},   {"wr", "wr", 0, true, C, OB},
             {"wrw", "wr", 1, true, C, OB},          {"wrd", "wrd", 1, false, C, mg.weight},
             {"brd", "brd", 2, false, C, mg.psum}};
  }
  if (ish >= 0) {
    d.all.push_back({"drs", "drd", ish, false, R, mg.data, 0});
    d.all.push_back({"wrs", "wr", ish, true, C, OB, 1});
    d.all.push_back({"wrds", "wrd", ish, false, C, mg.weight, 1});
  }
  if (o.hy && !o.lview.empty()) d.all.push_back({"brs", "brd", mg.index(o.lview), false, C, mg.psum, 2});  // HY's lanes: p2
  return d;
}

// A decoder's memory seen as lane positions: B banks of E lanes of LW bits, NPOS = B*E positions of
// T bits in all. The element address relative to the memory has REL = RB + BB + LB bits {bank row,
// bank, lane}; its low SBITS = BB + LB bits rotate the positions to the banks.
struct LanePositions {
  int B, E, LB, BB, RB, REL, SBITS, NPOS, LW, T;
};

LanePositions lane_positions(const MemsysMemory& mm) {
  const int B = mm.g.mem.banks, E = mm.lanes, LB = mm.lane_log, BB = mm.bank_log, RB = mm.row_bits, LW = mm.lane_bits;
  return LanePositions{B, E, LB, BB, RB, LB + BB + RB, LB + BB, B * E, LW, B * E * LW};
}

// The decoder's wires (prefix: its name), declared ahead of their logic.
void declare_decoder_wires(Module& m, const Decoders& d, const Decoder& p, const LanePositions& z) {
  const MemsysMemory& mm = d.mem(p);
  const std::string& x = p.name;
  m.blank();
  m.comment(fmt::format("Engine port {} -> {} memory{}: range check, bank row per bank, lane positions rotated to banks.", p.in,
                        mm.g.name, p.sport >= 0 ? fmt::format(" (port p{})", p.sport) : ""));
  m.wire(x + "_ok", "1", "every element of the access lies in the memory");
  m.wire(x + "_rel", str(z.REL), "element address relative to the memory (mod 2^bits)");
  m.wire(x + "_pos", str(z.NPOS), "lane positions used, before rotation (element i at position i)");
  m.wire(x + "_bpos", str(z.NPOS), "lane positions used, per bank: bank b has [b*E +: E]");
  m.wire(x + "_bank", str(z.B), "banks the access uses (in range)");
  if (z.RB > 0) m.wire(x + "_row0", str(z.RB), "bank row of the first word");
  if (z.BB > 0) m.wire(x + "_w0b", str(z.BB), "bank of the first word");
  if (z.SBITS > 0) m.wire(x + "_s", str(z.SBITS), "rotation: (rel mod positions)");
  for (int b = 0; b < z.B; ++b) {
    if (z.RB > 0) m.wire(fmt::format("{}_b{}_row", x, b), str(z.RB));
    m.wire(fmt::format("{}_b{}_addr", x, b), str(mm.g.addr_bits));
  }
}

// Whether the access lies in the decoder's memory; a read that no memory the port reaches holds
// whole, and a write in none of the memories, is dropped (err_range; writes: writer_arbitration).
void check_decoder_range(Module& m, const Decoders& d, const Decoder& p, MemsysCollect& c) {
  const MemsysMemory& mm = d.mem(p);
  const int AW = d.mg.addr_bits, R = d.mg.rows, C = d.mg.cols;
  const std::string x = p.name, a = p.in + "_addr_i";
  const long long base = mm.elem_base, end = mm.elem_base + mm.elements;
  // Range: base <= a and a + (last element) < end.
  auto below = [&](long long k) {  // a + k < end
    return end - k <= 0 ? std::string("1'b0") : fmt::format("({} < {})", a, lit(AW, end - k));
  };
  const std::string lo = base > 0 ? fmt::format("({} >= {}) & ", a, lit(AW, base)) : "";
  if (p.in == "drd") {
    m.assign(x + "_ok", fmt::format("{}(drd_vec_i ? {} : {})", lo, below(R - 1), below(0)));
  } else if (p.write) {
    // The memory is the one holding lane 0's address; every masked lane must lie in it.
    m.wire(x + "_lane_ok", str(C), "lane c's element is in the memory");
    for (int lane = 0; lane < C; ++lane) m.assign(bit_of(x + "_lane_ok", lane, C), below(lane));
    m.assign(x + "_ok", fmt::format("{}{} & (~wr_vec_i | ((wr_mask_i & ~{}) == {}))", lo, bit_of(x + "_lane_ok", 0, C),
                                    x + "_lane_ok", lit(C, 0)));
  } else {
    m.assign(x + "_ok", lo + below(p.nmax - 1));
  }
  // A read is dropped when no memory the port reaches holds it whole.
  const std::string shared = d.shared_of(p.in);
  if (!p.write && !d.on_shared(p))
    or_term(c.err_range, shared.empty() ? fmt::format("({}_en_i & ~{}_ok)", p.in, x)
                                        : fmt::format("({}_en_i & ~{}_ok & ~{}_ok)", p.in, x, shared));
  else if (!p.write && d.single_of(p.in).empty())
    or_term(c.err_range, fmt::format("({}_en_i & ~{}_ok)", p.in, x));
}

// The access's lane positions (element i at position i) rotated by the relative address to the
// banks, the banks it uses, and each bank's row (banks before the first word's bank are a row further)
// and address.
void rotate_positions_to_banks(Module& m, const Decoders& d, const Decoder& p, const LanePositions& z) {
  const MemsysMemory& mm = d.mem(p);
  const int R = d.mg.rows, C = d.mg.cols, B = z.B, NPOS = z.NPOS, REL = z.REL, SBITS = z.SBITS;
  const std::string x = p.name, a = p.in + "_addr_i";
  const long long base = mm.elem_base;
  m.assign(x + "_rel", base > 0 ? fmt::format("{} - {}", bits(a, REL - 1, 0), lit(REL, base % (1LL << REL)))
                                : bits(a, REL - 1, 0));
  if (z.RB > 0) m.assign(x + "_row0", bits(x + "_rel", REL - 1, SBITS));
  if (z.BB > 0) m.assign(x + "_w0b", bits(x + "_rel", SBITS - 1, z.LB));
  if (SBITS > 0) m.assign(x + "_s", bits(x + "_rel", SBITS - 1, 0));
  // Positions before rotation.
  const auto pad = [&](const std::string& v, int n) { return n == NPOS ? v : zext(v, n, NPOS); };
  if (p.in == "drd")
    m.assign(x + "_pos", fmt::format("drd_vec_i ? {} : {}", pad(ones(R), R), lit(NPOS, 1)));
  else if (p.write)
    m.assign(x + "_pos", fmt::format("wr_vec_i ? {} : {}", pad("wr_mask_i", C), lit(NPOS, 1)));
  else
    m.assign(x + "_pos", pad(ones(C), C));
  if (SBITS > 0) {
    m.lint_off("UNUSEDSIGNAL", "rotation: only the upper half of the doubled vector is used.");
    m.wire(x + "_pos2", str(2 * NPOS));
    m.lint_on("UNUSEDSIGNAL");
    m.assign(x + "_pos2", fmt::format("{{{0}_pos, {0}_pos}} << {0}_s", x));
    m.assign(x + "_bpos", bits(x + "_pos2", 2 * NPOS - 1, NPOS));
  } else {
    m.assign(x + "_bpos", x + "_pos");
  }
  const std::string gate = p.write ? x + "_ok" : fmt::format("{}_en_i & {}_ok", p.in, x);
  for (int b = 0; b < B; ++b) {
    m.assign(bit_of(x + "_bank", b, B), fmt::format("{} & (|{})", gate, sl(x + "_bpos", b, z.E, NPOS)));
    if (z.RB > 0) {
      const std::string row = fmt::format("{}_b{}_row", x, b);
      if (z.BB > 0 && b < B - 1)
        m.assign(row, fmt::format("{0}_row0 + (({0}_w0b > {1}) ? {2} : {3})", x, lit(z.BB, b), lit(z.RB, 1), lit(z.RB, 0)));
      else
        m.assign(row, x + "_row0");
      m.assign(fmt::format("{}_b{}_addr", x, b), row_to_addr(mm, row));
    } else {
      m.assign(fmt::format("{}_b{}_addr", x, b), row_to_addr(mm, ""));
    }
  }
}

// Result codes sign-extended to 8-bit lanes, rotated to the banks like the positions.
void rotate_write_data_to_banks(Module& m, const Decoders& d, const Decoder& p, const LanePositions& z) {
  const int C = d.mg.cols, OB = d.mg.out_bits, NPOS = z.NPOS, LW = z.LW, T = z.T;
  const std::string& x = p.name;
  m.wire(x + "_pdata", str(T), "result codes in 8-bit lanes, element i in lane i");
  std::string cat;
  for (int i = NPOS - 1; i >= 0; --i) {
    std::string lane;
    if (i >= C) lane = lit(LW, 0);
    else {
      const std::string v = sl("wr_data_i", i, OB, C * OB);
      lane = OB == LW ? v : (OB == 1 ? fmt::format("{{{}{{{}}}}}", LW, v)
                                     : fmt::format("{{{{{}{{{}}}}}, {}}}", LW - OB, bits("wr_data_i", i * OB + OB - 1, i * OB + OB - 1), v));
    }
    cat += (cat.empty() ? "" : ", ") + lane;
  }
  m.assign(x + "_pdata", NPOS == 1 ? cat : "{" + cat + "}");
  m.wire(x + "_bdata", str(T), "write data per bank: bank b has [b*W +: W]");
  if (z.SBITS > 0) {
    m.lint_off("UNUSEDSIGNAL", "rotation: only the upper half of the doubled vector is used.");
    m.wire(x + "_pdata2", str(2 * T));
    m.lint_on("UNUSEDSIGNAL");
    m.assign(x + "_pdata2", fmt::format("{{{0}_pdata, {0}_pdata}} << {{{0}_s, {1}}}", x, lit(clog2(LW), 0)));
    m.assign(x + "_bdata", bits(x + "_pdata2", 2 * T - 1, T));
  } else {
    m.assign(x + "_bdata", x + "_pdata");
  }
}

// Read data: the memory's banks rotated back by the registered rotation (element i in lane i).
void rotate_read_data_back(Module& m, const Decoders& d, const Decoder& p, const LanePositions& z, MemsysCollect& c) {
  const MemsysMemory& mm = d.mem(p);
  const int LW = z.LW, T = z.T, SBITS = z.SBITS;
  const std::string& x = p.name;
  const std::string rd = p.sport >= 0 ? fmt::format("{}_p{}_rdata", mm.phys, p.sport) : mm.phys + "_rdata";
  if (SBITS > 0) {
    m.reg(x + "_s_q", str(SBITS), "rotation of the read issued in the previous cycle");
    c.rd_body.push_back(if_(p.in + "_en_i", {nb(x + "_s_q", x + "_s")}));
  }
  // Once, with drd's first decoder; only with more than one row: lanes 1.. of a drd read are zero
  // unless it was a vector read, and one row has no such lanes.
  if (d.mg.rows > 1 && x == (d.single_of("drd").empty() ? d.shared_of("drd") : "drd")) {
    m.reg("drd_vec_q", "1", "the previous cycle's read was a vector");
    c.reset.push_back(nb("drd_vec_q", "1'b0"));
    c.body.push_back(if_("drd_en_i", {nb("drd_vec_q", "drd_vec_i")}));
  }
  m.lint_off("UNUSEDSIGNAL", fmt::format("read rotation: only the lower half is used, and of each {}-bit lane only the code's "
                                         "low bits.",
                                         LW));
  m.wire(x + "_rot", str(T), "the read's words rotated: element i in lane i");
  if (SBITS > 0) {
    m.wire(x + "_rot2", str(2 * T));
    m.assign(x + "_rot2", fmt::format("{{{0}, {0}}} >> {{{1}_s_q, {2}}}", rd, x, lit(clog2(LW), 0)));
    m.assign(x + "_rot", bits(x + "_rot2", T - 1, 0));
  } else {
    m.assign(x + "_rot", rd);
  }
  m.lint_on("UNUSEDSIGNAL");
}

// The port's data: from this memory, or (a port that reaches the shared memory too, assigned with
// its shared decoder) from the memory the read went to.
void read_data_mux(Module& m, const Decoders& d, const Decoder& p, const LanePositions& z, MemsysCollect& c) {
  const std::string& x = p.name;
  std::string other;
  if (d.on_shared(p) && !d.single_of(p.in).empty()) {
    other = d.single_of(p.in);  // the port's one-port memory's decoder (HY)
    const std::string q = p.in + "_shared_q";
    m.reg(q, "1", "the previous cycle's read went to the shared memory");
    c.reset.push_back(nb(q, "1'b0"));
    c.body.push_back(if_(p.in + "_en_i", {nb(q, x + "_ok")}));
  }
  if (!d.on_shared(p) && !d.shared_of(p.in).empty()) return;  // the shared decoder assigns the port
  for (int i = 0; i < p.nmax; ++i) {
    std::string v = bits(x + "_rot", i * z.LW + p.out_bits - 1, i * z.LW);
    if (!other.empty())
      v = fmt::format("({}_shared_q ? {} : {})", p.in, v, bits(other + "_rot", i * z.LW + p.out_bits - 1, i * z.LW));
    m.assign(sl(p.in + "_data_o", i, p.out_bits, p.nmax * p.out_bits),
             p.in == "drd" && i > 0 ? fmt::format("drd_vec_q ? {} : {}", v, lit(p.out_bits, 0)) : v);
  }
}

// One engine port's decoder into one memory: range check, bank row per bank, lane positions rotated
// to banks; the write data rotated to the banks or the read data rotated back to the port.
void engine_port_decoder(Module& m, const Decoders& d, const Decoder& p, MemsysCollect& c) {
  const LanePositions z = lane_positions(d.mem(p));
  declare_decoder_wires(m, d, p, z);
  check_decoder_range(m, d, p, c);
  rotate_positions_to_banks(m, d, p, z);
  if (p.write) {
    rotate_write_data_to_banks(m, d, p, z);
  } else {
    rotate_read_data_back(m, d, p, z, c);
    read_data_mux(m, d, p, z, c);
  }
}

// The writer waits while the same memory's read of this cycle uses one of its banks; a write in none
// of the memories it reaches is dropped.
void writer_arbitration(Module& m, const MemsysOrg& o, MemsysCollect& c) {
  const MemsysGeometry& mg = o.mg;
  m.blank();
  m.comment(o.smp ? "The writer waits while a wrd of this cycle (port p1, like the writer) uses one of its banks; a drd\n"
                    "(port p0) reads the word before the write; a write outside the shared bytes is dropped."
           : o.hy ? "The writer waits while the same memory's read of this cycle uses one of its banks (data: drd, weight:\n"
                    "wrd, shared: wrd on port p1; a drd of the shared memory uses p0 and reads the word before the write);\n"
                    "a write in none of the memories is dropped."
                  : "The writer waits while the same memory's read of this cycle uses one of its banks (data: drd, weight:\n"
                    "wrd); a write in neither memory is dropped.");
  m.wire("wr_ready", "1");
  m.wire("wr_go", "1", "the write happens this cycle");
  std::string ready, wr_ok;
  const auto conflict = [&](const std::string& w, const std::string& r, int mem) {
    or_term(wr_ok, w + "_ok");
    ready += fmt::format("{}(({}_bank & {}_bank) == {})", ready.empty() ? "" : " & ", w, r, lit(mg.mems[std::size_t(mem)].g.mem.banks, 0));
  };
  if (!o.smp) {
    conflict("wr", "drd", 0);
    conflict("wrw", "wrd", 1);
  }
  const int ish = mg.index("shared");
  if (ish >= 0) conflict("wrs", "wrds", ish);
  m.assign("wr_ready", ready);
  or_term(c.err_range, fmt::format("(wr_en_i & ~({}))", wr_ok));
  m.assign("wr_go", "wr_en_i & wr_ready");
  m.assign("wr_ready_o", "wr_ready");
}

// The DMA's wires for memory mm (prefix dma_<memory>), declared ahead of their logic.
void declare_dma_decoder_wires(Module& m, const MemsysMemory& mm, const LanePositions& z) {
  const std::string n = "dma_" + mm.g.name;
  const int W = mm.g.mem.width_bits;
  m.wire(n + "_in", "1", "the address is in this memory");
  m.wire(n + "_rel", str(z.REL), "element relative to the memory");
  if (z.LB > 0) m.wire(n + "_lane", str(z.LB), "lane of the element in its word");
  m.wire(n + "_fit", "1", "the size is whole lanes, at most a word, and the lanes stay in the word");
  m.wire(n + "_ok", "1", "a legal access to this memory");
  m.wire(n + "_addr", str(mm.g.addr_bits), "{sector, word} in the bank");
  m.wire(n + "_hit", str(z.B), "the bank addressed (one-hot, 0 when not a legal access to this memory)");
  m.wire(n + "_usable", "1", "the word's sector is usable");
  m.wire(n + "_free", "1", "no engine access on the bank, sector usable");
  m.wire(n + "_be", str(W / 8), "byte enables of a write: the access's bytes at the lane");
  m.wire(n + "_wdata", str(W), "write data shifted to the lane");
}

// Legal sizes: 2^s bytes = n whole lanes (n = 1, 2, .. E), starting at a lane <= E - n.
std::string dma_size_fits(const MemsysGeometry& mg, const MemsysMemory& mm, const LanePositions& z) {
  const std::string n = "dma_" + mm.g.name;
  std::string fit;
  for (int sz = 0; sz <= mg.spm_max_size; ++sz) {
    const int nl = memsys_dma_lanes(mm, sz);
    if (nl == 0) continue;
    std::string t = fmt::format("(spm_size_i == {})", lit(mg.spm_size_bits, sz));
    if (nl == z.E && z.LB > 0) t = fmt::format("({} & ({}_lane == {}))", t, n, lit(z.LB, 0));
    else if (nl > 1) t = fmt::format("({} & ({}_lane <= {}))", t, n, lit(z.LB, z.E - nl));
    fit += (fit.empty() ? "" : " | ") + t;
  }
  return fit;
}

// Which memory, word, lane and bank the DMA addresses; whether the size fits the lanes.
void locate_dma_access(Module& m, const MemsysGeometry& mg, const MemsysMemory& mm, const LanePositions& z) {
  const std::string n = "dma_" + mm.g.name;
  const int SA = mg.spm_addr_bits, B = z.B, LB = z.LB, BB = z.BB, REL = z.REL;
  const long long eb = mm.elem_base, ee = mm.elem_base + mm.elements;
  if (REL == 0) throw std::logic_error("memsys: a memory of one element");
  std::string in;
  if (eb > 0) in = fmt::format("(spm_addr_i >= {})", lit(SA, eb));
  if (ee < (1LL << SA)) in += (in.empty() ? "" : " & ") + fmt::format("(spm_addr_i < {})", lit(SA, ee));
  m.assign(n + "_in", in.empty() ? "1'b1" : in);
  m.assign(n + "_rel", eb > 0 ? fmt::format("{} - {}", bits("spm_addr_i", REL - 1, 0), lit(REL, eb % (1LL << REL)))
                              : bits("spm_addr_i", REL - 1, 0));
  if (LB > 0) m.assign(n + "_lane", bits(n + "_rel", LB - 1, 0));
  m.assign(n + "_fit", dma_size_fits(mg, mm, z));
  m.assign(n + "_ok", fmt::format("{0}_in & {0}_fit", n));
  if (z.RB > 0) {
    m.wire(n + "_row", str(z.RB));
    m.assign(n + "_row", bits(n + "_rel", REL - 1, LB + BB));
    m.assign(n + "_addr", row_to_addr(mm, n + "_row"));
  } else {
    m.assign(n + "_addr", row_to_addr(mm, ""));
  }
  for (int b = 0; b < B; ++b)
    m.assign(bit_of(n + "_hit", b, B),
             BB > 0 ? fmt::format("{}_ok & ({} == {})", n, bits(n + "_rel", LB + BB - 1, LB), lit(BB, b)) : n + "_ok");
}

// The engine's banks of memory mm this cycle (shared: all three ports' engine accesses; both ranges of
// the shared memory are one scratchpad, whose p2 also serves brd of its lanes).
std::string engine_banks(const MemsysOrg& o, const MemsysMemory& mm) {
  const std::string B = str(mm.g.mem.banks);
  return mm.phys == "shared"
             ? "(drs_bank | wrds_bank | (wrs_bank & {" + B + "{wr_go}})" + (o.p2brd.empty() ? "" : " | " + o.p2brd + "_bank") + ")"
         : mm.g.name == "data"   ? "(drd_bank | (wr_bank & {" + B + "{wr_go}}))"
         : mm.g.name == "weight" ? "(wrd_bank | (wrw_bank & {" + B + "{wr_go}}))"
                                 : "brd_bank";
}

// The DMA's bank is free when the engine leaves it alone and (power gating) the word's sector is usable.
void dma_bank_free(Module& m, const MemsysOrg& o, const MemsysMemory& mm) {
  const std::string n = "dma_" + mm.g.name;
  if (o.pg) {
    const std::string ack = mm.phys + "_ack";
    m.assign(n + "_usable", mm.g.sector_bits > 0
                                ? fmt::format("~{}[{}]", ack, bits(n + "_addr", mm.g.addr_bits - 1, mm.g.offset_bits))
                                : "~" + ack);
  } else {
    m.assign(n + "_usable", "1'b1");
  }
  m.assign(n + "_free", fmt::format("(({}_hit & {}) == {}) & {}_usable", n, engine_banks(o, mm), lit(mm.g.mem.banks, 0), n));
}

// Byte enables: the low 2^size bytes (byte k iff size >= floor(log2 k) + 1), shifted to the lane;
// the write data shifted to the lane.
void dma_write_lanes(Module& m, const MemsysGeometry& mg, const MemsysMemory& mm) {
  const std::string n = "dma_" + mm.g.name;
  const int W = mm.g.mem.width_bits, WB = W / 8, LBL = clog2(mm.lane_bits / 8), ZW = mg.spm_size_bits;
  const std::string dw = W == mg.spm_data_bits ? "spm_wdata_i" : bits("spm_wdata_i", W - 1, 0);
  if (mm.lane_log > 0) {
    std::string low = "{";
    for (int k = clog2(WB); k >= 1; --k) low += fmt::format("{{{}{{spm_size_i >= {}}}}}, ", 1 << (k - 1), lit(ZW, k));
    low += "1'b1}";
    const std::string lane_bytes = LBL > 0 ? fmt::format("{{{}_lane, {}}}", n, lit(LBL, 0)) : n + "_lane";
    m.assign(n + "_be", fmt::format("{} << {}", low, lane_bytes));
    m.assign(n + "_wdata", fmt::format("{} << {{{}_lane, {}}}", dw, n, lit(clog2(mm.lane_bits), 0)));
  } else {
    m.assign(n + "_be", ones(WB));  // one lane per word: only whole-word accesses are legal
    m.assign(n + "_wdata", dw);
  }
}

// DMA port: which memory, word, lane and bank; whether the size fits the lanes; granted when the
// engine leaves the bank alone and the sector is usable. An illegal access is granted and dropped.
void dma_decode_and_grant(Module& m, const MemsysOrg& o, MemsysCollect& c) {
  m.blank();
  m.comment("DMA port: which memory, word, lane and bank; whether the size fits the lanes; granted when the engine\n"
            "leaves the bank alone and the sector is usable.");
  std::string drop, gnt;
  for (const MemsysMemory& mm : o.mg.mems) {
    const std::string n = "dma_" + mm.g.name;
    const LanePositions z = lane_positions(mm);
    declare_dma_decoder_wires(m, mm, z);
    locate_dma_access(m, o.mg, mm, z);
    dma_bank_free(m, o, mm);
    dma_write_lanes(m, o.mg, mm);
    or_term(drop, n + "_ok");
    or_term(gnt, fmt::format("({0}_ok & {0}_free)", n));
  }
  m.wire("dma_drop", "1", "not a legal access to any memory (granted, dropped)");
  m.wire("spm_gnt", "1");
  m.wire("dma_go", "1", "a DMA access happens this cycle (or is dropped)");
  m.assign("dma_drop", "~(" + drop + ")");
  m.assign("spm_gnt", "dma_drop | " + gnt);
  m.assign("dma_go", "spm_req_i & spm_gnt");
  m.assign("spm_gnt_o", "spm_gnt");
  or_term(c.err_range, "(spm_req_i & dma_drop)");
}

// A counter adds the number of its 1-bit `terms` that are high, one cycle late: the sum is
// registered first (<name>_inc_q), so the address decode that makes the terms does not reach the
// counter's adder in the same cycle (it was the chip's critical path, docs/rtl-chip.md).
void add_counter(Module& m, MemsysCollect& c, const std::string& reg, const std::vector<std::string>& terms) {
  const int KB = kMemsysCounterBits;
  const int IB = std::max(1, clog2(static_cast<long long>(terms.size()) + 1));
  const std::string inc = reg.substr(0, reg.size() - 2) + "_inc_q";
  m.reg(reg, str(KB));
  m.reg(inc, str(IB));
  std::string sum;
  for (std::size_t i = 0; i < terms.size(); ++i) sum += (i ? " + " : "") + zext("(" + terms[i] + ")", 1, IB);
  c.reset.push_back(nb(reg, lit(KB, 0)));
  c.reset.push_back(nb(inc, lit(IB, 0)));
  c.body.push_back(nb(inc, sum));
  c.body.push_back(nb(reg, fmt::format("{} + {}", reg, zext(inc, IB, KB))));
}

// The bits of an n-bit vector v, each a term of a counter.
std::vector<std::string> bit_terms(const std::string& v, int n) {
  std::vector<std::string> t;
  for (int i = 0; i < n; ++i) t.push_back(n == 1 ? v : fmt::format("{}[{}]", v, i));
  return t;
}

// A scratchpad's sleep acknowledge and error flags, the same for one port per bank and for three: the
// wires (its read-valid outputs `rvalids` and per-cycle errors are unused: memsys tracks its reads
// itself and uses the sticky flag).
void scratchpad_status_wires(Module& m, const MemsysOrg& o, const MemsysMemory& mm, const std::vector<std::string>& rvalids) {
  const std::string& nm = mm.g.name;
  if (o.pg) m.wire(nm + "_ack", str(mm.g.mem.sectors));
  m.wire(nm + "_err", "1", "the scratchpad's err_sticky_o");
  m.lint_off("UNUSEDSIGNAL", "the scratchpad's rvalid and per-cycle error outputs: memsys tracks its reads itself and uses\n"
                             "the sticky error flag.");
  for (const std::string& r : rvalids) m.wire(r, str(mm.g.mem.banks));
  m.wire(nm + "_err_sleep", "1");
  if ((1LL << mm.g.offset_bits) != mm.g.words_per_sector) m.wire(nm + "_err_addr", "1");
  if (mm.g.ports > 1) m.wire(nm + "_err_conflict", "1");
  m.lint_on("UNUSEDSIGNAL");
}

// The scratchpad's sleep and error connections; its sticky flag joins err_o. `inst` is not used after
// this (an item added to the module may move it).
void connect_scratchpad_status(Module& m, const MemsysOrg& o, const MemsysMemory& mm, Instance& inst, MemsysCollect& c) {
  const std::string& nm = mm.g.name;
  if (o.pg) inst.connect("sleep_req_i", fmt::format("sleep_req_{}_i", nm)).connect("sleep_ack_o", nm + "_ack");
  inst.connect("err_sleep_o", nm + "_err_sleep");
  if ((1LL << mm.g.offset_bits) != mm.g.words_per_sector) inst.connect("err_addr_o", nm + "_err_addr");
  if (mm.g.ports > 1) inst.connect("err_conflict_o", nm + "_err_conflict");
  inst.connect("err_sticky_o", nm + "_err");
  if (o.pg) m.assign(fmt::format("sleep_ack_{}_o", nm), nm + "_ack");
  c.err_any += " | " + nm + "_err";
}

// The shared memory (HY, SMP): port p0 serves drd (decoder drs), p1 wrd (wrds) and the result writer
// (wrs), p2 the DMA. A drd and a write of one word in one cycle: the read gets the word before the write.
// With a lane view (SMP's acc, HY's lanes) p2 serves brd of it too (SMP: decoder brd, HY: brs),
// and the DMA's accesses of both ranges (lanes, bytes).
void declare_shared_port_wires(Module& m, const MemsysOrg& o, const MemsysMemory& mm) {
  const std::string& nm = mm.g.name;
  const int B = mm.g.mem.banks, W = mm.g.mem.width_bits;
  const std::string xb = str(B);
  m.blank();
  m.comment(fmt::format("{} memory: three ports per bank (p0 drd, p1 wrd and wr, p2 {}the DMA): enables, addresses,\n"
                        "write data; the scratchpad.",
                        nm, o.p2brd.empty() ? "" : "brd and "));
  m.wire(nm + "_eng_wr", xb, "banks written by the engine (port p1)");
  m.wire(nm + "_dma", xb, "bank accessed by the DMA (port p2)");
  for (int k = 0; k < 3; ++k) {
    const std::string pk = fmt::format("{}_p{}_", nm, k);
    m.wire(pk + "en", xb);
    if (k > 0) {
      m.wire(pk + "we", xb);
      m.wire(pk + "be", str(B * W / 8));
      m.wire(pk + "wdata", str(B * W));
    }
    m.wire(pk + "addr", str(B * mm.g.addr_bits));
    m.wire(pk + "rdata", str(B * W));
  }
  scratchpad_status_wires(m, o, mm, {nm + "_p0_rvalid", nm + "_p1_rvalid", nm + "_p2_rvalid"});
}

// The shared memory's three ports: enables, write enables, byte enables, write data and per-bank
// addresses from the engine's decoders and the DMA.
void drive_shared_ports(Module& m, const MemsysOrg& o, const MemsysMemory& mm) {
  const std::string& nm = mm.g.name;
  const std::string& lview = o.lview;
  const std::string& p2brd = o.p2brd;
  const std::string ewr = nm + "_eng_wr";
  const int B = mm.g.mem.banks, AWm = mm.g.addr_bits;
  m.assign(ewr, fmt::format("wrs_bank & {{{}{{wr_go}}}}", B));
  m.assign(nm + "_dma", !lview.empty() ? fmt::format("(dma_{}_hit | dma_{}_hit) & {{{}{{dma_go}}}}", nm, lview, B)
                                       : fmt::format("dma_{}_hit & {{{}{{dma_go}}}}", nm, B));
  m.assign(nm + "_p0_en", "drs_bank");
  m.assign(nm + "_p1_en", "wrds_bank | " + ewr);
  m.assign(nm + "_p1_we", ewr);
  m.assign(nm + "_p1_be", "wrs_bpos");
  m.assign(nm + "_p1_wdata", "wrs_bdata");
  m.assign(nm + "_p2_en", !p2brd.empty() ? p2brd + "_bank | " + nm + "_dma" : nm + "_dma");
  m.assign(nm + "_p2_we", fmt::format("{0}_dma & {{{1}{{spm_we_i}}}}", nm, B));
  // The DMA's access on p2: the lane view's (psum lanes) or the bytes'.
  const auto dma_of = [&](const std::string& f) {
    return !lview.empty() ? fmt::format("(dma_{2}_ok ? dma_{2}_{0} : dma_{1}_{0})", f, nm, lview) : fmt::format("dma_{}_{}", nm, f);
  };
  m.assign(nm + "_p2_be", B == 1 ? dma_of("be") : fmt::format("{{{}{{{}}}}}", B, dma_of("be")));
  m.assign(nm + "_p2_wdata", B == 1 ? dma_of("wdata") : fmt::format("{{{}{{{}}}}}", B, dma_of("wdata")));
  for (int b = 0; b < B; ++b) {
    m.assign(sl(nm + "_p0_addr", b, AWm, B * AWm), fmt::format("drs_b{}_addr", b));
    m.assign(sl(nm + "_p1_addr", b, AWm, B * AWm),
             fmt::format("{} ? wrds_b{}_addr : wrs_b{}_addr", bit_of("wrds_bank", b, B), b, b));
    m.assign(sl(nm + "_p2_addr", b, AWm, B * AWm),
             !p2brd.empty() ? fmt::format("{} ? {}_b{}_addr : {}", bit_of(p2brd + "_bank", b, B), p2brd, b, dma_of("addr"))
                            : dma_of("addr"));
  }
}

// The shared scratchpad (capsgen_spm_shared); port p0 only reads.
void instantiate_shared_scratchpad(Module& m, const MemsysOrg& o, const MemsysMemory& mm, MemsysCollect& c) {
  const std::string& nm = mm.g.name;
  const int B = mm.g.mem.banks, W = mm.g.mem.width_bits;
  Instance& inst = m.instance(mm.g.module, "u_spm_" + nm);
  inst.connect("clk_i", "clk_i").connect("rst_ni", "rst_ni");
  inst.connect("p0_en_i", nm + "_p0_en").connect("p0_we_i", lit(B, 0)).connect("p0_be_i", lit(B * W / 8, 0));
  inst.connect("p0_addr_i", nm + "_p0_addr").connect("p0_wdata_i", lit(B * W, 0));
  for (int k = 1; k < 3; ++k) {
    const std::string pi = fmt::format("p{}_", k), pk = fmt::format("{}_p{}_", nm, k);
    inst.connect(pi + "en_i", pk + "en").connect(pi + "we_i", pk + "we").connect(pi + "be_i", pk + "be");
    inst.connect(pi + "addr_i", pk + "addr").connect(pi + "wdata_i", pk + "wdata");
  }
  for (int k = 0; k < 3; ++k)
    inst.connect(fmt::format("p{}_rdata_o", k), fmt::format("{}_p{}_rdata", nm, k))
        .connect(fmt::format("p{}_rvalid_o", k), fmt::format("{}_p{}_rvalid", nm, k));
  connect_scratchpad_status(m, o, mm, inst, c);
}

// A one-port memory's reader and result writer decoders (the shared memory's ports: drive_shared_ports).
std::string reader_of(const MemsysMemory& mm) {
  const std::string& nm = mm.g.name;
  return nm == "data" ? "drd" : (nm == "weight" ? "wrd" : "brd");
}
std::string writer_of(const MemsysMemory& mm) {
  const std::string& nm = mm.g.name;
  return nm == "data" ? "wr" : (nm == "weight" ? "wrw" : "");
}

// A one-port memory (data, weight, acc): the engine's and the DMA's banks, the scratchpad's port.
void declare_one_port_wires(Module& m, const MemsysOrg& o, const MemsysMemory& mm) {
  const std::string& nm = mm.g.name;
  const int B = mm.g.mem.banks, W = mm.g.mem.width_bits;
  m.blank();
  m.comment(fmt::format("{} memory: bank enables, addresses, write data; the scratchpad.", nm));
  m.wire(nm + "_eng_rd", str(B), "banks read by the engine");
  if (!writer_of(mm).empty()) m.wire(nm + "_eng_wr", str(B), "banks written by the engine");
  m.wire(nm + "_dma", str(B), "bank accessed by the DMA");
  m.wire(nm + "_en", str(B));
  m.wire(nm + "_we", str(B));
  m.wire(nm + "_be", str(B * W / 8));
  m.wire(nm + "_addr", str(B * mm.g.addr_bits));
  m.wire(nm + "_wdata", str(B * W));
  m.wire(nm + "_rdata", str(B * W));
  scratchpad_status_wires(m, o, mm, {nm + "_rvalid"});
}

// A one-port memory's banks: the engine's read, else its write, else the DMA.
void drive_one_port_banks(Module& m, const MemsysMemory& mm) {
  const std::string& nm = mm.g.name;
  const std::string rport = reader_of(mm), wport = writer_of(mm), ewr = nm + "_eng_wr";
  const int B = mm.g.mem.banks, W = mm.g.mem.width_bits, AWm = mm.g.addr_bits;
  m.assign(nm + "_eng_rd", rport + "_bank");
  if (!wport.empty()) m.assign(ewr, fmt::format("{}_bank & {{{}{{wr_go}}}}", wport, B));
  m.assign(nm + "_dma", fmt::format("dma_{}_hit & {{{}{{dma_go}}}}", nm, B));
  const std::string eng = wport.empty() ? nm + "_eng_rd" : fmt::format("{0}_eng_rd | {0}_eng_wr", nm);
  m.assign(nm + "_en", fmt::format("{} | {}_dma", eng, nm));
  m.assign(nm + "_we", wport.empty() ? fmt::format("{0}_dma & {{{1}{{spm_we_i}}}}", nm, B)
                                     : fmt::format("{0} | ({1}_dma & {{{2}{{spm_we_i}}}})", ewr, nm, B));
  for (int b = 0; b < B; ++b) {
    const std::string rd = bit_of(nm + "_eng_rd", b, B);
    std::string addr = fmt::format("{} ? {}_b{}_addr : ", rd, rport, b);
    if (!wport.empty()) addr += fmt::format("{} ? {}_b{}_addr : ", bit_of(ewr, b, B), wport, b);
    addr += fmt::format("dma_{}_addr", nm);
    m.assign(sl(nm + "_addr", b, AWm, B * AWm), addr);
    if (!wport.empty()) {
      const std::string wrb = bit_of(ewr, b, B);
      m.assign(sl(nm + "_be", b, W / 8, B * W / 8),
               fmt::format("{} ? {} : dma_{}_be", wrb, sl(wport + "_bpos", b, W / 8, B * W / 8), nm));
      m.assign(sl(nm + "_wdata", b, W, B * W),
               fmt::format("{} ? {} : dma_{}_wdata", wrb, sl(wport + "_bdata", b, W, B * W), nm));
    } else {
      m.assign(sl(nm + "_be", b, W / 8, B * W / 8), fmt::format("dma_{}_be", nm));
      m.assign(sl(nm + "_wdata", b, W, B * W), fmt::format("dma_{}_wdata", nm));
    }
  }
}

// A one-port memory's scratchpad (capsgen_spm_<memory>).
void instantiate_one_port_scratchpad(Module& m, const MemsysOrg& o, const MemsysMemory& mm, MemsysCollect& c) {
  const std::string& nm = mm.g.name;
  Instance& inst = m.instance(mm.g.module, "u_spm_" + nm);
  inst.connect("clk_i", "clk_i").connect("rst_ni", "rst_ni");
  inst.connect("p0_en_i", nm + "_en").connect("p0_we_i", nm + "_we").connect("p0_be_i", nm + "_be");
  inst.connect("p0_addr_i", nm + "_addr").connect("p0_wdata_i", nm + "_wdata");
  inst.connect("p0_rdata_o", nm + "_rdata").connect("p0_rvalid_o", nm + "_rvalid");
  connect_scratchpad_status(m, o, mm, inst, c);
}

// The registers of the DMA's read of this memory: whether it was read, and the bank and lane to
// select in the next cycle.
void register_dma_read(Module& m, const MemsysMemory& mm, MemsysCollect& c) {
  const std::string& nm = mm.g.name;
  const int BB = mm.bank_log, LB = mm.lane_log;
  m.reg(fmt::format("dma_{}_rd_q", nm), "1", "the DMA read this memory in the previous cycle");
  c.reset.push_back(nb(fmt::format("dma_{}_rd_q", nm), "1'b0"));
  c.body.push_back(nb(fmt::format("dma_{}_rd_q", nm), fmt::format("dma_go & ~spm_we_i & dma_{}_ok", nm)));
  if (BB > 0) {
    m.reg(fmt::format("dma_{}_bank_q", nm), str(BB));
    c.rd_body.push_back(
        if_("dma_go", {nb(fmt::format("dma_{}_bank_q", nm), bits(fmt::format("dma_{}_rel", nm), LB + BB - 1, LB))}));
  }
  if (LB > 0) {
    m.reg(fmt::format("dma_{}_lane_q", nm), str(LB));
    c.rd_body.push_back(if_("dma_go", {nb(fmt::format("dma_{}_lane_q", nm), fmt::format("dma_{}_lane", nm))}));
  }
}

// Bank accesses per sector of a scratchpad: every port's enabled banks (the shared memory: p0, p1, p2,
// each once) whose address is in the sector.
void sector_counters(Module& m, const MemsysMemory& mm, MemsysCollect& c) {
  const std::string& nm = mm.g.name;
  const int B = mm.g.mem.banks, AWm = mm.g.addr_bits, SB = mm.g.sector_bits, OBm = mm.g.offset_bits;
  for (int s = 0; s < mm.g.mem.sectors; ++s) {
    std::vector<std::string> terms;
    const std::vector<std::string> ports =
        mm.g.ports == 3 ? std::vector<std::string>{nm + "_p0_", nm + "_p1_", nm + "_p2_"} : std::vector<std::string>{nm + "_"};
    for (const std::string& pk : ports)
      for (int b = 0; b < B; ++b) {
        std::string t = bit_of(pk + "en", b, B);
        if (SB > 0) t = fmt::format("{} & ({} == {})", t, bits(pk + "addr", b * AWm + AWm - 1, b * AWm + OBm), lit(SB, s));
        terms.push_back(t);
      }
    add_counter(m, c, fmt::format("cnt_sector_{}_s{}_q", nm, s), terms);
  }
}

// A memory's counters: the engine's bank reads and writes, the DMA's reads, writes and waits, and
// (a scratchpad, not a lane view) the bank accesses per sector.
void memory_counters(Module& m, const MemsysOrg& o, const MemsysMemory& mm, MemsysCollect& c) {
  const std::string& nm = mm.g.name;
  const int B = mm.g.mem.banks;
  const std::string ewr = nm + "_eng_wr";
  m.comment(fmt::format("{} memory counters.", nm));
  if (mm.view()) {  // a lane view: brd's bank reads of it
    add_counter(m, c, fmt::format("cnt_eng_rd_{}_q", nm), bit_terms(o.p2brd + "_bank", B));
  } else if (mm.g.ports == 3) {  // drd (p0) and wrd (p1) reads on one bank in one cycle count 2
    std::vector<std::string> rd = bit_terms("drs_bank", B);
    for (const std::string& t : bit_terms("wrds_bank", B)) rd.push_back(t);
    add_counter(m, c, fmt::format("cnt_eng_rd_{}_q", nm), rd);
    add_counter(m, c, fmt::format("cnt_eng_wr_{}_q", nm), bit_terms(ewr, B));
  } else {
    add_counter(m, c, fmt::format("cnt_eng_rd_{}_q", nm), bit_terms(nm + "_eng_rd", B));
    if (!writer_of(mm).empty()) add_counter(m, c, fmt::format("cnt_eng_wr_{}_q", nm), bit_terms(ewr, B));
  }
  add_counter(m, c, fmt::format("cnt_dma_rd_{}_q", nm), {fmt::format("dma_go & ~spm_we_i & dma_{}_ok", nm)});
  add_counter(m, c, fmt::format("cnt_dma_wr_{}_q", nm), {fmt::format("dma_go & spm_we_i & dma_{}_ok", nm)});
  add_counter(m, c, fmt::format("cnt_dma_wait_{}_q", nm), {fmt::format("spm_req_i & ~spm_gnt & dma_{}_ok", nm)});
  if (!mm.view()) sector_counters(m, mm, c);
}

// Per memory: its bank control and scratchpad (a lane view has none of its own: the shared memory's
// serves it), the registers of its DMA reads, its counters; then the writer's wait counter.
void memories_and_counters(Module& m, const MemsysOrg& o, MemsysCollect& c) {
  for (const MemsysMemory& mm : o.mg.mems) {
    if (mm.view()) {
      // SMP's acc lanes, HY's lanes: no scratchpad of their own (the shared memory's block serves them).
    } else if (mm.g.ports == 3) {
      declare_shared_port_wires(m, o, mm);
      drive_shared_ports(m, o, mm);
      instantiate_shared_scratchpad(m, o, mm, c);
    } else {
      declare_one_port_wires(m, o, mm);
      drive_one_port_banks(m, mm);
      instantiate_one_port_scratchpad(m, o, mm, c);
    }
    register_dma_read(m, mm, c);
    memory_counters(m, o, mm, c);
  }
  add_counter(m, c, "cnt_wr_wait_q", {"wr_en_i & ~wr_ready"});
}

// DMA read data: the word of the bank read in the previous cycle shifted down by the lane, the access's
// 2^size bytes kept (0 for a dropped read).
void dma_read_data(Module& m, const MemsysGeometry& mg, MemsysCollect& c) {
  const int DW = mg.spm_data_bits, ZW = mg.spm_size_bits;
  m.blank();
  m.comment("DMA read data: the word of the bank read in the previous cycle shifted down by the lane, the access's\n"
            "2^size bytes kept (0 for a dropped read).");
  m.reg("dma_rvalid_q", "1");
  m.reg("dma_size_q", str(ZW), "size of the DMA read issued in the previous cycle");
  c.reset.push_back(nb("dma_rvalid_q", "1'b0"));
  c.body.push_back(nb("dma_rvalid_q", "dma_go & ~spm_we_i"));
  c.rd_body.push_back(if_("dma_go", {nb("dma_size_q", "spm_size_i")}));
  std::string rdata;
  for (const MemsysMemory& mm : mg.mems) {
    const std::string& nm = mm.g.name;
    const int W = mm.g.mem.width_bits, BB = mm.bank_log, LB = mm.lane_log;
    const std::string rdv = mm.g.ports == 3 ? mm.phys + "_p2_rdata" : nm + "_rdata";  // the shared memory's DMA port: p2
    const std::string word =
        BB > 0 ? fmt::format("{}[{{dma_{}_bank_q, {}}} +: {}]", rdv, nm, lit(clog2(W), 0), W) : rdv;
    const std::string w = fmt::format("dma_{}_word", nm);
    m.wire(w, str(W), "the word read, shifted down by the lane");
    m.assign(w, LB > 0 ? fmt::format("{} >> {{dma_{}_lane_q, {}}}", word, nm, lit(clog2(mm.lane_bits), 0)) : word);
    rdata += (rdata.empty() ? "" : " | ") +
             fmt::format("(dma_{}_rd_q ? {} : {})", nm, zext(w, W, DW), lit(DW, 0));
  }
  // Bytes of the read: byte k iff size >= floor(log2 k) + 1 (byte 0 always).
  std::string keep = "{";
  for (int k = mg.spm_max_size; k >= 1; --k) keep += fmt::format("{{{}{{dma_size_q >= {}}}}}, ", 8 << (k - 1), lit(ZW, k));
  keep += "8'hff}";
  m.wire("dma_keep", str(DW), "bits of the read word inside the access");
  m.assign("dma_keep", keep);
  m.assign("spm_rvalid_o", "dma_rvalid_q");
  m.assign("spm_rdata_o", fmt::format("({}) & dma_keep", rdata));
}

// Read-side registers, counters, the sticky range error: the two always blocks of everything collected.
void sticky_error_and_registers(Module& m, MemsysCollect& c) {
  m.blank();
  m.comment("Read-side registers, counters, the sticky range error.");
  m.wire("err_range", "1", "an access outside its memory this cycle");
  m.reg("err_range_q", "1");
  m.assign("err_range", c.err_range);
  c.reset.push_back(nb("err_range_q", "1'b0"));
  c.body.push_back(if_("err_range", {nb("err_range_q", "1'b1")}));
  if (!c.rd_body.empty()) m.always_ff(c.rd_body);
  m.always_ff_reset(c.reset, c.body);
}

// The counter outputs from their registers, and err_o.
void drive_counter_and_error_outputs(Module& m, const MemsysGeometry& mg, const MemsysCollect& c) {
  for (const MemsysMemory& mm : mg.mems) {
    const std::string& nm = mm.g.name;
    m.assign(fmt::format("cnt_eng_rd_{}_o", nm), fmt::format("cnt_eng_rd_{}_q", nm));
    if (mm.lane_bits != kMemsysPsumLaneBits) m.assign(fmt::format("cnt_eng_wr_{}_o", nm), fmt::format("cnt_eng_wr_{}_q", nm));
    for (const char* k : {"dma_rd", "dma_wr", "dma_wait"})
      m.assign(fmt::format("cnt_{}_{}_o", k, nm), fmt::format("cnt_{}_{}_q", k, nm));
    for (int s = 0; s < mm.g.mem.sectors && !mm.view(); ++s)
      m.assign(expr_slice(fmt::format("cnt_sector_{}_o", nm), s, str(kMemsysCounterBits)),
               fmt::format("cnt_sector_{}_s{}_q", nm, s));
  }
  m.assign("cnt_wr_wait_o", "cnt_wr_wait_q");
  m.assign("err_o", c.err_any);
}

}  // namespace

Module build_memsys(const AccelConfig& cfg) {
  const MemsysGeometry mg = memsys_geometry(cfg);
  const MemsysOrg o = memsys_org(cfg, mg);
  Module m(kMemsysModule, o.smp ? smp_description(o) : o.hy ? hy_description(o) : sep_description(o));
  declare_engine_ports(m, o);
  declare_dma_port(m, o);
  declare_sleep_ports(m, o);
  declare_counter_and_error_outputs(m, o);

  MemsysCollect c;
  const Decoders decoders = engine_decoders(o);
  for (const Decoder& p : decoders.all) engine_port_decoder(m, decoders, p, c);
  writer_arbitration(m, o, c);
  dma_decode_and_grant(m, o, c);
  memories_and_counters(m, o, c);
  dma_read_data(m, mg, c);
  sticky_error_and_registers(m, c);
  drive_counter_and_error_outputs(m, mg, c);
  return m;
}

std::string memsys_summary(const AccelConfig& cfg) {
  std::string s = file_header(cfg, "Memory system (capsgen_memsys): address map, read by tb/memsys_tb.cpp.", "#");
  const std::string reason = memsys_unsupported_reason(cfg);
  if (!reason.empty()) {
    s += "supported 0\n";
    s += "reason " + reason + "\n";
    return s;
  }
  const MemsysGeometry g = memsys_geometry(cfg);
  s += "supported 1\n";
  s += fmt::format("addr_bits {}\nspm_addr_bits {}\nspm_data_bits {}\nspm_size_bits {}\nspm_max_size {}\ncounter_bits {}\n",
                   g.addr_bits, g.spm_addr_bits, g.spm_data_bits, g.spm_size_bits, g.spm_max_size, kMemsysCounterBits);
  s += fmt::format("rows {}\ncols {}\ndata_bits {}\nweight_bits {}\npsum_bits {}\nout_bits {}\n", g.rows, g.cols, g.data,
                   g.weight, g.psum, g.out_bits);
  s += fmt::format("power_gating {}\nwakeup_cycles {}\n", cfg.scratchpad.power_gating ? 1 : 0, cfg.scratchpad.wakeup_cycles);
  if (g.smp)
    s += "organization smp\n# one scratchpad (shared): acc = its 32-bit lanes, shared = its bytes; ports p0 drd, p1 wrd and wr, p2 brd and the DMA\n";
  else if (g.index("lanes") >= 0)
    s += "organization hy\n# the shared memory's ports: p0 drd, p1 wrd and wr, p2 brd of its lanes and the DMA; lanes = its 32-bit lanes\n";
  else if (g.index("shared") >= 0)
    s += "organization hy\n# the shared memory's ports: p0 drd, p1 wrd and wr, p2 the DMA\n";
  s += "# memory <name> <elem_base> <elements> <words> <banks> <sectors> <words_per_sector> <width_bits> <lane_bits>\n";
  for (const MemsysMemory& m : g.mems)
    s += fmt::format("memory {} {} {} {} {} {} {} {} {}\n", m.g.name, m.elem_base, m.elements, m.words, m.g.mem.banks,
                     m.g.mem.sectors, m.g.words_per_sector, m.g.mem.width_bits, m.lane_bits);
  for (const MemsysMemory& m : g.mems)
    if (m.view()) s += fmt::format("# view <range> <scratchpad>: the range's words are the scratchpad's (no sectors of its own)\nview {} {}\n", m.g.name, m.phys);
  return s;
}

void emit_memsys(const AccelConfig& cfg, Design& design) {
  if (memsys_unsupported_reason(cfg).empty()) design.add_module(build_memsys(cfg));
  design.add_other_file(kMemsysSummaryName, memsys_summary(cfg));
}

}  // namespace capsgen::emit
