#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "regress/slurm.hpp"

namespace capsgen::cli::regress {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write(const fs::path& p, const std::string& text) {
  std::ofstream(p) << text;
  fs::permissions(p, fs::perms::owner_all, fs::perm_options::add);
}

// This process's temporary directory, removed when the tests end.
const fs::path& test_root() {
  static const struct Root {
    fs::path path = fs::temp_directory_path() / ("capsgen-slurm-test-" + std::to_string(getpid()));
    ~Root() {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  } root;
  return root.path;
}

// A fresh directory under the test's temporary directory.
fs::path fresh_dir(const std::string& name) {
  const fs::path d = test_root() / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

TEST(Slurm, ArrayRangesCompressRuns) {
  EXPECT_EQ(array_ranges({}), "");
  EXPECT_EQ(array_ranges({0}), "0");
  EXPECT_EQ(array_ranges({0, 1, 2}), "0-2");
  EXPECT_EQ(array_ranges({0, 1, 2, 5, 7, 8}), "0-2,5,7-8");
}

TEST(Slurm, ParsesRcFiles) {
  auto e = parse_rc("1 100.25 102.75\n", 600);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->exit_code, 1);
  EXPECT_DOUBLE_EQ(e->seconds, 2.5);
  EXPECT_FALSE(e->timed_out);
  e = parse_rc("124 0 10\n", 10);
  ASSERT_TRUE(e);
  EXPECT_TRUE(e->timed_out);
  e = parse_rc("137 0 12\n", 10);  // killed 5 s after the TERM of timeout(1)
  ASSERT_TRUE(e);
  EXPECT_TRUE(e->timed_out);
  e = parse_rc("137 0 3\n", 10);  // killed, but not by the timeout
  ASSERT_TRUE(e);
  EXPECT_FALSE(e->timed_out);
  EXPECT_FALSE(parse_rc("124 0 10\n", 0)->timed_out);  // no timeout: 124 is the command's own status
  EXPECT_FALSE(parse_rc("", 10));
  EXPECT_FALSE(parse_rc("0 5", 10));
  EXPECT_FALSE(parse_rc("x 1 2", 10));
}

TEST(Slurm, ParsesSqueueAndSbatch) {
  const auto q = parse_squeue("12|RUNNING|None\n  13_0|PENDING|Dependency\n\ngarbage\n13_1|PENDING|DependencyNeverSatisfied\n");
  ASSERT_EQ(q.size(), 3u);
  EXPECT_EQ(q[0].id, "12");
  EXPECT_EQ(q[0].state, "RUNNING");
  EXPECT_EQ(q[1].id, "13_0");
  EXPECT_EQ(q[1].reason, "Dependency");
  EXPECT_EQ(q[2].reason, "DependencyNeverSatisfied");
  EXPECT_EQ(parse_sbatch_id("123\n"), "123");
  EXPECT_EQ(parse_sbatch_id("456;cluster-a\n"), "456");
  EXPECT_EQ(parse_sbatch_id("sbatch: error: Batch job submission failed: Invalid partition name specified\n"), "");
}

TEST(Slurm, RunCaptureAndPath) {
  std::string out;
  EXPECT_EQ(run_capture({"sh", "-c", "echo out; echo err >&2; exit 4"}, out), 4);
  EXPECT_NE(out.find("out\n"), std::string::npos);
  EXPECT_NE(out.find("err\n"), std::string::npos);
  EXPECT_EQ(run_capture({"capsgen-no-such-command"}, out), 127);
  EXPECT_FALSE(find_on_path("sh").empty());
  EXPECT_TRUE(find_on_path("capsgen-no-such-command").empty());
}

TEST(Slurm, SbatchOptionsOfEveryJob) {
  SlurmOptions o;
  EXPECT_TRUE(sbatch_common(o).empty());
  o.partition = "gpu";
  o.account = "lab";
  o.time = "30:00";
  o.extra = {"--qos=short", "--mem=4G"};
  EXPECT_EQ(sbatch_common(o),
            (std::vector<std::string>{"--partition=gpu", "--account=lab", "--time=30:00", "--qos=short", "--mem=4G"}));
}

// The job script runs the command in cwd with its log and writes the .rc file the submitter reads.
TEST(Slurm, TaskScriptRunsTheCommandAndWritesItsEnd) {
  const fs::path d = fresh_dir("script");
  Task t{{"/bin/sh", "-c", "pwd; echo 'it''s here'; exit 3"}, (d / "run.log").string(), 0, {}, "job", 1};
  const fs::path rc = d / "task-0.rc";
  write(d / "task-0.sh", task_script(t, "test: job", d.string(), rc.string()));
  std::string out;
  EXPECT_EQ(run_capture({"/bin/sh", (d / "task-0.sh").string()}, out), 3) << out;
  EXPECT_EQ(read(d / "run.log"), d.string() + "\nits here\n");
  const auto e = parse_rc(read(rc), 0);
  ASSERT_TRUE(e) << read(rc);
  EXPECT_EQ(e->exit_code, 3);
  EXPECT_FALSE(fs::exists(d / "task-0.rc.tmp"));
}

TEST(Slurm, TaskScriptStopsATaskAtItsTimeout) {
  const fs::path d = fresh_dir("timeout");
  Task t{{"/bin/sleep", "30"}, (d / "run.log").string(), 1, {}, "slow", 1};
  write(d / "task-0.sh", task_script(t, "test: slow", d.string(), (d / "task-0.rc").string()));
  std::string out;
  run_capture({"/bin/sh", (d / "task-0.sh").string()}, out);
  const auto e = parse_rc(read(d / "task-0.rc"), t.timeout_s);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->exit_code, 124);
  EXPECT_TRUE(e->timed_out);
  EXPECT_LT(e->seconds, 10);
}

// A stand-in for Slurm's commands on PATH: sbatch runs the job (every element of an array) at once,
// and not at all when a job it depends on (afterok) failed, as with --kill-on-invalid-dep=yes.
class FakeSlurm : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fresh_dir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    const fs::path bin = dir_ / "bin";
    fs::create_directories(bin);
    write(bin / "sbatch",
          "#!/bin/sh\nf=" + dir_.string() +
              "\necho \"$*\" >> $f/sbatch.args\n"
              "[ -n \"$FAKE_SBATCH_REFUSE\" ] && { echo 'sbatch: error: Invalid account' >&2; exit 1; }\n"
              "id=$(cat $f/next 2>/dev/null || echo 100); echo $((id + 1)) > $f/next\n"
              "arr=; dep=; for a; do case \"$a\" in --array=*) arr=${a#--array=};; --dependency=afterok:*) "
              "dep=${a#--dependency=afterok:};; esac; script=$a; done\n"
              "for x in $(echo \"$dep\" | tr ':' ' '); do [ \"$(cat $f/rc-$x)\" = 0 ] || { echo $id; exit 0; }; done\n"
              "if [ -n \"$arr\" ]; then i=0; while [ $i -le ${arr#*-} ]; do SLURM_ARRAY_TASK_ID=$i sh $script; i=$((i + 1)); done\n"
              "else sh $script; echo $? > $f/rc-$id; fi\n"
              "echo $id\n");
    write(bin / "squeue", "#!/bin/sh\nexit 0\n");
    write(bin / "scancel", "#!/bin/sh\necho \"$*\" >> " + dir_.string() + "/scancel.args\n");
    write(bin / "sacct", "#!/bin/sh\necho 'sacct: accounting storage is disabled' >&2; exit 1\n");
    old_path_ = std::getenv("PATH");
    setenv("PATH", (bin.string() + ":" + old_path_).c_str(), 1);
  }
  void TearDown() override {
    setenv("PATH", old_path_.c_str(), 1);
    unsetenv("FAKE_SBATCH_REFUSE");
  }
  Task sh(const std::string& name, const std::string& script, std::vector<std::size_t> deps) {
    return Task{{"/bin/sh", "-c", script}, (dir_ / (name + ".log")).string(), 60, std::move(deps), name, 1};
  }
  SlurmOptions options() {
    SlurmOptions o;
    o.job_name = "capsgen-test";
    o.dir = (dir_ / "slurm").string();
    o.cwd = dir_.string();
    o.poll_s = 1;
    return o;
  }
  fs::path dir_;
  std::string old_path_;
};

