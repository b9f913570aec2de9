#include "pelab/sweep/sweep.h"

#include <fcntl.h>
#include <sched.h>
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
#include "pelab/core/process.h"
#include "pelab/core/strings.h"
#include "pelab/io/atomic_file.h"
#include "pelab/io/file_lock.h"
#include "pelab/io/read_file.h"
#include "pelab/run/run_directory.h"
#include "pelab/run/trainer.h"
#include "run/run_files.h"

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

}  // namespace

std::string join_command(const std::vector<std::string>& args) {
  std::vector<std::string> quoted;
  for (const std::string& a : args) quoted.push_back(shell_quote(a));
  return join(quoted, " ");
}

namespace {

// The last step logged in run_dir/metrics.jsonl (0 if none).
int64_t last_logged_step(const fs::path& run_dir) {
  std::string tail;
  try {
    tail = read_regular_file_tail((run_dir / "metrics.jsonl").string(), "a run's log", 4096);
  } catch (const Error&) {
    return 0;
  }
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
    std::vector<std::string> assignments;
    for (const auto& [key, value] : r.values) assignments.push_back(key + "=" + value);
    r.overrides.insert(r.overrides.end(), assignments.begin(), assignments.end());
    const std::string given = join(assignments);
    r.overrides.push_back("sweep={}");
    auto [it, fresh] = seen.emplace(r.name, given);
    PELAB_CHECK(fresh,
                "sweep: the runs '{}' and '{}' would share the directory {} (repeated or "
                "too similar axis values)",
                it->second, given, r.dir);
  }
  return runs;
}

