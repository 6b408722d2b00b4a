#include "cli/regress_slurm.hpp"

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

#include "cli/shell.hpp"
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

bool run_tasks_slurm(const std::vector<Task>& tasks, const SlurmOptions& opt, std::vector<Outcome>& outcomes,
                     const std::function<void(std::size_t)>& on_finish, const std::function<void()>& tick,
                     const std::function<bool()>& stop, const std::function<void(const std::string&)>& note) {
  const fs::path dir = opt.dir;
  std::error_code ec;
  fs::create_directories(dir, ec);
  outcomes.assign(tasks.size(), Outcome{});
  const std::size_t n = tasks.size();
  std::vector<std::string> slurm_id(n), out_file(n);
  std::vector<fs::path> rc_file(n);
  std::vector<std::string> submitted;  // the job ids sbatch returned (builds and arrays)

  auto cancel = [&](const std::vector<std::string>& ids) {
    if (ids.empty()) return;
    std::vector<std::string> a = {"scancel"};
    a.insert(a.end(), ids.begin(), ids.end());
    std::string out;
    if (run_capture(a, out) != 0) note(fmt::format("scancel failed: {}", last_line(out)));
  };
  auto submit = [&](std::vector<std::string> a, const std::string& what) {
    a.insert(a.begin(), {"sbatch", "--parsable"});
    std::string out;
    const int rc = run_capture(a, out);
    const std::string id = rc == 0 ? parse_sbatch_id(out) : "";
    if (id.empty()) {
      cancel(submitted);
      throw SlurmError(fmt::format("sbatch refused {} (exit status {}): {}\n  command: {}", what, rc,
                                   last_line(out).empty() ? "no output" : last_line(out), join_cmd(a)));
    }
    submitted.push_back(id);
    return id;
  };

  // Scripts, one per task.
  for (std::size_t i = 0; i < n; ++i) {
    rc_file[i] = dir / fmt::format("task-{}.rc", i);
    const std::string title = fmt::format("{}: {}{}", opt.job_name, tasks[i].deps.empty() ? "build " : "", tasks[i].name);
    write_script(dir / fmt::format("task-{}.sh", i), task_script(tasks[i], title, opt.cwd, rc_file[i].string()));
  }
  const std::vector<std::string> common = sbatch_common(opt);
  // Tasks without dependencies: one job each, in order.
  for (std::size_t i = 0; i < n; ++i) {
    if (!tasks[i].deps.empty()) continue;
    out_file[i] = (dir / fmt::format("task-{}.out", i)).string();
    std::vector<std::string> a = {"--job-name=" + opt.job_name + ":build:" + tasks[i].name, "--output=" + out_file[i],
                                  "--chdir=" + opt.cwd, fmt::format("--cpus-per-task={}", std::max(1, tasks[i].cpus))};
    a.insert(a.end(), common.begin(), common.end());
    a.push_back((dir / fmt::format("task-{}.sh", i)).string());
    slurm_id[i] = submit(a, "the job of " + tasks[i].name);
  }
  // Tasks with the same dependencies: one array each, after them.
  std::vector<std::vector<std::size_t>> groups;
  {
    std::map<std::vector<std::size_t>, std::size_t> by_deps;
    for (std::size_t i = 0; i < n; ++i) {
      if (tasks[i].deps.empty()) continue;
      auto [it, fresh] = by_deps.emplace(tasks[i].deps, groups.size());
      if (fresh) groups.emplace_back();
      groups[it->second].push_back(i);
    }
  }
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const std::vector<std::size_t>& members = groups[g];
    const std::vector<std::size_t>& deps = tasks[members.front()].deps;
    std::string dep_names, dep_ids;
    int cpus = 1;
    for (std::size_t d : deps) {
      dep_names += (dep_names.empty() ? "" : "+") + tasks[d].name;
      dep_ids += ":" + slurm_id[d];
    }
    std::string sh = fmt::format("#!/bin/sh\n# {}: job array {} ({} task(s) after {}), written by capsgen regress --slurm:\n"
                                 "# element K runs the K-th task's script.\ncase \"$SLURM_ARRAY_TASK_ID\" in\n",
                                 opt.job_name, g, members.size(), dep_names);
    std::vector<std::size_t> idx;
    for (std::size_t k = 0; k < members.size(); ++k) {
      sh += fmt::format("  {}) exec /bin/sh {} ;;\n", k, quote((dir / fmt::format("task-{}.sh", members[k])).string()));
      idx.push_back(k);
      cpus = std::max(cpus, tasks[members[k]].cpus);
    }
    sh += "esac\necho \"capsgen regress: no task for array index $SLURM_ARRAY_TASK_ID\" >&2\nexit 2\n";
    const fs::path script = dir / fmt::format("array-{}.sh", g);
    write_script(script, sh);
    std::vector<std::string> a = {"--job-name=" + opt.job_name + ":runs:" + dep_names, "--array=" + array_ranges(idx),
                                  "--output=" + (dir / fmt::format("array-{}-%a.out", g)).string(),
                                  "--chdir=" + opt.cwd, fmt::format("--cpus-per-task={}", cpus),
                                  "--dependency=afterok" + dep_ids, "--kill-on-invalid-dep=yes"};
    a.insert(a.end(), common.begin(), common.end());
    a.push_back(script.string());
    const std::string id = submit(a, fmt::format("the job array after {}", dep_names));
    for (std::size_t k = 0; k < members.size(); ++k) {
      slurm_id[members[k]] = fmt::format("{}_{}", id, k);
      out_file[members[k]] = (dir / fmt::format("array-{}-{}.out", g, k)).string();
    }
  }
  note(fmt::format("submitted {} Slurm job(s) ({} task(s)): {}", submitted.size(), n, fmt::join(submitted, " ")));

  // Wait.
  std::map<std::string, std::size_t> task_of;
  for (std::size_t i = 0; i < n; ++i) task_of[slurm_id[i]] = i;
  std::vector<int> state(n, 0);  // 0 queued, 1 seen running, 2 finished
  std::vector<std::optional<Clock::time_point>> missing_since(n);
  const auto t0 = Clock::now();
  auto last_poll = t0 - std::chrono::hours(1);
  std::size_t left = n;
  bool squeue_warned = false;
  auto finish = [&](std::size_t i) {
    state[i] = 2;
    --left;
    on_finish(i);
  };
  // A task's .rc file: its end.
  auto read_rc = [&](std::size_t i) {
    if (!fs::exists(rc_file[i])) return false;
    const auto e = parse_rc(slurp(rc_file[i]), tasks[i].timeout_s);
    if (!e) return false;
    Outcome& o = outcomes[i];
    o.started = true;
    o.exit_code = e->exit_code;
    o.seconds = e->seconds;
    o.timed_out = e->timed_out;
    return true;
  };
  // A task that will not write its .rc: the reason goes to the end of its log (read by the summary).
  auto append_log = [&](std::size_t i, const std::string& line) {
    FILE* f = std::fopen(tasks[i].log.c_str(), "a");
    if (f) {
      std::fprintf(f, "%s\n", line.c_str());
      std::fclose(f);
    }
  };
  auto sacct_state = [&](const std::string& id) {
    std::string out;
    const int rc = run_capture({"sacct", "-n", "-P", "-X", "-j", id, "-o", "State,ExitCode,Reason"}, out);
    const std::string l = last_line(out);
    return rc == 0 && !l.empty() ? "sacct: " + l : "sacct: " + (l.empty() ? "no record" : l);
  };
  bool stopped = false;
  while (left > 0) {
    if (stop()) {
      stopped = true;
      break;
    }
    // Dependencies that failed: the dependents will never run (Slurm drops them too: --kill-on-invalid-dep).
    std::vector<std::size_t> dropped;
    for (std::size_t i = 0; i < n; ++i) {
      if (state[i] == 2) continue;
      bool failed = false;
      for (std::size_t d : tasks[i].deps) failed = failed || (state[d] == 2 && outcomes[d].exit_code != 0);
      if (failed) dropped.push_back(i);
    }
    if (!dropped.empty()) {
      std::vector<std::string> ids;
      for (std::size_t i : dropped) ids.push_back(slurm_id[i]);
      cancel(ids);
      for (std::size_t i : dropped) {
        outcomes[i].dep_failed = true;
        finish(i);
      }
    }
    for (std::size_t i = 0; i < n; ++i)
      if (state[i] != 2 && read_rc(i)) finish(i);
    if (left == 0) break;
    const auto now = Clock::now();
    if (opt.wait_timeout_s > 0 && now - t0 > std::chrono::seconds(opt.wait_timeout_s)) {
      std::vector<std::string> ids;
      int pending = 0;
      for (std::size_t i = 0; i < n; ++i) {
        if (state[i] == 2) continue;
        ids.push_back(slurm_id[i]);
        if (state[i] == 1) {
          append_log(i, fmt::format("error: capsgen regress --slurm: no result within --slurm-timeout {} s; Slurm job {} cancelled",
                                    opt.wait_timeout_s, slurm_id[i]));
          outcomes[i].started = true;
          outcomes[i].seconds = std::chrono::duration<double>(now - t0).count();
        } else {
          ++pending;
        }
      }
      cancel(ids);
      note(fmt::format("gave up waiting after --slurm-timeout {} s: {} job(s) cancelled ({} still pending, not run)",
                       opt.wait_timeout_s, ids.size(), pending));
      for (std::size_t i = 0; i < n; ++i)
        if (state[i] == 1) finish(i);
      break;
    }
    if (now - last_poll >= std::chrono::seconds(opt.poll_s)) {
      last_poll = now;
      std::string out;
      const int rc = run_capture({"squeue", "--me", "-h", "-r", "-o", "%i|%T|%r"}, out);
      if (rc != 0) {
        if (!squeue_warned) note(fmt::format("squeue failed (exit status {}): {}; still waiting", rc, last_line(out)));
        squeue_warned = true;
      } else {
        std::set<std::size_t> queued;
        for (const QueuedJob& q : parse_squeue(out)) {
          auto it = task_of.find(q.id);
          if (it == task_of.end()) continue;
          queued.insert(it->second);
          if (state[it->second] == 0 && (q.state == "RUNNING" || q.state == "COMPLETING")) state[it->second] = 1;
        }
        for (std::size_t i = 0; i < n; ++i) {
          if (state[i] == 2) continue;
          if (queued.count(i)) {
            missing_since[i].reset();
            continue;
          }
          if (!missing_since[i]) missing_since[i] = now;
          if (now - *missing_since[i] < std::chrono::seconds(opt.vanish_s) || read_rc(i)) {
            if (outcomes[i].started) finish(i);
            continue;
          }
          std::string why = sacct_state(slurm_id[i]);
          const std::string slurm_out = last_line(slurp(out_file[i]));
          if (!slurm_out.empty()) why += "; " + out_file[i] + ": " + slurm_out;
          append_log(i, fmt::format("error: Slurm job {} ended without a result ({})", slurm_id[i], why));
          outcomes[i].started = true;
          outcomes[i].exit_code = -1;
          finish(i);
        }
      }
    }
    tick();
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  if (stopped) {
    std::vector<std::string> ids;
    for (std::size_t i = 0; i < n; ++i)
      if (state[i] != 2) ids.push_back(slurm_id[i]);
    cancel(ids);
    for (std::size_t i = 0; i < n; ++i) {
      if (state[i] == 2) continue;
      if (read_rc(i)) {
        finish(i);
      } else if (state[i] == 1) {
        outcomes[i].started = true;
        outcomes[i].interrupted = true;
        finish(i);
      }
    }
  }
  return !stopped;
}

}  // namespace capsgen::cli::regress
