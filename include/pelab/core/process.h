// Child processes, started with posix_spawn. `pelab sweep` runs each training run in a child
// of its own (its output to the run's stdout.log, so a crash cannot take the sweep down),
// `pelab bench` each benchmark case (so each peak RSS is the case's own), `pelab compare`
// gnuplot, and provenance git. All start them here, so all treat the environment, file
// descriptors and signals alike.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <cstddef>
#include <limits>
#include <string>
#include <vector>

namespace pelab {

struct ChildSpec {
  std::string program;                 // the executable's path
  std::vector<std::string> argv;       // argv[0] first
  std::vector<std::string> extra_env;  // "NAME=value", overriding this process's environment
  // Non-empty: stdin from /dev/null, stdout and stderr to this file (appended to or truncated).
  std::string log;
  bool append_log = false;
  // >= 0: stdout to this descriptor (closed in the child, as is `close_fd`); stderr passes
  // unless `stderr_to` says otherwise, and stdin from /dev/null if `stdin_null`.
  int stdout_fd = -1;
  int close_fd = -1;
  enum class Stderr { passes, with_stdout, discarded };
  Stderr stderr_to = Stderr::passes;
  bool stdin_null = false;
  std::string cwd;           // non-empty: the child starts in this directory
  bool search_path = false;  // a `program` without '/' is looked up in PATH, as a shell would
  // SIGINT and SIGTERM at their default actions and no signal blocked in the child, whatever
  // handlers this process installed: a sweep forwards its signals to its runs itself.
  bool default_signals = false;
  // The child is killed (SIGKILL) when this process dies, however it dies: posix_spawn cannot
  // set PR_SET_PDEATHSIG itself, so the child is told this process's pid in
  // PELAB_DIE_WITH_PARENT and a pelab child sets it first thing (die_with_parent_if_asked).
  bool die_with_parent = false;
};

// In a child started with die_with_parent: asks the kernel to SIGKILL this process when its
// parent dies, and exits at once (code 3, interrupted) if the parent is already gone. Removes
// the variable, so that this process's own children do not read it. Does nothing otherwise.
void die_with_parent_if_asked();

// Starts the child and returns its pid, or -1 with posix_spawn's error number in `error`.
pid_t spawn_child(const ChildSpec& spec, int& error);

struct CapturedRun {
  int status = 0;   // the exit status, or 128 + the signal that ended the child (-1: not started)
  std::string out;  // its stdout
  int start_error = 0;  // try_run_captured: the error number when it could not be started
};

// How a captured child runs, beyond its arguments (see ChildSpec).
struct CaptureOptions {
  std::vector<std::string> extra_env;  // "NAME=value", overriding this process's environment
  std::string cwd;
  bool search_path = false;
  bool stdin_null = false;
  ChildSpec::Stderr stderr_to = ChildSpec::Stderr::passes;
  // Output beyond this many bytes is read (the child never blocks on a full pipe) and dropped.
  size_t max_output = std::numeric_limits<size_t>::max();
};

// Runs argv[0] with arguments argv (this process's environment plus `extra_env`), waits for
// it and returns its exit status and stdout; its stderr passes through. An Error when it
// cannot be started ("cannot run PROGRAM: reason").
CapturedRun run_captured(const std::vector<std::string>& argv,
                         const std::vector<std::string>& extra_env = {});

// The same with `options`, and a child that cannot be started (or no pipe for it) is an
// answer, not an error: status -1 and start_error set.
CapturedRun try_run_captured(const std::vector<std::string>& argv, const CaptureOptions& options);

// SIGINT and SIGTERM caught for the lifetime of a scope, the previous handlers restored after
// it. The handler only records; the scope's owner polls: a run saves a checkpoint and stops, a
// sweep stops launching runs (and kills them at the second signal), a Slurm task forwards the
// signal to its run. Scopes may nest: each counts the signals since it began.
class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // How many signals arrived since the scope began.
  int count() const;
  // The number of the last one (SIGINT or SIGTERM), 0 while none has arrived.
  int last() const;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
  int count_at_start_;
};

}  // namespace pelab
