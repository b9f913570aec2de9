// The claims about absolute encodings, the ones added to the input:
//   C2   raw and normalised indices (notes 000, 002)
//   C3   what makes a good encoding, and what happens when position outweighs content (000, 004)
//   C4   position bias from uneven training counts (000)
//   C14  learned tables know nothing of positions never trained on (000, 001, 003)
//   C16  added sinusoidal encodings keep their own subspace (002)
// C14 and C16 analyse the default comparison's runs (shared with C5 through the same
// experiment and overrides); C2, C3 and C4 train their own variants of it (C2 at several
// training lengths, C3 at several scales, C4 stopped early, before the ceiling).
// The judgements are pure functions of the measured numbers (absolute_verdicts.h).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "claims/claim.h"
#include "pelab/analysis/encoding.h"
#include "pelab/analysis/positions.h"
#include "pelab/autograd/autograd.h"
#include "pelab/claims/absolute_verdicts.h"
#include "pelab/core/error.h"
#include "pelab/core/rng.h"
#include "pelab/data/task.h"
#include "pelab/positional/scheme.h"
#include "pelab/report/plot.h"
#include "pelab/run/evaluate.h"
#include "pelab/run/trainer.h"
#include "pelab/train/schedule.h"

namespace pelab::claims {

namespace {

// The group of a sweep whose positional.type is `scheme`; an error naming the claim's config
// when the experiment has none.
const Group& scheme_group(const ClaimContext& ctx, const ClaimSweep& sweep,
                          const std::string& scheme) {
  const Group* g = sweep.group("positional.type", scheme);
  PELAB_CHECK(g != nullptr, "{}: the experiment has no run with positional.type {}",
              ctx.config.path, scheme);
  return *g;
}

// ---- C2 ------------------------------------------------------------------------------------

// max |logits(a) − logits(b)| / max |logits(b)| of two pre-LN encoders that differ only in
// their scheme, on one random batch: `index` and `normalized` against `none`.
double relative_logit_difference(const std::string& a, const std::string& b) {
  auto logits = [](const std::string& scheme) {
    ModelConfig m;
    m.vocab_in = 8;
    m.vocab_out = 8;
    m.d_model = 32;
    m.heads = 4;
    m.layers = 2;
    m.positional.type = scheme;
    Encoder model(m, make_scheme, 5);
    Generator rng(7);
    const int64_t T = 24;
    std::vector<int32_t> tokens(T), positions(T);
    for (int32_t& t : tokens) t = static_cast<int32_t>(rng.uniform_int(0, 7));
    std::iota(positions.begin(), positions.end(), 0);
    Batch batch;
    batch.tokens = IntTensor({1, T}, tokens);
    batch.positions = IntTensor({1, T}, positions);
    batch.key_mask = IntTensor({1, T}, 1);
    batch.targets = IntTensor({1, T}, -1);
    NoGradGuard no_grad;
    return model.forward(batch).logits.to_vector();
  };
  const std::vector<float> x = logits(a), y = logits(b);
  double worst = 0, scale = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    worst = std::max(worst, std::abs(static_cast<double>(x[i]) - y[i]));
    scale = std::max(scale, std::abs(static_cast<double>(y[i])));
  }
  return worst / scale;
}

// Mean training loss by step over a group's seeds (a stopped run holding its last value), as a
// gnuplot data block.
std::string loss_block(const Group& g, const std::string& name) {
  std::vector<LossCurve> curves;
  for (const std::string& run : g.runs) curves.push_back(loss_curve(run));
  std::string block = "$" + name + " << EOD\n";
  for (const auto& [step, loss] : carried_forward_mean(curves))
    block += fmt::format("{} {}\n", step, gnuplot_number(loss));
  return block + "EOD\n";
}

// The loss curves of every group of a sweep, mean over seeds, on a log scale.
PlotResult draw_loss_curves(const ClaimSweep& sweep, const std::string& out_dir) {
  std::string body =
      "set xlabel 'training step'\nset ylabel 'training loss (mean over seeds, last value "
      "held)'\n"
      "set logscale y\nset key outside right\nset grid\n";
  std::string plot = "plot ";
  for (size_t i = 0; i < sweep.comparison.groups.size(); ++i) {
    const Group& g = sweep.comparison.groups[i];
    const std::string name = fmt::format("loss{}", i);
    body += loss_block(g, name);
    plot += fmt::format("{}${} using 1:2 with linespoints title {}", i ? ", " : "", name,
                        gnuplot_quoted(g.label));
  }
  return draw_figure(body, plot, out_dir, "loss_curves");
}

// A run's resolved config value as an integer (its config.yaml, flattened).
int64_t config_integer(const RunRecord& run, const std::string& key) {
  const auto it = run.config.find(key);
  PELAB_CHECK(it != run.config.end(), "{}: its config.yaml has no {}", run.dir, key);
  return std::stoll(it->second);
}

// Per run of a group: the step at which its training.stop_when streak began, the first of the
// `patience` checks in a row that met the criterion (training stops at the last, summary.json's
// steps, so the others are confirmation: (patience − 1) · every steps that would pull every
// ratio towards 1). A run that never met it stopped at training.steps, a lower bound, and is
// counted in `not_reached`.
struct StepsToCriterion {
  Stat steps;
  int64_t not_reached = 0;
};
StepsToCriterion steps_to_criterion(const Group& g) {
  std::vector<double> steps;
  StepsToCriterion out;
  for (const std::string& dir : g.runs) {
    const RunRecord run = read_run(dir);
    PELAB_CHECK(run.stop_when_met.has_value() && run.steps >= 0,
                "{}: C2 measures the steps to training.stop_when's criterion, and this run "
                "trained without one (or its summary.json does not say how many steps it took)",
                dir);
    int64_t reached = run.steps;
    if (*run.stop_when_met)
      reached -= (config_integer(run, "training.stop_when.patience") - 1) *
                 config_integer(run, "training.stop_when.every");
    else
      ++out.not_reached;
    steps.push_back(static_cast<double>(reached));
  }
  out.not_reached += static_cast<int64_t>(g.diverged.size());  // diverged: never met it
  out.steps = summarize(steps);
  return out;
}

// A group's key value ("" when the group has no such key).
std::string key_of(const Group& g, const std::string& key) {
  for (const auto& [k, v] : g.keys)
    if (k == key) return v;
  return "";
}

C2Scheme c2_scheme(const Group& g, const std::string& name, const StepsToCriterion& st) {
  return {name,
          {g.learned_runs, g.trained_runs(), g.label},
          st.steps,
          st.not_reached,
          g.in_distribution};
}

// The sweep's groups by training length (task.max_length): sinusoidal as the reference, the
// two guesses beside it. `steps` holds each group's steps to the criterion, in group order.
std::vector<C2Length> c2_lengths(const ClaimContext& ctx, const ClaimSweep& sweep,
                                 const std::vector<StepsToCriterion>& steps) {
  std::map<int64_t, C2Length> by_length;
  for (size_t i = 0; i < sweep.comparison.groups.size(); ++i) {
    const Group& g = sweep.comparison.groups[i];
    const std::string length = key_of(g, "task.max_length");
    PELAB_CHECK(!length.empty(),
                "{}: the experiment must sweep task.max_length (the claim's "
                "variable is the sequence length)",
                ctx.config.path);
    C2Length& l = by_length[std::stoll(length)];
    l.max_length = std::stoll(length);
    const std::string scheme = key_of(g, "positional.type");
    if (scheme == "sinusoidal")
      l.reference = c2_scheme(g, scheme, steps[i]);
    else if (scheme == "index" || scheme == "normalized")
      l.guesses.push_back(c2_scheme(g, scheme, steps[i]));
  }
  std::vector<C2Length> out;
  for (auto& [length, l] : by_length) {
    PELAB_CHECK(!l.reference.name.empty() && l.guesses.size() == 2,
                "{}: at task.max_length {} the experiment needs sinusoidal, index and normalized",
                ctx.config.path, length);
    out.push_back(l);
  }
  return out;
}

void c2(const ClaimContext& ctx, ClaimResult& r) {
  MapReader s = ctx.settings();
  const ExperimentSettings e = read_experiment_settings(s);
  C2Rule rule;
  s.read("gap", rule.gap);
  s.read("slower_factor", rule.slower_factor);
  s.finish({"experiment", "overrides", "gap", "slower_factor"});
  // Exactly as MODEL.md says: added to a pre-LN model, both are removed by the first LayerNorm.
  const double index_vs_none = relative_logit_difference("index", "none");
  const double normalized_vs_none = relative_logit_difference("normalized", "none");
  const ClaimSweep sweep = run_claim_sweep(ctx, e.experiment, e.overrides);
  std::vector<StepsToCriterion> steps_of;  // per group, each run's summary read once
  for (const Group& g : sweep.comparison.groups) steps_of.push_back(steps_to_criterion(g));
  const std::vector<C2Length> lengths = c2_lengths(ctx, sweep, steps_of);
  const Judgement j = judge_c2(lengths, rule);
  r.verdict = j.verdict;
  std::string table =
      "| longest training length | scheme | steps to the criterion | in-distribution (sequence / "
      "token) | beyond training (sequence / token) |\n|--:|---|--:|--:|--:|\n";
  nlohmann::json steps = nlohmann::json::array();
  for (size_t i = 0; i < sweep.comparison.groups.size(); ++i) {
    const Group& g = sweep.comparison.groups[i];
    const StepsToCriterion& st = steps_of[i];
    const std::string steps_text =
        format_stat(st.steps, 0) + " steps" +
        (st.not_reached ? fmt::format(" (a lower bound: {} of {} runs never met it)",
                                      st.not_reached, g.trained_runs())
                        : "");
    steps.push_back({{"group", g.label},
                     {"mean", st.steps.mean},
                     {"ci", {st.steps.ci_low, st.steps.ci_high}},
                     {"values", st.steps.values},
                     {"runs_not_reaching", st.not_reached}});
    table += fmt::format("| {} | {} | {} | {} | {} |\n", key_of(g, "task.max_length"),
                         key_of(g, "positional.type"), steps_text,
                         with_token(format_stat(g.in_distribution), g.in_distribution_token),
                         with_token(format_stat(g.extrapolation), g.extrapolation_token));
  }
  r.numbers = {{"steps_to_criterion", steps},
               {"pre_ln_index_vs_none", index_vs_none},
               {"pre_ln_normalized_vs_none", normalized_vs_none},
               {"groups", group_numbers(sweep.comparison)}};
  r.because = j.verdict == Verdict::Inconclusive
                  ? j.because
                  : fmt::format(
                        "to meet the training criterion: {} (post-LN; in a pre-LN model both "
                        "equal `none` to {})",
                        j.because, fmt_number(std::max(index_vs_none, normalized_vs_none)));
  const bool removed = std::max(index_vs_none, normalized_vs_none) < 1e-5;
  r.details = fmt::format(
      "**As the notes write them, added to a pre-LN model:** both add the same number to every "
      "column, which the first LayerNorm subtracts. The logits of a pre-LN encoder with `index` "
      "differ from the same encoder with `none` by {} of their largest value (`normalized`: "
      "{}){}. The experiment uses a post-LN model, where attention sees the added values before "
      "any normalisation, and a bidirectional one, where (unlike under a causal mask) order "
      "comes from the encoding alone. The notes' variable is the sequence length, so the "
      "experiment trains at two longest lengths: raw indices grow with it.\n\n{}\n"
      "**Training.** {}",
      fmt_number(index_vs_none), fmt_number(normalized_vs_none),
      removed ? ": float rounding, so in pre-LN they carry no position at all"
              : ": more than float rounding",
      table, sweep_details(sweep));
  r.details +=
      "\nThe training loss curves are the mean over every run of a group at every step: a run "
      "that met its criterion and stopped holds its last logged loss from then on, so the mean "
      "does not follow only the slower runs still training (survivor bias).\n";
  add_figures(ctx, draw_loss_curves(sweep, ctx.dir), r);
}

// ---- C3 ------------------------------------------------------------------------------------

struct EncodingProperties {
  std::string scheme;
  EncodingSummary summary;  // at `positions` rows
  // Bounded: the largest ‖P(p)‖ over the last `positions` rows of a long_positions table,
  // against the largest over the first `positions` (summary.max_norm): the same number of
  // rows, so a random table (learned's initialisation) compares like with like, and a norm
  // that grows with position shows.
  double far_max_norm = 0;
  double bounded_growth = 0.1;  // the growth allowed (settings.bounded_growth)
  double length_change = 0;     // max_p<short ‖P_short(p) − P_positions(p)‖ / mean norm
  // The four properties, each a yes/no by a fixed tolerance (float32 rounding is ~1e-7).
  bool unique() const { return summary.min_distance > 1e-3 * summary.mean_norm; }
  bool bounded() const { return far_max_norm <= (1 + bounded_growth) * summary.max_norm; }
  bool length_independent() const { return length_change < 1e-5; }
  bool small() const { return summary.mean_norm < summary.token_norm; }
  bool all() const { return unique() && bounded() && length_independent() && small(); }
};

EncodingProperties encoding_properties(const std::string& scheme, int64_t d_model,
                                       int64_t positions, int64_t long_positions,
                                       int64_t short_length, double bounded_growth) {
  PositionalConfig positional;
  positional.type = scheme;
  resolve_run_facts(positional, {long_positions, long_positions});
  const Encoder model = encoding_model(positional, d_model, 11);
  EncodingProperties p;
  p.scheme = scheme;
  const Matrix P = absolute_encoding(model, positions);
  p.summary = summarize_encoding(P, model);
  p.bounded_growth = bounded_growth;
  const Matrix L = absolute_encoding(model, long_positions);
  for (int64_t i = L.rows - positions; i < L.rows; ++i) {
    double sq = 0;
    for (int64_t c = 0; c < L.cols; ++c) sq += L.at(i, c) * L.at(i, c);
    p.far_max_norm = std::max(p.far_max_norm, std::sqrt(sq));
  }
  // The same positions in a shorter sequence: an encoding independent of length is unchanged.
  const Matrix S = absolute_encoding(model, short_length);
  for (int64_t i = 0; i < S.rows; ++i) {
    double sq = 0;
    for (int64_t c = 0; c < S.cols; ++c) sq += std::pow(S.at(i, c) - P.at(i, c), 2);
    p.length_change = std::max(p.length_change, std::sqrt(sq));
  }
  if (p.summary.mean_norm > 0) p.length_change /= p.summary.mean_norm;
  return p;
}

// C3's first table: the four properties of each scheme's encoding at initialisation.
struct PropertiesTable {
  std::string table;  // Markdown
  nlohmann::json properties = nlohmann::json::array();
  double sinusoidal_norm = 0, token_norm = 0;  // sinusoidal's mean norm, the token norm
  std::vector<std::string> with_all;           // the schemes with all four properties
  bool sinusoidal_unique = false, sinusoidal_length_independent = false, sinusoidal_bounded = false;
};

PropertiesTable properties_table(const std::vector<std::string>& schemes, int64_t d_model,
                                 int64_t positions, int64_t long_positions, int64_t short_length,
                                 double bounded_growth) {
  PropertiesTable t;
  t.table =
      "| scheme | unique: min ‖P(i) − P(j)‖ | bounded: max ‖P‖ over positions 0..{} → {}..{} | "
      "same at other lengths: change of P at length {} | small: ‖P‖ ÷ ‖token‖ | all four |\n"
      "|---|--:|--:|--:|--:|---|\n";
  t.table = fmt::format(fmt::runtime(t.table), positions - 1, long_positions - positions,
                        long_positions - 1, short_length);
  auto mark = [](bool yes) { return yes ? " ✓" : " ✗"; };
  for (const std::string& scheme : schemes) {
    const EncodingProperties p = encoding_properties(scheme, d_model, positions, long_positions,
                                                     short_length, bounded_growth);
    if (scheme == "sinusoidal") {
      t.sinusoidal_norm = p.summary.mean_norm;
      t.token_norm = p.summary.token_norm;
      t.sinusoidal_unique = p.unique();
      t.sinusoidal_length_independent = p.length_independent();
      t.sinusoidal_bounded = p.bounded();
    }
    if (p.all()) t.with_all.push_back(scheme);
    t.table += fmt::format(
        "| {} | {}{} | {} → {}{} | {}{} | {}{} | {} |\n", scheme,
        fmt_number(p.summary.min_distance), mark(p.unique()), fmt_number(p.summary.max_norm),
        fmt_number(p.far_max_norm), mark(p.bounded()), fmt_number(p.length_change),
        mark(p.length_independent()), fmt_number(p.summary.mean_norm / p.summary.token_norm),
        mark(p.small()), p.all() ? "yes" : "no");
    t.properties.push_back({{"scheme", scheme},
                            {"min_distance", p.summary.min_distance},
                            {"max_norm", p.summary.max_norm},
                            {"far_max_norm", p.far_max_norm},
                            {"length_change", p.length_change},
                            {"norm_ratio", p.summary.mean_norm / p.summary.token_norm},
                            {"unique", p.unique()},
                            {"bounded", p.bounded()},
                            {"length_independent", p.length_independent()},
                            {"small", p.small()}});
  }
  return t;
}

struct C3Settings {
  ExperimentSettings experiment;
  int64_t d_model = 64, positions = 64, long_positions = 1024, short_length = 16;
  std::vector<std::string> schemes;
  double bounded_growth = 0.1;
  C3Rule rule;
};

C3Settings read_c3_settings(const ClaimContext& ctx) {
  MapReader s = ctx.settings();
  C3Settings c;
  c.experiment = read_experiment_settings(s);
  s.read("d_model", c.d_model);
  s.read("positions", c.positions);
  s.read("long_positions", c.long_positions);
  s.read("short_length", c.short_length);
  s.read("schemes", c.schemes);
  s.read("bounded_growth", c.bounded_growth);
  s.read("drop_fraction", c.rule.drop_fraction);
  s.read("slower_factor", c.rule.slower_factor);
  s.read("dominated_ratio", c.rule.dominated_ratio);
  s.finish({"experiment", "overrides", "d_model", "positions", "long_positions", "short_length",
            "schemes", "bounded_growth", "drop_fraction", "slower_factor", "dominated_ratio"});
  PELAB_CHECK(
      c.short_length >= 1 && c.short_length < c.positions && 2 * c.positions <= c.long_positions,
      "{}: settings need 1 ≤ short_length < positions ≤ long_positions / 2", ctx.config.path);
  return c;
}

// The scale sweep's groups as C3's numbers (scale 1 the reference), and its table.
C3Numbers c3_scales(const ClaimContext& ctx, const ClaimSweep& sweep, const PropertiesTable& pt,
                    const C3Rule& rule, std::string& table, nlohmann::json& scales) {
  std::vector<C3Scale> all;
  for (const Group& g : sweep.comparison.groups)
    for (const auto& [k, v] : g.keys)
      if (k == "positional.scale") {
        const double scale = std::stod(v);
        all.push_back({scale, scale * pt.sinusoidal_norm / pt.token_norm,
                       LearnedCount(g.learned_runs, g.trained_runs(),
                                    fmt::format("sinusoidal at scale {}", fmt_number(scale))),
                       g.in_distribution, g.steps, g.in_distribution_token});
      }
  std::sort(all.begin(), all.end(),
            [](const C3Scale& a, const C3Scale& b) { return a.scale < b.scale; });
  C3Numbers n;
  n.unique = pt.sinusoidal_unique;
  n.length_independent = pt.sinusoidal_length_independent;
  n.bounded = pt.sinusoidal_bounded;
  const auto one =
      std::find_if(all.begin(), all.end(), [](const C3Scale& s) { return s.scale == 1; });
  PELAB_CHECK(all.size() >= 2 && one != all.end(),
              "{}: the experiment must sweep positional.scale, 1 among the scales",
              ctx.config.path);
  n.at_one = *one;
  table =
      "| positional.scale | ‖position‖ ÷ ‖token‖ | learned | steps to the criterion | "
      "in-distribution (sequence / token) | against scale 1 |\n|--:|--:|--:|--:|--:|---|\n";
  for (const C3Scale& s : all) {
    if (s.scale != 1) n.others.push_back(s);
    const std::string harm = s.scale == 1 ? "(the reference)" : c3_harm(s, *one, rule);
    table += fmt::format("| {} | {} | {} of {} | {} | {} | {}{} |\n", fmt_number(s.scale),
                         fmt_number(s.ratio), s.learned.learned, s.learned.runs,
                         format_stat(s.steps, 0), with_token(format_stat(s.accuracy), s.token),
                         harm, s.scale != 1 && s.ratio >= rule.dominated_ratio ? " (judged)" : "");
    scales.push_back({{"scale", s.scale},
                      {"norm_ratio", s.ratio},
                      {"learned_runs", s.learned.learned},
                      {"runs", s.learned.runs},
                      {"steps", s.steps.mean},
                      {"in_distribution", s.accuracy.mean},
                      {"in_distribution_std", s.accuracy.std},
                      {"harm", harm}});
  }
  return n;
}

void c3(const ClaimContext& ctx, ClaimResult& r) {
  const C3Settings set = read_c3_settings(ctx);
  // (a) The exact properties, per scheme, at initialisation.
  const PropertiesTable pt =
      properties_table(set.schemes, set.d_model, set.positions, set.long_positions,
                       set.short_length, set.bounded_growth);
  PELAB_CHECK(pt.sinusoidal_norm > 0,
              "{}: settings.schemes must include sinusoidal (the scale sweep's norms are "
              "sinusoidal's)",
              ctx.config.path);
  // (b) Small: sinusoidal at positional.scale s, position ÷ content = s·‖P‖/‖token‖.
  const ClaimSweep sweep =
      run_claim_sweep(ctx, set.experiment.experiment, set.experiment.overrides);
  std::string scale_table;
  nlohmann::json scales = nlohmann::json::array();
  const C3Numbers numbers = c3_scales(ctx, sweep, pt, set.rule, scale_table, scales);
  apply(judge_c3(numbers, set.rule), r);
  // The drop fractions shown beside the rule's: from a slight loss to near-total.
  std::vector<double> fractions = {0.1, 0.25, 0.5, 0.75, 0.9};
  if (std::find(fractions.begin(), fractions.end(), set.rule.drop_fraction) == fractions.end())
    fractions.push_back(set.rule.drop_fraction);
  std::sort(fractions.begin(), fractions.end());
  std::string sensitivity = "| drop_fraction | small's verdict |\n|--:|---|\n";
  for (const auto& [fraction, verdict] : c3_threshold_sweep(numbers, set.rule, fractions))
    sensitivity +=
        fmt::format("| {}{} | {} |\n", fmt_number(fraction),
                    fraction == set.rule.drop_fraction ? " (the rule's)" : "", to_string(verdict));
  r.numbers = {{"properties", pt.properties},
               {"scales", scales},
               {"small", to_string(judge_c3_small(numbers, set.rule).verdict)},
               {"drop_fraction", set.rule.drop_fraction},
               {"slower_factor", set.rule.slower_factor},
               {"dominated_ratio", set.rule.dominated_ratio}};
  r.details = fmt::format(
      "**Unique, bounded, independent of length,** per scheme at d_model {} (the token norm is "
      "the mean ‖s_emb·E[v]‖ at initialisation; the change at another length is relative to "
      "the mean norm; `learned` is its random initial table). A property holds (✓) when the "
      "smallest distance exceeds 1e-3 of the mean norm; when the largest norm over the last {} "
      "rows of a {}-row table is at most {}× that over the first {} (the same number of rows, "
      "so a random table compares like with like); when the change is below 1e-5; and (small) "
      "when the mean norm is below the token's. Each is judged on sinusoidal, the encoding the "
      "notes hold up as good:\n\n{}\n"
      "**Small: position outweighing content.** Sinusoidal on the default task at several "
      "`positional.scale`s, the grid and the thresholds chosen from the notes' words before the "
      "runs (see the config). Against scale 1, a scale harms when it keeps at most {} of its "
      "accuracy, most of its runs do not learn the task, or it needs at least {}× its steps; "
      "the scales where position is at least {}× the token are judged. Each scale's accuracy "
      "is at the learning rate validation selected from the experiment's grid:\n\n{}\n"
      "**How small's verdict moves with its drop fraction** (the verdict uses the rule's):"
      "\n\n{}\n{}",
      set.d_model, set.positions, set.long_positions, fmt_number(1 + set.bounded_growth),
      set.positions, pt.table, fmt_number(1 - set.rule.drop_fraction),
      fmt_number(set.rule.slower_factor), fmt_number(set.rule.dominated_ratio), scale_table,
      sensitivity, sweep_details(sweep));
}

// ---- C4 ------------------------------------------------------------------------------------

struct PositionBias {
  double early = 0, late = 0;  // token accuracy at the longest training length
  double early_loss = 0, late_loss = 0;
  double trained = 0, beyond = 0;           // token accuracy at the long length, by position
  int64_t first_count = 0, last_count = 0;  // training counts of the first and last position
};

PositionBias position_bias(const std::string& run_dir, int64_t long_length) {
  const TrainedRun run = load_trained_run(run_dir);
  const std::unique_ptr<Task> task = make_task(run.config.task);
  const int64_t L = run.config.task.max_length;
  const PositionsAnalysis a =
      analyze_positions(*run.model, *task, run.config, {L, long_length}, run.steps);
  PositionBias b;
  int64_t last_trained = -1;
  for (const PositionCount& c : a.counts)
    if (c.scored > 0) last_trained = std::max(last_trained, c.position);
  std::vector<double> early, late, early_loss, late_loss, trained, beyond;
  int64_t last_scored_at_L = -1;
  for (const PositionRow& row : a.rows)
    if (row.length == L && row.scored > 0)
      last_scored_at_L = std::max(last_scored_at_L, row.position);
  for (const PositionRow& row : a.rows) {
    if (row.scored == 0) continue;
    if (row.length == L) {
      if (2 * row.position <= last_scored_at_L) {
        early.push_back(row.accuracy);
        early_loss.push_back(row.loss);
      } else if (4 * row.position > 3 * last_scored_at_L) {
        late.push_back(row.accuracy);
        late_loss.push_back(row.loss);
      }
    } else {
      (row.position <= last_trained ? trained : beyond).push_back(row.accuracy);
    }
  }
  b.early = mean_of(early);
  b.late = mean_of(late);
  b.early_loss = mean_of(early_loss);
  b.late_loss = mean_of(late_loss);
  b.trained = mean_of(trained);
  b.beyond = mean_of(beyond);
  for (const PositionCount& c : a.counts) {
    if (c.scored > 0 && b.first_count == 0) b.first_count = c.scored;
    if (c.position == last_trained) b.last_count = c.scored;
  }
  return b;
}

// C4's measurements per scheme: each run's position bias, and the table row.
struct C4Scheme {
  std::vector<double> early, late, drop, early_loss, late_loss, trained, beyond;
  std::vector<int64_t> first_count, last_count;  // per run: each stops at its own step
  // Another scheme's runs, added to these (the absolute schemes are judged together).
  void append(const C4Scheme& other) {
    auto add = [](auto& to, const auto& from) { to.insert(to.end(), from.begin(), from.end()); };
    add(early, other.early);
    add(late, other.late);
    add(drop, other.drop);
    add(early_loss, other.early_loss);
    add(late_loss, other.late_loss);
    add(trained, other.trained);
    add(beyond, other.beyond);
    add(first_count, other.first_count);
    add(last_count, other.last_count);
  }
};

C4Scheme c4_scheme(const Group& g, int64_t long_length) {
  C4Scheme m;
  for (const std::string& run : g.runs) {
    const PositionBias b = position_bias(run, long_length);
    m.early.push_back(b.early);
    m.late.push_back(b.late);
    m.drop.push_back(b.early - b.late);
    m.early_loss.push_back(b.early_loss);
    m.late_loss.push_back(b.late_loss);
    m.trained.push_back(b.trained);
    m.beyond.push_back(b.beyond);
    m.first_count.push_back(b.first_count);
    m.last_count.push_back(b.last_count);
  }
  return m;
}

// "6200× – 6400×" over the runs, or one value when they agree.
std::string count_range(const std::vector<int64_t>& counts) {
  if (counts.empty()) return "?";
  const auto [low, high] = std::minmax_element(counts.begin(), counts.end());
  return *low == *high ? fmt::format("{}×", *low) : fmt::format("{}× – {}×", *low, *high);
}

struct C4Settings {
  ExperimentSettings experiment;
  std::vector<std::string> absolute, controls, compared;
  int64_t long_length = 64;
  double gap = 0.05;
};

C4Settings read_c4_settings(const ClaimContext& ctx) {
  MapReader s = ctx.settings();
  C4Settings c;
  c.experiment = read_experiment_settings(s);
  s.read("absolute", c.absolute);
  s.read("controls", c.controls);
  s.read("compared", c.compared);
  s.read("long_length", c.long_length);
  s.read("gap", c.gap);
  s.finish({"experiment", "overrides", "absolute", "controls", "compared", "long_length", "gap"});
  PELAB_CHECK(!c.absolute.empty() && !c.controls.empty(),
              "{}: settings.absolute and settings.controls each need a scheme", ctx.config.path);
  return c;
}

void c4(const ClaimContext& ctx, ClaimResult& r) {
  const C4Settings set = read_c4_settings(ctx);
  const ClaimSweep sweep =
      run_claim_sweep(ctx, set.experiment.experiment, set.experiment.overrides);
  std::string table = fmt::format(
      "| scheme | role | seeds | accuracy, early positions | accuracy, last quarter | drop | "
      "loss, early | loss, last quarter | accuracy at n = {}: trained positions | beyond | "
      "in-distribution (sequence / token) |\n|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n",
      set.long_length);
  C4Scheme absolute;  // every absolute run
  C4Numbers numbers;
  nlohmann::json per_scheme = nlohmann::json::object();
  for (const auto* role : {&set.absolute, &set.controls, &set.compared})
    for (const std::string& scheme : *role) {
      const Group& g = scheme_group(ctx, sweep, scheme);
      const C4Scheme m = c4_scheme(g, set.long_length);
      const std::string role_name = role == &set.absolute   ? "absolute"
                                    : role == &set.controls ? "relative control"
                                                            : "shown";
      table += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", scheme,
                           role_name, g.runs.size(), format_stat(summarize(m.early), 3),
                           format_stat(summarize(m.late), 3), format_stat(summarize(m.drop), 3),
                           format_stat(summarize(m.early_loss), 3),
                           format_stat(summarize(m.late_loss), 3),
                           format_stat(summarize(m.trained)), format_stat(summarize(m.beyond)),
                           with_token(format_stat(g.in_distribution), g.in_distribution_token));
      per_scheme[scheme] = {{"role", role_name},
                            {"early_accuracy", m.early},
                            {"late_accuracy", m.late},
                            {"drop", m.drop},
                            {"early_loss", mean_of(m.early_loss)},
                            {"late_loss", mean_of(m.late_loss)},
                            {"accuracy_trained_positions", mean_of(m.trained)},
                            {"accuracy_beyond", mean_of(m.beyond)},
                            {"training_count_first_position", m.first_count},
                            {"training_count_last_position", m.last_count}};
      if (role == &set.controls) numbers.controls.emplace_back(scheme, summarize(m.drop));
      if (role != &set.absolute) continue;
      numbers.compared.emplace_back(scheme + " early", mean_of(m.early));
      numbers.compared.emplace_back(scheme + " late", mean_of(m.late));
      absolute.append(m);
    }
  numbers.early = summarize(absolute.early);
  numbers.late = summarize(absolute.late);
  numbers.drop = summarize(absolute.drop);
  numbers.trained = mean_of(absolute.trained);
  numbers.beyond = mean_of(absolute.beyond);
  PELAB_CHECK(
      !absolute.early.empty() && std::isfinite(numbers.trained) && std::isfinite(numbers.beyond),
      "{}: nothing to compare (settings.absolute needs a scheme, the longest training "
      "length scored positions in both windows, and long_length {} must exceed it)",
      ctx.config.path, set.long_length);
  const Judgement j = judge_c4(numbers, set.gap);
  // Each run stops at its own step, so each has its own counts: their range over the runs.
  const std::string counts = fmt::format(
      "the first scored position was scored {} in training, the last trained one {} (range over "
      "the absolute schemes' runs, which stop at different steps)",
      count_range(absolute.first_count), count_range(absolute.last_count));
  r.verdict = j.verdict;
  r.numbers = {{"bias_inside_training", numbers.drop.mean},
               {"controls_drop",
                [&] {
                  nlohmann::json c = nlohmann::json::object();
                  for (const auto& [name, stat] : numbers.controls) c[name] = stat.mean;
                  return c;
                }()},
               {"absolute_accuracy_trained_positions", numbers.trained},
               {"absolute_accuracy_beyond", numbers.beyond},
               {"training_count_first_position", absolute.first_count},
               {"training_count_last_position", absolute.last_count},
               {"schemes", per_scheme}};
  r.because =
      j.verdict == Verdict::Inconclusive ? j.because : fmt::format("{} ({})", j.because, counts);
  r.details = fmt::format(
      "Training lengths are uniform: {}. Per run, on held-out sequences (the evaluation set, "
      "fixed by seed): token accuracy and loss at the longest training length, over its first "
      "half of positions (early) and its last quarter, and the drop early − late; then at "
      "n = {}, over positions that training scored and those it never did. The relative "
      "controls have no absolute position, so uneven counts of absolute positions cannot cause "
      "their drop. The runs stop early, at the first check where validation token accuracy "
      "reaches the criterion (see the experiment's overrides): a fully trained model is at the "
      "ceiling everywhere inside training, where no bias can show; the last column is the "
      "group's in-distribution sequence accuracy with its token accuracy beside it. Mean ± std "
      "over seeds:\n\n"
      "{}\n{}",
      counts, set.long_length, table, sweep_details(sweep));
}

