#include "pelab/claims/published_verdicts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "pelab/core/rng.h"

namespace pelab::claims {

namespace {

Judgement cannot_tell(const std::string& reason) {
  return {Verdict::Inconclusive, "the experiment cannot tell: " + reason};
}

std::string joined(const std::vector<std::string>& parts, const std::string& separator) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : separator) + p;
  return out;
}

// The q-quantile of sorted values, interpolated between order statistics as the statistics
// module's bootstrap does (numpy's default), so both intervals read the same way.
double quantile_sorted(const std::vector<double>& sorted, double q) {
  const double at = q * static_cast<double>(sorted.size() - 1);
  const size_t below = static_cast<size_t>(std::floor(at));
  const size_t above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (at - static_cast<double>(below)) * (sorted[above] - sorted[below]);
}

// The mean of values.size() draws with replacement from `values`.
double resampled_mean(const std::vector<double>& values, Generator& rng) {
  const int64_t n = static_cast<int64_t>(values.size());
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += values[static_cast<size_t>(rng.uniform_int(0, n - 1))];
  return sum / static_cast<double>(n);
}

}  // namespace

double beyond_training_average(const std::vector<LengthScore>& lengths) {
  std::vector<double> beyond;
  for (const LengthScore& l : lengths)
    if (!l.in_training) beyond.push_back(l.token_accuracy);
  return mean_of(beyond);
}

double in_training_average(const std::vector<LengthScore>& lengths) {
  std::vector<double> in;
  for (const LengthScore& l : lengths)
    if (l.in_training) in.push_back(l.token_accuracy);
  return mean_of(in);
}

SweepBest best_over_sweep(const std::vector<ScoredRun>& runs, double min_in_distribution) {
  const bool any_run = std::isinf(min_in_distribution) && min_in_distribution < 0;
  SweepBest best;
  for (const ScoredRun& r : runs) {
    if (std::isnan(r.score)) continue;
    if (!any_run && !(r.in_distribution >= min_in_distribution)) continue;
    ++best.runs;
    if (best.runs == 1 || r.score > best.score) {
      best.score = r.score;
      best.sequence_score = r.sequence_score;
      best.in_distribution = r.in_distribution;
      best.scheme = r.scheme;
      best.lr = r.lr;
      best.seed = r.seed;
    }
  }
  return best;
}

namespace {

// Why a task of R1 is left out ("" when its precondition holds).
std::string r1_left_out(const R1Task& t, double min_in_distribution) {
  if (t.learned_schemes.empty()) return "no scheme learned it in distribution";
  if (t.best.runs == 0)
    return fmt::format(
        "no run evaluated beyond the training lengths reached an in-distribution token "
        "accuracy of {:.2f}",
        min_in_distribution);
  if (!(t.best.in_distribution >= min_in_distribution))
    return fmt::format("its best run's in-distribution token accuracy {:.3f} is below {:.2f}",
                       t.best.in_distribution, min_in_distribution);
  return "";
}

// "cycle_navigation 0.448 (none, lr 0.0003, seed 0; in distribution 0.973)"
std::string r1_best_text(const R1Task& t) {
  return fmt::format("{} {:.3f} ({}, lr {}, seed {}; in distribution {:.3f})", t.name, t.best.score,
                     t.best.scheme, t.best.lr, t.best.seed, t.best.in_distribution);
}

}  // namespace

