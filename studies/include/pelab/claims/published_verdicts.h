// The judgements of the published reproductions (R1, R2, R3), apart from their measurements:
// pure functions from a few numbers to a verdict and the line that says why, so that tests
// can feed them synthetic results. The preconditions come first (a task or scheme that fails
// one is named and left out; nothing left is inconclusive), then the rule written in the
// claim's config.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "pelab/claims/preconditions.h"
#include "pelab/report/statistics.h"

namespace pelab::claims {

// ---- the papers' score ----

// One evaluated length of a run: its per-token accuracy, and whether it is one of the
// training lengths (the evaluation's in_training flag, the one compare reads).
struct LengthScore {
  int64_t length = 0;
  double token_accuracy = 0;
  bool in_training = false;
};
// Delétang et al.'s score of a run: the per-token accuracy averaged over the evaluated
// lengths outside training (compare's definition: not in_training), each length weighing the
// same (an unweighted mean over lengths, not over tokens). NaN when there is none.
double beyond_training_average(const std::vector<LengthScore>& lengths);
// The same mean over the evaluated training lengths (NaN when there is none).
double in_training_average(const std::vector<LengthScore>& lengths);

// One run of a sweep with its score.
struct ScoredRun {
  std::string scheme, lr;
  uint64_t seed = 0;
  double score = std::numeric_limits<double>::quiet_NaN();
  double in_distribution = std::numeric_limits<double>::quiet_NaN();  // in_training_average
  // The score in sequence accuracy, shown beside it (not judged).
  double sequence_score = std::numeric_limits<double>::quiet_NaN();
};
// The best run of a sweep: the maximum score over schemes, seeds and learning rates, as the
// paper reports it (no validation selection: chosen on the test lengths themselves, so
// optimistic), among the runs whose in-distribution score is at least min_in_distribution (a
// run that has not learned the training lengths says nothing beyond them). Runs with a NaN
// score are skipped; `runs` counts those compared.
struct SweepBest {
  double score = std::numeric_limits<double>::quiet_NaN();
  double sequence_score = std::numeric_limits<double>::quiet_NaN();  // the best run's
  double in_distribution = std::numeric_limits<double>::quiet_NaN();
  std::string scheme, lr;
  uint64_t seed = 0;
  int64_t runs = 0;
};
SweepBest best_over_sweep(const std::vector<ScoredRun>& runs,
                          double min_in_distribution = -std::numeric_limits<double>::infinity());

// ---- R1: Delétang et al. 2023, Transformers do not solve the tasks out of distribution ----

struct R1Task {
  std::string name;
  // The schemes whose runs (at the learning rate validation selects) all learned the task in
  // distribution (compare's rule); the precondition needs one.
  std::vector<std::string> learned_schemes;
  SweepBest best;  // over every scheme, seed and learning rate that learned (min_in_distribution)
};
struct R1Numbers {
  std::vector<R1Task> tasks;
  // Positive controls: tasks the paper's Transformer solves. They take the same precondition
  // and score; unless each one is judged and solved, "not solved" on the tasks above is no
  // evidence that they are beyond reach (the setup may be too weak to solve anything).
  std::vector<R1Task> controls;
  double solved = 0.90;  // the paper's "solved" line, as a fraction
  // The best run must have learned the training lengths this well (token accuracy), so that
  // "not solved" beyond them is not merely a run that has not learned yet.
  double min_in_distribution = 0.95;
  // The claim speaks of every task: fewer judged tasks than this cannot support or refute it.
  int64_t min_tasks = 1;
  std::string budget;  // a sentence on the training budget, printed beside the verdict
};
// Precondition per task: at least one scheme learned it in distribution, and the best run's
// in-distribution token accuracy is at least min_in_distribution (the others are named and
// left out; fewer than min_tasks left: inconclusive). Supported when every judged task's best
// score stays below `solved`, refuted when every one reaches it, mixed otherwise; but when a
// control is left out or not solved, only "refuted" stands (a solved task needs no control)
// and the rest is inconclusive. `budget` follows.
Judgement judge_r1(const R1Numbers& n);

// ---- R2: Ruoss et al. 2023, randomized positions raise length generalisation ----

// One task of one scheme: the protocol's per-seed scores (test-length averaged token
// accuracy, at the learning rate validation selects), plain and randomized.
struct R2Task {
  std::string task;
  LearnedCount plain_learned, randomized_learned;
  std::vector<double> plain, randomized;  // one value per seed
  double chance = 0;  // the token accuracy of guessing: 1 / the task's output classes
};
// The gain of randomization over a scheme's tasks: the mean over tasks of (mean randomized
// − mean plain), with a nominal 95% percentile bootstrap interval that resamples the seeds of
// each side within each task (deterministic: the options' fixed stream). With 3 seeds a side
// it covers the true gain well below 95% of the time (the README's "How far the intervals
// go"), which is why the rules below need 2 seeds a side at least and several units.
struct Gain {
  double mean = std::numeric_limits<double>::quiet_NaN();
  Interval interval{std::numeric_limits<double>::quiet_NaN(),
                    std::numeric_limits<double>::quiet_NaN()};
  int64_t tasks = 0;
};
Gain randomization_gain(const std::vector<R2Task>& tasks, const BootstrapOptions& options = {});

struct R2Scheme {
  std::string name;
  std::vector<R2Task> tasks;
};
// A scheme that is run but, by a reason stated before any run, not judged.
struct R2Excluded {
  std::string scheme, reason;
};
struct R2Numbers {
  std::vector<R2Scheme> schemes;
  int64_t min_tasks = 2;  // a scheme needs this many tasks that count
  int64_t min_seeds = 2;  // a task counts only with this many seeds a side (else no interval)
  // A task where both sides' means are at or above `ceiling`, or both at or below chance +
  // `floor_margin`, cannot show a gain either way: it does not count.
  double ceiling = 0.98;
  double floor_margin = 0.02;
  // The smallest gain of interest (token accuracy): a gain whose interval lies below it is
  // shown too small to matter.
  double min_gain = 0.05;
  std::vector<R2Excluded> excluded;
};
// The verdict on one scheme. Split: raised on the mean over tasks, but lowered on one of them.
enum class R2Effect { Raised, Lowered, NoGain, Split, Unclear, NotJudged };
const char* to_string(R2Effect e);
struct R2SchemeResult {
  std::string name;
  R2Effect effect = R2Effect::NotJudged;
  Gain gain;                          // over the tasks that count
  std::vector<std::string> left_out;  // tasks that do not count, with the reason
  std::vector<std::string> lowered;   // counted tasks whose own gain's interval lies below 0
  std::string not_judged;             // why the scheme is not judged ("" when it is)
};
// Per scheme, a task counts when both its plain and its randomized runs all learned in
// distribution, each side has min_seeds seeds, and the two sides are neither both at the
// ceiling nor both at chance; a scheme that is excluded, or has fewer than min_tasks such
// tasks, is not judged (and then the gain of each task that counts is named beside the
// reason, as a finding). A judged scheme shows no gain when its gain's interval lies within
// ±min_gain (too small to matter either way, checked first); otherwise it is raised when the
// interval lies above 0 (split instead when a counted task's own gain lies below 0), lowered
// when below 0, no gain when its upper bound lies below min_gain, unclear otherwise.
std::vector<R2SchemeResult> r2_effects(const R2Numbers& n);
// The schemes the claim names are those not excluded before the runs. Inconclusive when no
// more than half of them are judged, or more than half of the judged are unclear (the noise is
// as large as the effect); supported when more than half of the named schemes are raised and
// none is lowered; refuted when more than half of them are lowered or show no gain and none
// is raised; mixed otherwise.
Judgement judge_r2(const R2Numbers& n);

// ---- R3: Kazemnejad et al. 2023, no positional encoding (NoPE) length-generalises at least as
// well as the explicit encodings in a decoder ----

// One scheme on one task: the protocol's per-seed scores (exact match averaged over the test
// lengths, at the learning rate validation selects), with the seeds they came from.
struct R3Scores {
  std::string scheme;
  LearnedCount learned;
  std::vector<double> scores;
  std::vector<uint64_t> seeds;  // the same order as scores
};
struct R3Task {
  std::string task;
  std::vector<R3Scores> schemes;  // the reference among them
};
struct R3Numbers {
  std::string reference = "none";  // the scheme compared with every other: NoPE
  std::vector<R3Task> tasks;
  // A comparison where both sides' means are at or above `ceiling`, or both at or below
  // `floor`, cannot rank them: it does not count.
  double ceiling = 0.98, floor = 0.02;
  // Two schemes are level when the interval of their difference lies within ±margin.
  double margin = 0.05;
  int64_t min_seeds = 2;  // a comparison counts only with this many seeds a side
};
// The reference against one other scheme on one task.
enum class R3Standing { Ahead, Behind, Level, Unclear, NotJudged };
const char* to_string(R3Standing s);
// "ahead of", "behind", "level with", ...: the standing before the other scheme's name.
const char* standing_phrase(R3Standing s);
struct R3Comparison {
  std::string task, other;
  Gain difference;  // reference − other: the difference of the means over seeds, with its
                    // interval (resampling each side's seeds); tasks = 1
  R3Standing standing = R3Standing::NotJudged;
  std::string left_out;  // why it does not count ("" when it does)
};
// Per task, the reference against each other scheme. A comparison counts when both schemes
// learned the task in distribution (all runs, compare's rule), each has min_seeds seeds, and
// the two means are neither both at the ceiling nor both at the floor. The reference is level
// when the interval of reference − other lies within ±margin; otherwise ahead when it lies
// above 0, behind when below 0, unclear when it straddles 0.
std::vector<R3Comparison> r3_comparisons(const R3Numbers& n);
// Inconclusive when no more than half of all the comparisons count, when some other scheme
// has no comparison that counts, or when more than half of those that count are unclear.
// Otherwise, over the comparisons that count: supported when none is behind and more than half
// are ahead or level; refuted when more than half are behind and none is ahead; mixed
// otherwise. An unclear comparison whose point estimate lies below −margin blocks "supported"
// (the data lean to the reference being behind by more than the tolerance and cannot rule it
// out): inconclusive instead.
Judgement judge_r3(const R3Numbers& n);

// The same rule applied to published means taken as exact (no interval: a difference within
// ±margin is level, above it ahead, below it behind): what the rule says of the paper's own
// figures. `means`: per task, per scheme, the published mean.
struct R3PointComparison {
  std::string task, other;
  double difference = 0;  // reference − other
  R3Standing standing = R3Standing::NotJudged;
};
std::vector<R3PointComparison> r3_point_comparisons(
    const std::string& reference,
    const std::vector<std::pair<std::string, std::vector<std::pair<std::string, double>>>>& means,
    double margin);
Verdict r3_point_verdict(const std::vector<R3PointComparison>& comparisons);

// The paper's summary, shown and not judged: per scheme, the mean reciprocal rank over
// queries (one per task and seed), the schemes of a query ranked by score, best first. Tied
// schemes each get the mean of the reciprocals of the ranks they span (the paper breaks ties
// by order). A query is a seed that every scheme of the task has; a scheme with none gets NaN.
std::vector<std::pair<std::string, double>> mean_reciprocal_rank(const std::vector<R3Task>& tasks);

}  // namespace pelab::claims
