// Regression lists (tests/regress/*.yaml): parse_regress_list, then the job expansion (paths are
// relative to the repository, so the lists' presets and networks exist).
#include "regress/list.hpp"
#include "fuzz_common.hpp"

namespace {
struct Names : capsgen::cli::regress::Names {
  std::string config_name(const std::string& path) const override { return path; }
  std::string network_name(const std::string& path) const override { return path; }
  std::string random_config_path(long long seed) const override { return "random-" + std::to_string(seed) + ".yaml"; }
};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return capsgen::fuzz::run(data, size, [](const std::string& s) {
    const auto list = capsgen::cli::regress::parse_regress_list(s, "fuzz.yaml", CAPSGEN_REPO_ROOT);
    (void)capsgen::cli::regress::expand_jobs(list, Names{});
  });
}
