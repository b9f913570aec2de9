// What the verdict tests share: whether a judgement gives a reason, a scheme every seed of
// which learned, and a three-seed Stat around a mean.
#pragma once

#include <string>

#include "pelab/claims/preconditions.h"
#include "pelab/report/compare.h"

namespace pelab::claims {

inline bool says(const Judgement& j, const std::string& text) {
  return j.because.find(text) != std::string::npos;
}

inline const LearnedCount kLearned{3, 3};

// Three seeds around `mean`, spread by `spread` either side.
inline Stat around(double mean, double spread = 0.01) {
  return summarize({mean - spread, mean, mean + spread}, {0, 1, 2});
}

}  // namespace pelab::claims
