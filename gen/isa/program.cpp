#include "isa/program.hpp"

namespace capsgen::isa {

const Region* Program::region(const std::string& name) const {
  for (const auto& r : regions)
    if (r.name == name) return &r;
  return nullptr;
}

std::int64_t Region::outputs() const { return shape.empty() ? 0 : std::int64_t(shape[0]); }

std::int64_t Region::reduction() const {
  std::int64_t r = 1;
  for (std::size_t i = 1; i < shape.size(); ++i) r *= std::int64_t(shape[i]);
  return r;
}

std::int64_t Region::k_chunks() const { return (reduction() + tile_rows - 1) / tile_rows; }
std::int64_t Region::n_tiles() const { return (outputs() + tile_cols - 1) / tile_cols; }

std::int64_t Region::stored_size() const {
  if (tile_rows > 0) return k_chunks() * n_tiles() * tile_rows * tile_cols;
  std::int64_t n = 1;
  for (std::size_t d : shape) n *= std::int64_t(d);
  return n;
}

std::int64_t Region::offset_of(std::int64_t flat) const {
  if (minor_transposed && shape.size() >= 2) {
    const std::int64_t E = std::int64_t(shape.back()), O = stored_size() / std::int64_t(shape.front()) / E;
    const std::int64_t i = flat / (O * E), o = flat % (O * E) / E, e = flat % E;
    return (i * E + e) * O + o;
  }
  if (tile_rows <= 0) return flat;
  const std::int64_t R = reduction(), o = flat / R, red = flat % R;
  const std::int64_t k = red / tile_rows, r = red % tile_rows, n = o / tile_cols, c = o % tile_cols;
  return ((k * n_tiles() + n) * tile_rows + r) * tile_cols + c;
}

const std::string& instr_name(const Instr& in) {
  return std::visit([](const auto& x) -> const std::string& { return x.name; }, in);
}

std::string Program::op_name(const Instr& in) {
  const std::string& n = instr_name(in);
  return n.substr(0, n.find('/'));
}

}  // namespace capsgen::isa
