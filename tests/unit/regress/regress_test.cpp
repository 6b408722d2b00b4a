#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "regress/coverage.hpp"
#include "regress/junit.hpp"
#include "regress/list.hpp"
#include "regress/report.hpp"
#include "core/input_error.hpp"

namespace capsgen::cli::regress {
namespace {

namespace fs = std::filesystem;

// Paths relative to the repository root, which holds configs/ and models/.
const std::string kRoot = CAPSGEN_REPO_ROOT;

struct FakeNames : Names {
  std::string config_name(const std::string& path) const override { return fs::path(path).stem().string(); }
  std::string network_name(const std::string& path) const override { return fs::path(path).stem().string(); }
  std::string random_config_path(long long seed) const override { return "out/random-" + std::to_string(seed) + ".yaml"; }
};

std::string error_of(const std::string& yaml) {
  try {
    parse_regress_list(yaml, "list.yaml", kRoot);
  } catch (const InputError& e) {
    return std::string(e.what());
  }
  return "no error";
}

TEST(RegressList, ParsesAndExpandsInOrder) {
  const RegressList l = parse_regress_list(
      "name: t\ncoverage: true\ntimeout: 60\nentries:\n"
      "  - configs: [configs/tiny-2x2.yaml, configs/small-4x4.yaml]\n"
      "    random_configs: [7]\n"
      "    networks: models/capsnet-tiny.yaml\n"
      "    seeds: 1-2\n"
      "    fetch: [latency1, random]\n"
      "  - configs: [configs/small-4x4.yaml]\n"
      "    networks: [models/capsnet-small.yaml]\n"
      "    weights: models/weights/capsnet-small-mnist.npz\n"
      "    dataset: mnist\n"
      "    indices: [0, 5]\n"
      "  - configs: [configs/small-4x4.yaml]\n"
      "    networks: [models/capsnet-tiny.yaml]\n"
      "    fault: flip-pe-bit\n"
      "    expect: fail\n",
      "list.yaml", kRoot);
  EXPECT_EQ(l.name, "t");
  EXPECT_TRUE(l.coverage);
  EXPECT_EQ(l.timeout_s, 60);
  ASSERT_EQ(l.entries.size(), 3u);
  EXPECT_EQ(l.entries[0].line, 5);
  const std::vector<Job> jobs = expand_jobs(l, FakeNames{});
  // 3 configs x 1 network x 2 seeds x 2 fetch + 1 x 2 images + 1 mutant.
  ASSERT_EQ(jobs.size(), 15u);
  EXPECT_EQ(jobs[0].name, "tiny-2x2.capsnet-tiny.s1");
  EXPECT_EQ(jobs[1].name, "tiny-2x2.capsnet-tiny.s1.fetch-random");
  EXPECT_EQ(jobs[2].name, "tiny-2x2.capsnet-tiny.s2");
  EXPECT_EQ(jobs[8].name, "random-7.capsnet-tiny.s1");
  EXPECT_EQ(jobs[8].config_path, "out/random-7.yaml");
  EXPECT_EQ(jobs[8].random_seed, 7);
  EXPECT_EQ(jobs[12].name, "small-4x4.capsnet-small.s1.mnist0");
  EXPECT_EQ(jobs[13].index, 5);
  EXPECT_EQ(jobs[13].weights, "models/weights/capsnet-small-mnist.npz");
  EXPECT_EQ(jobs[14].name, "small-4x4.capsnet-tiny.s1.flip-pe-bit");
  EXPECT_TRUE(jobs[14].expect_fail);
  EXPECT_EQ(jobs[14].build_key(), "small-4x4+flip-pe-bit");
  EXPECT_EQ(jobs[0].build_key(), "tiny-2x2");
}

TEST(RegressList, DefaultNameIsTheFileStem) {
  const RegressList l = parse_regress_list("entries:\n  - configs: configs/tiny-2x2.yaml\n    networks: models/capsnet-tiny.yaml\n",
                                           "dir/nightly.yaml", kRoot);
  EXPECT_EQ(l.name, "nightly");
  EXPECT_FALSE(l.coverage);
  EXPECT_EQ(l.entries[0].seeds, std::vector<long long>{1});
}

TEST(RegressList, ErrorsNameFileLineAndField) {
  const std::string head = "entries:\n  - configs: [configs/tiny-2x2.yaml]\n    networks: [models/capsnet-tiny.yaml]\n";
  EXPECT_NE(error_of(head + "    sedes: [1]\n").find("list.yaml:4:5: entries[0]: unknown key 'sedes' (did you mean 'seeds'?"),
            std::string::npos)
      << error_of(head + "    sedes: [1]\n");
  EXPECT_NE(error_of(head + "    seeds: [1, x]\n").find("list.yaml:4:16: entries[0].seeds[1]: expected an integer"),
            std::string::npos);
  EXPECT_NE(error_of(head + "    seeds: 5-2\n").find("entries[0].seeds: expected a non-negative integer"), std::string::npos);
  EXPECT_NE(error_of(head + "    seeds: [2, 2]\n").find("entries[0].seeds[1]: 2 is listed twice"), std::string::npos);
  EXPECT_NE(error_of("entries:\n  - configs: [configs/nope.yaml]\n    networks: [models/capsnet-tiny.yaml]\n")
                .find("list.yaml:2:15: entries[0].configs[0]: no such file 'configs/nope.yaml'"),
            std::string::npos);
  EXPECT_NE(error_of("entries:\n  - networks: [models/capsnet-tiny.yaml]\n").find("needs 'configs' or 'random_configs'"),
            std::string::npos);
  EXPECT_NE(error_of(head + "    fault: flip-a-coin\n").find("entries[0].fault"), std::string::npos);
  EXPECT_NE(error_of(head + "    expect: maybe\n").find("entries[0].expect"), std::string::npos);
  EXPECT_NE(error_of(head + "    dataset: mnist\n").find("needs 'weights'"), std::string::npos);
  EXPECT_NE(error_of(head + "    indices: [1]\n").find("entries[0].indices: needs 'dataset'"), std::string::npos);
  EXPECT_NE(error_of("entries: []\n").find("expected a non-empty list"), std::string::npos);
  EXPECT_NE(error_of("name: a b\n" + head).find("list.yaml:1:7: name:"), std::string::npos);
  EXPECT_NE(error_of("bogus: 1\n" + head).find("unknown key 'bogus'"), std::string::npos);
}

TEST(RegressList, NameMustStayInsideTheOutputDirectory) {
  const std::string entries = "entries:\n  - configs: [configs/tiny-2x2.yaml]\n    networks: [models/capsnet-tiny.yaml]\n";
  for (const char* bad : {"'..'", "'.'", "a/b", "'../x'", "\"a\\\\b\""}) {
    const std::string e = error_of(std::string("name: ") + bad + "\n" + entries);
    EXPECT_NE(e.find("list.yaml:1:7: name:"), std::string::npos) << bad << ": " << e;
    EXPECT_NE(e.find("not usable as a directory name"), std::string::npos) << bad << ": " << e;
  }
  EXPECT_EQ(parse_regress_list("name: ci.nightly-2\n" + entries, "list.yaml", kRoot).name, "ci.nightly-2");
}

// seeds 0-100000 x indices 0-100000 used to run out of memory in --dry-run: counted, then refused.
TEST(RegressList, ExpansionIsCapped) {
  const RegressList l = parse_regress_list(
      "entries:\n  - configs: [configs/small-4x4.yaml]\n    networks: [models/capsnet-small.yaml]\n"
      "    weights: models/weights/capsnet-small-mnist.npz\n    dataset: mnist\n"
      "    seeds: 0-100000\n    indices: 0-100000\n",
      "list.yaml", kRoot);
  try {
    expand_jobs(l, FakeNames{});
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "list.yaml");
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(e.field(), "entries");
    EXPECT_NE(e.message().find("more than 10000 jobs"), std::string::npos) << e.what();
  }
  const RegressList small = parse_regress_list(
      "entries:\n  - configs: [configs/tiny-2x2.yaml]\n    networks: [models/capsnet-tiny.yaml]\n    seeds: 0-9\n",
      "list.yaml", kRoot);
  EXPECT_EQ(expand_jobs(small, FakeNames{}, 10).size(), 10u);
  EXPECT_THROW(expand_jobs(small, FakeNames{}, 9), InputError);
}

TEST(RegressList, DuplicateJobsAreAnError) {
  const RegressList l = parse_regress_list(
      "entries:\n  - configs: [configs/tiny-2x2.yaml]\n    networks: [models/capsnet-tiny.yaml]\n"
      "  - configs: [configs/tiny-2x2.yaml]\n    networks: [models/capsnet-tiny.yaml]\n",
      "list.yaml", kRoot);
  try {
    expand_jobs(l, FakeNames{});
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("list.yaml:4"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("tiny-2x2.capsnet-tiny.s1 is already listed by the entry at line 2"),
              std::string::npos)
        << e.what();
  }
}

TEST(RegressList, MemoryDefaultsToIdeal) {
  const RegressList l = parse_regress_list("entries:\n  - configs: configs/tiny-2x2.yaml\n    networks: models/capsnet-tiny.yaml\n",
                                           "list.yaml", kRoot);
  EXPECT_EQ(l.entries[0].memory, std::vector<std::string>{"ideal"});
  const std::vector<Job> jobs = expand_jobs(l, FakeNames{});
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].memory, "ideal");
  EXPECT_FALSE(jobs[0].dram());
  EXPECT_EQ(jobs[0].name, "tiny-2x2.capsnet-tiny.s1");
  EXPECT_EQ(jobs[0].build_key(), "tiny-2x2");
}

