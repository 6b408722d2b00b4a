// capsgen regress LIST.yaml: a regression of whole inferences on the generated RTL (docs/regress.md).
//   1. reads the list (regress/list.hpp) and checks every preset and network before anything is
//      built (bad input: exit status 2, nothing written),
//   2. builds each distinct model once (config x memory x fault: `capsgen sim --build-only`, OUT/builds/KEY;
//      `memory: dram` jobs run capsgen_chip with the network in a DDR3 model, `capsgen sim --memory dram`),
//   3. runs every job as `capsgen sim --build OUT/builds/KEY/...` in parallel (-j N; regress/pool.hpp),
//      each in OUT/runs/JOB, bit-exact against the golden model,
//   4. writes OUT/summary.md, summary.json, junit.xml, failures/JOB/ (log, reports, repro.sh with the
//      command that reproduces the job alone), with --trace an FST and .gtkw of each failure, and with
//      coverage the merged Verilator coverage (verilator_coverage) and the functional coverage per bin.
// A live progress line goes to stderr. Ctrl-C stops the workers and still writes the summaries.
// With --slurm, step 2 and 3 are Slurm jobs instead of local processes (regress/slurm.hpp): the same
// commands, one build job per model and one job array of its runs after it; step 4 is the same code.
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "core/shell.hpp"
#include "regress/coverage.hpp"
#include "regress/junit.hpp"
#include "regress/list.hpp"
#include "regress/pool.hpp"
#include "regress/report.hpp"
#include "regress/slurm.hpp"
#include "config/accel_config.hpp"
#include "core/atomic_file.hpp"
#include "core/input_error.hpp"
#include "emit/chip.hpp"
#include "emit/memsys.hpp"
#include "emit/random_config.hpp"
#include "model/network.hpp"

namespace capsgen::cli {
namespace {

namespace fs = std::filesystem;
using namespace regress;
using Clock = std::chrono::steady_clock;

std::string join_cmd(const std::vector<std::string>& argv) {
  std::string s;
  for (const std::string& a : argv) s += (s.empty() ? "" : " ") + quote(a);
  return s;
}

std::string self_exe() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("capsgen") : p.string();
}

// Preset and network names, each file read once (and checked: errors name file, line, field).
class FileNames : public Names {
 public:
  explicit FileNames(fs::path out) : out_(std::move(out)) {}
  std::string config_name(const std::string& path) const override {
    auto it = configs_.find(path);
    if (it == configs_.end()) it = configs_.emplace(path, load_accel_config(path).name).first;
    return it->second;
  }
  std::string network_name(const std::string& path) const override {
    auto it = networks_.find(path);
    if (it == networks_.end()) it = networks_.emplace(path, load_network(path).name).first;
    return it->second;
  }
  std::string random_config_path(long long seed) const override {
    const std::string p = (out_ / "configs" / fmt::format("random-{}.yaml", seed)).string();
    if (!randoms_.count(seed)) {
      const std::string yaml = emit::random_accel_config_yaml(static_cast<std::uint64_t>(seed));
      parse_accel_config(yaml, p);  // a generator bug would show here, before anything is built
      randoms_[seed] = yaml;
    }
    return p;
  }
  std::string dram_unsupported_reason(const std::string& path, long long random_seed) const override {
    auto it = dram_reasons_.find(path);
    if (it == dram_reasons_.end()) {
      if (random_seed >= 0) random_config_path(random_seed);
      const AccelConfig cfg = random_seed >= 0 ? parse_accel_config(randoms_.at(random_seed), path) : load_accel_config(path);
      it = dram_reasons_.emplace(path, emit::chip_unsupported_reason(cfg)).first;
    }
    return it->second;
  }
  const std::map<long long, std::string>& randoms() const { return randoms_; }

 private:
  fs::path out_;
  mutable std::map<std::string, std::string> configs_, networks_, dram_reasons_;
  mutable std::map<long long, std::string> randoms_;
};

// The `capsgen sim` options of a job (without --work, --build, --coverage, --fault).
std::vector<std::string> sim_args(const Job& j) {
  std::vector<std::string> a = {"sim", "--config", j.config_path, "--model", j.network_path, "--seed", std::to_string(j.seed)};
  if (j.dram()) a.insert(a.end(), {"--memory", "dram"});
  if (!j.weights.empty()) a.insert(a.end(), {"--weights", j.weights});
  if (!j.dataset.empty()) a.insert(a.end(), {"--dataset", j.dataset});
  if (j.index) a.insert(a.end(), {"--index", std::to_string(*j.index)});
  if (j.fetch != "latency1") a.insert(a.end(), {"--fetch", j.fetch});
  return a;
}

// The model's directory in OUT/builds/KEY, as capsgen sim --build-only names it (WORK/build-accel... or,
// --memory dram, WORK/build-chip...).
std::string build_dir_name(const Job& j, bool coverage) {
  return std::string(j.dram() ? "build-chip" : "build-accel") + (coverage ? "-cov" : "") + (j.fault.empty() ? "" : "-" + j.fault);
}

std::string fmt_time(double s) {
  const long long t = static_cast<long long>(s + 0.5);
  return t >= 60 ? fmt::format("{}m{:02}s", t / 60, t % 60) : fmt::format("{}s", t);
}

// The last "error:" line of a capsgen log (or its last line).
std::string error_reason(const std::string& log) {
  std::istringstream in(log);
  std::string last, err;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    last = line;
    if (line.find("error:") != std::string::npos || line.rfind("FAIL tb", 0) == 0) err = line;
  }
  return err.empty() ? last : err;
}

