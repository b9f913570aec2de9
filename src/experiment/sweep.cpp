#include "pelab/experiment/sweep.h"

#include <fcntl.h>
#include <sched.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "pelab/core/error.h"
#include "pelab/io/atomic_file.h"
#include "run_files.h"

extern char** environ;

namespace pelab {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

using run_files::json_string;
using run_files::read_json;
using run_files::read_text;

std::string format_duration(double seconds) {
  const int64_t s = static_cast<int64_t>(std::max(0.0, seconds));
  return s >= 3600 ? fmt::format("{}:{:02d}:{:02d}", s / 3600, (s / 60) % 60, s % 60)
                   : fmt::format("{}:{:02d}", s / 60, s % 60);
}

// An argument as a shell would need it.
std::string shell_quote(const std::string& arg) {
  const bool safe = !arg.empty() && std::all_of(arg.begin(), arg.end(), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || std::strchr("_-./=,:+@%", ch);
  });
  if (safe) return arg;
  std::string q = "'";
  for (char ch : arg) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return q + "'";
}

std::string join_command(const std::vector<std::string>& args) {
  std::string s;
  for (const std::string& a : args) s += std::string(s.empty() ? "" : " ") + shell_quote(a);
  return s;
}

// The last step logged in run_dir/metrics.jsonl (0 if none).
int64_t last_logged_step(const fs::path& run_dir) {
  std::ifstream in(run_dir / "metrics.jsonl", std::ios::binary | std::ios::ate);
  if (!in) return 0;
  const std::streamoff size = in.tellg();
  const std::streamoff from = std::max<std::streamoff>(0, size - 4096);
  in.seekg(from);
  std::string tail(static_cast<size_t>(size - from), '\0');
  in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
  std::vector<std::string> lines;
  std::stringstream ss(tail);
  for (std::string line; std::getline(ss, line);) lines.push_back(line);
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    const json j = json::parse(*it, nullptr, false);
    if (j.is_object() && j.contains("step") && j["step"].is_number_integer())
      return j["step"].get<int64_t>();
  }
  return 0;
}

std::atomic<int> g_sweep_signals{0};
extern "C" void on_sweep_signal(int) {
  g_sweep_signals.fetch_add(1);
}

// Installs the SIGINT/SIGTERM handlers of the sweep for its lifetime.
struct SweepSignals {
  struct sigaction old_int {
  }, old_term{};
  SweepSignals() {
    g_sweep_signals.store(0);
    struct sigaction sa {};
    sa.sa_handler = on_sweep_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
  }
  ~SweepSignals() {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGTERM, &old_term, nullptr);
  }
  SweepSignals(const SweepSignals&) = delete;
  SweepSignals& operator=(const SweepSignals&) = delete;
};

// Starts `exe args...` with stdin from /dev/null and stdout + stderr to `log`. Returns the
// pid, or -1 with `error` set.
pid_t spawn_logged(const std::string& exe, const std::vector<std::string>& args,
                   const std::string& log, bool append, std::string& error) {
  std::vector<char*> argv;
  std::string argv0 = "pelab";
  argv.push_back(argv0.data());
  std::vector<std::string> copy = args;
  for (std::string& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC), 0644);
  posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults, empty;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  sigemptyset(&empty);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setsigmask(&attr, &empty);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, exe.c_str(), &fa, &attr, argv.data(), environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    error = fmt::format("cannot start {}: {}", exe, std::strerror(rc));
    return -1;
  }
  return pid;
}

bool path_safe(char ch) {
  return std::isalnum(static_cast<unsigned char>(ch)) || std::strchr("._+,=-", ch) != nullptr;
}

}  // namespace

std::string sweep_dir_component(const std::string& key, const std::string& value) {
  std::string safe;
  for (char ch : value) safe += path_safe(ch) ? ch : '_';
  if (safe.empty()) safe = "_";
  return key + "=" + safe;
}