TEST(RegressList, MemoryDramAndBoth) {
  const RegressList l = parse_regress_list(
      "entries:\n"
      "  - configs: [configs/tiny-2x2.yaml]\n"
      "    networks: [models/capsnet-tiny.yaml]\n"
      "    seeds: [1, 2]\n"
      "    fetch: [latency1, random]\n"
      "    memory: [ideal, dram]\n"
      "  - configs: [configs/small-4x4.yaml]\n"
      "    networks: [models/capsnet-tiny.yaml]\n"
      "    memory: dram\n"
      "  - configs: [configs/tiny-2x2.yaml]\n"
      "    networks: [models/capsnet-tiny.yaml]\n"
      "    memory: dram\n"
      "    fault: ignore-wait-dma\n"
      "    expect: fail\n"
      "  - configs: [configs/small-4x4.yaml]\n"
      "    networks: [models/capsnet-tiny.yaml]\n"
      "    memory: [dram]\n"
      "    fault: flip-pe-bit\n"
      "    expect: fail\n",
      "list.yaml", kRoot);
  ASSERT_EQ(l.entries.size(), 4u);
  EXPECT_EQ(l.entries[0].memory, (std::vector<std::string>{"ideal", "dram"}));
  EXPECT_EQ(l.entries[1].memory, std::vector<std::string>{"dram"});
  const std::vector<Job> jobs = expand_jobs(l, FakeNames{});
  // 2 seeds x 2 fetch x 2 memories, then one dram job per other entry; memory varies fastest.
  ASSERT_EQ(jobs.size(), 11u);
  EXPECT_EQ(jobs[0].name, "tiny-2x2.capsnet-tiny.s1");
  EXPECT_EQ(jobs[0].build_key(), "tiny-2x2");
  EXPECT_EQ(jobs[1].name, "tiny-2x2.capsnet-tiny.s1.dram");
  EXPECT_EQ(jobs[1].memory, "dram");
  EXPECT_TRUE(jobs[1].dram());
  EXPECT_EQ(jobs[1].build_key(), "tiny-2x2+dram");
  EXPECT_EQ(jobs[3].name, "tiny-2x2.capsnet-tiny.s1.fetch-random.dram");
  EXPECT_EQ(jobs[7].name, "tiny-2x2.capsnet-tiny.s2.fetch-random.dram");
  EXPECT_EQ(jobs[8].name, "small-4x4.capsnet-tiny.s1.dram");
  EXPECT_EQ(jobs[9].name, "tiny-2x2.capsnet-tiny.s1.dram.ignore-wait-dma");
  EXPECT_EQ(jobs[9].build_key(), "tiny-2x2+dram+ignore-wait-dma");
  EXPECT_TRUE(jobs[9].expect_fail);
  EXPECT_EQ(jobs[10].name, "small-4x4.capsnet-tiny.s1.dram.flip-pe-bit");
  EXPECT_EQ(jobs[10].build_key(), "small-4x4+dram+flip-pe-bit");
}