Judgement judge_r1(const R1Numbers& n) {
  std::vector<std::string> judged, left_out;
  int64_t solved = 0;
  for (const R1Task& t : n.tasks) {
    const std::string why = r1_left_out(t, n.min_in_distribution);
    if (!why.empty()) {
      left_out.push_back(fmt::format("{} ({})", t.name, why));
      continue;
    }
    solved += t.best.score >= n.solved;
    judged.push_back(r1_best_text(t));
  }
  // The positive controls: each must be judged and solved for "not solved" to be evidence.
  std::vector<std::string> controls_solved, controls_failed;
  for (const R1Task& c : n.controls) {
    const std::string why = r1_left_out(c, n.min_in_distribution);
    if (!why.empty())
      controls_failed.push_back(fmt::format("{} ({})", c.name, why));
    else if (c.best.score >= n.solved)
      controls_solved.push_back(r1_best_text(c));
    else
      controls_failed.push_back(r1_best_text(c) + ", not solved");
  }
  std::string controls;
  if (!controls_solved.empty())
    controls += "; positive controls solved: " + joined(controls_solved, "; ");
  if (!controls_failed.empty())
    controls += "; positive controls failed: " + joined(controls_failed, "; ");
  const std::string unjudged = left_out.empty() ? "" : "; left out: " + joined(left_out, ", ");
  // The report ends the reason with its own full stop.
  std::string budget = n.budget.empty() ? "" : ". " + n.budget;
  while (!budget.empty() && budget.back() == '.') budget.pop_back();
  if (judged.empty()) return cannot_tell("no task is left to judge" + unjudged + controls + budget);
  const int64_t m = static_cast<int64_t>(judged.size());
  if (m < n.min_tasks)
    return cannot_tell(fmt::format("{} of {} tasks judged ({}), the claim needs {}{}{}{}", m,
                                   n.tasks.size(), joined(judged, "; "), n.min_tasks, unjudged,
                                   controls, budget));
  const Verdict v = solved == 0   ? Verdict::Supported
                    : solved == m ? Verdict::Refuted
                                  : Verdict::Mixed;
  const std::string because = fmt::format(
      "best token accuracy beyond the training lengths (max over schemes, seeds and learning "
      "rates) against the solved line {:.2f}: {}; {} of {} judged tasks solved{}{}{}",
      n.solved, joined(judged, "; "), solved, m, unjudged, controls, budget);
  if (v != Verdict::Refuted && !controls_failed.empty())
    return cannot_tell(
        "a positive control is not solved, so the setup may be too weak to solve anything and "
        "\"not solved\" is no evidence: " +
        because);
  return {v, because};
}

namespace {

// One task's two samples: the gain is the mean of `after` − the mean of `before`.
struct SamplePair {
  const std::vector<double>* before;
  const std::vector<double>* after;
};

// The mean over pairs of (mean after − mean before), with a nominal 95% bootstrap interval
// that resamples each side of each pair (deterministic: the options' fixed stream).
Gain mean_gain(const std::vector<SamplePair>& pairs, const BootstrapOptions& options) {
  Gain g;
  g.tasks = static_cast<int64_t>(pairs.size());
  if (pairs.empty()) return g;
  for (const SamplePair& p : pairs)
    if (p.before->empty() || p.after->empty()) return g;
  double sum = 0;
  for (const SamplePair& p : pairs) sum += mean_of(*p.after) - mean_of(*p.before);
  g.mean = sum / static_cast<double>(pairs.size());
  Generator rng(options.seed);
  std::vector<double> means(static_cast<size_t>(options.resamples));
  for (double& m : means) {
    double resampled = 0;
    for (const SamplePair& p : pairs) {
      // Two statements: the draws must not depend on the compiler's order of evaluation.
      const double after = resampled_mean(*p.after, rng);
      const double before = resampled_mean(*p.before, rng);
      resampled += after - before;
    }
    m = resampled / static_cast<double>(pairs.size());
  }
  std::sort(means.begin(), means.end());
  const double tail = (1 - options.confidence) / 2;
  g.interval = {quantile_sorted(means, tail), quantile_sorted(means, 1 - tail)};
  return g;
}

}  // namespace

Gain randomization_gain(const std::vector<R2Task>& tasks, const BootstrapOptions& options) {
  std::vector<SamplePair> pairs;
  for (const R2Task& t : tasks) pairs.push_back({&t.plain, &t.randomized});
  return mean_gain(pairs, options);
}

const char* to_string(R2Effect e) {
  switch (e) {
    case R2Effect::Raised:
      return "raised";
    case R2Effect::Lowered:
      return "lowered";
    case R2Effect::NoGain:
      return "no gain";
    case R2Effect::Split:
      return "split";
    case R2Effect::Unclear:
      return "unclear";
    case R2Effect::NotJudged:
      return "not judged";
  }
  return "?";
}