std::vector<SweepRun> expand_sweep(
    const std::vector<std::pair<std::string, std::vector<std::string>>>& axes,
    const std::string& out_dir, const std::vector<std::string>& base_overrides) {
  for (const auto& [key, values] : axes) {
    PELAB_CHECK(!key.empty(), "sweep: an axis has an empty key");
    PELAB_CHECK(std::all_of(key.begin(), key.end(), path_safe),
                "sweep.{}: an axis key holds only letters, digits and '._-'", key);
    PELAB_CHECK(!values.empty(), "sweep.{}: a sweep axis needs at least one value", key);
  }
  std::vector<SweepRun> runs(1);
  for (const auto& [key, values] : axes) {
    std::vector<SweepRun> next;
    for (const SweepRun& r : runs)
      for (const std::string& v : values) {
        SweepRun n = r;
        n.values.emplace_back(key, v);
        n.name += std::string(n.name.empty() ? "" : "/") + sweep_dir_component(key, v);
        next.push_back(std::move(n));
      }
    runs = std::move(next);
  }
  std::map<std::string, std::string> seen;  // dir name → the values that made it
  for (SweepRun& r : runs) {
    r.dir = (fs::path(out_dir) / r.name).string();
    r.overrides = base_overrides;
    std::string given;
    for (const auto& [key, value] : r.values) {
      r.overrides.push_back(key + "=" + value);
      given += std::string(given.empty() ? "" : ", ") + key + "=" + value;
    }
    r.overrides.push_back("sweep={}");
    auto [it, fresh] = seen.emplace(r.name, given);
    PELAB_CHECK(fresh,
                "sweep: the runs '{}' and '{}' would share the directory {} (repeated or "
                "too similar axis values)",
                it->second, given, r.dir);
  }
  return runs;
}

std::string first_difference(const std::string& a, const std::string& b) {
  std::stringstream sa(a), sb(b);
  for (int line = 1;; ++line) {
    std::string la, lb;
    const bool ga = static_cast<bool>(std::getline(sa, la));
    const bool gb = static_cast<bool>(std::getline(sb, lb));
    if (!ga && !gb) return "";
    if (la != lb || ga != gb)
      return fmt::format("line {}: '{}' vs '{}'", line, ga ? la : "(end)", gb ? lb : "(end)");
  }
}

std::string last_line(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return "";
  const std::streamoff size = in.tellg();
  const std::streamoff from = std::max<std::streamoff>(0, size - 8192);
  in.seekg(from);
  std::string tail(static_cast<size_t>(size - from), '\0');
  in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
  std::string last;
  std::stringstream ss(tail);
  for (std::string line; std::getline(ss, line);) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    // A progress bar rewrites its line with '\r': keep what was printed last.
    const size_t cr = line.rfind('\r');
    if (cr != std::string::npos) line = line.substr(cr + 1);
    if (!line.empty()) last = line;
  }
  return last;
}

RunPlan plan_run(const std::string& dir, const std::string& config_yaml) {
  const fs::path d(dir);
  RunPlan plan;
  std::error_code ec;
  if (!fs::is_directory(d, ec)) {
    plan.reason = "new";
    return plan;
  }
  const std::string saved = read_text(d / "config.yaml");
  const bool same_config = config_yaml.empty() || saved == config_yaml;
  const json summary = read_json(d / "summary.json");
  if (json_string(summary, "status") == "completed") {
    plan.action = RunAction::skip;
    plan.reason = "completed";
    plan.config_mismatch = !saved.empty() && !same_config;  // no config.yaml: cannot tell
    return plan;
  }
  const json status = read_json(d / "status.json");
  if (json_string(status, "status") == "failed") {
    plan.action = RunAction::fresh;
    plan.reason = status.contains("exit_code") && status["exit_code"].is_number_integer()
                      ? fmt::format("failed before (exit {})", status["exit_code"].get<int>())
                      : "failed before";
    return plan;
  }
  if (fs::exists(d / "checkpoint.safetensors", ec)) {
    if (same_config) {
      plan.action = RunAction::resume;
      plan.reason = "checkpoint";
    } else {
      plan.reason = "checkpoint of a different config";
      plan.config_mismatch = true;
    }
    return plan;
  }
  plan.reason = "no checkpoint";
  return plan;
}

int64_t default_jobs(int64_t threads_per_run) {
  int64_t cores = 0;
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) cores = CPU_COUNT(&set);
  if (cores <= 0) cores = static_cast<int64_t>(std::thread::hardware_concurrency());
  return std::max<int64_t>(1, cores / std::max<int64_t>(1, threads_per_run));
}

