#include "dram/address_mapping.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace capsgen::dram {
namespace {

std::uint64_t round_up(std::uint64_t x, std::uint64_t m) { return (x + m - 1) / m * m; }

}  // namespace

AddressMapping::AddressMapping(const DramOrganization& org, std::array<AddressField, 5> order)
    : order_(order), word_bytes_(org.word_bytes()) {
  size_[int(AddressField::Column)] = std::uint64_t(org.columns);
  size_[int(AddressField::Bank)] = std::uint64_t(org.banks);
  size_[int(AddressField::Row)] = std::uint64_t(org.rows);
  size_[int(AddressField::Rank)] = std::uint64_t(org.ranks);
  size_[int(AddressField::Channel)] = std::uint64_t(org.channels);
  std::array<int, 5> seen{};
  for (AddressField f : order_) ++seen[int(f)];
  for (int s : seen)
    if (s != 1) throw std::invalid_argument("address mapping: the order must name each field once");
}

std::array<AddressField, 5> AddressMapping::parse_order(const std::string& text) {
  std::array<AddressField, 5> out{};
  std::size_t n = 0, pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = text.find(',', pos);
    const std::string tok = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    AddressField f;
    if (tok == "co")
      f = AddressField::Column;
    else if (tok == "ba")
      f = AddressField::Bank;
    else if (tok == "ro")
      f = AddressField::Row;
    else if (tok == "ra")
      f = AddressField::Rank;
    else if (tok == "ch")
      f = AddressField::Channel;
    else
      throw std::invalid_argument(fmt::format("unknown address field '{}' (expected co, ba, ro, ra, ch)", tok));
    if (n == 5) throw std::invalid_argument("more than five address fields");
    out[n++] = f;
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  if (n != 5) throw std::invalid_argument("expected the five fields co, ba, ro, ra, ch in some order");
  std::array<int, 5> seen{};
  for (AddressField f : out)
    if (++seen[int(f)] > 1) throw std::invalid_argument("an address field appears twice");
  return out;
}

DramAddress AddressMapping::decode_word(std::uint64_t word) const {
  DramAddress a;
  for (AddressField f : order_) {
    const std::uint64_t n = size_[int(f)];
    const int v = int(word % n);
    word /= n;
    switch (f) {
      case AddressField::Column:
        a.column = v;
        break;
      case AddressField::Bank:
        a.bank = v;
        break;
      case AddressField::Row:
        a.row = v;
        break;
      case AddressField::Rank:
        a.rank = v;
        break;
      case AddressField::Channel:
        a.channel = v;
        break;
    }
  }
  return a;
}

std::uint64_t AddressMapping::encode_word(const DramAddress& a) const {
  std::uint64_t word = 0;
  for (int k = 4; k >= 0; --k) {
    const AddressField f = order_[std::size_t(k)];
    int v = 0;
    switch (f) {
      case AddressField::Column:
        v = a.column;
        break;
      case AddressField::Bank:
        v = a.bank;
        break;
      case AddressField::Row:
        v = a.row;
        break;
      case AddressField::Rank:
        v = a.rank;
        break;
      case AddressField::Channel:
        v = a.channel;
        break;
    }
    word = word * size_[int(f)] + std::uint64_t(v);
  }
  return word;
}

const char* to_string(MappingPolicy p) {
  switch (p) {
    case MappingPolicy::Romanet:
      return "romanet";
    case MappingPolicy::BankContiguous:
      return "bank-contiguous";
  }
  return "?";
}

TileAllocator::TileAllocator(const DramOrganization& org, MappingPolicy policy)
    : org_(org), policy_(policy), romanet_map_(org), banks_total_(org.banks * org.ranks * org.channels) {}

void TileAllocator::reset() {
  rows_used_ = 0;
  regions_.clear();
}

int TileAllocator::add_region(std::uint64_t words, std::uint64_t tiles, std::uint64_t max_tile_words) {
  const std::uint64_t bl = std::uint64_t(org_.burst_length);
  const std::uint64_t cols = std::uint64_t(org_.columns);
  Region r;
  std::uint64_t rows = 0, rows_total = 0;
  if (policy_ == MappingPolicy::Romanet) {
    // Every tile is rounded up to a burst.
    const std::uint64_t need = words + tiles * (bl - 1);
    const std::uint64_t stripe = cols * std::uint64_t(org_.banks);  // one row in every bank of a rank
    rows = (need + stripe - 1) / stripe;
    rows_total = std::uint64_t(org_.rows) * std::uint64_t(org_.ranks) * std::uint64_t(org_.channels);
    r.next = rows_used_ * stripe;
    r.end = (rows_used_ + rows) * stripe;
  } else {
    // Tiles go to the banks in turn: a bank receives at most ceil(tiles / banks) tiles.
    const std::uint64_t per_bank = (tiles + std::uint64_t(banks_total_) - 1) / std::uint64_t(banks_total_);
    const std::uint64_t need = per_bank * round_up(max_tile_words, bl);
    rows = (need + cols - 1) / cols;
    rows_total = std::uint64_t(org_.rows);  // rows of one bank (bank indices cover ranks and channels)
    r.bank_next.assign(std::size_t(banks_total_), rows_used_ * cols);
    r.end = (rows_used_ + rows) * cols;
  }
  if (rows_used_ + rows > rows_total)
    throw std::length_error(fmt::format("the DRAM ({} MB) cannot hold the tensors of this layer with the {} mapping",
                                        org_.capacity_bytes() >> 20, to_string(policy_)));
  rows_used_ += rows;
  regions_.push_back(std::move(r));
  return int(regions_.size()) - 1;
}

Placement TileAllocator::allocate(int region, std::uint64_t words) {
  Region& r = regions_.at(std::size_t(region));
  const std::uint64_t bl = std::uint64_t(org_.burst_length);
  Placement p;
  p.words = words;
  if (policy_ == MappingPolicy::Romanet) {
    p.start = r.next;
    r.next = round_up(r.next + words, bl);
    if (r.next > r.end) throw std::length_error("DRAM region overflow (ROMANet mapping)");
  } else {
    // The bank with the turn; if its share is full, the next bank with room (a tile never splits).
    for (int tries = 0; tries < banks_total_; ++tries) {
      const int b = (r.turn + tries) % banks_total_;
      if (r.bank_next[std::size_t(b)] + words <= r.end) {
        p.bank = b;
        p.start = r.bank_next[std::size_t(b)];
        r.bank_next[std::size_t(b)] = round_up(p.start + words, bl);
        r.turn = (b + 1) % banks_total_;
        return p;
      }
    }
    throw std::length_error("DRAM region overflow (bank-contiguous mapping)");
  }
  return p;
}

DramAddress TileAllocator::address(const Placement& p, std::uint64_t k) const {
  if (policy_ == MappingPolicy::Romanet) return romanet_map_.decode_word(p.start + k);
  // Inside one bank: columns, then rows.
  const std::uint64_t w = p.start + k;
  const std::uint64_t cols = std::uint64_t(org_.columns);
  DramAddress a;
  a.column = int(w % cols);
  a.row = int(w / cols);
  // p.bank counts the banks of all ranks and channels, bank fastest.
  a.bank = p.bank % org_.banks;
  a.rank = (p.bank / org_.banks) % org_.ranks;
  a.channel = p.bank / (org_.banks * org_.ranks);
  return a;
}

}  // namespace capsgen::dram
