// The claims about relative positions:
//   C6   Shaw's relative encodings handle varying lengths, and clipping at k keeps the
//        parameter count independent of length (notes 000, 001)
//   C15  relative and rotary encodings suit long-range dependencies better (001)
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "claims/claim.h"
#include "pelab/core/error.h"

namespace pelab::claims {

namespace {

double mean_of(const std::vector<double>& v) {
  return v.empty() ? std::nan("") : std::accumulate(v.begin(), v.end(), 0.0) / v.size();
}

// The parameters of a 3-layer, 64-wide, 8-head encoder with `scheme` that the scheme itself
// adds (its tables), for a model that trains or evaluates on `length` tokens.
int64_t positional_parameters(const std::string& scheme, int64_t max_distance, int64_t length) {
  auto count = [&](const std::string& type) {
    ModelConfig m;
    m.vocab_in = 8;
    m.vocab_out = 8;
    m.d_model = 64;
    m.heads = 8;
    m.layers = 3;
    m.positional.type = type;
    if (type == "relative") m.positional.max_distance = max_distance;
    if (type == "learned") m.positional.max_len = length;
    return Encoder(m, 0).params().count();
  };
  return count(scheme) - count("none");
}

// Sequence accuracy of a group at the evaluated lengths in [lo, hi], per seed, then summarised.
Stat accuracy_between(const Group& g, int64_t lo, int64_t hi) {
  std::vector<double> per_seed;
  for (size_t seed = 0;; ++seed) {
    std::vector<double> values;
    for (const GroupLength& gl : g.lengths)
      if (gl.length >= lo && gl.length <= hi && seed < gl.stat.values.size())
        values.push_back(gl.stat.values[seed]);
    if (values.empty()) break;
    per_seed.push_back(mean_of(values));
  }
  return summarize(per_seed);
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

  // (a) Parameters: the relative tables against length (none) and against k (linear).
  std::vector<std::pair<int64_t, const Group*>> by_k;
  for (const Group& g : sweep.comparison.groups)
    for (const auto& [key, value] : g.keys)
      if (key == "positional.max_distance") by_k.emplace_back(std::stoll(value), &g);
  PELAB_CHECK(!by_k.empty(), "{}: the experiment must sweep positional.max_distance",
              ctx.config.path);
  std::sort(by_k.begin(), by_k.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string params = "| length |";
  std::string rule = "|--:|";
  for (const auto& [k, g] : by_k) {
    params += fmt::format(" relative, k = {} |", k);
    rule += "--:|";
  }
  params += " learned |\n" + rule + "--:|\n";
  bool constant_in_length = true;
  nlohmann::json counts = nlohmann::json::array();
  for (const int64_t length : lengths) {
    params += fmt::format("| {} |", length);
    for (const auto& [k, g] : by_k) {
      const int64_t n = positional_parameters("relative", k, length);
      constant_in_length =
          constant_in_length && n == positional_parameters("relative", k, lengths.front());
      params += fmt::format(" {} |", n);
      counts.push_back({{"scheme", "relative"}, {"k", k}, {"length", length}, {"parameters", n}});
    }
    const int64_t n = positional_parameters("learned", 0, length);
    params += fmt::format(" {} |\n", n);
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
  if (!constant_in_length)
    r.verdict = Verdict::Refuted;
  else if (learned_ks > 0 && good == learned_ks)
    r.verdict = Verdict::Supported;
  else if (learned_ks > 0 && bad == learned_ks)
    r.verdict = Verdict::Refuted;
  else
    r.verdict = Verdict::Mixed;
  r.numbers = {{"parameters_constant_in_length", constant_in_length},
               {"parameter_counts", counts},
               {"per_k", per_k},
               {"ks_learned", learned_ks},
               {"ks_extrapolating", good},
               {"ks_failing", bad}};
  r.because = fmt::format(
      "the tables' size depends on k only ({}); beyond the training lengths, at each k that "
      "learned the task: {}{}",
      constant_in_length ? "exactly, at every length" : "NOT: it changes with length",
      judged.empty() ? "none did" : judged,
      not_judged.empty() ? "" : fmt::format(" (not learned in distribution: {})", not_judged));
  r.details = fmt::format(
      "**Parameters** added by the scheme to the default model (3 layers, d_model 64, 8 heads), "
      "by the longest length a run uses; `learned` for contrast:\n\n{}\n"
      "**Extrapolation by k** (`positional.max_distance`): {}",
      params, sweep_details(sweep));
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
  double best_claimed = -1;
  std::string claimed_text;
  nlohmann::json window_numbers = nlohmann::json::object();
  for (const Group& g : sweep.comparison.groups) {
    const Stat st = accuracy_between(g, window[0], window[1]);
    window_numbers[g.label] = {{"mean", st.mean}, {"std", st.std}, {"seeds", st.n}};
  }
  for (const std::string& scheme : claimed) {
    const Stat st = window_stat(scheme);
    if (st.mean >= best_absolute + margin) ++better;
    best_claimed = std::max(best_claimed, st.mean);
    claimed_text +=
        fmt::format("{}{} {}", claimed_text.empty() ? "" : ", ", scheme, format_stat(st));
  }
  const int64_t n_claimed = static_cast<int64_t>(claimed.size());
  const bool learned = std::max(best_claimed, best_absolute) >= learned_min;
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
