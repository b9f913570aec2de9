#include "pelab/run/run_directory.h"

#include <fmt/format.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "pelab/config/yaml_reader.h"
#include "pelab/core/error.h"
#include "pelab/core/strings.h"
#include "pelab/io/atomic_file.h"
#include "pelab/io/read_file.h"
#include "pelab/io/safetensors.h"
#include "pelab/run/environment.h"
#include "pelab/run/run_checkpoint.h"
#include "run/run_files.h"

namespace pelab {

namespace fs = std::filesystem;
using json = nlohmann::json;

bool is_run_directory(const std::string& dir) {
  std::error_code ec;
  const fs::path d = dir.empty() ? fs::path(".") : fs::path(dir);
  if (!fs::exists(d / "config.yaml", ec)) return false;
  for (const char* name : {"checkpoint.safetensors", "summary.json", ".run.lock"})
    if (fs::exists(d / name, ec)) return true;
  return false;
}

std::string run_lock_path(const std::string& run_dir) {
  return (fs::path(run_dir) / ".run.lock").string();
}

void write_run_file(const std::string& run_dir, const std::string& name, const std::string& text) {
  write_file_atomic((fs::path(run_dir) / name).string(), text);
}

namespace {

// Temporaries of checkpoint writes that a killed process left behind.
void remove_stale_temporaries(const std::string& ckpt_path) {
  const fs::path ckpt(ckpt_path);
  const std::string prefix = ckpt.filename().string() + ".tmp-";
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(ckpt.parent_path(), ec))
    if (entry.path().filename().string().rfind(prefix, 0) == 0) fs::remove(entry.path(), ec);
}

// What pelab writes into a run directory: the trainer's files, the sweep's files for its runs
// (pelab/sweep/sweep.h), and the temporaries of atomic writes ("NAME.tmp-PID").
bool is_run_file(const std::string& name) {
  static const std::set<std::string> kRunFiles = {
      "config.yaml", "environment.json", "metrics.jsonl", "train.log",  "checkpoint.safetensors",
      "eval.csv",    "per_position.csv", "summary.json",  "stdout.log", "status.json",
      ".run.lock"};
  return kRunFiles.count(name.substr(0, name.find(".tmp-"))) > 0;
}

// A new run goes into a directory that does not exist yet, that holds only what pelab writes
// into a run (a sweep prepares its runs' directories; a run may have died before writing its
// config), or that holds a run of this very config: never into one of other files, whose
// config.yaml it would overwrite. Checked before anything is created or opened, so a refusal
// leaves the file system exactly as it was.
void check_new_run_directory(const std::string& dir, const std::string& config_yaml) {
  std::error_code ec;
  const fs::file_status status = fs::status(dir, ec);
  if (!fs::exists(status)) return;
  PELAB_CHECK(fs::is_directory(status), "{}: not a directory; a run is written into a directory",
              dir);
  const fs::path config = fs::path(dir) / "config.yaml";
  if (fs::exists(fs::symlink_status(config, ec))) {
    PELAB_CHECK(fs::is_regular_file(fs::symlink_status(config, ec)),
                "{}: not a regular file, so {} is not a pelab run; choose another --out",
                config.string(), dir);
    const std::string difference = first_difference(run_files::read_text(config), config_yaml);
    PELAB_CHECK(difference.empty(),
                "{} holds a run of another config (config.yaml, {}); choose another --out or "
                "delete it",
                dir, message_text(difference));
    return;
  }
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    PELAB_CHECK(is_run_file(it->path().filename().string()),
                "{} holds '{}', which is not a pelab run's file; a run is written into a new or "
                "empty directory, or one holding a run of the same config (choose another --out)",
                dir, message_text(it->path().filename().string()));
  PELAB_CHECK(!ec, "{}: cannot list the directory ({})", dir, ec.message());
}

// The run's lock, taken before anything in the directory is read or changed. A new run's
// directory is created for it; nothing else is written if another process holds it.
std::unique_ptr<FileLock> locked(const std::string& dir, const std::string& ckpt_path,
                                 const std::string& config_yaml, bool resume) {
  PELAB_CHECK(!resume || fs::exists(ckpt_path), "{}: nothing to resume (no checkpoint.safetensors)",
              dir);
  if (!resume) check_new_run_directory(dir, config_yaml);
  // The logs are appended to by plain opens, which a FIFO would block forever.
  for (const char* log : {"train.log", "metrics.jsonl"})
    require_regular_file_if_any((fs::path(dir) / log).string(), "a run's log");
  fs::create_directories(dir);
  return std::make_unique<FileLock>(
      run_lock_path(dir),
      fmt::format("another pelab is training {} (it holds {})", dir, run_lock_path(dir)));
}

std::string checked_dir(const std::string& run_dir) {
  PELAB_CHECK(!run_dir.empty(), "no run directory given");
  return run_dir;
}

}  // namespace

RunDirectory::RunDirectory(const ExperimentConfig& c, const std::string& run_dir, bool resume)
    : dir_(checked_dir(run_dir)),
      ckpt_path_((fs::path(dir_) / "checkpoint.safetensors").string()),
      config_yaml_(to_yaml(c)),
      lock_(locked(dir_, ckpt_path_, config_yaml_, resume)) {
  if (resume) {
    PELAB_CHECK(fs::exists(ckpt_path_), "{}: nothing to resume (no checkpoint.safetensors)", dir_);
    const std::string saved = run_files::read_text(fs::path(dir_) / "config.yaml");
    PELAB_CHECK(saved == config_yaml_,
                "{}: the config differs from the one the run started with (config.yaml); "
                "resume with the same config and overrides",
                dir_);
  }
  fs::create_directories(dir_);
}