TEST(RegressList, MemoryErrors) {
  const std::string head = "entries:\n  - configs: [configs/tiny-2x2.yaml]\n    networks: [models/capsnet-tiny.yaml]\n";
  EXPECT_NE(error_of(head + "    memory: ddr\n").find("list.yaml:4:13: entries[0].memory: expected one of ideal, dram, got 'ddr'"),
            std::string::npos)
      << error_of(head + "    memory: ddr\n");
  EXPECT_NE(error_of(head + "    memory: [ideal, hbm]\n").find("list.yaml:4:21: entries[0].memory[1]: expected one of ideal, dram"),
            std::string::npos)
      << error_of(head + "    memory: [ideal, hbm]\n");
  EXPECT_NE(error_of(head + "    memory: []\n").find("entries[0].memory: empty list"), std::string::npos);
  // The chip's mutant needs the chip: not with the ideal memory (the default) nor with both.
  EXPECT_NE(error_of(head + "    fault: ignore-wait-dma\n").find("list.yaml:4:12: entries[0].fault: 'ignore-wait-dma' "),
            std::string::npos)
      << error_of(head + "    fault: ignore-wait-dma\n");
  EXPECT_NE(error_of(head + "    memory: [ideal, dram]\n    fault: ignore-wait-dma\n").find("needs 'memory: dram'"),
            std::string::npos);
}

