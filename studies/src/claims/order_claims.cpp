// C1: without positions self-attention sees a set. C5: sinusoidal encodings extrapolate to
// longer sequences. Both train the encoder (an experiment config per claim) across seeds.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "claims/claim.h"
#include "pelab/autograd/autograd.h"
#include "pelab/claims/order_encoding_verdicts.h"
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
  Encoder model(m, make_scheme, seed);
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

// The positional schemes' labels: every group but none.
std::vector<std::string> positional_labels(const Comparison& c, const Group* none) {
  std::vector<std::string> labels;
  for (const Group& g : c.groups)
    if (&g != none) labels.push_back(g.label);
  return labels;
}

void c1(const ClaimContext& ctx, ClaimResult& r) {
  MapReader s = ctx.settings();
  const ExperimentSettings t = read_experiment_settings(s);
  order_encoding::C1Rule rule;
  s.read("exact_below", rule.exact_below);
  s.read("none_at_most", rule.none_at_most);
  s.read("schemes_at_least", rule.schemes_at_least);
  s.finish({"experiment", "overrides", "exact_below", "none_at_most", "schemes_at_least"});
  order_encoding::C1Numbers n;
  n.none_permutation_error = permutation_error("none", 1);
  n.sinusoidal_permutation_error = permutation_error("sinusoidal", 1);
  const ClaimSweep sweep = run_claim_sweep(ctx, t.experiment, t.overrides);
  const Group* none = sweep.group("positional.type", "none");
  PELAB_CHECK(none != nullptr, "{}: the experiment has no run with positional.type none",
              ctx.config.path);
  n.none = {none->label, none->in_distribution.mean};
  for (const Group& g : sweep.comparison.groups)
    if (&g != none) n.schemes.push_back({g.label, g.in_distribution.mean});
  n.schemes_not_learned =
      precondition_learned(sweep.comparison, positional_labels(sweep.comparison, none));
  const order_encoding::Judgement j = order_encoding::judge_c1(n, rule);
  r.verdict = j.verdict;
  r.because = j.because;
  r.numbers = {{"permutation_error_none", n.none_permutation_error},
               {"permutation_error_sinusoidal", n.sinusoidal_permutation_error},
               {"none_in_distribution", n.none.mean},
               {"groups", group_numbers(sweep.comparison)}};
  r.figures = sweep.figures;
  r.details = fmt::format(
      "**Exact check.** A bidirectional encoder (d_model 32, 4 heads, 2 layers) with random "
      "parameters, on 12 random tokens and a random permutation π: the largest "
      "|f(πx)[t] − f(x)[π(t)]|, relative to the largest logit, is {} for `none` and {} for "
      "`sinusoidal` (which must break it).\n\n**Training.** {}",
      fmt_number(n.none_permutation_error), fmt_number(n.sinusoidal_permutation_error),
      sweep_details(sweep));
}

void c5(const ClaimContext& ctx, ClaimResult& r) {
  MapReader s = ctx.settings();
  const ExperimentSettings t = read_experiment_settings(s);
  order_encoding::C5Rule rule;
  s.read("supported_min", rule.supported_min);
  s.read("refuted_max", rule.refuted_max);
  s.finish({"experiment", "overrides", "supported_min", "refuted_max"});
  const ClaimSweep sweep = run_claim_sweep(ctx, t.experiment, t.overrides);
  const Group* sin = sweep.group("positional.type", "sinusoidal");
  PELAB_CHECK(sin != nullptr, "{}: the experiment has no run with positional.type sinusoidal",
              ctx.config.path);
  order_encoding::C5Numbers n;
  n.sinusoidal_in_distribution = sin->in_distribution.mean;
  n.sinusoidal_extrapolation = sin->extrapolation.mean;
  n.seeds = sin->extrapolation.n;
  n.sinusoidal_not_learned = precondition_learned(sweep.comparison, {sin->label});
  for (const Group& g : sweep.comparison.groups)
    n.extrapolation.push_back({g.label, g.extrapolation.mean});
  const order_encoding::Judgement j = order_encoding::judge_c5(n, rule);
  r.verdict = j.verdict;
  r.because = j.because;
  r.numbers = {{"sinusoidal_in_distribution", sin->in_distribution.mean},
               {"sinusoidal_extrapolation", sin->extrapolation.mean},
               {"sinusoidal_extrapolation_std", sin->extrapolation.std},
               {"groups", group_numbers(sweep.comparison)}};
  r.figures = sweep.figures;
  r.details = "Trained on short problem sizes, tested up to 4× longer: " + sweep_details(sweep);
}

}  // namespace

