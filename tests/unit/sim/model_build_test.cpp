// gen/sim/model_build: the model key covers what a model is built from, and a build directory that
// held another RTL's model is never reused as it is. The builds here use a stand-in testbench tree
// (a CMake project whose "tb_accel" is a copy of the RTL it was configured with), so they run in a
// second without Verilator.
#include "sim/model_build.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace capsgen::sim {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

class ModelBuild : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("capsgen_model_build_" + std::to_string(::getpid()) + "_" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    // A stand-in tb/: the "model" tb_accel is the RTL's top.v, copied at build time.
    write(root_ / "src/tb/CMakeLists.txt",
          "cmake_minimum_required(VERSION 3.22)\nproject(stand_in NONE)\n"
          "add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/tb_accel\n"
          "  COMMAND ${CMAKE_COMMAND} -E copy ${CAPSGEN_RTL_DIR}/top.v ${CMAKE_BINARY_DIR}/tb_accel\n"
          "  DEPENDS ${CAPSGEN_RTL_DIR}/top.v)\n"
          "add_custom_target(model ALL DEPENDS ${CMAKE_BINARY_DIR}/tb_accel)\n");
    spec_.testbench = "tb_accel";
    spec_.source_dir = root_ / "src";
    spec_.rtl = {{"files.f", "top.v\n"}, {"top.v", "module a; endmodule\n"}};
  }
  void TearDown() override { fs::remove_all(root_); }

  fs::path root_;
  ModelSpec spec_;
};

TEST_F(ModelBuild, KeyChangesWithEveryInput) {
  const std::string tools = "verilator 1\n";
  const std::string key = model_key(spec_, tools);
  EXPECT_EQ(key.size(), 32u);
  EXPECT_EQ(model_key(spec_, tools), key);  // deterministic

  ModelSpec rtl = spec_;
  rtl.rtl[1].second = "module b; endmodule\n";
  EXPECT_NE(model_key(rtl, tools), key);
  ModelSpec renamed = spec_;
  renamed.rtl[1].first = "other.v";
  EXPECT_NE(model_key(renamed, tools), key);
  ModelSpec traced = spec_;
  traced.trace = true;
  EXPECT_NE(model_key(traced, tools), key);
  ModelSpec covered = spec_;
  covered.coverage = true;
  EXPECT_NE(model_key(covered, tools), key);
  ModelSpec chip = spec_;
  chip.testbench = "tb_chip";
  EXPECT_NE(model_key(chip, tools), key);
  EXPECT_NE(model_key(spec_, "verilator 2\n"), key);

  write(root_ / "src/tb/extra.hpp", "// a testbench source\n");
  const std::string with_source = model_key(spec_, tools);
  EXPECT_NE(with_source, key);
  write(root_ / "src/tb/extra.hpp", "// edited\n");
  EXPECT_NE(model_key(spec_, tools), with_source);
}

TEST_F(ModelBuild, RebuildsForOtherRtlAndReusesForTheSame) {
  const fs::path dir = root_ / "work/build-accel";
  const BuiltModel first = build_model(spec_, dir, 1, root_ / "work");
  EXPECT_FALSE(first.reused);
  EXPECT_EQ(read(first.dir / "tb_accel"), "module a; endmodule\n");

  const BuiltModel again = build_model(spec_, dir, 1, root_ / "work");
  EXPECT_TRUE(again.reused);
  EXPECT_EQ(again.key, first.key);

  // Another RTL in the same directory (capsgen sim --rtl OTHER --work W): the model follows it.
  ModelSpec other = spec_;
  other.rtl[1].second = "module mutant; endmodule\n";
  const BuiltModel second = build_model(other, dir, 1, root_ / "work");
  EXPECT_FALSE(second.reused);
  EXPECT_NE(second.key, first.key);
  EXPECT_EQ(read(second.dir / "tb_accel"), "module mutant; endmodule\n");

  // Back to the first RTL: rebuilt again, never the mutant's model.
  const BuiltModel third = build_model(spec_, dir, 1, root_ / "work");
  EXPECT_FALSE(third.reused);
  EXPECT_EQ(read(third.dir / "tb_accel"), "module a; endmodule\n");
}

TEST_F(ModelBuild, CacheDirectoriesAreKeyed) {
  const fs::path cache = root_ / "cache";
  ModelSpec other = spec_;
  other.rtl[1].second = "module b; endmodule\n";
  const fs::path a = cached_model_dir(cache, spec_, model_key(spec_, "t"));
  const fs::path b = cached_model_dir(cache, other, model_key(other, "t"));
  EXPECT_NE(a, b);
  EXPECT_EQ(a.parent_path(), cache);
  EXPECT_EQ(a.filename().string().rfind("tb_accel-", 0), 0u);
}

TEST_F(ModelBuild, FailedBuildNamesItsLogAndLeavesNoKey) {
  spec_.rtl = {{"files.f", "top.v\n"}};  // no top.v: the copy fails
  const fs::path dir = root_ / "work/build-accel";
  try {
    build_model(spec_, dir, 1, root_ / "work");
    FAIL() << "a failed build must throw";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("build.log"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir / "capsgen-model.key"));
}

}  // namespace
}  // namespace capsgen::sim
