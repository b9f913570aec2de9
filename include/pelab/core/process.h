// Child processes, started with posix_spawn. `pelab sweep` runs each training run in a child
// of its own (its output to the run's stdout.log, so a crash cannot take the sweep down) and
// `pelab bench` each benchmark case (so each peak RSS is the case's own). Both start them
// here, so both treat the environment, file descriptors and signals alike.
#pragma once

#include <sys/types.h>

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
  // >= 0: stdout to this descriptor (closed in the child, as is `close_fd`); stderr passes.
  int stdout_fd = -1;
  int close_fd = -1;
  // SIGINT and SIGTERM at their default actions and no signal blocked in the child, whatever
  // handlers this process installed: a sweep forwards its signals to its runs itself.
  bool default_signals = false;
};

// Starts the child and returns its pid, or -1 with posix_spawn's error number in `error`.
pid_t spawn_child(const ChildSpec& spec, int& error);

struct CapturedRun {
  int status = 0;   // the exit status, or 128 + the signal that ended the child
  std::string out;  // its stdout
};

// Runs argv[0] with arguments argv (this process's environment plus `extra_env`), waits for
// it and returns its exit status and stdout; its stderr passes through. An Error when it
// cannot be started ("cannot run PROGRAM: reason").
CapturedRun run_captured(const std::vector<std::string>& argv,
                         const std::vector<std::string>& extra_env = {});

}  // namespace pelab
