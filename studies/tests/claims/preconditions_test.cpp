// The preconditions every claim's verdict checks before its rule (inconclusive when one
// fails), on synthetic results: learned or not, at the ceiling, at the floor, within noise.
#include "pelab/claims/preconditions.h"

#include <gtest/gtest.h>

namespace pelab::claims {
namespace {

Group group(const std::string& label, int64_t runs, int64_t learned) {
  Group g;
  g.label = label;
  for (int64_t i = 0; i < runs; ++i) g.runs.push_back(label + std::to_string(i));
  g.learned_runs = learned;
  return g;
}

TEST(Preconditions, LearnedNeedsEveryRunOfEveryComparedGroup) {
  Comparison c;
  c.groups = {group("rotary", 3, 3), group("alibi", 3, 2), group("none", 3, 0)};
  EXPECT_EQ(precondition_learned(c, {"rotary"}), "");
  EXPECT_EQ(precondition_learned(c, {"rotary", "alibi"}),
            "alibi learned the task in distribution in 2 of 3 runs");
  EXPECT_EQ(precondition_learned(c, {"none", "t5"}),
            "none learned the task in distribution in 0 of 3 runs; t5 has no completed run");
}

TEST(Preconditions, SaturationAtTheCeilingOrTheFloorCannotTell) {
  EXPECT_EQ(precondition_not_saturated({{"learned", 1.0}, {"rotary", 0.4}}), "");
  EXPECT_EQ(precondition_not_saturated({{"learned", 0.01}, {"rotary", 0.5}}), "");
  EXPECT_EQ(precondition_not_saturated({{"sinusoidal", 1.0}, {"learned", 0.99}}),
            "every compared value is at the ceiling (>= 0.98) (sinusoidal 1.000, learned 0.990), "
            "so no difference can show");
  EXPECT_EQ(precondition_not_saturated({{"a", 0.0}, {"b", 0.02}}),
            "every compared value is at the floor (<= 0.02) (a 0.000, b 0.020), so no "
            "difference can show");
  EXPECT_EQ(precondition_not_saturated({{"a", 0.9}, {"b", 0.95}}, 0.1, 0.9),
            "every compared value is at the ceiling (>= 0.9) (a 0.900, b 0.950), so no "
            "difference can show");
  EXPECT_EQ(precondition_not_saturated({}), "nothing to compare");
}

TEST(Preconditions, ADifferenceMustLeaveItsNoiseInterval) {
  const Stat fast = summarize({10.0, 10.5, 11.0}), slow = summarize({14.0, 15.0, 16.0});
  const Stat near = summarize({10.8, 11.5, 12.0});
  EXPECT_EQ(precondition_separated("rotary", fast, "relative", slow), "");
  EXPECT_NE(precondition_separated("rotary", fast, "none", near).find("within their 95% intervals"),
            std::string::npos);
  EXPECT_NE(precondition_separated("a", summarize({1.0}), "b", slow).find("at least two seeds"),
            std::string::npos);
}

TEST(Preconditions, InconclusiveSaysWhy) {
  ClaimResult r;
  r.verdict = Verdict::Supported;
  set_inconclusive(r, "none learned the task");
  EXPECT_EQ(r.verdict, Verdict::Inconclusive);
  EXPECT_EQ(r.because, "the experiment cannot tell: none learned the task");
  EXPECT_STREQ(to_string(Verdict::Inconclusive), "inconclusive");
}

}  // namespace
}  // namespace pelab::claims
