// tb_blocks: all block testbenches in one executable (the Verilator runtime is compiled once).
//   tb_blocks pe|accumulator|array|activation|scratchpad|dma|pmu|memsys|gather|staging|engine --rtl DIR [--seed N] [--trace file.fst] [--scale X] ...
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

int main(int argc, char** argv) {
  struct Entry {
    const char* name;
    int (*run)(int, char**);
  };
  const Entry tbs[] = {{"pe", pe_tb_main},
                       {"accumulator", accumulator_tb_main},
                       {"array", array_tb_main},
                       {"activation", activation_tb_main},
                       {"scratchpad", scratchpad_tb_main},
                       {"dma", dma_tb_main},
                       {"pmu", pmu_tb_main},
                       {"memsys", memsys_tb_main},
                       {"gather", gather_tb_main},
                       {"staging", staging_tb_main},
                       {"engine", engine_tb_main}};
  if (argc >= 2) {
    for (const Entry& e : tbs) {
      if (std::strcmp(argv[1], e.name) != 0) continue;
      try {
        return e.run(argc - 1, argv + 1);
      } catch (const std::exception& ex) {
        std::fprintf(stderr, "FAIL tb %s: %s\n", e.name, ex.what());
        return 1;
      }
    }
  }
  std::fprintf(stderr, "usage: %s pe|accumulator|array|activation|scratchpad|dma|pmu|memsys|gather|staging|engine --rtl DIR [--seed N] [--trace file.fst] [--scale X]\n", argv[0]);
  return 2;
}