std::string last_line(const std::string& path) {
  std::string tail;
  try {
    tail = read_regular_file_tail(path, "a run's log", 8192);
  } catch (const Error&) {
    return "";
  }
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

void check_completed_runs_match(const SweepPlan& plan) {
  std::vector<const PlannedRun*> mismatched;
  for (const PlannedRun& p : plan.runs)
    if (p.plan.action == RunAction::skip && p.plan.config_mismatch) mismatched.push_back(&p);
  if (mismatched.empty()) return;
  const PlannedRun& first = *mismatched[0];
  const std::string diff =
      first_difference(read_text(fs::path(first.run.dir) / "config.yaml"), first.config_yaml);
  throw Error(fmt::format(
      "{} holds a completed run of a different config (config.yaml {}){}; delete it or "
      "choose another --out",
      first.run.dir, diff,
      mismatched.size() > 1 ? fmt::format(", and so do {} more run(s)", mismatched.size() - 1)
                            : ""));
}

namespace {

void write_status(const fs::path& dir, const json& status) {
  write_file_atomic((dir / "status.json").string(), status.dump(2) + "\n");
}

}  // namespace

SweepPlan plan_sweep(const SweepOptions& o) {
  SweepPlan plan;
  plan.config_path = fs::absolute(o.config_path).lexically_normal().string();
  // Loading the config loads every run of its sweep to check it; those are the runs' configs.
  std::vector<ExperimentConfig> configs;
  const ExperimentConfig base = load_experiment(plan.config_path, o.overrides, configs);
  PELAB_CHECK(!base.sweep.axes.empty(),
              "{}: no sweep axes (add a section like `sweep: {{positional.type: [none, rotary], "
              "seed: [0, 1, 2]}}`, or override e.g. 'sweep.seed=[0,1,2]')",
              o.config_path);
  plan.name = base.name;
  plan.overrides = o.overrides;
  plan.axes = base.sweep.axes;
  plan.select = base.sweep.select;
  plan.out_dir = o.out_dir.empty() ? (fs::path("runs") / base.name).string() : o.out_dir;

  int64_t max_threads = 1;
  std::vector<SweepRun> runs = expand_sweep(plan.axes, plan.out_dir, o.overrides);
  PELAB_ASSERT(runs.size() == configs.size());
  for (size_t i = 0; i < runs.size(); ++i) {
    const ExperimentConfig& c = configs[i];
    PlannedRun p;
    p.run = std::move(runs[i]);
    p.config_yaml = to_yaml(c);
    p.steps = c.training.steps;
    p.threads = c.threads;
    max_threads = std::max(max_threads, c.threads);
    plan.runs.push_back(std::move(p));
  }
  for (PlannedRun& p : plan.runs) p.plan = plan_run(p.run.dir, p.config_yaml);
  check_completed_runs_match(plan);
  plan.jobs = o.jobs > 0                ? o.jobs
              : base.sweep.parallel > 0 ? base.sweep.parallel
                                        : default_jobs(max_threads);
  return plan;
}

std::vector<std::string> train_arguments(const SweepPlan& plan, size_t i) {
  const PlannedRun& p = plan.runs.at(i);
  std::vector<std::string> args = {"train", plan.config_of(i)};
  args.insert(args.end(), p.run.overrides.begin(), p.run.overrides.end());
  args.insert(args.end(), {"--out", p.run.dir, "--no-progress"});
  if (p.plan.action == RunAction::resume) args.push_back("--resume");
  return args;
}

namespace {

// Why the sweep leaves run `p` alone this time ("" when it may start it). Another process
// training it (a Slurm task, a hand-run `pelab train`) owns its files; the trainer itself
// holds the lock while it runs. A lock or a stdout.log that is not a regular file (a FIFO)
// would block the sweep in open() forever.
std::string reason_not_to_start(const PlannedRun& p) {
  const std::string lock = run_lock_path(p.run.dir);
  try {
    if (FileLock::held_elsewhere(lock))
      return fmt::format("another pelab is training it (it holds {})", lock);
    require_regular_file_if_any((fs::path(p.run.dir) / "stdout.log").string(), "a run's log");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

StartedRun start_planned_run(const SweepPlan& plan, size_t i, const std::string& executable) {
  const PlannedRun& p = plan.runs.at(i);
  const bool resume = p.plan.action == RunAction::resume;
  fs::create_directories(p.run.dir);
  const fs::path dir(p.run.dir);
  const std::string refusal = reason_not_to_start(p);
  if (!refusal.empty()) {
    StartedRun refused;
    refused.index = i;
    refused.failure.outcome = RunOutcome::failed;
    refused.failure.line = fmt::format("FAILED {}: {}", p.run.name, refusal);
    return refused;
  }
  std::error_code ec;
  if (!resume) {  // a redo starts clean: no stale checkpoint, status or config (it may differ)
    fs::remove(dir / "checkpoint.safetensors", ec);
    fs::remove(dir / "summary.json", ec);
    fs::remove(dir / "config.yaml", ec);
  }
  const std::vector<std::string> args = train_arguments(plan, i);
  StartedRun r;
  r.index = i;
  r.start = Clock::now();
  r.start_step = resume ? last_logged_step(dir) : 0;
  r.command = "pelab " + join_command(args);
  ChildSpec child;
  child.program = executable;
  child.argv = {"pelab"};
  child.argv.insert(child.argv.end(), args.begin(), args.end());
  child.log = (dir / "stdout.log").string();
  child.append_log = resume;
  child.default_signals = true;  // the sweep forwards its signals itself
  child.die_with_parent = true;  // a sweep killed outright takes its runs with it
  if (resume) {
    std::ofstream(child.log, std::ios::app) << "---- resumed by pelab sweep ----\n";
  }
  int spawn_error = 0;
  r.pid = spawn_child(child, spawn_error);
  if (r.pid < 0) {
    const std::string error =
        fmt::format("cannot start {}: {}", executable, std::strerror(spawn_error));
    write_status(dir, {{"status", "failed"},
                       {"exit_code", 127},
                       {"error", error},
                       {"seconds", 0.0},
                       {"command", r.command}});
    r.failure = {RunOutcome::failed, fmt::format("FAILED {}: {}", p.run.name, error)};
    return r;
  }
  write_status(dir, {{"status", "running"}, {"pid", r.pid}, {"command", r.command}});
  return r;
}

FinishedRun finish_planned_run(const SweepPlan& plan, const StartedRun& r, int wstatus,
                               bool stopping) {
  const SweepRun& run = plan.runs.at(r.index).run;
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
  FinishedRun finished;
  if (exited && code == 0 && summary_done) {
    status["status"] = "completed";
    finished = {RunOutcome::completed,
                fmt::format("done   {} in {}", run.name, format_duration(seconds))};
  } else if ((exited && code == 3) ||
             (stopping && (sig == SIGINT || sig == SIGTERM || sig == SIGKILL))) {
    status["status"] = "interrupted";
    finished = {RunOutcome::interrupted, fmt::format("stopped {} after {} (resumes next time)",
                                                     run.name, format_duration(seconds))};
  } else {
    std::string error = last_line((dir / "stdout.log").string());
    if (exited && code == 0) error = "exited 0 but wrote no completed summary.json";
    status["status"] = "failed";
    status["error"] = error;
    finished = {RunOutcome::failed,
                fmt::format("FAILED {} ({}): {}", run.name,
                            exited ? fmt::format("exit {}", code)
                                   : fmt::format("signal {}", strsignal(sig)),
                            error.empty() ? "(no output; see stdout.log)" : error)};
  }
  write_status(dir, status);
  return finished;
}

FinishedRun run_planned(const SweepPlan& plan, size_t i, const std::string& executable) {
  const StartedRun r = start_planned_run(plan, i, executable);
  if (r.pid < 0) return r.failure;
  int wstatus = 0;
  pid_t done = -1;
  do {
    done = ::waitpid(r.pid, &wstatus, 0);
  } while (done < 0 && errno == EINTR);
  return finish_planned_run(plan, r, done < 0 ? (255 << 8) : wstatus, false);
}

namespace {

// One sweep per directory at a time: a lock on <out>/.sweep.lock.
FileLock sweep_dir_lock(const std::string& out_dir) {
  return FileLock(
      (fs::path(out_dir) / ".sweep.lock").string(),
      fmt::format("another pelab sweep is running in {} (wait for it, or stop it first)", out_dir));
}

}  // namespace

void write_manifest(const SweepPlan& plan) {
  json axes = json::array();
  for (const auto& [key, values] : plan.axes) axes.push_back({{"key", key}, {"values", values}});
  json list = json::array();
  for (const PlannedRun& p : plan.runs) {
    json values = json::object();
    for (const auto& [k, v] : p.run.values) values[k] = v;
    list.push_back({{"name", p.run.name}, {"values", values}, {"overrides", p.run.overrides}});
    if (!p.config_path.empty()) list.back()["config"] = p.config_path;
  }
  const json manifest = {
      {"name", plan.name}, {"config", plan.config_path}, {"overrides", plan.overrides},
      {"axes", axes},      {"jobs", plan.jobs},          {"select", plan.select},
      {"runs", list}};
  write_file_atomic((fs::path(plan.out_dir) / "sweep.json").string(), manifest.dump(2) + "\n");
}

namespace {

// Runs the queued runs of a plan in children of this process, `jobs` at a time: launches,
// reaps, forwards SIGINT/SIGTERM, and reports progress on stderr (an updating line on a
// terminal, periodic lines otherwise).
class LocalSweep {
 public:
  LocalSweep(const SweepPlan& plan, const SweepOptions& options, std::vector<size_t> queue,
             bool tty, SweepResult& result)
      : plan_(plan), options_(options), queue_(std::move(queue)), tty_(tty), result_(result) {}

  void run() {
    const StopSignals signals;
    try {
      while (true) {
        react_to_signals(signals);
        while (!stopping_ && static_cast<int64_t>(running_.size()) < plan_.jobs &&
               next_ < queue_.size())
          launch(queue_[next_++]);
        reap();
        if (running_.empty() && (stopping_ || next_ >= queue_.size())) break;
        report_progress();
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    } catch (...) {
      signal_children(SIGINT);
      for (const StartedRun& r : running_) {
        int wstatus = 0;
        ::waitpid(r.pid, &wstatus, 0);
      }
      throw;
    }
    if (tty_ && !drawn_.empty()) fmt::print(stderr, "\r\033[K");
    result_.not_started = static_cast<int64_t>(queue_.size() - next_);
  }

 private:
  // A line above the progress line, which is drawn again below it.
  void say(const std::string& line) {
    if (tty_ && !drawn_.empty()) fmt::print(stderr, "\r\033[K");
    fmt::print(stderr, "{}\n", line);
    if (tty_ && !drawn_.empty()) fmt::print(stderr, "{}", drawn_);
    std::fflush(stderr);
  }

  std::string progress_line() const {
    double fraction = static_cast<double>(finished_);
    for (const StartedRun& r : running_) {
      const int64_t total = plan_.runs[r.index].steps - r.start_step;
      const int64_t done = last_logged_step(plan_.runs[r.index].run.dir) - r.start_step;
      if (total > 0) fraction += std::clamp(static_cast<double>(done) / total, 0.0, 0.99);
    }
    fraction /= static_cast<double>(queue_.size());
    const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
    const std::string eta =
        fraction > 0.005 ? format_duration(elapsed * (1 - fraction) / fraction) : "?";
    return fmt::format(
        "sweep: {}/{} runs done, {} running, {} failed | {:.0f}% | {} elapsed, ETA {}", finished_,
        queue_.size(), running_.size(), result_.failed, std::floor(100 * fraction),
        format_duration(elapsed), eta);
  }

  void launch(size_t i) {
    StartedRun r = start_planned_run(plan_, i, options_.executable);
    if (r.pid < 0) {
      count(r.failure);
      return;
    }
    const bool resume = plan_.runs[i].plan.action == RunAction::resume;
    say(fmt::format("{} {}", resume ? "resume" : "start ", plan_.runs[i].run.name));
    running_.push_back(std::move(r));
  }

  void count(const FinishedRun& f) {
    ++finished_;
    if (f.outcome == RunOutcome::completed) ++result_.completed;
    if (f.outcome == RunOutcome::interrupted) ++result_.interrupted;
    if (f.outcome == RunOutcome::failed) ++result_.failed;
    say(f.line);
  }

  // Collects the runs that ended.
  void reap() {
    for (size_t k = 0; k < running_.size();) {
      int wstatus = 0;
      const pid_t done = ::waitpid(running_[k].pid, &wstatus, WNOHANG);
      if (done == running_[k].pid || (done < 0 && errno == ECHILD)) {
        const StartedRun r = running_[k];
        running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(k));
        count(finish_planned_run(plan_, r, done < 0 ? (255 << 8) : wstatus, stopping_));
        if (!tty_ && !stopping_ && finished_ < static_cast<int64_t>(queue_.size())) {
          fmt::print(stderr, "{}\n", progress_line());
          last_report_ = Clock::now();
        }
      } else {
        ++k;
      }
    }
  }

  // The first signal stops launching and asks the runs to save and stop; the second kills them.
  void react_to_signals(const StopSignals& signals) {
    const int got = signals.count();
    if (got >= 1 && !stopping_) {
      stopping_ = true;
      result_.stopped = true;
      signal_children(SIGINT);
      say(fmt::format(
          "sweep: interrupted; waiting for {} run(s) to save a checkpoint (again to kill them)",
          running_.size()));
    }
    if (got >= 2 && !killed_) {
      killed_ = true;
      signal_children(SIGKILL);
      say("sweep: killing the runs (their last checkpoints are kept)");
    }
  }

  void report_progress() {
    const Clock::time_point now = Clock::now();
    if (tty_) {
      const std::string line = progress_line();
      if (line != drawn_) {
        fmt::print(stderr, "\r\033[K{}", line);
        std::fflush(stderr);
        drawn_ = line;
      }
    } else if (std::chrono::duration<double>(now - last_report_).count() >=
               options_.report_seconds) {
      fmt::print(stderr, "{}\n", progress_line());
      std::fflush(stderr);
      last_report_ = now;
    }
  }

  void signal_children(int sig) {
    for (const StartedRun& r : running_) ::kill(r.pid, sig);
  }

  const SweepPlan& plan_;
  const SweepOptions& options_;
  const std::vector<size_t> queue_;  // indices in plan_.runs of the runs to do
  const bool tty_;
  SweepResult& result_;
  std::vector<StartedRun> running_;
  size_t next_ = 0;  // in queue_
  int64_t finished_ = 0;
  bool stopping_ = false, killed_ = false;
  std::string drawn_;  // the progress line on the terminal
  const Clock::time_point start_ = Clock::now();
  Clock::time_point last_report_ = start_;
};

}  // namespace

SweepResult run_sweep(const SweepOptions& o) {
  return run_sweep_plan(plan_sweep(o), o);
}

SweepResult run_sweep_plan(const SweepPlan& plan, const SweepOptions& o) {
  SweepResult result;
  result.out_dir = plan.out_dir;
  result.total = static_cast<int64_t>(plan.runs.size());
  std::vector<size_t> queue;
  int64_t to_resume = 0;
  for (size_t i = 0; i < plan.runs.size(); ++i) {
    const RunAction action = plan.runs[i].plan.action;
    if (action == RunAction::skip) {
      ++result.skipped;
      continue;
    }
    to_resume += action == RunAction::resume;
    queue.push_back(i);
  }
  const bool tty = o.progress && isatty(STDERR_FILENO);

  fs::create_directories(result.out_dir);
  const FileLock lock = sweep_dir_lock(result.out_dir);
  write_manifest(plan);
  fmt::print(stderr, "sweep {}: {} runs in {}: {} to start, {} to resume, {} already completed{}\n",
             plan.name, plan.runs.size(), result.out_dir,
             static_cast<int64_t>(queue.size()) - to_resume, to_resume, result.skipped,
             queue.empty()
                 ? std::string()
                 : fmt::format("; {} at a time",
                               std::min<int64_t>(plan.jobs, static_cast<int64_t>(queue.size()))));
  if (queue.empty()) return result;
  LocalSweep(plan, o, std::move(queue), tty, result).run();
  return result;
}

}  // namespace pelab
