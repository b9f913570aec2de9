#include "pelab/claims/absolute_verdicts.h"

#include <fmt/format.h>

#include <algorithm>

#include "pelab/claims/preconditions.h"

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

Verdict c3_rule(const C3Numbers& n, double fraction) {
  const double bound = (1 - fraction) * n.at_one_accuracy.mean;
  return n.largest_accuracy.mean <= bound ? Verdict::Supported : Verdict::Refuted;
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

Judgement judge_c3(const C3Numbers& n, double drop_fraction) {
  const std::string unlearned = learned_reason({n.at_one});
  if (!unlearned.empty()) return inconclusive(unlearned);
  const std::string saturated = precondition_not_saturated(
      {{"scale 1", n.at_one_accuracy.mean},
       {fmt::format("scale {}", n.largest_scale), n.largest_accuracy.mean}});
  if (!saturated.empty()) return inconclusive(saturated);
  const double bound = (1 - drop_fraction) * n.at_one_accuracy.mean;
  if (side_of(n.largest_accuracy, bound) == Side::Straddles)
    return inconclusive(
        straddles(fmt::format("accuracy at scale {}", n.largest_scale), n.largest_accuracy, bound));
  return {c3_rule(n, drop_fraction),
          fmt::format("in-distribution sequence accuracy {} at scale 1, {} at scale {} (the "
                      "rule's bound: {:.3f})",
                      interval(n.at_one_accuracy), interval(n.largest_accuracy), n.largest_scale,
                      bound)};
}

std::vector<std::pair<double, Verdict>> c3_threshold_sweep(const C3Numbers& n,
                                                           const std::vector<double>& fractions) {
  std::vector<std::pair<double, Verdict>> out;
  for (double f : fractions) out.emplace_back(f, judge_c3(n, f).verdict);
  return out;
}

Judgement judge_c4(const C4Numbers& n, double gap) {
  std::vector<std::pair<std::string, double>> values = n.compared;
  values.emplace_back("early", n.early.mean);
  values.emplace_back("late", n.late.mean);
  const std::string saturated = precondition_not_saturated(values);
  if (!saturated.empty()) return inconclusive(saturated);
  const double bias = n.early.mean - n.late.mean;
  const std::string because = fmt::format(
      "absolute schemes' token accuracy {} over the early positions, {} over the last quarter "
      "(bias {:.3f}); at the long length {:.3f} at trained positions, {:.3f} beyond",
      interval(n.early), interval(n.late), bias, n.trained, n.beyond);
  if (bias >= gap) {
    const std::string noise = precondition_separated("early", n.early, "late", n.late);
    if (!noise.empty()) return inconclusive(noise);
    return {Verdict::Supported, because};
  }
  return {n.beyond <= 0.5 * n.trained ? Verdict::Mixed : Verdict::Refuted, because};
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

Judgement judge_c16(const C16Numbers& n, const C16Rule& rule) {
  const std::string unlearned = learned_reason({n.learned});
  if (!unlearned.empty()) return inconclusive(unlearned);
  const double shared = n.shared_over_chance.mean;
  for (const double bound : {rule.supported_max, rule.refuted_min})
    if (side_of(n.shared_over_chance, bound) == Side::Straddles)
      return inconclusive(straddles("the shared energy ÷ chance", n.shared_over_chance, bound));
  const double harm = n.accuracy.mean - n.accuracy_without_shared.mean;
  const std::string because = fmt::format(
      "after training, the centred sinusoidal encoding and the tokens share {} of a random "
      "subspace's energy; removing the tokens' part in the position span moves token accuracy "
      "from {:.3f} to {:.3f}",
      interval(n.shared_over_chance), n.accuracy.mean, n.accuracy_without_shared.mean);
  if (shared <= rule.supported_max && harm <= rule.harm_max) return {Verdict::Supported, because};
  if (shared >= rule.refuted_min) return {Verdict::Refuted, because};
  return {Verdict::Mixed, because};
}

}  // namespace pelab::claims