namespace {

// The tasks of a scheme that count (learned on both sides, not both at the ceiling nor both
// at chance); the others are named in `left_out` with the reason.
std::vector<R2Task> counted_tasks(const R2Scheme& s, const R2Numbers& n,
                                  std::vector<std::string>& left_out) {
  std::vector<R2Task> counted;
  for (const R2Task& t : s.tasks) {
    const double plain = mean_of(t.plain), randomized = mean_of(t.randomized);
    const double floor = t.chance + n.floor_margin;
    const int64_t seeds = static_cast<int64_t>(std::min(t.plain.size(), t.randomized.size()));
    // Learning first: a diverged run leaves its seed without numbers, and "did not learn" is
    // the reason then, not the count of seeds.
    if (!t.plain_learned.all() || !t.randomized_learned.all())
      left_out.push_back(
          fmt::format("{} (learned in distribution: plain {} of {}, randomized {} of {})", t.task,
                      t.plain_learned.learned, t.plain_learned.runs, t.randomized_learned.learned,
                      t.randomized_learned.runs));
    else if (seeds < n.min_seeds)
      left_out.push_back(
          fmt::format("{} (seeds: plain {}, randomized {}; an interval needs {} a side)", t.task,
                      t.plain.size(), t.randomized.size(), n.min_seeds));
    else if (plain >= n.ceiling && randomized >= n.ceiling)
      left_out.push_back(fmt::format("{} (both at the ceiling: plain {:.3f}, randomized {:.3f})",
                                     t.task, plain, randomized));
    else if (plain <= floor && randomized <= floor)
      left_out.push_back(fmt::format("{} (both at chance {:.3f}: plain {:.3f}, randomized {:.3f})",
                                     t.task, t.chance, plain, randomized));
    else
      counted.push_back(t);
  }
  return counted;
}

// No gain first: a gain shown to lie within ±min_gain is too small to matter either way, even
// when its interval excludes 0 (as R3's "level").
R2Effect effect_of(const Gain& g, double min_gain, bool a_task_lowered) {
  if (g.interval.low > -min_gain && g.interval.high < min_gain) return R2Effect::NoGain;
  if (g.interval.low > 0) return a_task_lowered ? R2Effect::Split : R2Effect::Raised;
  if (g.interval.high < 0) return R2Effect::Lowered;
  if (g.interval.high < min_gain) return R2Effect::NoGain;
  return R2Effect::Unclear;
}

// The gain of each task that counts, named beside a scheme too few tasks count for: one task
// is a finding, not a verdict.
std::string per_task_findings(const std::vector<R2Task>& counted) {
  std::vector<std::string> gains;
  for (const R2Task& t : counted) {
    const Gain g = randomization_gain({t});
    if (std::isnan(g.mean)) continue;
    gains.push_back(fmt::format("{} {:+.3f} [{:+.3f}, {:+.3f}]", t.task, g.mean, g.interval.low,
                                g.interval.high));
  }
  return gains.empty() ? "" : "; findings, randomized − plain: " + joined(gains, ", ");
}

}  // namespace

std::vector<R2SchemeResult> r2_effects(const R2Numbers& n) {
  std::vector<R2SchemeResult> out;
  for (const R2Scheme& s : n.schemes) {
    R2SchemeResult r;
    r.name = s.name;
    const std::vector<R2Task> counted = counted_tasks(s, n, r.left_out);
    r.gain = randomization_gain(counted);
    for (const R2Task& t : counted)  // a mean over tasks must not hide a task it lowered
      if (randomization_gain({t}).interval.high < 0) r.lowered.push_back(t.task);
    const auto excluded = std::find_if(n.excluded.begin(), n.excluded.end(),
                                       [&](const R2Excluded& e) { return e.scheme == s.name; });
    if (excluded != n.excluded.end())
      r.not_judged = excluded->reason;
    else if (r.gain.tasks < n.min_tasks || std::isnan(r.gain.mean))
      r.not_judged = fmt::format("tasks that count: {}, needed: {}{}", r.gain.tasks, n.min_tasks,
                                 per_task_findings(counted));
    else
      r.effect = effect_of(r.gain, n.min_gain, !r.lowered.empty());
    out.push_back(std::move(r));
  }
  return out;
}