TEST_F(FakeSlurm, BuildsThenArraysAfterThemAndDependentsOfAFailedBuild) {
  // Two models: the first builds, the second's build fails; two runs each, one of them fails.
  std::vector<Task> tasks = {sh("model-a", "echo built a", {}), sh("model-b", "echo broken >&2; exit 2", {}),
                             sh("a.s1", "echo run a1", {0}), sh("a.s2", "echo mismatch; exit 1", {0}),
                             sh("b.s1", "echo run b1", {1}), sh("b.s2", "echo run b2", {1})};
  std::vector<Outcome> outcomes;
  std::vector<std::size_t> order;
  std::vector<std::string> notes;
  const bool done = run_tasks_slurm(
      tasks, options(), outcomes, [&](std::size_t i) { order.push_back(i); }, [] {}, [] { return false; },
      [&](const std::string& m) { notes.push_back(m); });
  EXPECT_TRUE(done);
  ASSERT_EQ(outcomes.size(), 6u);
  EXPECT_EQ(order.size(), 6u);
  EXPECT_TRUE(outcomes[0].started);
  EXPECT_EQ(outcomes[0].exit_code, 0);
  EXPECT_EQ(outcomes[1].exit_code, 2);
  EXPECT_EQ(outcomes[2].exit_code, 0);
  EXPECT_EQ(outcomes[3].exit_code, 1);
  EXPECT_TRUE(outcomes[4].dep_failed);
  EXPECT_TRUE(outcomes[5].dep_failed);
  EXPECT_FALSE(outcomes[4].started);
  EXPECT_EQ(read(dir_ / "a.s1.log"), "run a1\n");
  EXPECT_EQ(read(dir_ / "model-b.log"), "broken\n");
  EXPECT_FALSE(fs::exists(dir_ / "b.s1.log"));
  // Two build jobs, then one array per model after its build.
  const std::string args = read(dir_ / "sbatch.args");
  EXPECT_NE(args.find("--job-name=capsgen-test:build:model-a"), std::string::npos) << args;
  EXPECT_NE(args.find("--array=0-1"), std::string::npos) << args;
  EXPECT_NE(args.find("--dependency=afterok:100 "), std::string::npos) << args;
  EXPECT_NE(args.find("--dependency=afterok:101 "), std::string::npos) << args;
  // The failed build's runs were cancelled (array 103, elements 0 and 1).
  EXPECT_NE(read(dir_ / "scancel.args").find("103_0"), std::string::npos);
  ASSERT_FALSE(notes.empty());
  EXPECT_NE(notes[0].find("submitted 4 Slurm job(s)"), std::string::npos) << notes[0];
}

