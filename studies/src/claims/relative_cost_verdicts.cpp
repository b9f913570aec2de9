#include "pelab/claims/relative_cost_verdicts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "pelab/claims/preconditions.h"
#include "pelab/core/error.h"
#include "pelab/core/strings.h"
#include "pelab/report/representable.h"
#include "pelab/report/statistics.h"

namespace pelab::claims {

namespace {

Judgement cannot_tell(const std::string& reason) {
  return {Verdict::Inconclusive, "the experiment cannot tell: " + reason};
}

std::string ratio_text(const RatioInterval& r) {
  return fmt::format("{:.3f}× [{:.3f}, {:.3f}]", r.mean, r.low, r.high);
}

// Where a ratio's interval lies against a threshold: wholly at or above it, wholly below it,
// or across it (the timings cannot tell).
enum class Side { Above, Below, Across };
Side side_of(const RatioInterval& r, double threshold) {
  if (r.low >= threshold) return Side::Above;
  if (r.high < threshold) return Side::Below;
  return Side::Across;
}

}  // namespace

Judgement judge_c6(const C6Numbers& n) {
  std::vector<std::string> judged, not_learned, unrepresentable;
  int64_t good = 0, bad = 0;
  for (const C6K& k : n.ks) {
    if (!k.not_representable.empty()) {
      unrepresentable.push_back(fmt::format("k = {}: {}", k.k, k.not_representable));
      continue;
    }
    if (!k.learned.all()) {
      not_learned.push_back(
          fmt::format("k = {} ({} of {} runs)", k.k, k.learned.learned, k.learned.runs));
      continue;
    }
    if (k.extrapolation.mean >= n.supported_min) ++good;
    if (k.extrapolation.mean <= n.refuted_max) ++bad;
    judged.push_back(fmt::format("k = {}: {}", k.k, format_interval(k.extrapolation)));
  }
  const std::string unlearned =
      (not_learned.empty() ? ""
                           : " (not learned in distribution: " + join(not_learned, ", ") + ")") +
      (unrepresentable.empty()
           ? ""
           : fmt::format(" ({}, left out: {})", kNotRepresentable, join(unrepresentable, "; ")));
  if (judged.empty() && not_learned.empty() && !unrepresentable.empty())
    return not_representable(join(unrepresentable, "; "));
  if (judged.empty()) return cannot_tell("no k learned the task in distribution" + unlearned);
  const int64_t m = static_cast<int64_t>(judged.size());
  const Verdict v = good == m ? Verdict::Supported : bad == m ? Verdict::Refuted : Verdict::Mixed;
  return {v, "sequence accuracy beyond the training lengths, at each k that learned the task: " +
                 join(judged, "; ") + unlearned};
}

Judgement judge_c15(const C15Numbers& n) {
  if (n.absolute.empty() || n.claimed.empty()) return cannot_tell("a compared side is empty");
  std::vector<std::string> unrepresentable, not_learned;
  std::vector<std::pair<std::string, double>> values;
  for (const auto* side : {&n.absolute, &n.claimed})
    for (const C15Scheme& s : *side) {
      if (!s.not_representable.empty())
        unrepresentable.push_back(s.name + ": " + s.not_representable);
      if (!s.learned.all())
        not_learned.push_back(fmt::format(
            "{} learned the task in distribution at the short distance in {} of {} runs", s.name,
            s.learned.learned, s.learned.runs));
      values.emplace_back(s.name, s.accuracy.mean);
    }
  if (!unrepresentable.empty()) return not_representable(join(unrepresentable, "; "));
  if (!not_learned.empty()) return cannot_tell(join(not_learned, "; "));
  if (const std::string saturated = precondition_not_saturated(values); !saturated.empty())
    return cannot_tell(saturated);

  const C15Scheme& best = *std::max_element(
      n.absolute.begin(), n.absolute.end(),
      [](const C15Scheme& a, const C15Scheme& b) { return a.accuracy.mean < b.accuracy.mean; });
  int64_t better = 0;
  std::vector<std::string> listed;
  for (const C15Scheme& s : n.claimed) {
    listed.push_back(fmt::format("{} {}", s.name, format_interval(s.accuracy)));
    if (s.accuracy.mean < best.accuracy.mean + n.margin) continue;
    const std::string noise = precondition_separated(s.name, s.accuracy, best.name, best.accuracy);
    if (!noise.empty()) return cannot_tell(noise);
    ++better;
  }
  const int64_t m = static_cast<int64_t>(n.claimed.size());
  const Verdict v = better == m   ? Verdict::Supported
                    : better == 0 ? Verdict::Refuted
                                  : Verdict::Mixed;
  return {v, fmt::format("in-distribution sequence accuracy at the long distances: {}; best "
                         "absolute scheme {} {} ({} of {} claimed schemes at least {} above it)",
                         join(listed, ", "), best.name, format_interval(best.accuracy), better, m,
                         n.margin)};
}

RatioInterval paired_ratio(const std::vector<double>& numerator,
                           const std::vector<double>& denominator) {
  PELAB_CHECK(!numerator.empty() && numerator.size() == denominator.size(),
              "paired_ratio: both sides need the same rounds, got {} and {}", numerator.size(),
              denominator.size());
  std::vector<double> ratios;
  for (size_t i = 0; i < numerator.size(); ++i) ratios.push_back(numerator[i] / denominator[i]);
  const Interval ci = bootstrap_mean_interval(ratios);
  return {mean_of(ratios), ci.low, ci.high, static_cast<int64_t>(ratios.size())};
}

std::string quiet_text(double other_cores, double quiet_below) {
  if (std::isnan(other_cores))
    return "Timing needs a quiet machine; whether this one was could not be read (no "
           "/proc/stat).";
  return fmt::format(
      "Timing needs a quiet machine (nothing else running: other processes using less than "
      "{} of a core while the cases were timed). This one {}: other processes used {:.2f} "
      "cores on average{}.",
      quiet_below, other_cores < quiet_below ? "was quiet" : "was not quiet", other_cores,
      other_cores < quiet_below ? ""
                                : ", so the times are less trustworthy than their intervals say "
                                  "(the paired rounds cancel only a slowdown both sides share)");
}

std::string quiet_clause(double other_cores, double quiet_below) {
  if (std::isnan(other_cores)) return " (whether the machine was quiet could not be read)";
  return other_cores < quiet_below
             ? fmt::format(" (timed on a quiet machine: others used {:.2f} cores)", other_cores)
             : fmt::format(" (the machine was NOT quiet while timing: others used {:.2f} cores)",
                           other_cores);
}

Judgement judge_c7(const C7Numbers& n) {
  if (n.lengths.empty()) return cannot_tell("no length was timed");
  int64_t slower = 0, minimal = 0;
  std::vector<std::string> across, relative_text, rotary_text;
  for (const C7Length& l : n.lengths) {
    if (l.others.empty()) return cannot_tell("no other scheme was timed");
    const auto slowest = std::max_element(
        l.others.begin(), l.others.end(),
        [](const auto& a, const auto& b) { return mean_of(a.second) < mean_of(b.second); });
    const auto rotary = std::find_if(l.others.begin(), l.others.end(),
                                     [](const auto& o) { return o.first == "rotary"; });
    if (rotary == l.others.end()) return cannot_tell("rotary was not timed");
    for (const std::vector<double>* s : {&l.none, &l.relative, &slowest->second, &rotary->second})
      if (s->size() < 2)
        return cannot_tell(
            fmt::format("T = {} has fewer than two rounds to give an interval", l.length));
    const RatioInterval rel = paired_ratio(l.relative, slowest->second);
    const RatioInterval rot = paired_ratio(rotary->second, l.none);
    const Side a = side_of(rel, 1 + n.slower_by), b = side_of(rot, 1 + n.minimal_overhead);
    if (a == Side::Across)
      across.push_back(fmt::format("at T = {} relative / {} is {}, across {:.2f}", l.length,
                                   slowest->first, ratio_text(rel), 1 + n.slower_by));
    if (b == Side::Across)
      across.push_back(fmt::format("at T = {} rotary / none is {}, across {:.2f}", l.length,
                                   ratio_text(rot), 1 + n.minimal_overhead));
    slower += a == Side::Above;
    minimal += b == Side::Below;
    relative_text.push_back(
        fmt::format("{} over {} at T = {}", ratio_text(rel), slowest->first, l.length));
    rotary_text.push_back(fmt::format("{} at T = {}", ratio_text(rot), l.length));
  }
  if (!across.empty())
    return cannot_tell("a timing ratio's interval straddles its threshold (" + join(across, "; ") +
                       ")");
  const int64_t m = static_cast<int64_t>(n.lengths.size());
  const bool part_a = slower == m, part_b = minimal == m;
  const Verdict v = part_a && part_b     ? Verdict::Supported
                    : !part_a && !part_b ? Verdict::Refuted
                                         : Verdict::Mixed;
  return {v, fmt::format("relative's step time over the slowest other scheme: {} (slower by ≥ "
                         "{:.0f}% at {} of {} lengths); rotary over none: {} (minimal, ≤ +{:.0f}%, "
                         "at {} of {})",
                         join(relative_text, ", "), 100 * n.slower_by, slower, m,
                         join(rotary_text, ", "), 100 * n.minimal_overhead, minimal, m)};
}

Judgement judge_c13(const C13Numbers& n) {
  if (n.variants.empty() || n.costs.empty()) return cannot_tell("nothing was compared");
  std::vector<std::pair<std::string, double>> values;
  std::vector<std::string> failing;
  for (const C13Variant& v : n.variants) {
    // A variant whose every run diverged has no value; it counts below as one not learned.
    if (!std::isnan(v.in_distribution)) values.emplace_back(v.name, v.in_distribution);
    if (!v.learned.all())
      failing.push_back(
          fmt::format("{} ({} of {} runs)", v.name, v.learned.learned, v.learned.runs));
  }
  if (values.empty()) return cannot_tell("every run of every variant diverged");
  // All at the ceiling is what "both work" means; all at the floor says the task or budget
  // failed every variant, which says nothing about adding against concatenating.
  if (const std::string floor = precondition_not_saturated(values, 0.02, 2.0); !floor.empty())
    return cannot_tell(floor);
  int64_t costlier = 0, not_slower = 0;
  std::vector<std::string> across, listed;
  for (const C13Cost& c : n.costs) {
    if (c.add_ms.size() < 2 || c.concat_ms.size() < 2)
      return cannot_tell(c.scheme + " has fewer than two timing rounds to give an interval");
    const RatioInterval r = paired_ratio(c.concat_ms, c.add_ms);
    const Side s = side_of(r, 1 + n.costlier_by);
    costlier += s == Side::Above;
    not_slower += r.high <= 1;
    if (s == Side::Across)
      across.push_back(
          fmt::format("{}: {}, across {:.2f}", c.scheme, ratio_text(r), 1 + n.costlier_by));
    listed.push_back(fmt::format("{} {}", c.scheme, ratio_text(r)));
  }
  if (!across.empty())
    return cannot_tell("a step-time ratio's interval straddles its threshold (" +
                       join(across, "; ") + ")");
  const int64_t m = static_cast<int64_t>(n.costs.size());
  const Verdict v = failing.empty() && costlier == m     ? Verdict::Supported
                    : !failing.empty() || not_slower > 0 ? Verdict::Refuted
                                                         : Verdict::Mixed;
  std::vector<std::string> total;
  for (const C13Cost& c : n.equal_total_width)
    if (c.add_ms.size() >= 2 && c.concat_ms.size() >= 2)
      total.push_back(
          fmt::format("{} {}", c.scheme, ratio_text(paired_ratio(c.concat_ms, c.add_ms))));
  return {v, fmt::format(
                 "{}; concatenating's step time over adding's at equal token width: {} "
                 "(costlier by ≥ {:.0f}% for {} of {} schemes){}",
                 failing.empty() ? "every variant learned the task in distribution"
                                 : "not learned in distribution: " + join(failing, ", "),
                 join(listed, ", "), 100 * n.costlier_by, costlier, m,
                 total.empty() ? "" : "; at equal total width (not judged): " + join(total, ", "))};
}

}  // namespace pelab::claims