Judgement judge_r2(const R2Numbers& n) {
  std::map<R2Effect, int64_t> count;
  std::vector<std::string> parts, not_judged;
  for (const R2SchemeResult& r : r2_effects(n)) {
    if (r.effect == R2Effect::NotJudged) {
      not_judged.push_back(fmt::format("{} ({})", r.name, r.not_judged));
      continue;
    }
    ++count[r.effect];
    const std::string split =
        r.effect == R2Effect::Split ? ", lowered on " + joined(r.lowered, " and ") : "";
    parts.push_back(fmt::format("{} {} ({:+.3f} [{:+.3f}, {:+.3f}] over {} tasks{})", r.name,
                                to_string(r.effect), r.gain.mean, r.gain.interval.low,
                                r.gain.interval.high, r.gain.tasks, split));
  }
  const int64_t named = static_cast<int64_t>(
      std::count_if(n.schemes.begin(), n.schemes.end(), [&](const R2Scheme& s) {
        return std::none_of(n.excluded.begin(), n.excluded.end(),
                            [&](const R2Excluded& e) { return e.scheme == s.name; });
      }));
  const std::string unjudged =
      not_judged.empty() ? "" : "; not judged: " + joined(not_judged, ", ");
  const int64_t judged = static_cast<int64_t>(parts.size());
  if (judged == 0)
    return cannot_tell(
        "no scheme is judged (too few tasks that count: learned plain and randomized, not both "
        "at the ceiling or at chance; or left out before the runs)" +
        unjudged);
  const int64_t raised = count[R2Effect::Raised], lowered = count[R2Effect::Lowered];
  const int64_t no_gain = count[R2Effect::NoGain], unclear = count[R2Effect::Unclear];
  const int64_t split = count[R2Effect::Split];
  const std::string because = fmt::format(
      "randomized − plain token accuracy beyond the training lengths, mean over tasks [nominal "
      "95% interval]: {}; of {} judged schemes (of {} named) {} raised, {} lowered, {} with no "
      "gain of {:.2f} or more, {} split, {} unclear{}",
      joined(parts, "; "), judged, named, raised, lowered, no_gain, n.min_gain, split, unclear,
      unjudged);
  if (2 * judged <= named)
    return cannot_tell(
        fmt::format("no more than half of the {} named schemes are judged: ", named) + because);
  if (2 * unclear > judged)
    return cannot_tell("the noise is as large as the effect for most schemes: " + because);
  const Verdict v = (2 * raised > named && lowered == 0)               ? Verdict::Supported
                    : (2 * (lowered + no_gain) > named && raised == 0) ? Verdict::Refuted
                                                                       : Verdict::Mixed;
  return {v, because};
}

// ---- R3 ----

const char* to_string(R3Standing s) {
  switch (s) {
    case R3Standing::Ahead:
      return "ahead";
    case R3Standing::Behind:
      return "behind";
    case R3Standing::Level:
      return "level";
    case R3Standing::Unclear:
      return "unclear";
    case R3Standing::NotJudged:
      return "not judged";
  }
  return "?";
}

const char* standing_phrase(R3Standing s) {
  switch (s) {
    case R3Standing::Ahead:
      return "ahead of";
    case R3Standing::Behind:
      return "behind";
    case R3Standing::Level:
      return "level with";
    case R3Standing::Unclear:
      return "unclear against";
    case R3Standing::NotJudged:
      return "not judged against";
  }
  return "?";
}

namespace {

std::string learned_text(const R3Scores& s) {
  return fmt::format("{} learned it in distribution in {} of {} runs", s.scheme, s.learned.learned,
                     s.learned.runs);
}

// Why the reference against `other` on `task` does not count ("" when it does).
std::string r3_left_out(const R3Scores& reference, const R3Scores& other, const R3Numbers& n) {
  if (!reference.learned.all()) return learned_text(reference);
  if (!other.learned.all()) return learned_text(other);
  if (reference.scores.empty() || other.scores.empty()) return "no score beyond training";
  if (static_cast<int64_t>(std::min(reference.scores.size(), other.scores.size())) < n.min_seeds)
    return fmt::format("seeds: {} {}, {} {}; an interval needs {} a side", reference.scheme,
                       reference.scores.size(), other.scheme, other.scores.size(), n.min_seeds);
  const double a = mean_of(reference.scores), b = mean_of(other.scores);
  if (a >= n.ceiling && b >= n.ceiling)
    return fmt::format("both at the ceiling: {:.3f} and {:.3f}", a, b);
  if (a <= n.floor && b <= n.floor)
    return fmt::format("both at the floor: {:.3f} and {:.3f}", a, b);
  return "";
}

// Level first: a difference shown to lie within ±margin is level, even when its interval
// excludes 0 (a deficit too small to matter does not make the reference behind).
R3Standing standing_of(const Gain& d, double margin) {
  if (d.interval.low >= -margin && d.interval.high <= margin) return R3Standing::Level;
  if (d.interval.low > 0) return R3Standing::Ahead;
  if (d.interval.high < 0) return R3Standing::Behind;
  return R3Standing::Unclear;
}

}  // namespace

