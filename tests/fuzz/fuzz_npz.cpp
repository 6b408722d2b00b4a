// .npz archives (zip, stored or deflate, zip64) and, for inputs that do not start as a zip, .npy.
#include "fuzz_common.hpp"
#include "weights/npy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return capsgen::fuzz::run(data, size, [](const std::string& s) {
    if (s.rfind("PK", 0) == 0) (void)capsgen::parse_npz(s, "fuzz.npz");
    else (void)capsgen::parse_npy(s, "fuzz.npy");
  });
}