namespace order_encoding {

namespace {

Judgement inconclusive(const std::string& reason) {
  ClaimResult r;
  set_inconclusive(r, reason);
  return {r.verdict, r.because};
}

std::vector<std::pair<std::string, double>> named_values(const std::vector<Score>& scores) {
  std::vector<std::pair<std::string, double>> values;
  for (const Score& s : scores) values.emplace_back(s.label, s.mean);
  return values;
}

}  // namespace

Judgement judge_c1(const C1Numbers& n, const C1Rule& rule) {
  // none failing means something only when the schemes that see positions learn the task.
  if (n.schemes.empty()) return inconclusive("no positional scheme was trained beside none");
  if (!n.schemes_not_learned.empty()) return inconclusive(n.schemes_not_learned);
  std::vector<Score> compared = n.schemes;
  compared.insert(compared.begin(), n.none);
  const std::string saturated = precondition_not_saturated(named_values(compared));
  if (!saturated.empty()) return inconclusive(saturated);
  const Score weakest =
      *std::min_element(n.schemes.begin(), n.schemes.end(),
                        [](const Score& a, const Score& b) { return a.mean < b.mean; });
  const bool exact = n.none_permutation_error < rule.exact_below &&
                     n.sinusoidal_permutation_error > 100 * rule.exact_below;
  Judgement j;
  if (exact && n.none.mean <= rule.none_at_most && weakest.mean >= rule.schemes_at_least)
    j.verdict = Verdict::Supported;
  else if (!exact || n.none.mean > 0.5)
    j.verdict = Verdict::Refuted;
  else
    j.verdict = Verdict::Mixed;
  j.because = fmt::format(
      "none is permutation-equivariant to {} (sinusoidal: {}); in-distribution sequence "
      "accuracy none {}, weakest positional scheme {} {}",
      fmt_number(n.none_permutation_error), fmt_number(n.sinusoidal_permutation_error),
      fmt_number(n.none.mean), weakest.label, fmt_number(weakest.mean));
  return j;
}

Judgement judge_c5(const C5Numbers& n, const C5Rule& rule) {
  // Extrapolation says something only about a model that learned the task where it trained.
  if (!n.sinusoidal_not_learned.empty()) return inconclusive(n.sinusoidal_not_learned);
  const std::string saturated = precondition_not_saturated(named_values(n.extrapolation));
  if (!saturated.empty()) return inconclusive("beyond the training lengths " + saturated);
  Judgement j;
  j.verdict = n.sinusoidal_extrapolation >= rule.supported_min ? Verdict::Supported
              : n.sinusoidal_extrapolation <= rule.refuted_max ? Verdict::Refuted
                                                               : Verdict::Mixed;
  j.because = fmt::format(
      "sinusoidal: in-distribution {}, beyond the training lengths {} (sequence accuracy, mean "
      "over {} seeds)",
      fmt_number(n.sinusoidal_in_distribution), fmt_number(n.sinusoidal_extrapolation), n.seeds);
  return j;
}

}  // namespace order_encoding

void add_order_claims(std::vector<ClaimDef>& defs) {
  defs.push_back({"C1", c1});
  defs.push_back({"C5", c5});
}

}  // namespace pelab::claims