void RunDirectory::write_start_files(const ExperimentConfig& c) const {
  write_run_file(dir_, "config.yaml", config_yaml_);
  write_run_file(dir_, "environment.json", environment_json(c));
  write_run_file(dir_, "metrics.jsonl", "");
}

void RunDirectory::save_checkpoint(const Encoder& model, const Optimizer& optimizer,
                                   const Generator& data_rng, int64_t step,
                                   std::optional<int64_t> stop_streak, std::optional<float> loss) {
  for (const auto& [name, tensor] : optimizer.state())
    if (!all_finite(tensor))
      throw DivergedError(
          fmt::format("step {}: the optimizer state '{}' holds NaN or Inf ({}; lower "
                      "training.lr, or set training.clip_norm)",
                      step, name, last_good()));
  run_checkpoint_tensors(model, config_yaml_, optimizer,
                         {step, data_rng.state(), stop_streak, loss})
      .write(ckpt_path_);
  saved_step_ = step;
}

int64_t RunDirectory::restore(Encoder& model, Optimizer& optimizer, Generator& data_rng,
                              int64_t max_step, std::optional<int64_t>& stop_streak,
                              std::optional<float>& loss) {
  const SafetensorsFile file = read_safetensors(ckpt_path_);
  PELAB_CHECK(file.metadata.count("config") && file.metadata.at("config") == config_yaml_,
              "{}: the checkpoint was written by a different config than {}/config.yaml; "
              "resume only from the run's own checkpoint",
              ckpt_path_, dir_);
  const TrainingState state = restore_run_checkpoint(file, model, optimizer, max_step);
  data_rng.set_state(state.data_rng);
  if (stop_streak) stop_streak = state.stop_streak.value_or(0);
  loss = state.loss;
  saved_step_ = state.step;
  remove_stale_temporaries(ckpt_path_);
  std::istringstream in(run_files::read_text(fs::path(dir_) / "metrics.jsonl"));
  std::string kept;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    const json j = json::parse(line, nullptr, false);
    if (!j.is_discarded() && j.value("step", int64_t{0}) <= state.step) kept += line + "\n";
  }
  write_run_file(dir_, "metrics.jsonl", kept);
  return state.step;
}

std::string RunDirectory::last_good() const {
  return saved_step_ < 0 ? std::string("no checkpoint was written yet")
                         : fmt::format("the last good checkpoint, step {}, is kept in {}",
                                       saved_step_, ckpt_path_);
}

void RunDirectory::write_results(const ExperimentConfig& c, const Task& task, const Encoder& model,
                                 const Evaluation& e, const Validation& validation,
                                 std::optional<int64_t> stop_streak, int64_t step,
                                 double final_loss) const {
  write_run_file(dir_, "eval.csv", eval_csv(e));
  write_run_file(dir_, "per_position.csv", per_position_csv(e));
  json summary = {{"name", c.name},
                  {"scheme", c.model.positional.type},
                  {"task", c.task.name},
                  {"seed", c.seed},
                  {"steps", step},
                  {"final_loss", final_loss},
                  {"parameters", model.params().count()},
                  {"train_lengths", {c.task.min_length, c.task.max_length}},
                  {"train_sampling", c.task.sampling},
                  {"eval", json::array()}};
  // A task with examples of its own trains on the sizes its file has in the range.
  std::vector<int> drawn_sizes;
  for (int n : task.train_sizes())
    if (n >= c.task.min_length && n <= c.task.max_length) drawn_sizes.push_back(n);
  if (!drawn_sizes.empty()) summary["train_sizes"] = drawn_sizes;
  double in_sum = 0, out_sum = 0;
  int in_n = 0, out_n = 0;
  for (const LengthResult& r : e.by_length) {
    summary["eval"].push_back({{"length", r.length},
                               {"token_accuracy", r.token_accuracy},
                               {"sequence_accuracy", r.sequence_accuracy},
                               {"loss", r.loss},
                               {"in_training", r.in_training}});
    if (!r.token_accuracy_draws.empty()) {  // randomized positions: each draw's scores
      summary["eval"].back()["token_accuracy_draws"] = r.token_accuracy_draws;
      summary["eval"].back()["sequence_accuracy_draws"] = r.sequence_accuracy_draws;
    }
    (r.in_training ? in_sum : out_sum) += r.sequence_accuracy;
    (r.in_training ? in_n : out_n) += 1;
  }
  summary["in_distribution_sequence_accuracy"] = in_n ? in_sum / in_n : 0.0;
  summary["extrapolation_sequence_accuracy"] = out_n ? out_sum / out_n : 0.0;
  summary["validation"] = {{"lengths", validation.lengths},
                           {"examples", c.training.stop_when.examples},
                           {"token_accuracy", validation.token_accuracy},
                           {"sequence_accuracy", validation.sequence_accuracy}};
  if (c.training.stop_when.enabled()) {
    const StopWhen& w = c.training.stop_when;
    // Met when the run stopped on it: training stops at the check that completes the streak.
    const bool met = stop_streak && w.met(*stop_streak);
    summary["stop_when"] = {
        {"accuracy", w.accuracy}, {"metric", w.metric}, {"patience", w.patience},
        {"every", w.every},       {"met", met},         {"step", met ? json(step) : json()}};
  }
  summary["status"] = "completed";
  write_run_file(dir_, "summary.json", summary.dump(2) + "\n");
}

}  // namespace pelab
