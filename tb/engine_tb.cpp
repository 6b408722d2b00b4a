// The compute engine's block test and its host-fed program mode (tb/engine_tb.hpp) on capsgen_engine.
#include <cstdio>
#include <memory>
#include <string>

#include "Vengine.h"
#include "engine_tb.hpp"

int engine_tb_main(int argc, char** argv) {
  const tb::Args args = tb::Args::parse(argc, argv, "[--program DIR] [--results FILE]");
  using Tb = engine_tb::EngineTb<Vengine>;
  std::unique_ptr<Tb> t;
  try {
    t = std::make_unique<Tb>(args);
    const int rc = t->run();
    tb::write_results(args.results, t->results(), "");
    return rc;
  } catch (const std::exception& ex) {  // the caller prints it and fails
    try {
      tb::write_results(args.results, t ? t->results() : Tb::empty_results(), std::string("FAIL tb engine: ") + ex.what());
    } catch (const std::exception& wex) {
      std::fprintf(stderr, "FAIL tb engine: %s\n", wex.what());
    }
    throw;
  }
}
