#include "regress/slurm.hpp"

#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "core/shell.hpp"
#include "core/atomic_file.hpp"

namespace capsgen::cli::regress {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string join_cmd(const std::vector<std::string>& argv) {
  std::string s;
  for (const std::string& a : argv) s += (s.empty() ? "" : " ") + quote(a);
  return s;
}

// The last non-empty line of a text (trimmed of the newline).
std::string last_line(const std::string& text) {
  std::istringstream in(text);
  std::string last;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) last = line;
  return last;
}

void write_script(const fs::path& p, const std::string& text) {
  write_file_atomic(p.string(), text);
  std::error_code ec;
  fs::permissions(p, fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec, fs::perm_options::add, ec);
}

}  // namespace

std::string array_ranges(const std::vector<std::size_t>& indices) {
  std::string s;
  for (std::size_t i = 0; i < indices.size();) {
    std::size_t k = i;
    while (k + 1 < indices.size() && indices[k + 1] == indices[k] + 1) ++k;
    s += (s.empty() ? "" : ",") +
         (k == i ? std::to_string(indices[i]) : fmt::format("{}-{}", indices[i], indices[k]));
    i = k + 1;
  }
  return s;
}

std::string task_script(const Task& t, const std::string& title, const std::string& cwd, const std::string& rc_file) {
  std::string sh = "#!/bin/sh\n# " + title + "\n# Written by capsgen regress --slurm: runs the command with its log";
  sh += t.timeout_s > 0 ? fmt::format(" and a timeout of {} s", t.timeout_s) : std::string();
  sh += ",\n# then writes \"<exit status> <start> <end>\" to the .rc file the submitting capsgen waits for.\n";
  sh += "cd " + quote(cwd) + " || exit 2\n";
  sh += "rm -f " + quote(rc_file) + " " + quote(rc_file + ".tmp") + "\n";
  sh += "start=$(date +%s.%N)\n";
  // GNU timeout signals the command's whole process group (TERM, KILL 5 s later), as the local pool does.
  sh += (t.timeout_s > 0 ? fmt::format("timeout -k 5 {} ", t.timeout_s) : std::string()) + join_cmd(t.argv) +
        " < /dev/null > " + quote(t.log) + " 2>&1\n";
  sh += "rc=$?\n";
  sh += "end=$(date +%s.%N)\n";
  sh += "echo \"$rc $start $end\" > " + quote(rc_file + ".tmp") + " && mv " + quote(rc_file + ".tmp") + " " +
        quote(rc_file) + "\n";
  sh += "exit $rc\n";
  return sh;
}

std::optional<TaskEnd> parse_rc(const std::string& text, int timeout_s) {
  std::istringstream in(text);
  long long rc = 0;
  double start = 0, end = 0;
  if (!(in >> rc >> start >> end) || rc < 0 || rc > 255) return std::nullopt;
  TaskEnd e;
  e.exit_code = static_cast<int>(rc);
  e.seconds = end >= start ? end - start : 0;
  // timeout(1): 124 when the limit stopped the command, 128+9 when it had to be killed after it.
  e.timed_out = timeout_s > 0 && (rc == 124 || (rc == 137 && e.seconds >= timeout_s));
  return e;
}

std::vector<QueuedJob> parse_squeue(const std::string& text) {
  std::vector<QueuedJob> jobs;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const auto a = line.find('|');
    if (a == std::string::npos) continue;
    const auto b = line.find('|', a + 1);
    QueuedJob j;
    j.id = line.substr(0, a);
    j.state = line.substr(a + 1, b == std::string::npos ? std::string::npos : b - a - 1);
    j.reason = b == std::string::npos ? "" : line.substr(b + 1);
    while (!j.id.empty() && j.id.front() == ' ') j.id.erase(0, 1);
    if (!j.id.empty()) jobs.push_back(j);
  }
  return jobs;
}

std::string parse_sbatch_id(const std::string& text) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const std::string id = line.substr(0, line.find(';'));
    if (!id.empty() && id.find_first_not_of("0123456789") == std::string::npos) return id;
  }
  return "";
}

