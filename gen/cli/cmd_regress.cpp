// capsgen regress LIST.yaml: a regression of whole inferences on the generated RTL (docs/regress.md).
//   1. reads the list (cli/regress_list.hpp) and checks every preset and network before anything is
//      built (bad input: exit status 2, nothing written),
//   2. builds each distinct model once (config x memory x fault: `capsgen sim --build-only`, OUT/builds/KEY;
//      `memory: dram` jobs run capsgen_chip with the network in a DDR3 model, `capsgen sim --memory dram`),
//   3. runs every job as `capsgen sim --build OUT/builds/KEY/...` in parallel (-j N; cli/regress_pool.hpp),
//      each in OUT/runs/JOB, bit-exact against the golden model,
//   4. writes OUT/summary.md, summary.json, junit.xml, failures/JOB/ (log, reports, repro.sh with the
//      command that reproduces the job alone), with --trace an FST and .gtkw of each failure, and with
//      coverage the merged Verilator coverage (verilator_coverage) and the functional coverage per bin.
// A live progress line goes to stderr. Ctrl-C stops the workers and still writes the summaries.
// With --slurm, step 2 and 3 are Slurm jobs instead of local processes (cli/regress_slurm.hpp): the same
// commands, one build job per model and one job array of its runs after it; step 4 is the same code.
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "cli/shell.hpp"
#include "cli/regress_coverage.hpp"
#include "cli/regress_junit.hpp"
#include "cli/regress_list.hpp"
#include "cli/regress_pool.hpp"
#include "cli/regress_report.hpp"
#include "cli/regress_slurm.hpp"
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

}  // namespace

