// DRAM data mapping: ROMANet's order (columns, banks, rows, ranks, channels), the baseline's
// bank-contiguous tiles, burst alignment and tensor regions.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "dram/address_mapping.hpp"

namespace capsgen::dram {
namespace {

TEST(AddressMapping, RomanetOrder) {
  DramOrganization org;
  org.ranks = 2;
  org.channels = 2;
  const AddressMapping m(org);
  EXPECT_EQ(m.decode_word(0), (DramAddress{0, 0, 0, 0, 0}));
  EXPECT_EQ(m.decode_word(1023), (DramAddress{0, 0, 0, 0, 1023}));  // columns of one row first
  EXPECT_EQ(m.decode_word(1024), (DramAddress{0, 0, 1, 0, 0}));     // then the next bank, same row
  EXPECT_EQ(m.decode_word(8 * 1024), (DramAddress{0, 0, 0, 1, 0})); // then the next row
  EXPECT_EQ(m.decode_word(8ULL * 1024 * 32768), (DramAddress{0, 1, 0, 0, 0}));      // then the next rank
  EXPECT_EQ(m.decode_word(2ULL * 8 * 1024 * 32768), (DramAddress{1, 0, 0, 0, 0}));  // then the channel
  std::mt19937_64 rng(7);
  for (int k = 0; k < 1000; ++k) {
    const std::uint64_t w = rng() % org.capacity_words();
    EXPECT_EQ(m.encode_word(m.decode_word(w)), w);
  }
  // Byte addresses with 4 chips per rank: a word is 4 bytes.
  DramOrganization wide;
  wide.chips_per_rank = 4;
  const AddressMapping mw(wide);
  EXPECT_EQ(mw.word_bytes(), 4);
  EXPECT_EQ(mw.decode(4 * 1024).bank, 1);
}

TEST(AddressMapping, OtherOrders) {
  const DramOrganization org;
  const AddressMapping m(org, AddressMapping::parse_order("co,ro,ba,ra,ch"));
  EXPECT_EQ(m.decode_word(1024), (DramAddress{0, 0, 0, 1, 0}));  // next row of the same bank
  EXPECT_EQ(m.decode_word(1024ULL * 32768), (DramAddress{0, 0, 1, 0, 0}));
  EXPECT_THROW(AddressMapping::parse_order("co,ba,ro,ra"), std::invalid_argument);
  EXPECT_THROW(AddressMapping::parse_order("co,ba,ro,ra,co"), std::invalid_argument);
  EXPECT_THROW(AddressMapping::parse_order("co,ba,xx,ra,ch"), std::invalid_argument);
}

TEST(TileAllocator, RomanetTilesFollowTheOrderAlignedToBursts) {
  const DramOrganization org;
  TileAllocator a(org, MappingPolicy::Romanet);
  const int r0 = a.add_region(5000, 3, 3000);
  const Placement p = a.allocate(r0, 1500);
  const Placement q = a.allocate(r0, 13);
  const Placement z = a.allocate(r0, 8);
  EXPECT_EQ(p.start, 0u);
  EXPECT_EQ(q.start, 1504u);  // rounded up to a burst of 8
  EXPECT_EQ(z.start, 1520u);
  EXPECT_EQ(a.address(p, 1023), (DramAddress{0, 0, 0, 0, 1023}));
  EXPECT_EQ(a.address(p, 1024), (DramAddress{0, 0, 1, 0, 0}));  // a tile spreads over banks, same row
  // A second tensor starts on fresh rows of every bank.
  const int r1 = a.add_region(100, 1, 100);
  const Placement w = a.allocate(r1, 100);
  EXPECT_EQ(a.address(w, 0), (DramAddress{0, 0, 0, 1, 0}));
  EXPECT_THROW(a.allocate(r1, 9000), std::length_error);
}

TEST(TileAllocator, BankContiguousTilesStayInOneBank) {
  const DramOrganization org;
  TileAllocator a(org, MappingPolicy::BankContiguous);
  const int r = a.add_region(20 * 3000, 20, 3000);
  std::vector<Placement> tiles;
  for (int k = 0; k < 10; ++k) tiles.push_back(a.allocate(r, 3000));
  for (int k = 0; k < 10; ++k) EXPECT_EQ(tiles[std::size_t(k)].bank, k % 8);  // banks in turn
  // Inside a tile: columns of a row, then the next row of the same bank.
  EXPECT_EQ(a.address(tiles[0], 1023), (DramAddress{0, 0, 0, 0, 1023}));
  EXPECT_EQ(a.address(tiles[0], 1024), (DramAddress{0, 0, 0, 1, 0}));
  EXPECT_EQ(a.address(tiles[0], 2999).bank, 0);
  // The ninth tile follows the first one in bank 0, burst aligned: 3000 -> 3000 (already aligned).
  EXPECT_EQ(tiles[8].start, 3000u);
  EXPECT_EQ(a.address(tiles[8], 0), (DramAddress{0, 0, 0, 2, 952}));
  // A new region begins on rows no earlier tile uses.
  const int r2 = a.add_region(10, 1, 10);
  const Placement t = a.allocate(r2, 10);
  std::set<int> rows;
  for (const Placement& p : tiles)
    for (std::uint64_t k = 0; k < p.words; k += 512) rows.insert(a.address(p, k).row);
  EXPECT_GT(a.address(t, 0).row, *rows.rbegin());
}

TEST(TileAllocator, RegionsMustFit) {
  const DramOrganization org;  // 256 MB
  TileAllocator a(org, MappingPolicy::Romanet);
  EXPECT_THROW(a.add_region(org.capacity_words() + 1, 1, 1), std::length_error);
  TileAllocator b(org, MappingPolicy::BankContiguous);
  // One huge tile must fit in one bank (32 MB).
  EXPECT_THROW(b.add_region(40u << 20, 1, 40u << 20), std::length_error);
  EXPECT_NO_THROW(b.add_region(30u << 20, 1, 30u << 20));
}

}  // namespace
}  // namespace capsgen::dram
