// The published reproductions, each beside the paper's own figures:
//   R1  Delétang et al. 2023: Transformers do not solve the tasks beyond the training lengths
//   R2  Ruoss et al. 2023: randomized positions raise accuracy beyond the training lengths
//   R3  Kazemnejad et al. 2023: in a decoder, no positional encoding length-generalises at
//       least as well as the explicit ones
// R1 and R2 read their runs in their papers' metric, per-token accuracy averaged over the
// test lengths beyond training; R2's plain runs are R1's (it reads R1's settings), so a full
// run trains them once. R3 reads exact match of greedy generation (the lm layout), averaged
// over the test lengths beyond training, as its paper does.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "claims/claim.h"
#include "pelab/claims/published_verdicts.h"
#include "pelab/config/experiment.h"
#include "pelab/core/error.h"
#include "pelab/core/strings.h"
#include "pelab/data/task.h"

namespace pelab::claims {

namespace {

namespace fs = std::filesystem;

// A claim sweep read again in per-token accuracy: its runs, and their comparison under the
// protocol (compare's learned rule; the learning rate selected per group by in-distribution
// validation token accuracy).
struct TokenSweep {
  ClaimSweep sweep;
  std::vector<RunRecord> runs;
  Comparison tokens;
};

TokenSweep token_sweep(const ClaimContext& ctx, const std::string& experiment,
                       const std::vector<std::string>& overrides) {
  TokenSweep t;
  t.sweep = run_claim_sweep(ctx, experiment, overrides);
  t.runs = find_runs({(fs::path(ctx.options.out) / t.sweep.runs_dir).string()});
  t.tokens = compare_runs(t.runs, Metric::token_accuracy, /*read_positions=*/false);
  return t;
}

std::string config_value(const RunRecord& r, const std::string& key) {
  const auto it = r.config.find(key);
  return it == r.config.end() ? "" : it->second;
}

// A group of a comparison with its scheme and task (read from its first run's config: a
// sweep with one scheme or one task does not key its groups by it).
struct Cell {
  std::string scheme, task;
  const Group* group = nullptr;
};

std::vector<Cell> cells_of(const Comparison& comparison, const std::vector<RunRecord>& runs) {
  std::vector<Cell> cells;
  for (const Group& g : comparison.groups) {
    const auto run = std::find_if(runs.begin(), runs.end(),
                                  [&](const RunRecord& r) { return r.dir == g.first_run(); });
    PELAB_CHECK(run != runs.end(), "the run {} of group {} is not among its sweep's runs",
                g.first_run(), g.label);
    cells.push_back({config_value(*run, "positional.type"), config_value(*run, "task.name"), &g});
  }
  return cells;
}

LearnedCount learned_of(const Group& g) {
  return {g.learned_runs, g.trained_runs()};
}

// "0.55 [0.52, 0.58], max 0.57; in 0.99 (3/3 learned)": a group under the protocol ("—" for
// the numbers of a group whose every run diverged).
std::string protocol_cell(const Group& g) {
  return fmt::format("{}, max {}; in {} ({}/{} learned)", format_interval(g.extrapolation),
                     format_number(g.extrapolation, g.extrapolation.max),
                     format_number(g.in_distribution, g.in_distribution.mean), g.learned_runs,
                     g.trained_runs());
}

// A group's numbers under the protocol, for claims.json (null where no run has numbers).
nlohmann::json protocol_numbers(const Group& g) {
  const auto number = [](const Stat& s, double x) { return nlohmann::json(number_or_nan(s, x)); };
  const Stat& e = g.extrapolation;
  return {{"selected_lr", g.selected},
          {"beyond_training", number(e, e.mean)},
          {"beyond_training_ci", {number(e, e.ci_low), number(e, e.ci_high)}},
          {"beyond_training_max", number(e, e.max)},
          {"in_distribution", number(g.in_distribution, g.in_distribution.mean)},
          {"learned_runs", g.learned_runs},
          {"runs", g.trained_runs()}};
}

std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// ---- R1 ----

// R1's settings; R2 reads them too, to name the same runs.
struct R1Settings {
  std::string experiment;
  std::vector<std::vector<std::string>> sweeps;  // overrides, one list per sweep
  std::map<std::string, double> published;       // task → the paper's best, in percent
  std::string published_source;
  double solved = 0.90;
  double min_in_distribution = 0.95;  // R1Numbers: the best run must have learned this well
  int64_t min_tasks = 1;              // R1Numbers: judged tasks the claim needs
  std::string budget;                 // R1Numbers: the sentence beside the verdict
  std::vector<std::string> differences;
  // Overrides for a second sweep of each task that no scheme learned in distribution within
  // the first budget (empty: no second sweep).
  std::vector<std::string> larger_budget;
};

R1Settings read_r1_settings(const ClaimConfig& config) {
  MapReader s(config.settings, config.path, "settings");
  R1Settings r;
  PELAB_CHECK(s.read("experiment", r.experiment), "{}: the key 'experiment' is missing",
              s.where("experiment"));
  const std::optional<YAML::Node> sweeps = s.take("sweeps");
  PELAB_CHECK(sweeps && sweeps->IsSequence() && sweeps->size() > 0,
              "{}: settings.sweeps must be a list of override lists (one per sweep)", config.path);
  for (const YAML::Node& overrides : *sweeps) {
    PELAB_CHECK(overrides.IsSequence(), "{}:{}: settings.sweeps: each entry is a list of overrides",
                config.path, overrides.Mark().line + 1);
    r.sweeps.push_back(overrides.as<std::vector<std::string>>());
  }
  if (const std::optional<YAML::Node> published = s.take("published")) {
    PELAB_CHECK(published->IsMap(), "{}: settings.published maps a task to the paper's figure",
                config.path);
    for (const auto& kv : *published)
      r.published[kv.first.as<std::string>()] = kv.second.as<double>();
  }
  s.read("published_source", r.published_source);
  s.read("solved", r.solved);
  s.read("min_in_distribution", r.min_in_distribution);
  s.read("min_tasks", r.min_tasks);
  s.read("budget", r.budget);
  s.read("differences", r.differences);
  s.read("larger_budget", r.larger_budget);
  s.finish({"experiment", "sweeps", "published", "published_source", "solved",
            "min_in_distribution", "min_tasks", "budget", "differences", "larger_budget"});
  return r;
}

// Every completed run of the sweeps with its score, per task (in the sweeps' order). The runs
// of the first `first_larger` sweeps on a task in `replaced` are left out: that task's runs
// are those of a later sweep with the larger budget.
std::map<std::string, std::vector<ScoredRun>> scored_runs(const std::vector<TokenSweep>& sweeps,
                                                          size_t first_larger,
                                                          const std::set<std::string>& replaced,
                                                          std::vector<std::string>& task_order) {
  std::map<std::string, std::vector<ScoredRun>> by_task;
  for (size_t i = 0; i < sweeps.size(); ++i)
    for (const RunRecord& r : sweeps[i].runs) {
      const std::string task = config_value(r, "task.name");
      if (std::find(task_order.begin(), task_order.end(), task) == task_order.end())
        task_order.push_back(task);
      if (r.status != "completed" || (i < first_larger && replaced.count(task))) continue;
      std::vector<LengthScore> lengths;
      for (const RunRecord::Point& p : r.eval)
        lengths.push_back({p.length, p.token_accuracy, p.in_training});
      by_task[task].push_back({config_value(r, "positional.type"), config_value(r, "training.lr"),
                               r.seed, beyond_training_average(lengths),
                               in_training_average(lengths)});
    }
  return by_task;
}

std::string published_text(const R1Settings& s, const std::string& task) {
  const auto it = s.published.find(task);
  return it == s.published.end() ? "—" : fmt::format("{:.1f}", it->second);
}

// The tasks of a sweep that no scheme learned in distribution (compare's rule), in its order.
std::vector<std::string> unlearned_tasks(const TokenSweep& t) {
  std::vector<std::string> order;
  std::map<std::string, bool> learned;
  for (const Cell& c : cells_of(t.tokens, t.runs)) {
    if (!learned.count(c.task)) order.push_back(c.task);
    learned[c.task] = learned[c.task] || c.group->all_learned();
  }
  std::vector<std::string> unlearned;
  for (const std::string& task : order)
    if (!learned[task]) unlearned.push_back(task);
  return unlearned;
}

// The probe of a task for the larger budget: of the task's groups in `t`, the one with the best
// mean in-distribution token accuracy, at its selected learning rate and its lowest seed, as
// overrides of one run.
std::vector<std::string> probe_overrides(const TokenSweep& t, const std::string& task,
                                         std::string& described) {
  const Cell* best = nullptr;
  const std::vector<Cell> cells = cells_of(t.tokens, t.runs);
  for (const Cell& c : cells)
    if (c.task == task && c.group->in_distribution.n > 0 &&
        (!best || c.group->in_distribution.mean > best->group->in_distribution.mean))
      best = &c;
  PELAB_CHECK(best != nullptr, "{}: no run of task {} has numbers to choose a probe by",
              t.sweep.runs_dir, task);
  const Group& g = *best->group;
  const auto run = std::find_if(t.runs.begin(), t.runs.end(),
                                [&](const RunRecord& r) { return r.dir == g.runs.front(); });
  described = fmt::format("{}, lr {}, seed {}", best->scheme, g.selected, run->seed);
  return {
      fmt::format("sweep.task.name=[{}]", task), fmt::format("sweep.positional=[{}]", best->scheme),
      fmt::format("sweep.training.lr=[{}]", g.selected), fmt::format("sweep.seed=[{}]", run->seed)};
}

// R1's sweeps: the first budget's (settings.sweeps), then, for each task that no scheme
// learned within the first, a probe with settings.larger_budget (one run: probe_overrides) and,
// only if the probe learned the task, the task's whole sweep with that budget. `larger` names
// the tasks swept again; `probes` each probed task's probe and whether it learned.
std::vector<TokenSweep> r1_sweeps(const ClaimContext& ctx, const R1Settings& s,
                                  std::set<std::string>& larger,
                                  std::map<std::string, std::string>& probes) {
  std::vector<TokenSweep> sweeps;
  for (const std::vector<std::string>& overrides : s.sweeps)
    sweeps.push_back(token_sweep(ctx, s.experiment, overrides));
  if (s.larger_budget.empty()) return sweeps;
  std::vector<std::pair<size_t, std::string>> unlearned;  // (first sweep, task)
  for (size_t i = 0; i < s.sweeps.size(); ++i)
    for (const std::string& task : unlearned_tasks(sweeps[i])) unlearned.emplace_back(i, task);
  for (const auto& [i, task] : unlearned) {
    std::string described;
    const std::vector<std::string> probe = probe_overrides(sweeps[i], task, described);
    const TokenSweep p =
        token_sweep(ctx, s.experiment, concat(concat(s.sweeps[i], probe), s.larger_budget));
    const bool learned = !p.tokens.groups.empty() && p.tokens.groups.front().all_learned();
    probes[task] = fmt::format("{} ({})", described, learned ? "learned it" : "did not learn it");
    if (!learned) continue;
    larger.insert(task);
    sweeps.push_back(token_sweep(
        ctx, s.experiment,
        concat(concat(s.sweeps[i], {fmt::format("sweep.task.name=[{}]", task)}), s.larger_budget)));
  }
  return sweeps;
}

// What the larger budget did, for the report ("" when no task needed it).
std::string larger_budget_text(const R1Settings& s,
                               const std::map<std::string, std::string>& probes,
                               const std::set<std::string>& larger) {
  if (probes.empty()) return "";
  std::string text = fmt::format(
      "**Larger budget.** As settings.larger_budget fixes, each task that no scheme learned in "
      "distribution within the first budget was probed with `{}`: one run, of the scheme with "
      "the best in-distribution accuracy, at its selected learning rate and first seed. Only a "
      "task whose probe learned it was swept again whole with that budget; its row above and "
      "the verdict use those runs, and both sweeps' tables are below. Probes: ",
      join(s.larger_budget, " "));
  std::vector<std::string> parts;
  for (const auto& [task, probe] : probes)
    parts.push_back(fmt::format("{}: {}{}", task, probe,
                                larger.count(task) ? ", swept again" : ", not swept again"));
  return text + join(parts, "; ") + ".\n\n";
}

void r1(const ClaimContext& ctx, ClaimResult& r) {
  const R1Settings s = read_r1_settings(ctx.config);
  std::set<std::string> larger;
  std::map<std::string, std::string> probes;
  const std::vector<TokenSweep> sweeps = r1_sweeps(ctx, s, larger, probes);
  std::vector<std::string> tasks, schemes;
  const auto scored = scored_runs(sweeps, s.sweeps.size(), larger, tasks);
  // task → scheme → group; a larger budget's sweep comes later and replaces its task's groups
  std::map<std::string, std::map<std::string, const Group*>> cell;
  for (const TokenSweep& t : sweeps)
    for (const Cell& c : cells_of(t.tokens, t.runs)) {
      cell[c.task][c.scheme] = c.group;
      if (std::find(schemes.begin(), schemes.end(), c.scheme) == schemes.end())
        schemes.push_back(c.scheme);
    }

  R1Numbers n;
  n.solved = s.solved;
  n.min_in_distribution = s.min_in_distribution;
  n.min_tasks = s.min_tasks;
  n.budget = s.budget;
  nlohmann::json per_task = nlohmann::json::array();
  std::string table =
      "| task | issue 16's figures (not confirmed; %) | pelab best (%: scheme, lr, seed) |";
  std::string rule = "|---|--:|---|";
  for (const std::string& scheme : schemes) {
    table += fmt::format(" {} (protocol) |", scheme);
    rule += "---|";
  }
  table += fmt::format("\n{}\n", rule);
  for (const std::string& task : tasks) {
    const auto runs = scored.find(task);
    R1Task t{task,
             {},
             best_over_sweep(runs == scored.end() ? std::vector<ScoredRun>{} : runs->second,
                             s.min_in_distribution)};
    table += t.best.runs == 0
                 ? fmt::format("| {} | {} | — (no run learned) |", task, published_text(s, task))
                 : fmt::format("| {} | {} | {:.1f} ({}, {}, {}) |", task, published_text(s, task),
                               100 * t.best.score, t.best.scheme, t.best.lr, t.best.seed);
    nlohmann::json protocol = nlohmann::json::object();
    for (const std::string& scheme : schemes) {
      const auto it = cell[task].find(scheme);
      if (it == cell[task].end()) {
        table += " — |";
        continue;
      }
      const Group& g = *it->second;
      if (g.all_learned()) t.learned_schemes.push_back(scheme);
      table += fmt::format(" {} |", protocol_cell(g));
      protocol[scheme] = protocol_numbers(g);
    }
    table += "\n";
    per_task.push_back({{"task", task},
                        {"published", s.published.count(task) ? nlohmann::json(s.published.at(task))
                                                              : nlohmann::json()},
                        {"best", t.best.score},
                        {"best_scheme", t.best.scheme},
                        {"best_lr", t.best.lr},
                        {"best_seed", t.best.seed},
                        {"best_in_distribution", t.best.in_distribution},
                        {"learned_schemes", t.learned_schemes},
                        {"larger_budget", larger.count(task) > 0},
                        {"larger_budget_probe", probes.count(task) ? probes.at(task) : ""},
                        {"protocol", protocol}});
    n.tasks.push_back(std::move(t));
  }
  apply(judge_r1(n), r);
  r.numbers = {{"solved", s.solved},
               {"min_in_distribution", s.min_in_distribution},
               {"larger_budget", s.larger_budget},
               {"tasks", per_task}};
  r.details = fmt::format(
      "Score of a run (the paper's): per-token accuracy at each evaluated length beyond the "
      "training lengths, averaged over those lengths unweighted. **pelab best** is the "
      "maximum of that score over schemes, seeds and learning rates, as the paper reports "
      "it: chosen on the test lengths themselves, with no validation selection, so it is "
      "optimistic; only runs that learned the training lengths (in-distribution token "
      "accuracy at least {:.2f}) are candidates. The scheme columns are pelab's protocol: per "
      "scheme the learning rate that in-distribution validation token accuracy selects, the "
      "mean over seeds [nominal 95% bootstrap interval] and the maximum over seeds of the same "
      "score, then the "
      "in-distribution token accuracy and how many runs learned the task in distribution "
      "(compare's rule). Published figures: {}.\n\n{}\n",
      s.min_in_distribution, s.published_source, table);
  r.details += larger_budget_text(s, probes, larger);
  r.details += "**Differences from the paper's setup:**\n\n";
  for (const std::string& d : s.differences) r.details += fmt::format("- {}\n", d);
  r.details += "\n";
  for (const TokenSweep& t : sweeps)
    r.details += fmt::format("**Sequence accuracy.** {}", sweep_details(t.sweep));
}

// ---- R2 ----

// "+0.120 [+0.050, +0.190]", or "—" when no task counts.
std::string gain_text(const Gain& g) {
  if (std::isnan(g.mean)) return "—";
  return fmt::format("{:+.3f} [{:+.3f}, {:+.3f}]", g.mean, g.interval.low, g.interval.high);
}

struct R2Settings {
  std::string plain_runs_of;                   // the claim whose runs are the plain ones (R1)
  std::vector<std::string> plain_extra;        // added to each of its sweeps: plain schemes
                                               // it lacks
  std::vector<std::string> randomized;         // added to each of its sweeps: the randomized
  int64_t min_tasks = 2, min_seeds = 2;        // R2Numbers
  double ceiling = 0.98, floor_margin = 0.02;  // R2Numbers: when a task cannot show a gain
  double min_gain = 0.05;                      // R2Numbers: the smallest gain of interest
  std::vector<R2Excluded> not_judged;          // schemes run but not judged, with the reason
  double published_gain = 0;                   // in points
  std::string published_source;
  std::vector<std::string> differences;
};

R2Settings read_r2_settings(const ClaimContext& ctx) {
  MapReader s = ctx.settings();
  R2Settings r;
  PELAB_CHECK(s.read("plain_runs_of", r.plain_runs_of), "{}: the key 'plain_runs_of' is missing",
              s.where("plain_runs_of"));
  s.read("plain_extra", r.plain_extra);
  PELAB_CHECK(s.read("randomized", r.randomized), "{}: the key 'randomized' is missing",
              s.where("randomized"));
  s.read("min_tasks", r.min_tasks);
  s.read("min_seeds", r.min_seeds);
  s.read("ceiling", r.ceiling);
  s.read("floor_margin", r.floor_margin);
  s.read("min_gain", r.min_gain);
  if (const std::optional<YAML::Node> excluded = s.take("not_judged")) {
    PELAB_CHECK(excluded->IsSequence(),
                "{}: settings.not_judged must be a list of {{scheme, reason}}", ctx.config.path);
    for (const YAML::Node& e : *excluded) {
      PELAB_CHECK(e.IsMap() && e["scheme"] && e["reason"] && e.size() == 2,
                  "{}:{}: settings.not_judged: each entry is {{scheme: ..., reason: ...}}",
                  ctx.config.path, e.Mark().line + 1);
      r.not_judged.push_back({e["scheme"].as<std::string>(), e["reason"].as<std::string>()});
    }
  }
  s.read("published_gain", r.published_gain);
  s.read("published_source", r.published_source);
  s.read("differences", r.differences);
  s.finish({"plain_runs_of", "plain_extra", "randomized", "min_tasks", "min_seeds", "ceiling",
            "floor_margin", "min_gain", "not_judged", "published_gain", "published_source",
            "differences"});
  return r;
}

// The tasks of a sweep, in its order.
std::vector<std::string> tasks_of(const TokenSweep& t) {
  std::vector<std::string> tasks;
  for (const Cell& c : cells_of(t.tokens, t.runs))
    if (std::find(tasks.begin(), tasks.end(), c.task) == tasks.end()) tasks.push_back(c.task);
  return tasks;
}

// R2's sweeps: the plain ones (R1's, reused as they are, and the plain schemes R1 lacks) and
// the randomized ones. Each task is compared at the budget R1 settled on for it: a task R1
// swept again with its larger budget at that budget, every other at the first (so a first
// budget's extra and randomized sweeps leave out the tasks R1 swept again).
struct R2Sweeps {
  std::vector<TokenSweep> plain, randomized;
  std::set<std::string> larger;  // the tasks compared at R1's larger budget
  std::vector<std::string> larger_budget;
};

R2Sweeps run_r2_sweeps(const ClaimContext& ctx, const R2Settings& s) {
  const ClaimConfig source =
      read_claim_config(claim_config_path(ctx.options.configs_dir, s.plain_runs_of),
                        s.plain_runs_of, ctx.options.quick);
  const R1Settings plain = read_r1_settings(source);
  R2Sweeps out;
  std::map<std::string, std::string> probes;
  out.plain = r1_sweeps(ctx, plain, out.larger, probes);
  out.larger_budget = plain.larger_budget;
  // The overrides of each of R1's sweeps whose runs decide a task: a first budget's keeps
  // only the tasks not swept again (an added sweep.task.name), and one that needs no such
  // narrowing keeps its overrides exactly, so that its runs keep their directories.
  std::vector<std::vector<std::string>> bases;
  for (size_t i = 0; i < out.plain.size(); ++i) {
    const std::vector<std::string>& overrides = out.plain[i].sweep.overrides;
    const std::vector<std::string> tasks = tasks_of(out.plain[i]);
    std::vector<std::string> kept;
    for (const std::string& task : tasks)
      if (i >= plain.sweeps.size() || !out.larger.count(task)) kept.push_back(task);
    if (kept.empty()) continue;
    const bool narrowed = kept.size() < tasks.size();
    bases.push_back(narrowed
                        ? concat(overrides, {fmt::format("sweep.task.name=[{}]", join(kept, ", "))})
                        : overrides);
  }
  for (const std::vector<std::string>& overrides : bases) {
    if (!s.plain_extra.empty())
      out.plain.push_back(token_sweep(ctx, plain.experiment, concat(overrides, s.plain_extra)));
    out.randomized.push_back(token_sweep(ctx, plain.experiment, concat(overrides, s.randomized)));
  }
  return out;
}

// The numbers R2 judges, per randomized scheme (in the sweeps' order), and the table of every
// (scheme, task) pair.
struct R2Measured {
  R2Numbers numbers;
  std::string table;
  nlohmann::json pairs = nlohmann::json::array();
};

// The token accuracy of guessing on a group's task: 1 / its output classes.
double chance_of(const Group& g) {
  const ExperimentConfig config =
      load_experiment((fs::path(g.first_run()) / "config.yaml").string());
  return 1.0 / static_cast<double>(make_task(config.task)->info().vocab_out());
}

R2Measured measure_r2(const R2Sweeps& sweeps, const R2Settings& s, const std::string& config_path) {
  // (scheme, task) → group; R1's larger budget's sweeps come after its first's, so they replace
  // the groups of the tasks they swept again
  std::map<std::pair<std::string, std::string>, const Group*> plain;
  for (const TokenSweep& t : sweeps.plain)
    for (const Cell& c : cells_of(t.tokens, t.runs)) plain[{c.scheme, c.task}] = c.group;
  R2Measured m;
  m.numbers.min_tasks = s.min_tasks;
  m.numbers.min_seeds = s.min_seeds;
  m.numbers.ceiling = s.ceiling;
  m.numbers.floor_margin = s.floor_margin;
  m.numbers.min_gain = s.min_gain;
  m.numbers.excluded = s.not_judged;
  m.table = "| scheme | task | plain | randomized | randomized − plain |\n|---|---|---|---|--:|\n";
  for (const TokenSweep& t : sweeps.randomized)
    for (const Cell& c : cells_of(t.tokens, t.runs)) {
      const auto p = plain.find({c.scheme, c.task});
      PELAB_CHECK(p != plain.end(), "{}: no plain {} run on {} to compare the randomized ones with",
                  config_path, c.scheme, c.task);
      const Group& a = *p->second;
      const Group& b = *c.group;
      auto scheme = std::find_if(m.numbers.schemes.begin(), m.numbers.schemes.end(),
                                 [&](const R2Scheme& x) { return x.name == c.scheme; });
      if (scheme == m.numbers.schemes.end())
        scheme = m.numbers.schemes.insert(m.numbers.schemes.end(), R2Scheme{c.scheme, {}});
      scheme->tasks.push_back({c.task, learned_of(a), learned_of(b), a.extrapolation.values,
                               b.extrapolation.values, chance_of(a)});
      // Without numbers on a side (every run of it diverged) there is no difference.
      const bool both = a.extrapolation.n > 0 && b.extrapolation.n > 0;
      const double delta = b.extrapolation.mean - a.extrapolation.mean;
      m.table += fmt::format("| {} | {} | {} | {} | {} |\n", c.scheme, c.task, protocol_cell(a),
                             protocol_cell(b), both ? fmt::format("{:+.3f}", delta) : "—");
      const nlohmann::json pa = protocol_numbers(a), pb = protocol_numbers(b);
      m.pairs.push_back({{"scheme", c.scheme},
                         {"task", c.task},
                         {"plain", pa["beyond_training"]},
                         {"plain_selected_lr", a.selected},
                         {"plain_learned", {a.learned_runs, a.trained_runs()}},
                         {"randomized", pb["beyond_training"]},
                         {"randomized_selected_lr", b.selected},
                         {"randomized_learned", {b.learned_runs, b.trained_runs()}},
                         {"delta", both ? nlohmann::json(delta) : nlohmann::json(nullptr)}});
    }
  return m;
}

// Which budget each task was compared at, for the report.
std::string budget_text(const R2Sweeps& sweeps, const std::string& plain_runs_of) {
  if (sweeps.larger.empty())
    return fmt::format("Every task is compared at {}'s first budget.", plain_runs_of);
  return fmt::format(
      "Each task is compared at the budget {0} settled on for it: {1} at {0}'s larger budget "
      "(`{2}`: no scheme learned it within the first, and {0}'s probe did), the other tasks at "
      "the first; both sides of a pair are trained alike.",
      plain_runs_of, join({sweeps.larger.begin(), sweeps.larger.end()}, ", "),
      join(sweeps.larger_budget, " "));
}

void r2(const ClaimContext& ctx, ClaimResult& r) {
  const R2Settings s = read_r2_settings(ctx);
  const R2Sweeps sweeps = run_r2_sweeps(ctx, s);
  const R2Measured m = measure_r2(sweeps, s, ctx.config.path);
  apply(judge_r2(m.numbers), r);
  std::string effects =
      "| scheme | tasks that count | randomized − plain, mean over tasks [nominal 95% interval] "
      "| effect | left out |\n|---|--:|--:|---|---|\n";
  nlohmann::json per_scheme = nlohmann::json::array();
  std::vector<double> judged_gains;
  int64_t judged_tasks = 0;
  for (const R2SchemeResult& e : r2_effects(m.numbers)) {
    const std::string effect =
        !e.not_judged.empty() ? fmt::format("{} ({})", to_string(e.effect), e.not_judged)
        : e.effect == R2Effect::Split
            ? fmt::format("{} (lowered on {})", to_string(e.effect), fmt::join(e.lowered, " and "))
            : std::string(to_string(e.effect));
    effects +=
        fmt::format("| {} | {} | {} | {} | {} |\n", e.name, e.gain.tasks, gain_text(e.gain), effect,
                    e.left_out.empty() ? "—" : fmt::format("{}", fmt::join(e.left_out, "; ")));
    if (e.effect != R2Effect::NotJudged) {
      judged_gains.push_back(e.gain.mean);
      judged_tasks += e.gain.tasks;
    }
    per_scheme.push_back({{"scheme", e.name},
                          {"effect", to_string(e.effect)},
                          {"not_judged", e.not_judged},
                          {"gain", e.gain.mean},
                          {"gain_ci", {e.gain.interval.low, e.gain.interval.high}},
                          {"tasks", e.gain.tasks},
                          {"lowered_tasks", e.lowered},
                          {"left_out", e.left_out}});
  }
  const double pelab_gain = 100 * mean_of(judged_gains);
  r.numbers = {{"pairs", m.pairs},
               {"larger_budget_tasks", sweeps.larger},
               {"schemes", per_scheme},
               {"pelab_mean_gain_points",
                judged_gains.empty() ? nlohmann::json() : nlohmann::json(pelab_gain)},
               {"published_gain_points", s.published_gain}};
  r.details = fmt::format(
      "Per scheme and task, plain and with randomized positions, under pelab's protocol: the "
      "paper's score of a run (per-token accuracy averaged unweighted over the evaluated "
      "lengths beyond training) at the learning rate in-distribution validation token "
      "accuracy selects, mean over seeds [nominal 95% bootstrap interval] and maximum, then the "
      "in-distribution token accuracy and the runs that learned the task in distribution. "
      "The plain runs are {}'s, reused. {}\n\n{}\n**Per scheme** (the interval resamples the "
      "seeds of each side within each task):\n\n{}\n"
      "**Beside the paper:** randomized − plain, in points of accuracy: published {:+.1f} ({}); "
      "pelab {} (the mean of the judged schemes' gains, {} scheme–task pairs that count).\n\n",
      s.plain_runs_of, budget_text(sweeps, s.plain_runs_of), m.table, effects, s.published_gain,
      s.published_source,
      judged_gains.empty() ? std::string("— (no scheme judged)")
                           : fmt::format("{:+.1f}", pelab_gain),
      judged_tasks);
  r.details += "**Differences from the paper's setup:**\n\n";
  for (const std::string& d : s.differences) r.details += fmt::format("- {}\n", d);
  r.details += "\n";
  for (const auto* group : {&sweeps.plain, &sweeps.randomized})
    for (const TokenSweep& t : *group)
      r.details += fmt::format("**Sequence accuracy.** {}", sweep_details(t.sweep));
}

// ---- R3 ----

// The paper's figure for one scheme on one task: mean and sample std over its 3 seeds.
struct PublishedScore {
  double mean = 0, std = 0;
};

struct R3Settings {
  ExperimentSettings experiment;
  std::string reference = "none";
  double ceiling = 0.98, floor = 0.02, margin = 0.05;    // R3Numbers
  int64_t min_seeds = 2;                                 // R3Numbers
  std::map<std::string, std::string> published_variant;  // pelab task → the paper's split
  std::map<std::string, std::map<std::string, PublishedScore>> published;  // task → scheme
  std::map<std::string, double> published_mrr;                             // scheme → MRR
  std::string published_source;
  std::vector<std::string> differences;
};

// A number of settings.<key>...: a clear error naming the file and line when it is not one.
double number_at(const YAML::Node& node, const std::string& path, const std::string& key) {
  double x = 0;
  PELAB_CHECK(node.IsScalar() && YAML::convert<double>::decode(node, x),
              "{}:{}: settings.{}: expected a number", path, node.Mark().line + 1, key);
  return x;
}

// settings.<key>: a mapping from names to what `value` reads from each entry.
template <typename T, typename ReadValue>
std::map<std::string, T> read_named(MapReader& s, const std::string& key, const std::string& path,
                                    ReadValue value) {
  std::map<std::string, T> out;
  const std::optional<YAML::Node> node = s.take(key);
  if (!node) return out;
  PELAB_CHECK(node->IsMap(), "{}:{}: settings.{} must be a mapping", path, node->Mark().line + 1,
              key);
  for (const auto& kv : *node) {
    const std::string name = kv.first.as<std::string>();
    out[name] = value(kv.second, key + "." + name);
  }
  return out;
}

R3Settings read_r3_settings(const ClaimContext& ctx) {
  const std::string& path = ctx.config.path;
  MapReader s = ctx.settings();
  R3Settings r;
  r.experiment = read_experiment_settings(s);
  s.read("reference", r.reference);
  s.read("ceiling", r.ceiling);
  s.read("floor", r.floor);
  s.read("margin", r.margin);
  s.read("min_seeds", r.min_seeds);
  r.published_variant = read_named<std::string>(
      s, "published_variant", path, [&](const YAML::Node& v, const std::string& key) {
        PELAB_CHECK(v.IsScalar(), "{}:{}: settings.{}: expected the paper's split's name", path,
                    v.Mark().line + 1, key);
        return v.as<std::string>();
      });
  r.published = read_named<std::map<std::string, PublishedScore>>(
      s, "published", path, [&](const YAML::Node& task, const std::string& key) {
        std::map<std::string, PublishedScore> scores;
        PELAB_CHECK(task.IsMap(), "{}:{}: settings.{}: expected scheme: [mean, std]", path,
                    task.Mark().line + 1, key);
        for (const auto& kv : task) {
          const std::string at = key + "." + kv.first.as<std::string>();
          PELAB_CHECK(kv.second.IsSequence() && kv.second.size() == 2,
                      "{}:{}: settings.{}: expected [mean, std]", path, kv.second.Mark().line + 1,
                      at);
          scores[kv.first.as<std::string>()] = {number_at(kv.second[0], path, at),
                                                number_at(kv.second[1], path, at)};
        }
        return scores;
      });
  r.published_mrr = read_named<double>(
      s, "published_mrr", path,
      [&](const YAML::Node& v, const std::string& key) { return number_at(v, path, key); });
  s.read("published_source", r.published_source);
  s.read("differences", r.differences);
  s.finish({"experiment", "overrides", "reference", "ceiling", "floor", "margin", "min_seeds",
            "published_variant", "published", "published_mrr", "published_source", "differences"});
  return r;
}

// The sweep's groups as R3's numbers: per task (in the sweep's order), each scheme's per-seed
// scores at the learning rate validation selects.
R3Numbers r3_numbers(const ClaimSweep& sweep, const std::vector<RunRecord>& runs,
                     const R3Settings& s) {
  R3Numbers n;
  n.reference = s.reference;
  n.ceiling = s.ceiling;
  n.floor = s.floor;
  n.margin = s.margin;
  n.min_seeds = s.min_seeds;
  for (const Cell& c : cells_of(sweep.comparison, runs)) {
    auto task = std::find_if(n.tasks.begin(), n.tasks.end(),
                             [&](const R3Task& t) { return t.task == c.task; });
    if (task == n.tasks.end()) task = n.tasks.insert(n.tasks.end(), R3Task{c.task, {}});
    task->schemes.push_back({c.scheme, learned_of(*c.group), c.group->extrapolation.values,
                             c.group->extrapolation.seeds});
  }
  return n;
}

std::string published_score_text(const R3Settings& s, const std::string& task,
                                 const std::string& scheme) {
  const auto t = s.published.find(task);
  if (t == s.published.end()) return "—";
  const auto x = t->second.find(scheme);
  return x == t->second.end() ? "—" : fmt::format("{:.3f} ± {:.3f}", x->second.mean, x->second.std);
}

// The table of every (task, scheme): the paper's figure beside pelab's protocol.
std::string r3_scores_table(const ClaimSweep& sweep, const std::vector<RunRecord>& runs,
                            const R3Settings& s, nlohmann::json& numbers) {
  std::string table =
      "| task (the paper's split) | scheme | published: exact match, mean ± std over 3 seeds | "
      "pelab: exact match beyond training, mean [nominal 95% interval], max; in distribution |\n"
      "|---|---|--:|---|\n";
  for (const Cell& c : cells_of(sweep.comparison, runs)) {
    const auto variant = s.published_variant.find(c.task);
    table += fmt::format("| {} ({}) | {} | {} | {} |\n", c.task,
                         variant == s.published_variant.end() ? "—" : variant->second, c.scheme,
                         published_score_text(s, c.task, c.scheme), protocol_cell(*c.group));
    const Group& g = *c.group;
    nlohmann::json x = protocol_numbers(g);
    x["task"] = c.task;
    x["scheme"] = c.scheme;
    numbers.push_back(std::move(x));
  }
  return table;
}

void r3(const ClaimContext& ctx, ClaimResult& r) {
  const R3Settings s = read_r3_settings(ctx);
  const ClaimSweep sweep = run_claim_sweep(ctx, s.experiment.experiment, s.experiment.overrides);
  const std::vector<RunRecord> runs =
      find_runs({(fs::path(ctx.options.out) / sweep.runs_dir).string()});
  const R3Numbers n = r3_numbers(sweep, runs, s);
  apply(judge_r3(n), r);

  nlohmann::json scores = nlohmann::json::array(), comparisons = nlohmann::json::array(),
                 mrr = nlohmann::json::array();
  const std::string score_table = r3_scores_table(sweep, runs, s, scores);
  std::string comparison_table = fmt::format(
      "| task | {} against | {} − other [nominal 95% interval] | standing | left out because |\n"
      "|---|---|--:|---|---|\n",
      s.reference, s.reference);
  for (const R3Comparison& c : r3_comparisons(n)) {
    comparison_table +=
        fmt::format("| {} | {} | {} | {} | {} |\n", c.task, c.other, gain_text(c.difference),
                    to_string(c.standing), c.left_out.empty() ? "—" : c.left_out);
    comparisons.push_back(
        {{"task", c.task},
         {"other", c.other},
         {"difference", c.difference.mean},
         {"difference_ci", {c.difference.interval.low, c.difference.interval.high}},
         {"standing", to_string(c.standing)},
         {"left_out", c.left_out}});
  }
  std::string mrr_table =
      "| scheme | pelab MRR (its tasks × seeds) | published MRR (17 splits × 3 seeds) |\n"
      "|---|--:|--:|\n";
  for (const auto& [scheme, value] : mean_reciprocal_rank(n.tasks)) {
    const auto published = s.published_mrr.find(scheme);
    mrr_table += fmt::format(
        "| {} | {} | {} |\n", scheme, std::isnan(value) ? "—" : fmt::format("{:.3f}", value),
        published == s.published_mrr.end() ? "—" : fmt::format("{:.3f}", published->second));
    mrr.push_back(
        {{"scheme", scheme},
         {"pelab", std::isnan(value) ? nlohmann::json() : nlohmann::json(value)},
         {"published", published == s.published_mrr.end() ? nlohmann::json()
                                                          : nlohmann::json(published->second)}});
  }
  // What the rule says of the paper's own means (taken as exact: it gives no per-seed values).
  std::vector<std::pair<std::string, std::vector<std::pair<std::string, double>>>> published;
  for (const auto& [task, schemes] : s.published) {
    published.push_back({task, {}});
    for (const auto& [scheme, score] : schemes)
      published.back().second.push_back({scheme, score.mean});
  }
  const std::vector<R3PointComparison> points =
      r3_point_comparisons(s.reference, published, s.margin);
  std::vector<std::string> point_texts;
  nlohmann::json published_comparisons = nlohmann::json::array();
  for (const R3PointComparison& c : points) {
    point_texts.push_back(fmt::format("{}, {} {} ({:+.3f})", c.task, standing_phrase(c.standing),
                                      c.other, c.difference));
    published_comparisons.push_back({{"task", c.task},
                                     {"other", c.other},
                                     {"difference", c.difference},
                                     {"standing", to_string(c.standing)}});
  }
  const std::string published_verdict = to_string(r3_point_verdict(points));
  r.numbers = {{"reference", s.reference},
               {"scores", scores},
               {"comparisons", comparisons},
               {"published_comparisons", published_comparisons},
               {"published_verdict", published_verdict},
               {"mean_reciprocal_rank", mrr}};
  r.details = fmt::format(
      "Score of a run: exact match of the greedily generated answer, averaged unweighted over "
      "the evaluated lengths beyond training (the paper's is over its test examples, lengths "
      "21..40 together). pelab's columns are its protocol: "
      "per scheme and task the learning rate that in-distribution validation selects, the mean "
      "over seeds [nominal 95% bootstrap interval] and the maximum, then the in-distribution exact "
      "match and how many runs learned the task in distribution (compare's rule). Published "
      "figures: {}.\n\n{}\n**{} against each scheme** (the interval resamples each side's "
      "seeds):\n\n{}\n**The same rule on the paper's own figures** (its means taken as exact, "
      "for want of per-seed values: a difference within ±{:.2f} is level): {}; by the rule's "
      "count, **{}**.\n\n**Mean reciprocal rank**, shown and not judged: one query per task "
      "and seed, the schemes ranked by score, ties sharing their ranks (the paper breaks ties "
      "by order); the paper's is over 17 splits of many tasks, of which copy and reverse are a "
      "small part.\n\n{}\n",
      s.published_source, score_table, s.reference, comparison_table, s.margin,
      points.empty() ? std::string("no published figures")
                     : fmt::format("{}", fmt::join(point_texts, "; ")),
      published_verdict, mrr_table);
  r.details += "**Differences from the paper's setup:**\n\n";
  for (const std::string& d : s.differences) r.details += fmt::format("- {}\n", d);
  r.details += fmt::format("\n**Sequence accuracy.** {}", sweep_details(sweep));
}

}  // namespace

void add_published_claims(std::vector<ClaimDef>& defs) {
  defs.push_back({"R1", r1});
  defs.push_back({"R2", r2});
  defs.push_back({"R3", r3});
}

}  // namespace pelab::claims
