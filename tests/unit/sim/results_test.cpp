// gen/sim/results: the readers of the testbenches' results documents take every figure of a good
// document (tests/data/sim_results, which the `schema` tests check against schemas/), and refuse a
// bad one with an error that names the file and the key.
#include "sim/results.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/input_error.hpp"

namespace capsgen::sim {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

const fs::path kData = fs::path(CAPSGEN_TEST_DATA) / "sim_results";

Json fixture(const char* name) {
  std::ifstream in(kData / name);
  return Json::parse(in);
}

class Results : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("capsgen_results_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write(const Json& j) {
    const fs::path p = dir_ / "results.json";
    std::ofstream(p) << j.dump(2);
    return p;
  }

  // The InputError that reading `j` with `read` throws (fails the test when none is thrown).
  template <class Read>
  InputError error_of(const Json& j, Read read) {
    const fs::path p = write(j);
    try {
      read(p);
    } catch (const InputError& e) {
      EXPECT_EQ(e.file(), p.string());
      return e;
    }
    ADD_FAILURE() << "no error for " << j.dump();
    return InputError("", 0, 0, "", "");
  }

  fs::path dir_;
};

TEST_F(Results, ReadsEveryFigureOfAnAccelDocument) {
  const AccelResults r = read_accel_results(kData / "accel-results.json");
  EXPECT_EQ(r.testbench, "accel");
  EXPECT_FALSE(r.verdict.pass);
  EXPECT_EQ(r.verdict.checks, 120);
  EXPECT_EQ(r.verdict.errors, 1);
  ASSERT_EQ(r.verdict.problems.size(), 1u);
  EXPECT_NE(r.verdict.problems[0].find("conv1 (i00)"), std::string::npos);
  EXPECT_EQ(r.verdict.simulated_cycles, 1400);
  EXPECT_FALSE(r.verdict.trace_reset_released_ps.has_value());
  ASSERT_EQ(r.descriptors.size(), 2u);
  const AccelDescriptor& d = r.descriptors[0];
  EXPECT_EQ(d.id, "i00");
  EXPECT_EQ(d.label, "conv1 (i00)");
  EXPECT_EQ(d.cycles, 300);
  EXPECT_EQ(d.vectors, 64);
  EXPECT_EQ(d.writes, 32);
  EXPECT_EQ(d.stall_data, 4);
  EXPECT_EQ(d.stall_tile, 2);
  EXPECT_EQ(d.model, 300);
  EXPECT_EQ(d.model_stall_data, 4);
  EXPECT_EQ(d.reads_data, 256);
  EXPECT_EQ(d.reads_weight, 16);
  EXPECT_EQ(d.reads_bias, 8);
  EXPECT_EQ(d.start, 10);
  EXPECT_FALSE(d.ovec);
  EXPECT_TRUE(r.descriptors[1].ovec);
  EXPECT_EQ(r.descriptors[1].start, 320);
  EXPECT_TRUE(r.skipped.empty());
  EXPECT_EQ(r.program.cycles, 1380);
  EXPECT_EQ(r.program.model_cycles, 1375);
  EXPECT_EQ(r.program.ops, 2);
  EXPECT_EQ(r.program.fetch_wait, 40);
  EXPECT_EQ(r.program.words_per_descriptor, 8);
  EXPECT_EQ(r.program.fetch, "latency1");
  EXPECT_EQ(r.prediction.rtl, 3);
  EXPECT_EQ(r.prediction.golden, 3);
  EXPECT_EQ(r.prediction.norms.size(), 10u);
  // The bins in the document's order, the n/a ones included.
  ASSERT_EQ(r.coverage.bins.size(), 4u);
  EXPECT_EQ(r.coverage.bins[0], (std::pair<std::string, long long>("op.gemm", 1)));
  EXPECT_EQ(r.coverage.bins[1].first, "op.activate.norm");
  EXPECT_EQ(r.coverage.na, (std::vector<std::string>{"pmu.sector_sleep", "pmu.sector_wake"}));
}