std::string SweepResult::tally() const {
  std::string s =
      fmt::format("sweep: {} run{}: {} completed, {} skipped (already completed), {} failed", total,
                  total == 1 ? "" : "s", completed, skipped, failed);
  if (interrupted) s += fmt::format(", {} interrupted", interrupted);
  if (not_started) s += fmt::format(", {} not started", not_started);
  if (interrupted || not_started) s += " (run the same command again to continue)";
  return s;
}

SweepResult run_sweep(const SweepOptions& o) {
  const std::string config_path = fs::absolute(o.config_path).lexically_normal().string();
  const ExperimentConfig base = load_experiment(config_path, o.overrides);
  PELAB_CHECK(!base.sweep.axes.empty(),
              "{}: no sweep axes (add a section like `sweep: {{positional.type: [none, rotary], "
              "seed: [0, 1, 2]}}`, or override e.g. 'sweep.seed=[0,1,2]')",
              o.config_path);
  SweepResult result;
  result.out_dir = o.out_dir.empty() ? (fs::path("runs") / base.name).string() : o.out_dir;
  const std::vector<SweepRun> runs = expand_sweep(base.sweep.axes, result.out_dir, o.overrides);
  result.total = static_cast<int64_t>(runs.size());

  // Validate every run before starting any.
  std::vector<std::string> yamls;
  std::vector<int64_t> steps;
  int64_t max_threads = 1;
  for (const SweepRun& r : runs) {
    ExperimentConfig c;
    try {
      c = load_experiment(config_path, r.overrides);
    } catch (const Error& e) {
      throw Error(fmt::format("sweep run {}: {}", r.name, e.what()));
    }
    yamls.push_back(to_yaml(c));
    steps.push_back(c.training.steps);
    max_threads = std::max(max_threads, c.threads);
  }
  std::vector<RunPlan> plans;
  std::vector<std::string> mismatched;
  for (size_t i = 0; i < runs.size(); ++i) {
    plans.push_back(plan_run(runs[i].dir, yamls[i]));
    if (plans.back().action == RunAction::skip && plans.back().config_mismatch)
      mismatched.push_back(runs[i].dir);
  }
  if (!mismatched.empty()) {
    const std::string diff = first_difference(
        read_text(fs::path(mismatched[0]) / "config.yaml"),
        yamls[std::find_if(runs.begin(), runs.end(),
                           [&](const SweepRun& r) { return r.dir == mismatched[0]; }) -
              runs.begin()]);
    throw Error(fmt::format(
        "{} holds a completed run of a different config (config.yaml {}){}; delete it or "
        "choose another --out",
        mismatched[0], diff,
        mismatched.size() > 1 ? fmt::format(", and so do {} more run(s)", mismatched.size() - 1)
                              : ""));
  }

  std::vector<size_t> queue;
  int64_t to_resume = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    if (plans[i].action == RunAction::skip) {
      ++result.skipped;
      continue;
    }
    to_resume += plans[i].action == RunAction::resume;
    queue.push_back(i);
  }
  const int64_t jobs = o.jobs > 0                ? o.jobs
                       : base.sweep.parallel > 0 ? base.sweep.parallel
                                                 : default_jobs(max_threads);
  const bool tty = o.progress && isatty(STDERR_FILENO);

  fs::create_directories(result.out_dir);
  // One sweep per directory at a time (the lock goes with the process, however it ends).
  const std::string lock_path = (fs::path(result.out_dir) / ".sweep.lock").string();
  const int lock_fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  PELAB_CHECK(lock_fd >= 0, "{}: cannot create: {}", lock_path, std::strerror(errno));
  struct LockGuard {
    int fd;
    ~LockGuard() { ::close(fd); }
  } lock_guard{lock_fd};
  PELAB_CHECK(::flock(lock_fd, LOCK_EX | LOCK_NB) == 0,
              "another pelab sweep is running in {} (wait for it, or stop it first)",
              result.out_dir);
  {
    json axes = json::array();
    for (const auto& [key, values] : base.sweep.axes)
      axes.push_back({{"key", key}, {"values", values}});
    json list = json::array();
    for (const SweepRun& r : runs) {
      json values = json::object();
      for (const auto& [k, v] : r.values) values[k] = v;
      list.push_back({{"name", r.name}, {"values", values}, {"overrides", r.overrides}});
    }
    const json manifest = {{"name", base.name}, {"config", config_path}, {"overrides", o.overrides},
                           {"axes", axes},      {"jobs", jobs},          {"runs", list}};
    write_file_atomic((fs::path(result.out_dir) / "sweep.json").string(), manifest.dump(2) + "\n");
  }
  fmt::print(stderr, "sweep {}: {} runs in {}: {} to start, {} to resume, {} already completed{}\n",
             base.name, runs.size(), result.out_dir, static_cast<int64_t>(queue.size()) - to_resume,
             to_resume, result.skipped,
             queue.empty()
                 ? std::string()
                 : fmt::format("; {} at a time",
                               std::min<int64_t>(jobs, static_cast<int64_t>(queue.size()))));
  if (queue.empty()) return result;

  struct Running {
    size_t index = 0;
    pid_t pid = -1;
    Clock::time_point start;
    int64_t start_step = 0;
    std::string command;
  };
  std::vector<Running> running;
  size_t next = 0;
  int64_t finished = 0;
  bool stopping = false, killed = false;
  std::string drawn;  // the progress line on the terminal
  const Clock::time_point start = Clock::now();
  Clock::time_point last_report = start;

  auto say = [&](const std::string& line) {
    if (tty && !drawn.empty()) fmt::print(stderr, "\r\033[K");
    fmt::print(stderr, "{}\n", line);
    if (tty && !drawn.empty()) fmt::print(stderr, "{}", drawn);
    std::fflush(stderr);
  };
  auto progress_line = [&]() {
    double fraction = static_cast<double>(finished);
    for (const Running& r : running) {
      const int64_t total = steps[r.index] - r.start_step;
      const int64_t done = last_logged_step(runs[r.index].dir) - r.start_step;
      if (total > 0) fraction += std::clamp(static_cast<double>(done) / total, 0.0, 0.99);
    }
    fraction /= static_cast<double>(queue.size());
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    const std::string eta =
        fraction > 0.005 ? format_duration(elapsed * (1 - fraction) / fraction) : "?";
    return fmt::format(
        "sweep: {}/{} runs done, {} running, {} failed | {:.0f}% | {} elapsed, ETA {}", finished,
        queue.size(), running.size(), result.failed, std::floor(100 * fraction),
        format_duration(elapsed), eta);
  };

  auto launch = [&](size_t i) {
    const SweepRun& run = runs[i];
    const bool resume = plans[i].action == RunAction::resume;
    fs::create_directories(run.dir);
    const fs::path dir(run.dir);
    std::error_code ec;
    if (!resume) {  // a redo starts clean: no stale checkpoint or status
      fs::remove(dir / "checkpoint.safetensors", ec);
      fs::remove(dir / "summary.json", ec);
    }
    std::vector<std::string> args = {"train", config_path};
    args.insert(args.end(), run.overrides.begin(), run.overrides.end());
    args.insert(args.end(), {"--out", run.dir, "--no-progress"});
    if (resume) args.push_back("--resume");
    Running r;
    r.index = i;
    r.start = Clock::now();
    r.start_step = resume ? last_logged_step(dir) : 0;
    r.command = "pelab " + join_command(args);
    const std::string log = (dir / "stdout.log").string();
    if (resume) {
      std::ofstream(log, std::ios::app) << "---- resumed by pelab sweep ----\n";
    }
    std::string error;
    r.pid = spawn_logged(o.executable, args, log, resume, error);
    if (r.pid < 0) {
      ++finished;
      ++result.failed;
      const json status = {{"status", "failed"},
                           {"exit_code", 127},
                           {"error", error},
                           {"seconds", 0.0},
                           {"command", r.command}};
      write_file_atomic((dir / "status.json").string(), status.dump(2) + "\n");
      say(fmt::format("FAILED {}: {}", run.name, error));
      return;
    }
    const json status = {{"status", "running"}, {"pid", r.pid}, {"command", r.command}};
    write_file_atomic((dir / "status.json").string(), status.dump(2) + "\n");
    say(fmt::format("{} {}", resume ? "resume" : "start ", run.name));
    running.push_back(std::move(r));
  };

  auto complete = [&](const Running& r, int wstatus) {
    const SweepRun& run = runs[r.index];
    const fs::path dir(run.dir);
    const double seconds = std::chrono::duration<double>(Clock::now() - r.start).count();
    const bool exited = WIFEXITED(wstatus);
    const int code = exited ? WEXITSTATUS(wstatus) : -1;
    const int sig = WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0;
    json status = {{"exit_code", exited ? json(code) : json(nullptr)},
                   {"seconds", seconds},
                   {"command", r.command}};
    if (sig) status["signal"] = fmt::format("{} ({})", sig, strsignal(sig));
    const bool summary_done = json_string(read_json(dir / "summary.json"), "status") == "completed";
    ++finished;
    if (exited && code == 0 && summary_done) {
      status["status"] = "completed";
      ++result.completed;
      say(fmt::format("done   {} in {}", run.name, format_duration(seconds)));
    } else if ((exited && code == 3) ||
               (stopping && (sig == SIGINT || sig == SIGTERM || sig == SIGKILL))) {
      status["status"] = "interrupted";
      ++result.interrupted;
      say(fmt::format("stopped {} after {} (resumes next time)", run.name,
                      format_duration(seconds)));
    } else {
      std::string error = last_line((dir / "stdout.log").string());
      if (exited && code == 0) error = "exited 0 but wrote no completed summary.json";
      status["status"] = "failed";
      status["error"] = error;
      ++result.failed;
      say(fmt::format(
          "FAILED {} ({}): {}", run.name,
          exited ? fmt::format("exit {}", code) : fmt::format("signal {}", strsignal(sig)),
          error.empty() ? "(no output; see stdout.log)" : error));
    }
    write_file_atomic((dir / "status.json").string(), status.dump(2) + "\n");
    if (!tty && !stopping && finished < static_cast<int64_t>(queue.size())) {
      fmt::print(stderr, "{}\n", progress_line());
      last_report = Clock::now();
    }
  };

  auto signal_children = [&](int sig) {
    for (const Running& r : running) ::kill(r.pid, sig);
  };

  SweepSignals signals;
  try {
    while (true) {
      const int got = g_sweep_signals.load();
      if (got >= 1 && !stopping) {
        stopping = true;
        result.stopped = true;
        signal_children(SIGINT);
        say(
            fmt::format("sweep: interrupted; waiting for {} run(s) to save a checkpoint (again to "
                        "kill them)",
                        running.size()));
      }
      if (got >= 2 && !killed) {
        killed = true;
        signal_children(SIGKILL);
        say("sweep: killing the runs (their last checkpoints are kept)");
      }
      while (!stopping && static_cast<int64_t>(running.size()) < jobs && next < queue.size())
        launch(queue[next++]);
      for (size_t k = 0; k < running.size();) {
        int wstatus = 0;
        const pid_t done = ::waitpid(running[k].pid, &wstatus, WNOHANG);
        if (done == running[k].pid || (done < 0 && errno == ECHILD)) {
          const Running r = running[k];
          running.erase(running.begin() + static_cast<std::ptrdiff_t>(k));
          complete(r, done < 0 ? (255 << 8) : wstatus);
        } else {
          ++k;
        }
      }
      if (running.empty() && (stopping || next >= queue.size())) break;
      const Clock::time_point now = Clock::now();
      if (tty) {
        const std::string line = progress_line();
        if (line != drawn) {
          fmt::print(stderr, "\r\033[K{}", line);
          std::fflush(stderr);
          drawn = line;
        }
      } else if (std::chrono::duration<double>(now - last_report).count() >= o.report_seconds) {
        fmt::print(stderr, "{}\n", progress_line());
        std::fflush(stderr);
        last_report = now;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  } catch (...) {
    signal_children(SIGINT);
    for (const Running& r : running) {
      int wstatus = 0;
      ::waitpid(r.pid, &wstatus, 0);
    }
    throw;
  }
  if (tty && !drawn.empty()) fmt::print(stderr, "\r\033[K");
  result.not_started = static_cast<int64_t>(queue.size() - next);
  return result;
}

}  // namespace pelab