// ---- C14 -----------------------------------------------------------------------------------

// What weight decay alone does to a parameter that never gets a gradient under AdamW: it is
// multiplied by Π_s (1 − lr_s·λ) over the steps the run took — fewer than training.steps
// when training.stop_when ended it, while the schedule still spans training.steps.
double decay_only_factor(const ExperimentConfig& c, int64_t steps_taken) {
  LrScheduleOptions o;
  o.lr = c.training.lr;
  o.warmup_steps = c.training.warmup;
  o.total_steps = std::max<int64_t>(c.training.steps, std::max<int64_t>(c.training.warmup, 1));
  o.decay = parse_lr_decay(c.training.schedule);
  o.min_lr = c.training.min_lr;
  const LrSchedule schedule(o);
  double factor = 1;
  for (int64_t step = 0; step < steps_taken; ++step)
    // As the optimizer applies it: the factor rounded to float each step.
    factor *= static_cast<double>(static_cast<float>(
        1.0 - static_cast<double>(schedule.lr_at(step)) * c.training.weight_decay));
  return factor;
}

struct RowMovement {
  std::vector<double> distance;  // per row: ‖w_p − w0_p‖ / ‖w0_p‖
  int64_t last_trained = -1;
  int64_t width = 0;           // columns of pos.weight
  double decay_factor = 1;     // f = Π(1 − lr·λ): what decay alone leaves of a row
  int64_t untrained_rows = 0;  // rows past the last trained position
  double untrained_worst = 0;  // max over them ‖w_p − f·w0_p‖ / ‖w0_p‖ (0: decay alone)
};

