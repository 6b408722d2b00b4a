#include "isa/program.hpp"

namespace capsgen::isa {

const Region* Program::region(const std::string& name) const {
  for (const auto& r : regions)
    if (r.name == name) return &r;
  return nullptr;
}

const std::string& instr_name(const Instr& in) {
  return std::visit([](const auto& x) -> const std::string& { return x.name; }, in);
}

std::string Program::op_name(const Instr& in) {
  const std::string& n = instr_name(in);
  return n.substr(0, n.find('/'));
}

}  // namespace capsgen::isa
