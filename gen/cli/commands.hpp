// The capsgen subcommands. Each lives in its own cmd_<name>.cpp and is listed in main.cpp.
#pragma once

#include <string>
#include <vector>

namespace capsgen::cli {

using CommandFn = int (*)(const std::vector<std::string>& argv);

struct Command {
  const char* name;
  const char* summary;
  CommandFn run;
};

int cmd_validate(const std::vector<std::string>& argv);
int cmd_golden(const std::vector<std::string>& argv);
int cmd_generate(const std::vector<std::string>& argv);
int cmd_synth(const std::vector<std::string>& argv);
int cmd_compile(const std::vector<std::string>& argv);
int cmd_dse(const std::vector<std::string>& argv);
int dse_memory(const std::vector<std::string>& argv);  // capsgen dse memory (cmd_dse_memory.cpp)
int dse_routing(const std::vector<std::string>& argv);  // capsgen dse routing (cmd_dse_routing.cpp)
int dse_nas(const std::vector<std::string>& argv);      // capsgen dse nas (cmd_dse_nas.cpp)
int cmd_accuracy(const std::vector<std::string>& argv);
int cmd_sim(const std::vector<std::string>& argv);
int cmd_regress(const std::vector<std::string>& argv);  // capsgen regress (cmd_regress.cpp, regress_*.cpp)

}  // namespace capsgen::cli