// Names whose "random" presets have no capsgen_chip.
struct ChiplessRandoms : FakeNames {
  std::string dram_unsupported_reason(const std::string&, long long random_seed) const override {
    return random_seed >= 0 ? "the SMP organization is not supported yet" : "";
  }
};

TEST(RegressList, DramOnAPresetWithoutChipIsAnError) {
  const RegressList l = parse_regress_list(
      "entries:\n  - configs: [configs/tiny-2x2.yaml]\n    random_configs: [5]\n    networks: [models/capsnet-tiny.yaml]\n"
      "    memory: [ideal, dram]\n",
      "list.yaml", kRoot);
  EXPECT_EQ(expand_jobs(l, FakeNames{}).size(), 4u);
  try {
    expand_jobs(l, ChiplessRandoms{});
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("list.yaml:5:5: entries[0].memory: dram: no capsgen_chip for preset random-5 "
                                         "(out/random-5.yaml): the SMP organization is not supported yet"),
              std::string::npos)
        << e.what();
  }
}

JobResult result(const std::string& name, Status s, bool expect_fail = false) {
  JobResult r;
  r.job.name = name;
  r.job.config_name = "small-4x4";
  r.job.network_name = "capsnet-tiny";
  r.job.expect_fail = expect_fail;
  if (expect_fail) r.job.fault = "flip-pe-bit";
  r.status = s;
  r.seconds = 1.5;
  return r;
}