TEST_F(FakeSlurm, RefusedSubmissionIsAnError) {
  setenv("FAKE_SBATCH_REFUSE", "1", 1);
  std::vector<Task> tasks = {sh("model-a", "true", {}), sh("a.s1", "true", {0})};
  std::vector<Outcome> outcomes;
  try {
    run_tasks_slurm(tasks, options(), outcomes, [](std::size_t) {}, [] {}, [] { return false; }, [](const std::string&) {});
    FAIL() << "no error";
  } catch (const SlurmError& e) {
    EXPECT_NE(std::string(e.what()).find("sbatch refused the job of model-a (exit status 1): sbatch: error: Invalid account"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(FakeSlurm, AJobThatEndsWithoutAResultIsReported) {
  // A job that leaves the queue without writing its .rc file (killed by Slurm, node lost): after
  // vanish_s its log gets the reason and it ends with exit status -1.
  write(dir_ / "bin" / "sbatch", "#!/bin/sh\necho 200\n");
  std::vector<Task> tasks = {sh("model-a", "true", {})};
  SlurmOptions o = options();
  o.vanish_s = 0;
  std::vector<Outcome> outcomes;
  run_tasks_slurm(tasks, o, outcomes, [](std::size_t) {}, [] {}, [] { return false; }, [](const std::string&) {});
  EXPECT_TRUE(outcomes[0].started);
  EXPECT_EQ(outcomes[0].exit_code, -1);
  EXPECT_NE(read(dir_ / "model-a.log").find("error: Slurm job 200 ended without a result (sacct: "), std::string::npos)
      << read(dir_ / "model-a.log");
}

}  // namespace
}  // namespace capsgen::cli::regress
