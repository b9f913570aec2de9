// C1: without positions self-attention sees a set. C5: sinusoidal encodings extrapolate to
// longer sequences. Both train the encoder (an experiment config per claim) across seeds.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "claims/claim.h"
#include "pelab/autograd/autograd.h"
#include "pelab/core/error.h"
#include "pelab/core/rng.h"
#include "pelab/nn/encoder.h"
#include "pelab/positional/scheme.h"

namespace pelab::claims {

namespace {

// max_t |f(πx)[t] − f(x)[π(t)]| / max |f(x)| for a bidirectional encoder with random
// parameters: 0 (up to rounding) exactly when the model is permutation-equivariant.
double permutation_error(const std::string& scheme, uint64_t seed) {
  ModelConfig m;
  m.vocab_in = 8;
  m.vocab_out = 8;
  m.d_model = 32;
  m.heads = 4;
  m.layers = 2;
  m.positional.type = scheme;
  resolve_run_facts(m.positional, {64, 64});  // learned: a table of 64 rows
  Encoder model(m, seed);
  Generator rng(seed);
  // Random parameters of unit-ish scale, so that every term of the model matters.
  for (const Tensor& p : model.params().all()) {
    Tensor t = p;
    for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = rng.normal(0.0f, 0.5f);
  }
  const int64_t T = 12;
  std::vector<int32_t> tokens(T), perm(T);
  for (int32_t& t : tokens) t = static_cast<int32_t>(rng.uniform_int(0, 7));
  std::iota(perm.begin(), perm.end(), 0);
  for (int64_t i = T - 1; i > 0; --i) std::swap(perm[i], perm[rng.uniform_int(0, i)]);
  auto logits = [&](const std::vector<int32_t>& toks) {
    Batch b;
    b.tokens = IntTensor({1, T}, toks);
    std::vector<int32_t> pos(T);
    std::iota(pos.begin(), pos.end(), 0);
    b.positions = IntTensor({1, T}, pos);
    b.key_mask = IntTensor({1, T}, 1);
    b.targets = IntTensor({1, T}, -1);
    NoGradGuard no_grad;
    return model.forward(b).logits.to_vector();  // [T·8]
  };
  std::vector<int32_t> permuted(T);
  for (int64_t t = 0; t < T; ++t) permuted[t] = tokens[perm[t]];
  const std::vector<float> a = logits(tokens), b = logits(permuted);
  double worst = 0, scale = 0;
  for (int64_t t = 0; t < T; ++t)
    for (int64_t c = 0; c < 8; ++c) {
      worst = std::max(worst, std::abs(static_cast<double>(b[t * 8 + c]) - a[perm[t] * 8 + c]));
      scale = std::max(scale, std::abs(static_cast<double>(a[perm[t] * 8 + c])));
    }
  return worst / scale;
}

std::string stat_text(const Stat& s) {
  return format_stat(s, 2);
}

void c1(const ClaimContext& ctx, ClaimResult& r) {
  MapReader s = ctx.settings();
  const ExperimentSettings t = read_experiment_settings(s);
  double exact_below = 1e-5, chance_max = 0.2, learned_min = 0.9;
  s.read("exact_below", exact_below);
  s.read("none_at_most", chance_max);
  s.read("schemes_at_least", learned_min);
  s.finish({"experiment", "overrides", "exact_below", "none_at_most", "schemes_at_least"});
  const double none_error = permutation_error("none", 1);
  const double sinusoidal_error = permutation_error("sinusoidal", 1);
  const ClaimSweep sweep = run_claim_sweep(ctx, t.experiment, t.overrides);
  const Group* none = sweep.group("positional.type", "none");
  PELAB_CHECK(none != nullptr, "{}: the experiment has no run with positional.type none",
              ctx.config.path);
  double weakest = 2;  // above any accuracy, so the first scheme sets it
  std::string weakest_name;
  for (const Group& g : sweep.comparison.groups) {
    if (&g == none) continue;
    if (g.in_distribution.mean < weakest) {
      weakest = g.in_distribution.mean;
      weakest_name = g.label;
    }
  }
  r.numbers = {{"permutation_error_none", none_error},
               {"permutation_error_sinusoidal", sinusoidal_error},
               {"none_in_distribution", none->in_distribution.mean},
               {"weakest_scheme", weakest_name},
               {"weakest_scheme_in_distribution", weakest},
               {"groups", group_numbers(sweep.comparison)}};
  const bool exact = none_error < exact_below && sinusoidal_error > 100 * exact_below;
  if (exact && none->in_distribution.mean <= chance_max && weakest >= learned_min)
    r.verdict = Verdict::Supported;
  else if (!exact || none->in_distribution.mean > 0.5)
    r.verdict = Verdict::Refuted;
  else
    r.verdict = Verdict::Mixed;
  r.because = fmt::format(
      "none is permutation-equivariant to {} (sinusoidal: {}); in-distribution sequence "
      "accuracy none {}, weakest positional scheme {} {}",
      fmt_number(none_error), fmt_number(sinusoidal_error), stat_text(none->in_distribution),
      weakest_name, fmt_number(weakest));
  r.figures = sweep.figures;
  r.details = fmt::format(
      "**Exact check.** A bidirectional encoder (d_model 32, 4 heads, 2 layers) with random "
      "parameters, on 12 random tokens and a random permutation π: the largest "
      "|f(πx)[t] − f(x)[π(t)]|, relative to the largest logit, is {} for `none` and {} for "
      "`sinusoidal` (which must break it).\n\n**Training.** {}",
      fmt_number(none_error), fmt_number(sinusoidal_error), sweep_details(sweep));
}

void c5(const ClaimContext& ctx, ClaimResult& r) {
  MapReader s = ctx.settings();
  const ExperimentSettings t = read_experiment_settings(s);
  double in_distribution_min = 0.95, supported_min = 0.5, refuted_max = 0.1;
  s.read("in_distribution_min", in_distribution_min);
  s.read("supported_min", supported_min);
  s.read("refuted_max", refuted_max);
  s.finish({"experiment", "overrides", "in_distribution_min", "supported_min", "refuted_max"});
  const ClaimSweep sweep = run_claim_sweep(ctx, t.experiment, t.overrides);
  const Group* sin = sweep.group("positional.type", "sinusoidal");
  PELAB_CHECK(sin != nullptr, "{}: the experiment has no run with positional.type sinusoidal",
              ctx.config.path);
  r.numbers = {{"sinusoidal_in_distribution", sin->in_distribution.mean},
               {"sinusoidal_extrapolation", sin->extrapolation.mean},
               {"sinusoidal_extrapolation_std", sin->extrapolation.std},
               {"groups", group_numbers(sweep.comparison)}};
  // Not learned in distribution: extrapolation says nothing, and the verdict stays mixed.
  const bool learned = sin->in_distribution.mean >= in_distribution_min;
  if (learned && sin->extrapolation.mean >= supported_min)
    r.verdict = Verdict::Supported;
  else if (learned && sin->extrapolation.mean <= refuted_max)
    r.verdict = Verdict::Refuted;
  else
    r.verdict = Verdict::Mixed;
  r.because = fmt::format(
      "sinusoidal: in-distribution {}, beyond the training lengths {} (sequence accuracy, mean "
      "± std over {} seeds)",
      stat_text(sin->in_distribution), stat_text(sin->extrapolation), sin->extrapolation.n);
  r.figures = sweep.figures;
  r.details = "Trained on short problem sizes, tested up to 4× longer: " + sweep_details(sweep);
}

}  // namespace

void add_order_claims(std::vector<ClaimDef>& defs) {
  defs.push_back({"C1", c1});
  defs.push_back({"C5", c5});
}

}  // namespace pelab::claims