RowMovement row_movement(const std::string& run_dir) {
  const TrainedRun run = load_trained_run(run_dir);
  PELAB_CHECK(run.config.training.optimizer == "adamw",
              "{}: C14 compares rows with AdamW's decay-only path; this run uses {}", run_dir,
              run.config.training.optimizer);
  const std::unique_ptr<Encoder> initial = initial_model(run.config);
  const std::unique_ptr<Task> task = make_task(run.config.task);
  const Tensor w = run.model->params().get("pos.weight");  // [max_len, d]
  const Tensor w0 = initial->params().get("pos.weight");
  const std::vector<float> a = w.to_vector(), b = w0.to_vector();
  const int64_t rows = w.shape()[0], d = w.shape()[1];
  RowMovement m;
  m.width = d;
  for (const PositionCount& c : training_position_counts(run.config, *task, run.steps))
    if (c.present > 0) m.last_trained = std::max(m.last_trained, c.position);
  m.decay_factor = decay_only_factor(run.config, run.steps);
  for (int64_t p = 0; p < rows; ++p) {
    double diff = 0, off_decay = 0, norm = 0;
    for (int64_t c = 0; c < d; ++c) {
      const double now = a[p * d + c], before = b[p * d + c];
      diff += std::pow(now - before, 2);
      off_decay += std::pow(now - m.decay_factor * before, 2);
      norm += before * before;
    }
    m.distance.push_back(std::sqrt(diff / norm));
    if (p > m.last_trained) {
      ++m.untrained_rows;
      m.untrained_worst = std::max(m.untrained_worst, std::sqrt(off_decay / norm));
    }
  }
  return m;
}

