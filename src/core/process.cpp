#include "pelab/core/process.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string>

#include "pelab/core/error.h"

extern char** environ;

namespace pelab {

namespace {

constexpr const char* kParentVariable = "PELAB_DIE_WITH_PARENT";

// This process's environment with `extra` ("NAME=value") added, replacing entries of the
// same name.
std::vector<std::string> child_environment(const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    bool overridden = false;
    for (const std::string& x : extra) overridden = overridden || x.rfind(name + "=", 0) == 0;
    if (!overridden) env.push_back(entry);
  }
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

// The char* array that exec wants, pointing into `strings`, null-terminated.
std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

void die_with_parent_if_asked() {
  const char* value = std::getenv(kParentVariable);
  if (!value) return;
  const std::string parent = value;
  ::unsetenv(kParentVariable);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  // The parent may have died before prctl: then this process was already handed to another.
  if (std::to_string(::getppid()) != parent) std::_Exit(3);
}

pid_t spawn_child(const ChildSpec& spec, int& error) {
  std::vector<std::string> args = spec.argv;
  std::vector<std::string> extra = spec.extra_env;
  if (spec.die_with_parent) extra.push_back(fmt::format("{}={}", kParentVariable, ::getpid()));
  std::vector<std::string> env = child_environment(extra);
  const std::vector<char*> argv = c_strings(args);
  const std::vector<char*> envp = c_strings(env);

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (!spec.log.empty()) {
    posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, spec.log.c_str(),
                                     O_WRONLY | O_CREAT | (spec.append_log ? O_APPEND : O_TRUNC),
                                     0644);
    posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
  }
  if (spec.stdout_fd >= 0) {
    if (spec.stdin_null)
      posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, spec.stdout_fd, STDOUT_FILENO);
    if (spec.stderr_to == ChildSpec::Stderr::with_stdout)
      posix_spawn_file_actions_adddup2(&fa, spec.stdout_fd, STDERR_FILENO);
    if (spec.stderr_to == ChildSpec::Stderr::discarded)
      posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addclose(&fa, spec.stdout_fd);
  }
  if (spec.close_fd >= 0) posix_spawn_file_actions_addclose(&fa, spec.close_fd);
  if (!spec.cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa, spec.cwd.c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  if (spec.default_signals) {
    sigset_t defaults, empty;
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGINT);
    sigaddset(&defaults, SIGTERM);
    sigemptyset(&empty);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setsigmask(&attr, &empty);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  }
  pid_t pid = -1;
  const int rc = (spec.search_path ? posix_spawnp : posix_spawn)(&pid, spec.program.c_str(), &fa,
                                                                 &attr, argv.data(), envp.data());
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&fa);
  error = rc;
  return rc == 0 ? pid : -1;
}

CapturedRun try_run_captured(const std::vector<std::string>& argv, const CaptureOptions& options) {
  CapturedRun run;
  run.status = -1;
  int fds[2];
  // Close-on-exec: a child spawned meanwhile by another thread must not inherit the write
  // end, or the reader below would never see the end of the output.
  if (pipe2(fds, O_CLOEXEC) != 0) {
    run.start_error = errno;
    return run;
  }
  ChildSpec spec;
  spec.program = argv.at(0);
  spec.argv = argv;
  spec.extra_env = options.extra_env;
  spec.stdout_fd = fds[1];
  spec.close_fd = fds[0];
  spec.stderr_to = options.stderr_to;
  spec.stdin_null = options.stdin_null;
  spec.cwd = options.cwd;
  spec.search_path = options.search_path;
  int error = 0;
  const pid_t pid = spawn_child(spec, error);
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    run.start_error = error;
    return run;
  }
  char buf[4096];
  while (true) {
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;  // a signal is not the end of the output
    if (n <= 0) break;
    if (run.out.size() < options.max_output) run.out.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return run;
}

CapturedRun run_captured(const std::vector<std::string>& argv,
                         const std::vector<std::string>& extra_env) {
  CaptureOptions options;
  options.extra_env = extra_env;
  CapturedRun run = try_run_captured(argv, options);
  PELAB_CHECK(run.start_error == 0, "cannot run {}: {}", argv.at(0),
              std::strerror(run.start_error));
  return run;
}

namespace {

std::atomic<int> g_signal_count{0};
std::atomic<int> g_last_signal{0};

extern "C" void on_stop_signal(int sig) {
  g_last_signal.store(sig);
  g_signal_count.fetch_add(1);
}

}  // namespace

StopSignals::StopSignals() : count_at_start_(g_signal_count.load()) {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old_int_);
  sigaction(SIGTERM, &sa, &old_term_);
}

StopSignals::~StopSignals() {
  sigaction(SIGINT, &old_int_, nullptr);
  sigaction(SIGTERM, &old_term_, nullptr);
}

int StopSignals::count() const {
  return g_signal_count.load() - count_at_start_;
}

int StopSignals::last() const {
  return count() > 0 ? g_last_signal.load() : 0;
}

}  // namespace pelab