std::string find_on_path(const std::string& name) {
  if (name.find('/') != std::string::npos) return access(name.c_str(), X_OK) == 0 ? name : "";
  const char* path = std::getenv("PATH");
  std::istringstream in(path ? path : "");
  for (std::string dir; std::getline(in, dir, ':');) {
    const fs::path p = fs::path(dir.empty() ? "." : dir) / name;
    if (access(p.c_str(), X_OK) == 0 && !fs::is_directory(p)) return p.string();
  }
  return "";
}

int run_capture(const std::vector<std::string>& argv, std::string& output) {
  output.clear();
  int fd[2];
  if (argv.empty() || pipe(fd) != 0) return 127;
  std::vector<char*> av;
  for (const std::string& a : argv) av.push_back(const_cast<char*>(a.c_str()));
  av.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    close(fd[0]);
    close(fd[1]);
    return 127;
  }
  if (pid == 0) {
    close(fd[0]);
    dup2(fd[1], 1);
    dup2(fd[1], 2);
    close(fd[1]);
    execvp(av[0], av.data());
    _exit(127);
  }
  close(fd[1]);
  char buf[4096];
  for (ssize_t n; (n = read(fd[0], buf, sizeof buf)) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    output.append(buf, static_cast<std::size_t>(n));
  }
  close(fd[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

std::vector<std::string> sbatch_common(const SlurmOptions& o) {
  std::vector<std::string> a;
  if (!o.partition.empty()) a.push_back("--partition=" + o.partition);
  if (!o.account.empty()) a.push_back("--account=" + o.account);
  if (!o.time.empty()) a.push_back("--time=" + o.time);
  a.insert(a.end(), o.extra.begin(), o.extra.end());
  return a;
}

namespace {

// One run of tasks on Slurm: the scripts written, the jobs submitted (a job per task without
// dependencies, a job array per set of dependencies), then the wait for the tasks' .rc files with
// squeue and sacct watching the jobs.
class SlurmRun {
 public:
  SlurmRun(const std::vector<Task>& tasks, const SlurmOptions& opt, std::vector<Outcome>& outcomes,
           const std::function<void(std::size_t)>& on_finish, const std::function<void()>& tick,
           const std::function<bool()>& stop, const std::function<void(const std::string&)>& note)
      : tasks_(tasks), opt_(opt), outcomes_(outcomes), on_finish_(on_finish), tick_(tick), stop_(stop), note_(note),
        dir_(opt.dir), n_(tasks.size()), slurm_id_(n_), out_file_(n_), rc_file_(n_), state_(n_, 0), missing_since_(n_),
        left_(n_) {}

  // Scripts, one per task.
  void write_scripts() {
    for (std::size_t i = 0; i < n_; ++i) {
      rc_file_[i] = dir_ / fmt::format("task-{}.rc", i);
      const std::string title =
          fmt::format("{}: {}{}", opt_.job_name, tasks_[i].deps.empty() ? "build " : "", tasks_[i].name);
      write_script(dir_ / fmt::format("task-{}.sh", i), task_script(tasks_[i], title, opt_.cwd, rc_file_[i].string()));
    }
  }

  // Tasks without dependencies: one job each, in order.
  void submit_independent(const std::vector<std::string>& common) {
    for (std::size_t i = 0; i < n_; ++i) {
      if (!tasks_[i].deps.empty()) continue;
      out_file_[i] = (dir_ / fmt::format("task-{}.out", i)).string();
      std::vector<std::string> a = {"--job-name=" + opt_.job_name + ":build:" + tasks_[i].name, "--output=" + out_file_[i],
                                    "--chdir=" + opt_.cwd, fmt::format("--cpus-per-task={}", std::max(1, tasks_[i].cpus))};
      a.insert(a.end(), common.begin(), common.end());
      a.push_back((dir_ / fmt::format("task-{}.sh", i)).string());
      slurm_id_[i] = submit(a, "the job of " + tasks_[i].name);
    }
  }

  // Tasks with the same dependencies: one array each, after them.
  void submit_arrays(const std::vector<std::string>& common) {
    const std::vector<std::vector<std::size_t>> groups = groups_by_deps();
    for (std::size_t g = 0; g < groups.size(); ++g) submit_array(g, groups[g], common);
    note_(fmt::format("submitted {} Slurm job(s) ({} task(s)): {}", submitted_.size(), n_, fmt::join(submitted_, " ")));
  }

  // Wait for every task's end; false when stop() interrupted the wait.
  bool wait() {
    for (std::size_t i = 0; i < n_; ++i) task_of_[slurm_id_[i]] = i;
    t0_ = Clock::now();
    last_poll_ = t0_ - std::chrono::hours(1);
    bool stopped = false;
    while (left_ > 0) {
      if (stop_()) {
        stopped = true;
        break;
      }
      drop_failed_dependents();
      for (std::size_t i = 0; i < n_; ++i)
        if (state_[i] != 2 && read_rc(i)) finish(i);
      if (left_ == 0) break;
      const auto now = Clock::now();
      if (opt_.wait_timeout_s > 0 && now - t0_ > std::chrono::seconds(opt_.wait_timeout_s)) {
        give_up(now);
        break;
      }
      if (now - last_poll_ >= std::chrono::seconds(opt_.poll_s)) {
        last_poll_ = now;
        poll_queue(now);
      }
      tick_();
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    if (stopped) cancel_unfinished();
    return !stopped;
  }

 private:
  void cancel(const std::vector<std::string>& ids) {
    if (ids.empty()) return;
    std::vector<std::string> a = {"scancel"};
    a.insert(a.end(), ids.begin(), ids.end());
    std::string out;
    if (run_capture(a, out) != 0) note_(fmt::format("scancel failed: {}", last_line(out)));
  }

  // sbatch; on a refusal every job submitted so far is cancelled and SlurmError thrown.
  std::string submit(std::vector<std::string> a, const std::string& what) {
    a.insert(a.begin(), {"sbatch", "--parsable"});
    std::string out;
    const int rc = run_capture(a, out);
    const std::string id = rc == 0 ? parse_sbatch_id(out) : "";
    if (id.empty()) {
      cancel(submitted_);
      throw SlurmError(fmt::format("sbatch refused {} (exit status {}): {}\n  command: {}", what, rc,
                                   last_line(out).empty() ? "no output" : last_line(out), join_cmd(a)));
    }
    submitted_.push_back(id);
    return id;
  }

  std::vector<std::vector<std::size_t>> groups_by_deps() const {
    std::vector<std::vector<std::size_t>> groups;
    std::map<std::vector<std::size_t>, std::size_t> by_deps;
    for (std::size_t i = 0; i < n_; ++i) {
      if (tasks_[i].deps.empty()) continue;
      auto [it, fresh] = by_deps.emplace(tasks_[i].deps, groups.size());
      if (fresh) groups.emplace_back();
      groups[it->second].push_back(i);
    }
    return groups;
  }

  // The script of job array g (element K runs the K-th member's script) and its submission.
  void submit_array(std::size_t g, const std::vector<std::size_t>& members, const std::vector<std::string>& common) {
    const std::vector<std::size_t>& deps = tasks_[members.front()].deps;
    std::string dep_names, dep_ids;
    int cpus = 1;
    for (std::size_t d : deps) {
      dep_names += (dep_names.empty() ? "" : "+") + tasks_[d].name;
      dep_ids += ":" + slurm_id_[d];
    }
    std::string sh = fmt::format("#!/bin/sh\n# {}: job array {} ({} task(s) after {}), written by capsgen regress --slurm:\n"
                                 "# element K runs the K-th task's script.\ncase \"$SLURM_ARRAY_TASK_ID\" in\n",
                                 opt_.job_name, g, members.size(), dep_names);
    std::vector<std::size_t> idx;
    for (std::size_t k = 0; k < members.size(); ++k) {
      sh += fmt::format("  {}) exec /bin/sh {} ;;\n", k, quote((dir_ / fmt::format("task-{}.sh", members[k])).string()));
      idx.push_back(k);
      cpus = std::max(cpus, tasks_[members[k]].cpus);
    }
    sh += "esac\necho \"capsgen regress: no task for array index $SLURM_ARRAY_TASK_ID\" >&2\nexit 2\n";
    const fs::path script = dir_ / fmt::format("array-{}.sh", g);
    write_script(script, sh);
    std::vector<std::string> a = {"--job-name=" + opt_.job_name + ":runs:" + dep_names, "--array=" + array_ranges(idx),
                                  "--output=" + (dir_ / fmt::format("array-{}-%a.out", g)).string(),
                                  "--chdir=" + opt_.cwd, fmt::format("--cpus-per-task={}", cpus),
                                  "--dependency=afterok" + dep_ids, "--kill-on-invalid-dep=yes"};
    a.insert(a.end(), common.begin(), common.end());
    a.push_back(script.string());
    const std::string id = submit(a, fmt::format("the job array after {}", dep_names));
    for (std::size_t k = 0; k < members.size(); ++k) {
      slurm_id_[members[k]] = fmt::format("{}_{}", id, k);
      out_file_[members[k]] = (dir_ / fmt::format("array-{}-{}.out", g, k)).string();
    }
  }

  void finish(std::size_t i) {
    state_[i] = 2;
    --left_;
    on_finish_(i);
  }

  // A task's .rc file: its end.
  bool read_rc(std::size_t i) {
    if (!fs::exists(rc_file_[i])) return false;
    const auto e = parse_rc(slurp(rc_file_[i]), tasks_[i].timeout_s);
    if (!e) return false;
    Outcome& o = outcomes_[i];
    o.started = true;
    o.exit_code = e->exit_code;
    o.seconds = e->seconds;
    o.timed_out = e->timed_out;
    return true;
  }

  // A task that will not write its .rc: the reason goes to the end of its log (read by the summary).
  void append_log(std::size_t i, const std::string& line) const {
    FILE* f = std::fopen(tasks_[i].log.c_str(), "a");
    if (f) {
      std::fprintf(f, "%s\n", line.c_str());
      std::fclose(f);
    }
  }

  static std::string sacct_state(const std::string& id) {
    std::string out;
    const int rc = run_capture({"sacct", "-n", "-P", "-X", "-j", id, "-o", "State,ExitCode,Reason"}, out);
    const std::string l = last_line(out);
    return rc == 0 && !l.empty() ? "sacct: " + l : "sacct: " + (l.empty() ? "no record" : l);
  }

  // Dependencies that failed: the dependents will never run (Slurm drops them too: --kill-on-invalid-dep).
  void drop_failed_dependents() {
    std::vector<std::size_t> dropped;
    for (std::size_t i = 0; i < n_; ++i) {
      if (state_[i] == 2) continue;
      bool failed = false;
      for (std::size_t d : tasks_[i].deps) failed = failed || (state_[d] == 2 && outcomes_[d].exit_code != 0);
      if (failed) dropped.push_back(i);
    }
    if (dropped.empty()) return;
    std::vector<std::string> ids;
    for (std::size_t i : dropped) ids.push_back(slurm_id_[i]);
    cancel(ids);
    for (std::size_t i : dropped) {
      outcomes_[i].dep_failed = true;
      finish(i);
    }
  }

  // --slurm-timeout passed: the unfinished jobs cancelled, the running ones ended with a note in their log.
  void give_up(Clock::time_point now) {
    std::vector<std::string> ids;
    int pending = 0;
    for (std::size_t i = 0; i < n_; ++i) {
      if (state_[i] == 2) continue;
      ids.push_back(slurm_id_[i]);
      if (state_[i] == 1) {
        append_log(i, fmt::format("error: capsgen regress --slurm: no result within --slurm-timeout {} s; Slurm job {} cancelled",
                                  opt_.wait_timeout_s, slurm_id_[i]));
        outcomes_[i].started = true;
        outcomes_[i].seconds = std::chrono::duration<double>(now - t0_).count();
      } else {
        ++pending;
      }
    }
    cancel(ids);
    note_(fmt::format("gave up waiting after --slurm-timeout {} s: {} job(s) cancelled ({} still pending, not run)",
                      opt_.wait_timeout_s, ids.size(), pending));
    for (std::size_t i = 0; i < n_; ++i)
      if (state_[i] == 1) finish(i);
  }

  // squeue: which jobs run; a job gone from the queue for --vanish seconds without an .rc file ended
  // without a result (sacct and Slurm's output file say why).
  void poll_queue(Clock::time_point now) {
    std::string out;
    const int rc = run_capture({"squeue", "--me", "-h", "-r", "-o", "%i|%T|%r"}, out);
    if (rc != 0) {
      if (!squeue_warned_) note_(fmt::format("squeue failed (exit status {}): {}; still waiting", rc, last_line(out)));
      squeue_warned_ = true;
      return;
    }
    std::set<std::size_t> queued;
    for (const QueuedJob& q : parse_squeue(out)) {
      auto it = task_of_.find(q.id);
      if (it == task_of_.end()) continue;
      queued.insert(it->second);
      if (state_[it->second] == 0 && (q.state == "RUNNING" || q.state == "COMPLETING")) state_[it->second] = 1;
    }
    for (std::size_t i = 0; i < n_; ++i) {
      if (state_[i] == 2) continue;
      if (queued.count(i)) {
        missing_since_[i].reset();
        continue;
      }
      if (!missing_since_[i]) missing_since_[i] = now;
      if (now - *missing_since_[i] < std::chrono::seconds(opt_.vanish_s) || read_rc(i)) {
        if (outcomes_[i].started) finish(i);
        continue;
      }
      std::string why = sacct_state(slurm_id_[i]);
      const std::string slurm_out = last_line(slurp(out_file_[i]));
      if (!slurm_out.empty()) why += "; " + out_file_[i] + ": " + slurm_out;
      append_log(i, fmt::format("error: Slurm job {} ended without a result ({})", slurm_id_[i], why));
      outcomes_[i].started = true;
      outcomes_[i].exit_code = -1;
      finish(i);
    }
  }

  // stop(): the unfinished jobs cancelled; those that ran are interrupted unless their .rc came.
  void cancel_unfinished() {
    std::vector<std::string> ids;
    for (std::size_t i = 0; i < n_; ++i)
      if (state_[i] != 2) ids.push_back(slurm_id_[i]);
    cancel(ids);
    for (std::size_t i = 0; i < n_; ++i) {
      if (state_[i] == 2) continue;
      if (read_rc(i)) {
        finish(i);
      } else if (state_[i] == 1) {
        outcomes_[i].started = true;
        outcomes_[i].interrupted = true;
        finish(i);
      }
    }
  }

  const std::vector<Task>& tasks_;
  const SlurmOptions& opt_;
  std::vector<Outcome>& outcomes_;
  const std::function<void(std::size_t)>& on_finish_;
  const std::function<void()>& tick_;
  const std::function<bool()>& stop_;
  const std::function<void(const std::string&)>& note_;
  const fs::path dir_;
  const std::size_t n_;
  std::vector<std::string> slurm_id_, out_file_;
  std::vector<fs::path> rc_file_;
  std::vector<std::string> submitted_;  // the job ids sbatch returned (builds and arrays)
  std::map<std::string, std::size_t> task_of_;
  std::vector<int> state_;  // 0 queued, 1 seen running, 2 finished
  std::vector<std::optional<Clock::time_point>> missing_since_;
  std::size_t left_;
  Clock::time_point t0_, last_poll_;
  bool squeue_warned_ = false;
};

}  // namespace

bool run_tasks_slurm(const std::vector<Task>& tasks, const SlurmOptions& opt, std::vector<Outcome>& outcomes,
                     const std::function<void(std::size_t)>& on_finish, const std::function<void()>& tick,
                     const std::function<bool()>& stop, const std::function<void(const std::string&)>& note) {
  const fs::path dir = opt.dir;
  std::error_code ec;
  fs::create_directories(dir, ec);
  outcomes.assign(tasks.size(), Outcome{});
  SlurmRun run(tasks, opt, outcomes, on_finish, tick, stop, note);
  run.write_scripts();
  const std::vector<std::string> common = sbatch_common(opt);
  run.submit_independent(common);
  run.submit_arrays(common);
  return run.wait();
}

}  // namespace capsgen::cli::regress
