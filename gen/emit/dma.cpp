#include "emit/dma.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "emit/activation_internal.hpp"
#include "emit/memsys.hpp"
#include "emit/scratchpad.hpp"

namespace capsgen::emit {

using detail::lit;
using detail::zext;

DmaGeometry dma_geometry(const AccelConfig& cfg) {
  DmaGeometry g;
  for (const SpmGeometry& m : spm_memories(cfg)) g.data_bits = std::max(g.data_bits, m.mem.width_bits);
  // The on-chip element space of memsys (docs/rtl-memsys.md "Address map"): the top level connects
  // the SPM port to capsgen_memsys directly.
  g.spm_addr_bits = memsys_element_addr_bits(cfg);
  if (g.data_bits < 8 || g.data_bits % 8) throw std::logic_error("emit_dma: no scratchpad word width");
  g.word_bytes = g.data_bits / 8;
  g.max_burst = cfg.offchip.max_burst;
  g.len_bits = clog2(static_cast<long long>(g.max_burst) + 1);
  // Enough bursts in flight to keep the data channel busy over twice the nominal off-chip latency.
  const long long need = (2LL * cfg.offchip.latency_cycles + g.max_burst - 1) / g.max_burst + 1;
  g.outstanding = std::clamp(1 << clog2(need), kDmaMinOutstanding, kDmaMaxOutstanding);
  g.max_size = clog2(g.word_bytes);
  g.size_bits = std::max(1, clog2(static_cast<long long>(g.max_size) + 1));
  g.widen_bytes = std::min(4, g.word_bytes);
  g.widen_size = clog2(g.widen_bytes);
  return g;
}

unsigned long long dma_strobe(int size, int word_bytes) {
  const int bytes = std::min(1 << std::clamp(size, 0, 6), word_bytes);
  return bytes >= 64 ? ~0ULL : (1ULL << bytes) - 1;
}

namespace {

// desc_strb: byte k of a beat is carried iff k < 2^size, i.e. size >= floor(log2 k) + 1; bytes
// [2^(n-1), 2^n) share the comparison size >= n. Most significant byte first.
std::string strobe_expr(const std::string& size, int max_size, int size_bits) {
  std::string s = "{";
  for (int n = max_size; n >= 1; --n)
    s += fmt::format("{{{}{{{} >= {}}}}}, ", 1 << (n - 1), size, lit(size_bits, n));
  return s + "1'b1}";
}

// The DMA's geometry with the widths derived from it that several pieces use, computed once.
struct DmaWidths {
  DmaGeometry g;
  int lq_ptr = 0;       // burst-length FIFO pointer: log2(outstanding)
  int lq_count = 0;     // its fill count, 0..outstanding
  int df_ptr = 0;       // data FIFO pointer: log2(kDmaFifoDepth)
  int df_count = 0;     // its fill count, 0..kDmaFifoDepth
  bool narrow = false;  // a 1-byte word has only size 0: the size and widen inputs are unused
  bool widen = false;   // a 1-byte load can be sign-extended to a lane of widen_bytes > 1
};

DmaWidths dma_widths(const AccelConfig& cfg) {
  DmaWidths w;
  w.g = dma_geometry(cfg);
  w.lq_ptr = clog2(w.g.outstanding);
  w.lq_count = w.lq_ptr + 1;
  w.df_ptr = clog2(kDmaFifoDepth);
  w.df_count = w.df_ptr + 1;
  w.narrow = w.g.word_bytes > 1;
  w.widen = w.g.widen_bytes > 1;
  if (kDmaDramAddrBits < w.g.len_bits + clog2(w.g.word_bytes) || kDmaCountBits < w.g.len_bits)
    throw std::logic_error("emit_dma: widths too small");
  return w;
}

// The engine's module comment: the descriptor's three-level pattern, beat sizes and widening, bursts,
// prefetch, and the handshakes of the off-chip and SPM ports.
std::string dma_description(const DmaGeometry& g) {
  return fmt::format(
      "DMA engine between the off-chip burst port and a scratchpad port (docs/rtl-dma.md).\n"
      "One descriptor at a time: desc_store_i = 0 loads DRAM -> SPM, 1 stores SPM -> DRAM. Element\n"
      "(i2, i1, i0), i0 innermost, i_k < count_k, moves one element (up to a {}-bit word) between DRAM\n"
      "byte address dram_addr + i0*ds0 + i1*ds1 + i2*ds2 and SPM element address spm_addr + i0*ss0 +\n"
      "i1*ss1 + i2*ss2 (both modulo their width; the SPM side is memsys's on-chip element space).\n"
      "desc_size_i narrows each beat to its low 2^size bytes (0..{}; larger: a whole word): read beats\n"
      "carry the element in the low bytes of rd_data_i (the rest is ignored), the SPM write data gets it\n"
      "in its low bytes, zeros above (desc_widen_i on a 1-byte load: the byte sign-extended to {} bits);\n"
      "write beats carry the low bytes of the SPM read data, wr_strb_o marks them. spm_size_o gives the\n"
      "bytes of each SPM access: 2^size, or the widened lane.\n"
      "When ds0 = 2^size bytes, runs of the inner level become bursts of\n"
      "up to min(desc_burst_i, {}) beats (desc_burst_i = 0: {}); otherwise every element is a 1-beat burst.\n"
      "A count of 0 ends the descriptor at once (done_o, no transfers).\n"
      "Off-chip port: burst requests (req_*) run ahead of the data by up to {} bursts (prefetch);\n"
      "read data (rd_*) and write data (wr_*, wr_last_o on each burst's final beat) follow the\n"
      "requests in order. Write data of a burst is sent after its request was accepted.\n"
      "SPM port: one word per accepted request (spm_req_o & spm_gnt_i); read data returns on\n"
      "spm_rvalid_i/spm_rdata_i (1 cycle later for capsgen_spm_*; any latency works). The top level\n"
      "lowers spm_gnt_i while the addressed sector sleeps (capsgen_spm_* refuses such accesses).\n"
      "done_o pulses for one cycle when the last word of a descriptor has been written (SPM) or\n"
      "accepted (off-chip); desc_ready_o is high from that cycle on. beats_*_o count since reset.",
      g.data_bits, g.max_size, 8 * g.widen_bytes, g.max_burst, g.max_burst, g.outstanding);
}

// The descriptor: direction, base addresses, three levels of counts and strides, burst limit, beat size
// and widening; then the run's busy level and done pulse.
void declare_descriptor_ports(Module& m, const DmaGeometry& g) {
  const int SA = g.spm_addr_bits, DA = kDmaDramAddrBits, CW = kDmaCountBits, LW = g.len_bits, MB = g.max_burst;
  const int ZW = g.size_bits, WL = g.widen_bytes;
  m.clock_and_reset()
      .input("desc_valid_i", "1", "descriptor valid")
      .output("desc_ready_o", "1", "descriptor accepted when valid (idle)")
      .input("desc_store_i", "1", "0: DRAM -> SPM load, 1: SPM -> DRAM store")
      .input("desc_dram_addr_i", str(DA), "DRAM byte base address")
      .input("desc_spm_addr_i", str(SA), "SPM element base address");
  for (int k = 0; k < 3; ++k) m.input(fmt::format("desc_count{}_i", k), str(CW), fmt::format("level {} element count", k));
  for (int k = 0; k < 3; ++k)
    m.input(fmt::format("desc_dram_stride{}_i", k), str(DA), fmt::format("level {} DRAM stride, bytes (mod 2^{})", k, DA));
  for (int k = 0; k < 3; ++k)
    m.input(fmt::format("desc_spm_stride{}_i", k), str(SA), fmt::format("level {} SPM stride, elements (mod 2^{})", k, SA));
  m.input("desc_burst_i", str(LW), fmt::format("burst length limit in beats (0 or > {}: {})", MB, MB))
      .input("desc_size_i", str(ZW), fmt::format("bytes per beat = 2^size; {} (or more): a whole word", g.max_size))
      .input("desc_widen_i", "1", fmt::format("1-byte load (size 0): sign-extend each byte to {} bits (else ignored)", 8 * WL))
      .output("busy_o", "1", "a descriptor is running")
      .output("done_o", "1", "one-cycle pulse: the descriptor has finished");
}

// The off-chip burst port: burst requests, then read data and write data beats in request order.
void declare_offchip_ports(Module& m, const DmaGeometry& g) {
  const int W = g.data_bits, DA = kDmaDramAddrBits, LW = g.len_bits;
  m.output("req_valid_o", "1", "off-chip burst request")
      .input("req_ready_i", "1", "request accepted")
      .output("req_addr_o", str(DA), "burst byte address")
      .output("req_len_o", str(LW), fmt::format("burst length in beats (1..{})", g.max_burst))
      .output("req_write_o", "1", "1: write burst, 0: read burst")
      .output("req_size_o", str(g.size_bits), "bytes per beat = 2^size, in the low bytes of the data channels")
      .input("rd_valid_i", "1", "read data beat valid")
      .output("rd_ready_o", "1", "read data beat accepted")
      .input("rd_data_i", str(W), "read data beat")
      .output("wr_valid_o", "1", "write data beat valid")
      .input("wr_ready_i", "1", "write data beat accepted")
      .output("wr_data_o", str(W), "write data beat")
      .output("wr_strb_o", str(g.word_bytes), "byte strobes of the beat: the low 2^size bytes")
      .output("wr_last_o", "1", "final beat of its burst");
}

// The scratchpad port: one word per granted request, read data returning later.
void declare_spm_ports(Module& m, const DmaGeometry& g) {
  const int W = g.data_bits, ZW = g.size_bits;
  m.output("spm_req_o", "1", "SPM access")
      .input("spm_gnt_i", "1", "SPM access accepted this cycle")
      .output("spm_we_o", "1", "1: write, 0: read")
      .output("spm_addr_o", str(g.spm_addr_bits), "SPM element address")
      .output("spm_size_o", str(ZW), fmt::format("SPM access of 2^size bytes: the descriptor's size, {} when widened", g.widen_size))
      .output("spm_wdata_o", str(W), "SPM write data")
      .input("spm_rvalid_i", "1", "SPM read data of an earlier accepted read")
      .input("spm_rdata_i", str(W), "SPM read data");
}

// The port list: descriptor, off-chip port, SPM port and the beat counters.
void declare_ports(Module& m, const DmaGeometry& g) {
  declare_descriptor_ports(m, g);
  declare_offchip_ports(m, g);
  declare_spm_ports(m, g);
  m.output("beats_read_o", str(kDmaCounterBits), "read beats accepted since reset (wraps)")
      .output("beats_written_o", str(kDmaCounterBits), "write beats accepted since reset (wraps)");
}

// A beat's size: the registered size and strobes, the size input limited to a whole word, and a read
// beat narrowed to its low bytes (and widened). 1-byte words have no size to choose.
void declare_beat_size(Module& m, const DmaWidths& w) {
  const int W = w.g.data_bits, WB = w.g.word_bytes, ZW = w.g.size_bits;
  if (w.narrow) {
    m.reg("size_q", str(ZW), "bytes per beat = 2^size_q");
    m.reg("strb_q", str(WB), "bytes of a beat: the low 2^size_q");
    if (w.widen) m.reg("widen_q", "1", "sign-extend each read byte to a lane");
    m.wire("desc_size", str(ZW), "desc_size_i limited to a whole word");
    m.wire("desc_strb", str(WB));
    m.wire("rd_keep", str(W), "bits of a read beat that carry the element");
    if (w.widen) m.wire("rd_sign", str(W), "sign bits of a widened byte");
    m.wire("rd_elem", str(W), "a read beat narrowed (and widened) to the SPM word");
  } else {
    m.lint_off("UNUSEDSIGNAL", "1-byte words: every beat is one byte, no size or widening to choose.");
    m.wire("unused_desc", "2");
    m.lint_on("UNUSEDSIGNAL");
  }
}

// The descriptor registers, loaded when a descriptor is accepted, and what is decoded from the inputs.
void declare_descriptor_registers(Module& m, const DmaWidths& w) {
  const int SA = w.g.spm_addr_bits, DA = kDmaDramAddrBits, CW = kDmaCountBits, LW = w.g.len_bits;
  m.comment("Descriptor registers.");
  m.reg("busy_q", "1");
  m.reg("done_q", "1");
  m.reg("store_q", "1");
  m.reg("contig_q", "1", "ds0 is one word: inner runs form bursts");
  m.reg("limit_q", str(LW), "burst length limit (1..max)");
  declare_beat_size(m, w);
  for (int k = 0; k < 3; ++k) m.reg(fmt::format("count{}_q", k), str(CW));
  for (int k = 0; k < 3; ++k) m.reg(fmt::format("ds{}_q", k), str(DA));
  for (int k = 0; k < 3; ++k) m.reg(fmt::format("ss{}_q", k), str(SA));
  m.wire("desc_fire", "1");
  m.wire("desc_empty", "1", "a count is 0");
  m.wire("desc_limit", str(LW));
  m.wire("count1_last", str(CW));
  m.wire("count2_last", str(CW));
}

// The request side's walker: the position of the next burst in the pattern and its DRAM address.
void declare_request_walker(Module& m, const DmaWidths& w) {
  const int DA = kDmaDramAddrBits, CW = kDmaCountBits, LW = w.g.len_bits;
  m.comment("Request side: walks the pattern burst by burst.");
  m.reg("rq_active_q", "1", "requests remain");
  m.reg("rq_j_q", str(CW), "inner index of the next burst's first element");
  m.reg("rq_i1_q", str(CW));
  m.reg("rq_i2_q", str(CW));
  m.reg("rq_ptr_q", str(DA), "DRAM address of the next burst");
  m.reg("rq_row1_q", str(DA), "DRAM address of the current level-1 row");
  m.reg("rq_row2_q", str(DA), "DRAM address of the current level-2 plane");
  m.wire("rq_rem", str(CW), "elements left in the inner run");
  m.wire("rq_len", str(LW));
  m.wire("rq_j_next", str(CW));
  m.wire("rq_step", str(DA));
  m.wire("rq_row1_next", str(DA));
  m.wire("rq_row2_next", str(DA));
  m.wire("req_fire", "1");
}

// The burst-length FIFO of the bursts in flight and the beat count of the one whose data streams now.
void declare_burst_length_fifo(Module& m, const DmaWidths& w) {
  const int LW = w.g.len_bits;
  m.comment(fmt::format("Burst-length FIFO: the lengths of the {} bursts in flight at most.", w.g.outstanding));
  m.memory("lq_mem", str(LW), str(w.g.outstanding));
  m.reg("lq_wp_q", str(w.lq_ptr));
  m.reg("lq_rp_q", str(w.lq_ptr));
  m.reg("lq_cnt_q", str(w.lq_count));
  m.wire("lq_full", "1");
  m.wire("lq_empty", "1");
  m.wire("lq_head", str(LW), "length of the burst whose data streams now");
  m.wire("lq_pop", "1");
  m.reg("bt_q", str(LW), "beats of the head burst done");
  m.wire("bt_inc", str(LW));
  m.wire("beat_last", "1");
  m.wire("beat_fire", "1");
  m.wire("rd_fire", "1");
  m.wire("wr_fire", "1");
}

// The data FIFO between the off-chip data channels and the SPM port.
void declare_data_fifo(Module& m, const DmaWidths& w) {
  const int W = w.g.data_bits, FCB = w.df_count;
  m.comment(fmt::format("Data FIFO ({} words): read beats -> SPM writes (load), SPM reads -> write beats (store).",
                        kDmaFifoDepth));
  m.memory("df_mem", str(W), str(kDmaFifoDepth));
  m.reg("df_wp_q", str(w.df_ptr));
  m.reg("df_rp_q", str(w.df_ptr));
  m.reg("df_cnt_q", str(FCB));
  m.wire("df_push", "1");
  m.wire("df_pop", "1");
  m.wire("df_wdata", str(W));
  m.wire("df_full", "1");
  m.wire("df_empty", "1");
  m.wire("df_used", str(FCB + 1), "FIFO words plus SPM reads in flight");
}

// The SPM side's walker: the position of the next word in the pattern, its SPM address and the SPM
// reads in flight.
void declare_spm_walker(Module& m, const DmaWidths& w) {
  const int SA = w.g.spm_addr_bits, CW = kDmaCountBits;
  m.comment("SPM side: walks the pattern word by word.");
  m.reg("sp_active_q", "1", "SPM accesses remain");
  m.reg("sp_i0_q", str(CW));
  m.reg("sp_i1_q", str(CW));
  m.reg("sp_i2_q", str(CW));
  m.reg("sp_ptr_q", str(SA));
  m.reg("sp_row1_q", str(SA));
  m.reg("sp_row2_q", str(SA));
  m.reg("sp_inf_q", str(w.df_count), "SPM reads in flight");
  m.wire("sp_row1_next", str(SA));
  m.wire("sp_row2_next", str(SA));
  m.wire("count0_last", str(CW));
  m.wire("spm_fire", "1");
  m.wire("sp_ret", "1", "SPM read data returns");
}

// The end of a descriptor and the beat counters.
void declare_status(Module& m) {
  m.wire("finish", "1");
  m.reg("beats_rd_q", str(kDmaCounterBits));
  m.reg("beats_wr_q", str(kDmaCounterBits));
}

// The descriptor handshake (accepted while idle), an empty pattern (a count of 0), the burst length
// limit and the last index of each level.
void build_descriptor_decode(Module& m, const DmaWidths& w) {
  const int CW = kDmaCountBits, LW = w.g.len_bits, MB = w.g.max_burst;
  m.blank();
  m.assign("desc_ready_o", "~busy_q");
  m.assign("desc_fire", "desc_valid_i & ~busy_q");
  m.assign("desc_empty", fmt::format("(desc_count0_i == {0}) | (desc_count1_i == {0}) | (desc_count2_i == {0})", lit(CW, 0)));
  // desc_burst_i > max_burst is impossible (and a constant comparison for lint) when max_burst = 2^LW - 1.
  if ((1LL << LW) - 1 > MB)
    m.assign("desc_limit",
             fmt::format("((desc_burst_i == {0}) | (desc_burst_i > {1})) ? {1} : desc_burst_i", lit(LW, 0), lit(LW, MB)));
  else
    m.assign("desc_limit", fmt::format("(desc_burst_i == {0}) ? {1} : desc_burst_i", lit(LW, 0), lit(LW, MB)));
  m.assign("count0_last", fmt::format("count0_q - {}", lit(CW, 1)));
  m.assign("count1_last", fmt::format("count1_q - {}", lit(CW, 1)));
  m.assign("count2_last", fmt::format("count2_q - {}", lit(CW, 1)));
}

// The descriptor's beat size, limited to a whole word, and its byte strobes. 1-byte words leave the
// size and widen inputs unused.
void build_size_decode(Module& m, const DmaWidths& w) {
  const int ZW = w.g.size_bits;
  if (w.narrow) {
    // desc_size_i > max_size is impossible (a constant comparison for lint) when max_size = 2^ZW - 1.
    if ((1 << ZW) - 1 > w.g.max_size)
      m.assign("desc_size", fmt::format("(desc_size_i > {0}) ? {0} : desc_size_i", lit(ZW, w.g.max_size)));
    else
      m.assign("desc_size", "desc_size_i");
    m.assign("desc_strb", strobe_expr("desc_size", w.g.max_size, ZW));
  } else {
    m.assign("unused_desc", "{desc_size_i, desc_widen_i}");
  }
}

// The descriptor registers' reset values: idle, a 1-beat limit, whole-word beats, no pattern.
Stmts descriptor_reset(const DmaWidths& w) {
  const int SA = w.g.spm_addr_bits, DA = kDmaDramAddrBits, CW = kDmaCountBits, LW = w.g.len_bits;
  const int ZW = w.g.size_bits;
  Stmts reset = {nb("busy_q", "1'b0"), nb("done_q", "1'b0"), nb("store_q", "1'b0"), nb("contig_q", "1'b0"),
                 nb("limit_q", lit(LW, 1))};
  if (w.narrow) {
    reset.push_back(nb("size_q", lit(ZW, w.g.max_size)));
    reset.push_back(nb("strb_q", detail::ones(w.g.word_bytes)));
    if (w.widen) reset.push_back(nb("widen_q", "1'b0"));
  }
  for (int k = 0; k < 3; ++k) {
    reset.push_back(nb(fmt::format("count{}_q", k), lit(CW, 0)));
    reset.push_back(nb(fmt::format("ds{}_q", k), lit(DA, 0)));
    reset.push_back(nb(fmt::format("ss{}_q", k), lit(SA, 0)));
  }
  return reset;
}

// An accepted descriptor: busy unless its pattern is empty (then done at once); contiguous when ds0 is
// one beat of 2^size bytes; widened only on a 1-byte load; its counts and strides.
Stmts descriptor_load(const DmaWidths& w) {
  const int DA = kDmaDramAddrBits, ZW = w.g.size_bits;
  Stmts accept = {nb("busy_q", "~desc_empty"), nb("done_q", "desc_empty"), nb("store_q", "desc_store_i"),
                  nb("contig_q", w.narrow ? fmt::format("desc_dram_stride0_i == ({} << desc_size)", lit(DA, 1))
                                          : fmt::format("desc_dram_stride0_i == {}", lit(DA, w.g.word_bytes))),
                  nb("limit_q", "desc_limit")};
  if (w.narrow) {
    accept.push_back(nb("size_q", "desc_size"));
    accept.push_back(nb("strb_q", "desc_strb"));
    if (w.widen)
      accept.push_back(nb("widen_q", fmt::format("desc_widen_i & ~desc_store_i & (desc_size == {})", lit(ZW, 0))));
  }
  for (int k = 0; k < 3; ++k) {
    accept.push_back(nb(fmt::format("count{}_q", k), fmt::format("desc_count{}_i", k)));
    accept.push_back(nb(fmt::format("ds{}_q", k), fmt::format("desc_dram_stride{}_i", k)));
    accept.push_back(nb(fmt::format("ss{}_q", k), fmt::format("desc_spm_stride{}_i", k)));
  }
  return accept;
}

// The descriptor registers, loaded when a descriptor is accepted. The run finishes when both walkers
// are done, no burst is in flight, the data FIFO is empty and no SPM read is outstanding; done_q
// pulses then.
void build_descriptor_registers(Module& m, const DmaWidths& w) {
  const int FCB = w.df_count;
  m.assign("finish", fmt::format("busy_q & ~rq_active_q & ~sp_active_q & lq_empty & df_empty & (sp_inf_q == {})",
                                 lit(FCB, 0)));
  m.always_ff_reset(descriptor_reset(w), {nb("done_q", "1'b0"), if_("desc_fire", descriptor_load(w)),
                                          if_("finish", {nb("busy_q", "1'b0"), nb("done_q", "1'b1")})});
}

// The two pattern walkers, prefix p = rq (request side, DRAM byte addresses) and sp (SPM side, SPM
// element addresses), have the same registers: p_active_q, an inner index (rq_j_q, sp_i0_q), p_i1_q,
// p_i2_q, the address p_ptr_q and the addresses of the current level-1 row and level-2 plane,
// p_row1_q and p_row2_q (next ones: p_row1_next, p_row2_next).

// A walker's registers at reset: inactive, at index (0, 0, 0) and address 0.
Stmts walker_reset(const std::string& p, const std::string& inner, int addr_bits) {
  const int CW = kDmaCountBits;
  return {nb(p + "_active_q", "1'b0"),
          nb(inner, lit(CW, 0)),
          nb(p + "_i1_q", lit(CW, 0)),
          nb(p + "_i2_q", lit(CW, 0)),
          nb(p + "_ptr_q", lit(addr_bits, 0)),
          nb(p + "_row1_q", lit(addr_bits, 0)),
          nb(p + "_row2_q", lit(addr_bits, 0))};
}

// A walker started by an accepted descriptor: active unless the pattern is empty, at index (0, 0, 0)
// and the base address `base`.
Stmts walker_start(const std::string& p, const std::string& inner, const std::string& base) {
  const int CW = kDmaCountBits;
  return {nb(p + "_active_q", "~desc_empty"),
          nb(inner, lit(CW, 0)),
          nb(p + "_i1_q", lit(CW, 0)),
          nb(p + "_i2_q", lit(CW, 0)),
          nb(p + "_ptr_q", base),
          nb(p + "_row1_q", base),
          nb(p + "_row2_q", base)};
}

// A walker past the end of an inner run: on to the next level-1 row, else to the next level-2 plane
// (whose first row starts there), else the pattern is done.
Stmts walker_next_row(const std::string& p, const std::string& inner) {
  const int CW = kDmaCountBits;
  const std::string i1 = p + "_i1_q", i2 = p + "_i2_q", row1_next = p + "_row1_next", row2_next = p + "_row2_next";
  return {if_(i1 + " != count1_last",
              {nb(inner, lit(CW, 0)), nb(i1, fmt::format("{} + {}", i1, lit(CW, 1))), nb(p + "_row1_q", row1_next),
               nb(p + "_ptr_q", row1_next)},
              {if_(i2 + " != count2_last",
                   {nb(inner, lit(CW, 0)), nb(i1, lit(CW, 0)), nb(i2, fmt::format("{} + {}", i2, lit(CW, 1))),
                    nb(p + "_row2_q", row2_next), nb(p + "_row1_q", row2_next), nb(p + "_ptr_q", row2_next)},
                   {nb(p + "_active_q", "1'b0")})})};
}

// The next burst: 1 beat unless ds0 is contiguous, else the rest of the inner run up to the limit; the
// inner index after it, the DRAM address step to the following burst, the next row and plane.
void build_request_burst(Module& m, const DmaWidths& w) {
  const int DA = kDmaDramAddrBits, CW = kDmaCountBits, LW = w.g.len_bits;
  m.assign("rq_rem", "count0_q - rq_j_q");
  m.assign("rq_len", fmt::format("~contig_q ? {0} : (rq_rem > {1}) ? limit_q : rq_rem[{2}:0]", lit(LW, 1),
                                 zext("limit_q", LW, CW), LW - 1));
  m.assign("rq_j_next", fmt::format("rq_j_q + {}", zext("rq_len", LW, CW)));
  // A contiguous burst covers len * 2^size bytes.
  const std::string len_bytes = w.narrow ? fmt::format("{} << size_q", zext("rq_len", LW, DA)) : zext("rq_len", LW, DA);
  m.assign("rq_step", fmt::format("contig_q ? {} : ds0_q", len_bytes));
  m.assign("rq_row1_next", "rq_row1_q + ds1_q");
  m.assign("rq_row2_next", "rq_row2_q + ds2_q");
}

// The off-chip request channel: a burst is requested while bursts remain and the burst-length FIFO has
// room for its length.
void drive_request_port(Module& m, const DmaWidths& w) {
  m.assign("req_valid_o", "rq_active_q & ~lq_full");
  m.assign("req_addr_o", "rq_ptr_q");
  m.assign("req_len_o", "rq_len");
  m.assign("req_write_o", "store_q");
  m.assign("req_size_o", w.narrow ? "size_q" : "1'b0");
  m.assign("req_fire", "rq_active_q & ~lq_full & req_ready_i");
}

// The request walker: after an accepted request the next burst goes on in the same inner run, or
// starts the next row or plane.
void build_request_walker(Module& m) {
  const Stmts next_burst = {
      if_("rq_j_next != count0_q", {nb("rq_j_q", "rq_j_next"), nb("rq_ptr_q", "rq_ptr_q + rq_step")},
          walker_next_row("rq", "rq_j_q"))};
  m.always_ff_reset(
      walker_reset("rq", "rq_j_q", kDmaDramAddrBits),
      {if_("desc_fire", walker_start("rq", "rq_j_q", "desc_dram_addr_i"), {if_("req_fire", next_burst)})});
}

// The request side: walks the pattern a burst at a time, ahead of the data.
void build_request_side(Module& m, const DmaWidths& w) {
  m.blank();
  m.comment("Request side: burst length, next position, request handshake.");
  build_request_burst(m, w);
  drive_request_port(m, w);
  build_request_walker(m);
}

// The burst-length FIFO and the beat count of its head burst: a length is pushed with its request and
// popped with the burst's final data beat (read or write, as the descriptor's direction says).
void build_burst_length_fifo(Module& m, const DmaWidths& w) {
  const int LW = w.g.len_bits, PB = w.lq_ptr, CB = w.lq_count;
  m.blank();
  m.comment("Bursts in flight: pushed with the request, popped with the burst's final data beat.");
  m.assign("lq_full", fmt::format("lq_cnt_q == {}", lit(CB, w.g.outstanding)));
  m.assign("lq_empty", fmt::format("lq_cnt_q == {}", lit(CB, 0)));
  m.assign("lq_head", "lq_mem[lq_rp_q]");
  m.assign("rd_fire", "rd_valid_i & rd_ready_o");
  m.assign("wr_fire", "wr_valid_o & wr_ready_i");
  m.assign("beat_fire", "store_q ? wr_fire : rd_fire");
  m.assign("bt_inc", fmt::format("bt_q + {}", lit(LW, 1)));
  m.assign("beat_last", "bt_inc == lq_head");
  m.assign("lq_pop", "beat_fire & beat_last");
  m.always_ff({if_("req_fire", {nb("lq_mem[lq_wp_q]", "rq_len")})});
  m.always_ff_reset(
      {nb("lq_wp_q", lit(PB, 0)), nb("lq_rp_q", lit(PB, 0)), nb("lq_cnt_q", lit(CB, 0)), nb("bt_q", lit(LW, 0))},
      {if_("req_fire", {nb("lq_wp_q", fmt::format("lq_wp_q + {}", lit(PB, 1)))}),
       if_("lq_pop", {nb("lq_rp_q", fmt::format("lq_rp_q + {}", lit(PB, 1)))}),
       if_("req_fire & ~lq_pop", {nb("lq_cnt_q", fmt::format("lq_cnt_q + {}", lit(CB, 1)))}),
       if_("lq_pop & ~req_fire", {nb("lq_cnt_q", fmt::format("lq_cnt_q - {}", lit(CB, 1)))}),
       if_("beat_fire", {nb("bt_q", fmt::format("beat_last ? {} : bt_inc", lit(LW, 0)))})});
}

// Read beats: the low 2^size bytes are the element, zeros above; a widened byte fills the low
// widen_bytes with its sign. Whole words (strb_q all ones, widen_q 0) pass unchanged.
void build_read_beat_narrowing(Module& m, const DmaWidths& w) {
  const int W = w.g.data_bits, WB = w.g.word_bytes, WL = w.g.widen_bytes;
  std::string keep = "{";
  for (int k = WB - 1; k >= 0; --k) keep += fmt::format("{{8{{strb_q[{}]}}}}{}", k, k ? ", " : "}");
  m.assign("rd_keep", keep);
  if (w.widen) {
    const std::string sign = fmt::format("{{{}{{widen_q & rd_data_i[7]}}}}, 8'd0", 8 * (WL - 1));
    m.assign("rd_sign", W > 8 * WL ? fmt::format("{{{}'d0, {}}}", W - 8 * WL, sign) : "{" + sign + "}");
    m.assign("rd_elem", "(rd_data_i & rd_keep) | rd_sign");
  } else {
    m.assign("rd_elem", "rd_data_i & rd_keep");
  }
}

// The data FIFO: a load pushes read beats (narrowed) and pops SPM writes; a store pushes returning SPM
// read data and pops write beats. df_used counts the SPM reads in flight too, which have a word
// reserved.
void build_data_fifo(Module& m, const DmaWidths& w) {
  const int FD = kDmaFifoDepth, FB = w.df_ptr, FCB = w.df_count;
  m.blank();
  m.comment("Data FIFO.");
  m.assign("df_full", fmt::format("df_cnt_q == {}", lit(FCB, FD)));
  m.assign("df_empty", fmt::format("df_cnt_q == {}", lit(FCB, 0)));
  m.assign("df_used", fmt::format("{} + {}", zext("df_cnt_q", FCB, FCB + 1), zext("sp_inf_q", FCB, FCB + 1)));
  m.assign("sp_ret", "spm_rvalid_i & busy_q & store_q");
  m.assign("df_push", "store_q ? sp_ret : rd_fire");
  if (w.narrow) build_read_beat_narrowing(m, w);
  m.assign("df_wdata", w.narrow ? "store_q ? spm_rdata_i : rd_elem" : "store_q ? spm_rdata_i : rd_data_i");
  m.assign("df_pop", "store_q ? wr_fire : spm_fire");
  m.always_ff({if_("df_push", {nb("df_mem[df_wp_q]", "df_wdata")})});
  m.always_ff_reset(
      {nb("df_wp_q", lit(FB, 0)), nb("df_rp_q", lit(FB, 0)), nb("df_cnt_q", lit(FCB, 0))},
      {if_("df_push", {nb("df_wp_q", fmt::format("df_wp_q + {}", lit(FB, 1)))}),
       if_("df_pop", {nb("df_rp_q", fmt::format("df_rp_q + {}", lit(FB, 1)))}),
       if_("df_push & ~df_pop", {nb("df_cnt_q", fmt::format("df_cnt_q + {}", lit(FCB, 1)))}),
       if_("df_pop & ~df_push", {nb("df_cnt_q", fmt::format("df_cnt_q - {}", lit(FCB, 1)))})});
}

// The off-chip data channels, only while a burst is in flight: a load takes read beats while the data
// FIFO has room, a store sends write beats from its head, with the descriptor's strobes.
void drive_data_channels(Module& m, const DmaWidths& w) {
  m.assign("rd_ready_o", "busy_q & ~store_q & ~lq_empty & ~df_full");
  m.assign("wr_valid_o", "busy_q & store_q & ~lq_empty & ~df_empty");
  m.assign("wr_data_o", "df_mem[df_rp_q]");
  m.assign("wr_last_o", "beat_last");
  m.assign("wr_strb_o", w.narrow ? "strb_q" : "1'b1");
}

// The SPM port: a load writes the data FIFO's head; a store reads while SPM words remain and the FIFO
// can take the data of every read in flight. A widened load writes whole lanes.
void drive_spm_port(Module& m, const DmaWidths& w) {
  const int FCB = w.df_count, ZW = w.g.size_bits;
  m.assign("spm_req_o",
           fmt::format("busy_q & (store_q ? (sp_active_q & (df_used < {})) : ~df_empty)", lit(FCB + 1, kDmaFifoDepth)));
  m.assign("spm_we_o", "~store_q");
  m.assign("spm_addr_o", "sp_ptr_q");
  if (!w.narrow) m.assign("spm_size_o", "1'b0");
  else if (w.widen) m.assign("spm_size_o", fmt::format("widen_q ? {} : size_q", lit(ZW, w.g.widen_size)));
  else m.assign("spm_size_o", "size_q");
  m.assign("spm_wdata_o", "df_mem[df_rp_q]");
  m.assign("spm_fire", "spm_req_o & spm_gnt_i");
}

// The SPM walker: one word per granted access, on along the inner level, else to the next row or
// plane; sp_inf_q counts a store's SPM reads until their data returns.
void build_spm_walker(Module& m, const DmaWidths& w) {
  const int CW = kDmaCountBits, FCB = w.df_count;
  m.assign("sp_row1_next", "sp_row1_q + ss1_q");
  m.assign("sp_row2_next", "sp_row2_q + ss2_q");
  Stmts reset = walker_reset("sp", "sp_i0_q", w.g.spm_addr_bits);
  reset.push_back(nb("sp_inf_q", lit(FCB, 0)));
  const Stmts next_word = {
      if_("sp_i0_q != count0_last",
          {nb("sp_i0_q", fmt::format("sp_i0_q + {}", lit(CW, 1))), nb("sp_ptr_q", "sp_ptr_q + ss0_q")},
          walker_next_row("sp", "sp_i0_q"))};
  m.always_ff_reset(
      reset,
      {if_("desc_fire", walker_start("sp", "sp_i0_q", "desc_spm_addr_i"), {if_("spm_fire", next_word)}),
       if_("spm_fire & store_q & ~sp_ret", {nb("sp_inf_q", fmt::format("sp_inf_q + {}", lit(FCB, 1)))}),
       if_("sp_ret & ~(spm_fire & store_q)", {nb("sp_inf_q", fmt::format("sp_inf_q - {}", lit(FCB, 1)))})});
}

// The SPM side: walks the pattern a word at a time.
void build_spm_side(Module& m, const DmaWidths& w) {
  m.blank();
  m.comment("SPM side: a load writes the FIFO head; a store reads ahead while the FIFO has room.");
  drive_spm_port(m, w);
  build_spm_walker(m, w);
}

// Status: busy and the done pulse from the descriptor registers, and the off-chip beat counters.
void build_status(Module& m) {
  const int KB = kDmaCounterBits;
  m.blank();
  m.comment("Status and beat counters.");
  m.always_ff_reset({nb("beats_rd_q", lit(KB, 0)), nb("beats_wr_q", lit(KB, 0))},
                    {if_("rd_fire", {nb("beats_rd_q", fmt::format("beats_rd_q + {}", lit(KB, 1)))}),
                     if_("wr_fire", {nb("beats_wr_q", fmt::format("beats_wr_q + {}", lit(KB, 1)))})});
  m.assign("busy_o", "busy_q");
  m.assign("done_o", "done_q");
  m.assign("beats_read_o", "beats_rd_q");
  m.assign("beats_written_o", "beats_wr_q");
}

}  // namespace

Module build_dma(const AccelConfig& cfg) {
  const DmaWidths w = dma_widths(cfg);
  Module m(kDmaModule, dma_description(w.g));
  declare_ports(m, w.g);
  declare_descriptor_registers(m, w);
  declare_request_walker(m, w);
  declare_burst_length_fifo(m, w);
  declare_data_fifo(m, w);
  declare_spm_walker(m, w);
  declare_status(m);

  // The descriptor: accepted while idle, decoded, held until the run finishes.
  build_descriptor_decode(m, w);
  build_size_decode(m, w);
  build_descriptor_registers(m, w);

  // Requests run ahead of the data; the burst-length FIFO tells the data channels where a burst ends.
  build_request_side(m, w);
  build_burst_length_fifo(m, w);

  // The data FIFO between the off-chip data channels and the SPM port, then the status outputs.
  build_data_fifo(m, w);
  drive_data_channels(m, w);
  build_spm_side(m, w);
  build_status(m);
  return m;
}

std::string dma_summary(const AccelConfig& cfg) {
  const DmaGeometry g = dma_geometry(cfg);
  std::string s = file_header(cfg, "DMA engine: widths and limits, read by tb/dma_tb.cpp.", "#");
  s += fmt::format("data_bits {}\n", g.data_bits);
  s += fmt::format("spm_addr_bits {}\n", g.spm_addr_bits);
  s += fmt::format("widen_size {}\n", g.widen_size);
  s += fmt::format("dram_addr_bits {}\n", kDmaDramAddrBits);
  s += fmt::format("count_bits {}\n", kDmaCountBits);
  s += fmt::format("len_bits {}\n", g.len_bits);
  s += fmt::format("max_burst {}\n", g.max_burst);
  s += fmt::format("outstanding {}\n", g.outstanding);
  s += fmt::format("fifo_depth {}\n", kDmaFifoDepth);
  s += fmt::format("size_bits {}\n", g.size_bits);
  s += fmt::format("max_size {}\n", g.max_size);
  s += fmt::format("widen_bits {}\n", 8 * g.widen_bytes);
  s += fmt::format("latency_cycles {}\n", cfg.offchip.latency_cycles);
  s += fmt::format("clock_mhz {}\n", cfg.clock.target_mhz);
  return s;
}

void emit_dma(const AccelConfig& cfg, Design& design) {
  design.add_module(build_dma(cfg));
  design.add_other_file(kDmaSummaryName, dma_summary(cfg));
}

}  // namespace capsgen::emit
