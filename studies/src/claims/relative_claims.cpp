// The claims about relative positions:
//   C6   Shaw's relative encodings handle varying lengths, and clipping at k keeps the
//        parameter count independent of length (notes 000, 001)
//   C15  relative and rotary encodings suit long-range dependencies better (001)
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
                     {"extrapolation_ci", {g->extrapolation.ci_low, g->extrapolation.ci_high}}});
    judged.ks.push_back({k, {g->learned_runs, g->trained_runs()}, g->extrapolation});
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

// One scheme over the runs whose task.distance lies in [lo, hi]: its accuracy beyond the
// training lengths (per seed the mean over those distances, then summarised over seeds), and
// how many of those runs learned the task in distribution.
C15Scheme scheme_over_distances(const Comparison& c, const std::string& scheme, int64_t lo,
                                int64_t hi) {
  C15Scheme out;
  out.name = scheme;
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
    out.learned.learned += g.learned_runs;
    out.learned.runs += g.trained_runs();
    const Stat& st = g.extrapolation;
    for (size_t i = 0; i < st.values.size() && i < st.seeds.size(); ++i)
      by_seed[st.seeds[i]].push_back(st.values[i]);
  }
  std::vector<double> means;
  std::vector<uint64_t> seeds;
  for (const auto& [seed, values] : by_seed) {
    seeds.push_back(seed);
    means.push_back(mean_of(values));
  }
  out.accuracy = summarize(means, seeds);
  return out;
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

// C15's table (one row per scheme, one column per distance: in distribution, then beyond the
// training lengths; and the judged window), its figure's data blocks (beyond training), and
// the numbers per scheme.
struct DistanceTable {
  std::string table;  // Markdown
  std::string data;   // one gnuplot data block per scheme: distance, mean, ci_low, ci_high
  nlohmann::json per_scheme = nlohmann::json::object();
  std::map<std::string, C15Scheme> window;  // per scheme, over the judged distances
};

DistanceTable distance_table(const Comparison& comparison, const DistanceGrid& grid,
                             const std::vector<int64_t>& window, const std::string& config_path) {
  DistanceTable t;
  t.table = "| scheme |";
  std::string rule = "|---|";
  for (const int64_t d : grid.distances) {
    t.table += fmt::format(" D = {}: in / beyond |", d);
    rule += "--:|";
  }
  t.table += fmt::format(" beyond, D in [{}, {}] |\n{}--:|\n", window[0], window[1], rule);
  for (const std::string& scheme : grid.schemes) {
    const C15Scheme st = scheme_over_distances(comparison, scheme, window[0], window[1]);
    PELAB_CHECK(st.accuracy.n > 0,
                "{}: no {} run has a task.distance in settings.long_distances and lengths "
                "beyond training",
                config_path, scheme);
    t.window[scheme] = st;
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
      t.table += fmt::format(" {}{} / {} |", format_stat(g.in_distribution),
                             g.all_learned() ? "" : " †", format_interval(g.extrapolation));
      t.data += fmt::format("{} {} {} {}\n", d, gnuplot_number(g.extrapolation.mean),
                            gnuplot_number(g.extrapolation.ci_low),
                            gnuplot_number(g.extrapolation.ci_high));
      by_distance.push_back(
          {{"distance", d},
           {"in_distribution", g.in_distribution.mean},
           {"learned_runs", g.learned_runs},
           {"runs", g.trained_runs()},
           {"beyond_training", g.extrapolation.mean},
           {"beyond_training_ci", {g.extrapolation.ci_low, g.extrapolation.ci_high}}});
    }
    t.table += " " + format_interval(st.accuracy) + " |\n";
    t.data += "EOD\n";
    t.per_scheme[scheme] = {{"by_distance", by_distance},
                            {"long_distances_beyond_training", st.accuracy.mean},
                            {"long_distances_ci", {st.accuracy.ci_low, st.accuracy.ci_high}},
                            {"learned_runs", st.learned.learned},
                            {"runs", st.learned.runs}};
  }
  return t;
}

// The schemes `names` of the table's window, in that order.
std::vector<C15Scheme> window_of(const DistanceTable& t, const std::vector<std::string>& names,
                                 const std::string& config_path) {
  std::vector<C15Scheme> out;
  for (const std::string& name : names) {
    const auto it = t.window.find(name);
    PELAB_CHECK(it != t.window.end(), "{}: the experiment trains no {} run", config_path, name);
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
  double margin = 0.05;
  s.read("relative_overrides", relative_overrides);
  s.read("absolute", absolute);
  s.read("claimed", claimed);
  s.read("long_distances", window);
  s.read("margin", margin);
  s.finish({"experiment", "overrides", "relative_overrides", "absolute", "claimed",
            "long_distances", "margin"});
  PELAB_CHECK(window.size() == 2 && window[0] <= window[1],
              "{}: settings.long_distances must be [shortest, longest]", ctx.config.path);
  const ClaimSweep sweep = run_claim_sweep(ctx, e.experiment, e.overrides);
  // Relative runs apart: their k is a key the other schemes do not take.
  const ClaimSweep relative = run_claim_sweep(ctx, e.experiment, relative_overrides);
  Comparison both;
  add_groups_of(both, sweep.comparison, "");
  add_groups_of(both, relative.comparison, "relative");

  const DistanceGrid grid = distance_grid(both, ctx.config.path);
  const DistanceTable t = distance_table(both, grid, window, ctx.config.path);
  const C15Numbers numbers{window_of(t, absolute, ctx.config.path),
                           window_of(t, claimed, ctx.config.path), margin};
  apply(judge_c15(numbers), r);
  r.numbers = {{"long_distances", window}, {"schemes", t.per_scheme}};
  std::string plot = "plot ";
  for (size_t i = 0; i < grid.schemes.size(); ++i)
    plot += fmt::format("{}${} using 1:2:3:4 with yerrorlines title {}", i ? ", " : "",
                        grid.schemes[i], gnuplot_quoted(grid.schemes[i]));
  const PlotResult figure = draw_figure(
      t.data +
          "set xlabel 'distance D from the marker back to the answer'\nset ylabel 'sequence "
          "accuracy beyond the training lengths (mean, 95% interval)'\nset yrange [0:1.05]\nset "
          "logscale x 2\nset key outside right\nset grid\n",
      plot, ctx.dir, "accuracy_by_distance");
  r.details = fmt::format(
      "One run per scheme, distance D (`task.distance`) and seed: the answer is the token D "
      "positions before a marker whose own position varies, so only the offset identifies "
      "it. Trained on the sizes of the experiment, then tested on longer sequences, where the "
      "marker and its answer sit at positions never seen in training. Per D: in-distribution "
      "sequence accuracy (mean ± std; † where some run did not learn) / accuracy beyond the "
      "training lengths (mean [95% interval]). The relative scheme's k is at least the "
      "largest D, so it can represent every offset asked:\n\n{}\n",
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