void c14(const ClaimContext& ctx, ClaimResult& r) {
  MapReader s = ctx.settings();
  const ExperimentSettings e = read_experiment_settings(s);
  double refuted_min = 0.5, supported_max = 0.1, decay_tolerance = 1e-4;
  s.read("extrapolation_supported_max", supported_max);
  s.read("extrapolation_refuted_min", refuted_min);
  s.read("decay_tolerance", decay_tolerance);
  s.finish({"experiment", "overrides", "extrapolation_supported_max", "extrapolation_refuted_min",
            "decay_tolerance"});
  const ClaimSweep sweep = run_claim_sweep(ctx, e.experiment, e.overrides);
  const Group& learned = scheme_group(ctx, sweep, "learned");
  if (learned.runs.empty()) {  // every learned run diverged: no trained table to read
    set_inconclusive(r, fmt::format("every learned run diverged ({0} of {0}), so there is no "
                                    "trained table to compare with its initialisation",
                                    learned.diverged.size()));
    r.details = fmt::format("**Sequence accuracy.** {}", sweep_details(sweep));
    return;
  }
  std::vector<RowMovement> moves;
  for (const std::string& run : learned.runs) moves.push_back(row_movement(run));
  double untrained_worst = 0;
  int64_t untrained_rows = 0;
  std::vector<double> trained_rows;
  for (const RowMovement& m : moves) {
    untrained_worst = std::max(untrained_worst, m.untrained_worst);
    untrained_rows += m.untrained_rows;
    for (int64_t p = 0; p <= m.last_trained; ++p) trained_rows.push_back(m.distance[p]);
  }
  const RowMovement& first = moves.front();
  // Each run stopped at its own step, so each has its own decay factor.
  double decay_low = first.decay_factor, decay_high = first.decay_factor;
  for (const RowMovement& m : moves) {
    decay_low = std::min(decay_low, m.decay_factor);
    decay_high = std::max(decay_high, m.decay_factor);
  }
  const std::string decay_text =
      decay_low == decay_high
          ? fmt_number(decay_low)
          : fmt::format("{} – {} by run", fmt_number(decay_low), fmt_number(decay_high));
  const int64_t rows = static_cast<int64_t>(first.distance.size());
  const int64_t d = first.width;
  PELAB_CHECK(untrained_rows > 0,
              "{}: learned's table has no row past the last trained position (evaluate longer "
              "than training, so that it does)",
              ctx.config.path);
  const bool untouched = untrained_worst <= decay_tolerance;
  const double extrapolation = learned.extrapolation.mean;
  const Judgement j = judge_c14({{learned.learned_runs, learned.trained_runs(), "learned"},
                                 learned.extrapolation,
                                 untrained_worst},
                                {supported_max, refuted_min, decay_tolerance});
  r.verdict = j.verdict;
  r.numbers = {{"extrapolation", extrapolation},
               {"extrapolation_std", learned.extrapolation.std},
               {"in_distribution", learned.in_distribution.mean},
               {"rows", rows},
               {"last_trained_position", first.last_trained},
               {"decay_only_factor", {decay_low, decay_high}},
               {"untrained_rows_worst_deviation_from_decay", untrained_worst},
               {"untrained_rows_moved_by_decay_alone", untouched},
               {"trained_rows_mean_distance", mean_of(trained_rows)},
               {"groups", group_numbers(sweep.comparison)}};
  r.because = fmt::format(
      "learned (sequence / token accuracy): in-distribution {}, beyond the training lengths {}; "
      "the {} rows past position {} "
      "{} weight decay alone (largest ‖w − f·w₀‖/‖w₀‖ {}, f = {}), trained rows moved by {} on "
      "average",
      with_token(format_stat(learned.in_distribution), learned.in_distribution_token),
      with_token(format_stat(learned.extrapolation), learned.extrapolation_token), untrained_rows,
      first.last_trained, untouched ? "moved from their initial values by" : "moved by more than",
      fmt_number(untrained_worst), decay_text, fmt_number(mean_of(trained_rows)));
  if (j.verdict == Verdict::Inconclusive) r.because = j.because;
  // The curve: each row's distance from its initial value, mean over seeds.
  std::string data = "$rows << EOD\n";
  for (int64_t p = 0; p < rows; ++p) {
    std::vector<double> v;
    for (const RowMovement& m : moves) v.push_back(m.distance[p]);
    data += fmt::format("{} {}\n", p, gnuplot_number(mean_of(v)));
  }
  data += "EOD\n";
  const std::string body =
      data + fmt::format(
                 "set xlabel 'position (row of pos.weight)'\nset ylabel '‖w − w_0‖ / ‖w_0‖ "
                 "(mean over seeds)'\nset logscale y\nset grid\nset arrow from {0},graph 0 to "
                 "{0},graph 1 nohead dashtype 2\nset label 'last trained position' at {0},graph "
                 "0.95 offset 1,0\n",
                 first.last_trained);
  r.details = fmt::format(
      "The table `pos.weight` has one row per position up to the longest length the run uses: "
      "here {} rows of {} values ({} parameters), and it grows by {} parameters per extra "
      "position. A row that never gets a gradient is, under AdamW, only multiplied by "
      "f = Π(1 − lr·λ) over the steps the run took (it stops at its criterion) = {}; the rule "
      "checks each row past the last position training showed against its run's f·w₀ (over {} "
      "runs, {} such rows).\n\n{}",
      rows, d, rows * d, d, decay_text, moves.size(), untrained_rows, sweep_details(sweep));
  add_figures(ctx,
              draw_figure(body,
                          "plot $rows using 1:2 with linespoints title 'distance from the initial "
                          "row'",
                          ctx.dir, "row_movement"),
              r);
}

