#include "pelab/experiment/trainer.h"

#include <cblas.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <spdlog/version.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <oneapi/dnnl/dnnl.h>
#include <algorithm>
#include <atomic>
#include <bit>
#include <charconv>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "experiment/run_files.h"
#include "pelab/autograd/autograd.h"
#include "pelab/backend/gemm.h"
#include "pelab/config/yaml_reader.h"
#include "pelab/core/build_info.h"
#include "pelab/core/error.h"
#include "pelab/core/machine.h"
#include "pelab/core/parallel.h"
#include "pelab/data/batching.h"
#include "pelab/experiment/evaluate.h"
#include "pelab/experiment/run_checkpoint.h"
#include "pelab/experiment/sweep.h"
#include "pelab/io/atomic_file.h"
#include "pelab/io/file_lock.h"
#include "pelab/io/read_file.h"
#include "pelab/io/safetensors.h"
#include "pelab/nn/checkpoint.h"
#include "pelab/train/optimizer.h"
#include "pelab/train/schedule.h"

#ifndef PELAB_YAML_CPP_VERSION
#define PELAB_YAML_CPP_VERSION "unknown"
#endif

namespace pelab {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

std::atomic<int> g_stop_signal{0};
extern "C" void on_stop_signal(int sig) {
  g_stop_signal.store(sig);
}

// Installs the SIGINT/SIGTERM handlers for its lifetime.
struct StopSignals {
  struct sigaction old_int {};
  struct sigaction old_term {};
  StopSignals() {
    g_stop_signal.store(0);
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
  }
  ~StopSignals() {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGTERM, &old_term, nullptr);
  }
};

std::unique_ptr<Optimizer> make_optimizer(const ExperimentConfig& c, const Encoder& model) {
  std::vector<Tensor> params = model.params().all();
  // Weight decay on matrices (weights, embedding and position tables), not on biases and
  // layer-norm gains.
  std::vector<bool> decay;
  for (const Tensor& p : params) decay.push_back(p.ndim() >= 2);
  const TrainingConfig& t = c.training;
  if (t.optimizer == "sgd") {
    SgdOptions o;
    o.momentum = t.momentum;
    o.weight_decay = t.weight_decay;
    return std::make_unique<SGD>(params, o, decay);
  }
  AdamOptions o;
  o.beta1 = t.beta1;
  o.beta2 = t.beta2;
  o.eps = t.eps;
  o.weight_decay = t.weight_decay;
  if (t.optimizer == "adam") return std::make_unique<Adam>(params, o, decay);
  return std::make_unique<AdamW>(params, o, decay);
}

// No NaN or ±inf in t. Runs over every parameter and gradient at every step, so it is written
// to vectorise: the largest magnitude's bits (sign cleared) against those of +inf, no early
// exit.
bool all_finite(const Tensor& t) {
  const float* d = t.data();  // parameters and their gradients are contiguous
  uint32_t largest = 0;
  for (int64_t i = 0, n = t.numel(); i < n; ++i)
    largest = std::max(largest, std::bit_cast<uint32_t>(d[i]) & 0x7fffffffu);
  return largest < std::bit_cast<uint32_t>(std::numeric_limits<float>::infinity());
}

// The first parameter (in checkpoint order) whose gradient, or whose value, holds a NaN or an
// infinity; "" if there is none.
std::string first_nonfinite_grad(const Encoder& model) {
  for (const Tensor& p : model.params().all()) {
    const Tensor g = p.grad();
    if (g.defined() && !all_finite(g)) return p.name();
  }
  return "";
}
std::string first_nonfinite_param(const Encoder& model) {
  for (const Tensor& p : model.params().all())
    if (!all_finite(p)) return p.name();
  return "";
}

// Turns numerics checking on for a run and restores the previous setting afterwards.
class CheckFiniteScope {
 public:
  explicit CheckFiniteScope(bool on) : previous_(check_finite_enabled()) { set_check_finite(on); }
  ~CheckFiniteScope() { set_check_finite(previous_); }
  CheckFiniteScope(const CheckFiniteScope&) = delete;
  CheckFiniteScope& operator=(const CheckFiniteScope&) = delete;

 private:
  bool previous_;
};

