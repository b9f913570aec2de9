// The claims about relative positions:
//   C6   Shaw's relative encodings handle varying lengths, and clipping at k keeps the
//        parameter count independent of length (notes 000, 001)
//   C15  relative and rotary encodings suit long-range dependencies better (001)
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "claims/claim.h"
#include "pelab/core/error.h"
#include "pelab/experiment/plot.h"
#include "pelab/positional/scheme.h"

namespace pelab::claims {

namespace {

// The parameters `model`'s scheme adds to it: its count minus that of the same model with
// `none`. `learned_rows` sets learned's table length (the longest length a run uses).
int64_t positional_parameters(ModelConfig model, int64_t learned_rows = 0) {
  resolve_run_facts(model.positional, {learned_rows, learned_rows});
  ModelConfig bare = model;
  bare.positional = PositionalConfig{};
  return Encoder(model, 0).params().count() - Encoder(bare, 0).params().count();
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
    m.positional.keys.set("max_distance", k);
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

// One scheme's in-distribution sequence accuracy over the runs whose task.distance lies in
// [lo, hi]: per seed the mean over those distances, then summarised over seeds.
Stat accuracy_over_distances(const Comparison& c, const std::string& scheme, int64_t lo,
                             int64_t hi) {
  std::map<uint64_t, std::vector<double>> by_seed;
  for (const Group& g : c.groups) {
    std::string type, distance;
    for (const auto& [key, value] : g.keys) {
      if (key == "positional.type") type = value;
      if (key == "task.distance") distance = value;
    }
    if (type != scheme || distance.empty()) continue;
    const int64_t d = std::stoll(distance);
    if (d < lo || d > hi) continue;
    const Stat& st = g.in_distribution;
    for (size_t i = 0; i < st.values.size() && i < st.seeds.size(); ++i)
      by_seed[st.seeds[i]].push_back(st.values[i]);
  }
  std::vector<double> means;
  std::vector<uint64_t> seeds;
  for (const auto& [seed, values] : by_seed) {
    seeds.push_back(seed);
    means.push_back(mean_of(values));
  }
  return summarize(means, seeds);
}

// Every (scheme, distance) C15's sweep trained: schemes in the sweep's order, distances
// ascending.
struct DistanceGrid {
  std::vector<std::string> schemes;
  std::vector<int64_t> distances;
  std::map<std::pair<std::string, int64_t>, const Group*> cell;
};

DistanceGrid distance_grid(const Comparison& comparison, const std::string& config_path) {
  DistanceGrid grid;
  for (const Group& g : comparison.groups) {
    std::string type;
    int64_t distance = -1;
    for (const auto& [key, value] : g.keys) {
      if (key == "positional.type") type = value;
      if (key == "task.distance") distance = std::stoll(value);
    }
    PELAB_CHECK(!type.empty() && distance >= 0,
                "{}: the experiment must sweep positional and task.distance", config_path);
    if (std::find(grid.schemes.begin(), grid.schemes.end(), type) == grid.schemes.end())
      grid.schemes.push_back(type);
    if (std::find(grid.distances.begin(), grid.distances.end(), distance) == grid.distances.end())
      grid.distances.push_back(distance);
    grid.cell[{type, distance}] = &g;
  }
  std::sort(grid.distances.begin(), grid.distances.end());
  return grid;
}

// C15's table (one row per scheme, one column per distance and the long-distance window),
// its figure's data blocks, and the numbers per scheme.
struct DistanceTable {
  std::string table;  // Markdown
  std::string data;   // one gnuplot data block per scheme: distance, mean, std
  nlohmann::json per_scheme = nlohmann::json::object();
  double best_any = -1;  // the best scheme's mean accuracy over the window
};

DistanceTable distance_table(const Comparison& comparison, const DistanceGrid& grid,
                             const std::vector<int64_t>& window, const std::string& config_path) {
  DistanceTable t;
  t.table = "| scheme |";
  std::string rule = "|---|";
  for (const int64_t d : grid.distances) {
    t.table += fmt::format(" D = {} |", d);
    rule += "--:|";
  }
  t.table += fmt::format(" D in [{}, {}] |\n{}--:|\n", window[0], window[1], rule);
  for (const std::string& scheme : grid.schemes) {
    const Stat st = accuracy_over_distances(comparison, scheme, window[0], window[1]);
    PELAB_CHECK(st.n > 0, "{}: no {} run has a task.distance in settings.long_distances",
                config_path, scheme);
    t.best_any = std::max(t.best_any, st.mean);
    t.table += "| " + scheme + " |";
    t.data += "$" + scheme + " << EOD\n";
    nlohmann::json by_distance = nlohmann::json::array();
    for (const int64_t d : grid.distances) {
      const auto it = grid.cell.find({scheme, d});
      if (it == grid.cell.end()) {
        t.table += " — |";
        continue;
      }
      const Stat& acc = it->second->in_distribution;
      t.table += " " + format_stat(acc) + " |";
      t.data += fmt::format("{} {} {}\n", d, gnuplot_number(acc.mean),
                            gnuplot_number(std::isfinite(acc.std) ? acc.std : 0));
      by_distance.push_back({{"distance", d}, {"mean", acc.mean}, {"std", acc.std}});
    }
    t.table += " " + format_stat(st) + " |\n";
    t.data += "EOD\n";
    t.per_scheme[scheme] = {{"by_distance", by_distance},
                            {"long_distances_mean", st.mean},
                            {"long_distances_std", st.std}};
  }
  return t;
}

void c15(const ClaimContext& ctx, ClaimResult& r) {
  MapReader s = ctx.settings();
  const ExperimentSettings e = read_experiment_settings(s);
  std::vector<std::string> absolute, claimed;
  std::vector<int64_t> window;
  double margin = 0.05, learned_min = 0.5;
  s.read("absolute", absolute);
  s.read("claimed", claimed);
  s.read("long_distances", window);
  s.read("margin", margin);
  s.read("learned_min", learned_min);
  s.finish({"experiment", "overrides", "absolute", "claimed", "long_distances", "margin",
            "learned_min"});
  PELAB_CHECK(window.size() == 2 && window[0] <= window[1],
              "{}: settings.long_distances must be [shortest, longest]", ctx.config.path);
  const ClaimSweep sweep = run_claim_sweep(ctx, e.experiment, e.overrides);

  const DistanceGrid grid = distance_grid(sweep.comparison, ctx.config.path);
  const std::vector<std::string>& schemes = grid.schemes;
  const DistanceTable t = distance_table(sweep.comparison, grid, window, ctx.config.path);
  const std::string& table = t.table;
  const std::string& data = t.data;
  const nlohmann::json& per_scheme = t.per_scheme;
  const double best_any = t.best_any;
  double best_absolute = -1;
  std::string best_name;
  for (const std::string& scheme : absolute) {
    const double m = per_scheme.at(scheme)["long_distances_mean"].get<double>();
    if (m > best_absolute) {
      best_absolute = m;
      best_name = scheme;
    }
  }
  int64_t better = 0;
  std::string claimed_text;
  for (const std::string& scheme : claimed) {
    const double m = per_scheme.at(scheme)["long_distances_mean"].get<double>();
    if (m >= best_absolute + margin) ++better;
    claimed_text += fmt::format("{}{} {}", claimed_text.empty() ? "" : ", ", scheme, fmt_number(m));
  }
  const int64_t n_claimed = static_cast<int64_t>(claimed.size());
  const bool learned = best_any >= learned_min;
  r.verdict = !learned              ? Verdict::Mixed  // no scheme learned the long distances
              : better == n_claimed ? Verdict::Supported
              : better == 0         ? Verdict::Refuted
                                    : Verdict::Mixed;
  r.numbers = {{"long_distances", window},
               {"best_absolute", best_name},
               {"best_absolute_accuracy", best_absolute},
               {"schemes", per_scheme}};
  r.because =
      fmt::format("sequence accuracy at distances {}–{}: {}; best absolute scheme {} {}{}",
                  window[0], window[1], claimed_text, best_name, fmt_number(best_absolute),
                  learned ? ""
                          : fmt::format(" (no scheme reached {}: not learned at these settings)",
                                        fmt_number(learned_min)));
  std::string plot = "plot ";
  for (size_t i = 0; i < schemes.size(); ++i)
    plot += fmt::format("{}${} using 1:2:3 with yerrorlines title {}", i ? ", " : "", schemes[i],
                        gnuplot_quoted(schemes[i]));
  const PlotResult figure = draw_figure(
      data +
          "set xlabel 'distance D from the marker back to the answer'\nset ylabel 'sequence "
          "accuracy (mean ± std over seeds)'\nset yrange [0:1.05]\nset logscale x 2\nset "
          "key outside right\nset grid\n",
      plot, ctx.dir, "accuracy_by_distance");
  r.details = fmt::format(
      "One run per scheme, distance D (`task.distance`) and seed: the answer is the token D "
      "positions before a marker whose own position varies, so only the offset identifies "
      "it. In-distribution sequence accuracy by D, mean ± std over seeds (the relative "
      "scheme's k = 16 cannot represent D > 16: its offsets beyond 16 share one "
      "embedding):\n\n{}\n",
      table);
  add_figures(ctx, figure, r);
  r.details += "\n";
  r.details += sweep_details(sweep);
}

}  // namespace

void add_relative_claims(std::vector<ClaimDef>& defs) {
  defs.push_back({"C6", c6});
  defs.push_back({"C15", c15});
}

}  // namespace pelab::claims
