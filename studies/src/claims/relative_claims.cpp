// The claims about relative positions:
//   C6   Shaw's relative encodings handle varying lengths, and clipping at k keeps the
//        parameter count independent of length (notes 000, 001)
//   C15  relative and rotary encodings suit long-range dependencies better (001): judged by
//        in-distribution accuracy as the distance D grows, not by length extrapolation
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "claims/claim.h"
#include "pelab/claims/relative_cost_verdicts.h"
#include "pelab/core/error.h"
#include "pelab/positional/scheme.h"
#include "pelab/report/plot.h"
#include "pelab/report/representable.h"

namespace pelab::claims {

namespace {

// The parameters `model`'s scheme adds to it: its count minus that of the same model with
// `none`. `learned_rows` sets learned's table length (the longest length a run uses).
int64_t positional_parameters(ModelConfig model, int64_t learned_rows = 0) {
  resolve_run_facts(model.positional, {learned_rows, learned_rows});
  ModelConfig bare = model;
  bare.positional = PositionalConfig{};
  return Encoder(model, make_scheme, 0).params().count() -
         Encoder(bare, make_scheme, 0).params().count();
}

void c6(const ClaimContext& ctx, ClaimResult& r) {
  MapReader s = ctx.settings();
  const ExperimentSettings e = read_experiment_settings(s);
  std::vector<int64_t> lengths;
  double supported_min = 0.5, refuted_max = 0.1;
  s.read("parameter_lengths", lengths);
  s.read("supported_min", supported_min);
  s.read("refuted_max", refuted_max);
  s.finish({"experiment", "overrides", "parameter_lengths", "supported_min", "refuted_max"});
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
  const ModelConfig model =
      load_experiment(
          (std::filesystem::path(by_k.front().second->first_run()) / "config.yaml").string())
          .model;
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

  // (b) Extrapolation at each k; the judgement leaves out the k that did not learn.
  C6Numbers judged{{}, supported_min, refuted_max};
  nlohmann::json per_k = nlohmann::json::array();
  for (const auto& [k, g] : by_k) {
    per_k.push_back({{"k", k},
                     {"learned_runs", g->learned_runs},
                     {"runs", g->trained_runs()},
                     {"in_distribution", g->in_distribution.mean},
                     {"extrapolation", g->extrapolation.mean},
                     {"extrapolation_ci", {g->extrapolation.ci_low, g->extrapolation.ci_high}},
                     {"extrapolation_token", g->extrapolation_token.mean},
                     {"not_representable", g->not_representable}});
    judged.ks.push_back(
        {k, {g->learned_runs, g->trained_runs()}, g->extrapolation, g->not_representable});
  }
  apply(judge_c6(judged), r);
  r.numbers = {{"parameter_counts", counts}, {"per_k", per_k}};
  r.details = fmt::format(
      "**Parameters** the scheme adds to the sweep's model (d_model {}, {} layers, {} heads). "
      "The relative tables have 2k+1 rows whatever the length, by construction: no length "
      "enters them, so this part is shown, not judged. Learned's table, for contrast, grows "
      "with the longest length a model uses:\n\n{}\n{}\n"
      "**Extrapolation by k** (`positional.max_distance`): {}",
      model.d_model, model.layers, model.heads, params, learned_params, sweep_details(sweep));
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

// One scheme over its runs whose task.distance lies in [lo, hi]: per seed the mean
// in-distribution sequence accuracy over those distances (then summarised over seeds), the
// runs that learned the task in distribution, and why its settings cannot represent the task
// at one of those distances ("" if they can at all).
struct OverDistances {
  Stat accuracy;
  Stat token;  // the same in token accuracy (shown beside it)
  LearnedCount learned;
  std::string not_representable;
};

// Over seeds: each seed's mean of its values.
Stat per_seed_means(const std::map<uint64_t, std::vector<double>>& by_seed) {
  std::vector<double> means;
  std::vector<uint64_t> seeds;
  for (const auto& [seed, values] : by_seed) {
    seeds.push_back(seed);
    means.push_back(mean_of(values));
  }
  return summarize(means, seeds);
}

OverDistances over_distances(const DistanceGrid& grid, const std::string& scheme, int64_t lo,
                             int64_t hi) {
  OverDistances out;
  std::map<uint64_t, std::vector<double>> by_seed, tokens_by_seed;
  for (const int64_t d : grid.distances) {
    const auto it = grid.cell.find({scheme, d});
    if (d < lo || d > hi || it == grid.cell.end()) continue;
    const Group& g = *it->second;
    out.learned.learned += g.learned_runs;
    out.learned.runs += g.trained_runs();
    // C15 judges in-distribution accuracy: what evaluation beyond training uses is moot.
    if (out.not_representable.empty() && !g.not_representable_in_distribution.empty())
      out.not_representable = fmt::format("at D = {}, {}", d, g.not_representable_in_distribution);
    const Stat& st = g.in_distribution;
    for (size_t i = 0; i < st.values.size() && i < st.seeds.size(); ++i)
      by_seed[st.seeds[i]].push_back(st.values[i]);
    const Stat& tok = g.in_distribution_token;
    for (size_t i = 0; i < tok.values.size() && i < tok.seeds.size(); ++i)
      tokens_by_seed[tok.seeds[i]].push_back(tok.values[i]);
  }
  out.accuracy = per_seed_means(by_seed);
  out.token = per_seed_means(tokens_by_seed);
  return out;
}

// The scheme as C15's rule judges it: the control at the short distance, the accuracy over the
// long ones.
C15Scheme judged_scheme(const DistanceGrid& grid, const std::string& scheme, int64_t short_d,
                        const std::vector<int64_t>& window, const std::string& config_path) {
  const OverDistances control = over_distances(grid, scheme, short_d, short_d);
  const OverDistances long_range = over_distances(grid, scheme, window[0], window[1]);
  PELAB_CHECK(control.learned.runs > 0 && long_range.accuracy.n > 0,
              "{}: {} has no run at task.distance {} (settings.short_distance) or none in "
              "settings.long_distances [{}, {}]",
              config_path, scheme, short_d, window[0], window[1]);
  C15Scheme out;
  out.name = scheme;
  out.learned = control.learned;
  out.short_accuracy = control.accuracy;
  out.accuracy = long_range.accuracy;
  out.not_representable =
      !control.not_representable.empty() ? control.not_representable : long_range.not_representable;
  return out;
}

// C15's table (one row per scheme, one column per distance: in-distribution sequence / token
// accuracy; then the control and the judged window), its figure's data blocks (in-distribution
// sequence accuracy by distance), and the numbers per scheme.
struct DistanceTable {
  std::string table;  // Markdown
  std::string data;   // one gnuplot data block per scheme: distance, mean, ci_low, ci_high
  nlohmann::json per_scheme = nlohmann::json::object();
  std::map<std::string, C15Scheme> judged;  // per scheme
};

// One cell of C15's table: the group's in-distribution sequence / token accuracy (mean ± std),
// † where some run did not learn, or "not representable at these settings".
std::string distance_cell(const Group& g) {
  if (!g.not_representable_in_distribution.empty()) return kNotRepresentable;
  return with_token(format_stat(g.in_distribution), g.in_distribution_token) +
         (g.all_learned() ? "" : " †");
}

DistanceTable distance_table(const DistanceGrid& grid, int64_t short_d,
                             const std::vector<int64_t>& window, const std::string& config_path) {
  DistanceTable t;
  t.table = "| scheme |";
  std::string rule = "|---|";
  for (const int64_t d : grid.distances) {
    t.table += fmt::format(" D = {} |", d);
    rule += "--:|";
  }
  t.table += fmt::format(" D = {} (control) | D in [{}, {}] (judged) |\n{}--:|--:|\n", short_d,
                         window[0], window[1], rule);
  for (const std::string& scheme : grid.schemes) {
    const C15Scheme st = judged_scheme(grid, scheme, short_d, window, config_path);
    t.judged[scheme] = st;
    t.table += "| " + scheme + " |";
    t.data += "$" + scheme + " << EOD\n";
    nlohmann::json by_distance = nlohmann::json::array();
    for (const int64_t d : grid.distances) {
      const auto it = grid.cell.find({scheme, d});
      if (it == grid.cell.end()) {
        t.table += " — |";
        continue;
      }
      const Group& g = *it->second;
      t.table += " " + distance_cell(g) + " |";
      if (g.not_representable_in_distribution.empty())
        t.data += fmt::format("{} {} {} {}\n", d, gnuplot_number(g.in_distribution.mean),
                              gnuplot_number(g.in_distribution.ci_low),
                              gnuplot_number(g.in_distribution.ci_high));
      by_distance.push_back(
          {{"distance", d},
           {"in_distribution", g.in_distribution.mean},
           {"in_distribution_ci", {g.in_distribution.ci_low, g.in_distribution.ci_high}},
           {"in_distribution_token", g.in_distribution_token.mean},
           {"learned_runs", g.learned_runs},
           {"runs", g.trained_runs()},
           {"not_representable", g.not_representable_in_distribution}});
    }
    // Token accuracy beside the judged sequence accuracy, over the same distances.
    const Stat short_token = over_distances(grid, scheme, short_d, short_d).token;
    const Stat long_token = over_distances(grid, scheme, window[0], window[1]).token;
    t.table +=
        fmt::format(" {} | {} |\n", with_token(format_interval(st.short_accuracy), short_token),
                    with_token(format_interval(st.accuracy), long_token));
    t.data += "EOD\n";
    t.per_scheme[scheme] = {{"by_distance", by_distance},
                            {"short_distance_in_distribution", st.short_accuracy.mean},
                            {"long_distances_in_distribution", st.accuracy.mean},
                            {"long_distances_ci", {st.accuracy.ci_low, st.accuracy.ci_high}},
                            {"learned_runs_at_short_distance", st.learned.learned},
                            {"runs_at_short_distance", st.learned.runs},
                            {"not_representable", st.not_representable}};
  }
  return t;
}

// The schemes `names` of the table's window, in that order.
std::vector<C15Scheme> window_of(const DistanceTable& t, const std::vector<std::string>& names,
                                 const std::string& config_path) {
  std::vector<C15Scheme> out;
  for (const std::string& name : names) {
    const auto it = t.judged.find(name);
    PELAB_CHECK(it != t.judged.end(), "{}: the experiment trains no {} run", config_path, name);
    out.push_back(it->second);
  }
  return out;
}

// The groups of `runs` added to `into`, each keyed by `type` when its sweep had one scheme
// only (then positional.type does not tell its groups apart, so it is no group key).
void add_groups_of(Comparison& into, const Comparison& runs, const std::string& type) {
  for (Group g : runs.groups) {
    const bool typed = std::any_of(g.keys.begin(), g.keys.end(),
                                   [](const auto& kv) { return kv.first == "positional.type"; });
    if (!typed) g.keys.emplace_back("positional.type", type);
    into.groups.push_back(std::move(g));
  }
}

void c15(const ClaimContext& ctx, ClaimResult& r) {
  MapReader s = ctx.settings();
  const ExperimentSettings e = read_experiment_settings(s);
  std::vector<std::string> absolute, claimed, relative_overrides;
  std::vector<int64_t> window;
  int64_t short_distance = 0;
  double margin = 0.05;
  s.read("relative_overrides", relative_overrides);
  s.read("absolute", absolute);
  s.read("claimed", claimed);
  s.read("short_distance", short_distance);
  s.read("long_distances", window);
  s.read("margin", margin);
  s.finish({"experiment", "overrides", "relative_overrides", "absolute", "claimed",
            "short_distance", "long_distances", "margin"});
  PELAB_CHECK(window.size() == 2 && window[0] <= window[1],
              "{}: settings.long_distances must be [shortest, longest]", ctx.config.path);
  PELAB_CHECK(short_distance > 0 && short_distance < window[0],
              "{}: settings.short_distance must be in [1, {}) (below settings.long_distances), "
              "got {}",
              ctx.config.path, window[0], short_distance);
  const ClaimSweep sweep = run_claim_sweep(ctx, e.experiment, e.overrides);
  // Relative runs apart: their k is a key the other schemes do not take.
  const ClaimSweep relative = run_claim_sweep(ctx, e.experiment, relative_overrides);
  Comparison both;
  add_groups_of(both, sweep.comparison, "");
  add_groups_of(both, relative.comparison, "relative");

  const DistanceGrid grid = distance_grid(both, ctx.config.path);
  const DistanceTable t = distance_table(grid, short_distance, window, ctx.config.path);
  const C15Numbers numbers{window_of(t, absolute, ctx.config.path),
                           window_of(t, claimed, ctx.config.path), margin};
  apply(judge_c15(numbers), r);
  r.numbers = {
      {"short_distance", short_distance}, {"long_distances", window}, {"schemes", t.per_scheme}};
  std::string plot = "plot ";
  for (size_t i = 0; i < grid.schemes.size(); ++i)
    plot += fmt::format("{}${} using 1:2:3:4 with yerrorlines title {}", i ? ", " : "",
                        grid.schemes[i], gnuplot_quoted(grid.schemes[i]));
  const PlotResult figure = draw_figure(
      t.data +
          "set xlabel 'distance D from the marker back to the answer'\nset ylabel "
          "'in-distribution sequence accuracy (mean, 95% interval)'\nset yrange [0:1.05]\nset "
          "logscale x 2\nset key outside right\nset grid\n",
      plot, ctx.dir, "accuracy_by_distance");
  r.details = fmt::format(
      "One run per scheme, distance D (`task.distance`) and seed: the answer is the token D "
      "positions before a marker whose own position varies, so only the offset identifies "
      "it. Every run trains and is tested on the same long sequences (every evaluated length "
      "was trained on): what changes from column to column is the distance alone, so this "
      "measures long-range dependency, not length extrapolation. Per D: in-distribution "
      "sequence / token accuracy (mean ± std over seeds; † where some run did not learn); then "
      "the control at the short distance and the judged long distances (sequence accuracy, the "
      "one judged, mean [95% interval] / token accuracy's mean). The relative scheme's k "
      "exceeds the largest D and stays within the longest training distance, so it can "
      "represent every offset asked with trained rows only:\n\n{}\n",
      t.table);
  add_figures(ctx, figure, r);
  r.details += "\n**The absolute schemes and rotary.** " + sweep_details(sweep);
  r.details += "\n**Relative.** " + sweep_details(relative);
}

}  // namespace

void add_relative_claims(std::vector<ClaimDef>& defs) {
  defs.push_back({"C6", c6});
  defs.push_back({"C15", c15});
}

}  // namespace pelab::claims
