// Preset YAML (configs/*.yaml): parse_accel_config.
#include "config/accel_config.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return capsgen::fuzz::run(data, size, [](const std::string& s) { (void)capsgen::parse_accel_config(s, "fuzz.yaml"); });
}