// -j N and -jN as in make: --jobs N.
std::vector<std::string> make_style_jobs(const std::vector<std::string>& argv_in) {
  std::vector<std::string> argv;
  for (std::size_t i = 0; i < argv_in.size(); ++i) {
    if (argv_in[i] == "-j") argv.push_back("--jobs");
    else if (argv_in[i].rfind("-j", 0) == 0 && argv_in[i].size() > 2 && argv_in[i][2] != '-')
      argv.insert(argv.end(), {"--jobs", argv_in[i].substr(2)});
    else argv.push_back(argv_in[i]);
  }
  return argv;
}

void declare_options(Args& args) {
  args.allow_positional(1);
  args.option("jobs", "N", "runs and builds in parallel (also -j N)", "2")
      .option("out", "DIR", "output directory (default build/regress/<list name>); its builds/ are reused")
      .flag("coverage", "Verilator line/toggle coverage and functional coverage even if the list does not ask")
      .flag("trace", "rerun each failed job with FST tracing: failures/JOB/JOB.fst and .gtkw (builds a tracing model)")
      .option("trace-max", "N", "rerun at most N failures with --trace", "4")
      .option("filter", "REGEX", "only the jobs whose name matches")
      .flag("dry-run", "list the jobs and the commands, build and run nothing")
      .option("max-jobs", "N", "largest number of jobs the list may expand to (docs/limits.md)", std::to_string(kDefaultMaxJobs))
      .option("source-dir", "DIR", "the capsgen source tree (for tb/)", CAPSGEN_SOURCE_DIR)
      .flag("slurm", "run the builds and runs as Slurm jobs (sbatch; OUT, the current directory and capsgen on a shared filesystem)")
      .option("slurm-partition", "P", "--slurm: sbatch --partition")
      .option("slurm-account", "A", "--slurm: sbatch --account")
      .option("slurm-time", "T", "--slurm: sbatch --time of every job (e.g. 30:00)")
      .option("slurm-extra", "ARGS", "--slurm: more sbatch options for every job, separated by blanks (e.g. '--qos=short --mem=4G')")
      .option("slurm-timeout", "S", "--slurm: stop waiting after S seconds and cancel the jobs left (0: wait as long as they are queued)", "0");
}

// The options that do not depend on the list, checked in this order.
struct Options {
  std::string list_path;
  int slots = 1;
  int trace_max = 0;
  std::optional<std::regex> filter;
  bool slurm = false;
  int slurm_timeout = 0;
  bool coverage = false, trace = false, dry_run = false;
  std::string source_dir;
};

Options read_options(const Args& args) {
  if (args.positional().size() != 1)
    throw InputError("capsgen regress", 0, 0, "LIST.yaml",
                     args.positional().empty() ? "a regression list is required" : "expected one regression list");
  Options o;
  o.list_path = args.positional().front();
  o.slots = static_cast<int>(args.get_int("jobs", 1, 64));
  o.trace_max = static_cast<int>(args.get_int("trace-max", 0, 1000));
  if (auto f = args.get_opt("filter")) {
    try {
      o.filter = std::regex(*f);
    } catch (const std::regex_error& e) {
      throw InputError("capsgen regress", 0, 0, "--filter", fmt::format("bad regular expression '{}': {}", *f, e.what()));
    }
  }
  o.slurm = args.has("slurm");
  for (const char* s : {"slurm-partition", "slurm-account", "slurm-time", "slurm-extra"})
    if (args.get_opt(s) && !o.slurm)
      throw InputError("capsgen regress", 0, 0, std::string("--") + s, "only with --slurm");
  o.slurm_timeout = static_cast<int>(args.get_int("slurm-timeout", 0, 100000000));
  o.coverage = args.has("coverage");
  o.trace = args.has("trace");
  o.dry_run = args.has("dry-run");
  o.source_dir = args.get("source-dir");
  return o;
}