// ---- C16 -----------------------------------------------------------------------------------

// The positions a run trained on: 0 .. the last one any training sequence had.
int64_t trained_positions(const TrainedRun& run, const Task& task) {
  int64_t positions = 0;
  for (const PositionCount& c : training_position_counts(run.config, task, run.steps))
    if (c.present > 0) positions = c.position + 1;
  return positions;
}

// The functional test: in-distribution accuracy (validation sets) of a trained model, then
// with each token embedding's component inside `basis` (the centred encoding's principal span)
// removed. If position and content kept separate subspaces, nothing is lost.
std::pair<Validation, Validation> accuracy_without_position_span(
    const TrainedRun& run, const Task& task, const std::vector<std::vector<double>>& basis) {
  const Validation before = validate(*run.model, task, run.config);
  Tensor embed = run.model->params().get("embed.weight");  // [V_in, d]
  const int64_t vocab = embed.shape()[0], d = embed.shape()[1];
  float* e = embed.data();
  for (int64_t v = 0; v < vocab; ++v)
    for (const std::vector<double>& b : basis) {
      double along = 0;
      for (int64_t c = 0; c < d; ++c) along += e[v * d + c] * b[c];
      for (int64_t c = 0; c < d; ++c) e[v * d + c] -= static_cast<float>(along * b[c]);
    }
  return {before, validate(*run.model, task, run.config)};
}

