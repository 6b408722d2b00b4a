// CACTI / CACTI-P text reports (capsgen dse memory --cacti).
#include "fuzz_common.hpp"
#include "memory/cacti.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return capsgen::fuzz::run(data, size, [](const std::string& s) { (void)capsgen::memory::parse_cacti(s, "fuzz.out"); });
}
