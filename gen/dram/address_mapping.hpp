// DRAM addresses and data mapping.
//
// AddressMapping decodes a byte address into (channel, rank, bank, row, column) with a field order;
// the default is ROMANet's mapping order (Fig. 17b): consecutive words fill the columns of one row,
// then the same row of the next bank, then the next row, then the next rank, then the next channel.
// One word (beat) spans all chips of a rank, which is the chip-level parallelism of ROMANet (Dp chips
// serve one access in lock step).
//
// TileAllocator places the tiles (partitions) of a layer's tensors in DRAM:
//   - MappingPolicy::Romanet: every tile is a contiguous range of the ROMANet order above (row buffer
//     hits within a row, then bank-level parallelism across banks, then the next row);
//   - MappingPolicy::BankContiguous: the baseline of ROMANet's evaluation (the mapping of [21]): each
//     tile is contiguous inside one bank (columns of a row, then the next row of the same bank), tiles
//     go to the banks in turn.
// Each tensor gets its own region (a range of rows) so tensors never share a row.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "dram/dram_spec.hpp"

namespace capsgen::dram {

struct DramAddress {
  int channel = 0, rank = 0, bank = 0;
  int row = 0;
  int column = 0;  // in beats (words)
  bool operator==(const DramAddress&) const = default;
};

enum class AddressField { Column, Bank, Row, Rank, Channel };

class AddressMapping {
 public:
  // `order` lists the fields from the least significant; it must name each field once.
  explicit AddressMapping(const DramOrganization& org,
                          std::array<AddressField, 5> order = {AddressField::Column, AddressField::Bank,
                                                               AddressField::Row, AddressField::Rank,
                                                               AddressField::Channel});
  // Parses "co,ba,ro,ra,ch" style strings (least significant first). Throws std::invalid_argument.
  static std::array<AddressField, 5> parse_order(const std::string& text);

  DramAddress decode_word(std::uint64_t word) const;
  std::uint64_t encode_word(const DramAddress& a) const;
  DramAddress decode(std::uint64_t byte_address) const { return decode_word(byte_address / word_bytes_); }
  std::uint64_t encode(const DramAddress& a) const { return encode_word(a) * word_bytes_; }
  int word_bytes() const { return word_bytes_; }

 private:
  std::array<AddressField, 5> order_;
  std::array<std::uint64_t, 5> size_{};  // by AddressField
  int word_bytes_;
};

enum class MappingPolicy { Romanet, BankContiguous };
const char* to_string(MappingPolicy p);

// Where one tile lives: `words` words starting at `start` of the policy's linear order (the ROMANet
// order, or the inside of bank `bank` for BankContiguous).
struct Placement {
  int bank = -1;  // BankContiguous only
  std::uint64_t start = 0;
  std::uint64_t words = 0;
};

class TileAllocator {
 public:
  TileAllocator(const DramOrganization& org, MappingPolicy policy);

  MappingPolicy policy() const { return policy_; }
  // Forgets every region (a new layer).
  void reset();
  // Opens a region (a range of rows) for a tensor stored as `tiles` tiles of `words` words in all,
  // none larger than `max_tile_words`. Tiles start at burst boundaries. Returns the region id.
  // Throws std::length_error when the DRAM is full.
  int add_region(std::uint64_t words, std::uint64_t tiles, std::uint64_t max_tile_words);
  // Allocates one tile of `words` words in a region.
  Placement allocate(int region, std::uint64_t words);
  // Address of word k of a placement.
  DramAddress address(const Placement& p, std::uint64_t k) const;

 private:
  struct Region {
    std::uint64_t next = 0;               // Romanet: next word of the linear order
    std::vector<std::uint64_t> bank_next; // BankContiguous: next word inside each bank
    std::uint64_t end = 0;                // Romanet: end of the region; BankContiguous: end inside each bank
    int turn = 0;                         // BankContiguous: next bank
  };
  DramOrganization org_;
  MappingPolicy policy_;
  AddressMapping romanet_map_;
  std::uint64_t rows_used_ = 0;  // rows (of every bank) taken by earlier regions
  std::vector<Region> regions_;
  int banks_total_;  // banks of all ranks and channels (BankContiguous tiles rotate over these)
};

}  // namespace capsgen::dram