// The list's jobs, after the checks that need all of them, that --filter matches.
std::vector<Job> select_jobs(const RegressList& list, const FileNames& names, long long max_jobs,
                             const std::optional<std::regex>& filter) {
  std::vector<Job> jobs = expand_jobs(list, names, max_jobs);
  {  // a name must mean one preset: two files of one name would share a build
    std::map<std::string, std::string> by_name;
    for (const Job& j : jobs)
      if (auto [it, fresh] = by_name.emplace(j.config_name, j.config_path); !fresh && it->second != j.config_path)
        throw InputError(list.file, j.line, 0, "configs",
                         fmt::format("presets {} and {} are both named '{}'", it->second, j.config_path, j.config_name));
  }
  if (filter) std::erase_if(jobs, [&](const Job& j) { return !std::regex_search(j.name, *filter); });
  if (jobs.empty()) throw InputError(list.file, 0, 0, "--filter", "no job left to run");
  return jobs;
}

// What the steps after the option checks share: the list, its jobs and where everything goes.
struct Regression {
  RegressList list;
  fs::path out;
  std::vector<Job> jobs;
  std::string exe, src, cwd;
  int slots = 1;
  bool coverage = false;
  // Whether a job's model and run have Verilator coverage: a deliberately broken RTL's coverage is not the design's.
  bool covers(const Job& j) const { return coverage && j.fault.empty(); }
  // The model a job runs on, as its build task leaves it in OUT/builds/KEY.
  fs::path model_dir(const Job& j) const { return out / "builds" / j.build_key() / build_dir_name(j, covers(j)); }
};

// The `capsgen sim` command that runs a job alone (generating and building its own model), without --work.
std::vector<std::string> standalone_sim(const Regression& g, const Job& j) {
  std::vector<std::string> a = sim_args(j);
  a.insert(a.begin(), g.exe);
  if (!j.fault.empty()) a.insert(a.end(), {"--fault", j.fault});
  return a;
}

// The --jobs of each of n commands run at once on the regression's slots.
int jobs_each(int slots, std::size_t n) {
  return std::max(1, slots / std::max(1, std::min<int>(slots, static_cast<int>(n))));
}

// The tasks: the model builds, then one run per job (in the jobs' order), each run after its model's build.
struct Plan {
  std::vector<std::string> keys;                // the models, in the order of their first job
  std::map<std::string, std::size_t> key_task;  // a model's build task
  std::vector<Task> tasks;
  std::size_t first_run = 0;                    // the first run's task
  std::vector<JobResult> results;               // the jobs' results, in the jobs' order
};

Task build_task(const Regression& g, const Job& j, int build_jobs) {
  const std::string key = j.build_key();
  std::vector<std::string> a = {g.exe, "sim", "--config", j.config_path, "--model", j.network_path, "--work",
                                (g.out / "builds" / key).string(), "--build-only", "--jobs", std::to_string(build_jobs),
                                "--source-dir", g.src};
  if (j.dram()) a.insert(a.end(), {"--memory", "dram"});
  if (g.covers(j)) a.push_back("--coverage");
  if (!j.fault.empty()) a.insert(a.end(), {"--fault", j.fault});
  return {a, (g.out / "builds" / (key + ".log")).string(), 0, {}, key, build_jobs};
}

Task run_task(const Regression& g, const Job& j, std::size_t build) {
  std::vector<std::string> a = sim_args(j);
  a.insert(a.begin(), g.exe);
  a.insert(a.end(), {"--work", (g.out / "runs" / j.name).string(), "--build", g.model_dir(j).string(), "--source-dir", g.src});
  if (g.covers(j)) a.push_back("--coverage");
  return {a, (g.out / "runs" / j.name / "run.log").string(), g.list.timeout_s, {build}, j.name, 1};
}

// Builds: one per config x memory x fault, in the order of their first job; then the runs.
Plan plan_tasks(const Regression& g) {
  Plan p;
  std::map<std::string, const Job*> key_job;
  for (const Job& j : g.jobs)
    if (!key_job.count(j.build_key())) {
      key_job[j.build_key()] = &j;
      p.keys.push_back(j.build_key());
    }
  const int build_jobs = jobs_each(g.slots, p.keys.size());
  for (const std::string& key : p.keys) {
    p.key_task[key] = p.tasks.size();
    p.tasks.push_back(build_task(g, *key_job[key], build_jobs));
  }
  p.first_run = p.tasks.size();
  p.results.resize(g.jobs.size());
  for (std::size_t i = 0; i < g.jobs.size(); ++i) {
    const Job& j = g.jobs[i];
    p.tasks.push_back(run_task(g, j, p.key_task[j.build_key()]));
    std::vector<std::string> r = standalone_sim(g, j);
    r.insert(r.end(), {"--work", (g.out / "failures" / j.name / "repro").string()});
    p.results[i].job = j;
    p.results[i].repro = "cd " + quote(g.cwd) + " && " + join_cmd(r);
    p.results[i].log = p.tasks.back().log;
  }
  return p;
}

