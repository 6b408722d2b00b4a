// tb_blocks: all block testbenches in one executable (the Verilator runtime is compiled once); the
// ones built are those of CAPSGEN_TB_BLOCKS (tb/CMakeLists.txt), the others answer "not built".
//   tb_blocks pe|accumulator|array|activation|scratchpad|dma|pmu|memsys|gather|staging|engine|frame_seq --rtl DIR [--seed N] [--trace file.fst] [--scale X] ...
#include <cstdio>
#include <cstring>
#include <exception>

int pe_tb_main(int argc, char** argv);
int accumulator_tb_main(int argc, char** argv);
int array_tb_main(int argc, char** argv);
int activation_tb_main(int argc, char** argv);
int scratchpad_tb_main(int argc, char** argv);
int dma_tb_main(int argc, char** argv);
int pmu_tb_main(int argc, char** argv);
int memsys_tb_main(int argc, char** argv);
int gather_tb_main(int argc, char** argv);
int staging_tb_main(int argc, char** argv);
int engine_tb_main(int argc, char** argv);
int frame_seq_tb_main(int argc, char** argv);

int main(int argc, char** argv) {
  struct Entry {
    const char* name;
    int (*run)(int, char**);
  };
  const Entry tbs[] = {
#ifdef CAPSGEN_TB_BLOCK_PE
      {"pe", pe_tb_main},
#else
      {"pe", nullptr},
#endif
#ifdef CAPSGEN_TB_BLOCK_ACCUMULATOR
      {"accumulator", accumulator_tb_main},
#else
      {"accumulator", nullptr},
#endif
#ifdef CAPSGEN_TB_BLOCK_ARRAY
      {"array", array_tb_main},
#else
      {"array", nullptr},
#endif
#ifdef CAPSGEN_TB_BLOCK_ACTIVATION
      {"activation", activation_tb_main},
#else
      {"activation", nullptr},
#endif
#ifdef CAPSGEN_TB_BLOCK_SCRATCHPAD
      {"scratchpad", scratchpad_tb_main},
#else
      {"scratchpad", nullptr},
#endif
#ifdef CAPSGEN_TB_BLOCK_DMA
      {"dma", dma_tb_main},
#else
      {"dma", nullptr},
#endif
#ifdef CAPSGEN_TB_BLOCK_PMU
      {"pmu", pmu_tb_main},
#else
      {"pmu", nullptr},
#endif
#ifdef CAPSGEN_TB_BLOCK_MEMSYS
      {"memsys", memsys_tb_main},
#else
      {"memsys", nullptr},
#endif
#ifdef CAPSGEN_TB_BLOCK_GATHER
      {"gather", gather_tb_main},
#else
      {"gather", nullptr},
#endif
#ifdef CAPSGEN_TB_BLOCK_STAGING
      {"staging", staging_tb_main},
#else
      {"staging", nullptr},
#endif
#ifdef CAPSGEN_TB_BLOCK_ENGINE
      {"engine", engine_tb_main},
#else
      {"engine", nullptr},
#endif
#ifdef CAPSGEN_TB_BLOCK_FRAME_SEQ
      {"frame_seq", frame_seq_tb_main},
#else
      {"frame_seq", nullptr},
#endif
  };
  if (argc >= 2) {
    for (const Entry& e : tbs) {
      if (std::strcmp(argv[1], e.name) != 0) continue;
      if (!e.run) {
        std::fprintf(stderr, "FAIL tb %s: not built into this tb_blocks (CAPSGEN_TB_BLOCKS)\n", e.name);
        return 2;
      }
      try {
        return e.run(argc - 1, argv + 1);
      } catch (const std::exception& ex) {
        std::fprintf(stderr, "FAIL tb %s: %s\n", e.name, ex.what());
        return 1;
      }
    }
  }
  std::fprintf(stderr, "usage: %s pe|accumulator|array|activation|scratchpad|dma|pmu|memsys|gather|staging|engine|frame_seq --rtl DIR [--seed N] [--trace file.fst] [--scale X]\n", argv[0]);
  return 2;
}