// Temporaries of checkpoint writes that a killed process left behind.
void remove_stale_temporaries(const std::string& ckpt_path) {
  const fs::path ckpt(ckpt_path);
  const std::string prefix = ckpt.filename().string() + ".tmp-";
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(ckpt.parent_path(), ec))
    if (entry.path().filename().string().rfind(prefix, 0) == 0) fs::remove(entry.path(), ec);
}

std::string format_duration(double seconds) {
  const int64_t s = static_cast<int64_t>(seconds);
  return s >= 3600 ? fmt::format("{}:{:02d}:{:02d}", s / 3600, (s / 60) % 60, s % 60)
                   : fmt::format("{}:{:02d}", s / 60, s % 60);
}

}  // namespace

void write_run_file(const std::string& run_dir, const std::string& name, const std::string& text) {
  write_file_atomic((fs::path(run_dir) / name).string(), text);
}

std::string environment_json(const ExperimentConfig& c) {
  const dnnl_version_t* v = dnnl_version();
  struct utsname os {};
  ::uname(&os);
  json env = {
      {"pelab_version", pelab_version()},
      {"git_commit", pelab_git_commit()},
      {"onednn", fmt::format("{}.{}.{}", v->major, v->minor, v->patch)},
      {"openblas", openblas_get_config()},
      {"libraries",
       {{"fmt",
         fmt::format("{}.{}.{}", FMT_VERSION / 10000, FMT_VERSION / 100 % 100, FMT_VERSION % 100)},
        {"spdlog", fmt::format("{}.{}.{}", SPDLOG_VER_MAJOR, SPDLOG_VER_MINOR, SPDLOG_VER_PATCH)},
        {"nlohmann_json", fmt::format("{}.{}.{}", NLOHMANN_JSON_VERSION_MAJOR,
                                      NLOHMANN_JSON_VERSION_MINOR, NLOHMANN_JSON_VERSION_PATCH)},
        {"yaml-cpp", PELAB_YAML_CPP_VERSION},
        {"openmp", _OPENMP}}},
      {"compiler", __VERSION__},
      {"os", fmt::format("{} {} {}", os.sysname, os.release, os.machine)},
      {"cpu", cpu_model_name()},
      {"isa", cpu_vector_isa()},
      {"threads", c.threads},
      {"gemm", to_string(gemm_backend())},
      {"seed", c.seed}};
  return env.dump(2) + "\n";
}

TrainingStream::TrainingStream(const ExperimentConfig& config, const Task& task)
    : config_(config), task_(task), rng_(derive_seed(config.seed, "data")) {}

Batch TrainingStream::next(std::vector<Example>* examples) {
  std::vector<Example> drawn = sample_examples(
      task_, config_.training.batch_size, config_.task.min_length, config_.task.max_length, rng_);
  const RandomizeConfig& rnd = config_.randomize;
  Batch batch = collate(drawn, rnd.max_position > 0 ? &rnd : nullptr, &rng_);
  if (examples) *examples = std::move(drawn);
  return batch;
}

std::unique_ptr<Encoder> initial_model(const ExperimentConfig& config) {
  return std::make_unique<Encoder>(config.model, derive_seed(config.seed, "init"));
}

std::string run_lock_path(const std::string& run_dir) {
  return (fs::path(run_dir) / ".run.lock").string();
}

namespace {

// What pelab writes into a run directory: the trainer's files, the sweep's files for its runs
// (pelab/experiment/sweep.h), and the temporaries of atomic writes ("NAME.tmp-PID").
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

// A run's directory: the files a run starts with, its checkpoint, and resuming from it.
class RunDirectory {
 public:
  // On resume, checks that the directory holds a checkpoint of this very config.
  RunDirectory(const ExperimentConfig& c, const TrainOptions& options)
      : dir_(checked_dir(options)),
        ckpt_path_((fs::path(dir_) / "checkpoint.safetensors").string()),
        config_yaml_(to_yaml(c)),
        lock_(locked(dir_, ckpt_path_, config_yaml_, options.resume)) {
    if (options.resume) {
      PELAB_CHECK(fs::exists(ckpt_path_), "{}: nothing to resume (no checkpoint.safetensors)",
                  dir_);
      const std::string saved = run_files::read_text(fs::path(dir_) / "config.yaml");
      PELAB_CHECK(saved == config_yaml_,
                  "{}: the config differs from the one the run started with (config.yaml); "
                  "resume with the same config and overrides",
                  dir_);
    }
    fs::create_directories(dir_);
  }