regress::SlurmOptions slurm_options(const Args& args, const Regression& g, int wait_timeout_s) {
  regress::SlurmOptions s;
  s.partition = args.get_opt("slurm-partition").value_or("");
  s.account = args.get_opt("slurm-account").value_or("");
  s.time = args.get_opt("slurm-time").value_or("");
  std::istringstream extra(args.get_opt("slurm-extra").value_or(""));
  for (std::string w; extra >> w;) s.extra.push_back(w);
  s.job_name = "capsgen-" + g.list.name;
  s.dir = (g.out / "slurm").string();
  s.cwd = g.cwd;
  s.wait_timeout_s = wait_timeout_s;
  return s;
}

void print_dry_run(const Regression& g, const Plan& p, bool slurm, const regress::SlurmOptions& sopt) {
  fmt::print("capsgen regress {}: {} jobs, {} model builds (dry run)\n", g.list.name, g.jobs.size(), p.keys.size());
  for (const Task& t : p.tasks) fmt::print("  {}\n", join_cmd(t.argv));
  if (slurm)
    fmt::print("--slurm: {} build job(s), then {} job array(s) of the runs, each after its model's build; sbatch options: {}\n",
               p.keys.size(), p.keys.size(), join_cmd(regress::sbatch_common(sopt)));
}

// Before anything is written: Slurm's client commands exist and sbatch accepts the options.
void check_slurm_client(const regress::SlurmOptions& sopt) {
  for (const char* c : {"sbatch", "squeue", "scancel"})
    if (regress::find_on_path(c).empty())
      throw InputError("capsgen regress", 0, 0, "--slurm", fmt::format("{} not found on PATH (Slurm's client commands are needed)", c));
  std::vector<std::string> a = {"sbatch", "--test-only", "--job-name=" + sopt.job_name, "--chdir=" + sopt.cwd};
  for (const std::string& o : regress::sbatch_common(sopt)) a.push_back(o);
  a.insert(a.end(), {"--wrap", "true"});
  std::string o;
  if (regress::run_capture(a, o) != 0) {
    while (!o.empty() && (o.back() == '\n' || o.back() == ' ')) o.pop_back();
    for (std::size_t k; (k = o.find('\n')) != std::string::npos;) o.replace(k, 1, "; ");
    throw InputError("capsgen regress", 0, 0, "--slurm", fmt::format("sbatch refuses the jobs' options: {} ({})", o, join_cmd(a)));
  }
}

// Output directory: earlier results are replaced, earlier builds reused; the random presets written.
void prepare_out_dir(const Regression& g, const FileNames& names) {
  std::error_code ec;
  fs::create_directories(g.out / "builds", ec);
  if (ec) throw InputError(g.out.string(), 0, 0, "--out", "cannot create directory: " + ec.message());
  for (const char* d : {"runs", "failures", "coverage", "slurm"}) fs::remove_all(g.out / d, ec);
  for (const char* f : {"summary.md", "summary.json", "junit.xml", "coverage.md", "coverage.json"}) fs::remove(g.out / f, ec);
  for (const Job& j : g.jobs) fs::create_directories(g.out / "runs" / j.name, ec);
  for (const auto& [seed, yaml] : names.randoms()) {
    fs::create_directories(g.out / "configs", ec);
    write_file_atomic((g.out / "configs" / fmt::format("random-{}.yaml", seed)).string(), yaml);
  }
}

// The live progress line on stderr (rewritten in place on a terminal, else one line every 30 s) and
// the messages between its updates.
class Progress {
 public:
  Progress(const Regression& g, std::size_t builds, Clock::time_point t0)
      : name_(g.list.name), runs_(g.jobs.size()), builds_(builds), slots_(g.slots), t0_(t0) {}