std::vector<R3Comparison> r3_comparisons(const R3Numbers& n) {
  std::vector<R3Comparison> out;
  for (const R3Task& t : n.tasks) {
    const auto reference = std::find_if(t.schemes.begin(), t.schemes.end(),
                                        [&](const R3Scores& s) { return s.scheme == n.reference; });
    for (const R3Scores& other : t.schemes) {
      if (other.scheme == n.reference) continue;
      R3Comparison c;
      c.task = t.task;
      c.other = other.scheme;
      if (reference == t.schemes.end()) {
        c.left_out = n.reference + " was not run";
      } else {
        c.difference = mean_gain({{&other.scores, &reference->scores}}, {});
        c.left_out = r3_left_out(*reference, other, n);
        if (c.left_out.empty()) c.standing = standing_of(c.difference, n.margin);
      }
      out.push_back(std::move(c));
    }
  }
  return out;
}

namespace {

// The counting rule over comparisons that count, shared by pelab's and the published numbers.
Verdict r3_verdict(int64_t ahead, int64_t level, int64_t behind, int64_t judged) {
  return (2 * (ahead + level) > judged && behind == 0) ? Verdict::Supported
         : (2 * behind > judged && ahead == 0)         ? Verdict::Refuted
                                                       : Verdict::Mixed;
}

}  // namespace

Judgement judge_r3(const R3Numbers& n) {
  std::map<R3Standing, int64_t> count;
  std::vector<std::string> parts, left_out, others;  // others: every other scheme, in order
  std::set<std::string> counted_others;
  const std::vector<R3Comparison> all = r3_comparisons(n);
  for (const R3Comparison& c : all) {
    if (std::find(others.begin(), others.end(), c.other) == others.end()) others.push_back(c.other);
    if (c.standing == R3Standing::NotJudged) {
      left_out.push_back(
          fmt::format("{} vs {} on {} ({})", n.reference, c.other, c.task, c.left_out));
      continue;
    }
    counted_others.insert(c.other);
    ++count[c.standing];
    parts.push_back(fmt::format("{} {} {} ({:+.3f} [{:+.3f}, {:+.3f}])", c.task,
                                standing_phrase(c.standing), c.other, c.difference.mean,
                                c.difference.interval.low, c.difference.interval.high));
  }
  const std::string unjudged = left_out.empty() ? "" : "; left out: " + joined(left_out, ", ");
  const int64_t judged = static_cast<int64_t>(parts.size());
  if (judged == 0)
    return cannot_tell(fmt::format("no comparison of {} with another scheme counts", n.reference) +
                       unjudged);
  const int64_t ahead = count[R3Standing::Ahead], behind = count[R3Standing::Behind];
  const int64_t level = count[R3Standing::Level], unclear = count[R3Standing::Unclear];
  const int64_t total = static_cast<int64_t>(all.size());
  const std::string because = fmt::format(
      "{} − other, exact match beyond the training lengths [nominal 95% interval]: {}; of {} "
      "comparisons that count (of {}) {} ahead, {} level (within ±{:.2f}), {} behind, {} "
      "unclear{}",
      n.reference, joined(parts, "; "), judged, total, ahead, level, n.margin, behind, unclear,
      unjudged);
  if (2 * judged <= total)
    return cannot_tell(fmt::format("no more than half of the {} comparisons count: ", total) +
                       because);
  std::vector<std::string> missing;
  for (const std::string& o : others)
    if (!counted_others.count(o)) missing.push_back(o);
  if (!missing.empty())
    return cannot_tell(fmt::format("no comparison with {} counts: ", joined(missing, ", ")) +
                       because);
  if (2 * unclear > judged)
    return cannot_tell("the noise is as large as the difference for most comparisons: " + because);
  const Verdict v = r3_verdict(ahead, level, behind, judged);
  // An unclear comparison whose point estimate already breaks the tolerance cannot rule out
  // that the reference is behind: it blocks "supported".
  std::vector<std::string> beyond;
  for (const R3Comparison& c : all)
    if (c.standing == R3Standing::Unclear && c.difference.mean < -n.margin)
      beyond.push_back(fmt::format("{} against {}, {:+.3f}", c.task, c.other, c.difference.mean));
  if (v == Verdict::Supported && !beyond.empty())
    return cannot_tell(fmt::format("an unclear comparison's point estimate lies beyond the "
                                   "tolerance -{:.2f} ({}), so {} may be behind: ",
                                   n.margin, joined(beyond, "; "), n.reference) +
                       because);
  return {v, because};
}