  const std::string& path() const { return dir_; }

  // The run's lock, taken before anything in the directory is read or changed. A new run's
  // directory is created for it; nothing else is written if another process holds it.
  static std::unique_ptr<FileLock> locked(const std::string& dir, const std::string& ckpt_path,
                                          const std::string& config_yaml, bool resume) {
    PELAB_CHECK(!resume || fs::exists(ckpt_path),
                "{}: nothing to resume (no checkpoint.safetensors)", dir);
    if (!resume) check_new_run_directory(dir, config_yaml);
    // The logs are appended to by plain opens, which a FIFO would block forever.
    for (const char* log : {"train.log", "metrics.jsonl"})
      require_regular_file_if_any((fs::path(dir) / log).string(), "a run's log");
    fs::create_directories(dir);
    return std::make_unique<FileLock>(
        run_lock_path(dir),
        fmt::format("another pelab is training {} (it holds {})", dir, run_lock_path(dir)));
  }

  // A new run's first files: config.yaml, environment.json and an empty metrics.jsonl.
  void write_start_files(const ExperimentConfig& c) const {
    write_run_file(dir_, "config.yaml", config_yaml_);
    write_run_file(dir_, "environment.json", environment_json(c));
    write_run_file(dir_, "metrics.jsonl", "");
  }

  // Parameters, optimizer state, the data RNG's state and the step. Parameters are finite
  // (train_step checks them after every update); so must the optimizer state be, or the file
  // would be a checkpoint that restore() refuses, not a good one to go back to.
  // `stop_streak`: training.stop_when's checks in a row at the threshold, when it is on.
  void save_checkpoint(const Encoder& model, const Optimizer& optimizer, const Generator& data_rng,
                       int64_t step, std::optional<int64_t> stop_streak) {
    SafetensorsWriter w = model_checkpoint(model, config_yaml_);
    for (const auto& [name, tensor] : optimizer.state()) {
      if (!all_finite(tensor))
        throw DivergedError(
            fmt::format("step {}: the optimizer state '{}' holds NaN or Inf ({}; lower "
                        "training.lr, or set training.clip_norm)",
                        step, name, last_good()));
      w.add("optim." + name, tensor);
    }
    const Generator::State s = data_rng.state();
    IntTensor state({8});
    for (int i = 0; i < 4; ++i) {  // four 64-bit words as eight 32-bit halves
      state.values[2 * i] = static_cast<int32_t>(static_cast<uint32_t>(s[i]));
      state.values[2 * i + 1] = static_cast<int32_t>(static_cast<uint32_t>(s[i] >> 32));
    }
    w.add("rng.data", state);
    w.set_metadata("step", std::to_string(step));
    w.set_metadata("optimizer_steps", std::to_string(optimizer.steps_taken()));
    if (stop_streak) w.set_metadata("stop_streak", std::to_string(*stop_streak));
    w.write(ckpt_path_);
    saved_step_ = step;
  }

