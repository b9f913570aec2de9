#include "pelab/suite/suite_cost.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "pelab/config/yaml_reader.h"
#include "pelab/core/error.h"
#include "pelab/core/rng.h"
#include "pelab/core/strings.h"
#include "pelab/data/task.h"
#include "pelab/positional/scheme.h"

namespace pelab {

namespace fs = std::filesystem;

namespace {

constexpr double kMaxStepTime = 1000;  // a factor beyond this is a typo, not a scheme

bool is_registry_scheme(const std::string& name) {
  const std::vector<std::string> known = scheme_names();
  return std::find(known.begin(), known.end(), name) != known.end();
}

// The step_time mapping {base, factors, measured}, inline or from its own file.
StepTimes read_step_times(MapReader& r, const std::string& source) {
  StepTimes t;
  t.source = source;
  PELAB_CHECK(r.has("base"), "{}: missing (the scheme the factors are relative to, e.g. none)",
              r.where("base"));
  r.read("base", t.base);
  if (!is_registry_scheme(t.base))
    r.fail("base", fmt::format("unknown scheme '{}' (valid: {})", message_text(t.base),
                               join(scheme_names())));
  PELAB_CHECK(r.has("factors"), "{}: missing (scheme: its step / the base's, e.g. {{fire: 6.3}})",
              r.where("factors"));
  MapReader f = r.section("factors");
  for (const std::string& scheme : f.keys_in_file_order()) {
    if (!is_registry_scheme(scheme))
      f.fail(scheme, fmt::format("unknown scheme (valid: {})", join(scheme_names())));
    double v = 0;
    f.read(scheme, v);
    if (!(v > 0) || v > kMaxStepTime)
      f.fail(scheme, fmt::format("must be in (0, {}], got {}", kMaxStepTime, v));
    t.factors[scheme] = v;
  }
  f.finish();
  const auto base = t.factors.find(t.base);
  if (base == t.factors.end())
    t.factors[t.base] = 1;
  else if (base->second != 1)
    f.fail(t.base, fmt::format("is the base scheme's own factor: must be 1, got {}", base->second));
  PELAB_CHECK(r.has("measured"), "{}: missing (how and where the steps were timed)",
              r.where("measured"));
  r.read("measured", t.measured);
  r.finish({"base", "factors", "measured"});
  return t;
}

// The probability that the longest of `batch` sizes drawn uniformly from [lo, hi] is k.
double p_longest(int64_t k, int64_t lo, int64_t hi, int64_t batch) {
  const double n = static_cast<double>(hi - lo + 1);
  const double b = static_cast<double>(batch);
  return std::pow(static_cast<double>(k - lo + 1) / n, b) -
         std::pow(static_cast<double>(k - lo) / n, b);
}

// What a token read at a sequence length costs, in base-scheme training tokens at at_length.
struct TokenCost {
  int64_t d_model = 0, d_ff = 0;
  double at_length = 0, step_time = 1;
  double operator()(double length) const {
    return token_cost(d_model, d_ff, step_time, length, at_length);
  }
};

// One forward pass over an example of size n: one pass, or greedy generation's pass per
// answer slot over the prompt and the answer so far.
double forward_tokens(const Task& task, int64_t n, bool greedy, const TokenCost& cost) {
  const double tokens = task.sequence_length(static_cast<int>(n));
  if (!greedy) return tokens * cost(tokens);
  // The lm layout scores the prompt's last token and every answer token: its slots.
  Generator rng(static_cast<uint64_t>(n));
  const Example e = task.sample(rng, static_cast<int>(n));
  int64_t first = 0;
  while (first < static_cast<int64_t>(e.targets.size()) && e.targets[first] == kIgnore) ++first;
  const int64_t slots = static_cast<int64_t>(e.targets.size()) - first;
  double sum = 0;
  for (int64_t s = 0; s < slots; ++s) {
    const double prefix = static_cast<double>(first + 1 + s);
    sum += prefix * cost(prefix);
  }
  return sum;
}

}  // namespace

SuiteCost read_suite_cost(MapReader& c, const std::string& suite_path) {
  SuiteCost cost;
  PELAB_CHECK(c.has("seconds_per_token"),
              "{}: missing (the base scheme's training step / (batch × padded length))",
              c.where("seconds_per_token"));
  c.read("seconds_per_token", cost.seconds_per_token);
  if (!(cost.seconds_per_token > 0) || cost.seconds_per_token > 1)
    c.fail("seconds_per_token", fmt::format("must be in (0, 1], got {}", cost.seconds_per_token));
  PELAB_CHECK(c.has("at_length"),
              "{}: missing (the padded sequence length seconds_per_token was measured at)",
              c.where("at_length"));
  c.read("at_length", cost.at_length);
  if (cost.at_length < 1 || cost.at_length > 1000000)
    c.fail("at_length", fmt::format("must be in [1, 1000000], got {}", cost.at_length));
  c.read("measured", cost.measured);
  PELAB_CHECK(c.has("step_time"),
              "{}: missing (each scheme's step relative to the base's: a file, e.g. "
              "costs/step_time.yaml, or {{base: none, factors: {{...}}, measured: ...}})",
              c.where("step_time"));
  const YAML::Node node = *c.take("step_time");
  if (node.IsScalar()) {
    const fs::path file = (fs::path(suite_path).parent_path() / node.Scalar()).lexically_normal();
    std::error_code ec;
    if (!fs::is_regular_file(file, ec))
      c.fail("step_time", fmt::format("{} is not a file", message_text(file.string())));
    const YAML::Node doc = load_yaml_file(file.string());
    PELAB_CHECK(doc.IsMap(), "{}: a step-time file is a mapping (base, factors, measured)",
                file.string());
    MapReader r(doc, file.string(), "");
    cost.step_time = read_step_times(r, file.string());
  } else if (node.IsMap()) {
    MapReader r(node, suite_path, "cost.step_time");
    cost.step_time = read_step_times(r, suite_path);
  } else {
    c.fail("step_time", "expected a file's path or a mapping {base, factors, measured}");
  }
  c.finish({"seconds_per_token", "at_length", "measured", "step_time"});
  return cost;
}

double token_weight(int64_t d_model, int64_t d_ff, double length, double at_length) {
  const double d = static_cast<double>(d_model);
  const double linear = 4 * d * d + 2 * d * static_cast<double>(d_ff);
  const double attention = 2 * d;
  return (linear + attention * length) / (linear + attention * at_length);
}

double expected_longest(int64_t lo, int64_t hi, int64_t batch) {
  double e = 0;
  for (int64_t k = lo; k <= hi; ++k) e += static_cast<double>(k) * p_longest(k, lo, hi, batch);
  return e;
}

double token_cost(int64_t d_model, int64_t d_ff, double step_time, double length,
                  double at_length) {
  return token_weight(d_model, d_ff, length, at_length) + (step_time - 1) * length / at_length;
}

RunCost estimate_run(const SuiteCost& cost, const ExperimentConfig& c) {
  RunCost r;
  r.steps = c.training.steps;
  r.scheme = c.model.positional.type;
  const auto factor = cost.step_time.factors.find(r.scheme);
  r.step_time_known = factor != cost.step_time.factors.end();
  r.step_time = r.step_time_known ? factor->second : 1;
  const TokenCost token{c.model.d_model, c.model.ffn_width(), static_cast<double>(cost.at_length),
                        r.step_time};
  const std::unique_ptr<Task> task = make_task(c.task);
  const int64_t lo = c.task.min_length, hi = c.task.max_length;
  // Training: each step's batch is padded to its longest example; with per_batch sizes
  // every example has the step's one size, drawn uniformly.
  const bool one_size = c.training.length_sampling == "per_batch";
  double step_tokens = 0;
  for (int64_t k = lo; k <= hi; ++k) {
    const double t = task->sequence_length(static_cast<int>(k));
    const double p = one_size ? 1.0 / static_cast<double>(hi - lo + 1)
                              : p_longest(k, lo, hi, c.training.batch_size);
    step_tokens += p * t * token(t);
  }
  step_tokens *= static_cast<double>(c.training.batch_size);
  const int64_t draws =
      c.randomize.max_position > 0 && c.randomize.at_eval ? c.randomize.eval_draws : 1;
  const bool greedy = task->lm_vocabulary() != nullptr;
  double eval_tokens = 0;
  for (int64_t n : c.evaluation.lengths)
    eval_tokens += static_cast<double>(c.evaluation.examples * draws) *
                   forward_tokens(*task, n, greedy, token) / 3;
  double check_tokens = 0;
  if (c.training.stop_when.enabled()) {
    const int64_t checks = c.training.steps / c.training.stop_when.every;  // at its multiples
    double per_check = 0;
    for (int64_t n = lo; n <= hi; ++n) per_check += forward_tokens(*task, n, false, token);
    check_tokens =
        static_cast<double>(checks * c.training.stop_when.examples * draws) * per_check / 3;
  }
  r.training = cost.seconds_per_token * static_cast<double>(r.steps) * step_tokens;
  r.evaluation = cost.seconds_per_token * eval_tokens;
  r.validation = cost.seconds_per_token * check_tokens;
  r.core_seconds = r.training + r.evaluation + r.validation;
  return r;
}

}  // namespace pelab
