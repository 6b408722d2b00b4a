// --coverage-out FILE for the whole-inference testbenches (tb_accel, tb_chip): the option tb::Args
// does not know, taken out of the command line before it is parsed, and the model's Verilator
// coverage counters (line, toggle) written there at the end, in verilator_coverage's format. The
// model must be built with coverage (-DCAPSGEN_TB_COVERAGE=ON: VM_COVERAGE).
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "verilated.h"
#if VM_COVERAGE
#include "verilated_cov.h"
#endif

namespace tb {

class CoverageOut {
 public:
  // Removes "--coverage-out FILE" from argv; rest() is what remains for tb::Args::parse.
  CoverageOut(int argc, char** argv) {
    rest_.push_back(argv[0]);
    for (int i = 1; i < argc; ++i) {
      if (std::string(argv[i]) == "--coverage-out" && i + 1 < argc) path_ = argv[++i];
      else rest_.push_back(argv[i]);
    }
  }
  int argc() const { return static_cast<int>(rest_.size()); }
  char** argv() { return rest_.data(); }
  // False (with a message naming `tb`) when a file was asked of a model built without coverage.
  bool usable(const char* tb) const {
#if !VM_COVERAGE
    if (!path_.empty()) {
      std::fprintf(stderr, "%s: --coverage-out: this model was built without coverage (configure tb/ with "
                           "-DCAPSGEN_TB_COVERAGE=ON)\n", tb);
      return false;
    }
#endif
    (void)tb;
    return true;
  }
  // Writes the counters when a file was asked for.
  void write(VerilatedContext* ctx) const {
#if VM_COVERAGE
    if (!path_.empty()) {
      ctx->coveragep()->write(path_.c_str());
      std::printf("coverage written to %s\n", path_.c_str());
    }
#else
    (void)ctx;
#endif
  }

 private:
  std::string path_;
  std::vector<char*> rest_;
};

}  // namespace tb
