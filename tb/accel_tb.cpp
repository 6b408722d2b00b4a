// tb_accel: the accelerator top level (capsgen_accel: program sequencer + compute engine) running a
// compiled network from its packed program (tb/engine_tb.hpp, run_accel_program); what `capsgen sim`
// builds and runs.
//   tb_accel --rtl DIR --program DIR [--mode fetch-random] [--seed N] [--trace file.fst]
//            [--coverage-out file.dat]
// --coverage-out: the model's Verilator coverage counters (line, toggle) written at the end, in
// verilator_coverage's format; needs a model built with -DCAPSGEN_TB_COVERAGE=ON.
#include <cstdio>
#include <exception>

#include "Vaccel.h"
#include "common/coverage_out.hpp"
#include "engine_tb.hpp"

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // stat lines and mismatch reports (stderr) stay in order
  try {
    tb::CoverageOut coverage(argc, argv);
    if (!coverage.usable("tb_accel")) return 2;
    const tb::Args args = tb::Args::parse(coverage.argc(), coverage.argv(), "--program DIR [--mode fetch-random] [--coverage-out FILE]");
    if (args.program.empty()) {
      std::fprintf(stderr, "tb_accel: --program DIR (capsgen compile --dump-engine DIR) is required\n");
      return 2;
    }
    engine_tb::EngineTb<Vaccel> t(args);
    const int rc = t.run();
    coverage.write(t.context());
    return rc;
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "FAIL tb accel: %s\n", ex.what());
    return 1;
  }
}