  void build_done(double seconds) {
    ++builds_done_;
    build_time_ += seconds;
  }
  void run_done(const JobResult& r) {
    ++runs_done_;
    run_time_ += r.seconds;
    if (r.status != Status::kInterrupted) (r.ok() ? passed_ : failed_)++;
  }
  // A message of its own line (the progress line cleared first on a terminal).
  void say(const std::string& line) const {
    if (tty_) fmt::print(stderr, "\r{:<110}\r", "");
    fmt::print(stderr, "{}\n", line);
  }
  void show(bool final_line) {
    const double el = std::chrono::duration<double>(Clock::now() - t0_).count();
    const int runs_left = static_cast<int>(runs_) - runs_done_, builds_left = static_cast<int>(builds_) - builds_done_;
    std::string eta = "?";
    if (runs_done_ > 0 && (builds_left == 0 || builds_done_ > 0))
      eta = fmt_time((runs_left * run_time_ / runs_done_ + (builds_done_ ? builds_left * build_time_ / builds_done_ : 0)) / slots_);
    const std::string line = fmt::format("[regress {}] {}/{} done, {} passed, {} failed; builds {}/{}; elapsed {}, ~{} left",
                                         name_, runs_done_, runs_, passed_, failed_, builds_done_, builds_, fmt_time(el), eta);
    if (tty_) {
      fmt::print(stderr, "\r{:<110}{}", line, final_line ? "\n" : "");
    } else if (final_line || Clock::now() - last_plain_ > std::chrono::seconds(30)) {
      last_plain_ = Clock::now();
      fmt::print(stderr, "{}\n", line);
    }
    std::fflush(stderr);
  }

 private:
  std::string name_;
  std::size_t runs_, builds_;
  int slots_;
  Clock::time_point t0_;
  bool tty_ = isatty(2);
  int builds_done_ = 0, runs_done_ = 0, passed_ = 0, failed_ = 0;
  double build_time_ = 0, run_time_ = 0;
  Clock::time_point last_plain_ = Clock::now();
};