// Per run of a group: the centred overlap and the functional test (token accuracy, the claim's
// measure, and sequence accuracy shown beside it).
struct Overlaps {
  std::vector<double> pos_in_tok, tok_in_pos, shared, token_rank, pos_rank, accuracy, ablated;
  std::vector<double> accuracy_sequence, ablated_sequence;
};
Overlaps measure_overlaps(const ClaimContext& ctx, const Group& g, const std::string& scheme) {
  Overlaps v;
  for (const std::string& dir : g.runs) {
    const TrainedRun run = load_trained_run(dir);
    const std::unique_ptr<Task> task = make_task(run.config.task);
    const std::optional<SubspaceOverlap> o =
        subspace_overlap(*run.model, trained_positions(run, *task), 0.9, /*centred=*/true);
    PELAB_CHECK(o.has_value(), "{}: {} adds no absolute encoding to measure", ctx.config.path,
                scheme);
    v.pos_in_tok.push_back(o->position_in_tokens / o->position_in_tokens_chance);
    v.tok_in_pos.push_back(o->tokens_in_position / o->tokens_in_position_chance);
    v.shared.push_back((v.pos_in_tok.back() + v.tok_in_pos.back()) / 2);
    v.token_rank.push_back(static_cast<double>(o->token_rank));
    v.pos_rank.push_back(static_cast<double>(o->position_rank));
    const auto [before, after] = accuracy_without_position_span(run, *task, o->position_basis);
    v.accuracy.push_back(before.token_accuracy);
    v.ablated.push_back(after.token_accuracy);
    v.accuracy_sequence.push_back(before.sequence_accuracy);
    v.ablated_sequence.push_back(after.sequence_accuracy);
  }
  return v;
}

