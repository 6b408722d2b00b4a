// capsgen dse memory's CSV (configs.csv.gz after gunzip, pareto.csv) as `capsgen generate --dse`
// reads it: the rows with ids 0 and 1.
#include "cli/dse_pick.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return capsgen::fuzz::run(data, size, [](const std::string& s) {
    for (long long id : {0LL, 1LL}) (void)capsgen::cli::parse_dse_pick(s, "fuzz.csv", id);
  });
}
