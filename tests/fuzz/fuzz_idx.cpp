// IDX arrays (the MNIST / Fashion-MNIST format, after gunzip): parse_idx, then the checks
// load_idx_dataset applies to an images file paired with itself as labels.
#include "data/dataset.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return capsgen::fuzz::run(data, size, [](const std::string& s) {
    const std::vector<std::uint8_t> raw(s.begin(), s.end());
    (void)capsgen::parse_idx(raw, "fuzz-idx3-ubyte");
  });
}
