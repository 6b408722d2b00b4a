// tb_accel: the accelerator top level (capsgen_accel: program sequencer + compute engine) running a
// compiled network from its packed program (tb/engine_tb.hpp, run_accel_program); what `capsgen sim`
// builds and runs.
//   tb_accel --rtl DIR --program DIR [--mode fetch-random] [--seed N] [--trace file.fst]
//            [--coverage-out file.dat] [--results file.json]
// --coverage-out: the model's Verilator coverage counters (line, toggle) written at the end, in
// verilator_coverage's format; needs a model built with -DCAPSGEN_TB_COVERAGE=ON.
// --results: the run's figures, functional coverage, verdict and problem lines as one JSON document
// (schemas/accel-results.schema.json), written at the end, also of a failing run.
#include <cstdio>
#include <exception>
#include <memory>
#include <string>

#include "Vaccel.h"
#include "common/coverage_out.hpp"
#include "engine_tb.hpp"

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // stat lines and mismatch reports (stderr) stay in order
  using Tb = engine_tb::EngineTb<Vaccel>;
  std::string results_path;
  std::unique_ptr<Tb> t;
  try {
    tb::CoverageOut coverage(argc, argv);
    if (!coverage.usable("tb_accel")) return 2;
    const tb::Args args = tb::Args::parse(coverage.argc(), coverage.argv(),
                                          "--program DIR [--mode fetch-random] [--coverage-out FILE] [--results FILE]");
    if (args.program.empty()) {
      std::fprintf(stderr, "tb_accel: --program DIR (capsgen compile --dump-engine DIR) is required\n");
      return 2;
    }
    results_path = args.results;
    t = std::make_unique<Tb>(args);
    const int rc = t->run();
    coverage.write(t->context());
    tb::write_results(results_path, t->results(), "");
    return rc;
  } catch (const std::exception& ex) {
    const std::string line = std::string("FAIL tb accel: ") + ex.what();
    std::fprintf(stderr, "%s\n", line.c_str());
    try {
      tb::write_results(results_path, t ? t->results() : Tb::empty_results(), line);
    } catch (const std::exception& wex) {
      std::fprintf(stderr, "FAIL tb accel: %s\n", wex.what());
    }
    return 1;
  }
}
