#include "pelab/run/trainer.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>

#include "pelab/autograd/autograd.h"
#include "pelab/core/error.h"
#include "pelab/core/parallel.h"
#include "pelab/core/process.h"
#include "pelab/core/rng.h"
#include "pelab/data/batching.h"
#include "pelab/positional/scheme.h"
#include "pelab/run/evaluate.h"
#include "pelab/run/run_directory.h"
#include "pelab/train/optimizer.h"
#include "pelab/train/schedule.h"
#include "run/reporter.h"

namespace pelab {

namespace {

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

}  // namespace

TrainingStream::TrainingStream(const ExperimentConfig& config, const Task& task)
    : config_(config), task_(task), rng_(derive_seed(config.seed, "data")) {
  // The training offset is drawn from the data stream, after the examples of its batch.
  if (config.task.position_ids == "digit_runs")
    digit_runs_ = digit_runs_of(task.info(), config.task.position_offset_max);
}

Batch TrainingStream::next(std::vector<Example>* examples) {
  const TrainingConfig& t = config_.training;
  const TaskConfig& task = config_.task;
  std::vector<Example> drawn =
      t.length_sampling == "per_batch"
          ? sample_examples_of_one_size(task_, t.batch_size, task.min_length, task.max_length, rng_)
          : sample_examples(task_, t.batch_size, task.min_length, task.max_length, rng_);
  const RandomizeConfig& rnd = config_.randomize;
  Batch batch = collate(drawn, rnd.max_position > 0 ? &rnd : nullptr, &rng_,
                        digit_runs_ ? &*digit_runs_ : nullptr);
  if (examples) *examples = std::move(drawn);
  return batch;
}

std::unique_ptr<Encoder> initial_model(const ExperimentConfig& config) {
  return std::make_unique<Encoder>(config.model, make_scheme, derive_seed(config.seed, "init"));
}

namespace {

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
  return w.met(*t.stop_streak);
}

// The training loop from `step` up to training.steps, or until training.stop_when's criterion
// is met: a step, its report, evaluations, checks and checkpoints when due. Returns false
// when it stopped early (a signal or --stop-after), after saving a checkpoint to resume from.
bool train_steps(const ExperimentConfig& c, const TrainOptions& options, Training& t,
                 RunDirectory& dir, Reporter& report, const StopSignals& signals, int64_t& step,
                 double& last_loss) {
  const int64_t first_step = step;
  const std::function<std::string()> last_good = [&dir] { return dir.last_good(); };
  // A run stopped by the criterion and killed before its results were written resumes here:
  // it had stopped training, and must not take another step.
  if (t.stop_streak && c.training.stop_when.met(*t.stop_streak)) return true;
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
    const bool stop =
        signals.count() > 0 || (options.stop_after > 0 && step - first_step >= options.stop_after);
    if ((c.training.checkpoint_every > 0 && step % c.training.checkpoint_every == 0) || stop)
      dir.save_checkpoint(*t.model, *t.optimizer, t.stream.rng(), step, t.stop_streak, s.loss);
    if (stop) {
      report.end_bar();
      report.log().warn("stopped at step {} ({}); continue with --resume", step,
                        signals.count() > 0 ? "signal" : "--stop-after");
      return false;
    }
  }
  report.end_bar();
  return true;
}

}  // namespace

TrainResult train_run(const ExperimentConfig& c, const TrainOptions& options) {
  RunDirectory dir(c, options.run_dir, options.resume);
  set_num_threads(static_cast<int>(c.threads));
  const CheckFiniteScope check_finite(c.training.check_finite);
  Training t(c);
  int64_t step = 0;
  std::optional<float> loss;  // the last step's
  // Before train.log is opened: a refused checkpoint leaves the run directory as it was.
  if (options.resume)
    step =
        dir.restore(*t.model, *t.optimizer, t.stream.rng(), c.training.steps, t.stop_streak, loss);
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
    dir.save_checkpoint(*t.model, *t.optimizer, t.stream.rng(), step, t.stop_streak, loss);
    return TrainResult{};
  }

  report.begin(step);
  const StopSignals signals;  // until the run returns: the final evaluation is not cut short
  TrainResult result;
  double last_loss = loss.value_or(0);
  result.completed = train_steps(c, options, t, dir, report, signals, step, last_loss);
  result.steps_done = step;
  result.final_loss = last_loss;
  if (!result.completed) return result;

  if (step > 0) loss = static_cast<float>(last_loss);
  dir.save_checkpoint(*t.model, *t.optimizer, t.stream.rng(), step, t.stop_streak, loss);
  const Evaluation e = evaluate(*t.model, *t.task, c);
  dir.write_results(c, *t.task, *t.model, e, validate(*t.model, *t.task, c), t.stop_streak, step,
                    last_loss);
  report.final_evaluation(e);
  return result;
}

}  // namespace pelab
