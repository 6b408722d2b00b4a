// tb_accel: the accelerator top level (capsgen_accel: program sequencer + compute engine) running a
// compiled network from its packed program (tb/engine_tb.hpp, run_accel_program); what `capsgen sim`
// builds and runs.
//   tb_accel --rtl DIR --program DIR [--mode fetch-random] [--seed N] [--trace file.fst]
//            [--coverage-out file.dat]
// --coverage-out: the model's Verilator coverage counters (line, toggle) written at the end, in
// verilator_coverage's format; needs a model built with -DCAPSGEN_TB_COVERAGE=ON.
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "Vaccel.h"
#include "engine_tb.hpp"
#if VM_COVERAGE
#include "verilated_cov.h"
#endif

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // stat lines and mismatch reports (stderr) stay in order
  try {
    // --coverage-out FILE is this testbench's own option (tb::Args does not know it).
    std::string coverage_out;
    std::vector<char*> rest{argv[0]};
    for (int i = 1; i < argc; ++i) {
      if (std::string(argv[i]) == "--coverage-out" && i + 1 < argc) {
        coverage_out = argv[++i];
      } else {
        rest.push_back(argv[i]);
      }
    }
#if !VM_COVERAGE
    if (!coverage_out.empty()) {
      std::fprintf(stderr, "tb_accel: --coverage-out: this model was built without coverage (configure tb/ with "
                           "-DCAPSGEN_TB_COVERAGE=ON)\n");
      return 2;
    }
#endif
    const tb::Args args =
        tb::Args::parse(static_cast<int>(rest.size()), rest.data(), "--program DIR [--mode fetch-random] [--coverage-out FILE]");
    if (args.program.empty()) {
      std::fprintf(stderr, "tb_accel: --program DIR (capsgen compile --dump-engine DIR) is required\n");
      return 2;
    }
    engine_tb::EngineTb<Vaccel> t(args);
    const int rc = t.run();
#if VM_COVERAGE
    if (!coverage_out.empty()) {
      t.context()->coveragep()->write(coverage_out.c_str());
      std::printf("coverage written to %s\n", coverage_out.c_str());
    }
#endif
    return rc;
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "FAIL tb accel: %s\n", ex.what());
    return 1;
  }
}
