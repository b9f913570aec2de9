#include "run/reporter.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

namespace pelab {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

std::string format_duration(double seconds) {
  const int64_t s = static_cast<int64_t>(seconds);
  return s >= 3600 ? fmt::format("{}:{:02d}:{:02d}", s / 3600, (s / 60) % 60, s % 60)
                   : fmt::format("{}:{:02d}", s / 60, s % 60);
}

}  // namespace

Reporter::Reporter(const ExperimentConfig& c, const TrainOptions& options)
    : c_(c),
      dir_(options.run_dir),
      bar_(options.progress && isatty(STDERR_FILENO)),
      log_("pelab", {console_sink(bar_), std::make_shared<spdlog::sinks::basic_file_sink_mt>(
                                             (fs::path(dir_) / "train.log").string(),
                                             /*truncate=*/!options.resume)}) {
  log_.set_pattern("[%H:%M:%S] %v");
  log_.flush_on(spdlog::level::info);
}

void Reporter::begin(int64_t first_step) {
  metrics_.open((fs::path(dir_) / "metrics.jsonl").string(), std::ios::app);
  start_ = window_start_ = std::chrono::steady_clock::now();
  first_step_ = first_step;
}

void Reporter::step(int64_t step, const std::vector<Example>& examples, float loss, float lr,
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
               std::string(filled, '#'), std::string(width - filled, '.'), step, c_.training.steps,
               loss, rate, format_duration(eta));
  }
  log_.info("step {}/{} loss {:.4f} lr {:.2e} grad norm {:.3f} {:.0f} tok/s ETA {}", step,
            c_.training.steps, loss, lr, grad_norm, rate, format_duration(eta));
  tokens_since_ = 0;
  window_start_ = now;
}

void Reporter::evaluation(int64_t step, const Evaluation& e) {
  json row = {{"step", step}, {"eval", json::array()}};
  for (const LengthResult& r : e.by_length)
    row["eval"].push_back({{"length", r.length},
                           {"token_accuracy", r.token_accuracy},
                           {"sequence_accuracy", r.sequence_accuracy},
                           {"loss", r.loss}});
  metrics_ << row.dump() << "\n";
  metrics_.flush();
}

void Reporter::validation(int64_t step, const Validation& v, const StopWhen& w, int64_t streak) {
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

void Reporter::end_bar() {
  if (bar_) fmt::print(stderr, "\n");
}

void Reporter::final_evaluation(const Evaluation& e) {
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

spdlog::sink_ptr Reporter::console_sink(bool bar) {
  auto sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  sink->set_level(bar ? spdlog::level::warn : spdlog::level::info);
  return sink;
}

}  // namespace pelab
