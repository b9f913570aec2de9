// The claims' side of the representability precondition (pelab/report/representable.h): a
// setting that cannot represent its task is named "not representable at these settings", is
// left out of a rule, and never counts as the scheme failing; each against the same numbers
// with the setting representable (the control).
#include <gtest/gtest.h>

#include "pelab/claims/preconditions.h"
#include "pelab/claims/relative_cost_verdicts.h"
#include "verdict_checks.h"

namespace pelab::claims {
namespace {

const std::string kBoundary = "relative's k = 2 does not exceed the offset the answer needs (2)";

TEST(RepresentableVerdicts, PreconditionLearnedSaysNotRepresentable) {
  Comparison c;
  Group g;
  g.label = "relative / 2";
  g.runs = {"a", "b"};
  g.learned_runs = 0;
  c.groups = {g};
  EXPECT_EQ(precondition_learned(c, {"relative / 2"}),
            "relative / 2 learned the task in distribution in 0 of 2 runs");
  c.groups[0].not_representable = "relative's k = 16 exceeds the longest distance training sees";
  // Untrained rows beyond training say nothing of learning in distribution (the control).
  EXPECT_EQ(precondition_learned(c, {"relative / 2"}),
            "relative / 2 learned the task in distribution in 0 of 2 runs");
  c.groups[0].not_representable_in_distribution = kBoundary;
  const std::string why = precondition_learned(c, {"relative / 2"});
  EXPECT_EQ(why.find("relative / 2 is not representable at these settings: relative's k = 2"), 0u)
      << why;
}

TEST(RepresentableVerdicts, C6LeavesAnUnrepresentableKOut) {
  // k = 2 failing beyond training would make the verdict mixed if it counted.
  C6Numbers n;
  n.ks = {{2, kLearned, around(0.05), ""}, {3, kLearned, around(0.99), ""}};
  EXPECT_EQ(judge_c6(n).verdict, Verdict::Mixed);  // the control: k = 2 representable
  n.ks[0].not_representable = kBoundary;
  const Judgement j = judge_c6(n);
  EXPECT_EQ(j.verdict, Verdict::Supported) << j.because;
  EXPECT_TRUE(says(j, "not representable at these settings, left out: k = 2: ")) << j.because;
}

TEST(RepresentableVerdicts, C6WithNoRepresentableKSaysSo) {
  C6Numbers n;
  n.ks = {{2, kLearned, around(0.05), ""}};
  n.ks[0].not_representable = kBoundary;
  const Judgement j = judge_c6(n);
  EXPECT_EQ(j.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(says(j, "not representable at these settings: k = 2: ")) << j.because;
}

TEST(RepresentableVerdicts, C15WithAnUnrepresentableSchemeSaysSo) {
  C15Numbers n;
  n.absolute = {{"sinusoidal", kLearned, around(0.3), {}, ""}};
  n.claimed = {{"relative", kLearned, around(0.1), {}, ""},
               {"rotary", kLearned, around(0.9), {}, ""}};
  EXPECT_EQ(judge_c15(n).verdict, Verdict::Mixed);  // the control
  n.claimed[0].not_representable = "at D = 24, relative's k = 24 does not exceed the offset";
  const Judgement j = judge_c15(n);
  EXPECT_EQ(j.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(says(j, "not representable at these settings: relative: at D = 24")) << j.because;
}

}  // namespace
}  // namespace pelab::claims
