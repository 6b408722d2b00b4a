// Memory system of the SEP, HY and SMP organizations (docs/memory-system.md section 2, docs/rtl-memsys.md):
// capsgen_memsys instantiates the organization's scratchpads (capsgen_spm_*: data, weight, acc with one
// port per bank; HY adds the shared memory with three ports per bank) and maps onto their banks the
// compute engine's four memory ports (drd, wrd, brd: fixed 1-cycle reads that never wait; wr: element
// writes into the data memory (Gemm) or the weight memory (Activate, Fill), or with HY the shared
// memory, that wait on wr_ready_o while the same memory's read on the same port uses one of their
// banks) and the DMA's SPM port (one element-addressed access of 2^size bytes, placed in its lanes
// with byte enables; lowest priority). HY: drd reaches data or shared (shared port p0), wrd weight or
// shared (p1), wr data, weight or shared (p1), the DMA every memory (shared: p2); the writer waits
// only on a wrd of its shared bank (p1), a DMA access on any engine access of its bank. HY with 32-bit
// shared words: a fifth range, `lanes`, the shared memory's words as 32-bit psum lanes (brd p2, where
// the compiler puts acc buffers that do not fit the acc memory). Vector
// and row accesses read or write all the banks they span in one cycle and rotate lanes. Counters
// of bank accesses per memory, port and sector, waits of the writer and of the DMA, and a sticky
// error output. SMP: one three-port shared memory seen as bytes (data, weights, results: drd p0, wrd
// and wr p1) and as 32-bit psum lanes (the acc view: brd p2), the DMA on p2 for both. Presets whose
// element codes do not fit the memories' 8-bit lanes, or SMP with words under 32 bits, are not supported:
// memsys_unsupported_reason() says why, and `capsgen generate` then writes memsys.json with the reason
// instead of the module.
#pragma once

#include <string>
#include <vector>

#include "config/accel_config.hpp"
#include "emit/design.hpp"
#include "emit/scratchpad.hpp"

namespace capsgen::emit {

inline constexpr const char* kMemsysModule = "capsgen_memsys";
// JSON summary of the address map for the testbenches (schemas/memsys.schema.json; always written:
// `"supported": false` and a `reason` when the module is not generated).
inline constexpr const char* kMemsysSummaryName = "memsys.json";
inline constexpr int kMemsysCounterBits = 32;  // every counter, wraps
inline constexpr int kMemsysElementLaneBits = 8;  // data/weight memories: one element code per byte
inline constexpr int kMemsysPsumLaneBits = 32;    // acc memory: one psum code per 32-bit lane

// One memory of the organization as memsys sees it: a range of the element space over the words of
// a scratchpad. SMP (docs/memory-system.md section 2.2) has two over one scratchpad: `acc`, the
// shared memory's 32-bit lanes (a view: g is the shared memory's geometry named "acc"), and `shared`,
// its bytes.
struct MemsysMemory {
  SpmGeometry g;
  std::string phys;        // the scratchpad holding the words (capsgen_spm_<phys>): g.name, or for a view "shared"
  bool view() const { return phys != g.name; }
  int lane_bits = 0;       // 8 (data, weight, shared) or 32 (acc)
  int lanes = 0;           // E: elements per word
  long long words = 0;     // banks * sectors * words_per_sector
  long long elements = 0;  // words * lanes
  long long elem_base = 0;  // first element address in the on-chip element space
  int lane_log = 0;        // log2(lanes)
  int bank_log = 0;        // log2(banks)
  int row_bits = 0;        // clog2(rows per bank = sectors * words_per_sector)
};

struct MemsysGeometry {
  // The element space's order: data, weight, acc[, shared (HY)[, lanes (HY's view of the shared memory's
  // 32-bit lanes)]], or SMP's acc (view), shared.
  std::vector<MemsysMemory> mems;
  bool smp = false;
  // Index of memory `name` in mems, -1 when the organization has none.
  int index(const std::string& name) const {
    for (std::size_t i = 0; i < mems.size(); ++i)
      if (mems[i].g.name == name) return static_cast<int>(i);
    return -1;
  }
  int addr_bits = 0;      // engine element addresses (kGatherAddrBits)
  int spm_addr_bits = 0;  // DMA element address: clog2(total elements) (= memsys_element_addr_bits)
  int spm_data_bits = 0;  // DMA word: the widest memory word
  int spm_max_size = 0;   // log2(spm_data_bits / 8): spm_size_i of a whole widest word
  int spm_size_bits = 0;  // spm_size_i: holds 0..spm_max_size (the DMA's size field)
  int rows = 0, cols = 0, data = 0, weight = 0, psum = 0, out_bits = 0;
  long long total_elements = 0;
};

// "" when capsgen_memsys can be generated for the preset, else the reason (names the field).
std::string memsys_unsupported_reason(const AccelConfig& cfg);
// The geometry; throws InputError (field named) when unsupported.
MemsysGeometry memsys_geometry(const AccelConfig& cfg);

// Bits of an address in the on-chip element space of any organization (all memories of
// spm_memories(cfg) in order; data/weight/shared: one element per byte, acc: one per 32-bit lane, at
// least one per word): the DMA's SPM address width, equal to memsys_geometry().spm_addr_bits where
// memsys is supported, so the top level connects the DMA's SPM port to memsys directly.
int memsys_element_addr_bits(const AccelConfig& cfg);

// Largest number of consecutive words n consecutive elements can span with `lanes` per word.
long long memsys_words_spanned(long long n, int lanes);

// Where one element (engine or DMA address) lives. memory -1: outside every memory.
struct MemsysLocation {
  int memory = -1;
  long long word = 0, lane = 0, bank = 0, row = 0, sector = 0, offset = 0;
};
MemsysLocation memsys_locate_element(const MemsysGeometry& g, long long addr);

// Lanes a DMA access of 2^size bytes covers in memory m, or 0 when the size is not a whole number
// of the memory's lanes or is wider than its word (the access is dropped with err_o). An access at
// lane l is legal when 0 < n and l + n <= lanes.
int memsys_dma_lanes(const MemsysMemory& m, int size);

Module build_memsys(const AccelConfig& cfg);
nlohmann::json memsys_summary(const AccelConfig& cfg);
// capsgen_memsys and memsys.json (presets that fit); otherwise memsys.json with the reason.
void emit_memsys(const AccelConfig& cfg, Design& design);

}  // namespace capsgen::emit
