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

// C2's loss curves, one per group: the mean over its runs at every step any run logged, each
// run that has stopped (its criterion met) holding its last logged loss. Averaging only the
// runs still training would drop the fast learners first and make the mean climb where the
// slow ones are left (survivor bias). A run counts from its first logged step on.
using LossCurve = std::vector<std::pair<int64_t, double>>;  // (step, loss), steps increasing
LossCurve carried_forward_mean(const std::vector<LossCurve>& runs);

// ---- C3: the four properties, each judged by its own measurement ---------------------------
// Unique, independent of length, bounded: measured exactly on the sinusoidal encoding, the one
// the notes hold up as good (their rejected guesses, raw and normalised indices, are shown
// failing bounded and length independence beside it). Small: a positional.scale sweep.
struct C3Scale {
  double scale = 0, ratio = 0;  // positional.scale, and ‖position‖ ÷ ‖token‖ at it
  LearnedCount learned;
  Stat accuracy;  // in-distribution sequence accuracy
  Stat steps;     // training steps to the criterion (the budget for runs that never met it)
  Stat token;     // in-distribution token accuracy, shown beside the sequence accuracy
};
struct C3Numbers {
  bool unique = false, length_independent = false, bounded = false;  // sinusoidal's
  C3Scale at_one;                                                    // the reference: scale 1
  std::vector<C3Scale> others;                                       // every other scale, ascending
};
struct C3Rule {
  double drop_fraction = 0.5;   // harmed: keeps at most (1 − this) of scale 1's accuracy …
  double slower_factor = 2;     // … or needs at least this many times scale 1's steps …
  double dominated_ratio = 10;  // judged at every scale where position is ≥ this × the token
};
// Small: a scale harms when it keeps at most (1 − drop_fraction) of scale 1's accuracy, or
// most of its runs did not learn the task, or it needs at least slower_factor × scale 1's
// steps; harmless when none holds with every interval clear of its bound; undecided
// otherwise. Supported when every dominated scale (ratio ≥ dominated_ratio) harms, refuted
// when none does, mixed otherwise. Inconclusive when scale 1 did not learn, when scale 1 and
// the dominated scales are all at the ceiling or the floor, when no scale is dominated, or
// when a dominated scale is undecided.
Judgement judge_c3_small(const C3Numbers& n, const C3Rule& rule);
// Whether a scale harms the task against scale 1 ("harms", "harmless", "undecided").
std::string c3_harm(const C3Scale& s, const C3Scale& at_one, const C3Rule& rule);
// The claim: each exact property is supported when sinusoidal has it, refuted when not; small
// as above. Supported when all four are, refuted when all four are refuted, inconclusive when
// small is, mixed otherwise.
Judgement judge_c3(const C3Numbers& n, const C3Rule& rule);
// Small's verdict at each of several drop fractions, for the report.
std::vector<std::pair<double, Verdict>> c3_threshold_sweep(const C3Numbers& n, C3Rule rule,
                                                           const std::vector<double>& fractions);

// ---- C4: position bias from uneven training counts -----------------------------------------
struct C4Numbers {
  // Over the absolute schemes' runs: token accuracy over the first half of the positions and
  // over the last quarter, at the longest training length (one value per run), and the drop
  // early − late per run.
  Stat early, late, drop;
  // The relative controls: schemes with no absolute position, trained alike; each one's drop
  // early − late per run. Uneven counts of absolute positions cannot cause their drop, so the
  // absolute schemes' drop is the claim's only where it exceeds theirs.
  std::vector<std::pair<std::string, Stat>> controls;
  std::vector<std::pair<std::string, double>> compared;  // (scheme early/late, accuracy) means
  double trained = 0, beyond = 0;  // token accuracy at the long length: trained, untrained
};
// Supported when the absolute drop is at least gap (early and late intervals apart) and
// exceeds every relative control's drop by at least gap (the absolute drop's interval apart
// from that control's). Otherwise mixed when accuracy beyond the trained positions is at most
// half that at trained ones, refuted when neither. Inconclusive when there is no control,
// when every early and late accuracy is at the ceiling or all at the floor (no bias can
// show), or when a difference reaches gap but within the noise.
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
  // The functional test, in token accuracy lost per run when the tokens' part inside the
  // position span is removed: at most harm_max behaves like concatenating (separate), at least
  // harm_refuted_min does not (the tokens' content lives in the position span).
  double harm_max = 0.05, harm_refuted_min = 0.2;
};
// The functional test decides, either way: supported when the loss is at most harm_max,
// refuted when it is at least harm_refuted_min, mixed between. The geometry can only soften
// it: a supported test with the shared energy at or above refuted_min (no separation beyond
// chance), or a refuted test with the shared energy at most supported_max (separate
// subspaces), is mixed. Inconclusive when sinusoidal did not learn the task, or when the
// loss's 95% interval over runs (paired per run) straddles the bound that decides, or the
// shared energy's interval straddles a bound that would soften the verdict.
Judgement judge_c16(const C16Numbers& n, const C16Rule& rule);
// The functional test's loss per run (accuracy − accuracy without the shared part, paired).
Stat c16_harm(const C16Numbers& n);

}  // namespace pelab::claims
