#include "pelab/sweep/slurm.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "pelab/config/yaml_reader.h"
#include "pelab/core/error.h"
#include "pelab/core/process.h"
#include "pelab/core/strings.h"
#include "pelab/io/atomic_file.h"
#include "run/run_files.h"

namespace pelab {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

using run_files::json_string;
using run_files::read_json;

// The options a user may pass through, and the format each value must have ("" = any word).
const std::vector<std::pair<std::string, std::string>> kSlurmKeys = {{"account", ""},
                                                                     {"partition", ""},
                                                                     {"qos", ""},
                                                                     {"time", "time"},
                                                                     {"mem", "memory"},
                                                                     {"mem-per-cpu", "memory"},
                                                                     {"cpus-per-task", "count"},
                                                                     {"constraint", ""},
                                                                     {"gres", ""},
                                                                     {"gpus", ""},
                                                                     {"reservation", ""},
                                                                     {"exclude", ""},
                                                                     {"nodelist", ""},
                                                                     {"tmp", "memory"},
                                                                     {"mail-type", ""},
                                                                     {"mail-user", ""},
                                                                     {"job-name", ""}};

// Options the launcher sets itself, and what to use instead.
const std::map<std::string, std::string> kLauncherKeys = {
    {"array", "use --max-parallel"},
    {"output", "the logs go to <out>/slurm/"},
    {"error", "the logs go to <out>/slurm/"},
    {"open-mode", "the logs are appended to"},
    {"requeue", "tasks are always requeueable"},
    {"no-requeue", "tasks are always requeueable"},
    {"dependency", "the compare job depends on the array"},
    {"parsable", "pelab reads the job id"},
    {"wrap", "pelab writes the script"},
    {"chdir", "the script uses absolute paths"}};

// The options the compare job shares with the array (where and on whose account it runs).
const std::set<std::string> kCompareKeys = {"account", "partition", "qos", "reservation", "time"};

const std::string kTaskIdWord = "\"$SLURM_ARRAY_TASK_ID\"";

std::string known_keys() {
  std::vector<std::string> keys;
  for (const auto& [key, format] : kSlurmKeys) keys.push_back(key);
  return join(keys);
}

void check_slurm_value(const std::string& key, const std::string& value,
                       const std::string& format) {
  static const std::regex time(
      R"(\d+|\d+:\d+|\d+:\d+:\d+|\d+-\d+|\d+-\d+:\d+|\d+-\d+:\d+:\d+|UNLIMITED|unlimited|infinite)");
  static const std::regex memory(R"(\d+[KMGTkmgt]?)");
  static const std::regex count(R"([1-9]\d{0,5})");  // at most 999999: a count, not a typo
  PELAB_CHECK(!value.empty(), "--slurm-opt {}=: the value is empty", key);
  // A whitelist, not a blacklist: the value goes into a generated script's #SBATCH line and to
  // the terminal, where a control character (an escape sequence, a vertical tab) would do
  // what no Slurm value needs.
  PELAB_CHECK(std::all_of(value.begin(), value.end(),
                          [](char ch) {
                            return std::isalnum(static_cast<unsigned char>(ch)) ||
                                   std::strchr("._:,+=@/%-", ch) != nullptr;
                          }),
              "--slurm-opt {}={}: a value holds only letters, digits and ._:,+=@/%- (no spaces, "
              "quotes, shell or control characters)",
              key, message_text(value));
  if (format == "time")
    PELAB_CHECK(std::regex_match(value, time),
                "--slurm-opt time={}: not a Slurm time (MINUTES, MINUTES:SECONDS, H:MM:SS, "
                "DAYS-HOURS, DAYS-H:MM or DAYS-H:MM:SS)",
                value);
  if (format == "memory")
    PELAB_CHECK(std::regex_match(value, memory),
                "--slurm-opt {}={}: not a memory size (a whole number with an optional unit K, "
                "M, G or T, e.g. 8G)",
                key, value);
  if (format == "count")
    PELAB_CHECK(std::regex_match(value, count),
                "--slurm-opt {}={}: not a whole number in [1, 999999]", key, value);
}

std::string option_value(const std::vector<SlurmOption>& options, const std::string& key) {
  for (const auto& [k, v] : options)
    if (k == key) return v;
  return "";
}

// `name` on PATH, or "" when it is not there.
std::string find_program(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const fs::path candidate = fs::path(dir.empty() ? "." : dir) / name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return "";
}

// sbatch --parsable ARGS...: the job id it prints ("ID" or "ID;CLUSTER").
std::string sbatch(const std::string& program, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {program, "--parsable"};
  argv.insert(argv.end(), args.begin(), args.end());
  const CapturedRun run = run_captured(argv);
  std::string id = run.out.substr(0, run.out.find_first_of(";\n"));
  PELAB_CHECK(run.status == 0 && !id.empty() &&
                  std::all_of(id.begin(), id.end(), [](char c) { return std::isdigit(c); }),
              "sbatch {} failed (exit {}; its message is above)", args.back(), run.status);
  return id;
}

fs::path slurm_dir(const SweepPlan& plan) {
  return fs::path(plan.out_dir) / "slurm";
}

json read_jobs(const std::string& out_dir) {
  json jobs = read_json(fs::path(out_dir) / "slurm" / "jobs.json");
  if (!jobs.is_object() || !jobs.contains("submissions") || !jobs["submissions"].is_array())
    jobs = {{"submissions", json::array()}};
  return jobs;
}

// The array jobs of every submission recorded in <out>/slurm/jobs.json, oldest first.
std::vector<std::string> array_jobs(const std::string& out_dir) {
  std::vector<std::string> ids;
  const json jobs = read_jobs(out_dir);
  for (const json& s : jobs["submissions"])
    if (const std::string id = json_string(s, "array_job"); !id.empty()) ids.push_back(id);
  return ids;
}

struct TaskState {
  std::string state, reason;  // squeue's %T and %r
};

// What squeue says of the tasks of array job `job`, by index; false when squeue is missing or
// no longer knows the job.
bool squeue_tasks(const std::string& job, std::map<size_t, TaskState>& tasks) {
  const std::string squeue = find_program("squeue");
  if (job.empty() || squeue.empty()) return false;
  const CapturedRun run = run_captured({squeue, "-h", "-r", "-j", job, "-o", "%K %T %r"});
  if (run.status != 0) return false;
  std::stringstream lines(run.out);
  for (std::string line; std::getline(lines, line);) {
    std::stringstream words(line);
    std::string index;
    TaskState t;
    words >> index >> t.state >> t.reason;
    if (!index.empty() && std::all_of(index.begin(), index.end(), ::isdigit))
      tasks[std::stoul(index)] = t;
  }
  return true;
}

// What squeue says of every array job of the sweep, merged by index (a run has the same index
// in every submission); false when squeue is missing or lists none of them.
bool squeue_sweep_tasks(const std::string& out_dir, std::map<size_t, TaskState>& tasks) {
  bool any = false;
  for (const std::string& job : array_jobs(out_dir)) any = squeue_tasks(job, tasks) || any;
  return any;
}

bool still_queued(const std::string& state) {
  return state != "COMPLETED" && state != "FAILED" && state != "CANCELLED" && state != "TIMEOUT" &&
         state != "OUT_OF_MEMORY" && state != "NODE_FAIL" && state != "PREEMPTED" &&
         state != "BOOT_FAIL" && state != "DEADLINE";
}

// Slurm reads #SBATCH lines with a parser of its own: '#' starts a comment, quotes and '\\'
// are interpreted, '%' is a pattern, whitespace splits. A path written there, and into the
// shell lines the script and the hints show, is held to characters that mean nothing to
// either.
bool slurm_safe(char ch) {
  return std::isalnum(static_cast<unsigned char>(ch)) || std::strchr("/._+-=,@:", ch) != nullptr;
}

void check_path_for_slurm(const std::string& path, const std::string& what) {
  PELAB_CHECK(std::all_of(path.begin(), path.end(), slurm_safe),
              "{}: {} of a sweep run by Slurm may hold only letters, digits and / . _ + - = , @ : "
              "(Slurm reads it in #SBATCH lines); choose another",
              path, what);
}

// The job name: the sweep's name with anything Slurm or a shell would read differently
// replaced by '_'.
std::string slurm_job_name(std::string name) {
  for (char& ch : name)
    if (!slurm_safe(ch) || ch == '/' || ch == ':') ch = '_';
  return name;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

std::vector<SlurmOption> parse_slurm_options(const std::vector<std::string>& options) {
  std::vector<SlurmOption> parsed;
  for (const std::string& option : options) {
    const size_t eq = option.find('=');
    PELAB_CHECK(eq != std::string::npos && eq > 0,
                "--slurm-opt '{}': expected KEY=VALUE, e.g. time=2:00:00 or partition=gpu",
                message_text(option));
    const std::string key = option.substr(0, eq), value = option.substr(eq + 1);
    const auto launcher = kLauncherKeys.find(key);
    PELAB_CHECK(launcher == kLauncherKeys.end(),
                "--slurm-opt {}: pelab sweep sets --{} itself ({})", message_text(option), key,
                launcher == kLauncherKeys.end() ? "" : launcher->second);
    const auto known = std::find_if(kSlurmKeys.begin(), kSlurmKeys.end(),
                                    [&](const auto& k) { return k.first == key; });
    PELAB_CHECK(known != kSlurmKeys.end(), "--slurm-opt {}: unknown key '{}' (known: {})",
                message_text(option), message_text(key), known_keys());
    PELAB_CHECK(option_value(parsed, key).empty(), "--slurm-opt {}: {} is given twice",
                message_text(option), key);
    check_slurm_value(key, value, known->second);
    parsed.emplace_back(key, value);
  }
  return parsed;
}

std::vector<size_t> runs_to_launch(const SweepPlan& plan) {
  std::vector<size_t> indices;
  for (size_t i = 0; i < plan.runs.size(); ++i)
    if (plan.runs[i].plan.action != RunAction::skip) indices.push_back(i);
  return indices;
}

std::string array_indices(const std::vector<size_t>& indices) {
  std::string s;
  for (size_t k = 0; k < indices.size();) {
    size_t end = k;
    while (end + 1 < indices.size() && indices[end + 1] == indices[end] + 1) ++end;
    if (!s.empty()) s += ',';
    s += std::to_string(indices[k]);
    if (end > k) s += "-" + std::to_string(indices[end]);
    k = end + 1;
  }
  return s;
}

SweepPlan absolute_plan(SweepPlan plan) {
  const fs::path out = fs::absolute(plan.out_dir).lexically_normal();
  plan.out_dir = out.string();
  for (PlannedRun& p : plan.runs) p.run.dir = (out / p.run.name).string();
  return plan;
}

std::vector<std::string> task_arguments(const SweepPlan& plan, const std::string& executable,
                                        size_t index) {
  std::vector<std::string> args = {executable};
  if (plan.task_command.empty()) {
    args.insert(args.end(), {"sweep", plan.config_path});
    args.insert(args.end(), plan.overrides.begin(), plan.overrides.end());
    args.insert(args.end(), {"--out", plan.out_dir});
  } else {
    args.insert(args.end(), plan.task_command.begin(), plan.task_command.end());
  }
  args.insert(args.end(), {"--index", std::to_string(index)});
  return args;
}

int64_t plan_threads(const SweepPlan& plan) {
  int64_t threads = 1;
  for (const PlannedRun& p : plan.runs) threads = std::max(threads, p.threads);
  return threads;
}

std::string slurm_array_script(const SweepPlan& plan, const std::vector<size_t>& indices,
                               const SlurmLaunch& launch) {
  const int64_t threads = plan_threads(plan);
  const std::string cpus = option_value(launch.options, "cpus-per-task");
  PELAB_CHECK(cpus.empty() || std::stoll(cpus) >= threads,
              "--slurm-opt cpus-per-task={}: fewer CPUs than the {} threads each run trains with "
              "(set --threads)",
              cpus, threads);
  const std::string name = option_value(launch.options, "job-name");
  const fs::path dir = slurm_dir(plan);
  std::string s = fmt::format(
      "#!/bin/bash\n"
      "# pelab sweep {name}: {n} of its {total} runs, one array task each, written by\n"
      "# `pelab sweep --launcher slurm`. Submit it as it is, then the comparison:\n"
      "#   jobid=$(sbatch --parsable {dir}/sweep.sbatch)\n"
      "#   sbatch --dependency=afterany:$jobid {dir}/compare.sbatch\n"
      "# Task I trains run I of {out}/sweep.json, resuming from its checkpoint when it is\n"
      "# requeued or submitted again. `exec` makes pelab the batch process, so Slurm's SIGTERM\n"
      "# reaches it and it saves a checkpoint before the SIGKILL.\n"
      "#SBATCH --job-name={job}\n"
      "#SBATCH --array={array}{limit}\n"
      "#SBATCH --cpus-per-task={cpus}\n"
      "#SBATCH --output={dir}/run-%a.log\n"
      "#SBATCH --open-mode=append\n"
      "#SBATCH --requeue\n",
      fmt::arg("name", plan.name), fmt::arg("n", indices.size()),
      fmt::arg("total", plan.runs.size()), fmt::arg("dir", dir.string()),
      fmt::arg("out", plan.out_dir),
      fmt::arg("job", slurm_job_name(name.empty() ? "pelab-" + plan.name : name)),
      fmt::arg("array", array_indices(indices)),
      fmt::arg("limit", launch.max_parallel > 0 ? fmt::format("%{}", launch.max_parallel) : ""),
      fmt::arg("cpus", cpus.empty() ? std::to_string(threads) : cpus));
  for (const auto& [key, value] : launch.options)
    if (key != "cpus-per-task" && key != "job-name")
      s += fmt::format("#SBATCH --{}={}\n", key, value);
  std::vector<std::string> args = task_arguments(plan, launch.executable, 0);
  args.pop_back();  // the index: the task's own, from Slurm
  s += "\nexec " + join_command(args) + " " + kTaskIdWord + "\n";
  return s;
}

std::string slurm_compare_script(const SweepPlan& plan, const SlurmLaunch& launch) {
  const std::string name = option_value(launch.options, "job-name");
  std::string s = fmt::format(
      "#!/bin/bash\n"
      "# pelab sweep {name}: compares its runs once every task of the array has ended\n"
      "# (submitted with --dependency=afterany:ARRAY_JOB_ID).\n"
      "#SBATCH --job-name={job}-compare\n"
      "#SBATCH --cpus-per-task=1\n"
      "#SBATCH --output={dir}/compare-%j.log\n"
      "#SBATCH --open-mode=append\n",
      fmt::arg("name", plan.name),
      fmt::arg("job", slurm_job_name(name.empty() ? "pelab-" + plan.name : name)),
      fmt::arg("dir", slurm_dir(plan).string()));
  for (const auto& [key, value] : launch.options)
    if (kCompareKeys.count(key)) s += fmt::format("#SBATCH --{}={}\n", key, value);
  std::vector<std::string> report = {launch.executable};
  if (plan.report_command.empty())
    report.insert(report.end(), {"compare", plan.out_dir, "--metric", launch.metric});
  else
    report.insert(report.end(), plan.report_command.begin(), plan.report_command.end());
  s += "\nexec " + join_command(report) + "\n";
  return s;
}

SlurmSubmission submit_slurm_sweep(const SweepOptions& options, const SlurmLaunch& launch) {
  return submit_slurm_plan(plan_sweep(options), launch);
}

SlurmSubmission submit_slurm_plan(const SweepPlan& planned, const SlurmLaunch& launch) {
  const SweepPlan plan = absolute_plan(planned);
  check_path_for_slurm(plan.out_dir, "the sweep directory (--out)");
  check_path_for_slurm(launch.executable, "the pelab executable");
  for (size_t i = 0; i < plan.runs.size(); ++i)
    check_path_for_slurm(plan.config_of(i), "the config");
  SlurmSubmission sub;
  sub.out_dir = plan.out_dir;
  sub.total = plan.runs.size();
  // A task of an earlier submission that is still queued or running will do its run: submitting
  // it again would put two tasks on one directory.
  std::map<size_t, TaskState> queued;
  squeue_sweep_tasks(plan.out_dir, queued);
  for (size_t i : runs_to_launch(plan))
    if (!queued.count(i) || !still_queued(queued[i].state)) sub.indices.push_back(i);
  if (sub.indices.empty()) return sub;

  sub.script = slurm_array_script(plan, sub.indices, launch);
  const fs::path dir = slurm_dir(plan);
  ensure_directory(dir.string());
  write_manifest(plan);
  sub.script_path = (dir / "sweep.sbatch").string();
  sub.compare_script_path = (dir / "compare.sbatch").string();
  write_file_atomic(sub.script_path, sub.script);
  write_file_atomic(sub.compare_script_path, slurm_compare_script(plan, launch));
  if (launch.dry_run) return sub;

  const std::string program = find_program("sbatch");
  PELAB_CHECK(!program.empty(),
              "sbatch is not on PATH (is this a Slurm cluster's login node?); --dry-run writes "
              "{} without submitting it",
              sub.script_path);
  // The comparison waits for this array and for every earlier one that still has tasks.
  std::string after;
  for (const std::string& job : array_jobs(plan.out_dir)) {
    std::map<size_t, TaskState> tasks;
    if (squeue_tasks(job, tasks) && std::any_of(tasks.begin(), tasks.end(), [](const auto& t) {
          return still_queued(t.second.state);
        }))
      after += ":" + job;
  }
  sub.array_job = sbatch(program, {sub.script_path});
  // Recorded at once: if the comparison cannot be submitted, the next submission still knows
  // this array's tasks and does not submit their runs twice.
  json jobs = read_jobs(plan.out_dir);
  jobs["submissions"].push_back({{"array_job", sub.array_job},
                                 {"indices", array_indices(sub.indices)},
                                 {"runs", sub.indices.size()},
                                 {"submitted", utc_now()}});
  const fs::path jobs_path = dir / "jobs.json";
  write_file_atomic(jobs_path.string(), jobs.dump(2) + "\n");
  sub.compare_job =
      sbatch(program, {"--dependency=afterany:" + sub.array_job + after, sub.compare_script_path});
  jobs["submissions"].back()["compare_job"] = sub.compare_job;
  write_file_atomic(jobs_path.string(), jobs.dump(2) + "\n");
  return sub;
}

std::vector<std::string> sweep_commands(const SweepOptions& options,
                                        const std::string& executable) {
  const SweepPlan plan = absolute_plan(plan_sweep(options));
  std::vector<std::string> lines;
  for (size_t i : runs_to_launch(plan))
    lines.push_back(join_command(task_arguments(plan, executable, i)));
  if (!lines.empty()) {
    ensure_directory(plan.out_dir);
    write_manifest(plan);
  }
  return lines;
}

// ---- one run as a task ----------------------------------------------------------------

namespace {

// A task must train the run the submission meant: sweep.json, written when the sweep was
// submitted, must name the same run at the same index.
void check_index_matches_manifest(const SweepPlan& plan, size_t index) {
  const json manifest = read_json(fs::path(plan.out_dir) / "sweep.json");
  if (!manifest.is_object() || !manifest.contains("runs") || !manifest["runs"].is_array()) return;
  const json& runs = manifest["runs"];
  const std::string listed = index < runs.size() ? json_string(runs[index], "name") : "(none)";
  PELAB_CHECK(runs.size() == plan.runs.size() && listed == plan.runs[index].run.name,
              "--index {}: {}/sweep.json lists another sweep (run {} is '{}' there, '{}' here): "
              "the config or overrides changed since it was written; submit the sweep again",
              index, plan.out_dir, index, listed, plan.runs[index].run.name);
}

// Waits for the run's child, forwarding the first SIGINT/SIGTERM to it (it saves and exits).
// Polls rather than blocks, so a signal that came before the child started is forwarded too.
int wait_forwarding_signals(pid_t pid, const StopSignals& signals, bool& stopping) {
  while (true) {
    const int sig = signals.last();
    if (sig && !stopping) {
      stopping = true;
      ::kill(pid, sig);
    }
    int wstatus = 0;
    const pid_t done = ::waitpid(pid, &wstatus, WNOHANG);
    if (done == pid) return wstatus;
    if (done < 0 && errno != EINTR) return 255 << 8;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace

int run_sweep_task(const SweepOptions& options, int64_t index) {
  return run_plan_task(plan_sweep(options), index, options.executable);
}

int run_plan_task(SweepPlan plan, int64_t index, const std::string& executable) {
  const size_t n = plan.runs.size();
  PELAB_CHECK(index >= 0 && static_cast<size_t>(index) < n,
              "--index {}: the sweep has {} runs (0-{})", index, n, n - 1);
  const size_t i = static_cast<size_t>(index);
  check_index_matches_manifest(plan, i);
  PlannedRun& p = plan.runs[i];
  if (p.plan.action == RunAction::skip) {
    fmt::print(stderr, "skip   {} (already completed)\n", p.run.name);
    return 0;
  }
  const StopSignals signals;
  ensure_directory(p.run.dir);
  // Planned again just before the start: another task may have finished it meanwhile. A run
  // another process is training now is refused by start_planned_run (its trainer holds the
  // run's lock, pelab/run/trainer.h).
  p.plan = plan_run(p.run.dir, p.config_yaml);
  if (p.plan.action == RunAction::skip) {
    fmt::print(stderr, "skip   {} (already completed)\n", p.run.name);
    return 0;
  }
  const StartedRun r = start_planned_run(plan, i, executable);
  if (r.pid < 0) {
    fmt::print(stderr, "{}\n", r.failure.line);
    return 1;
  }
  const char* restarts = std::getenv("SLURM_RESTART_COUNT");
  fmt::print(stderr, "{} {}{}{}\n", p.plan.action == RunAction::resume ? "resume" : "start ",
             p.run.name,
             r.start_step > 0 ? fmt::format(" from step {}", r.start_step) : std::string(),
             restarts ? fmt::format(" (requeued {} time(s))", restarts) : std::string());
  std::fflush(stderr);
  bool stopping = false;
  const int wstatus = wait_forwarding_signals(r.pid, signals, stopping);
  const FinishedRun finished = finish_planned_run(plan, r, wstatus, stopping);
  fmt::print(stderr, "{}\n", finished.line);
  return finished.outcome == RunOutcome::completed     ? 0
         : finished.outcome == RunOutcome::interrupted ? 3
                                                       : 1;
}

// ---- status ------------------------------------------------------------------------------

namespace {

RunStatus run_status_from_files(const std::string& name, const fs::path& dir) {
  RunStatus s;
  s.name = name;
  std::error_code ec;
  if (json_string(read_json(dir / "summary.json"), "status") == "completed") {
    s.state = RunState::done;
    return s;
  }
  const json status = read_json(dir / "status.json");
  const std::string recorded = json_string(status, "status");
  if (recorded == "failed") {
    s.state = RunState::failed;
    s.detail = status.contains("exit_code") && status["exit_code"].is_number_integer()
                   ? fmt::format("exit {}: {}", status["exit_code"].get<int>(),
                                 json_string(status, "error"))
                   : json_string(status, "error");
  } else if (recorded == "running") {
    s.state = RunState::running;
  } else if (fs::exists(dir / "checkpoint.safetensors", ec)) {
    s.detail = recorded == "interrupted" ? "interrupted; resumes from its checkpoint"
                                         : "resumes from its checkpoint";
  } else {
    s.detail = "not started";
  }
  return s;
}

// Corrects the run directories' view with squeue's: a queued task is pending, and a run whose
// status.json says "running" although its task is no longer running was killed before it
// could record that (SIGKILL, a lost node).
std::string merge_squeue(SweepStatus& status, const std::string& out_dir) {
  std::map<size_t, TaskState> tasks;
  const std::vector<std::string> jobs = array_jobs(out_dir);
  if (jobs.empty()) return "";
  if (!squeue_sweep_tasks(out_dir, tasks))
    return find_program("squeue").empty()
               ? ""
               : fmt::format("Slurm: squeue no longer lists array job{} {}",
                             jobs.size() > 1 ? "s" : "", join(jobs));
  std::map<std::string, int64_t> states;
  for (size_t i = 0; i < status.runs.size(); ++i) {
    RunStatus& run = status.runs[i];
    const auto it = tasks.find(i);
    const bool active =
        it != tasks.end() && (it->second.state == "RUNNING" || it->second.state == "COMPLETING");
    if (it != tasks.end()) ++states[it->second.state];
    if (run.state == RunState::running && !active) {
      run.state = RunState::pending;
      run.detail = "its task ended without recording it; resumes from its checkpoint";
    } else if (run.state == RunState::pending && it != tasks.end() &&
               it->second.state == "PENDING") {
      run.detail = fmt::format("queued ({})", it->second.reason);
    }
  }
  std::string s = fmt::format("Slurm: array job{} {}:", jobs.size() > 1 ? "s" : "", join(jobs));
  for (const auto& [state, n] : states) s += fmt::format(" {} {},", n, state);
  if (states.empty()) s += " no task queued or running";
  if (s.back() == ',') s.pop_back();
  return s;
}

const char* state_name(RunState s) {
  switch (s) {
    case RunState::done:
      return "done";
    case RunState::running:
      return "running";
    case RunState::failed:
      return "failed";
    case RunState::pending:
      return "pending";
  }
  return "?";
}

}  // namespace

SweepStatus sweep_status(const std::string& out_dir) {
  const json manifest = read_json(fs::path(out_dir) / "sweep.json");
  PELAB_CHECK(manifest.is_object() && manifest.contains("runs") && manifest["runs"].is_array(),
              "{}: no sweep.json here (not a sweep directory, or no sweep was started in it)",
              out_dir);
  SweepStatus status;
  status.out_dir = out_dir;
  for (const json& run : manifest["runs"]) {
    const std::string name = json_string(run, "name");
    status.runs.push_back(run_status_from_files(name, fs::path(out_dir) / name));
  }
  status.scheduler = merge_squeue(status, out_dir);
  return status;
}

int64_t SweepStatus::count(RunState s) const {
  return std::count_if(runs.begin(), runs.end(), [s](const RunStatus& r) { return r.state == s; });
}

std::string SweepStatus::report() const {
  std::string s = fmt::format("sweep {}: {} runs: {} done, {} running, {} failed, {} pending\n",
                              out_dir, runs.size(), count(RunState::done), count(RunState::running),
                              count(RunState::failed), count(RunState::pending));
  for (RunState state : {RunState::running, RunState::failed, RunState::pending})
    for (const RunStatus& r : runs)
      if (r.state == state)
        s += fmt::format("  {:<8}{}{}\n", state_name(state), r.name,
                         r.detail.empty() ? "" : ": " + r.detail);
  if (!scheduler.empty()) s += scheduler + "\n";
  return s;
}

}  // namespace pelab
