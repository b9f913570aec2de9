#include "pelab/claims/preconditions.h"

#include <fmt/format.h>

#include <algorithm>

#include "pelab/report/representable.h"

namespace pelab::claims {

std::string precondition_learned(const Comparison& comparison,
                                 const std::vector<std::string>& labels) {
  std::string reasons;
  for (const std::string& label : labels) {
    const auto g = std::find_if(comparison.groups.begin(), comparison.groups.end(),
                                [&](const Group& x) { return x.label == label; });
    std::string reason;
    if (g == comparison.groups.end())
      reason = fmt::format("{} has no completed run", label);
    else if (!g->not_representable_in_distribution.empty())
      reason = fmt::format("{} is {}: {}", label, kNotRepresentable,
                           g->not_representable_in_distribution);
    else if (!g->all_learned())
      reason = fmt::format("{} learned the task in distribution in {} of {} runs", label,
                           g->learned_runs, g->trained_runs());
    if (!reason.empty()) reasons += (reasons.empty() ? "" : "; ") + reason;
  }
  return reasons;
}

std::string precondition_not_saturated(const std::vector<std::pair<std::string, double>>& values,
                                       double floor, double ceiling) {
  if (values.empty()) return "nothing to compare";
  const bool all_top =
      std::all_of(values.begin(), values.end(), [&](const auto& v) { return v.second >= ceiling; });
  const bool all_bottom =
      std::all_of(values.begin(), values.end(), [&](const auto& v) { return v.second <= floor; });
  if (!all_top && !all_bottom) return "";
  std::string listed;
  for (const auto& [name, value] : values)
    listed += fmt::format("{}{} {:.3f}", listed.empty() ? "" : ", ", name, value);
  return fmt::format(
      "every compared value is at the {} ({}), so no difference can show",
      all_top ? fmt::format("ceiling (>= {})", ceiling) : fmt::format("floor (<= {})", floor),
      listed);
}

std::string precondition_separated(const std::string& a_name, const Stat& a,
                                   const std::string& b_name, const Stat& b) {
  if (a.n < 2 || b.n < 2)
    return fmt::format("{} and {} need at least two seeds each for an interval", a_name, b_name);
  if (a.ci_high < b.ci_low || b.ci_high < a.ci_low) return "";
  return fmt::format(
      "the difference between {} ({:.3f} [{:.3f}, {:.3f}]) and {} ({:.3f} [{:.3f}, {:.3f}]) is "
      "within their 95% intervals",
      a_name, a.mean, a.ci_low, a.ci_high, b_name, b.mean, b.ci_low, b.ci_high);
}

Judgement not_representable(const std::string& why) {
  return {Verdict::Inconclusive, std::string(kNotRepresentable) + ": " + why};
}

void apply(const Judgement& j, ClaimResult& r) {
  r.verdict = j.verdict;
  r.because = j.because;
}

void set_inconclusive(ClaimResult& r, const std::string& reason) {
  r.verdict = Verdict::Inconclusive;
  r.because = "the experiment cannot tell: " + reason;
}

}  // namespace pelab::claims