  // Loads what save_checkpoint saved and returns the step to continue from. Every entry is
  // checked (the file may have been edited or corrupted) for what save_checkpoint can write:
  // shape, dtype, range and finiteness, before anything in the run directory changes; a
  // refusal names the checkpoint and the entry. Then metrics logged after the checkpoint
  // are dropped (they will be logged again) and stale temporaries removed.
  // `stop_streak` (when training.stop_when is on) gets the checks in a row the run had made.
  int64_t restore(Encoder& model, Optimizer& optimizer, Generator& data_rng, int64_t max_step,
                  std::optional<int64_t>& stop_streak) {
    const SafetensorsFile file = read_safetensors(ckpt_path_);
    PELAB_CHECK(file.metadata.count("config") && file.metadata.at("config") == config_yaml_,
                "{}: the checkpoint was written by a different config than {}/config.yaml; "
                "resume only from the run's own checkpoint",
                ckpt_path_, dir_);
    check_checkpoint_format(file);
    load_parameters(model, file);
    check_run_tensors(file, model);
    check_parameters_finite(model, ckpt_path_);
    const CheckpointProgress progress = checkpoint_progress(file, max_step);
    const int64_t step = progress.step;
    const int64_t optimizer_steps = progress.optimizer_steps;
    NamedTensors state;
    for (const SafetensorsTensor& t : file.tensors)
      if (t.name.rfind("optim.", 0) == 0) state.emplace_back(t.name.substr(6), file.tensor(t.name));
    try {
      optimizer.load_state(state, optimizer_steps);
    } catch (const Error& e) {
      throw Error(ckpt_path_ + ": " + e.what());
    }
    data_rng.set_state(data_rng_state(file));
    if (stop_streak) stop_streak = progress.stop_streak.value_or(0);
    saved_step_ = step;
    remove_stale_temporaries(ckpt_path_);
    std::istringstream in(run_files::read_text(fs::path(dir_) / "metrics.jsonl"));
    std::string kept;
    for (std::string line; std::getline(in, line);) {
      if (line.empty()) continue;
      const json j = json::parse(line, nullptr, false);
      if (!j.is_discarded() && j.value("step", int64_t{0}) <= step) kept += line + "\n";
    }
    write_run_file(dir_, "metrics.jsonl", kept);
    return step;
  }

  // Where a run that stops on bad numbers can be picked up again: the checkpoint this process
  // saved or restored, checked either way.
  std::string last_good() const {
    return saved_step_ < 0 ? std::string("no checkpoint was written yet")
                           : fmt::format("the last good checkpoint, step {}, is kept in {}",
                                         saved_step_, ckpt_path_);
  }

  // The final evaluation: eval.csv, per_position.csv and summary.json (which marks the run
  // completed).
  void write_results(const ExperimentConfig& c, const Task& task, const Encoder& model,
                     const Evaluation& e, const Validation& validation,
                     std::optional<int64_t> stop_streak, int64_t step, double final_loss) const {
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
      const bool met = stop_streak && *stop_streak >= w.patience;
      summary["stop_when"] = {
          {"accuracy", w.accuracy}, {"metric", w.metric}, {"patience", w.patience},
          {"every", w.every},       {"met", met},         {"step", met ? json(step) : json()}};
    }
    summary["status"] = "completed";
    write_run_file(dir_, "summary.json", summary.dump(2) + "\n");
  }

 private:
  // Only what save_checkpoint writes: the model's parameters, "optim." buffers (the
  // optimizer checks their names) and "rng.data". load_parameters has refused names that
  // would be parameters; this refuses the other prefixes it lets through.
  void check_run_tensors(const SafetensorsFile& file, const Encoder& model) const {
    for (const SafetensorsTensor& t : file.tensors)
      PELAB_CHECK(
          model.params().contains(t.name) || t.name.rfind("optim.", 0) == 0 || t.name == "rng.data",
          "{}: tensor '{}' is not part of a run checkpoint (the model's parameters, "
          "optim.* and rng.data)",
          ckpt_path_, message_text(t.name));
  }

  // The data RNG's state: "rng.data", I64 of shape [8], four 64-bit words as eight 32-bit
  // halves, low half first; never all zeros.
  Generator::State data_rng_state(const SafetensorsFile& file) const {
    const IntTensor halves = file.int_tensor("rng.data");
    PELAB_CHECK(halves.shape == Shape{8},
                "{}: rng.data has shape {}; expected [8] (the data sampler's four 64-bit words "
                "as eight 32-bit halves)",
                ckpt_path_, to_string(halves.shape));
    Generator::State s;
    for (int i = 0; i < 4; ++i)
      s[i] = static_cast<uint64_t>(static_cast<uint32_t>(halves.values[2 * i])) |
             (static_cast<uint64_t>(static_cast<uint32_t>(halves.values[2 * i + 1])) << 32);
    PELAB_CHECK(Generator::reachable(s),
                "{}: rng.data is all zeros, a state the data sampler's xoshiro256** never "
                "reaches (it would draw zeros forever)",
                ckpt_path_);
    return s;
  }

  static std::string checked_dir(const TrainOptions& options) {
    PELAB_CHECK(!options.run_dir.empty(), "no run directory given");
    return options.run_dir;
  }

