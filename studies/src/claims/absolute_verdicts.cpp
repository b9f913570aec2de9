#include "pelab/claims/absolute_verdicts.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "pelab/claims/preconditions.h"
#include "pelab/core/strings.h"

namespace pelab::claims {

namespace {

// compare's learned rule on counted runs, through the shared precondition (same wording).
std::string learned_reason(const std::vector<LearnedCount>& counts) {
  Comparison c;
  std::vector<std::string> labels;
  for (const LearnedCount& n : counts) {
    Group g;
    g.label = n.name;
    g.runs.resize(static_cast<size_t>(n.runs));
    g.learned_runs = n.learned;
    if (n.runs > 0) c.groups.push_back(g);
    labels.push_back(n.name);
  }
  return precondition_learned(c, labels);
}

Judgement inconclusive(const std::string& reason) {
  ClaimResult r;
  set_inconclusive(r, reason);
  return {r.verdict, r.because};
}

std::string interval(const Stat& s) {
  return fmt::format("{:.3f} [{:.3f}, {:.3f}]", s.mean, s.ci_low, s.ci_high);
}

std::string straddles(const std::string& what, const Stat& s, double threshold) {
  return fmt::format("{} {} straddles the threshold {:.3f} within its 95% interval", what,
                     interval(s), threshold);
}

// C2: one guess at one length. Hurt when its steps are at least factor × the reference's, or
// its accuracy at least gap below; undecided when the deciding interval straddles.
enum class Hurt { Yes, No, Undecided };
Hurt c2_hurt(const C2Scheme& g, const C2Scheme& ref, const C2Rule& rule, std::string& why) {
  const double steps_bound = rule.slower_factor * ref.steps.mean;
  const double accuracy_bound = ref.in_distribution.mean - rule.gap;
  // A run that never met the criterion counts its budget, a lower bound: below the bound it
  // says nothing about which side the true steps lie.
  Side steps = side_of(g.steps, steps_bound);
  if (g.not_reached > 0 && steps != Side::Above) steps = Side::Straddles;
  // Lower accuracy is worse: "above" the bound in badness is below it in accuracy.
  const Side accuracy = side_of(g.in_distribution, accuracy_bound);
  if (steps == Side::Above || accuracy == Side::Below) return Hurt::Yes;
  if (steps == Side::Below && accuracy == Side::Above) return Hurt::No;
  if (steps == Side::Straddles && g.not_reached > 0)
    why = fmt::format(
        "{}'s steps are a lower bound ({} of {} runs never met the training "
        "criterion), under {:.0f}, the bound that decides",
        g.name, g.not_reached, g.learned.runs, steps_bound);
  else if (steps == Side::Straddles)
    why = straddles(g.name + "'s steps", g.steps, steps_bound);
  else
    why = straddles(g.name + "'s accuracy", g.in_distribution, accuracy_bound);
  return Hurt::Undecided;
}

}  // namespace

Side side_of(const Stat& s, double threshold) {
  const double low = std::min(s.mean, s.ci_low), high = std::max(s.mean, s.ci_high);
  if (low >= threshold) return Side::Above;
  if (high < threshold) return Side::Below;
  return Side::Straddles;
}

Judgement judge_c2(const std::vector<C2Length>& lengths, const C2Rule& rule) {
  if (lengths.empty()) return inconclusive("no training length was run");
  struct PerLength {
    int64_t max_length;
    std::vector<Hurt> hurt;
    double index_slowdown = 0;
  };
  std::vector<PerLength> per;
  std::string because;
  int64_t longest_length = 0;
  for (const C2Length& l : lengths) longest_length = std::max(longest_length, l.max_length);
  for (const C2Length& l : lengths) {
    const C2Scheme& ref = l.reference;
    const std::string unlearned = learned_reason({ref.learned});
    if (!unlearned.empty())
      return inconclusive(fmt::format("at length {}, the reference {}", l.max_length, unlearned));
    if (ref.not_reached > 0)
      return inconclusive(fmt::format(
          "at length {}, the reference {} never met the training criterion in {} of {} runs, "
          "so there is no yardstick",
          l.max_length, ref.name, ref.not_reached, ref.learned.runs));
    PerLength p{l.max_length, {}, 0};
    for (const C2Scheme& g : l.guesses) {
      std::string why;
      p.hurt.push_back(c2_hurt(g, ref, rule, why));
      if (g.name == "index" && ref.steps.mean > 0) p.index_slowdown = g.steps.mean / ref.steps.mean;
      because += fmt::format("{}n ≤ {}: {} {:.0f} steps vs {:.0f}, accuracy {:.2f} vs {:.2f}",
                             because.empty() ? "" : "; ", l.max_length, g.name, g.steps.mean,
                             ref.steps.mean, g.in_distribution.mean, ref.in_distribution.mean);
      if (p.hurt.back() == Hurt::Undecided && l.max_length == longest_length)
        return inconclusive(fmt::format("at length {}, {}", l.max_length, why));
    }
    per.push_back(p);
  }
  std::sort(per.begin(), per.end(),
            [](const PerLength& a, const PerLength& b) { return a.max_length < b.max_length; });
  const PerLength& longest = per.back();
  const bool all_hurt_longest =
      std::all_of(longest.hurt.begin(), longest.hurt.end(), [](Hurt h) { return h == Hurt::Yes; });
  bool any_hurt = false, any_undecided = false;
  for (const PerLength& p : per)
    for (Hurt h : p.hurt) {
      any_hurt |= h == Hurt::Yes;
      any_undecided |= h == Hurt::Undecided;
    }
  const bool grows = longest.index_slowdown >= per.front().index_slowdown;
  if (all_hurt_longest && grows) return {Verdict::Supported, because};
  if (!any_hurt && any_undecided)
    return inconclusive("a guess's hurt at a shorter length is within its noise");
  if (!any_hurt) return {Verdict::Refuted, because};
  return {Verdict::Mixed, because};
}

LossCurve carried_forward_mean(const std::vector<LossCurve>& runs) {
  std::set<int64_t> steps;
  for (const LossCurve& run : runs)
    for (const auto& point : run) steps.insert(point.first);
  LossCurve mean;
  std::vector<size_t> next(runs.size(), 0);  // per run: its first point after the step
  for (const int64_t step : steps) {
    double sum = 0;
    int64_t counted = 0;
    for (size_t r = 0; r < runs.size(); ++r) {
      while (next[r] < runs[r].size() && runs[r][next[r]].first <= step) ++next[r];
      if (next[r] == 0) continue;  // not started yet
      sum += runs[r][next[r] - 1].second;
      ++counted;
    }
    mean.emplace_back(step, sum / static_cast<double>(counted));
  }
  return mean;
}

std::string c3_harm(const C3Scale& s, const C3Scale& at_one, const C3Rule& rule) {
  const double accuracy_bound = (1 - rule.drop_fraction) * at_one.accuracy.mean;
  const double steps_bound = rule.slower_factor * at_one.steps.mean;
  const Side accuracy = side_of(s.accuracy, accuracy_bound);
  const Side steps = side_of(s.steps, steps_bound);
  const bool most_failed = 2 * s.learned.learned < s.learned.runs;
  // Runs that never met the criterion count their budget: their steps are a lower bound, so
  // "slower" holds, "not slower" cannot be told.
  const bool slower_unknown = s.learned.learned < s.learned.runs && steps != Side::Above;
  if (accuracy == Side::Below || most_failed || steps == Side::Above) return "harms";
  if (accuracy == Side::Above && steps == Side::Below && !slower_unknown) return "harmless";
  return "undecided";
}

Judgement judge_c3_small(const C3Numbers& n, const C3Rule& rule) {
  const std::string unlearned = learned_reason({n.at_one.learned});
  if (!unlearned.empty()) return inconclusive(unlearned);
  std::vector<const C3Scale*> dominated;
  for (const C3Scale& s : n.others)
    if (s.ratio >= rule.dominated_ratio) dominated.push_back(&s);
  if (dominated.empty())
    return inconclusive(
        fmt::format("no scale puts position at {}× the token or more", rule.dominated_ratio));
  std::vector<std::pair<std::string, double>> values = {{"scale 1", n.at_one.accuracy.mean}};
  for (const C3Scale* s : dominated)
    values.emplace_back(fmt::format("scale {}", s->scale), s->accuracy.mean);
  const std::string saturated = precondition_not_saturated(values);
  if (!saturated.empty()) return inconclusive(saturated);
  int64_t harms = 0;
  std::vector<std::string> listed;
  for (const C3Scale* s : dominated) {
    const std::string harm = c3_harm(*s, n.at_one, rule);
    listed.push_back(
        fmt::format("scale {} ({:.3g}× the token) {}: accuracy {}, {} of {} runs "
                    "learned, {:.0f} steps",
                    s->scale, s->ratio, harm, interval(s->accuracy), s->learned.learned,
                    s->learned.runs, s->steps.mean));
    if (harm == "undecided")
      return inconclusive(fmt::format(
          "at scale {} ({:.3g}× the token) the harm is within the noise (accuracy {} against "
          "the bound {:.3f}, {:.0f} steps against {:.0f})",
          s->scale, s->ratio, interval(s->accuracy),
          (1 - rule.drop_fraction) * n.at_one.accuracy.mean, s->steps.mean,
          rule.slower_factor * n.at_one.steps.mean));
    harms += harm == "harms";
  }
  const int64_t m = static_cast<int64_t>(dominated.size());
  const Verdict v = harms == m   ? Verdict::Supported
                    : harms == 0 ? Verdict::Refuted
                                 : Verdict::Mixed;
  return {v,
          fmt::format("scale 1 ({:.3g}× the token): accuracy {}, {:.0f} steps; {}", n.at_one.ratio,
                      interval(n.at_one.accuracy), n.at_one.steps.mean, join(listed, "; "))};
}

Judgement judge_c3(const C3Numbers& n, const C3Rule& rule) {
  const std::vector<std::pair<std::string, bool>> exact = {
      {"unique", n.unique},
      {"independent of length", n.length_independent},
      {"bounded", n.bounded}};
  std::vector<std::string> held, failed;
  for (const auto& [name, has] : exact) (has ? held : failed).push_back(name);
  const std::string exact_text = fmt::format(
      "sinusoidal is {}{}",
      held.empty() ? "none of unique, independent of length, bounded" : join(held, ", "),
      failed.empty() ? "" : " but not " + join(failed, ", "));
  const Judgement small = judge_c3_small(n, rule);
  if (small.verdict == Verdict::Inconclusive)
    return {small.verdict, fmt::format("small: {} ({})", small.because, exact_text)};
  const Verdict v = failed.empty() && small.verdict == Verdict::Supported ? Verdict::Supported
                    : held.empty() && small.verdict == Verdict::Refuted   ? Verdict::Refuted
                                                                          : Verdict::Mixed;
  return {v,
          fmt::format("{}; small: {} ({})", exact_text, to_string(small.verdict), small.because)};
}

std::vector<std::pair<double, Verdict>> c3_threshold_sweep(const C3Numbers& n, C3Rule rule,
                                                           const std::vector<double>& fractions) {
  std::vector<std::pair<double, Verdict>> out;
  for (double f : fractions) {
    rule.drop_fraction = f;
    out.emplace_back(f, judge_c3_small(n, rule).verdict);
  }
  return out;
}

Judgement judge_c4(const C4Numbers& n, double gap) {
  if (n.controls.empty()) return inconclusive("no relative control was trained");
  std::vector<std::pair<std::string, double>> values = n.compared;
  values.emplace_back("early", n.early.mean);
  values.emplace_back("late", n.late.mean);
  const std::string saturated = precondition_not_saturated(values);
  if (!saturated.empty()) return inconclusive(saturated);
  const double drop = n.early.mean - n.late.mean;
  // The control that drops the most: the one the mechanism must beat.
  const auto worst =
      std::max_element(n.controls.begin(), n.controls.end(),
                       [](const auto& a, const auto& b) { return a.second.mean < b.second.mean; });
  std::vector<std::string> controls;
  for (const auto& [name, stat] : n.controls)
    controls.push_back(fmt::format("{} {:.3f}", name, stat.mean));
  std::string because = fmt::format(
      "absolute schemes' token accuracy {} over the early positions, {} over the last quarter "
      "(drop {:.3f}); the relative controls drop {}; at the long length {:.3f} at trained "
      "positions, {:.3f} beyond",
      interval(n.early), interval(n.late), drop, join(controls, ", "), n.trained, n.beyond);
  const Verdict otherwise = n.beyond <= 0.5 * n.trained ? Verdict::Mixed : Verdict::Refuted;
  if (drop < gap) return {otherwise, because};
  const std::string noise = precondition_separated("early", n.early, "late", n.late);
  if (!noise.empty()) return inconclusive(noise);
  if (drop - worst->second.mean < gap)
    return {otherwise,
            because + fmt::format(" ({} drops {:.3f} with no absolute position, so the absolute "
                                  "schemes' drop is not shown to come from uneven counts)",
                                  worst->first, worst->second.mean)};
  const std::string apart =
      precondition_separated("the absolute drop", n.drop, worst->first + "'s drop", worst->second);
  if (!apart.empty()) return inconclusive(apart);
  return {Verdict::Supported, because};
}

Judgement judge_c14(const C14Numbers& n, const C14Rule& rule) {
  const std::string unlearned = learned_reason({n.learned});
  if (!unlearned.empty()) return inconclusive(unlearned);
  const bool untouched = n.untrained_worst <= rule.decay_tolerance;
  const std::string because = fmt::format(
      "learned: sequence accuracy beyond the training lengths {}; untrained rows {} weight "
      "decay alone (largest deviation {:.3g})",
      interval(n.extrapolation), untouched ? "moved by" : "moved by more than", n.untrained_worst);
  if (!untouched) return {Verdict::Refuted, because};
  // Either bound the interval straddles could turn the verdict.
  for (const double bound : {rule.supported_max, rule.refuted_min})
    if (side_of(n.extrapolation, bound) == Side::Straddles)
      return inconclusive(straddles("learned's extrapolation", n.extrapolation, bound));
  if (n.extrapolation.mean <= rule.supported_max) return {Verdict::Supported, because};
  if (n.extrapolation.mean >= rule.refuted_min) return {Verdict::Refuted, because};
  return {Verdict::Mixed, because};
}

// C16's functional test per run: the token accuracy lost when the tokens' part in the
// position span is removed (the two accuracies are paired by run).
Stat c16_harm(const C16Numbers& n) {
  std::vector<double> harm;
  for (size_t i = 0; i < n.accuracy.values.size() && i < n.accuracy_without_shared.values.size();
       ++i)
    harm.push_back(n.accuracy.values[i] - n.accuracy_without_shared.values[i]);
  return summarize(harm);
}

Judgement judge_c16(const C16Numbers& n, const C16Rule& rule) {
  const std::string unlearned = learned_reason({n.learned});
  if (!unlearned.empty()) return inconclusive(unlearned);
  const Stat harm = c16_harm(n);
  if (harm.n == 0) return inconclusive("the functional test has no run");
  for (const double bound : {rule.harm_max, rule.harm_refuted_min})
    if (side_of(harm, bound) == Side::Straddles)
      return inconclusive(straddles("the token accuracy the functional test loses", harm, bound));
  const Verdict functional = harm.mean <= rule.harm_max           ? Verdict::Supported
                             : harm.mean >= rule.harm_refuted_min ? Verdict::Refuted
                                                                  : Verdict::Mixed;
  // The bound on the shared energy that could soften the functional verdict.
  const double softening = functional == Verdict::Supported ? rule.refuted_min : rule.supported_max;
  if (functional != Verdict::Mixed && side_of(n.shared_over_chance, softening) == Side::Straddles)
    return inconclusive(straddles("the shared energy ÷ chance", n.shared_over_chance, softening));
  const double shared = n.shared_over_chance.mean;
  const bool softened = (functional == Verdict::Supported && shared >= rule.refuted_min) ||
                        (functional == Verdict::Refuted && shared <= rule.supported_max);
  const std::string because = fmt::format(
      "removing the tokens' part in the position span moves token accuracy from {:.3f} to "
      "{:.3f} (loses {}: {} {}); after training the centred sinusoidal encoding and the tokens "
      "share {} of a random subspace's energy{}",
      n.accuracy.mean, n.accuracy_without_shared.mean, interval(harm),
      functional == Verdict::Supported ? "at most"
      : functional == Verdict::Refuted ? "at least"
                                       : "between",
      functional == Verdict::Supported ? fmt::format("{}: separate", rule.harm_max)
      : functional == Verdict::Refuted
          ? fmt::format("{}: not separate", rule.harm_refuted_min)
          : fmt::format("{} and {}", rule.harm_max, rule.harm_refuted_min),
      interval(n.shared_over_chance), softened ? ", which contradicts the functional test" : "");
  return {softened ? Verdict::Mixed : functional, because};
}

}  // namespace pelab::claims
