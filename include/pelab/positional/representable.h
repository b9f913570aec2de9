// Representability: can a scheme, at its settings, represent what a run's task asks, with
// every part of it that evaluation uses trained? A precondition of any result about a scheme
// (docs/model.md, "Representability"): where it fails, the run's numbers say nothing about
// the scheme, only about its settings, and tables and verdicts say "not representable at
// these settings" instead of scoring it.
//
// Two schemes have parts that settings can put out of reach:
//   relative (Shaw's, clipped at k = positional.max_distance): the row of offset k is shared
//     by every offset beyond k, so the offset k itself cannot be singled out (in one attention
//     step); and where the longest training distance L < k, the rows past L are never trained.
//   t5: bucket(d) is one per offset below num_buckets / 4, then logarithmic; the buckets of
//     distances past L are never trained unless they coincide with a trained one.
#pragma once

#include <cstdint>
#include <string>

#include "pelab/nn/model_config.h"

namespace pelab {

// The distances a run's positions reach, and the offset its task's answer needs.
struct PositionReach {
  // The offset (in positions) the answer must single out: shift's s, long_range's D,
  // local_sum's w (the farthest of its offsets); 0 when the task fixes none.
  int64_t answer_offset = 0;
  int64_t longest_training_distance = 0;    // the largest |p_j − p_i| of a training sequence
  int64_t longest_evaluation_distance = 0;  // the same over the evaluated sequences
};

// "" when `positional` can represent the answer with trained parameters only; else the reason,
// one phrase ("relative's k = 2 equals the offset the answer needs (2): ..."). The conditions:
//   relative: k > answer_offset (when the task fixes one); and no row used at evaluation is
//     untrained: k ≤ L, or the evaluation reaches no distance past L.
//   t5: no bucket used at evaluation that training never reaches. bucket(|d|) never decreases
//     with |d| (per sign, the signs mirrored), so this holds exactly when
//     bucket(E) = bucket(L), E the longest evaluation distance, L the longest training one
//     (or E ≤ L).
//   every other scheme: "" (nothing of it is clipped or bucketed by these settings).
std::string representability_problem(const PositionalConfig& positional,
                                     const PositionReach& reach);

// The phrase tables and verdicts lead with where representability_problem is not "".
inline constexpr const char* kNotRepresentable = "not representable at these settings";

}  // namespace pelab
