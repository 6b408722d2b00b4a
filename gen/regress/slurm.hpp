// capsgen regress --slurm: the regression's tasks (the same commands the local pool runs) as Slurm jobs
// (docs/regress.md, "Slurm"). Each task gets a job script OUT/slurm/task-N.sh that runs its command
// with its log and timeout and then writes its exit status and times to OUT/slurm/task-N.rc; tasks
// without dependencies (the model builds) are one job each, the tasks that depend on the same tasks
// (the runs of one model) one job array whose indices are the task numbers, submitted with
// --dependency=afterok on their builds. The submitting process waits, reading the .rc files and
// polling squeue, and reports each task's end as run_tasks (pool.hpp) does, so that the
// results, summaries, JUnit and coverage are made by the same code as a local run's.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "regress/pool.hpp"

namespace capsgen::cli::regress {

struct SlurmOptions {
  std::string partition;            // sbatch --partition (empty: the cluster's default)
  std::string account;              // sbatch --account
  std::string time;                 // sbatch --time, for every job (empty: the partition's default)
  std::vector<std::string> extra;   // more sbatch options, for every job (--slurm-extra, split at blanks)
  std::string job_name;             // prefix of the jobs' names: capsgen-<list name>
  std::string dir;                  // OUT/slurm: the scripts, .rc and Slurm's own .out files
  std::string cwd;                  // the directory the commands run in (the submitter's)
  int wait_timeout_s = 0;           // give up waiting after this many seconds (0: never)
  int poll_s = 10;                  // seconds between squeue polls
  int vanish_s = 60;                // a task neither queued nor finished for this long has ended without a result
};

// A comma-separated Slurm array index list with runs compressed: {3,4,5,8} -> "3-5,8".
std::string array_ranges(const std::vector<std::size_t>& indices);

// The job script of task `index` (a POSIX shell script): cd to cwd, run the command with stdin from
// /dev/null and stdout+stderr to the task's log (under `timeout` when the task has one), then write
// "<exit status> <start> <end>" (seconds since the epoch) to rc_file (atomically, via rc_file.tmp).
std::string task_script(const Task& t, const std::string& title, const std::string& cwd, const std::string& rc_file);

// The end of a task as its .rc file says: exit status, seconds, whether the timeout stopped it.
struct TaskEnd {
  int exit_code = -1;
  double seconds = 0;
  bool timed_out = false;
};
// nullopt when the text is not a complete .rc line (not written yet).
std::optional<TaskEnd> parse_rc(const std::string& text, int timeout_s);

// One line of `squeue -h -r -o '%i|%T|%r'`: a job ("123") or an array element ("123_7").
struct QueuedJob {
  std::string id;      // as squeue prints it
  std::string state;   // PENDING, RUNNING, COMPLETING, ...
  std::string reason;  // None, Dependency, DependencyNeverSatisfied, ...
};
std::vector<QueuedJob> parse_squeue(const std::string& text);

// The first line of `sbatch --parsable` output: the job id (before any ";cluster"); empty when none.
std::string parse_sbatch_id(const std::string& text);

// Runs the command (argv[0] looked up on PATH) and returns its exit status (127 when it cannot be
// started), its stdout and stderr in `output`.
int run_capture(const std::vector<std::string>& argv, std::string& output);

// The path of `name` on PATH (empty: not found).
std::string find_on_path(const std::string& name);

// The sbatch options of every job (partition, account, time, extra).
std::vector<std::string> sbatch_common(const SlurmOptions& o);

// Submits `tasks` and waits for them; the contract of run_tasks: `outcomes` filled, on_finish called
// as each task ends (also for tasks whose dependency failed), tick about once a second; returns false
// when `stop` became true (the jobs are cancelled). Throws SlurmError when sbatch refuses a job (the
// jobs already submitted are cancelled first).
struct SlurmError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
bool run_tasks_slurm(const std::vector<Task>& tasks, const SlurmOptions& opt, std::vector<Outcome>& outcomes,
                     const std::function<void(std::size_t)>& on_finish, const std::function<void()>& tick,
                     const std::function<bool()>& stop, const std::function<void(const std::string&)>& note);

}  // namespace capsgen::cli::regress