void c16(const ClaimContext& ctx, ClaimResult& r) {
  MapReader s = ctx.settings();
  const ExperimentSettings e = read_experiment_settings(s);
  std::vector<std::string> schemes;
  C16Rule rule;
  s.read("schemes", schemes);
  s.read("supported_max", rule.supported_max);
  s.read("refuted_min", rule.refuted_min);
  s.read("harm_max", rule.harm_max);
  s.read("harm_refuted_min", rule.harm_refuted_min);
  s.finish({"experiment", "overrides", "schemes", "supported_max", "refuted_min", "harm_max",
            "harm_refuted_min"});
  PELAB_CHECK(!schemes.empty() && schemes.front() == "sinusoidal",
              "{}: settings.schemes must start with sinusoidal (the claim's scheme)",
              ctx.config.path);
  const ClaimSweep sweep = run_claim_sweep(ctx, e.experiment, e.overrides);
  std::string table =
      "| scheme | token span dim | position dims (90% energy, centred) | P's energy in the token "
      "span ÷ chance | tokens' energy in P's span ÷ chance | accuracy (sequence / token) | "
      "without the tokens' part in P's span (sequence / token) |\n|---|--:|--:|--:|--:|--:|--:|\n";
  nlohmann::json per_scheme = nlohmann::json::object();
  C16Numbers numbers;
  for (const std::string& scheme : schemes) {
    const Group& g = scheme_group(ctx, sweep, scheme);
    const Overlaps v = measure_overlaps(ctx, g, scheme);
    table += fmt::format(
        "| {} | {} | {} | {} | {} | {} | {} |\n", scheme, fmt_number(mean_of(v.token_rank)),
        fmt_number(mean_of(v.pos_rank)), format_stat(summarize(v.pos_in_tok)),
        format_stat(summarize(v.tok_in_pos)),
        with_sequence(summarize(v.accuracy_sequence), format_stat(summarize(v.accuracy), 3)),
        with_sequence(summarize(v.ablated_sequence), format_stat(summarize(v.ablated), 3)));
    per_scheme[scheme] = {{"position_in_tokens_over_chance", mean_of(v.pos_in_tok)},
                          {"tokens_in_position_over_chance", mean_of(v.tok_in_pos)},
                          {"token_accuracy", mean_of(v.accuracy)},
                          {"token_accuracy_without_shared", mean_of(v.ablated)}};
    if (scheme == "sinusoidal") {
      numbers.learned = {g.learned_runs, g.trained_runs(), scheme};
      numbers.shared_over_chance = summarize(v.shared);
      numbers.accuracy = summarize(v.accuracy);
      numbers.accuracy_without_shared = summarize(v.ablated);
    }
  }
  const Judgement j = judge_c16(numbers, rule);
  r.verdict = j.verdict;
  r.because = j.because;
  r.numbers = {{"sinusoidal_overlap_over_chance", numbers.shared_over_chance.mean},
               {"sinusoidal_overlap_ci",
                {numbers.shared_over_chance.ci_low, numbers.shared_over_chance.ci_high}},
               {"sinusoidal_token_accuracy", numbers.accuracy.mean},
               {"sinusoidal_token_accuracy_without_shared", numbers.accuracy_without_shared.mean},
               {"sinusoidal_token_accuracy_lost_per_run", c16_harm(numbers).values},
               {"schemes", per_scheme}};
  r.details = fmt::format(
      "Per trained run: the span of the token embeddings s_emb·E (as many dimensions as tokens), "
      "and the principal directions holding 90% of the energy of the *centred* encoding "
      "P − mean_p P over the positions the run trained on (uncentred, the part every position "
      "shares dominates PᵀP, and it acts like content, not position). The share of P's energy "
      "inside the token span, and of the tokens' energy inside P's span, each divided by what "
      "a random subspace of that dimension would hold (dimension ÷ d_model): 1 means no "
      "separation beyond chance, 0 separate subspaces, as concatenating would give. The "
      "functional test removes from every token embedding its component inside P's span and "
      "scores the model again on its validation sets at the training lengths: with separate "
      "subspaces nothing is lost. The claim is judged on token accuracy (mean ± std over "
      "seeds); sequence accuracy's mean stands left of it.\n\n{}\n{}",
      table, sweep_details(sweep));
}

}  // namespace

void add_absolute_claims(std::vector<ClaimDef>& defs) {
  defs.push_back({"C2", c2});
  defs.push_back({"C3", c3});
  defs.push_back({"C4", c4});
  defs.push_back({"C14", c14});
  defs.push_back({"C16", c16});
}

}  // namespace pelab::claims
