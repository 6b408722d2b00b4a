// The compute engine's descriptor (capsgen_engine, docs/rtl-engine.md): one Gemm as the engine's
// ports take it, with the derived fields that spare the hardware multipliers and dividers, and the
// Gemm builders for convolutions that the compiler and the engine's block test share.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "isa/gather.hpp"
#include "isa/program.hpp"

namespace capsgen::isa {

// Geometry of a convolution (Conv1, the convolution of a primary-capsule layer).
struct ConvShape {
  int channels = 1, height = 1, width = 1;  // input map
  int out_channels = 1;
  int kernel_h = 1, kernel_w = 1, stride = 1, padding = 0;
  int out_h() const { return (height + 2 * padding - kernel_h) / stride + 1; }
  int out_w() const { return (width + 2 * padding - kernel_w) / stride + 1; }
};

// The Gemm of a convolution on a rows x cols array with `acc_depth` accumulator entries: tiles are
// filters stored tile-major at w_base (Region::tile_rows; rows = reduction index (c, ky, kx), cols =
// output channels), data vectors are im2col patches of the map at in_base (one per output position),
// biases (psum codes) at bias_base or none when bias_base < 0. The output target is left empty.
Gemm conv_gemm(const ConvShape& s, int rows, int cols, int acc_depth, std::int64_t in_base, std::int64_t w_base,
               std::int64_t bias_base);
// Vectors per accumulator block: the loop order (block, chunk, tile) keeps block x tiles partial sums
// per column resident.
int block_size(int acc_depth, int m_total, int n_tiles);
// Output targets of the compiler's conv layers: a [channels, positions] map (o -> base + o*positions
// + m), and capsules (channel o = t*dim + d at position m -> capsule t*positions + m, element d).
OutTarget map_output(std::int64_t base, std::int64_t positions);
OutTarget capsule_output(std::int64_t base, std::int64_t positions, int dim);

// What capsgen_engine's descriptor ports take (names as the ports without desc_ and _i). Addresses
// and strides are 32-bit two's complement. Derived fields:
//   t_top   = (rows - 1) * tile.s_r                      (offset of the bottom tile row, loaded first)
//   t_gtop  = (rows - 1) / group_rows, t_etop = (rows - 1) % group_rows     (diag: group, element)
//   t_dtop  = t_etop * tile.s_r, t_dwrap = (group_rows - 1) * tile.s_r        (diag)
//   o_wrap  = out.s_o1 - (out.o_div - 1) * out.s_o2      (output offset step when o % o_div wraps)
struct EngineDescriptor {
  // What the engine runs: 0 a Gemm (the fields below), 1 an Activate pass (a_*), 2 a Fill (f_value,
  // a_count, a_out_base, a_out_s_e).
  std::uint8_t kind = 0;
  GatherDescriptor gather;  // data source and the shared counts (batch, m_total, m_block, k_chunks, r_total)
  std::uint16_t n_tiles = 0, n_total = 0;
  std::uint32_t t_base = 0, t_s_b = 0, t_s_k = 0, t_s_n = 0, t_s_r = 0, t_top = 0;
  bool t_strided = false;  // rows not contiguous (tile.s_c != 1 with several columns): read column by column
  std::uint32_t t_s_c = 0;
  bool t_diag = false;
  std::uint16_t t_gtop = 0, t_etop = 0;
  std::uint32_t t_dtop = 0, t_dwrap = 0;
  // Vector-wide gather: an affine source whose vector elements are consecutive (s_r = 1; with diag
  // groups, rows / groups = r_total) is read one vector (`rows` consecutive elements) per cycle
  // instead of one element; rows at or past v_len - k*rows are zero.
  bool v_mode = false;
  std::uint16_t v_len = 0;
  bool init_bias = false;  // AccInit::kPerColumn
  bool init_out = false;   // AccInit::kPerOutput
  std::uint32_t init_base = 0, init_s_b = 0, init_s_m = 0;
  std::uint8_t init_shift = 0;
  std::uint32_t o_base = 0, o_s_b = 0, o_s_m = 0, o_s_o2 = 0, o_wrap = 0;
  std::uint16_t o_div = 1;
  std::uint16_t o_sel = 0;  // out.select_mod
  // Consecutive outputs (the offset of output o is o: o_wrap = 1 and s_o2 = 1 or o_div = 1, no
  // select_mod): the writer stores a record (a vector's columns of one tile) in one cycle.
  bool o_vec = false;
  std::uint8_t shift = 0;
  bool relu = false;
  // Activate: `a_count` vectors of `a_n` elements (act codes) at a_in_base + v*a_in_s_v + e*a_in_s_e
  // through activation unit 0 with func a_func (2 norm, 3 squash, 4 softmax: the unit's func_i
  // codes) and norm shift a_norm_shift; squash and softmax write n results at a_out_base +
  // v*a_out_s_v + e*a_out_s_e, norm one at a_out_base + v*a_out_s_v. Fill: a_count elements at
  // a_out_base + e*a_out_s_e get f_value.
  std::uint8_t a_func = 0, a_norm_shift = 0;
  std::uint32_t a_count = 0;
  std::uint16_t a_n = 0;
  std::uint32_t a_in_base = 0, a_in_s_v = 0, a_in_s_e = 0, a_out_base = 0, a_out_s_v = 0, a_out_s_e = 0;
  std::uint16_t f_value = 0;  // act code, two's complement in the low act bits
  // A split reduction's parts (Gemm::acc_continue, acc_hold): chunk 0 accumulates onto the entries the
  // previous descriptor left; no output is written (the entries keep the sums).
  bool acc_continue = false, acc_hold = false;
};

// Encodes g for a rows x cols array with acc_depth accumulator entries. Throws std::invalid_argument
// naming the field when the engine cannot run g: counts outside [1, 65535], m_block * n_tiles >
// acc_depth, o_div < 1, select_mod outside [0, 65535], shift or init.shift outside [0, 31], and
// everything encode_gather rejects. Tiles whose rows are not contiguous (tile.s_c != 1, several columns) are
// read column by column (t_strided: up to cols reads per row instead of one).
// vector_gather: use the vector-wide gather where the data source allows it (v_mode), and whole-record
// writes where the outputs are consecutive (o_vec).
EngineDescriptor encode_engine(const Gemm& g, int rows, int cols, int acc_depth, bool vector_gather = true);

// An Activate pass: squash uses the preset's squash norm shift (`squash_norm_shift`), norm its own.
// Throws std::invalid_argument naming the field: count outside [1, 2^32), n outside [1, max_len]
// (the activation unit's longest vector).
EngineDescriptor encode_activate(const Activate& a, int squash_norm_shift, int max_len);
// A Fill with one value (a period table of equal entries is one value). Throws std::invalid_argument
// for a table of different values (the engine writes a constant) or a count outside [1, 2^32).
EngineDescriptor encode_fill(const Fill& f, int act_bits);

// The descriptor as text, one "field value" line per field (gather fields prefixed "g_"), and back:
// the format `capsgen compile --dump-engine` writes and the engine's program test reads.
// parse_engine_descriptor throws std::invalid_argument naming the line and field on a missing,
// unknown, duplicate or malformed field.
std::string engine_descriptor_text(const EngineDescriptor& d);
EngineDescriptor parse_engine_descriptor(const std::string& text);

// ---- The packed descriptor: what the program sequencer (capsgen_sequencer) fetches -------------------
// A program is a sequence of descriptors of engine_descriptor_words() 32-bit words each, ended by a
// descriptor whose kind is kEngineKindEnd. Each field of the text format's table keeps its width and
// sits in one word (never split across two), placed first-fit in table order: the lowest word with
// room, at the lowest free bit. `kind` is therefore bits [1:0] of word 0. The emitter of the
// accelerator's top level slices the engine's descriptor ports out of these words with the same
// table, so the packer and the RTL cannot disagree.
inline constexpr std::uint8_t kEngineKindGemm = 0;
inline constexpr std::uint8_t kEngineKindActivate = 1;
inline constexpr std::uint8_t kEngineKindFill = 2;
inline constexpr std::uint8_t kEngineKindEnd = 3;
inline constexpr int kEngineKindBits = 2;  // the descriptor's kind field

struct PackedField {
  std::string name;  // as in the text format ("g_" prefix: a gather field)
  int bits = 0;      // width in the word (the text format's width)
  int word = 0, lsb = 0;
};
const std::vector<PackedField>& engine_descriptor_layout();
int engine_descriptor_words();
// The engine's wire of a field, sliced out of its packed descriptor input desc_words_i: desc_<name>,
// with the "g_" prefix dropped.
std::string engine_descriptor_signal(const PackedField& f);

std::vector<std::uint32_t> pack_engine_descriptor(const EngineDescriptor& d);
// Throws std::invalid_argument when fewer than engine_descriptor_words() words are given.
EngineDescriptor unpack_engine_descriptor(const std::vector<std::uint32_t>& words);
// The program image: every descriptor packed, in order, then the end descriptor.
std::vector<std::uint32_t> pack_engine_program(const std::vector<EngineDescriptor>& program);

}  // namespace capsgen::isa
