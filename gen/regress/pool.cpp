#include "regress/pool.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <map>
#include <thread>

namespace capsgen::cli::regress {
namespace {

volatile std::sig_atomic_t g_stop = 0;

void on_signal(int) { g_stop = 1; }

using Clock = std::chrono::steady_clock;

struct Running {
  std::size_t task;
  Clock::time_point start;
  bool term_sent = false;
  Clock::time_point term_at;
};

// Starts argv in a new process group with stdout/stderr to `log`; returns the pid (-1 on failure).
pid_t spawn(const Task& t) {
  std::vector<char*> av;
  for (const std::string& a : t.argv) av.push_back(const_cast<char*>(a.c_str()));
  av.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    const int fd = open(t.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int null = open("/dev/null", O_RDONLY);
    if (fd < 0 || null < 0) _exit(127);
    dup2(null, 0);
    dup2(fd, 1);
    dup2(fd, 2);
    execv(av[0], av.data());
    _exit(127);
  }
  if (pid > 0) setpgid(pid, pid);  // also here: no race with the kill of an early interrupt
  return pid;
}

}  // namespace

bool interrupted() { return g_stop != 0; }

void catch_interrupts() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

bool run_tasks(const std::vector<Task>& tasks, int slots, std::vector<Outcome>& outcomes,
               const std::function<void(std::size_t)>& on_finish, const std::function<void()>& tick) {
  struct sigaction sa {}, old_int {}, old_term {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);

  outcomes.assign(tasks.size(), Outcome{});
  std::vector<int> state(tasks.size(), 0);  // 0 waiting, 1 running, 2 finished
  std::map<pid_t, Running> running;
  auto last_tick = Clock::now();
  auto finish = [&](std::size_t i) {
    state[i] = 2;
    on_finish(i);
  };
  for (;;) {
    // Start what may start.
    if (!g_stop) {
      for (std::size_t i = 0; i < tasks.size() && static_cast<int>(running.size()) < slots; ++i) {
        if (state[i] != 0) continue;
        bool ready = true, failed = false;
        for (std::size_t d : tasks[i].deps) {
          if (state[d] != 2) ready = false;
          else if (outcomes[d].exit_code != 0) failed = true;
        }
        if (failed) {
          outcomes[i].dep_failed = true;
          finish(i);
          continue;
        }
        if (!ready) continue;
        const pid_t pid = spawn(tasks[i]);
        if (pid < 0) {
          outcomes[i].exit_code = 127;
          finish(i);
          continue;
        }
        outcomes[i].started = true;
        state[i] = 1;
        running[pid] = Running{i, Clock::now(), false, Clock::now()};
      }
    }
    if (running.empty()) {
      // Nothing running: done, or (interrupted) nothing more will start; tasks left are not run.
      bool waiting = false;
      for (std::size_t i = 0; i < tasks.size(); ++i) waiting = waiting || state[i] == 0;
      if (!waiting || g_stop) break;
    }
    // Reap.
    int status = 0;
    const pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid > 0 && running.count(pid)) {
      const Running r = running[pid];
      running.erase(pid);
      Outcome& o = outcomes[r.task];
      o.seconds = std::chrono::duration<double>(Clock::now() - r.start).count();
      o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
      if (g_stop && r.term_sent && !o.timed_out) o.interrupted = true;
      killpg(pid, SIGKILL);  // anything the task left behind in its group
      finish(r.task);
      continue;
    }
    // Timeouts and interrupts: SIGTERM to the group, SIGKILL 5 s later.
    const auto now = Clock::now();
    for (auto& [p, r] : running) {
      const bool over = tasks[r.task].timeout_s > 0 &&
                        now - r.start > std::chrono::seconds(tasks[r.task].timeout_s);
      if ((over || g_stop) && !r.term_sent) {
        if (over && !g_stop) outcomes[r.task].timed_out = true;
        killpg(p, SIGTERM);
        r.term_sent = true;
        r.term_at = now;
      } else if (r.term_sent && now - r.term_at > std::chrono::seconds(5)) {
        killpg(p, SIGKILL);
      }
    }
    if (now - last_tick > std::chrono::seconds(1)) {
      last_tick = now;
      tick();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  return g_stop == 0;
}

}  // namespace capsgen::cli::regress