int cmd_regress(const std::vector<std::string>& argv_in) {
  // -j N and -jN as in make.
  std::vector<std::string> argv;
  for (std::size_t i = 0; i < argv_in.size(); ++i) {
    if (argv_in[i] == "-j") argv.push_back("--jobs");
    else if (argv_in[i].rfind("-j", 0) == 0 && argv_in[i].size() > 2 && argv_in[i][2] != '-')
      argv.insert(argv.end(), {"--jobs", argv_in[i].substr(2)});
    else argv.push_back(argv_in[i]);
  }
  Args args("regress", "LIST.yaml [-j N] [options]",
            "Runs a regression list (tests/regress/*.yaml, docs/regress.md): presets and seeded random configs x\n"
            "networks x seeds (x fetch models x memory: ideal, or dram for the chip with the network in a DDR3\n"
            "model), each a whole inference on the generated RTL (capsgen sim) compared bit for bit\n"
            "with the golden model. Each distinct model is built once and shared by its jobs; the jobs run in\n"
            "parallel. Writes OUT/summary.md, summary.json, junit.xml, failures/JOB/ (log, report, repro.sh)\n"
            "and with coverage OUT/coverage.md and coverage.json. Exit status 0 only if every job passed (a\n"
            "job with 'expect: fail' passes when its run fails), 1 otherwise, 2 on bad input, 130 when\n"
            "interrupted (the summaries are still written).");
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
  if (!args.parse(argv)) {
    fmt::print("{}", args.help());
    return 0;
  }
  if (args.positional().size() != 1)
    throw InputError("capsgen regress", 0, 0, "LIST.yaml",
                     args.positional().empty() ? "a regression list is required" : "expected one regression list");
  const auto t0 = Clock::now();
  const std::string list_path = args.positional().front();
  const int slots = static_cast<int>(args.get_int("jobs", 1, 64));
  const int trace_max = static_cast<int>(args.get_int("trace-max", 0, 1000));
  std::optional<std::regex> filter;
  if (auto f = args.get_opt("filter")) {
    try {
      filter = std::regex(*f);
    } catch (const std::regex_error& e) {
      throw InputError("capsgen regress", 0, 0, "--filter", fmt::format("bad regular expression '{}': {}", *f, e.what()));
    }
  }
  const bool slurm = args.has("slurm");
  for (const char* o : {"slurm-partition", "slurm-account", "slurm-time", "slurm-extra"})
    if (args.get_opt(o) && !slurm)
      throw InputError("capsgen regress", 0, 0, std::string("--") + o, "only with --slurm");
  const int slurm_timeout = static_cast<int>(args.get_int("slurm-timeout", 0, 100000000));
  const RegressList list = load_regress_list(list_path, ".");
  const fs::path out = fs::absolute(args.get_opt("out").value_or("build/regress/" + list.name));
  const bool coverage = list.coverage || args.has("coverage");
  FileNames names(out);
  std::vector<Job> jobs = expand_jobs(list, names, args.get_int("max-jobs", 1, 1LL << 40));
  {  // a name must mean one preset: two files of one name would share a build
    std::map<std::string, std::string> by_name;
    for (const Job& j : jobs)
      if (auto [it, fresh] = by_name.emplace(j.config_name, j.config_path); !fresh && it->second != j.config_path)
        throw InputError(list.file, j.line, 0, "configs",
                         fmt::format("presets {} and {} are both named '{}'", it->second, j.config_path, j.config_name));
  }
  if (filter) std::erase_if(jobs, [&](const Job& j) { return !std::regex_search(j.name, *filter); });
  if (jobs.empty()) throw InputError(list.file, 0, 0, "--filter", "no job left to run");

  // Builds: one per config x memory x fault, in the order of their first job.
  const std::string exe = self_exe(), src = args.get("source-dir");
  std::vector<std::string> keys;
  std::map<std::string, std::size_t> key_task;
  std::map<std::string, const Job*> key_job;
  for (const Job& j : jobs)
    if (!key_job.count(j.build_key())) {
      key_job[j.build_key()] = &j;
      keys.push_back(j.build_key());
    }
  const int build_jobs = std::max(1, slots / std::max(1, std::min<int>(slots, static_cast<int>(keys.size()))));
  std::vector<Task> tasks;
  for (const std::string& key : keys) {
    const Job& j = *key_job[key];
    std::vector<std::string> a = {exe, "sim", "--config", j.config_path, "--model", j.network_path, "--work",
                                  (out / "builds" / key).string(), "--build-only", "--jobs", std::to_string(build_jobs),
                                  "--source-dir", src};
    if (j.dram()) a.insert(a.end(), {"--memory", "dram"});
    if (coverage && j.fault.empty()) a.push_back("--coverage");
    if (!j.fault.empty()) a.insert(a.end(), {"--fault", j.fault});
    key_task[key] = tasks.size();
    tasks.push_back({a, (out / "builds" / (key + ".log")).string(), 0, {}, key, build_jobs});
  }
  const std::size_t first_run = tasks.size();
  std::vector<JobResult> results(jobs.size());
  const std::string cwd = fs::current_path().string();
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const Job& j = jobs[i];
    const bool cov = coverage && j.fault.empty();  // a deliberately broken RTL's coverage is not the design's
    const fs::path build = out / "builds" / j.build_key() / build_dir_name(j, cov);
    std::vector<std::string> a = sim_args(j);
    a.insert(a.begin(), exe);
    a.insert(a.end(), {"--work", (out / "runs" / j.name).string(), "--build", build.string(), "--source-dir", src});
    if (cov) a.push_back("--coverage");
    tasks.push_back({a, (out / "runs" / j.name / "run.log").string(), list.timeout_s, {key_task[j.build_key()]}, j.name, 1});
    // The command that reproduces the job alone: generates and builds its own model.
    std::vector<std::string> r = sim_args(j);
    r.insert(r.begin(), exe);
    if (!j.fault.empty()) r.insert(r.end(), {"--fault", j.fault});
    r.insert(r.end(), {"--work", (out / "failures" / j.name / "repro").string()});
    results[i].job = j;
    results[i].repro = "cd " + quote(cwd) + " && " + join_cmd(r);
    results[i].log = tasks.back().log;
  }
  regress::SlurmOptions sopt;
  if (slurm) {
    sopt.partition = args.get_opt("slurm-partition").value_or("");
    sopt.account = args.get_opt("slurm-account").value_or("");
    sopt.time = args.get_opt("slurm-time").value_or("");
    std::istringstream extra(args.get_opt("slurm-extra").value_or(""));
    for (std::string w; extra >> w;) sopt.extra.push_back(w);
    sopt.job_name = "capsgen-" + list.name;
    sopt.dir = (out / "slurm").string();
    sopt.cwd = cwd;
    sopt.wait_timeout_s = slurm_timeout;
  }
  if (args.has("dry-run")) {
    fmt::print("capsgen regress {}: {} jobs, {} model builds (dry run)\n", list.name, jobs.size(), keys.size());
    for (const Task& t : tasks) fmt::print("  {}\n", join_cmd(t.argv));
    if (slurm)
      fmt::print("--slurm: {} build job(s), then {} job array(s) of the runs, each after its model's build; sbatch options: {}\n",
                 keys.size(), keys.size(), join_cmd(regress::sbatch_common(sopt)));
    return 0;
  }
  if (slurm) {
    // Before anything is written: the commands exist and sbatch accepts the options.
    for (const char* c : {"sbatch", "squeue", "scancel"})
      if (regress::find_on_path(c).empty())
        throw InputError("capsgen regress", 0, 0, "--slurm", fmt::format("{} not found on PATH (Slurm's client commands are needed)", c));
    std::vector<std::string> a = {"sbatch", "--test-only", "--job-name=" + sopt.job_name, "--chdir=" + cwd};
    for (const std::string& o : regress::sbatch_common(sopt)) a.push_back(o);
    a.insert(a.end(), {"--wrap", "true"});
    std::string o;
    if (regress::run_capture(a, o) != 0) {
      while (!o.empty() && (o.back() == '\n' || o.back() == ' ')) o.pop_back();
      for (std::size_t k; (k = o.find('\n')) != std::string::npos;) o.replace(k, 1, "; ");
      throw InputError("capsgen regress", 0, 0, "--slurm", fmt::format("sbatch refuses the jobs' options: {} ({})", o, join_cmd(a)));
    }
  }

  // Output directory: earlier results are replaced, earlier builds reused.
  std::error_code ec;
  fs::create_directories(out / "builds", ec);
  if (ec) throw InputError(out.string(), 0, 0, "--out", "cannot create directory: " + ec.message());
  for (const char* d : {"runs", "failures", "coverage", "slurm"}) fs::remove_all(out / d, ec);
  for (const char* f : {"summary.md", "summary.json", "junit.xml", "coverage.md", "coverage.json"}) fs::remove(out / f, ec);
  for (const Job& j : jobs) fs::create_directories(out / "runs" / j.name, ec);
  for (const auto& [seed, yaml] : names.randoms()) {
    fs::create_directories(out / "configs", ec);
    write_file_atomic((out / "configs" / fmt::format("random-{}.yaml", seed)).string(), yaml);
  }
  catch_interrupts();
  fmt::print(stderr, "capsgen regress {}: {} jobs, {} model build(s), {}{}; output in {}\n", list.name, jobs.size(),
             keys.size(), slurm ? "as Slurm jobs" : fmt::format("-j {}", slots), coverage ? ", coverage on" : "", out.string());

  // Progress.
  const bool tty = isatty(2);
  int builds_done = 0, runs_done = 0, passed = 0, failed = 0;
  double build_time = 0, run_time = 0;
  auto last_plain = Clock::now();
  std::vector<Outcome> outcomes;
  auto progress = [&](bool final_line) {
    const double el = std::chrono::duration<double>(Clock::now() - t0).count();
    const int runs_left = static_cast<int>(jobs.size()) - runs_done, builds_left = static_cast<int>(keys.size()) - builds_done;
    std::string eta = "?";
    if (runs_done > 0 && (builds_left == 0 || builds_done > 0))
      eta = fmt_time((runs_left * run_time / runs_done + (builds_done ? builds_left * build_time / builds_done : 0)) / slots);
    const std::string line = fmt::format("[regress {}] {}/{} done, {} passed, {} failed; builds {}/{}; elapsed {}, ~{} left",
                                         list.name, runs_done, jobs.size(), passed, failed, builds_done, keys.size(),
                                         fmt_time(el), eta);
    if (tty) {
      fmt::print(stderr, "\r{:<110}{}", line, final_line ? "\n" : "");
    } else if (final_line || Clock::now() - last_plain > std::chrono::seconds(30)) {
      last_plain = Clock::now();
      fmt::print(stderr, "{}\n", line);
    }
    std::fflush(stderr);
  };
  auto classify = [&](std::size_t ti) {
    const Outcome& o = outcomes[ti];
    if (ti < first_run) {
      ++builds_done;
      build_time += o.seconds;
      if (o.started && o.exit_code != 0 && !o.interrupted) {
        if (tty) fmt::print(stderr, "\r{:<110}\r", "");
        fmt::print(stderr, "[regress {}] model build {} failed (exit status {}): {}\n", list.name, keys[ti], o.exit_code,
                   tasks[ti].log);
      }
      progress(false);
      return;
    }
    JobResult& r = results[ti - first_run];
    const fs::path run_dir = out / "runs" / r.job.name;
    r.seconds = o.seconds;
    if (o.dep_failed) {
      const std::size_t b = key_task[r.job.build_key()];
      r.status = Status::kError;
      r.message = fmt::format("the model build of {} failed: {} ({})", r.job.build_key(), error_reason(slurp(tasks[b].log)),
                              tasks[b].log);
      r.log = tasks[b].log;
    } else if (o.interrupted) {
      r.status = Status::kInterrupted;
    } else if (o.timed_out) {
      r.status = Status::kTimeout;
      r.message = fmt::format("no result within the list's timeout of {} s", list.timeout_s);
    } else {
      nlohmann::ordered_json rep;
      bool have = false;
      try {
        if (fs::exists(run_dir / "report.json")) {
          rep = nlohmann::ordered_json::parse(slurp(run_dir / "report.json"));
          have = true;
        }
      } catch (const std::exception&) {
        have = false;
      }
      if (have) {
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
      // line in the program's index.txt; --memory dram has no such file).
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
      if (o.exit_code == 0 && have && rep.value("pass", false)) {
        r.status = Status::kPass;
      } else if (!tb_error.empty()) {
        r.status = Status::kError;
        r.message = tb_error;
      } else if (o.exit_code == 1 && have && !rep.value("pass", true)) {
        r.status = Status::kFail;
        r.message = r.problems.empty() ? "the run failed (see the report)" : r.problems.front();
      } else {
        r.status = Status::kError;
        r.message = fmt::format("capsgen sim exit status {}: {}", o.exit_code, error_reason(slurp(r.log)));
      }
    }
    ++runs_done;
    run_time += o.seconds;
    if (r.status != Status::kInterrupted) (r.ok() ? passed : failed)++;
    if (!r.ok() && r.status != Status::kInterrupted) {
      if (tty) fmt::print(stderr, "\r{:<110}\r", "");
      fmt::print(stderr, "[regress {}] {} {}: {}\n", list.name, verdict(r), r.job.name, r.message);
    }
    progress(false);
  };
  bool completed = false;
  if (slurm) {
    try {
      completed = regress::run_tasks_slurm(
          tasks, sopt, outcomes, classify, [&] { progress(false); }, [] { return interrupted(); },
          [&](const std::string& m) {
            if (tty) fmt::print(stderr, "\r{:<110}\r", "");
            fmt::print(stderr, "[regress {}] slurm: {}\n", list.name, m);
          });
    } catch (const regress::SlurmError& e) {
      fmt::print(stderr, "capsgen regress: error: --slurm: {}\n", e.what());
      return 2;
    }
  } else {
    completed = run_tasks(tasks, slots, outcomes, classify, [&] { progress(false); });
  }
  progress(true);
  for (std::size_t i = 0; i < jobs.size(); ++i)
    if (!outcomes[first_run + i].started && !outcomes[first_run + i].dep_failed) results[i].status = Status::kNotRun;
  int builds_failed = 0;
  for (std::size_t i = 0; i < first_run; ++i)
    builds_failed += outcomes[i].started && outcomes[i].exit_code != 0 && !outcomes[i].interrupted;

  // Failure folders: every job whose run did not pass (also the caught faults: their repro must fail).
  std::vector<std::size_t> to_trace;
  for (JobResult& r : results) {
    if (r.status == Status::kPass || r.status == Status::kNotRun || r.status == Status::kInterrupted) continue;
    const fs::path f = out / "failures" / r.job.name, run_dir = out / "runs" / r.job.name;
    fs::create_directories(f, ec);
    fs::copy_file(r.log, f / "log.txt", fs::copy_options::overwrite_existing, ec);
    for (const char* n : {"report.md", "report.json", "sim.log"})
      if (fs::exists(run_dir / n)) fs::copy_file(run_dir / n, f / n, fs::copy_options::overwrite_existing, ec);
    std::string sh = "#!/bin/sh\n# capsgen regress " + list.name + ": job " + r.job.name + " (" + verdict(r) + ")\n";
    if (!r.message.empty()) sh += "# " + r.message + "\n";
    if (r.job.random_seed >= 0)
      sh += fmt::format("# {} is the random preset of capsgen generate --random-config {} --config FILE\n",
                        r.job.config_path, r.job.random_seed);
    sh += "# Reproduces the job alone: generates the RTL and builds its own model (minutes); arguments are\n"
          "# appended (e.g. --trace FILE.fst for a waveform and its .gtkw). Faster, on the regression's model:\n";
    {
      const bool cov = coverage && r.job.fault.empty();
      std::vector<std::string> fast = sim_args(r.job);
      fast.insert(fast.begin(), exe);
      fast.insert(fast.end(), {"--work", (f / "repro-fast").string(), "--build",
                               (out / "builds" / r.job.build_key() / build_dir_name(r.job, cov)).string()});
      if (cov) fast.push_back("--coverage");
      sh += "#   cd " + quote(cwd) + " && " + join_cmd(fast) + "\n";
    }
    sh += "set -e\n" + r.repro + " \"$@\"\n";
    write_file_atomic((f / "repro.sh").string(), sh);
    fs::permissions(f / "repro.sh", fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                    fs::perm_options::add, ec);
    r.log = (f / "log.txt").string();
    if (r.status == Status::kFail && static_cast<int>(to_trace.size()) < trace_max) to_trace.push_back(&r - results.data());
  }

  // --trace: rerun failures with tracing (each builds a tracing model of its RTL).
  if (args.has("trace") && completed && !to_trace.empty()) {
    std::vector<Task> tt;
    std::vector<fs::path> fsts;
    for (std::size_t i : to_trace) {
      const Job& j = results[i].job;
      const fs::path f = out / "failures" / j.name;
      std::vector<std::string> a = sim_args(j);
      a.insert(a.begin(), exe);
      if (!j.fault.empty()) a.insert(a.end(), {"--fault", j.fault});
      a.insert(a.end(), {"--work", (f / "trace-run").string(), "--trace", (f / (j.name + ".fst")).string(),
                         "--jobs", std::to_string(std::max(1, slots / static_cast<int>(std::min<std::size_t>(slots, to_trace.size())))),
                         "--source-dir", src});
      tt.push_back({a, (f / "trace.log").string(), 0, {}, j.name, 1});
      fsts.push_back(f / (j.name + ".fst"));
    }
    fmt::print(stderr, "[regress {}] rerunning {} failure(s) with tracing\n", list.name, tt.size());
    std::vector<Outcome> to;
    run_tasks(tt, slots, to, [&](std::size_t k) {
      const fs::path& fst = fsts[k];
      fmt::print(stderr, "[regress {}] trace of {}: {}\n", list.name, results[to_trace[k]].job.name,
                 fs::exists(fst) ? fst.string() + " (+ .gtkw)" : "no FST, see " + tt[k].log);
    }, [] {});
  }

  // Coverage.
  RunInfo info{list.file, list.name, out.string(), slots, 0, !completed || interrupted(), coverage,
               static_cast<int>(keys.size()), builds_failed, 0};
  info.slurm = slurm;
  if (coverage) {
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
    std::map<std::string, ModuleCoverage> modules;
    std::string note;
    fs::create_directories(out / "coverage", ec);
    if (!dats.empty()) {
      const fs::path merged = out / "coverage" / "merged.dat";
      std::string cmd = "verilator_coverage --write " + quote(merged.string());
      for (const std::string& d : dats) cmd += " " + quote(d);
      cmd += " > " + quote((out / "coverage" / "merge.log").string()) + " 2>&1";
      const int rc1 = std::system(cmd.c_str());
      const int rc2 = std::system(("verilator_coverage --annotate " + quote((out / "coverage" / "annotated").string()) +
                                   " --annotate-min 1 " + quote(merged.string()) + " >> " +
                                   quote((out / "coverage" / "merge.log").string()) + " 2>&1").c_str());
      if (rc1 != 0 || !fs::exists(merged)) {
        note = "verilator_coverage could not merge the runs' coverage (coverage/merge.log)";
      } else {
        modules = coverage_by_module(parse_coverage_dat(slurp(merged)));
        note = fmt::format("{} coverage file(s) merged by verilator_coverage{}", dats.size(),
                           rc2 != 0 ? "; annotating failed (coverage/merge.log)" : "");
      }
    } else {
      note = "no Verilator coverage file from any run";
    }
    write_file_atomic((out / "coverage.md").string(), coverage_markdown(info, modules, fc, runs, note));
    write_file_atomic((out / "coverage.json").string(), coverage_json(modules, fc, runs, note));
  }

  info.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  const std::string md = summary_markdown(info, results);
  write_file_atomic((out / "junit.xml").string(), junit_xml(list.name, results, info.interrupted));
  write_file_atomic((out / "summary.json").string(), summary_json(info, results));
  write_file_atomic((out / "summary.md").string(), md);
  fmt::print("{}\nregress: wrote {}/summary.md, summary.json, junit.xml{}\n", md, out.string(),
             coverage ? ", coverage.md, coverage.json" : "");
  if (info.interrupted) return 130;
  const Totals t = totals(results);
  return t.passed == t.jobs ? 0 : 1;
}

}  // namespace capsgen::cli
