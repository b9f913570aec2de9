#include "pelab/run/evaluate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "pelab/autograd/autograd.h"
#include "pelab/core/error.h"
#include "pelab/data/batching.h"
#include "pelab/run/decoding.h"

namespace pelab {

namespace {

constexpr int64_t kEvalBatchTokens = 8192;

// The counts of one pass over a length's examples (one draw of positions).
struct Tally {
  int64_t scored = 0, correct = 0, perfect = 0;
  double loss_sum = 0;
};

// Scores `examples` (problem size n) in batches: prediction and cross-entropy at every scored
// target, added to `positions` (by token index) and returned as a tally. The prediction is
// the argmax of one forward pass, or with `lm` (the lm layout, generating) the token greedy
// generation produced for that answer slot; the loss is the forward pass's either way.
// Positions are drawn from `position_rng` when `randomize` is given, else 0..T-1.
Tally score_examples(const Encoder& model, const std::vector<Example>& examples, int64_t n,
                     int64_t batch_size, const RandomizeConfig* randomize, Generator& position_rng,
                     const DigitRuns* digit_runs, const LmVocabulary* lm,
                     std::vector<PositionResult>& positions) {
  const int64_t V = model.config().vocab_out;
  // Long sequences go in fewer per batch: an evaluation's memory then stays that of a batch of
  // kEvalBatchTokens, whatever the length (at most batch_size examples still).
  int64_t longest = 1;
  for (const Example& e : examples)
    longest = std::max<int64_t>(longest, static_cast<int64_t>(e.tokens.size()));
  batch_size = std::clamp<int64_t>(kEvalBatchTokens / longest, 1, batch_size);
  Tally tally;
  for (size_t start = 0; start < examples.size(); start += batch_size) {
    const size_t end = std::min(examples.size(), start + static_cast<size_t>(batch_size));
    const std::vector<Example> part(examples.begin() + start, examples.begin() + end);
    const Batch batch = collate(part, randomize, &position_rng, digit_runs);
    const Tensor logits = model.forward(batch).logits;  // [B, T, V]
    const IntTensor predicted = lm ? greedy_predictions(model, batch, *lm)
                                   : teacher_forced_predictions(logits, batch);  // [B, T]
    const float* z = logits.data();
    const int64_t T = batch.length();
    for (size_t b = 0; b < part.size(); ++b) {
      bool all_right = true;
      for (int64_t t = 0; t < T; ++t) {
        const int32_t y = batch.targets.values[b * T + t];
        if (y == kIgnore) continue;
        const float* row = z + (b * T + t) * V;
        const float mx = row[argmax(row, V)];
        double sum = 0;
        for (int64_t c = 0; c < V; ++c) sum += std::exp(static_cast<double>(row[c] - mx));
        const double loss = std::log(sum) - (row[y] - mx);
        const bool right = predicted.values[b * T + t] == y;
        if (static_cast<int64_t>(positions.size()) <= t) positions.resize(t + 1);
        PositionResult& p = positions[t];
        p.length = n;
        p.position = t;
        p.scored += 1;
        p.correct += right;
        p.loss_sum += loss;
        tally.scored += 1;
        tally.correct += right;
        tally.loss_sum += loss;
        all_right = all_right && right;
      }
      tally.perfect += all_right;
    }
  }
  return tally;
}

}  // namespace

EvalSettings evaluation_settings(const ExperimentConfig& config, std::vector<int64_t> lengths) {
  EvalSettings s;
  s.lengths = std::move(lengths);
  if (s.lengths.empty()) s.lengths = config.evaluation.lengths;
  s.examples = config.evaluation.examples;
  s.batch_size = config.evaluation.batch_size;
  s.seed = config.evaluation.seed;
  s.train_min_length = config.task.min_length;
  s.train_max_length = config.task.max_length;
  s.randomize = config.randomize;
  s.position_ids = config.task.position_ids;
  return s;
}

EvalSettings validation_settings(const ExperimentConfig& config, std::vector<int64_t> lengths) {
  EvalSettings s = evaluation_settings(config, std::move(lengths));
  s.seed = derive_seed(config.evaluation.seed, "validation");
  s.examples = config.training.stop_when.examples;
  return s;
}

Evaluation evaluate(const Encoder& model, const Task& task, const ExperimentConfig& config,
                    std::vector<int64_t> lengths, AnswerDecoding decoding) {
  return evaluate(model, task, evaluation_settings(config, std::move(lengths)), decoding);
}

Evaluation evaluate(const Encoder& model, const Task& task, const EvalSettings& settings,
                    AnswerDecoding decoding) {
  const LmVocabulary* lm = decoding == AnswerDecoding::greedy ? task.lm_vocabulary() : nullptr;
  NoGradGuard no_grad;
  Evaluation out;
  const RandomizeConfig& rnd = settings.randomize;
  const bool random_positions = rnd.max_position > 0 && rnd.at_eval;
  // Randomized positions: several draws of positions, averaged (each draw's scores kept).
  const int64_t draws = random_positions ? rnd.eval_draws : 1;
  // Digit runs are evaluated without the training offset (McLeish et al.'s protocol).
  std::optional<DigitRuns> digit_runs;
  if (settings.position_ids == "digit_runs") digit_runs = digit_runs_of(task.info(), 0);
  for (int64_t n : settings.lengths) {
    const std::vector<Example> examples =
        evaluation_examples(task, n, settings.examples, settings.seed);
    LengthResult r;
    r.length = n;
    r.tokens = task.sequence_length(static_cast<int>(n));
    r.in_training = n >= settings.train_min_length && n <= settings.train_max_length;
    r.examples = static_cast<int64_t>(examples.size());
    std::vector<PositionResult> positions;
    double loss_sum = 0;
    for (int64_t d = 0; d < draws; ++d) {
      const uint64_t stream = settings.seed ^ static_cast<uint64_t>(n);
      Generator position_rng(
          d == 0 ? derive_seed(stream, "eval-positions")
                 : derive_seed(mix64(stream) ^ static_cast<uint64_t>(d), "eval-positions-draw"));
      const Tally t =
          score_examples(model, examples, n, settings.batch_size, random_positions ? &rnd : nullptr,
                         position_rng, digit_runs ? &*digit_runs : nullptr, lm, positions);
      r.scored = t.scored;
      loss_sum += t.scored ? t.loss_sum / static_cast<double>(t.scored) : 0.0;
      r.token_accuracy_draws.push_back(t.scored ? static_cast<double>(t.correct) / t.scored : 0.0);
      r.sequence_accuracy_draws.push_back(r.examples ? static_cast<double>(t.perfect) / r.examples
                                                     : 0.0);
    }
    for (int64_t d = 0; d < draws; ++d) {
      r.token_accuracy += r.token_accuracy_draws[d] / static_cast<double>(draws);
      r.sequence_accuracy += r.sequence_accuracy_draws[d] / static_cast<double>(draws);
    }
    r.loss = loss_sum / static_cast<double>(draws);
    if (draws == 1) r.token_accuracy_draws.clear(), r.sequence_accuracy_draws.clear();
    out.by_length.push_back(r);
    for (const PositionResult& p : positions)
      if (p.scored > 0) out.by_position.push_back(p);
  }
  return out;
}

std::vector<int64_t> validation_lengths(const Task& task, const ExperimentConfig& config) {
  const int64_t lo = config.task.min_length, hi = config.task.max_length;
  std::vector<int64_t> lengths;
  const std::vector<int> sizes = task.eval_sizes();
  if (sizes.empty()) {  // a generated task: every size
    for (int64_t n = std::max<int64_t>(lo, task.min_length()); n <= hi; ++n) lengths.push_back(n);
  } else {
    for (int n : sizes)
      if (n >= lo && n <= hi) lengths.push_back(n);
  }
  return lengths;
}

Validation validate(const Encoder& model, const Task& task, const ExperimentConfig& config) {
  Validation out;
  out.lengths = validation_lengths(task, config);
  if (out.lengths.empty()) return out;
  // The lm layout is validated teacher-forced, in one forward pass per batch, not by greedy
  // generation (m + 1 passes). For a causal model the two give the same sequence accuracy:
  // the output at position t depends only on the tokens and positions at or before t, so, by
  // induction over the answer slots, while every teacher-forced argmax so far was right the
  // generated prefix equals the gold one, generation's next input is the gold token, and its
  // next prediction is the teacher-forced one; so generation is an exact match exactly when
  // every teacher-forced argmax (each answer token and <end>) is right. Token accuracy can
  // differ (after a first error generation reads its own tokens). Two caveats. The scheme
  // must not number a position by the sequence's length (`normalized` divides by it, so the
  // prefix and the full sequence number the same token differently); the config refuses such
  // a scheme with lm. And a forward pass of L tokens rounds like the prefix of a longer one
  // only up to the GEMM's blocking, so the two logits can differ by a few ulps, which flips
  // an argmax wherever two classes are that close (a near tie, not only an exact one).
  // LmEvaluation.GenerationExactMatchIsTeacherForcedAllRight checks every example of three
  // configs (none, rotary, rotary with randomized positions) on fixed seeds, not every scheme.
  const Evaluation e = evaluate(model, task, validation_settings(config, out.lengths),
                                AnswerDecoding::teacher_forced);
  for (const LengthResult& r : e.by_length) {
    out.token_accuracy += r.token_accuracy;
    out.sequence_accuracy += r.sequence_accuracy;
  }
  out.token_accuracy /= static_cast<double>(e.by_length.size());
  out.sequence_accuracy /= static_cast<double>(e.by_length.size());
  return out;
}

namespace {

// A number of a CSV cell, to six decimals or with every digit.
std::string csv_number(double v, CsvDigits digits) {
  return digits == CsvDigits::full ? fmt::format("{}", v) : fmt::format("{:.6f}", v);
}

}  // namespace

std::string eval_csv(const Evaluation& e, CsvDigits digits) {
  std::string s =
      "length,tokens,examples,scored,token_accuracy,sequence_accuracy,loss,in_training\n";
  for (const LengthResult& r : e.by_length)
    s += fmt::format("{},{},{},{},{},{},{},{}\n", r.length, r.tokens, r.examples, r.scored,
                     csv_number(r.token_accuracy, digits), csv_number(r.sequence_accuracy, digits),
                     csv_number(r.loss, digits), r.in_training ? "true" : "false");
  return s;
}

std::string per_position_csv(const Evaluation& e, CsvDigits digits) {
  std::string s = "length,position,scored,accuracy,loss\n";
  for (const PositionResult& p : e.by_position)
    s += fmt::format("{},{},{},{},{}\n", p.length, p.position, p.scored,
                     csv_number(static_cast<double>(p.correct) / p.scored, digits),
                     csv_number(p.loss_sum / p.scored, digits));
  return s;
}

}  // namespace pelab
