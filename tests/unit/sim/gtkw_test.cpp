// write_gtkw (gen/sim/run.hpp) on a small FST made with vcd2fst: signals of the top and of its
// instances, groups, and a code signal shown by name through a GTKWave translate file.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/shell.hpp"
#include "sim/run.hpp"

namespace fs = std::filesystem;
using namespace capsgen;

namespace {

// A VCD with TOP.capsgen_chip.{clk_i, u_seq.state_q[2:0]}, converted to FST.
fs::path small_fst(const fs::path& dir) {
  fs::create_directories(dir);
  std::ofstream(dir / "t.vcd") << "$timescale 1ns $end\n"
                                  "$scope module TOP $end\n$scope module capsgen_chip $end\n"
                                  "$var wire 1 ! clk_i $end\n"
                                  "$scope module u_seq $end\n$var wire 3 \" state_q [2:0] $end\n$upscope $end\n"
                                  "$upscope $end\n$upscope $end\n$enddefinitions $end\n"
                                  "#0\n0!\nb0 \"\n#5\n1!\nb1 \"\n#10\n0!\nb100 \"\n";
  const std::string cmd = "vcd2fst " + (dir / "t.vcd").string() + " " + (dir / "t.fst").string() + " > /dev/null 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  return dir / "t.fst";
}

}  // namespace

TEST(Gtkw, CodeSignalsShowTheirNamesThroughATranslateFile) {
  const fs::path dir = fs::temp_directory_path() / ("capsgen_gtkw_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const fs::path fst = small_fst(dir), gtkw = dir / "t.gtkw";
  const sim::TraceGroups groups = {{"Frame sequencer", {"clk_i", "u_seq.state_q"}}};
  const sim::TraceCodes codes = {{"u_seq.state_q", {{0, "StIdle"}, {1, "StHeaderReq"}, {4, "StFrame"}}}};
  ASSERT_EQ(sim::write_gtkw(fst, gtkw, "capsgen_chip", groups, sim::TraceWindow{}, codes), "");
  const std::string save = slurp(gtkw);
  const fs::path table = dir / "t.u_seq_state_q.txt";
  EXPECT_NE(save.find("@28\nTOP.capsgen_chip.clk_i\n"), std::string::npos) << save;
  EXPECT_NE(save.find("@2024\n^1 " + fs::absolute(table).string() + "\nTOP.capsgen_chip.u_seq.state_q[2:0]\n"),
            std::string::npos)
      << save;
  EXPECT_EQ(slurp(table), "0 StIdle\n1 StHeaderReq\n4 StFrame\n");
  // Without codes the same signal is a plain decimal trace and no table is written.
  fs::remove(table);
  ASSERT_EQ(sim::write_gtkw(fst, gtkw, "capsgen_chip", groups, sim::TraceWindow{}), "");
  EXPECT_NE(slurp(gtkw).find("@24\nTOP.capsgen_chip.u_seq.state_q[2:0]\n"), std::string::npos);
  EXPECT_FALSE(fs::exists(table));
  fs::remove_all(dir);
}

TEST(Gtkw, TraceCodesComeFromTraceGroupsJson) {
  const fs::path dir = fs::temp_directory_path() / ("capsgen_codes_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "trace_groups.json")
      << R"({"capsgen_chip": [], "codes": {"capsgen_chip": {"u_seq.state_q": {"4": "StFrame", "0": "StIdle", "x": "Bad"}}}})";
  const sim::TraceCodes codes = sim::read_trace_codes(dir, "capsgen_chip");
  ASSERT_EQ(codes.size(), 1U);
  const std::vector<std::pair<std::uint64_t, std::string>> expected = {{0, "StIdle"}, {4, "StFrame"}};
  EXPECT_EQ(codes.at("u_seq.state_q"), expected);
  EXPECT_TRUE(sim::read_trace_codes(dir, "capsgen_accel").empty());
  fs::remove_all(dir);
}
