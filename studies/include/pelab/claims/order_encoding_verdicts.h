// The judgements of C1, C5 (order), C8, C9, C10 (the sinusoidal table) and C11, C12 (rotary),
// split from their measurements: each is a pure function from the numbers a claim measured
// (and the thresholds its config chose before the run) to a verdict and the one line that
// says why, so it can be checked on synthetic numbers. The trained claims (C1, C5) check their
// preconditions first and are inconclusive when one fails; the analytic ones (C8–C12) are
// measured exactly, so their rules can always tell.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "pelab/claims/preconditions.h"
#include "pelab/claims/reproduce.h"

namespace pelab::claims::order_encoding {

using claims::Judgement;

// A group's in-distribution or extrapolation score: mean sequence accuracy over seeds.
struct Score {
  std::string label;
  double mean = 0;
};

// C1: none is exactly permutation-equivariant, and on an order task none stays at chance
// while every positional scheme learns it.
struct C1Numbers {
  double none_permutation_error = 0;        // relative to the largest logit
  double sinusoidal_permutation_error = 0;  // must be far from 0 (it sees positions)
  Score none;                               // in distribution
  std::vector<Score> schemes;               // every positional scheme, in distribution
  // precondition_learned over the positional schemes ("" when every run of each learned).
  std::string schemes_not_learned;
};
struct C1Rule {
  double exact_below = 1e-5;
  double none_at_most = 0.2;
  double schemes_at_least = 0.9;
};
Judgement judge_c1(const C1Numbers& n, const C1Rule& rule);

// C5: sinusoidal's sequence accuracy beyond the training lengths.
struct C5Numbers {
  double sinusoidal_in_distribution = 0;
  double sinusoidal_extrapolation = 0;
  int64_t seeds = 0;
  std::string sinusoidal_not_learned;  // precondition_learned over sinusoidal
  std::vector<Score> extrapolation;    // every compared scheme beyond the training lengths
};
struct C5Rule {
  double supported_min = 0.5;
  double refuted_max = 0.1;
};
Judgement judge_c5(const C5Numbers& n, const C5Rule& rule);

// C8: the largest |PE(x+Δ) − PE(x)·T(Δ)| over positions and shifts.
struct C8Numbers {
  double largest_error = 0;
  int64_t positions = 0;
  int64_t shifts = 0;
};
struct ErrorRule {
  double supported_below = 1e-4;
  double refuted_above = 1e-2;
};
Judgement judge_c8(const C8Numbers& n, const ErrorRule& rule);

// C9: P(reference)·P(j) is largest at the reference and falls off on both sides.
struct C9Numbers {
  int64_t reference = 0;
  int64_t argmax = 0;
  int64_t steps = 0;  // steps compared moving outwards
  int64_t rises = 0;  // of them, steps where the curve does not fall
  int64_t first_rise = -1;
  double largest_rise = 0;
  double peak = 0;  // P(reference)·P(reference)
};
Judgement judge_c9(const C9Numbers& n);

// C10: per length L, the share of dimensions whose values move by more than the threshold
// over positions 0..L−1; `most` dimensions barely moving at every length supports the claim.
struct C10Numbers {
  std::vector<std::pair<int64_t, double>> moving;  // (length, share of moving dimensions)
};
Judgement judge_c10(const C10Numbers& n, double most);

// C11, C12: a rotary construction under a common shift of both positions, and its norms.
struct RotaryNumbers {
  double max_score_change = 0;  // × ‖q‖‖k‖
  double min_norm_ratio = 1, max_norm_ratio = 1;
};
Judgement judge_c11(const RotaryNumbers& n, const ErrorRule& rule);
// `as_written`: what the note's example does when run as written ("runs" or its error).
Judgement judge_c12(const RotaryNumbers& n, const std::string& as_written, const ErrorRule& rule);

}  // namespace pelab::claims::order_encoding
