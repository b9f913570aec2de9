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
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "pelab/autograd/autograd.h"
#include "pelab/config/yaml_reader.h"
#include "pelab/core/build_info.h"
#include "pelab/core/error.h"
#include "pelab/core/parallel.h"
#include "pelab/data/batching.h"
#include "pelab/experiment/evaluate.h"
#include "pelab/io/atomic_file.h"
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

std::string cpu_name() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
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

// A checkpoint's integer metadata entry, checked (the file may have been edited or corrupted).
int64_t metadata_int(const SafetensorsFile& file, const std::string& key, int64_t max) {
  const std::string& text = file.metadata_value(key);
  int64_t value = -1;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  PELAB_CHECK(ec == std::errc() && end == text.data() + text.size() && value >= 0 && value <= max,
              "{}: __metadata__ '{}' is '{}'; expected an integer in [0, {}]", file.source, key,
              message_text(text), max);
  return value;
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
      {"cpu", cpu_name()},
      {"threads", c.threads},
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

TrainResult train_run(const ExperimentConfig& c, const TrainOptions& options) {
  PELAB_CHECK(!options.run_dir.empty(), "no run directory given");
  const std::string dir = options.run_dir;
  const std::string ckpt_path = (fs::path(dir) / "checkpoint.safetensors").string();
  const std::string config_yaml = to_yaml(c);
  if (options.resume) {
    PELAB_CHECK(fs::exists(ckpt_path), "{}: nothing to resume (no checkpoint.safetensors)", dir);
    std::ifstream in((fs::path(dir) / "config.yaml").string());
    std::stringstream saved;
    saved << in.rdbuf();
    PELAB_CHECK(saved.str() == config_yaml,
                "{}: the config differs from the one the run started with (config.yaml); resume "
                "with the same config and overrides",
                dir);
    remove_stale_temporaries(ckpt_path);
  }
  fs::create_directories(dir);
  set_num_threads(static_cast<int>(c.threads));
  const CheckFiniteScope check_finite(c.training.check_finite);

  // The log: console (unless a progress bar owns the terminal) and train.log.
  auto file_sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(
      (fs::path(dir) / "train.log").string(), /*truncate=*/!options.resume);
  auto console_sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  const bool bar = options.progress && isatty(STDERR_FILENO);
  console_sink->set_level(bar ? spdlog::level::warn : spdlog::level::info);
  spdlog::logger log("pelab", {console_sink, file_sink});
  log.set_pattern("[%H:%M:%S] %v");
  log.flush_on(spdlog::level::info);

  if (!options.resume) {
    write_run_file(dir, "config.yaml", config_yaml);
    write_run_file(dir, "environment.json", environment_json(c));
    write_run_file(dir, "metrics.jsonl", "");
  }

  const std::unique_ptr<Task> task = make_task(c.task.name, c.task.params);
  const std::unique_ptr<Encoder> initial = initial_model(c);
  Encoder& model = *initial;
  const std::unique_ptr<Optimizer> optimizer = make_optimizer(c, model);
  LrScheduleOptions so;
  so.lr = c.training.lr;
  so.warmup_steps = c.training.warmup;
  so.total_steps = c.training.steps;
  so.decay = parse_lr_decay(c.training.schedule);
  so.min_lr = c.training.min_lr;
  const LrSchedule schedule(so);
  TrainingStream stream(c, *task);
  Generator& data_rng = stream.rng();
  int64_t step = 0;
  int64_t saved_step = -1;  // the step of the checkpoint on disk (-1: none yet)

  auto save_checkpoint = [&]() {
    SafetensorsWriter w = model_checkpoint(model, config_yaml);
    for (const auto& [name, tensor] : optimizer->state()) w.add("optim." + name, tensor);
    const Generator::State s = data_rng.state();
    IntTensor state({8});
    for (int i = 0; i < 4; ++i) {  // four 64-bit words as eight 32-bit halves
      state.values[2 * i] = static_cast<int32_t>(static_cast<uint32_t>(s[i]));
      state.values[2 * i + 1] = static_cast<int32_t>(static_cast<uint32_t>(s[i] >> 32));
    }
    w.add("rng.data", state);
    w.set_metadata("step", std::to_string(step));
    w.set_metadata("optimizer_steps", std::to_string(optimizer->steps_taken()));
    w.write(ckpt_path);
    saved_step = step;
  };
  // Where a run that stops on bad numbers can be picked up again.
  auto last_good = [&]() {
    return saved_step < 0 ? std::string("no checkpoint was written yet")
                          : fmt::format("the last good checkpoint, step {}, is kept in {}",
                                        saved_step, ckpt_path);
  };

  if (options.resume) {
    const SafetensorsFile file = read_safetensors(ckpt_path);
    PELAB_CHECK(file.metadata.count("config") && file.metadata.at("config") == config_yaml,
                "{}: the checkpoint was written by a different config than {}/config.yaml; resume "
                "only from the run's own checkpoint",
                ckpt_path, dir);
    load_parameters(model, file);
    NamedTensors state;
    for (const SafetensorsTensor& t : file.tensors)
      if (t.name.rfind("optim.", 0) == 0) state.emplace_back(t.name.substr(6), file.tensor(t.name));
    try {
      optimizer->load_state(state, metadata_int(file, "optimizer_steps", c.training.steps));
    } catch (const Error& e) {
      const std::string what = e.what();
      throw Error(what.rfind(ckpt_path, 0) == 0 ? what : ckpt_path + ": " + what);
    }
    const IntTensor rng_state = file.int_tensor("rng.data");
    PELAB_CHECK(rng_state.numel() == 8, "{}: rng.data must hold 8 values", ckpt_path);
    Generator::State s;
    for (int i = 0; i < 4; ++i)
      s[i] = static_cast<uint64_t>(static_cast<uint32_t>(rng_state.values[2 * i])) |
             (static_cast<uint64_t>(static_cast<uint32_t>(rng_state.values[2 * i + 1])) << 32);
    data_rng.set_state(s);
    step = metadata_int(file, "step", c.training.steps);
    saved_step = step;
    // Metrics logged after the checkpoint will be logged again: drop them.
    std::ifstream in((fs::path(dir) / "metrics.jsonl").string());
    std::string kept;
    for (std::string line; std::getline(in, line);) {
      if (line.empty()) continue;
      const json j = json::parse(line, nullptr, false);
      if (!j.is_discarded() && j.value("step", int64_t{0}) <= step) kept += line + "\n";
    }
    write_run_file(dir, "metrics.jsonl", kept);
    log.info("resuming {} at step {}", dir, step);
  } else {
    log.info("run {}: {} on task {} (lengths {}..{}), {} parameters, seed {}, {} thread(s)", dir,
             c.model.positional.type, c.task.name, c.task.min_length, c.task.max_length,
             model.params().count(), c.seed, c.threads);
  }

  std::ofstream metrics((fs::path(dir) / "metrics.jsonl").string(), std::ios::app);
  StopSignals signals;
  TrainResult result;
  const auto start = std::chrono::steady_clock::now();
  const int64_t first_step = step;
  int64_t tokens_since = 0;
  auto window_start = start;
  double last_loss = 0;
  const uint64_t dropout_base = derive_seed(c.seed, "dropout");

  while (step < c.training.steps) {
    std::vector<Example> examples;
    const Batch batch = stream.next(&examples);
    Encoder::Output out;
    try {
      out = model.forward(batch, true, mix64(dropout_base ^ static_cast<uint64_t>(step)));
    } catch (const Error& e) {  // training.check_finite names the op
      throw Error(fmt::format("step {}: forward: {} ({})", step + 1, e.what(), last_good()));
    }
    PELAB_CHECK(out.loss.defined(), "step {}: the batch has no scored position", step + 1);
    const float loss = out.loss.item();
    if (!std::isfinite(loss))
      throw Error(
          fmt::format("step {}: the loss is {} ({}; lower training.lr, or set "
                      "training.check_finite: true to find the op)",
                      step + 1, std::isnan(loss) ? "nan" : "infinite", last_good()));
    optimizer->zero_grad();
    try {
      out.loss.backward();
    } catch (const Error& e) {
      throw Error(fmt::format("step {}: backward: {} ({})", step + 1, e.what(), last_good()));
    }
    const std::string bad = first_nonfinite_grad(model);
    if (!bad.empty())
      throw Error(fmt::format("step {}: the gradient of parameter '{}' holds NaN or Inf ({})",
                              step + 1, bad, last_good()));
    const float grad_norm = clip_grad_norm(
        model.params().all(),
        c.training.clip_norm > 0 ? static_cast<float>(c.training.clip_norm) : INFINITY);
    const float lr = schedule.lr_at(step);
    optimizer->step(lr);
    const std::string bad_param = first_nonfinite_param(model);
    if (!bad_param.empty())
      throw Error(
          fmt::format("step {}: the update made parameter '{}' NaN or Inf ({}; lower "
                      "training.lr)",
                      step + 1, bad_param, last_good()));
    ++step;
    last_loss = loss;
    for (const Example& e : examples) tokens_since += static_cast<int64_t>(e.tokens.size());

    const bool log_now = step % c.training.log_every == 0 || step == c.training.steps;
    if (log_now) {
      const auto now = std::chrono::steady_clock::now();
      const double window = std::chrono::duration<double>(now - window_start).count();
      const double rate = window > 0 ? tokens_since / window : 0.0;
      metrics << json{{"step", step},
                      {"loss", loss},
                      {"lr", lr},
                      {"grad_norm", grad_norm},
                      {"tokens_per_s", rate}}
                     .dump()
              << "\n";
      metrics.flush();
      const double elapsed = std::chrono::duration<double>(now - start).count();
      const double eta =
          (step > first_step) ? elapsed / (step - first_step) * (c.training.steps - step) : 0;
      if (bar) {
        const int width = 30;
        const int filled = static_cast<int>(width * step / c.training.steps);
        fmt::print(stderr, "\r[{}{}] {}/{} loss {:.4f} {:.0f} tok/s ETA {}   ",
                   std::string(filled, '#'), std::string(width - filled, '.'), step,
                   c.training.steps, loss, rate, format_duration(eta));
      }
      log.info("step {}/{} loss {:.4f} lr {:.2e} grad norm {:.3f} {:.0f} tok/s ETA {}", step,
               c.training.steps, loss, lr, grad_norm, rate, format_duration(eta));
      tokens_since = 0;
      window_start = now;
    }
    if (c.training.eval_every > 0 && step % c.training.eval_every == 0 && step < c.training.steps) {
      const Evaluation e = evaluate(model, *task, c);
      json row = {{"step", step}, {"eval", json::array()}};
      for (const LengthResult& r : e.by_length)
        row["eval"].push_back({{"length", r.length},
                               {"token_accuracy", r.token_accuracy},
                               {"sequence_accuracy", r.sequence_accuracy},
                               {"loss", r.loss}});
      metrics << row.dump() << "\n";
      metrics.flush();
    }
    const bool stop = g_stop_signal.load() != 0 ||
                      (options.stop_after > 0 && step - first_step >= options.stop_after);
    if ((c.training.checkpoint_every > 0 && step % c.training.checkpoint_every == 0) || stop)
      save_checkpoint();
    if (stop) {
      if (bar) fmt::print(stderr, "\n");
      log.warn("stopped at step {} ({}); continue with --resume", step,
               g_stop_signal.load() ? "signal" : "--stop-after");
      result.steps_done = step;
      result.final_loss = last_loss;
      return result;
    }
  }
  if (bar) fmt::print(stderr, "\n");
  save_checkpoint();

  const Evaluation e = evaluate(model, *task, c);
  write_run_file(dir, "eval.csv", eval_csv(e));
  write_run_file(dir, "per_position.csv", per_position_csv(e));
  json summary = {{"name", c.name},
                  {"scheme", c.model.positional.type},
                  {"task", c.task.name},
                  {"seed", c.seed},
                  {"steps", step},
                  {"final_loss", last_loss},
                  {"parameters", model.params().count()},
                  {"train_lengths", {c.task.min_length, c.task.max_length}},
                  {"eval", json::array()}};
  double in_sum = 0, out_sum = 0;
  int in_n = 0, out_n = 0;
  for (const LengthResult& r : e.by_length) {
    summary["eval"].push_back({{"length", r.length},
                               {"token_accuracy", r.token_accuracy},
                               {"sequence_accuracy", r.sequence_accuracy},
                               {"loss", r.loss},
                               {"in_training", r.in_training}});
    (r.in_training ? in_sum : out_sum) += r.sequence_accuracy;
    (r.in_training ? in_n : out_n) += 1;
  }
  summary["in_distribution_sequence_accuracy"] = in_n ? in_sum / in_n : 0.0;
  summary["extrapolation_sequence_accuracy"] = out_n ? out_sum / out_n : 0.0;
  summary["status"] = "completed";
  write_run_file(dir, "summary.json", summary.dump(2) + "\n");
  for (const LengthResult& r : e.by_length)
    log.info("eval n={:<4} {} token acc {:.3f} sequence acc {:.3f} loss {:.4f}", r.length,
             r.in_training ? "(in training)" : "(longer)     ", r.token_accuracy,
             r.sequence_accuracy, r.loss);
  result.completed = true;
  result.steps_done = step;
  result.final_loss = last_loss;
  return result;
}

}  // namespace pelab
