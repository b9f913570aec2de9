// The judgements of the claims about relative positions and cost (C6, C15, C7, C13), apart
// from their measurements: each is a pure function from a few numbers to a verdict and the
// line that says why, so that tests can feed it synthetic results. The preconditions come
// first (inconclusive when one fails), then the rule written in the claim's config.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pelab/claims/preconditions.h"
#include "pelab/claims/reproduce.h"
#include "pelab/report/compare.h"

namespace pelab::claims {

// C6: relative at several clipping distances k, accuracy beyond the training lengths.
struct C6K {
  int64_t k = 0;
  LearnedCount learned;
  Stat extrapolation;  // per seed: the mean sequence accuracy over the lengths beyond training
  std::string not_representable;  // why k cannot represent the task (Group), "" if it can
};
struct C6Numbers {
  std::vector<C6K> ks;
  double supported_min = 0.5, refuted_max = 0.1;
};
// Precondition: at least one k can represent the task at its settings and learned it in
// distribution (only those are judged; a k that cannot represent it is named, left out, and
// never counts against the scheme; when no k can, the verdict says "not representable at
// these settings"). Supported when every judged k reaches supported_min beyond the training
// lengths, refuted when every one stays at or below refuted_max, mixed otherwise.
Judgement judge_c6(const C6Numbers& n);

// C15: per scheme, in-distribution accuracy as the distance D grows (long-range dependency,
// not length extrapolation: every evaluated length was trained on).
struct C15Scheme {
  std::string name;
  LearnedCount learned;  // in distribution, at the short distance (the control)
  Stat accuracy;         // per seed: the mean in-distribution accuracy over the long distances
  Stat short_accuracy;   // the same at the short distance (shown beside it)
  std::string not_representable;  // why its settings cannot represent the task, "" if they can
};
struct C15Numbers {
  std::vector<C15Scheme> absolute, claimed;
  double margin = 0.05;
};
// Preconditions: every compared scheme can represent the task at its settings at every judged
// distance (else "not representable at these settings", no result about it); every compared
// scheme learned the task in distribution at the short distance (the control: what fails at
// the long ones fails for the distance); the long-distance values are not all at the ceiling
// or all at the floor; a claimed scheme at least `margin` above the best absolute one has an
// interval separate from it. A claimed scheme is better when its in-distribution accuracy at
// the long distances is at least `margin` above the best absolute scheme's (and separated);
// supported when every claimed scheme is better, refuted when none is, mixed otherwise.
Judgement judge_c15(const C15Numbers& n);

// C7: step times (ms) per length, one per round; relative is slower than the others (the
// absolute schemes plus rotary), rotary's overhead over none is minimal. Every case is timed
// once per round, so the rounds pair the cases: a slow spell of the machine slows both sides
// of a ratio in the same round.
struct C7Length {
  int64_t length = 0;
  std::vector<double> none, relative;  // relative: the implementation the rule judges
  std::vector<std::pair<std::string, std::vector<double>>> others;
};
struct C7Numbers {
  std::vector<C7Length> lengths;
  double slower_by = 0.1, minimal_overhead = 0.1;
};
// The ratio of two cases timed in the same rounds: the ratio in each round, their mean, and
// the 95% percentile bootstrap interval of that mean over the rounds (the paired rounds cancel
// what the machine did to both; the ends of two separate intervals would not). Needs the same
// number of rounds on both sides, at least one.
struct RatioInterval {
  double mean = 0, low = 0, high = 0;
  int64_t rounds = 0;
};
RatioInterval paired_ratio(const std::vector<double>& numerator,
                           const std::vector<double>& denominator);
// Timing needs a quiet machine: whether it was, from the CPU other processes used while the
// cases were timed (in cores; NaN when it could not be read) against quiet_below. A sentence
// for the report's details, and a clause for the verdict's line. Said, not judged: the paired
// rounds cancel a slowdown both sides of a ratio share, not one that falls on one side.
std::string quiet_text(double other_cores, double quiet_below);
std::string quiet_clause(double other_cores, double quiet_below);
// Preconditions: at least two rounds per case; every decision's ratio interval lies wholly
// on one side of its threshold (relative / slowest other against 1 + slower_by, rotary /
// none against 1 + minimal_overhead). Part A: relative is slower at every length; part B:
// rotary's overhead is minimal at every length. Supported when both hold, refuted when
// neither does, mixed otherwise. The slowest other is the one with the largest mean time.
Judgement judge_c7(const C7Numbers& n);

// C13: add vs concat; every variant must work, and concatenating costs more at equal token
// width (step time ratio, with its interval).
struct C13Variant {
  std::string name;  // "sinusoidal, add, width 64"
  LearnedCount learned;
  double in_distribution = 0;  // NaN when every run of the variant diverged
};
struct C13Cost {
  std::string scheme;
  // Step time per round (the same rounds, paired); at equal token width concat's model is
  // wider.
  std::vector<double> add_ms, concat_ms;
};
struct C13Numbers {
  std::vector<C13Variant> variants;
  std::vector<C13Cost> costs;
  // The same at equal total width (adding in a model as wide as concatenating's): shown in
  // the reason, not judged, since the note's cost is that of the wider model.
  std::vector<C13Cost> equal_total_width;
  double costlier_by = 0.05;
};
// Preconditions: the in-distribution values are not all at the floor (nothing learned: no
// variant can be said to work); at least two rounds; each cost ratio's paired interval lies wholly
// on one side of 1 + costlier_by or wholly at or below 1 (not slower at all). Supported when every
// variant learned and concatenating is costlier for every scheme; refuted when some variant did not
// learn or concatenating is not slower for some scheme; mixed otherwise.
Judgement judge_c13(const C13Numbers& n);

}  // namespace pelab::claims
