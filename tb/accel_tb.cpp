// tb_accel: the accelerator top level (capsgen_accel: program sequencer + compute engine) running a
// compiled network from its packed program (tb/engine_tb.hpp, run_accel_program); what `capsgen sim`
// builds and runs.
//   tb_accel --rtl DIR --program DIR [--mode fetch-random] [--seed N] [--trace file.fst]
#include <cstdio>
#include <exception>

#include "Vaccel.h"
#include "engine_tb.hpp"

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // stat lines and mismatch reports (stderr) stay in order
  try {
    const tb::Args args = tb::Args::parse(argc, argv, "--program DIR [--mode fetch-random]");
    if (args.program.empty()) {
      std::fprintf(stderr, "tb_accel: --program DIR (capsgen compile --dump-engine DIR) is required\n");
      return 2;
    }
    engine_tb::EngineTb<Vaccel> t(args);
    return t.run();
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "FAIL tb accel: %s\n", ex.what());
    return 1;
  }
}