TEST_F(Results, ReadsEveryFigureOfAChipDocument) {
  const ChipResults r = read_chip_results(kData / "chip-results.json");
  EXPECT_TRUE(r.verdict.pass);
  EXPECT_TRUE(r.verdict.problems.empty());
  EXPECT_EQ(r.verdict.simulated_cycles, 9000);
  EXPECT_EQ(r.verdict.trace_reset_released_ps, 12000);
  EXPECT_EQ(r.program.cycles, 8800);
  EXPECT_EQ(r.program.engine_cycles, 4000);
  EXPECT_EQ(r.program.stream_model_cycles, 8500);
  EXPECT_EQ(r.program.frames, 40);
  EXPECT_EQ(r.program.words, 200);
  const ChipSequencer& s = r.sequencer;
  EXPECT_EQ(s.fetch + s.engine + s.dma + s.pmu + s.eng_busy + s.wait_dma + s.wait_engine + s.dma_busy + s.pmu_wait + s.drain,
            r.program.cycles);
  EXPECT_EQ(s.wait_dma, 2000);
  EXPECT_EQ(r.engine_stalls.stall_out, 30);
  EXPECT_EQ(r.engine_stalls.wr_wait, 40);
  EXPECT_EQ(r.checked_operations, 3);
  EXPECT_EQ(r.checked_elements, 120);
  EXPECT_EQ(r.prediction.rtl, 7);
  ASSERT_EQ(r.instructions.size(), 2u);
  EXPECT_EQ(r.instructions[1].name, "classcaps/norm");
  EXPECT_EQ(r.instructions[0].parts, 2);
  EXPECT_EQ(r.instructions[0].done, 4100);
  EXPECT_EQ(r.dram.row_hits, 800);
  EXPECT_EQ(r.dram.energy_pj, 123456);
  EXPECT_EQ(r.dram.pj_per_byte_x100, 3086);
  EXPECT_EQ(r.dram.peak_gbps_x1000, 1600);
  ASSERT_EQ(r.memories.size(), 3u);
  EXPECT_EQ(r.memories[2].name, "acc");
  EXPECT_EQ(r.memories[2].dma_rd, 100);
  EXPECT_EQ(r.memories[0].dma_wait, 3);
  EXPECT_EQ(r.access_checks, 60);
  EXPECT_EQ(r.access_parts, 3);
  ASSERT_EQ(r.sectors.size(), 2u);
  EXPECT_EQ(r.sectors[1].asleep_cycles, 8000);
  ASSERT_EQ(r.pmus.size(), 1u);
  EXPECT_EQ(r.pmus[0].model_all, 17600);
  EXPECT_EQ(r.coverage.bins.size(), 4u);
  EXPECT_TRUE(r.coverage.na.empty());
}

TEST_F(Results, MissingKeyIsNamedWithItsPath) {
  Json j = fixture("chip-results.json");
  j["program"].erase("cycles");
  EXPECT_EQ(error_of(j, read_chip_results).field(), "program.cycles");
  j = fixture("accel-results.json");
  j["descriptors"][1].erase("label");
  EXPECT_EQ(error_of(j, read_accel_results).field(), "descriptors[1].label");
  j = fixture("accel-results.json");
  j.erase("functional_coverage_na");
  EXPECT_EQ(error_of(j, read_accel_results).field(), "functional_coverage_na");
}

TEST_F(Results, WrongTypeIsNamedWithItsPath) {
  Json j = fixture("chip-results.json");
  j["memories"][0]["eng_rd"] = "500";
  const InputError e = error_of(j, read_chip_results);
  EXPECT_EQ(e.field(), "memories[0].eng_rd");
  EXPECT_NE(std::string(e.what()).find("integer"), std::string::npos);
  j = fixture("accel-results.json");
  j["pass"] = 1;
  EXPECT_EQ(error_of(j, read_accel_results).field(), "pass");
}

TEST_F(Results, WrongSchemaOrVersionIsRefused) {
  Json j = fixture("accel-results.json");
  j["schema"] = "capsgen.accel-results/2";
  InputError e = error_of(j, read_accel_results);
  EXPECT_EQ(e.field(), "schema");
  EXPECT_NE(std::string(e.what()).find("capsgen.accel-results/2"), std::string::npos);
  // A chip document is not an accelerator one, and a document without a schema is neither.
  EXPECT_EQ(error_of(fixture("chip-results.json"), read_accel_results).field(), "schema");
  j.erase("schema");
  EXPECT_EQ(error_of(j, read_accel_results).field(), "schema");
}

TEST_F(Results, UnreadableFilesAreNamed) {
  const fs::path p = dir_ / "results.json";
  std::ofstream(p) << "{\"schema\": ";
  try {
    read_chip_results(p);
    ADD_FAILURE() << "no error for a truncated document";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), p.string());
  }
  EXPECT_THROW(read_chip_results(dir_ / "absent.json"), InputError);
}

// A testbench that died without writing its results: a failed run with a problem line, not an error.
TEST_F(Results, RunWithoutResultsFailsWithAProblemLine) {
  const ChipResults r = chip_results_of_run(dir_ / "absent.json", 139);
  ASSERT_EQ(r.verdict.problems.size(), 1u);
  EXPECT_NE(r.verdict.problems[0].find("139"), std::string::npos);
  EXPECT_FALSE(run_passed(r.verdict, 139, r.program.cycles));
  EXPECT_EQ(accel_results_of_run(kData / "accel-results.json", 1).program.cycles, 1380);
}

TEST_F(Results, RunPassesOnlyWithEveryCondition) {
  Verdict v;
  v.pass = true;
  EXPECT_TRUE(run_passed(v, 0, 100));
  EXPECT_FALSE(run_passed(v, 1, 100));  // the testbench's exit status
  EXPECT_FALSE(run_passed(v, 0, 0));    // no program cycles measured
  v.problems.push_back("FAIL block=chip x cycle=1");
  EXPECT_FALSE(run_passed(v, 0, 100));
  v.problems.clear();
  v.pass = false;
  EXPECT_FALSE(run_passed(v, 0, 100));
}

}  // namespace
}  // namespace capsgen::sim
