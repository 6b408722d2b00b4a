// capsgen regress: runs commands in parallel, each in its own process group with its output in a log
// file, with dependencies (a run waits for its model's build), per-task timeouts, and a clean stop on
// SIGINT/SIGTERM: the workers' process groups are terminated and waited for, the tasks not started
// are reported as not run.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace capsgen::cli::regress {

struct Task {
  std::vector<std::string> argv;  // argv[0]: the program's path
  std::string log;                // stdout and stderr
  int timeout_s = 0;              // 0: none
  std::vector<std::size_t> deps;  // tasks that must have finished (with exit status 0) first
  std::string name;               // for people: the model's key or the job's name (Slurm job names)
  int cpus = 1;                   // CPUs the command uses (Slurm: --cpus-per-task)
};

struct Outcome {
  bool started = false;
  bool timed_out = false;
  bool interrupted = false;  // stopped by SIGINT/SIGTERM
  bool dep_failed = false;   // not started: a dependency failed
  int exit_code = -1;        // exit status; 128 + N when killed by signal N
  double seconds = 0;
};

// Runs `tasks` with up to `slots` at a time, in order as their dependencies allow. on_finish is called
// in the main process as each task ends (also for tasks skipped because a dependency failed);
// tick about once a second. Returns false when interrupted (SIGINT/SIGTERM).
bool run_tasks(const std::vector<Task>& tasks, int slots, std::vector<Outcome>& outcomes,
               const std::function<void(std::size_t)>& on_finish, const std::function<void()>& tick);

// Whether a SIGINT/SIGTERM arrived (sticky for the rest of the process).
bool interrupted();

// From now on SIGINT/SIGTERM only set the flag interrupted() reads (so that the summaries are still
// written after the workers have been stopped).
void catch_interrupts();

}  // namespace capsgen::cli::regress