  const std::string dir_;
  const std::string ckpt_path_;
  const std::string config_yaml_;
  std::unique_ptr<FileLock> lock_;
  int64_t saved_step_ = -1;  // the step of the checkpoint on disk (-1: none yet)
};

// What a run tells as it trains: the log (on the console, unless a progress bar owns the
// terminal, and in train.log), metrics.jsonl, and the progress bar.
class Reporter {
 public:
  Reporter(const ExperimentConfig& c, const TrainOptions& options)
      : c_(c),
        dir_(options.run_dir),
        bar_(options.progress && isatty(STDERR_FILENO)),
        log_("pelab", {console_sink(bar_), std::make_shared<spdlog::sinks::basic_file_sink_mt>(
                                               (fs::path(dir_) / "train.log").string(),
                                               /*truncate=*/!options.resume)}) {
    log_.set_pattern("[%H:%M:%S] %v");
    log_.flush_on(spdlog::level::info);
  }

  spdlog::logger& log() { return log_; }

  // Opens metrics.jsonl for appending and starts the clock, at `first_step`.
  void begin(int64_t first_step) {
    metrics_.open((fs::path(dir_) / "metrics.jsonl").string(), std::ios::app);
    start_ = window_start_ = std::chrono::steady_clock::now();
    first_step_ = first_step;
  }

  // A step done: its tokens count towards tokens/s; every training.log_every steps (and at
  // the last) a metrics line, a log line and the bar.
  void step(int64_t step, const std::vector<Example>& examples, float loss, float lr,
            float grad_norm) {
    for (const Example& e : examples) tokens_since_ += static_cast<int64_t>(e.tokens.size());
    if (step % c_.training.log_every != 0 && step != c_.training.steps) return;
    const auto now = std::chrono::steady_clock::now();
    const double window = std::chrono::duration<double>(now - window_start_).count();
    const double rate = window > 0 ? tokens_since_ / window : 0.0;
    metrics_ << json{{"step", step},
                     {"loss", loss},
                     {"lr", lr},
                     {"grad_norm", grad_norm},
                     {"tokens_per_s", rate}}
                    .dump()
             << "\n";
    metrics_.flush();
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    const double eta =
        (step > first_step_) ? elapsed / (step - first_step_) * (c_.training.steps - step) : 0;
    if (bar_) {
      const int width = 30;
      const int filled = static_cast<int>(width * step / c_.training.steps);
      fmt::print(stderr, "\r[{}{}] {}/{} loss {:.4f} {:.0f} tok/s ETA {}   ",
                 std::string(filled, '#'), std::string(width - filled, '.'), step,
                 c_.training.steps, loss, rate, format_duration(eta));
    }
    log_.info("step {}/{} loss {:.4f} lr {:.2e} grad norm {:.3f} {:.0f} tok/s ETA {}", step,
              c_.training.steps, loss, lr, grad_norm, rate, format_duration(eta));
    tokens_since_ = 0;
    window_start_ = now;
  }

  // An evaluation during training, as a metrics line.
  void evaluation(int64_t step, const Evaluation& e) {
    json row = {{"step", step}, {"eval", json::array()}};
    for (const LengthResult& r : e.by_length)
      row["eval"].push_back({{"length", r.length},
                             {"token_accuracy", r.token_accuracy},
                             {"sequence_accuracy", r.sequence_accuracy},
                             {"loss", r.loss}});
    metrics_ << row.dump() << "\n";
    metrics_.flush();
  }

  // A training.stop_when check, as a metrics line and a log line.
  void validation(int64_t step, const Validation& v, const StopWhen& w, int64_t streak) {
    const double score = v.score(w.metric);
    metrics_ << json{{"step", step},
                     {"validation",
                      {{"token_accuracy", v.token_accuracy},
                       {"sequence_accuracy", v.sequence_accuracy},
                       {"checks_at_threshold", streak}}}}
                    .dump()
             << "\n";
    metrics_.flush();
    log_.info("step {}: validation {} {:.4f} (threshold {}, {} of {} checks in a row)", step,
              w.metric, score, w.accuracy, streak, w.patience);
  }

  // Ends the bar's line.
  void end_bar() {
    if (bar_) fmt::print(stderr, "\n");
  }