TEST(Junit, EscapesXml) {
  EXPECT_EQ(xml_escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&apos;");
  EXPECT_EQ(xml_escape(std::string("x\x01y\tz\n")), "x?y\tz\n");
}

TEST(Junit, SuitesCasesFailuresAndErrors) {
  std::vector<JobResult> rs = {result("a", Status::kPass), result("b", Status::kFail), result("c", Status::kError),
                               result("m", Status::kFail, true), result("n", Status::kPass, true),
                               result("i", Status::kInterrupted)};
  rs[1].message = "MISMATCH block=accel conv1 (i00) expected=0 actual=<49>";
  rs[1].problems = {rs[1].message};
  rs[1].repro = "capsgen sim --seed 2";
  rs[2].message = "capsgen sim exit status 2: error";
  const std::string x = junit_xml("ci", rs, false);
  EXPECT_EQ(x.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"capsgen regress ci\" tests=\"6\" "
                    "failures=\"2\" errors=\"1\" skipped=\"1\"",
                    0),
            0u)
      << x;
  EXPECT_NE(x.find("<testsuite name=\"ci.small-4x4\" tests=\"4\" failures=\"1\" errors=\"1\" skipped=\"1\""), std::string::npos) << x;
  EXPECT_NE(x.find("<testsuite name=\"ci.small-4x4+flip-pe-bit\" tests=\"2\" failures=\"1\" errors=\"0\""), std::string::npos) << x;
  EXPECT_NE(x.find("<testcase classname=\"ci.small-4x4\" name=\"a\" time=\"1.500\"/>"), std::string::npos) << x;
  EXPECT_NE(x.find("<failure message=\"MISMATCH block=accel conv1 (i00) expected=0 actual=&lt;49&gt;\" type=\"fail\">"
                   "MISMATCH block=accel conv1 (i00) expected=0 actual=&lt;49&gt;\nreproduce: capsgen sim --seed 2\n</failure>"),
            std::string::npos)
      << x;
  EXPECT_NE(x.find("<error message=\"capsgen sim exit status 2: error\" type=\"error\">"), std::string::npos) << x;
  EXPECT_NE(x.find("expected a failure (deliberately broken RTL), the run passed"), std::string::npos) << x;
  EXPECT_NE(x.find("<system-out>expected failure caught"), std::string::npos) << x;
  EXPECT_NE(x.find("<skipped message=\"interrupted\"/>"), std::string::npos) << x;
  EXPECT_NE(junit_xml("ci", rs, true).find("interrupted=\"true\""), std::string::npos);
}

TEST(Summary, TotalsAndVerdicts) {
  std::vector<JobResult> rs = {result("a", Status::kPass), result("b", Status::kFail), result("c", Status::kTimeout),
                               result("m", Status::kFail, true), result("n", Status::kPass, true),
                               result("i", Status::kNotRun)};
  const Totals t = totals(rs);
  EXPECT_EQ(t.jobs, 6);
  EXPECT_EQ(t.passed, 2);  // a, and the caught fault m
  EXPECT_EQ(t.failed, 2);  // b, and the uncaught fault n
  EXPECT_EQ(t.errors, 1);
  EXPECT_EQ(t.not_run, 1);
  EXPECT_EQ(verdict(rs[3]), "caught (expected fail)");
  EXPECT_EQ(verdict(rs[4]), "FAIL (fault not caught)");
  RunInfo info;
  info.list_name = "ci";
  info.interrupted = true;
  const std::string md = summary_markdown(info, rs);
  EXPECT_NE(md.find("# capsgen regress: ci (INTERRUPTED)"), std::string::npos);
  EXPECT_NE(md.find("2 passed, 2 failed, 1 errors, 1 not run"), std::string::npos) << md;
  EXPECT_NE(md.find("| job | config | network | seed | input | fetch | memory | result | cycles | time |"), std::string::npos) << md;
  EXPECT_NE(md.find("| a | small-4x4 | capsnet-tiny | 1 | synthetic | latency1 | ideal | pass | - | 1.5 s |"), std::string::npos)
      << md;
  rs[0].job.memory = "dram";
  rs[0].job.name = "a.dram";
  rs[0].cycles = 31000;
  EXPECT_NE(summary_markdown(info, rs).find("| a.dram | small-4x4 | capsnet-tiny | 1 | synthetic | latency1 | dram | pass | 31000 |"),
            std::string::npos);
  EXPECT_NE(summary_json(info, rs).find("\"memory\": \"dram\""), std::string::npos);
}

std::string point(const std::string& type, const std::string& module, const std::string& file, int line,
                  const std::string& comment, const std::string& hier, long long count) {
  return "C '\x01" "f\x02" + file + "\x01" "l\x02" + std::to_string(line) + "\x01" "n\x02" "3\x01" "page\x02" "v_" + type + "/" +
         module + "\x01" "o\x02" + comment + "\x01" "h\x02" + hier + "' " + std::to_string(count) + "\n";
}

