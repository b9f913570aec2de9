// A claim's precondition: when can its verdict rule tell? Each check returns "" when it holds,
// else the reason the experiment cannot tell (one phrase, for the verdict's `because`). A
// claim checks its preconditions, written in its config before the run, ahead of its rule;
// when one fails the verdict is inconclusive (set_inconclusive), never a guess.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "pelab/claims/reproduce.h"
#include "pelab/report/compare.h"

namespace pelab::claims {

// A verdict and the line that says why.
struct Judgement {
  Verdict verdict = Verdict::Mixed;
  std::string because;
};

// How many runs of a group learned the task in distribution (compare's rule), with the
// group's name for messages ("" where the context names it).
struct LearnedCount {
  LearnedCount() = default;
  // Both counts always (no single number converts to a count), learned first.
  LearnedCount(int64_t learned_runs, int64_t all_runs, std::string group = "")
      : learned(learned_runs), runs(all_runs), name(std::move(group)) {}
  int64_t learned = 0, runs = 0;
  std::string name;
  bool all() const { return runs > 0 && learned == runs; }
};

// Every run of the named groups learned the task in distribution (compare's rule: the
// stop_when criterion, else the validation score against learned_at). A missing group is a
// failed precondition too, and so is a group whose settings cannot represent the task in
// distribution (Group::not_representable_in_distribution): the reason then says "not
// representable at these settings" and why, not that the scheme failed to learn.
std::string precondition_learned(const Comparison& comparison,
                                 const std::vector<std::string>& labels);
// The compared values (name, value) are neither all at or above `ceiling` nor all at or
// below `floor`: a difference between them can show.
std::string precondition_not_saturated(const std::vector<std::pair<std::string, double>>& values,
                                       double floor = 0.02, double ceiling = 0.98);
// A difference between two groups' statistics is larger than its noise: their 95% bootstrap
// intervals do not overlap (with a single seed there is no interval: it cannot tell).
std::string precondition_separated(const std::string& a_name, const Stat& a,
                                   const std::string& b_name, const Stat& b);
// The judgement when the settings a claim needs cannot represent its task (pelab/report/
// representable.h): inconclusive, "not representable at these settings: <why>". It is no result
// about the scheme, so no rule counts it as one failing.
Judgement not_representable(const std::string& why);
// The verdict of a judgement, into a claim's result.
void apply(const Judgement& j, ClaimResult& r);
// The verdict when a precondition failed.
void set_inconclusive(ClaimResult& r, const std::string& reason);

}  // namespace pelab::claims