  void final_evaluation(const Evaluation& e) {
    for (const LengthResult& r : e.by_length) {
      // Randomized positions: the spread over the draws of positions, as min–max.
      const auto spread = [](const std::vector<double>& v) {
        if (v.empty()) return std::string();
        const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
        return fmt::format(" [{:.3f}–{:.3f} over {} position draws]", *lo, *hi, v.size());
      };
      log_.info("eval n={:<4} {} token acc {:.3f}{} sequence acc {:.3f}{} loss {:.4f}", r.length,
                r.in_training ? "(in training)" : "(longer)     ", r.token_accuracy,
                spread(r.token_accuracy_draws), r.sequence_accuracy,
                spread(r.sequence_accuracy_draws), r.loss);
    }
  }

 private:
  static spdlog::sink_ptr console_sink(bool bar) {
    auto sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
    sink->set_level(bar ? spdlog::level::warn : spdlog::level::info);
    return sink;
  }

  const ExperimentConfig& c_;
  const std::string dir_;
  const bool bar_;
  spdlog::logger log_;
  std::ofstream metrics_;
  std::chrono::steady_clock::time_point start_, window_start_;
  int64_t first_step_ = 0;
  int64_t tokens_since_ = 0;
};

LrSchedule make_schedule(const TrainingConfig& t) {
  LrScheduleOptions so;
  so.lr = t.lr;
  so.warmup_steps = t.warmup;
  so.total_steps = t.steps;
  so.decay = parse_lr_decay(t.schedule);
  so.min_lr = t.min_lr;
  return LrSchedule(so);
}

}  // namespace

Training::Training(const ExperimentConfig& c)
    : task(make_task(c.task)),
      model(initial_model(c)),
      optimizer(make_optimizer(c, *model)),
      schedule(make_schedule(c.training)),
      stream(c, *task),
      dropout_base(derive_seed(c.seed, "dropout")) {
  if (c.training.stop_when.enabled()) stop_streak = 0;
}

StepStats train_step(const ExperimentConfig& c, Training& t, const Batch& batch, int64_t step,
                     const std::function<std::string()>& last_good) {
  Encoder& model = *t.model;
  Optimizer& optimizer = *t.optimizer;
  Encoder::Output out;
  try {
    out = model.forward(batch, true, mix64(t.dropout_base ^ static_cast<uint64_t>(step)));
  } catch (const DivergedError& e) {  // training.check_finite names the op
    throw DivergedError(fmt::format("step {}: forward: {} ({})", step + 1, e.what(), last_good()));
  } catch (const Error& e) {
    throw Error(fmt::format("step {}: forward: {} ({})", step + 1, e.what(), last_good()));
  }
  PELAB_CHECK(out.loss.defined(), "step {}: the batch has no scored position", step + 1);
  const float loss = out.loss.item();
  if (!std::isfinite(loss))
    throw DivergedError(
        fmt::format("step {}: the loss is {} ({}; lower training.lr, or set "
                    "training.check_finite: true to find the op)",
                    step + 1, std::isnan(loss) ? "nan" : "infinite", last_good()));
  optimizer.zero_grad();
  try {
    out.loss.backward();
  } catch (const DivergedError& e) {  // training.check_finite names the op
    throw DivergedError(fmt::format("step {}: backward: {} ({})", step + 1, e.what(), last_good()));
  } catch (const Error& e) {
    throw Error(fmt::format("step {}: backward: {} ({})", step + 1, e.what(), last_good()));
  }
  const std::string bad = first_nonfinite_grad(model);
  if (!bad.empty())
    throw DivergedError(fmt::format("step {}: the gradient of parameter '{}' holds NaN or Inf ({})",
                                    step + 1, bad, last_good()));
  const float grad_norm = clip_grad_norm(
      model.params().all(),
      c.training.clip_norm > 0 ? static_cast<float>(c.training.clip_norm) : INFINITY);
  const float lr = t.schedule.lr_at(step);
  optimizer.step(lr);
  const std::string bad_param = first_nonfinite_param(model);
  if (!bad_param.empty())
    throw DivergedError(
        fmt::format("step {}: the update made parameter '{}' NaN or Inf ({}; lower "
                    "training.lr)",
                    step + 1, bad_param, last_good()));
  return {loss, lr, grad_norm};
}

