// The DESCNet exploration's names and CSV format (gen/memory/dse.hpp): what `capsgen dse memory` writes
// and `capsgen generate --dse` reads, apart from the exploration itself.
#include <fmt/format.h>

#include "memory/dse.hpp"

namespace capsgen::memory {

const char* mem_name(int m) {
  static const char* n[] = {"shared", "data", "weight", "acc"};
  return n[m];
}
const char* option_name(int o) {
  static const char* n[] = {"SEP", "SEP-PG", "SMP", "SMP-PG", "HY", "HY-PG"};
  return n[o];
}

std::string csv_header() {
  return "id,option,shared_kib,shared_sectors,data_kib,data_sectors,weight_kib,weight_sectors,acc_kib,acc_sectors,"
         "area_mm2,dynamic_mj,static_mj,wakeup_nj,energy_mj,offchip_mj\n";
}

std::string csv_row(const ConfigPoint& p) {
  std::string s = fmt::format("{},{}", p.id, option_name(p.option));
  for (int m = 0; m < kMems; ++m) s += fmt::format(",{},{}", p.bytes[m] / 1024, p.bytes[m] ? p.sectors[m] : 0);
  s += fmt::format(",{:.6f},{:.6f},{:.6f},{:.4f},{:.6f},{:.6f}\n", p.area_mm2, p.dynamic_mj, p.static_mj, p.wakeup_mj * 1e6,
                   p.energy_mj(), p.offchip_mj);
  return s;
}

}  // namespace capsgen::memory