std::vector<R3PointComparison> r3_point_comparisons(
    const std::string& reference,
    const std::vector<std::pair<std::string, std::vector<std::pair<std::string, double>>>>& means,
    double margin) {
  std::vector<R3PointComparison> out;
  for (const auto& [task, schemes] : means) {
    const auto ref = std::find_if(schemes.begin(), schemes.end(),
                                  [&](const auto& s) { return s.first == reference; });
    if (ref == schemes.end()) continue;
    for (const auto& [scheme, mean] : schemes) {
      if (scheme == reference) continue;
      const double d = ref->second - mean;
      out.push_back({task, scheme, d,
                     std::abs(d) <= margin ? R3Standing::Level
                     : d > 0               ? R3Standing::Ahead
                                           : R3Standing::Behind});
    }
  }
  return out;
}

Verdict r3_point_verdict(const std::vector<R3PointComparison>& comparisons) {
  std::map<R3Standing, int64_t> count;
  for (const R3PointComparison& c : comparisons) ++count[c.standing];
  if (comparisons.empty()) return Verdict::Inconclusive;
  return r3_verdict(count[R3Standing::Ahead], count[R3Standing::Level], count[R3Standing::Behind],
                    static_cast<int64_t>(comparisons.size()));
}

std::vector<std::pair<std::string, double>> mean_reciprocal_rank(const std::vector<R3Task>& tasks) {
  std::vector<std::string> order;  // schemes in order of first appearance
  std::map<std::string, std::vector<double>> reciprocal;
  for (const R3Task& t : tasks) {
    for (const R3Scores& s : t.schemes)
      if (std::find(order.begin(), order.end(), s.scheme) == order.end()) order.push_back(s.scheme);
    if (t.schemes.empty()) continue;
    for (uint64_t seed : t.schemes.front().seeds) {
      std::vector<std::pair<std::string, double>> query;  // scheme, score
      for (const R3Scores& s : t.schemes) {
        const auto at = std::find(s.seeds.begin(), s.seeds.end(), seed);
        if (at == s.seeds.end() || static_cast<size_t>(at - s.seeds.begin()) >= s.scores.size())
          break;
        query.push_back({s.scheme, s.scores[static_cast<size_t>(at - s.seeds.begin())]});
      }
      if (query.size() != t.schemes.size()) continue;  // a seed some scheme lacks
      for (const auto& [scheme, score] : query) {
        int64_t better = 0, equal = 0;
        for (const auto& q : query) {
          better += q.second > score;
          equal += q.second == score;
        }
        // Ranks better+1 .. better+equal, shared: the mean of their reciprocals.
        double sum = 0;
        for (int64_t r = better + 1; r <= better + equal; ++r) sum += 1.0 / static_cast<double>(r);
        reciprocal[scheme].push_back(sum / static_cast<double>(equal));
      }
    }
  }
  std::vector<std::pair<std::string, double>> out;
  for (const std::string& s : order) out.push_back({s, mean_of(reciprocal[s])});
  return out;
}

}  // namespace pelab::claims