TEST(Coverage, ParsesDatPoints) {
  const std::string dat = "# SystemC::Coverage-3\n" + point("toggle", "capsgen_pe", "/r/capsgen_pe.v", 12, "sum_q[3]", "TOP.a.u_pe_r0_c0", 7);
  const std::vector<CovPoint> ps = parse_coverage_dat(dat);
  ASSERT_EQ(ps.size(), 1u);
  EXPECT_EQ(ps[0].type, "toggle");
  EXPECT_EQ(ps[0].module, "capsgen_pe");
  EXPECT_EQ(ps[0].file, "/r/capsgen_pe.v");
  EXPECT_EQ(ps[0].line, 12);
  EXPECT_EQ(ps[0].comment, "sum_q[3]");
  EXPECT_EQ(ps[0].hier, "TOP.a.u_pe_r0_c0");
  EXPECT_EQ(ps[0].count, 7);
  EXPECT_THROW(parse_coverage_dat("C '\x01" "f\x02x' notanumber\n"), std::runtime_error);
}

TEST(Coverage, AggregatesPerModuleOverInstances) {
  std::string dat;
  // Line 10 hit in one instance only: covered. Line 11 hit nowhere. Line 12 in another RTL directory.
  dat += point("line", "capsgen_pe", "/a/capsgen_pe.v", 10, "block", "TOP.x.u_pe_r0_c0", 0);
  dat += point("line", "capsgen_pe", "/a/capsgen_pe.v", 10, "block", "TOP.x.u_pe_r0_c1", 3);
  dat += point("line", "capsgen_pe", "/a/capsgen_pe.v", 11, "if", "TOP.x.u_pe_r0_c0", 0);
  dat += point("line", "capsgen_pe", "/b/capsgen_pe.v", 12, "block", "TOP.x.u_pe_r0_c0", 1);
  dat += point("toggle", "capsgen_pe", "/a/capsgen_pe.v", 5, "sum_q[0]", "TOP.x.u_pe_r0_c0", 2);
  dat += point("toggle", "capsgen_pe", "/a/capsgen_pe.v", 5, "sum_q[1]", "TOP.x.u_pe_r0_c0", 0);
  dat += point("toggle", "capsgen_pe", "/a/capsgen_pe.v", 5, "sum_q[1]", "TOP.x.u_pe_r0_c1", 0);
  dat += point("toggle", "capsgen_engine", "/a/capsgen_engine.v", 5, "busy", "TOP.x.u_engine", 1);
  // A parameterized copy (Verilator's "<module>__<params>") counts as the module.
  dat += point("toggle", "capsgen_pe__W9", "/a/capsgen_pe.v", 5, "sum_q[2]", "TOP.x.u_pe_r1_c0", 1);
  const auto m = coverage_by_module(parse_coverage_dat(dat));
  ASSERT_EQ(m.size(), 2u);
  const ModuleCoverage& pe = m.at("capsgen_pe");
  EXPECT_EQ(pe.instances.size(), 3u);
  EXPECT_EQ(pe.files.size(), 2u);
  EXPECT_EQ(pe.lines, 3);
  EXPECT_EQ(pe.lines_hit, 2);
  EXPECT_EQ(pe.uncovered_lines.at("/a/capsgen_pe.v"), std::vector<int>{11});
  EXPECT_EQ(pe.toggles, 3);
  EXPECT_EQ(pe.toggles_hit, 2);
  EXPECT_EQ(m.at("capsgen_engine").lines, 0);
  EXPECT_DOUBLE_EQ(percent(m.at("capsgen_engine").lines_hit, m.at("capsgen_engine").lines), 100.0);
  EXPECT_NEAR(percent(pe.toggles_hit, pe.toggles), 66.667, 0.001);
}

// capsgen_accel reports the PMU bins "na"; capsgen_chip (--memory dram) measures per-sector bins. A bin
// one run measured is not "na", whatever the others say.
TEST(Coverage, NaOnlyWhileNoRunMeasuredTheBin) {
  FunctionalCoverage f;
  f.add({{"op.gemm", 8}, {"pmu.sector_sleep", 0}}, {"pmu.sector_sleep"}, {"op.gemm", "pmu.sector_sleep"});
  f.add({{"pmu.data.s0.sleep", 3}, {"pmu.data.s0.wake", 0}}, {}, {"pmu.data.s0.sleep", "pmu.data.s0.wake"});
  EXPECT_EQ(f.na, std::set<std::string>{"pmu.sector_sleep"});
  EXPECT_EQ(f.bins.at("pmu.data.s0.sleep"), 3);
  EXPECT_EQ(f.runs.at("pmu.data.s0.sleep"), 1);
  EXPECT_EQ(f.never_hit(), std::vector<std::string>{"pmu.data.s0.wake"});
  FunctionalCoverage g;  // measured first, reported "na" later: still measured
  g.add({{"x", 1}}, {}, {"x"});
  g.add({{"x", 0}}, {"x"}, {"x"});
  EXPECT_TRUE(g.na.empty());
  FunctionalCoverage h;  // reported "na" first, measured later
  h.add({{"x", 0}}, {"x"}, {"x"});
  h.add({{"x", 0}}, {}, {"x"});
  EXPECT_TRUE(h.na.empty());
  EXPECT_EQ(h.never_hit(), std::vector<std::string>{"x"});
}