namespace {

// A training.stop_when check: true once the validation score has been at or above the
// threshold at `patience` checks in a row.
bool criterion_met(const ExperimentConfig& c, Training& t, Reporter& report, int64_t step) {
  const StopWhen& w = c.training.stop_when;
  const Validation v = validate(*t.model, *t.task, c);
  t.stop_streak = v.score(w.metric) >= w.accuracy ? *t.stop_streak + 1 : 0;
  report.validation(step, v, w, *t.stop_streak);
  return *t.stop_streak >= w.patience;
}

// The training loop from `step` up to training.steps, or until training.stop_when's criterion
// is met: a step, its report, evaluations, checks and checkpoints when due. Returns false
// when it stopped early (a signal or --stop-after), after saving a checkpoint to resume from.
bool train_steps(const ExperimentConfig& c, const TrainOptions& options, Training& t,
                 RunDirectory& dir, Reporter& report, int64_t& step, double& last_loss) {
  const int64_t first_step = step;
  const std::function<std::string()> last_good = [&dir] { return dir.last_good(); };
  while (step < c.training.steps) {
    std::vector<Example> examples;
    const Batch batch = t.stream.next(&examples);
    const StepStats s = train_step(c, t, batch, step, last_good);
    ++step;
    last_loss = s.loss;
    report.step(step, examples, s.loss, s.lr, s.grad_norm);
    if (c.training.eval_every > 0 && step % c.training.eval_every == 0 && step < c.training.steps)
      report.evaluation(step, evaluate(*t.model, *t.task, c));
    if (t.stop_streak && step % c.training.stop_when.every == 0 &&
        criterion_met(c, t, report, step)) {
      report.end_bar();
      report.log().info("step {}: training.stop_when is met; stopping", step);
      return true;
    }
    const bool stop = g_stop_signal.load() != 0 ||
                      (options.stop_after > 0 && step - first_step >= options.stop_after);
    if ((c.training.checkpoint_every > 0 && step % c.training.checkpoint_every == 0) || stop)
      dir.save_checkpoint(*t.model, *t.optimizer, t.stream.rng(), step, t.stop_streak);
    if (stop) {
      report.end_bar();
      report.log().warn("stopped at step {} ({}); continue with --resume", step,
                        g_stop_signal.load() ? "signal" : "--stop-after");
      return false;
    }
  }
  report.end_bar();
  return true;
}

}  // namespace

TrainResult train_run(const ExperimentConfig& c, const TrainOptions& options) {
  RunDirectory dir(c, options);
  set_num_threads(static_cast<int>(c.threads));
  const CheckFiniteScope check_finite(c.training.check_finite);
  Training t(c);
  int64_t step = 0;
  // Before train.log is opened: a refused checkpoint leaves the run directory as it was.
  if (options.resume)
    step = dir.restore(*t.model, *t.optimizer, t.stream.rng(), c.training.steps, t.stop_streak);
  Reporter report(c, options);
  if (!options.resume) dir.write_start_files(c);

  if (options.resume) {
    report.log().info("resuming {} at step {}", dir.path(), step);
  } else {
    report.log().info(
        "run {}: {} on task {} (lengths {}..{}), {} parameters, seed {}, {} thread(s)", dir.path(),
        c.model.positional.type, c.task.name, c.task.min_length, c.task.max_length,
        t.model->params().count(), c.seed, c.threads);
  }

  if (options.init_only) {  // the state step 1 starts from; --resume continues as a fresh run
    dir.save_checkpoint(*t.model, *t.optimizer, t.stream.rng(), step, t.stop_streak);
    return TrainResult{};
  }

  report.begin(step);
  const StopSignals signals;  // until the run returns: the final evaluation is not cut short
  TrainResult result;
  double last_loss = 0;
  result.completed = train_steps(c, options, t, dir, report, step, last_loss);
  result.steps_done = step;
  result.final_loss = last_loss;
  if (!result.completed) return result;

  dir.save_checkpoint(*t.model, *t.optimizer, t.stream.rng(), step, t.stop_streak);
  const Evaluation e = evaluate(*t.model, *t.task, c);
  dir.write_results(c, *t.task, *t.model, e, validate(*t.model, *t.task, c), t.stop_streak, step,
                    last_loss);
  report.final_evaluation(e);
  return result;
}

}  // namespace pelab
