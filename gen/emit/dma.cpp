#include "emit/dma.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "emit/memsys.hpp"
#include "emit/scratchpad.hpp"

namespace capsgen::emit {

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
  g.outstanding = isa::dma_outstanding_bursts(cfg);
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

// The DMA's geometry with the widths derived from it that several pieces use, computed once.
struct DmaWidths {
  DmaGeometry g;
  int length_fifo_ptr_bits = 0;    // burst-length FIFO pointer: log2(outstanding)
  int length_fifo_count_bits = 0;  // its fill count, 0..outstanding
  int data_fifo_ptr_bits = 0;      // data FIFO pointer: log2(kDmaFifoDepth)
  int data_fifo_count_bits = 0;    // its fill count, 0..kDmaFifoDepth
  bool narrow = false;  // a word of several bytes: beats can be narrowed (a 1-byte word has only size 0)
  bool widen = false;   // a 1-byte load can be sign-extended to a lane of widen_bytes > 1
};

DmaWidths dma_widths(const AccelConfig& cfg) {
  DmaWidths w;
  w.g = dma_geometry(cfg);
  w.length_fifo_ptr_bits = clog2(w.g.outstanding);
  w.length_fifo_count_bits = w.length_fifo_ptr_bits + 1;
  w.data_fifo_ptr_bits = clog2(kDmaFifoDepth);
  w.data_fifo_count_bits = w.data_fifo_ptr_bits + 1;
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

// ---- Ports -------------------------------------------------------------------------------------

// The descriptor: direction, base addresses, three levels of counts and strides (level k at [k]),
// burst limit, beat size and widening; then the run's busy level and done pulse.
struct DescriptorPorts {
  Expr valid_i, ready_o, store_i, dram_addr_i, spm_addr_i;
  std::vector<Expr> count_i, dram_stride_i, spm_stride_i;
  Expr burst_i, size_i, widen_i, busy_o, done_o;
};

DescriptorPorts declare_descriptor_ports(Module& m, const DmaGeometry& g) {
  const int spm_addr_bits = g.spm_addr_bits, dram_addr_bits = kDmaDramAddrBits, max_burst = g.max_burst;
  m.clock_and_reset();
  // Level k's port of a per-level field, for k = 0, 1, 2.
  auto levels = [&m](const char* name, int width, const std::string& what) {
    std::vector<Expr> ports;
    for (int k = 0; k < 3; ++k)
      ports.push_back(m.input(fmt::format("desc_{}{}_i", name, k), width, fmt::format("level {} {}", k, what)));
    return ports;
  };
  return DescriptorPorts{
      m.input("desc_valid_i", 1, "descriptor valid"),
      m.output("desc_ready_o", 1, "descriptor accepted when valid (idle)"),
      m.input("desc_store_i", 1, "0: DRAM -> SPM load, 1: SPM -> DRAM store"),
      m.input("desc_dram_addr_i", dram_addr_bits, "DRAM byte base address"),
      m.input("desc_spm_addr_i", spm_addr_bits, "SPM element base address"),
      levels("count", kDmaCountBits, "element count"),
      levels("dram_stride", dram_addr_bits, fmt::format("DRAM stride, bytes (mod 2^{})", dram_addr_bits)),
      levels("spm_stride", spm_addr_bits, fmt::format("SPM stride, elements (mod 2^{})", spm_addr_bits)),
      m.input("desc_burst_i", g.len_bits,
              fmt::format("burst length limit in beats (0 or > {}: {})", max_burst, max_burst)),
      m.input("desc_size_i", g.size_bits,
              fmt::format("bytes per beat = 2^size; {} (or more): a whole word", g.max_size)),
      m.input("desc_widen_i", 1,
              fmt::format("1-byte load (size 0): sign-extend each byte to {} bits (else ignored)", 8 * g.widen_bytes)),
      m.output("busy_o", 1, "a descriptor is running"),
      m.output("done_o", 1, "one-cycle pulse: the descriptor has finished")};
}

// The off-chip burst port: burst requests, then read data and write data beats in request order.
struct OffchipPorts {
  Expr req_valid_o, req_ready_i, req_addr_o, req_len_o, req_write_o, req_size_o;
  Expr rd_valid_i, rd_ready_o, rd_data_i, wr_valid_o, wr_ready_i, wr_data_o, wr_strb_o, wr_last_o;
};

OffchipPorts declare_offchip_ports(Module& m, const DmaGeometry& g) {
  const int data_bits = g.data_bits;
  return OffchipPorts{
      m.output("req_valid_o", 1, "off-chip burst request"),
      m.input("req_ready_i", 1, "request accepted"),
      m.output("req_addr_o", kDmaDramAddrBits, "burst byte address"),
      m.output("req_len_o", g.len_bits, fmt::format("burst length in beats (1..{})", g.max_burst)),
      m.output("req_write_o", 1, "1: write burst, 0: read burst"),
      m.output("req_size_o", g.size_bits, "bytes per beat = 2^size, in the low bytes of the data channels"),
      m.input("rd_valid_i", 1, "read data beat valid"),
      m.output("rd_ready_o", 1, "read data beat accepted"),
      m.input("rd_data_i", data_bits, "read data beat"),
      m.output("wr_valid_o", 1, "write data beat valid"),
      m.input("wr_ready_i", 1, "write data beat accepted"),
      m.output("wr_data_o", data_bits, "write data beat"),
      m.output("wr_strb_o", g.word_bytes, "byte strobes of the beat: the low 2^size bytes"),
      m.output("wr_last_o", 1, "final beat of its burst")};
}

// The scratchpad port: one word per granted request, read data returning later.
struct SpmPorts {
  Expr spm_req_o, spm_gnt_i, spm_we_o, spm_addr_o, spm_size_o, spm_wdata_o, spm_rvalid_i, spm_rdata_i;
};

SpmPorts declare_spm_ports(Module& m, const DmaGeometry& g) {
  const int data_bits = g.data_bits;
  return SpmPorts{
      m.output("spm_req_o", 1, "SPM access"),
      m.input("spm_gnt_i", 1, "SPM access accepted this cycle"),
      m.output("spm_we_o", 1, "1: write, 0: read"),
      m.output("spm_addr_o", g.spm_addr_bits, "SPM element address"),
      m.output("spm_size_o", g.size_bits,
               fmt::format("SPM access of 2^size bytes: the descriptor's size, {} when widened", g.widen_size)),
      m.output("spm_wdata_o", data_bits, "SPM write data"),
      m.input("spm_rvalid_i", 1, "SPM read data of an earlier accepted read"),
      m.input("spm_rdata_i", data_bits, "SPM read data")};
}

// The port list: descriptor, off-chip port, SPM port and the beat counters.
struct DmaPorts {
  DescriptorPorts desc;
  OffchipPorts offchip;
  SpmPorts spm;
  Expr beats_read_o, beats_written_o;
};

DmaPorts declare_ports(Module& m, const DmaGeometry& g) {
  return DmaPorts{declare_descriptor_ports(m, g), declare_offchip_ports(m, g), declare_spm_ports(m, g),
                  m.output("beats_read_o", kDmaCounterBits, "read beats accepted since reset (wraps)"),
                  m.output("beats_written_o", kDmaCounterBits, "write beats accepted since reset (wraps)")};
}

// ---- Internal signals --------------------------------------------------------------------------

// A beat's size: the registered size and strobes, the size input limited to a whole word, and a read
// beat narrowed to its low bytes (and widened). Only with narrow (words of several bytes); the
// widening signals only with widen. 1-byte words leave the size and widen inputs unused.
struct BeatSize {
  std::optional<Flop> size, strb, widen;
  std::optional<Expr> desc_size, desc_strb, rd_keep, rd_sign, rd_elem, unused_desc;
};

BeatSize declare_beat_size(Module& m, FlopGroup& group, const DmaWidths& w) {
  const int data_bits = w.g.data_bits, word_bytes = w.g.word_bytes, size_bits = w.g.size_bits;
  BeatSize beat;
  if (w.narrow) {
    beat.size = group.flop("beat_size", size_bits, "bytes per beat = 2^beat_size_q");
    beat.strb = group.flop("beat_strobes", word_bytes, "bytes of a beat: the low 2^beat_size_q");
    if (w.widen) beat.widen = group.flop("widen", 1, "sign-extend each read byte to a lane");
    beat.desc_size = m.wire("desc_size", size_bits, "desc_size_i limited to a whole word");
    beat.desc_strb = m.wire("desc_strb", word_bytes);
    beat.rd_keep = m.wire("rd_keep", data_bits, "bits of a read beat that carry the element");
    if (w.widen) beat.rd_sign = m.wire("rd_sign", data_bits, "sign bits of a widened byte");
    beat.rd_elem = m.wire("rd_elem", data_bits, "a read beat narrowed (and widened) to the SPM word");
  } else {
    m.lint_off("UNUSEDSIGNAL", "1-byte words: every beat is one byte, no size or widening to choose.");
    beat.unused_desc = m.wire("unused_desc", 2);
    m.lint_on("UNUSEDSIGNAL");
  }
  return beat;
}

// The descriptor registers, loaded when a descriptor is accepted (counts and strides of level k at
// [k]), and what is decoded from the inputs.
struct DescriptorRegisters {
  Flop busy, done, store, contiguous, burst_limit;
  BeatSize beat;
  std::vector<Flop> count, dram_stride, spm_stride;
  Expr desc_fire, desc_empty, desc_limit, count1_last, count2_last;

  std::vector<Flop> flops;  // every flop above, in declaration order
};

DescriptorRegisters declare_descriptor_registers(Module& m, const DmaWidths& w) {
  FlopGroup group(m);
  m.comment("Descriptor registers.");
  Flop busy = group.flop("busy", 1, "a descriptor runs"), done = group.flop("done", 1, "done_o");
  Flop store = group.flop("store", 1, "SPM -> DRAM");
  Flop contiguous = group.flop("contiguous", 1, "dram stride 0 is one beat: inner runs form bursts");
  Flop burst_limit = group.flop("burst_limit", w.g.len_bits, "burst length limit (1..max)");
  BeatSize beat = declare_beat_size(m, group, w);
  // Level k's register of a per-level field, for k = 0, 1, 2.
  auto levels = [&group](const char* name, int width, const char* what) {
    std::vector<Flop> regs;
    for (int k = 0; k < 3; ++k)
      regs.push_back(group.flop(fmt::format("{}{}", name, k), width, fmt::format("level {} {}", k, what)));
    return regs;
  };
  std::vector<Flop> count = levels("count", kDmaCountBits, "elements");
  std::vector<Flop> dram_stride = levels("dram_stride", kDmaDramAddrBits, "DRAM stride, bytes");
  std::vector<Flop> spm_stride = levels("spm_stride", w.g.spm_addr_bits, "SPM stride, elements");
  return DescriptorRegisters{busy,
                             done,
                             store,
                             contiguous,
                             burst_limit,
                             beat,
                             count,
                             dram_stride,
                             spm_stride,
                             m.wire("desc_fire", 1),
                             m.wire("desc_empty", 1, "a count is 0"),
                             m.wire("desc_limit", w.g.len_bits),
                             m.wire("count1_last", kDmaCountBits),
                             m.wire("count2_last", kDmaCountBits),
                             group.flops()};
}

// The registers of a pattern walker: active, the inner index, the level-1 and level-2 indices, the
// address and the addresses of the current level-1 row and level-2 plane (the next ones: row1_next,
// row2_next). The request side walks DRAM byte addresses burst by burst (rq_*, inner index rq_j_q),
// the SPM side SPM element addresses word by word (sp_*, inner index sp_i0_q).
struct WalkerRegisters {
  Flop active, inner, i1, i2, addr, row1_addr, row2_addr;
  std::vector<Flop> flops;  // every flop above, in declaration order
};
struct Walker : WalkerRegisters {
  Expr row1_next, row2_next;
};

// A walker's registers <prefix>_*, with `comments` for active, the inner index, the address and the
// addresses of the current row and plane.
WalkerRegisters declare_walker_registers(Module& m, const std::string& prefix, int addr_bits,
                                         const std::vector<std::string>& comments) {
  FlopGroup group(m);
  auto name = [&prefix](const std::string& what) { return prefix + "_" + what; };
  return WalkerRegisters{group.flop(name("active"), 1, comments[0]),
                         group.flop(name("inner"), kDmaCountBits, comments[1]),
                         group.flop(name("i1"), kDmaCountBits, "level-1 index"),
                         group.flop(name("i2"), kDmaCountBits, "level-2 index"),
                         group.flop(name("addr"), addr_bits, comments[2]),
                         group.flop(name("row1_addr"), addr_bits, comments[3]),
                         group.flop(name("row2_addr"), addr_bits, comments[4]),
                         group.flops()};
}

// The request side: its walker, and the next burst's length and position.
struct RequestSide {
  Walker walk;
  Expr rq_rem, rq_len, rq_j_next, rq_step, req_fire;
};

RequestSide declare_request_side(Module& m, const DmaWidths& w) {
  const int dram_addr_bits = kDmaDramAddrBits, count_bits = kDmaCountBits, len_bits = w.g.len_bits;
  m.comment("Request side: walks the pattern burst by burst.");
  const WalkerRegisters registers = declare_walker_registers(
      m, "rq", dram_addr_bits,
      {"requests remain", "inner index of the next burst's first element", "DRAM address of the next burst",
       "DRAM address of the current level-1 row", "DRAM address of the current level-2 plane"});
  Expr rq_rem = m.wire("rq_rem", count_bits, "elements left in the inner run");
  Expr rq_len = m.wire("rq_len", len_bits);
  Expr rq_j_next = m.wire("rq_j_next", count_bits);
  Expr rq_step = m.wire("rq_step", dram_addr_bits);
  Expr row1_next = m.wire("rq_row1_next", dram_addr_bits);
  Expr row2_next = m.wire("rq_row2_next", dram_addr_bits);
  return RequestSide{
      Walker{registers, row1_next, row2_next}, rq_rem, rq_len, rq_j_next, rq_step, m.wire("req_fire", 1)};
}

// The burst-length FIFO of the bursts in flight, the beat count of the one whose data streams now,
// and the data channels' handshakes.
struct BurstLengthFifo {
  Memory lq_mem;
  Flop lq_write_ptr, lq_read_ptr, lq_count;
  Expr lq_full, lq_empty, lq_head, lq_pop;
  Flop beats_done;
  Expr bt_inc, beat_last, beat_fire, rd_fire, wr_fire;
};

BurstLengthFifo declare_burst_length_fifo(Module& m, const DmaWidths& w) {
  const int len_bits = w.g.len_bits, ptr_bits = w.length_fifo_ptr_bits;
  m.comment(fmt::format("Burst-length FIFO: the lengths of the {} bursts in flight at most.", w.g.outstanding));
  return BurstLengthFifo{m.memory("lq_mem", len_bits, w.g.outstanding),
                         m.flop("lq_write_ptr", ptr_bits),
                         m.flop("lq_read_ptr", ptr_bits),
                         m.flop("lq_count", w.length_fifo_count_bits, "bursts in flight"),
                         m.wire("lq_full", 1),
                         m.wire("lq_empty", 1),
                         m.wire("lq_head", len_bits, "length of the burst whose data streams now"),
                         m.wire("lq_pop", 1),
                         m.flop("beats_done", len_bits, "beats of the head burst done"),
                         m.wire("bt_inc", len_bits),
                         m.wire("beat_last", 1),
                         m.wire("beat_fire", 1),
                         m.wire("rd_fire", 1),
                         m.wire("wr_fire", 1)};
}

// The data FIFO between the off-chip data channels and the SPM port.
struct DataFifo {
  Memory df_mem;
  Flop df_write_ptr, df_read_ptr, df_count;
  Expr df_push, df_pop, df_wdata, df_full, df_empty, df_used;
};

DataFifo declare_data_fifo(Module& m, const DmaWidths& w) {
  const int data_bits = w.g.data_bits, count_bits = w.data_fifo_count_bits;
  m.comment(fmt::format("Data FIFO ({} words): read beats -> SPM writes (load), SPM reads -> write beats (store).",
                        kDmaFifoDepth));
  return DataFifo{m.memory("df_mem", data_bits, kDmaFifoDepth),
                  m.flop("df_write_ptr", w.data_fifo_ptr_bits),
                  m.flop("df_read_ptr", w.data_fifo_ptr_bits),
                  m.flop("df_count", count_bits, "words in the FIFO"),
                  m.wire("df_push", 1),
                  m.wire("df_pop", 1),
                  m.wire("df_wdata", data_bits),
                  m.wire("df_full", 1),
                  m.wire("df_empty", 1),
                  m.wire("df_used", count_bits + 1, "FIFO words plus SPM reads in flight")};
}

// The SPM side: its walker, the SPM reads in flight and the SPM handshakes.
struct SpmSide {
  Walker walk;
  Flop sp_reads_in_flight;
  Expr count0_last, spm_fire, sp_ret;
};

SpmSide declare_spm_side(Module& m, const DmaWidths& w) {
  const int spm_addr_bits = w.g.spm_addr_bits;
  m.comment("SPM side: walks the pattern word by word.");
  const WalkerRegisters registers =
      declare_walker_registers(m, "sp", spm_addr_bits,
                               {"SPM accesses remain", "level-0 index of the next word", "SPM address of the next word",
                                "SPM address of the current level-1 row", "SPM address of the current level-2 plane"});
  Flop sp_reads_in_flight =
      m.flop("sp_reads_in_flight", w.data_fifo_count_bits, "SPM reads whose data has not returned");
  Expr row1_next = m.wire("sp_row1_next", spm_addr_bits);
  Expr row2_next = m.wire("sp_row2_next", spm_addr_bits);
  Expr count0_last = m.wire("count0_last", kDmaCountBits);
  Expr spm_fire = m.wire("spm_fire", 1);
  return SpmSide{Walker{registers, row1_next, row2_next}, sp_reads_in_flight, count0_last, spm_fire,
                 m.wire("sp_ret", 1, "SPM read data returns")};
}

// The end of a descriptor and the beat counters.
struct Status {
  Expr finish;
  Flop beats_read, beats_written;
};

Status declare_status(Module& m) {
  return Status{m.wire("finish", 1), m.flop("beats_read", kDmaCounterBits, "read beats since reset"),
                m.flop("beats_written", kDmaCounterBits, "write beats since reset")};
}

// Every signal of the engine, in declaration order.
struct DmaSignals {
  DmaPorts port;
  DescriptorRegisters desc;
  RequestSide rq;
  BurstLengthFifo lq;
  DataFifo df;
  SpmSide sp;
  Status status;
};

DmaSignals declare_signals(Module& m, const DmaWidths& w) {
  DmaPorts port = declare_ports(m, w.g);
  DescriptorRegisters desc = declare_descriptor_registers(m, w);
  RequestSide rq = declare_request_side(m, w);
  BurstLengthFifo lq = declare_burst_length_fifo(m, w);
  DataFifo df = declare_data_fifo(m, w);
  SpmSide sp = declare_spm_side(m, w);
  return DmaSignals{port, desc, rq, lq, df, sp, declare_status(m)};
}

// ---- The descriptor ----------------------------------------------------------------------------

// The descriptor handshake (accepted while idle), an empty pattern (a count of 0), the burst length
// limit and the last index of each level.
void build_descriptor_decode(Module& m, const DmaSignals& s, const DmaWidths& w) {
  const DescriptorPorts& in = s.port.desc;
  const DescriptorRegisters& desc = s.desc;
  const int len_bits = w.g.len_bits, max_burst = w.g.max_burst;
  const Expr count_zero = lit(kDmaCountBits, 0), count_one = lit(kDmaCountBits, 1);
  const Expr no_limit = in.burst_i == lit(len_bits, 0), max_len = lit(len_bits, max_burst);
  m.blank();
  m.assign(in.ready_o, ~desc.busy.q);
  m.assign(desc.desc_fire, in.valid_i & ~desc.busy.q);
  m.assign(desc.desc_empty,
           (in.count_i[0] == count_zero) | (in.count_i[1] == count_zero) | (in.count_i[2] == count_zero));
  // desc_burst_i > max_burst is impossible (and a constant comparison for lint) when max_burst = 2^len_bits - 1.
  if ((1LL << len_bits) - 1 > max_burst)
    m.assign(desc.desc_limit, ternary(paren(no_limit | (in.burst_i > max_len)), max_len, in.burst_i));
  else
    m.assign(desc.desc_limit, ternary(no_limit, max_len, in.burst_i));
  m.assign(s.sp.count0_last, desc.count[0].q - count_one);
  m.assign(desc.count1_last, desc.count[1].q - count_one);
  m.assign(desc.count2_last, desc.count[2].q - count_one);
}

// desc_strb: byte k of a beat is carried iff k < 2^size, i.e. size >= floor(log2 k) + 1; bytes
// [2^(n-1), 2^n) share the comparison size >= n. Most significant byte first.
Expr beat_strobes(const Expr& size, int max_size) {
  std::vector<Expr> parts;
  for (int n = max_size; n >= 1; --n) parts.push_back(rep(1 << (n - 1), size >= lit(size.width(), n)));
  parts.push_back(bit(true));
  return cat(parts);
}

// The descriptor's beat size, limited to a whole word, and its byte strobes. 1-byte words leave the
// size and widen inputs unused.
void build_size_decode(Module& m, const DmaSignals& s, const DmaWidths& w) {
  const DescriptorPorts& in = s.port.desc;
  const BeatSize& beat = s.desc.beat;
  const int size_bits = w.g.size_bits;
  if (w.narrow) {
    // desc_size_i > max_size is impossible (a constant comparison for lint) when max_size = 2^size_bits - 1.
    const Expr whole_word = lit(size_bits, w.g.max_size);
    if ((1 << size_bits) - 1 > w.g.max_size)
      m.assign(*beat.desc_size, ternary(in.size_i > whole_word, whole_word, in.size_i));
    else
      m.assign(*beat.desc_size, in.size_i);
    m.assign(*beat.desc_strb, beat_strobes(*beat.desc_size, w.g.max_size));
  } else {
    m.assign(*beat.unused_desc, cat({in.size_i, in.widen_i}));
  }
}

// The descriptor registers' reset values other than zero: a 1-beat limit, whole-word beats.
std::vector<std::pair<Expr, Expr>> descriptor_reset_values(const DescriptorRegisters& desc, const DmaWidths& w) {
  std::vector<std::pair<Expr, Expr>> values = {{desc.burst_limit.q, lit(w.g.len_bits, 1)}};
  if (w.narrow) {
    values.emplace_back(desc.beat.size->q, lit(w.g.size_bits, w.g.max_size));
    values.emplace_back(desc.beat.strb->q, rep(w.g.word_bytes, bit(true)));
  }
  return values;
}

// An accepted descriptor: busy unless its pattern is empty (then done at once); contiguous when ds0 is
// one beat of 2^size bytes; widened only on a 1-byte load; its counts and strides.
Stmts descriptor_load(const DmaSignals& s, const DmaWidths& w) {
  const DescriptorPorts& in = s.port.desc;
  const DescriptorRegisters& desc = s.desc;
  const int dram_addr_bits = kDmaDramAddrBits;
  const Expr beat_bytes =
      w.narrow ? shl(lit(dram_addr_bits, 1), *desc.beat.desc_size) : lit(dram_addr_bits, w.g.word_bytes);
  Stmts accept = {blk(desc.busy.d, ~desc.desc_empty), blk(desc.done.d, desc.desc_empty), blk(desc.store.d, in.store_i),
                  blk(desc.contiguous.d, in.dram_stride_i[0] == beat_bytes), blk(desc.burst_limit.d, desc.desc_limit)};
  if (w.narrow) {
    accept.push_back(blk(desc.beat.size->d, *desc.beat.desc_size));
    accept.push_back(blk(desc.beat.strb->d, *desc.beat.desc_strb));
    if (w.widen)
      accept.push_back(
          blk(desc.beat.widen->d, in.widen_i & ~in.store_i & (*desc.beat.desc_size == lit(w.g.size_bits, 0))));
  }
  for (int k = 0; k < 3; ++k) {
    accept.push_back(blk(desc.count[k].d, in.count_i[k]));
    accept.push_back(blk(desc.dram_stride[k].d, in.dram_stride_i[k]));
    accept.push_back(blk(desc.spm_stride[k].d, in.spm_stride_i[k]));
  }
  return accept;
}

// The descriptor registers, loaded when a descriptor is accepted. The run finishes when both walkers
// are done, no burst is in flight, the data FIFO is empty and no SPM read is outstanding; done_q
// pulses then.
void build_descriptor_registers(Module& m, const DmaSignals& s, const DmaWidths& w) {
  const DescriptorRegisters& desc = s.desc;
  m.assign(s.status.finish, desc.busy.q & ~s.rq.walk.active.q & ~s.sp.walk.active.q & s.lq.lq_empty & s.df.df_empty &
                                (s.sp.sp_reads_in_flight.q == lit(w.data_fifo_count_bits, 0)));
  Stmts next = hold_flops(desc.flops);
  next.push_back(blk(desc.done.d, bit(false)));
  next.push_back(if_(desc.desc_fire, descriptor_load(s, w)));
  next.push_back(if_(s.status.finish, {blk(desc.busy.d, bit(false)), blk(desc.done.d, bit(true))}));
  m.always_comb(std::move(next));
  m.always_ff_flops(desc.flops, descriptor_reset_values(desc, w));
}

// ---- The pattern walkers -----------------------------------------------------------------------

// A walker started by an accepted descriptor: active unless the pattern is empty, at index (0, 0, 0)
// and the base address `base`.
Stmts walker_start(const Walker& walk, const DescriptorRegisters& desc, const Expr& base) {
  const Expr count_zero = lit(kDmaCountBits, 0);
  return {blk(walk.active.d, ~desc.desc_empty), blk(walk.inner.d, count_zero), blk(walk.i1.d, count_zero),
          blk(walk.i2.d, count_zero),           blk(walk.addr.d, base),        blk(walk.row1_addr.d, base),
          blk(walk.row2_addr.d, base)};
}

// A walker past the end of an inner run: on to the next level-1 row, else to the next level-2 plane
// (whose first row starts there), else the pattern is done.
Stmts walker_next_row(const Walker& walk, const DescriptorRegisters& desc) {
  const Expr count_zero = lit(kDmaCountBits, 0), count_one = lit(kDmaCountBits, 1);
  return {if_(walk.i1.q != desc.count1_last,
              {blk(walk.inner.d, count_zero), blk(walk.i1.d, walk.i1.q + count_one),
               blk(walk.row1_addr.d, walk.row1_next), blk(walk.addr.d, walk.row1_next)},
              {if_(walk.i2.q != desc.count2_last,
                   {blk(walk.inner.d, count_zero), blk(walk.i1.d, count_zero), blk(walk.i2.d, walk.i2.q + count_one),
                    blk(walk.row2_addr.d, walk.row2_next), blk(walk.row1_addr.d, walk.row2_next),
                    blk(walk.addr.d, walk.row2_next)},
                   {blk(walk.active.d, bit(false))})})};
}

// ---- The request side --------------------------------------------------------------------------

// The next burst: 1 beat unless ds0 is contiguous, else the rest of the inner run up to the limit; the
// inner index after it, the DRAM address step to the following burst, the next row and plane.
void build_request_burst(Module& m, const DmaSignals& s, const DmaWidths& w) {
  const DescriptorRegisters& desc = s.desc;
  const RequestSide& rq = s.rq;
  const int dram_addr_bits = kDmaDramAddrBits, count_bits = kDmaCountBits, len_bits = w.g.len_bits;
  m.assign(rq.rq_rem, desc.count[0].q - rq.walk.inner.q);
  m.assign(rq.rq_len, ternary_chain({{~desc.contiguous.q, lit(len_bits, 1)},
                                     {rq.rq_rem > zext(desc.burst_limit.q, count_bits), desc.burst_limit.q}},
                                    rq.rq_rem.slice(len_bits - 1, 0)));
  m.assign(rq.rq_j_next, rq.walk.inner.q + zext(rq.rq_len, count_bits));
  // A contiguous burst covers len * 2^size bytes.
  const Expr len_bytes =
      w.narrow ? shl(zext(rq.rq_len, dram_addr_bits), desc.beat.size->q) : zext(rq.rq_len, dram_addr_bits);
  m.assign(rq.rq_step, ternary(desc.contiguous.q, len_bytes, desc.dram_stride[0].q));
  m.assign(rq.walk.row1_next, rq.walk.row1_addr.q + desc.dram_stride[1].q);
  m.assign(rq.walk.row2_next, rq.walk.row2_addr.q + desc.dram_stride[2].q);
}

// The off-chip request channel: a burst is requested while bursts remain and the burst-length FIFO has
// room for its length.
void drive_request_port(Module& m, const DmaSignals& s, const DmaWidths& w) {
  const OffchipPorts& out = s.port.offchip;
  const RequestSide& rq = s.rq;
  m.assign(out.req_valid_o, rq.walk.active.q & ~s.lq.lq_full);
  m.assign(out.req_addr_o, rq.walk.addr.q);
  m.assign(out.req_len_o, rq.rq_len);
  m.assign(out.req_write_o, s.desc.store.q);
  m.assign(out.req_size_o, w.narrow ? s.desc.beat.size->q : bit(false));
  m.assign(rq.req_fire, rq.walk.active.q & ~s.lq.lq_full & out.req_ready_i);
}

// The request walker: after an accepted request the next burst goes on in the same inner run, or
// starts the next row or plane.
void build_request_walker(Module& m, const DmaSignals& s) {
  const RequestSide& rq = s.rq;
  const Walker& walk = rq.walk;
  const Stmts next_burst = {if_(rq.rq_j_next != s.desc.count[0].q,
                                {blk(walk.inner.d, rq.rq_j_next), blk(walk.addr.d, walk.addr.q + rq.rq_step)},
                                walker_next_row(walk, s.desc))};
  Stmts next = hold_flops(walk.flops);
  next.push_back(
      if_(s.desc.desc_fire, walker_start(walk, s.desc, s.port.desc.dram_addr_i), {if_(rq.req_fire, next_burst)}));
  m.always_comb(std::move(next));
  m.always_ff_flops(walk.flops);
}

// The request side: walks the pattern a burst at a time, ahead of the data.
void build_request_side(Module& m, const DmaSignals& s, const DmaWidths& w) {
  m.blank();
  m.comment("Request side: burst length, next position, request handshake.");
  build_request_burst(m, s, w);
  drive_request_port(m, s, w);
  build_request_walker(m, s);
}

// The burst-length FIFO and the beat count of its head burst: a length is pushed with its request and
// popped with the burst's final data beat (read or write, as the descriptor's direction says).
void build_burst_length_fifo(Module& m, const DmaSignals& s, const DmaWidths& w) {
  const BurstLengthFifo& lq = s.lq;
  const OffchipPorts& port = s.port.offchip;
  const int len_bits = w.g.len_bits, ptr_bits = w.length_fifo_ptr_bits, count_bits = w.length_fifo_count_bits;
  const Expr req_fire = s.rq.req_fire;
  m.blank();
  m.comment("Bursts in flight: pushed with the request, popped with the burst's final data beat.");
  m.assign(lq.lq_full, lq.lq_count.q == lit(count_bits, w.g.outstanding));
  m.assign(lq.lq_empty, lq.lq_count.q == lit(count_bits, 0));
  m.assign(lq.lq_head, lq.lq_mem[lq.lq_read_ptr.q]);
  m.assign(lq.rd_fire, port.rd_valid_i & port.rd_ready_o);
  m.assign(lq.wr_fire, port.wr_valid_o & port.wr_ready_i);
  m.assign(lq.beat_fire, ternary(s.desc.store.q, lq.wr_fire, lq.rd_fire));
  m.assign(lq.bt_inc, lq.beats_done.q + lit(len_bits, 1));
  m.assign(lq.beat_last, lq.bt_inc == lq.lq_head);
  m.assign(lq.lq_pop, lq.beat_fire & lq.beat_last);
  m.always_ff({if_(req_fire, {nb(lq.lq_mem[lq.lq_write_ptr.q], s.rq.rq_len)})});
  const std::vector<Flop> flops{lq.lq_write_ptr, lq.lq_read_ptr, lq.lq_count, lq.beats_done};
  Stmts next = hold_flops(flops);
  for (Stmt& stmt : Stmts{if_(req_fire, {blk(lq.lq_write_ptr.d, lq.lq_write_ptr.q + lit(ptr_bits, 1))}),
                        if_(lq.lq_pop, {blk(lq.lq_read_ptr.d, lq.lq_read_ptr.q + lit(ptr_bits, 1))}),
                        if_(req_fire & ~lq.lq_pop, {blk(lq.lq_count.d, lq.lq_count.q + lit(count_bits, 1))}),
                        if_(lq.lq_pop & ~req_fire, {blk(lq.lq_count.d, lq.lq_count.q - lit(count_bits, 1))}),
                        if_(lq.beat_fire, {blk(lq.beats_done.d, ternary(lq.beat_last, lit(len_bits, 0), lq.bt_inc))})})
    next.push_back(std::move(stmt));
  m.always_comb(std::move(next));
  m.always_ff_flops(flops);
}

// ---- The data path -----------------------------------------------------------------------------

// Read beats: the low 2^size bytes are the element, zeros above; a widened byte fills the low
// widen_bytes with its sign. Whole words (beat_strobes_q all ones, widen_q 0) pass unchanged.
void build_read_beat_narrowing(Module& m, const DmaSignals& s, const DmaWidths& w) {
  const BeatSize& beat = s.desc.beat;
  const Expr rd_data_i = s.port.offchip.rd_data_i;
  const int data_bits = w.g.data_bits, lane_bits = 8 * w.g.widen_bytes;
  std::vector<Expr> byte_masks;
  for (int k = w.g.word_bytes - 1; k >= 0; --k) byte_masks.push_back(rep(8, beat.strb->q[k]));
  m.assign(*beat.rd_keep, cat(byte_masks));
  if (w.widen) {
    std::vector<Expr> sign = {rep(lane_bits - 8, beat.widen->q & rd_data_i[7]), lit(8, 0)};
    if (data_bits > lane_bits) sign.insert(sign.begin(), zero(data_bits - lane_bits));
    m.assign(*beat.rd_sign, cat(sign));
    m.assign(*beat.rd_elem, (rd_data_i & *beat.rd_keep) | *beat.rd_sign);
  } else {
    m.assign(*beat.rd_elem, rd_data_i & *beat.rd_keep);
  }
}

// The data FIFO: a load pushes read beats (narrowed) and pops SPM writes; a store pushes returning SPM
// read data and pops write beats. df_used counts the SPM reads in flight too, which have a word
// reserved.
void build_data_fifo(Module& m, const DmaSignals& s, const DmaWidths& w) {
  const DataFifo& df = s.df;
  const Expr store = s.desc.store.q;
  const int ptr_bits = w.data_fifo_ptr_bits, count_bits = w.data_fifo_count_bits;
  m.blank();
  m.comment("Data FIFO.");
  m.assign(df.df_full, df.df_count.q == lit(count_bits, kDmaFifoDepth));
  m.assign(df.df_empty, df.df_count.q == lit(count_bits, 0));
  m.assign(df.df_used, zext(df.df_count.q, count_bits + 1) + zext(s.sp.sp_reads_in_flight.q, count_bits + 1));
  m.assign(s.sp.sp_ret, s.port.spm.spm_rvalid_i & s.desc.busy.q & store);
  m.assign(df.df_push, ternary(store, s.sp.sp_ret, s.lq.rd_fire));
  if (w.narrow) build_read_beat_narrowing(m, s, w);
  m.assign(df.df_wdata,
           ternary(store, s.port.spm.spm_rdata_i, w.narrow ? *s.desc.beat.rd_elem : s.port.offchip.rd_data_i));
  m.assign(df.df_pop, ternary(store, s.lq.wr_fire, s.sp.spm_fire));
  m.always_ff({if_(df.df_push, {nb(df.df_mem[df.df_write_ptr.q], df.df_wdata)})});
  const std::vector<Flop> flops{df.df_write_ptr, df.df_read_ptr, df.df_count};
  Stmts next = hold_flops(flops);
  for (Stmt& stmt : Stmts{if_(df.df_push, {blk(df.df_write_ptr.d, df.df_write_ptr.q + lit(ptr_bits, 1))}),
                        if_(df.df_pop, {blk(df.df_read_ptr.d, df.df_read_ptr.q + lit(ptr_bits, 1))}),
                        if_(df.df_push & ~df.df_pop, {blk(df.df_count.d, df.df_count.q + lit(count_bits, 1))}),
                        if_(df.df_pop & ~df.df_push, {blk(df.df_count.d, df.df_count.q - lit(count_bits, 1))})})
    next.push_back(std::move(stmt));
  m.always_comb(std::move(next));
  m.always_ff_flops(flops);
}

// The off-chip data channels, only while a burst is in flight: a load takes read beats while the data
// FIFO has room, a store sends write beats from its head, with the descriptor's strobes.
void drive_data_channels(Module& m, const DmaSignals& s, const DmaWidths& w) {
  const OffchipPorts& out = s.port.offchip;
  const DescriptorRegisters& desc = s.desc;
  m.assign(out.rd_ready_o, desc.busy.q & ~desc.store.q & ~s.lq.lq_empty & ~s.df.df_full);
  m.assign(out.wr_valid_o, desc.busy.q & desc.store.q & ~s.lq.lq_empty & ~s.df.df_empty);
  m.assign(out.wr_data_o, s.df.df_mem[s.df.df_read_ptr.q]);
  m.assign(out.wr_last_o, s.lq.beat_last);
  m.assign(out.wr_strb_o, w.narrow ? desc.beat.strb->q : bit(true));
}

// ---- The SPM side ------------------------------------------------------------------------------

// The SPM port: a load writes the data FIFO's head; a store reads while SPM words remain and the FIFO
// can take the data of every read in flight. A widened load writes whole lanes.
void drive_spm_port(Module& m, const DmaSignals& s, const DmaWidths& w) {
  const SpmPorts& out = s.port.spm;
  const DescriptorRegisters& desc = s.desc;
  const Expr fifo_room = s.df.df_used < lit(w.data_fifo_count_bits + 1, kDmaFifoDepth);
  m.assign(out.spm_req_o, desc.busy.q & ternary(desc.store.q, paren(s.sp.walk.active.q & fifo_room), ~s.df.df_empty));
  m.assign(out.spm_we_o, ~desc.store.q);
  m.assign(out.spm_addr_o, s.sp.walk.addr.q);
  if (!w.narrow) m.assign(out.spm_size_o, bit(false));
  else if (w.widen)
    m.assign(out.spm_size_o, ternary(desc.beat.widen->q, lit(w.g.size_bits, w.g.widen_size), desc.beat.size->q));
  else
    m.assign(out.spm_size_o, desc.beat.size->q);
  m.assign(out.spm_wdata_o, s.df.df_mem[s.df.df_read_ptr.q]);
  m.assign(s.sp.spm_fire, out.spm_req_o & out.spm_gnt_i);
}

// The SPM walker: one word per granted access, on along the inner level, else to the next row or
// plane; sp_reads_in_flight_q counts a store's SPM reads until their data returns.
void build_spm_walker(Module& m, const DmaSignals& s, const DmaWidths& w) {
  const SpmSide& sp = s.sp;
  const Walker& walk = sp.walk;
  const DescriptorRegisters& desc = s.desc;
  const int count_bits = w.data_fifo_count_bits;
  const Expr read_issued = sp.spm_fire & desc.store.q;
  m.assign(walk.row1_next, walk.row1_addr.q + desc.spm_stride[1].q);
  m.assign(walk.row2_next, walk.row2_addr.q + desc.spm_stride[2].q);
  const Stmts next_word = {if_(
      walk.inner.q != sp.count0_last,
      {blk(walk.inner.d, walk.inner.q + lit(kDmaCountBits, 1)), blk(walk.addr.d, walk.addr.q + desc.spm_stride[0].q)},
      walker_next_row(walk, desc))};
  std::vector<Flop> flops = walk.flops;
  flops.push_back(sp.sp_reads_in_flight);
  Stmts next = hold_flops(flops);
  next.push_back(if_(desc.desc_fire, walker_start(walk, desc, s.port.desc.spm_addr_i), {if_(sp.spm_fire, next_word)}));
  next.push_back(
      if_(read_issued & ~sp.sp_ret, {blk(sp.sp_reads_in_flight.d, sp.sp_reads_in_flight.q + lit(count_bits, 1))}));
  next.push_back(
      if_(sp.sp_ret & ~read_issued, {blk(sp.sp_reads_in_flight.d, sp.sp_reads_in_flight.q - lit(count_bits, 1))}));
  m.always_comb(std::move(next));
  m.always_ff_flops(flops);
}

// The SPM side: walks the pattern a word at a time.
void build_spm_side(Module& m, const DmaSignals& s, const DmaWidths& w) {
  m.blank();
  m.comment("SPM side: a load writes the FIFO head; a store reads ahead while the FIFO has room.");
  drive_spm_port(m, s, w);
  build_spm_walker(m, s, w);
}

// Status: busy and the done pulse from the descriptor registers, and the off-chip beat counters.
void build_status(Module& m, const DmaSignals& s) {
  const Status& status = s.status;
  const int counter_bits = kDmaCounterBits;
  m.blank();
  m.comment("Status and beat counters.");
  const std::vector<Flop> flops{status.beats_read, status.beats_written};
  Stmts next = hold_flops(flops);
  for (Stmt& stmt :
       Stmts{if_(s.lq.rd_fire, {blk(status.beats_read.d, status.beats_read.q + lit(counter_bits, 1))}),
             if_(s.lq.wr_fire, {blk(status.beats_written.d, status.beats_written.q + lit(counter_bits, 1))})})
    next.push_back(std::move(stmt));
  m.always_comb(std::move(next));
  m.always_ff_flops(flops);
  m.assign(s.port.desc.busy_o, s.desc.busy.q);
  m.assign(s.port.desc.done_o, s.desc.done.q);
  m.assign(s.port.beats_read_o, status.beats_read.q);
  m.assign(s.port.beats_written_o, status.beats_written.q);
}

}  // namespace

// The off-chip port's promises (docs/rtl-assertions.md): requests and write beats held until taken,
// bursts of 1 to max_burst beats.
void dma_assertions(Module& m, const OffchipPorts& p, const DmaWidths& w) {
  const int len_bits = w.g.len_bits;
  m.assertion("a_req_held",
              ~past(p.req_valid_o & ~p.req_ready_i) |
                  (p.req_valid_o & (p.req_addr_o == past(p.req_addr_o)) & (p.req_len_o == past(p.req_len_o)) &
                   (p.req_write_o == past(p.req_write_o))),
              "A burst request that was not taken stays, unchanged.");
  Expr len_ok = p.req_len_o != lit(len_bits, 0);
  // (req_len_o > max_burst cannot be represented when max_burst = 2^len_bits - 1.)
  if ((1LL << len_bits) - 1 > w.g.max_burst) len_ok = len_ok & (p.req_len_o <= lit(len_bits, w.g.max_burst));
  m.assertion("a_burst_len", ~p.req_valid_o | len_ok, fmt::format("A burst is 1 to {} beats.", w.g.max_burst));
  m.assertion("a_write_beat_held", ~past(p.wr_valid_o & ~p.wr_ready_i) | (p.wr_valid_o & (p.wr_last_o == past(p.wr_last_o))),
              "A write beat that was not taken stays, its wr_last_o unchanged.");
}

Module build_dma(const AccelConfig& cfg) {
  const DmaWidths w = dma_widths(cfg);
  Module m(kDmaModule, dma_description(w.g));
  const DmaSignals s = declare_signals(m, w);

  // The descriptor: accepted while idle, decoded, held until the run finishes.
  build_descriptor_decode(m, s, w);
  build_size_decode(m, s, w);
  build_descriptor_registers(m, s, w);

  // Requests run ahead of the data; the burst-length FIFO tells the data channels where a burst ends.
  build_request_side(m, s, w);
  build_burst_length_fifo(m, s, w);

  // The data FIFO between the off-chip data channels and the SPM port, then the status outputs.
  build_data_fifo(m, s, w);
  drive_data_channels(m, s, w);
  build_spm_side(m, s, w);
  build_status(m, s);
  dma_assertions(m, s.port.offchip, w);
  return m;
}

// dma.json (schemas/dma.schema.json): the DMA engine's widths and limits, read by tb/dma_tb.cpp.
nlohmann::json dma_summary(const AccelConfig& cfg) {
  const DmaGeometry g = dma_geometry(cfg);
  return {{"data_bits", g.data_bits},
          {"spm_addr_bits", g.spm_addr_bits},
          {"widen_size", g.widen_size},
          {"dram_addr_bits", kDmaDramAddrBits},
          {"count_bits", kDmaCountBits},
          {"len_bits", g.len_bits},
          {"max_burst", g.max_burst},
          {"outstanding", g.outstanding},
          {"fifo_depth", kDmaFifoDepth},
          {"size_bits", g.size_bits},
          {"max_size", g.max_size},
          {"widen_bits", 8 * g.widen_bytes},
          {"latency_cycles", cfg.offchip.latency_cycles},
          {"clock_mhz", cfg.clock.target_mhz}};
}

void emit_dma(const AccelConfig& cfg, Design& design) {
  design.add_module(build_dma(cfg));
  design.add_summary(kDmaSummaryName, dma_summary(cfg));
}

}  // namespace capsgen::emit
