// The claims about relative positions:
//   C6   Shaw's relative encodings handle varying lengths, and clipping at k keeps the
//        parameter count independent of length (notes 000, 001)
//   C15  relative and rotary encodings suit long-range dependencies better (001)
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "claims/claim.h"
#include "pelab/core/error.h"
#include "pelab/nn/checkpoint.h"

namespace pelab::claims {

namespace {

double mean_of(const std::vector<double>& v) {
  return v.empty() ? std::nan("") : std::accumulate(v.begin(), v.end(), 0.0) / v.size();
}

// The parameters `model`'s scheme adds to it: its count minus that of the same model with
// `none`. `learned_rows` sets learned's table length (the longest length a run uses).
int64_t positional_parameters(ModelConfig model, int64_t learned_rows = 0) {
  if (model.positional.type == "learned") model.positional.max_len = learned_rows;
  ModelConfig bare = model;
  bare.positional = PositionalConfig{};
  return Encoder(model, 0).params().count() - Encoder(bare, 0).params().count();
}

// Sequence accuracy of a group at the evaluated lengths in [lo, hi]: per seed the mean over
// those lengths, then summarised over seeds. Empty (n = 0) when no length falls in the window.
Stat accuracy_between(const Group& g, int64_t lo, int64_t hi) {
  std::map<uint64_t, std::vector<double>> by_seed;
  for (const GroupLength& gl : g.lengths)
    if (gl.length >= lo && gl.length <= hi)
      for (size_t i = 0; i < gl.stat.values.size() && i < gl.stat.seeds.size(); ++i)
        by_seed[gl.stat.seeds[i]].push_back(gl.stat.values[i]);
  std::vector<double> means;
  std::vector<uint64_t> seeds;
  for (const auto& [seed, values] : by_seed) {
    seeds.push_back(seed);
    means.push_back(mean_of(values));
  }
  return summarize(means, seeds);
}

void c6(const ClaimContext& ctx, ClaimResult& r) {
  MapReader s = ctx.settings();
  const ExperimentSettings e = read_experiment_settings(s);
  std::vector<int64_t> lengths;
  double in_distribution_min = 0.95, supported_min = 0.5, refuted_max = 0.1;
  s.read("parameter_lengths", lengths);
  s.read("in_distribution_min", in_distribution_min);
  s.read("supported_min", supported_min);
  s.read("refuted_max", refuted_max);
  s.finish({"experiment", "overrides", "parameter_lengths", "in_distribution_min", "supported_min",
            "refuted_max"});
  const ClaimSweep sweep = run_claim_sweep(ctx, e.experiment, e.overrides);

  // (a) Parameters: the relative tables against k, and learned's table against length, for the
  // sweep's own model (read from a run's config).
  std::vector<std::pair<int64_t, const Group*>> by_k;
  for (const Group& g : sweep.comparison.groups)
    for (const auto& [key, value] : g.keys)
      if (key == "positional.max_distance") by_k.emplace_back(std::stoll(value), &g);
  PELAB_CHECK(!by_k.empty(), "{}: the experiment must sweep positional.max_distance",
              ctx.config.path);
  std::sort(by_k.begin(), by_k.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  const ModelConfig model = load_trained_run(by_k.front().second->runs.front()).config.model;
  std::string params =
      "| k | parameters of the relative tables (rel_k, rel_v: 2 × [2k+1, d_h] "
      "per layer) |\n|--:|--:|\n";
  nlohmann::json counts = nlohmann::json::array();
  for (const auto& [k, g] : by_k) {
    ModelConfig m = model;
    m.positional = PositionalConfig{};
    m.positional.type = "relative";
    m.positional.max_distance = k;
    const int64_t n = positional_parameters(m);
    params += fmt::format("| {} | {} |\n", k, n);
    counts.push_back({{"scheme", "relative"}, {"k", k}, {"parameters", n}});
  }
  std::string learned_params = "| longest length | parameters of learned's table |\n|--:|--:|\n";
  for (const int64_t length : lengths) {
    ModelConfig m = model;
    m.positional = PositionalConfig{};
    m.positional.type = "learned";
    const int64_t n = positional_parameters(m, length);
    learned_params += fmt::format("| {} | {} |\n", length, n);
    counts.push_back({{"scheme", "learned"}, {"length", length}, {"parameters", n}});
  }

  // (b) Extrapolation at each k that learned the task.
  std::string judged, not_judged;
  int64_t learned_ks = 0, good = 0, bad = 0;
  nlohmann::json per_k = nlohmann::json::array();
  for (const auto& [k, g] : by_k) {
    per_k.push_back({{"k", k},
                     {"in_distribution", g->in_distribution.mean},
                     {"extrapolation", g->extrapolation.mean},
                     {"extrapolation_std", g->extrapolation.std}});
    if (g->in_distribution.mean < in_distribution_min) {
      not_judged += fmt::format("{}k = {}", not_judged.empty() ? "" : ", ", k);
      continue;
    }
    ++learned_ks;
    if (g->extrapolation.mean >= supported_min) ++good;
    if (g->extrapolation.mean <= refuted_max) ++bad;
    judged +=
        fmt::format("{}k = {}: {}", judged.empty() ? "" : "; ", k, format_stat(g->extrapolation));
  }
  if (learned_ks > 0 && good == learned_ks)
    r.verdict = Verdict::Supported;
  else if (learned_ks > 0 && bad == learned_ks)
    r.verdict = Verdict::Refuted;
  else
    r.verdict = Verdict::Mixed;
  r.numbers = {{"parameter_counts", counts},
               {"per_k", per_k},
               {"ks_learned", learned_ks},
               {"ks_extrapolating", good},
               {"ks_failing", bad}};
  r.because = fmt::format(
      "beyond the training lengths, at each k that learned the task: {}{}",
      judged.empty() ? "none did" : judged,
      not_judged.empty() ? "" : fmt::format(" (not learned in distribution: {})", not_judged));
  r.details = fmt::format(
      "**Parameters** the scheme adds to the sweep's model (d_model {}, {} layers, {} heads). "
      "The relative tables have 2k+1 rows whatever the length, by construction: no length "
      "enters them, so this part is shown, not judged. Learned's table, for contrast, grows "
      "with the longest length a model uses:\n\n{}\n{}\n"
      "**Extrapolation by k** (`positional.max_distance`): {}",
      model.d_model, model.layers, model.heads, params, learned_params, sweep_details(sweep));
}

void c15(const ClaimContext& ctx, ClaimResult& r) {
  MapReader s = ctx.settings();
  const ExperimentSettings e = read_experiment_settings(s);
  std::vector<std::string> absolute, claimed;
  std::vector<int64_t> window;
  double margin = 0.05, learned_min = 0.5;
  s.read("absolute", absolute);
  s.read("claimed", claimed);
  s.read("long_window", window);
  s.read("margin", margin);
  s.read("learned_min", learned_min);
  s.finish(
      {"experiment", "overrides", "absolute", "claimed", "long_window", "margin", "learned_min"});
  PELAB_CHECK(window.size() == 2 && window[0] <= window[1],
              "{}: settings.long_window must be [shortest, longest] distance", ctx.config.path);
  const ClaimSweep sweep = run_claim_sweep(ctx, e.experiment, e.overrides);
  auto window_stat = [&](const std::string& scheme) {
    const Group* g = sweep.group("positional.type", scheme);
    PELAB_CHECK(g != nullptr, "{}: the experiment has no run with positional.type {}",
                ctx.config.path, scheme);
    return accuracy_between(*g, window[0], window[1]);
  };
  double best_absolute = -1;
  std::string best_name;
  for (const std::string& scheme : absolute) {
    const Stat st = window_stat(scheme);
    if (st.mean > best_absolute) {
      best_absolute = st.mean;
      best_name = scheme;
    }
  }
  int64_t better = 0;
  std::string claimed_text;
  nlohmann::json window_numbers = nlohmann::json::object();
  double best_any = -1;  // over every scheme the experiment trained
  for (const Group& g : sweep.comparison.groups) {
    const Stat st = accuracy_between(g, window[0], window[1]);
    PELAB_CHECK(st.n > 0, "{}: the experiment evaluates no length in settings.long_window",
                ctx.config.path);
    window_numbers[g.label] = {{"mean", st.mean}, {"std", st.std}, {"seeds", st.n}};
    best_any = std::max(best_any, st.mean);
  }
  for (const std::string& scheme : claimed) {
    const Stat st = window_stat(scheme);
    if (st.mean >= best_absolute + margin) ++better;
    claimed_text +=
        fmt::format("{}{} {}", claimed_text.empty() ? "" : ", ", scheme, format_stat(st));
  }
  const int64_t n_claimed = static_cast<int64_t>(claimed.size());
  const bool learned = best_any >= learned_min;
  r.verdict = !learned              ? Verdict::Mixed  // no scheme learned the long distances
              : better == n_claimed ? Verdict::Supported
              : better == 0         ? Verdict::Refuted
                                    : Verdict::Mixed;
  r.numbers = {{"long_window", window},
               {"best_absolute", best_name},
               {"best_absolute_accuracy", best_absolute},
               {"window_accuracy", window_numbers},
               {"groups", group_numbers(sweep.comparison)}};
  r.because = fmt::format(
      "sequence accuracy at distances {}–{} (trained on): {}; best absolute scheme {} {}{}",
      window[0], window[1], claimed_text, best_name, fmt_number(best_absolute),
      learned ? ""
              : fmt::format(" (no scheme reached {}: not learned at these settings)",
                            fmt_number(learned_min)));
  r.details = fmt::format(
      "The answer is the token D positions before a marker whose own position varies; D is the "
      "problem size, so accuracy by size is accuracy by distance. The verdict reads the longest "
      "distances the runs trained on ({}–{}); beyond them is extrapolation, shown beside it.\n\n"
      "{}",
      window[0], window[1], sweep_details(sweep));
}

}  // namespace

void add_relative_claims(std::vector<ClaimDef>& defs) {
  defs.push_back({"C6", c6});
  defs.push_back({"C15", c15});
}

}  // namespace pelab::claims
