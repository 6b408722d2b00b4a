// tb_engine: the compute engine's testbench alone (tb/engine_tb.cpp), the model `capsgen sim` builds
// (tb/CMakeLists.txt, CAPSGEN_TB_ENGINE_ONLY): one Verilated model instead of all blocks'.
//   tb_engine --rtl DIR --program DIR [--trace file.fst]     a compiled network, chained
//   tb_engine --rtl DIR [--seed N] [--scale X]               the engine's block test
#include <cstdio>
#include <exception>

int engine_tb_main(int argc, char** argv);

int main(int argc, char** argv) {
  try {
    return engine_tb_main(argc, argv);
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "FAIL tb engine: %s\n", ex.what());
    return 1;
  }
}
