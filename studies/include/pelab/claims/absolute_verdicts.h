// The judgements of the claims about absolute encodings (C2, C3, C4, C14, C16), apart from
// their measurements: each is a pure function from the few numbers its rule compares to a
// verdict and its reason, so that tests can feed synthetic results. The measurements live in
// src/claims/absolute_claims.cpp. Every judgement checks its preconditions (written in the
// claim's config before the runs) ahead of its rule; when one fails the verdict is
// inconclusive, with the reason.
//
// Noise: a number that moves across CPU kinds or seeds is judged by its 95% bootstrap interval
// over seeds, never by its mean alone. When the interval straddles the threshold that decides
// the verdict, the experiment cannot tell which side it is on.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pelab/claims/preconditions.h"
#include "pelab/claims/reproduce.h"
#include "pelab/report/compare.h"

namespace pelab::claims {

// Where a statistic lies against a threshold: its whole 95% interval at or above it, wholly
// below it, or straddling it (the seeds cannot tell). With one seed the interval is the value.
enum class Side { Above, Below, Straddles };
Side side_of(const Stat& s, double threshold);

// ---- C2: raw and normalised indices, at several training lengths ----------------------------
struct C2Scheme {
  std::string name;  // "index", "normalized", or the reference "sinusoidal"
  LearnedCount learned;
  Stat steps;               // steps to training.stop_when's criterion, the first check of the
                            // streak (a lower bound for runs that never met it: the step cap)
  int64_t not_reached = 0;  // runs that never met it
  Stat in_distribution;     // in-distribution sequence accuracy
};
struct C2Length {
  int64_t max_length = 0;         // the longest training length of these runs
  C2Scheme reference;             // sinusoidal
  std::vector<C2Scheme> guesses;  // index, normalized
};
struct C2Rule {
  double slower_factor = 2;  // hurt: at least this many times the reference's steps …
  double gap = 0.1;          // … or in-distribution accuracy this far below it
};
// Per length, each guess is hurt (slower or worse), not hurt, or undecided (its interval
// straddles the threshold). Supported when every guess is hurt at the longest length and
// index's slowdown there is at least its slowdown at the shortest (raw values grow with
// length); refuted when no guess is hurt at any length; mixed otherwise. Inconclusive when
// the reference did not learn, or did not meet the criterion in every run, at some length (no
// yardstick), or when a guess the verdict needs is undecided.
Judgement judge_c2(const std::vector<C2Length>& lengths, const C2Rule& rule);

// ---- C3: position outweighing content -------------------------------------------------------
struct C3Numbers {
  LearnedCount at_one;       // sinusoidal at positional.scale 1
  Stat at_one_accuracy;      // its in-distribution sequence accuracy
  double largest_scale = 0;  // the largest positional.scale swept
  Stat largest_accuracy;     // in-distribution sequence accuracy there
};
// Supported when the largest scale keeps at most (1 − drop_fraction) of scale 1's accuracy
// (mean), refuted otherwise. Inconclusive when scale 1 did not learn the task, when both are
// at the ceiling or both at the floor, or when the largest scale's interval straddles that
// bound.
Judgement judge_c3(const C3Numbers& n, double drop_fraction);
// The verdict at each of several drop fractions (the rule's threshold), for the report.
std::vector<std::pair<double, Verdict>> c3_threshold_sweep(const C3Numbers& n,
                                                           const std::vector<double>& fractions);

// ---- C4: position bias from uneven training counts -----------------------------------------
struct C4Numbers {
  // Over the absolute schemes' runs: token accuracy over the first half of the positions and
  // over the last quarter, at the longest training length (one value per run).
  Stat early, late;
  std::vector<std::pair<std::string, double>> compared;  // (scheme early/late, accuracy) means
  double trained = 0, beyond = 0;  // token accuracy at the long length: trained, untrained
};
// Supported when early − late is at least gap and the early and late intervals are apart;
// otherwise mixed when accuracy beyond the trained positions is at most half that at trained
// ones, refuted when neither. Inconclusive when every early and late accuracy is at the
// ceiling or all at the floor (no bias can show), or when early − late reaches gap but within
// the noise.
Judgement judge_c4(const C4Numbers& n, double gap);

// ---- C14: learned tables know nothing beyond training --------------------------------------
struct C14Numbers {
  LearnedCount learned;
  Stat extrapolation;          // learned's sequence accuracy beyond the training lengths
  double untrained_worst = 0;  // largest ‖w − f·w₀‖/‖w₀‖ over rows past the last trained one
};
struct C14Rule {
  double supported_max = 0.1, refuted_min = 0.5, decay_tolerance = 1e-4;
};
// Supported when extrapolation ≤ supported_max and every untrained row moved by weight decay
// alone; refuted when extrapolation ≥ refuted_min or some untrained row moved otherwise;
// mixed between. Inconclusive when learned did not learn the task in distribution (then it
// knows nothing anywhere), or when the extrapolation interval straddles either bound.
Judgement judge_c14(const C14Numbers& n, const C14Rule& rule);

// ---- C16: separate subspaces ---------------------------------------------------------------
struct C16Numbers {
  LearnedCount learned;  // sinusoidal's runs
  // Per run, after training: the centred encoding's energy shared with the token span, over
  // what a random subspace would share (the mean of both directions).
  Stat shared_over_chance;
  // The functional test, per run: in-distribution token accuracy of the trained model, and
  // with the tokens' component inside the centred encoding's principal span removed.
  Stat accuracy, accuracy_without_shared;
};
struct C16Rule {
  double supported_max = 0.5, refuted_min = 1.0;  // shared energy ÷ chance
  double harm_max = 0.05;  // separate: removing the shared part costs at most this accuracy
};
// Supported when the shared energy is at most supported_max and removing the tokens'
// component in the position span costs at most harm_max; refuted when the shared energy is at
// least refuted_min; mixed otherwise. Inconclusive when sinusoidal did not learn the task,
// or when the shared energy's interval straddles either bound.
Judgement judge_c16(const C16Numbers& n, const C16Rule& rule);

}  // namespace pelab::claims
