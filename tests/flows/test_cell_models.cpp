// The gate-level simulation models capsgen writes from the OSU018 Liberty functions, tested
// exhaustively against those functions (the expected values are computed by capsgen from the
// Liberty text, independently of the Verilog) under both simulators the project uses:
//   - Icarus Verilog (4-state: three-state outputs are checked too)
//   - Verilator --binary (2-state: three-state cells skipped; they never appear in Yosys netlists)
// and, as a third opinion, the same testbench on the Verilog models the Debian package ships
// (osu018_stdcells.v: UDP-based, Icarus only).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "synth/cell_models.hpp"
#include "synth/liberty.hpp"
#include "synth/tool.hpp"

namespace cs = capsgen::synth;
namespace fs = std::filesystem;

namespace {

const char* kLib = "/usr/share/qflow/tech/osu018/osu018_stdcells.lib";
const char* kShipped = "/usr/share/qflow/tech/osu018/osu018_stdcells.v";

struct Fixture {
  fs::path dir;
  cs::CellTestbench tb;
  Fixture() {
    dir = fs::temp_directory_path() / ("capsgen-cell-models-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const cs::Library lib = cs::load_liberty(kLib);
    cs::write_text(dir / "cells.v", cs::cell_models_verilog(lib));
    tb = cs::cell_models_testbench(lib);
    cs::write_text(dir / "tb.v", tb.verilog);
  }
  ~Fixture() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  // Runs argv, returns the log text; fails the test on a non-zero exit code.
  std::string run(const std::vector<std::string>& argv, const std::string& log_name) {
    const cs::ToolRun r = cs::run_tool(argv, dir / log_name, dir);
    std::string log = cs::read_text(dir / log_name);
    EXPECT_EQ(r.exit_code, 0) << argv[0] << ":\n" << log;
    return log;
  }
};

}  // namespace

TEST(CellModels, Osu018UnderIcarus) {
  if (!fs::exists(kLib)) GTEST_SKIP() << "qflow-tech-osu018 not installed";
  const auto iverilog = cs::find_tool("iverilog"), vvp = cs::find_tool("vvp");
  if (!iverilog || !vvp) GTEST_SKIP() << "iverilog not installed";
  Fixture f;
  f.run({*iverilog, "-g2005", "-s", "cell_models_tb", "-o", (f.dir / "tb.vvp").string(), (f.dir / "tb.v").string(),
         (f.dir / "cells.v").string()},
        "iverilog.log");
  const std::string out = f.run({*vvp, "-n", (f.dir / "tb.vvp").string()}, "vvp.log");
  EXPECT_NE(out.find("PASS cell models: 32 cells, " + std::to_string(f.tb.checks) + " checks"), std::string::npos)
      << out;
  EXPECT_EQ(out.find("MISMATCH"), std::string::npos) << out;
}

TEST(CellModels, Osu018UnderVerilator) {
  if (!fs::exists(kLib)) GTEST_SKIP() << "qflow-tech-osu018 not installed";
  const auto verilator = cs::find_tool("verilator");
  if (!verilator) GTEST_SKIP() << "verilator not installed";
  Fixture f;
  f.run({*verilator, "--binary", "--timing", "-Wno-fatal", "--top-module", "cell_models_tb", "-Mdir",
         (f.dir / "obj").string(), "-MAKEFLAGS", "OPT_FAST=-O0", (f.dir / "tb.v").string(), (f.dir / "cells.v").string()},
        "verilator.log");
  const std::string out = f.run({(f.dir / "obj" / "Vcell_models_tb").string()}, "run.log");
  EXPECT_NE(out.find("PASS cell models"), std::string::npos) << out;
  EXPECT_EQ(out.find("MISMATCH"), std::string::npos) << out;
  // Only the three-state cells are skipped under Verilator.
  EXPECT_EQ(f.tb.tristate_cells, (std::vector<std::string>{"TBUFX1", "TBUFX2"}));
}

TEST(CellModels, ShippedOsu018ModelsAgreeUnderIcarus) {
  if (!fs::exists(kLib) || !fs::exists(kShipped)) GTEST_SKIP() << "qflow-tech-osu018 not installed";
  const auto iverilog = cs::find_tool("iverilog"), vvp = cs::find_tool("vvp");
  if (!iverilog || !vvp) GTEST_SKIP() << "iverilog not installed";
  Fixture f;
  f.run({*iverilog, "-g2005", "-s", "cell_models_tb", "-o", (f.dir / "shipped.vvp").string(),
         (f.dir / "tb.v").string(), kShipped},
        "iverilog-shipped.log");
  const std::string out = f.run({*vvp, "-n", (f.dir / "shipped.vvp").string()}, "vvp-shipped.log");
  EXPECT_NE(out.find("PASS cell models"), std::string::npos) << out;
}