TEST(Coverage, MarkdownShowsSectorBinsOfDramRuns) {
  RunInfo info;
  info.list_name = "ci";
  FunctionalCoverage ideal_only;
  ideal_only.add({{"op.gemm", 8}, {"pmu.sector_sleep", 0}, {"pmu.sector_wake", 0}}, {"pmu.sector_sleep", "pmu.sector_wake"},
                 {"op.gemm", "pmu.sector_sleep", "pmu.sector_wake"});
  std::string md = coverage_markdown(info, {}, ideal_only, 1, "");
  EXPECT_NE(md.find("| pmu.sector_sleep | n/a (not in this RTL) | 0 |"), std::string::npos) << md;
  EXPECT_NE(md.find("- not in this RTL: pmu.sector_sleep, pmu.sector_wake (the scratchpad and its PMUs are not behind the "
                    "engine in capsgen_accel; a `memory: dram` entry"),
            std::string::npos)
      << md;
  EXPECT_EQ(md.find("scratchpad sectors"), std::string::npos) << md;
  FunctionalCoverage both = ideal_only;
  both.add({{"pmu.data.s0.sleep", 2}, {"pmu.data.s0.wake", 2}, {"pmu.acc.s1.sleep", 0}},  {},
           {"pmu.data.s0.sleep", "pmu.data.s0.wake", "pmu.acc.s1.sleep"});
  info.dram_runs = 1;
  md = coverage_markdown(info, {}, both, 2, "");
  EXPECT_NE(md.find("## Functional coverage (2 run(s), 1 of them --memory dram;"), std::string::npos) << md;
  EXPECT_NE(md.find("| pmu.data.s0.sleep | 2 | 1 |"), std::string::npos) << md;
  EXPECT_NE(md.find("- never hit: pmu.acc.s1.sleep"), std::string::npos) << md;
  EXPECT_NE(md.find("- scratchpad sectors (capsgen_chip, 1 --memory dram run(s)): 2 of 3 sleep/wake bins hit"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("- not in this RTL: pmu.sector_sleep, pmu.sector_wake (capsgen_accel, the ideal-memory top level"),
            std::string::npos)
      << md;
}

TEST(Coverage, SumsFunctionalBins) {
  FunctionalCoverage f;
  f.add({{"op.gemm", 8}, {"gemm.diag", 0}, {"pmu.sector_sleep", 0}}, {"pmu.sector_sleep"},
        {"op.gemm", "gemm.diag", "pmu.sector_sleep"});
  f.add({{"op.gemm", 6}, {"gemm.diag", 0}, {"sat.gemm.max", 2}}, {}, {"op.gemm", "gemm.diag", "sat.gemm.max"});
  EXPECT_EQ(f.bins.at("op.gemm"), 14);
  EXPECT_EQ(f.runs.at("op.gemm"), 2);
  EXPECT_EQ(f.bins.at("sat.gemm.max"), 2);
  EXPECT_EQ(f.runs.at("sat.gemm.max"), 1);
  EXPECT_EQ(f.order, (std::vector<std::string>{"op.gemm", "gemm.diag", "pmu.sector_sleep", "sat.gemm.max"}));
  EXPECT_EQ(f.never_hit(), std::vector<std::string>{"gemm.diag"});
  EXPECT_TRUE(f.na.count("pmu.sector_sleep"));
}

}  // namespace
}  // namespace capsgen::cli::regress
