// Network description YAML (models/*.yaml): parse_network, then the checks golden/compile/sim apply.
#include "fuzz_common.hpp"
#include "model/network_limits.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return capsgen::fuzz::run(data, size, [](const std::string& s) {
    const capsgen::Network n = capsgen::parse_network(s, "fuzz.yaml");
    capsgen::check_runnable_network(n, "the golden model");
  });
}
