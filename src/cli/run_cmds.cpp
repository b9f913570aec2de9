// `pelab train`, `pelab eval`, `pelab print-config`.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>

#include "pelab/cli/commands.h"
#include "pelab/config/experiment.h"
#include "pelab/config/load_model.h"
#include "pelab/core/error.h"
#include "pelab/core/parallel.h"
#include "pelab/core/strings.h"
#include "pelab/run/evaluate.h"
#include "pelab/run/run_checkpoint.h"
#include "pelab/run/run_directory.h"
#include "pelab/run/trainer.h"

namespace pelab::cli {

namespace fs = std::filesystem;

void check_lengths_for_task(const std::vector<int64_t>& lengths, const Task& task) {
  for (int64_t n : lengths)
    PELAB_CHECK(n >= task.min_length() && n <= kMaxProblemSize, "--lengths: {} is outside [{}, {}]",
                n, task.min_length(), kMaxProblemSize);
}

namespace {

// `pelab eval --out DIR` writes new files into a directory (eval.csv, per_position.csv and,
// with --set, eval_config.yaml); it never overwrites results (the run's own eval.csv, say),
// and it checks before evaluating, which can take long.
void check_eval_out(const std::string& out) {
  if (out.empty()) return;
  PELAB_CHECK(!fs::exists(out) || fs::is_directory(out),
              "--out {}: not a directory; pelab eval writes eval.csv and per_position.csv into a "
              "directory",
              out);
  for (const char* name : {"eval.csv", "per_position.csv", "eval_config.yaml"})
    PELAB_CHECK(!fs::exists(fs::path(out) / name),
                "--out {}: it already holds {}; choose another --out or delete it", out, name);
}

// The table `pelab eval` prints: six decimals, enough to tell two runs apart (eval.csv of a
// run has the same); `--out` keeps every digit.
void print_evaluation(const Evaluation& e) {
  fmt::print("{:>7} {:>7} {:>10} {:>10} {:>10} {:>8}\n", "length", "tokens", "token_acc", "seq_acc",
             "loss", "trained");
  for (const LengthResult& r : e.by_length)
    fmt::print("{:>7} {:>7} {:>10.6f} {:>10.6f} {:>10.6f} {:>8}\n", r.length, r.tokens,
               r.token_accuracy, r.sequence_accuracy, r.loss, r.in_training ? "yes" : "no");
}

}  // namespace

void add_run_commands(CLI::App& app, Action& action) {
  // ---- train ------------------------------------------------------------------------
  struct TrainArgs {
    std::string config;
    std::vector<std::string> overrides;
    std::string out;
    bool resume = false;
    bool no_progress = false;
    int64_t stop_after = 0;
  };
  auto ta = std::make_shared<TrainArgs>();
  CLI::App* train = app.add_subcommand("train", "Train one run from a YAML config");
  train->add_option("config", ta->config, "the experiment config (YAML)")->required();
  train->add_option("overrides", ta->overrides, "key=value overrides, e.g. positional.type=rotary");
  train->add_option("--out", ta->out, "run directory (default: runs/<name>)");
  train->add_flag("--resume", ta->resume, "continue the run in --out from its checkpoint");
  train->add_flag("--no-progress", ta->no_progress, "log lines instead of a progress bar");
  add_integer(train, "--stop-after", ta->stop_after, range_of<int64_t>(0),
              "stop after N steps (then --resume)");
  train->callback([ta, &action] {
    action = [ta] {
      const ExperimentConfig c = load_experiment(ta->config, ta->overrides);
      TrainOptions o;
      o.run_dir = ta->out.empty() ? (fs::path("runs") / c.name).string() : ta->out;
      o.resume = ta->resume;
      o.progress = !ta->no_progress;
      o.stop_after = ta->stop_after;
      PELAB_CHECK(o.resume || !fs::exists(fs::path(o.run_dir) / "summary.json"),
                  "{} already holds a finished run; choose another --out or delete it", o.run_dir);
      const TrainResult r = train_run(c, o);
      fmt::print("{}: {} after {} steps (loss {:.4f}){}\n", o.run_dir,
                 r.completed ? "finished" : "stopped", r.steps_done, r.final_loss,
                 r.completed ? "; see eval.csv and summary.json" : "; continue with --resume");
      return r.completed ? 0 : 3;
    };
  });

  // ---- eval ----------------------------------------------------------------------------
  struct EvalArgs {
    std::string run;
    std::vector<int64_t> lengths;
    int64_t examples = 0;
    std::string out;
    std::vector<std::string> set;
  };
  auto ea = std::make_shared<EvalArgs>();
  CLI::App* eval = app.add_subcommand("eval", "Evaluate a trained run at chosen lengths");
  eval->add_option("run", ea->run, "a run directory (or its checkpoint.safetensors)")->required();
  add_integer_list(eval, "--lengths", ea->lengths, range_of<int64_t>(0, kMaxProblemSize),
                   "problem sizes to evaluate (default: the config's)");
  // The config's own bound on evaluation.examples.
  add_integer(eval, "--examples", ea->examples, range_of<int64_t>(1, kMaxEvalExamples),
              "examples per length (default: the config's)");
  eval->add_option("--out", ea->out,
                   "also write eval.csv and per_position.csv (every digit) into this directory");
  eval->add_option("--set", ea->set,
                   "key=value for this evaluation only, of the keys that change no parameter ("
                   "positional.scaling.type, .factor, .original_length); the run is not changed");
  eval->callback([ea, &action] {
    action = [ea] {
      RunCheckpoint run = open_run_checkpoint(ea->run);
      set_for_evaluation(run, ea->set);
      ExperimentConfig& c = run.config;
      if (ea->examples > 0) c.evaluation.examples = ea->examples;
      set_num_threads(static_cast<int>(c.threads));
      const std::unique_ptr<Encoder>& model = run.model;
      const std::unique_ptr<Task> task = make_task(c.task);
      check_lengths_for_task(ea->lengths, *task);
      const int64_t max_position = model->scheme().max_position();
      for (int64_t n : ea->lengths)
        PELAB_CHECK(
            max_position < 0 || task->sequence_length(static_cast<int>(n)) - 1 <= max_position,
            "--lengths: {} needs positions up to {}, but the learned table of this run "
            "stops at {} (positional.max_len)",
            n, task->sequence_length(static_cast<int>(n)) - 1, max_position);
      check_eval_out(ea->out);
      const Evaluation e = evaluate(*model, *task, c, ea->lengths);
      // What was set is part of the result: said above the table, and kept beside the CSVs as
      // the whole config evaluated.
      if (!ea->set.empty())
        fmt::print("set for this evaluation (the run's files are unchanged): {}\n",
                   join(ea->set, " "));
      print_evaluation(e);
      if (!ea->out.empty()) {
        fs::create_directories(ea->out);
        if (!ea->set.empty()) write_run_file(ea->out, "eval_config.yaml", to_yaml(c));
        write_run_file(ea->out, "eval.csv", eval_csv(e, CsvDigits::full));
        write_run_file(ea->out, "per_position.csv", per_position_csv(e, CsvDigits::full));
        fmt::print("wrote {} and {}{}\n", (fs::path(ea->out) / "eval.csv").string(),
                   (fs::path(ea->out) / "per_position.csv").string(),
                   ea->set.empty() ? "" : " (and the config evaluated, eval_config.yaml)");
      }
      return 0;
    };
  });

  // ---- print-config -----------------------------------------------------------------
  auto pa = std::make_shared<TrainArgs>();
  CLI::App* print = app.add_subcommand("print-config", "Print the fully resolved config");
  print->add_option("config", pa->config, "the experiment config (YAML)")->required();
  print->add_option("overrides", pa->overrides, "key=value overrides");
  print->callback([pa, &action] {
    action = [pa] {
      const ExperimentConfig c = load_experiment(pa->config, pa->overrides);
      // Where each group came from, as comments: the output still loads as the config.
      for (const auto& [section, file] : c.group_files)
        std::cout << "# " << section << ": " << file << "\n";
      std::cout << to_yaml(c);
      return 0;
    };
  });
}

}  // namespace pelab::cli