// The run's report.json, if it wrote one that parses.
std::optional<nlohmann::ordered_json> read_report(const fs::path& run_dir) {
  try {
    if (fs::exists(run_dir / "report.json")) return nlohmann::ordered_json::parse(slurp(run_dir / "report.json"));
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

void take_report(JobResult& r, const nlohmann::ordered_json& rep) {
  r.problems = rep.value("problems", std::vector<std::string>{});
  r.cycles = rep.value("total_cycles", 0LL);
  r.coverage_dat = rep.value("coverage", std::string());
  r.fcov_na = rep.value("functional_coverage_na", std::vector<std::string>{});
  if (rep.contains("functional_coverage"))
    for (auto it = rep["functional_coverage"].begin(); it != rep["functional_coverage"].end(); ++it) {
      r.fcov[it.key()] = it.value().get<long long>();
      r.fcov_order.push_back(it.key());
    }
}

// A testbench that could not run the program ("FAIL tb accel: ...", "FAIL tb chip: ..."): an error,
// not a mismatch; on capsgen_accel the usual cause is a descriptor the engine cannot run (a "skip"
// line in the program's index.txt; --memory dram has no such file). Empty when there is none.
std::string testbench_error(const JobResult& r, const fs::path& run_dir) {
  std::string tb_error;
  for (const std::string& p : r.problems)
    if (p.rfind("FAIL tb ", 0) == 0 && tb_error.empty()) tb_error = p;
  if (!tb_error.empty() && !r.job.dram()) {
    std::istringstream idx(slurp(run_dir / "program" / "index.txt"));
    for (std::string line; std::getline(idx, line);)
      if (line.rfind("skip ", 0) == 0) {
        tb_error = "the engine cannot run this network on this config: " + line.substr(5) + " (" + tb_error + ")";
        break;
      }
  }
  return tb_error;
}

// The verdict of a run that ended by itself, from its exit status and report.
void judge_finished_run(JobResult& r, const Outcome& o, const fs::path& run_dir) {
  const std::optional<nlohmann::ordered_json> rep = read_report(run_dir);
  if (rep) take_report(r, *rep);
  const std::string tb_error = testbench_error(r, run_dir);
  if (o.exit_code == 0 && rep && rep->value("pass", false)) {
    r.status = Status::kPass;
  } else if (!tb_error.empty()) {
    r.status = Status::kError;
    r.message = tb_error;
  } else if (o.exit_code == 1 && rep && !rep->value("pass", true)) {
    r.status = Status::kFail;
    r.message = r.problems.empty() ? "the run failed (see the report)" : r.problems.front();
  } else {
    r.status = Status::kError;
    r.message = fmt::format("capsgen sim exit status {}: {}", o.exit_code, error_reason(slurp(r.log)));
  }
}

void judge_run(const Regression& g, const Plan& p, JobResult& r, const Outcome& o) {
  r.seconds = o.seconds;
  if (o.dep_failed) {
    const std::string& build_log = p.tasks[p.key_task.at(r.job.build_key())].log;
    r.status = Status::kError;
    r.message = fmt::format("the model build of {} failed: {} ({})", r.job.build_key(), error_reason(slurp(build_log)), build_log);
    r.log = build_log;
  } else if (o.interrupted) {
    r.status = Status::kInterrupted;
  } else if (o.timed_out) {
    r.status = Status::kTimeout;
    r.message = fmt::format("no result within the list's timeout of {} s", g.list.timeout_s);
  } else {
    judge_finished_run(r, o, g.out / "runs" / r.job.name);
  }
}

// A task has ended: counts it, reports a failed build or a run that is not ok, and updates the progress line.
void record_outcome(const Regression& g, Plan& p, const std::vector<Outcome>& outcomes, std::size_t ti, Progress& progress) {
  const Outcome& o = outcomes[ti];
  if (ti < p.first_run) {
    progress.build_done(o.seconds);
    if (o.started && o.exit_code != 0 && !o.interrupted)
      progress.say(fmt::format("[regress {}] model build {} failed (exit status {}): {}", g.list.name, p.keys[ti], o.exit_code,
                               p.tasks[ti].log));
  } else {
    JobResult& r = p.results[ti - p.first_run];
    judge_run(g, p, r, o);
    progress.run_done(r);
    if (!r.ok() && r.status != Status::kInterrupted)
      progress.say(fmt::format("[regress {}] {} {}: {}", g.list.name, verdict(r), r.job.name, r.message));
  }
  progress.show(false);
}

// Runs the plan's tasks, locally or as Slurm jobs: whether they all got to run (false when interrupted), or
// nothing when Slurm failed (reported).
std::optional<bool> run_plan(const Regression& g, Plan& p, bool slurm, const regress::SlurmOptions& sopt,
                            std::vector<Outcome>& outcomes, Progress& progress) {
  const auto on_finish = [&](std::size_t ti) { record_outcome(g, p, outcomes, ti, progress); };
  const auto tick = [&] { progress.show(false); };
  if (!slurm) return run_tasks(p.tasks, g.slots, outcomes, on_finish, tick);
  try {
    return regress::run_tasks_slurm(
        p.tasks, sopt, outcomes, on_finish, tick, [] { return interrupted(); },
        [&](const std::string& m) { progress.say(fmt::format("[regress {}] slurm: {}", g.list.name, m)); });
  } catch (const regress::SlurmError& e) {
    fmt::print(stderr, "capsgen regress: error: --slurm: {}\n", e.what());
    return std::nullopt;
  }
}

// The jobs whose run never started (and not for a failed build) are not run.
void mark_not_run(Plan& p, const std::vector<Outcome>& outcomes) {
  for (std::size_t i = 0; i < p.results.size(); ++i)
    if (!outcomes[p.first_run + i].started && !outcomes[p.first_run + i].dep_failed) p.results[i].status = Status::kNotRun;
}

int count_failed_builds(const Plan& p, const std::vector<Outcome>& outcomes) {
  int failed = 0;
  for (std::size_t i = 0; i < p.first_run; ++i)
    failed += outcomes[i].started && outcomes[i].exit_code != 0 && !outcomes[i].interrupted;
  return failed;
}

// failures/JOB/repro.sh: the job alone, with the faster command on the regression's model in a comment.
std::string repro_script(const Regression& g, const JobResult& r, const fs::path& f) {
  std::string sh = "#!/bin/sh\n# capsgen regress " + g.list.name + ": job " + r.job.name + " (" + verdict(r) + ")\n";
  if (!r.message.empty()) sh += "# " + r.message + "\n";
  if (r.job.random_seed >= 0)
    sh += fmt::format("# {} is the random preset of capsgen generate --random-config {} --config FILE\n",
                      r.job.config_path, r.job.random_seed);
  sh += "# Reproduces the job alone: generates the RTL and builds its own model (minutes); arguments are\n"
        "# appended (e.g. --trace FILE.fst for a waveform and its .gtkw). Faster, on the regression's model:\n";
  std::vector<std::string> fast = sim_args(r.job);
  fast.insert(fast.begin(), g.exe);
  fast.insert(fast.end(), {"--work", (f / "repro-fast").string(), "--build", g.model_dir(r.job).string()});
  if (g.covers(r.job)) fast.push_back("--coverage");
  sh += "#   cd " + quote(g.cwd) + " && " + join_cmd(fast) + "\n";
  sh += "set -e\n" + r.repro + " \"$@\"\n";
  return sh;
}

// failures/JOB/: the run's log and reports and repro.sh; the result's log becomes the copy.
void write_failure_folder(const Regression& g, JobResult& r) {
  std::error_code ec;
  const fs::path f = g.out / "failures" / r.job.name, run_dir = g.out / "runs" / r.job.name;
  fs::create_directories(f, ec);
  fs::copy_file(r.log, f / "log.txt", fs::copy_options::overwrite_existing, ec);
  for (const char* n : {"report.md", "report.json", "sim.log"})
    if (fs::exists(run_dir / n)) fs::copy_file(run_dir / n, f / n, fs::copy_options::overwrite_existing, ec);
  write_file_atomic((f / "repro.sh").string(), repro_script(g, r, f));
  fs::permissions(f / "repro.sh", fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                  fs::perm_options::add, ec);
  r.log = (f / "log.txt").string();
}

// Failure folders: every job whose run did not pass (also the caught faults: their repro must fail).
// Returns the first trace_max failed runs (mismatches), the ones --trace reruns.
std::vector<std::size_t> write_failure_folders(const Regression& g, std::vector<JobResult>& results, int trace_max) {
  std::vector<std::size_t> to_trace;
  for (std::size_t i = 0; i < results.size(); ++i) {
    JobResult& r = results[i];
    if (r.status == Status::kPass || r.status == Status::kNotRun || r.status == Status::kInterrupted) continue;
    write_failure_folder(g, r);
    if (r.status == Status::kFail && static_cast<int>(to_trace.size()) < trace_max) to_trace.push_back(i);
  }
  return to_trace;
}

// --trace: reruns failures with tracing (each builds a tracing model of its RTL): failures/JOB/JOB.fst.
void trace_failures(const Regression& g, const std::vector<JobResult>& results, const std::vector<std::size_t>& to_trace) {
  std::vector<Task> tt;
  std::vector<fs::path> fsts;
  for (std::size_t i : to_trace) {
    const Job& j = results[i].job;
    const fs::path f = g.out / "failures" / j.name;
    std::vector<std::string> a = standalone_sim(g, j);
    a.insert(a.end(), {"--work", (f / "trace-run").string(), "--trace", (f / (j.name + ".fst")).string(), "--jobs",
                       std::to_string(jobs_each(g.slots, to_trace.size())), "--source-dir", g.src});
    tt.push_back({a, (f / "trace.log").string(), 0, {}, j.name, 1});
    fsts.push_back(f / (j.name + ".fst"));
  }
  fmt::print(stderr, "[regress {}] rerunning {} failure(s) with tracing\n", g.list.name, tt.size());
  std::vector<Outcome> to;
  run_tasks(tt, g.slots, to, [&](std::size_t k) {
    const fs::path& fst = fsts[k];
    fmt::print(stderr, "[regress {}] trace of {}: {}\n", g.list.name, results[to_trace[k]].job.name,
               fs::exists(fst) ? fst.string() + " (+ .gtkw)" : "no FST, see " + tt[k].log);
  }, [] {});
}

// Merges the runs' Verilator coverage files into OUT/coverage/merged.dat (and its annotated sources);
// fills the lines and toggles per module. Returns the note the coverage report shows.
std::string merge_verilator_coverage(const fs::path& out, const std::vector<std::string>& dats,
                                     std::map<std::string, ModuleCoverage>& modules) {
  if (dats.empty()) return "no Verilator coverage file from any run";
  const fs::path merged = out / "coverage" / "merged.dat";
  std::string cmd = "verilator_coverage --write " + quote(merged.string());
  for (const std::string& d : dats) cmd += " " + quote(d);
  cmd += " > " + quote((out / "coverage" / "merge.log").string()) + " 2>&1";
  const int rc1 = std::system(cmd.c_str());
  const int rc2 = std::system(("verilator_coverage --annotate " + quote((out / "coverage" / "annotated").string()) +
                               " --annotate-min 1 " + quote(merged.string()) + " >> " +
                               quote((out / "coverage" / "merge.log").string()) + " 2>&1").c_str());
  if (rc1 != 0 || !fs::exists(merged)) return "verilator_coverage could not merge the runs' coverage (coverage/merge.log)";
  modules = coverage_by_module(parse_coverage_dat(slurp(merged)));
  return fmt::format("{} coverage file(s) merged by verilator_coverage{}", dats.size(),
                     rc2 != 0 ? "; annotating failed (coverage/merge.log)" : "");
}

// OUT/coverage.md and coverage.json: the functional coverage of the runs of the RTL as generated and
// their merged Verilator coverage; counts the dram runs among them in info.
void write_coverage(const Regression& g, const std::vector<JobResult>& results, RunInfo& info) {
  FunctionalCoverage fc;
  std::vector<std::string> dats;
  int runs = 0;
  for (const JobResult& r : results) {
    if (!r.job.fault.empty() || r.fcov.empty()) continue;
    fc.add(r.fcov, r.fcov_na, r.fcov_order);
    ++runs;
    info.dram_runs += r.job.dram();
    if (!r.coverage_dat.empty() && fs::exists(r.coverage_dat)) dats.push_back(r.coverage_dat);
  }
  std::error_code ec;
  fs::create_directories(g.out / "coverage", ec);
  std::map<std::string, ModuleCoverage> modules;
  const std::string note = merge_verilator_coverage(g.out, dats, modules);
  write_file_atomic((g.out / "coverage.md").string(), coverage_markdown(info, modules, fc, runs, note));
  write_file_atomic((g.out / "coverage.json").string(), coverage_json(modules, fc, runs, note));
}

// OUT/summary.md (also printed), summary.json and junit.xml. Returns the command's exit status.
int write_summaries(const Regression& g, const std::vector<JobResult>& results, RunInfo& info, Clock::time_point t0) {
  info.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  const std::string md = summary_markdown(info, results);
  write_file_atomic((g.out / "junit.xml").string(), junit_xml(g.list.name, results, info.interrupted));
  write_file_atomic((g.out / "summary.json").string(), summary_json(info, results));
  write_file_atomic((g.out / "summary.md").string(), md);
  fmt::print("{}\nregress: wrote {}/summary.md, summary.json, junit.xml{}\n", md, g.out.string(),
             g.coverage ? ", coverage.md, coverage.json" : "");
  if (info.interrupted) return 130;
  const Totals t = totals(results);
  return t.passed == t.jobs ? 0 : 1;
}

}  // namespace

int cmd_regress(const std::vector<std::string>& argv) {
  Args args("regress", "LIST.yaml [-j N] [options]",
            "Runs a regression list (tests/regress/*.yaml, docs/regress.md): presets and seeded random configs x\n"
            "networks x seeds (x fetch models x memory: ideal, or dram for the chip with the network in a DDR3\n"
            "model), each a whole inference on the generated RTL (capsgen sim) compared bit for bit\n"
            "with the golden model. Each distinct model is built once and shared by its jobs; the jobs run in\n"
            "parallel. Writes OUT/summary.md, summary.json, junit.xml, failures/JOB/ (log, report, repro.sh)\n"
            "and with coverage OUT/coverage.md and coverage.json. Exit status 0 only if every job passed (a\n"
            "job with 'expect: fail' passes when its run fails), 1 otherwise, 2 on bad input, 130 when\n"
            "interrupted (the summaries are still written).");
  declare_options(args);
  if (!args.parse(make_style_jobs(argv))) {
    fmt::print("{}", args.help());
    return 0;
  }
  const Options opt = read_options(args);
  const auto t0 = Clock::now();

  // 1. The list and its jobs, checked before anything is built or written.
  Regression g;
  g.list = load_regress_list(opt.list_path, ".");
  g.out = fs::absolute(args.get_opt("out").value_or("build/regress/" + g.list.name));
  g.coverage = g.list.coverage || opt.coverage;
  FileNames names(g.out);
  g.jobs = select_jobs(g.list, names, args.get_int("max-jobs", 1, 1LL << 40), opt.filter);
  g.exe = self_exe();
  g.src = opt.source_dir;
  g.cwd = fs::current_path().string();
  g.slots = opt.slots;
  Plan plan = plan_tasks(g);
  regress::SlurmOptions sopt;
  if (opt.slurm) sopt = slurm_options(args, g, opt.slurm_timeout);
  if (opt.dry_run) {
    print_dry_run(g, plan, opt.slurm, sopt);
    return 0;
  }
  if (opt.slurm) check_slurm_client(sopt);
  prepare_out_dir(g, names);
  catch_interrupts();
  fmt::print(stderr, "capsgen regress {}: {} jobs, {} model build(s), {}{}; output in {}\n", g.list.name, g.jobs.size(),
             plan.keys.size(), opt.slurm ? "as Slurm jobs" : fmt::format("-j {}", g.slots), g.coverage ? ", coverage on" : "",
             g.out.string());

  // 2, 3. The model builds and the runs.
  Progress progress(g, plan.keys.size(), t0);
  std::vector<Outcome> outcomes;
  const std::optional<bool> completed = run_plan(g, plan, opt.slurm, sopt, outcomes, progress);
  if (!completed) return 2;
  progress.show(true);
  mark_not_run(plan, outcomes);

  // 4. The failures, the coverage and the summaries.
  const std::vector<std::size_t> to_trace = write_failure_folders(g, plan.results, opt.trace_max);
  if (opt.trace && *completed && !to_trace.empty()) trace_failures(g, plan.results, to_trace);
  RunInfo info{g.list.file, g.list.name, g.out.string(), g.slots, 0, !*completed || interrupted(), g.coverage,
               static_cast<int>(plan.keys.size()), count_failed_builds(plan, outcomes), 0};
  info.slurm = opt.slurm;
  if (g.coverage) write_coverage(g, plan.results, info);
  return write_summaries(g, plan.results, info, t0);
}

}  // namespace capsgen::cli
