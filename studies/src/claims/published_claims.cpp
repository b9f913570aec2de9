// The published reproductions, each beside the paper's own figures:
//   R1  Delétang et al. 2023: Transformers do not solve the tasks beyond the training lengths
//   R2  Ruoss et al. 2023: randomized positions raise accuracy beyond the training lengths
//   R3  Kazemnejad et al. 2023: in a decoder, no positional encoding length-generalises at
//       least as well as the explicit ones
// R1 and R2 read their runs in their papers' metric, per-token accuracy averaged over the
// test lengths beyond training. Their runs are the chomsky suite's (configs/suites/): the runs
// `pelab suite run chomsky` makes, in its directory, so that the suite and the claims spend
// one budget; R2 reads R1's settings for the suite and the tasks. R3 reads exact match of
// greedy generation (the lm layout), averaged over the test lengths beyond training, as its
// paper does.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <list>
#include <map>
#include <optional>
#include <set>

#include "claims/claim.h"
#include "pelab/claims/published_verdicts.h"
#include "pelab/config/experiment.h"
#include "pelab/core/error.h"
#include "pelab/core/strings.h"
#include "pelab/data/task.h"
#include "pelab/suite/suite.h"
#include "pelab/suite/suite_report.h"
#include "pelab/sweep/sweep.h"

namespace pelab::claims {

namespace {

namespace fs = std::filesystem;

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

// `text`, a figure of the group's comparison metric `metric`, with the other accuracy's mean
// beside it, sequence accuracy left of the slash: a harsh metric tells apart from a failure.
std::string with_other_accuracy(Metric metric, const std::string& text, const Stat& sequence,
                                const Stat& token) {
  return metric == Metric::token_accuracy ? with_sequence(sequence, text) : with_token(text, token);
}

// "0.02 / 0.55 [0.52, 0.58], max 0.57; in 0.80 / 0.99 (3/3 learned)": a group under the
// protocol, its figures in `metric` with the other accuracy's mean beside them (sequence /
// token; "—" for the numbers of a group whose every run diverged).
std::string protocol_cell(const Group& g, Metric metric) {
  const Stat& e = g.extrapolation;
  const Stat& in = g.in_distribution;
  return fmt::format("{}, max {}; in {} ({}/{} learned)",
                     with_other_accuracy(metric, format_interval(e), g.extrapolation_sequence,
                                         g.extrapolation_token),
                     format_number(e, e.max),
                     with_other_accuracy(metric, format_number(in, in.mean),
                                         g.in_distribution_sequence, g.in_distribution_token),
                     g.learned_runs, g.trained_runs());
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

// ---- the suite's runs (R1, R2) ----

// A run of a suite plan: its axis value for `key` ("task", "scheme", "training.lr", "seed").
std::string plan_value(const PlannedRun& p, const std::string& key) {
  for (const auto& [k, v] : p.run.values)
    if (k == key) return v;
  return "";
}

bool contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// The suite a claim takes its runs from, and where they live: `pelab suite run`'s own
// directory, so that whichever of the two runs first trains them and the other reuses them.
// A quick run takes a smaller budget (settings.quick_budget, which a full run ignores: its
// budget is the suite's) into a directory of its own under OUT, which the suite's runs never
// share.
struct SuiteSource {
  Suite suite;
  std::string dir;
};

// settings.quick_budget: the suite's budget keys a quick run replaces.
void apply_quick_budget(const YAML::Node& node, const std::string& path, Suite& suite) {
  MapReader b(node, path, "settings.quick_budget");
  SuiteBudget& g = suite.budget;
  b.read("steps", g.steps);
  b.read("seeds", g.seeds);
  b.read("lrs", g.lrs);
  std::vector<int64_t> range;
  if (b.read("training_lengths", range)) {
    if (range.size() != 2) b.fail("training_lengths", "expected [MIN, MAX]");
    g.min_length = range[0];
    g.max_length = range[1];
  }
  b.read("evaluation_lengths", g.evaluation_lengths);
  b.read("examples", g.examples);
  b.finish({"steps", "seeds", "lrs", "training_lengths", "evaluation_lengths", "examples"});
}

SuiteSource suite_source(const ClaimContext& ctx, const std::string& name,
                         const std::optional<YAML::Node>& quick_budget) {
  SuiteSource s;
  s.suite = load_suite(find_suite(name));
  s.dir = default_suite_dir(s.suite);
  if (ctx.options.quick) {
    if (quick_budget) apply_quick_budget(*quick_budget, ctx.config.path, s.suite);
    s.dir = (fs::path(ctx.options.out) / "runs" / ("suite-" + s.suite.name + "-quick")).string();
  }
  return s;
}

// The same suite at another step cap, seeds and learning rates (a probe, or a larger cap), in
// a directory of its own beside the suite's: <dir>-steps<N>.
SuiteSource at_steps(const SuiteSource& base, int64_t steps, std::vector<std::string> seeds,
                     std::vector<std::string> lrs) {
  SuiteSource s = base;
  s.suite.budget.steps = steps;
  s.suite.budget.seeds = std::move(seeds);
  s.suite.budget.lrs = std::move(lrs);
  s.dir = fmt::format("{}-steps{}", base.dir, steps);
  return s;
}

void check_suite_tasks(const ClaimConfig& config, const Suite& suite, const std::string& key,
                       const std::vector<std::string>& tasks) {
  std::vector<std::string> names;
  for (const SuiteTask& t : suite.tasks) names.push_back(t.name);
  for (const std::string& t : tasks)
    PELAB_CHECK(contains(names, t),
                "{}: settings.{}: '{}' is not a task of the suite {} (valid: {})", config.path, key,
                t, suite.name, join(names, ", "));
}

// A claim's runs of a suite: the runs `pelab suite run` makes for these tasks and columns
// (scheme labels, "+randomized" for a randomized column), trained if not finished, each
// (task, column) compared by compare's rules in token accuracy (the learning rate that
// in-distribution validation selects).
struct SuiteCells {
  SweepPlan plan;
  SuiteTable table;
  std::string runs;  // the directory, relative to OUT, for claims.json
  const Group* group(const std::string& task, const std::string& label) const {
    const auto t = std::find(table.tasks.begin(), table.tasks.end(), task);
    if (t == table.tasks.end()) return nullptr;
    const auto& row = table.cells[static_cast<size_t>(t - table.tasks.begin())];
    for (size_t i = 0; i < table.columns.size(); ++i)
      if (table.columns[i].label == label && row[i].present) return &row[i].group;
    return nullptr;
  }
};

SuiteCells suite_cells(const ClaimContext& ctx, const SuiteSource& source,
                       const std::vector<std::string>& tasks,
                       const std::vector<std::string>& labels) {
  const std::vector<SuiteScheme> schemes = suite_schemes(source.suite, labels);
  SuiteCells c;
  c.plan = plan_suite(source.suite, schemes, source.dir, {}, {});
  std::erase_if(c.plan.runs,
                [&](const PlannedRun& p) { return !contains(tasks, plan_value(p, "task")); });
  PELAB_CHECK(!c.plan.runs.empty(), "{}: no run of the suite {} for tasks {} and schemes {}",
              ctx.config.path, source.suite.name, join(tasks, ", "), join(labels, ", "));
  if (ctx.options.jobs > 0) c.plan.jobs = ctx.options.jobs;
  SweepOptions o;
  o.progress = false;
  o.report_seconds = 120;
  const SweepResult result = run_sweep_plan(c.plan, o);
  c.table = suite_table(source.suite, c.plan, schemes, "", Metric::token_accuracy);
  nlohmann::json diverged = nlohmann::json::array();
  for (const auto& row : c.table.cells)
    for (const SuiteCell& cell : row)
      for (const std::string& d : cell.group.diverged)
        diverged.push_back(fs::relative(d, ctx.options.out).string());
  const bool all_ran = !result.stopped && result.interrupted == 0 && result.not_started == 0;
  PELAB_CHECK(all_ran && result.failed == static_cast<int64_t>(diverged.size()),
              "{}: the suite's runs did not finish ({}); see {}", ctx.config.id, result.tally(),
              source.dir);
  c.runs = fs::relative(fs::absolute(source.dir), fs::absolute(ctx.options.out)).string();
  ctx.experiments.push_back({{"suite", source.suite.path},
                             {"tasks", tasks},
                             {"schemes", labels},
                             {"steps", source.suite.budget.steps},
                             {"runs", c.runs},
                             {"diverged", diverged}});
  return c;
}

// The completed runs of the cells with the paper's score, per task; `label_suffix` marks
// runs of a probe (" (20000 steps)").
void add_scored_runs(const SuiteCells& c, const std::string& label_suffix,
                     std::map<std::string, std::vector<ScoredRun>>& by_task) {
  for (const PlannedRun& p : c.plan.runs) {
    const RunRecord r = read_run(p.run.dir);
    if (r.status != "completed") continue;
    std::vector<LengthScore> lengths, sequence_lengths;
    for (const RunRecord::Point& x : r.eval) {
      lengths.push_back({x.length, x.token_accuracy, x.in_training});
      sequence_lengths.push_back({x.length, x.sequence_accuracy, x.in_training});
    }
    by_task[plan_value(p, "task")].push_back(
        {plan_value(p, "scheme") + label_suffix, plan_value(p, "training.lr"), r.seed,
         beyond_training_average(lengths), in_training_average(lengths),
         beyond_training_average(sequence_lengths)});
  }
}

// The suite's table narrowed to `tasks`, as Markdown (max over seeds · mean [interval]).
std::string suite_cells_markdown(const SuiteCells& c, const std::vector<std::string>& tasks) {
  SuiteTable t = c.table;
  t.tasks.clear();
  t.cells.clear();
  for (size_t i = 0; i < c.table.tasks.size(); ++i)
    if (contains(tasks, c.table.tasks[i])) {
      t.tasks.push_back(c.table.tasks[i]);
      t.cells.push_back(c.table.cells[i]);
    }
  return fmt::format("**The suite's runs** (`{}`, relative to the report). {}\n", c.runs,
                     suite_markdown(t));
}

// The differences the suite's budget makes from the paper's: derived from the suite's file,
// so that they follow it when its budget is tuned.
std::vector<std::string> suite_budget_differences(const SuiteCells& c, const Suite& suite,
                                                  const std::string& paper) {
  const PlannedRun& first = c.plan.runs.front();
  const ExperimentConfig config = parse_experiment(first.config_yaml, first.run.name, {}, "");
  const double share =
      100.0 * static_cast<double>(suite.budget.steps * config.training.batch_size) / (1e6 * 128);
  std::vector<int64_t> beyond;
  for (int64_t n : config.evaluation.lengths)
    if (n > config.task.max_length) beyond.push_back(n);
  return {
      fmt::format("Budget (the suite's, `{}`): {} trains 1,000,000 steps at batch 128; pelab at "
                  "most {} steps at batch {} (stop_when ends a run once it has learned), about "
                  "{:.3g}% of its examples.",
                  fs::path(suite.path).filename().string(), paper, suite.budget.steps,
                  config.training.batch_size, share),
      fmt::format("Learning rates: {} sweeps {{1e-4, 3e-4, 5e-4}}; pelab {{{}}}, the one "
                  "in-distribution validation selects kept per scheme and task.",
                  paper, join(suite.budget.lrs, ", ")),
      fmt::format("Seeds: {} has 10 initialisation seeds; pelab {}.", paper,
                  suite.budget.seeds.size()),
      fmt::format("Test lengths: {} averages over every length {} to 500, 512 sequences each; "
                  "pelab over {}, {} sequences each. Shorter test lengths are easier, so this "
                  "leans pelab's scores up, towards 'solved'.",
                  paper, config.task.max_length + 1, fmt::join(beyond, ", "),
                  config.evaluation.examples)};
}

// ---- R1 ----

// A longer probe of a task, fixed before the runs: its `schemes` best schemes by
// in-distribution token accuracy in the suite's runs, each at its selected learning rate and
// the suite's first seed, trained to `steps`.
struct R1Probe {
  std::string task;
  int64_t steps = 0;
  int64_t schemes = 1;
};

// R1's settings; R2 reads them too, to name the same runs.
struct R1Settings {
  std::string suite;
  std::vector<std::string> tasks, controls, schemes;
  std::map<std::string, double> published;       // task → the paper's best, in percent
  std::vector<std::string> published_confirmed;  // the tasks whose figure is in its text
  std::string published_source;
  double solved = 0.90;
  double min_in_distribution = 0.95;  // R1Numbers: the best run must have learned this well
  int64_t min_tasks = 1;              // R1Numbers: judged tasks the claim needs
  std::vector<R1Probe> probes;
  std::vector<std::string> differences;  // beside those the suite's budget makes
  std::optional<YAML::Node> quick_budget;
};

std::vector<R1Probe> read_probes(const YAML::Node& node, const std::string& path) {
  PELAB_CHECK(node.IsSequence(),
              "{}:{}: settings.probes: expected a list of {{task, steps, "
              "schemes}}",
              path, node.Mark().line + 1);
  std::vector<R1Probe> probes;
  for (const YAML::Node& e : node) {
    MapReader m(e, path, "settings.probes");
    R1Probe p;
    PELAB_CHECK(m.read("task", p.task) && m.read("steps", p.steps) && p.steps > 0,
                "{}:{}: settings.probes: each entry names its task and steps (> 0)", path,
                e.Mark().line + 1);
    m.read("schemes", p.schemes);
    m.finish({"task", "steps", "schemes"});
    probes.push_back(p);
  }
  return probes;
}

R1Settings read_r1_settings(const ClaimConfig& config) {
  MapReader s(config.settings, config.path, "settings");
  R1Settings r;
  PELAB_CHECK(s.read("suite", r.suite), "{}: the key 'suite' is missing", s.where("suite"));
  PELAB_CHECK(s.read("tasks", r.tasks) && !r.tasks.empty(), "{}: the tasks the claim judges",
              s.where("tasks"));
  s.read("controls", r.controls);
  PELAB_CHECK(s.read("schemes", r.schemes) && !r.schemes.empty(),
              "{}: the schemes (the suite's labels) whose runs the claim reads",
              s.where("schemes"));
  if (const std::optional<YAML::Node> published = s.take("published")) {
    PELAB_CHECK(published->IsMap(), "{}: settings.published maps a task to the paper's figure",
                config.path);
    for (const auto& kv : *published)
      r.published[kv.first.as<std::string>()] = kv.second.as<double>();
  }
  s.read("published_confirmed", r.published_confirmed);
  s.read("published_source", r.published_source);
  s.read("solved", r.solved);
  s.read("min_in_distribution", r.min_in_distribution);
  s.read("min_tasks", r.min_tasks);
  if (const std::optional<YAML::Node> probes = s.take("probes"))
    r.probes = read_probes(*probes, config.path);
  s.read("differences", r.differences);
  r.quick_budget = s.take("quick_budget");
  s.finish({"suite", "tasks", "controls", "schemes", "published", "published_confirmed",
            "published_source", "solved", "min_in_distribution", "min_tasks", "probes",
            "differences", "quick_budget"});
  return r;
}

// "52.0 (not confirmed)", "61.9" (confirmed in the paper's text), or "—".
std::string published_text(const R1Settings& s, const std::string& task) {
  const auto it = s.published.find(task);
  if (it == s.published.end()) return "—";
  return fmt::format("{:.1f}{}", it->second,
                     contains(s.published_confirmed, task) ? "" : " (not confirmed)");
}

// R1's probes: per probe, its schemes' runs at the larger step cap. Returns what was probed,
// for the report, and adds the probes' runs (scheme "rotary (20000 steps)") to `scored` and
// their groups to `probe_groups`.
std::string run_r1_probes(const ClaimContext& ctx, const R1Settings& s, const SuiteSource& source,
                          const SuiteCells& cells,
                          std::map<std::string, std::vector<ScoredRun>>& scored,
                          std::map<std::string, std::map<std::string, const Group*>>& probe_groups,
                          std::list<SuiteCells>& probe_cells) {
  std::vector<std::string> texts;
  for (const R1Probe& probe : s.probes) {
    if (probe.steps <= source.suite.budget.steps) {
      texts.push_back(fmt::format("{}: not run (the suite's cap, {} steps, is already at least {})",
                                  probe.task, source.suite.budget.steps, probe.steps));
      continue;
    }
    std::vector<std::pair<double, std::string>> ranked;  // in-distribution accuracy, scheme
    for (const std::string& scheme : s.schemes)
      if (const Group* g = cells.group(probe.task, scheme); g && g->in_distribution.n > 0)
        ranked.push_back({g->in_distribution.mean, scheme});
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    if (static_cast<int64_t>(ranked.size()) > probe.schemes)
      ranked.resize(static_cast<size_t>(probe.schemes));
    const std::string suffix = fmt::format(" ({} steps)", probe.steps);
    for (const auto& [accuracy, scheme] : ranked) {
      const Group& g = *cells.group(probe.task, scheme);
      const std::string lr = g.selected.empty() ? source.suite.budget.lrs.front() : g.selected;
      const SuiteSource at =
          at_steps(source, probe.steps, {source.suite.budget.seeds.front()}, {lr});
      probe_cells.push_back(suite_cells(ctx, at, {probe.task}, {scheme}));
      const SuiteCells& p = probe_cells.back();
      add_scored_runs(p, suffix, scored);
      const Group* learned = p.group(probe.task, scheme);
      if (learned) probe_groups[probe.task][scheme + suffix] = learned;
      texts.push_back(
          fmt::format("{}: {} (in-distribution {:.3f} in the suite's runs), lr {}, seed {}: {}",
                      probe.task, scheme, accuracy, lr, source.suite.budget.seeds.front(),
                      learned && learned->all_learned() ? "learned it in distribution"
                                                        : "did not learn it in distribution"));
    }
  }
  if (texts.empty()) return "";
  return "**Probes** (settings.probes, fixed before the runs: the best schemes by in-distribution "
         "accuracy in the suite's runs, one seed, a larger step cap; their runs are candidates "
         "for the task's best and count for its precondition): " +
         join(texts, "; ") + ".\n\n";
}

// "2.0" (a share in percent), or "—" for NaN (no number).
std::string percent_or_absent(double x) {
  return std::isnan(x) ? "—" : fmt::format("{:.1f}", 100 * x);
}

// One task's row of R1's table and its numbers.
R1Task r1_task(const std::string& task, const R1Settings& s, const SuiteCells& cells,
               const std::map<std::string, std::vector<ScoredRun>>& scored,
               const std::map<std::string, const Group*>& probes, std::string& table,
               nlohmann::json& per_task) {
  const auto runs = scored.find(task);
  R1Task t{task,
           {},
           best_over_sweep(runs == scored.end() ? std::vector<ScoredRun>{} : runs->second,
                           s.min_in_distribution)};
  table += t.best.runs == 0
               ? fmt::format("| {} | {} | — (no run learned) |", task, published_text(s, task))
               : fmt::format("| {} | {} | {} / {:.1f} ({}, {}, {}) |", task,
                             published_text(s, task), percent_or_absent(t.best.sequence_score),
                             100 * t.best.score, t.best.scheme, t.best.lr, t.best.seed);
  nlohmann::json protocol = nlohmann::json::object();
  for (const std::string& scheme : s.schemes) {
    const Group* g = cells.group(task, scheme);
    if (!g) {
      table += " — |";
      continue;
    }
    if (g->all_learned()) t.learned_schemes.push_back(scheme);
    table += fmt::format(" {} |", protocol_cell(*g, Metric::token_accuracy));
    protocol[scheme] = protocol_numbers(*g);
  }
  for (const auto& [label, g] : probes) {
    if (g->all_learned()) t.learned_schemes.push_back(label);
    protocol[label] = protocol_numbers(*g);
  }
  table += "\n";
  per_task.push_back({{"task", task},
                      {"control", contains(s.controls, task)},
                      {"published", s.published.count(task) ? nlohmann::json(s.published.at(task))
                                                            : nlohmann::json()},
                      {"published_confirmed", contains(s.published_confirmed, task)},
                      {"best", t.best.score},
                      {"best_sequence_accuracy", t.best.sequence_score},
                      {"best_scheme", t.best.scheme},
                      {"best_lr", t.best.lr},
                      {"best_seed", t.best.seed},
                      {"best_in_distribution", t.best.in_distribution},
                      {"learned_schemes", t.learned_schemes},
                      {"protocol", protocol}});
  return t;
}

void r1(const ClaimContext& ctx, ClaimResult& r) {
  const R1Settings s = read_r1_settings(ctx.config);
  const SuiteSource source = suite_source(ctx, s.suite, s.quick_budget);
  check_suite_tasks(ctx.config, source.suite, "tasks", s.tasks);
  check_suite_tasks(ctx.config, source.suite, "controls", s.controls);
  const std::vector<std::string> tasks = concat(s.tasks, s.controls);
  const SuiteCells cells = suite_cells(ctx, source, tasks, s.schemes);
  std::map<std::string, std::vector<ScoredRun>> scored;
  add_scored_runs(cells, "", scored);
  std::map<std::string, std::map<std::string, const Group*>> probe_groups;
  std::list<SuiteCells> probe_cells;  // a list: the groups point into its elements
  const std::string probes =
      run_r1_probes(ctx, s, source, cells, scored, probe_groups, probe_cells);

  R1Numbers n;
  n.solved = s.solved;
  n.min_in_distribution = s.min_in_distribution;
  n.min_tasks = s.min_tasks;
  const std::vector<std::string> budget = suite_budget_differences(cells, source.suite, "R1");
  n.budget = budget.front() +
             " A task \"not solved\" here may be undertrained rather than "
             "beyond a Transformer's reach.";
  nlohmann::json per_task = nlohmann::json::array();
  std::string table =
      "| task | published (%) | pelab best (%, sequence / token: scheme, lr, seed) |";
  std::string rule = "|---|--:|---|";
  for (const std::string& scheme : s.schemes) {
    table += fmt::format(" {} (protocol, sequence / token) |", scheme);
    rule += "---|";
  }
  table += fmt::format("\n{}\n", rule);
  for (const std::string& task : tasks) {
    R1Task t = r1_task(task, s, cells, scored, probe_groups[task], table, per_task);
    (contains(s.controls, task) ? n.controls : n.tasks).push_back(std::move(t));
  }
  apply(judge_r1(n), r);
  r.numbers = {{"solved", s.solved},
               {"min_in_distribution", s.min_in_distribution},
               {"suite", source.suite.name},
               {"suite_fingerprint", source.suite.fingerprint()},
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
      "score, then the in-distribution token accuracy and how many runs learned the task in "
      "distribution (compare's rule). Left of each slash stands the same score in sequence "
      "accuracy (the mean over seeds; the best run's for pelab best), shown, not judged: it "
      "tells a harsh metric apart from a failure. The runs are the suite {}'s (`pelab suite run "
      "{}` trains the same ones in the same directory). Positive controls: {}. Published "
      "figures: {}.\n\n{}\n",
      s.min_in_distribution, source.suite.name, source.suite.name,
      s.controls.empty() ? std::string("none") : join(s.controls, ", "), s.published_source, table);
  r.details += probes;
  r.details += "**Differences from the paper's setup:**\n\n";
  for (const std::string& d : concat(budget, s.differences)) r.details += fmt::format("- {}\n", d);
  r.details += "\n" + suite_cells_markdown(cells, tasks);
}

// ---- R2 ----

// "+0.120 [+0.050, +0.190]", or "—" when no task counts.
std::string gain_text(const Gain& g) {
  if (std::isnan(g.mean)) return "—";
  return fmt::format("{:+.3f} [{:+.3f}, {:+.3f}]", g.mean, g.interval.low, g.interval.high);
}

struct R2Settings {
  std::string plain_runs_of;                   // the claim whose suite and tasks R2 reads (R1)
  int64_t larger_cap = 0;                      // the randomized side's larger step cap (0: none)
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
  s.read("larger_cap", r.larger_cap);
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
  s.finish({"plain_runs_of", "larger_cap", "min_tasks", "min_seeds", "ceiling", "floor_margin",
            "min_gain", "not_judged", "published_gain", "published_source", "differences"});
  return r;
}

constexpr const char* kRandomized = "+randomized";

// R2's runs: the suite's runs of R1's tasks and controls for each of the suite's randomized
// schemes, plain and randomized, and those trained again at the larger cap.
struct R2Runs {
  SuiteSource source;
  std::vector<std::string> tasks, schemes;  // schemes: the suite's randomized ones, plain names
  SuiteCells cells;
  std::list<SuiteCells> larger;  // at settings.larger_cap (a list: the groups point into it)
  std::map<std::pair<std::string, std::string>, const Group*> larger_groups;  // (task, scheme)
  std::vector<std::string> larger_texts;  // what the larger cap did, per task
  // The randomized group of (task, scheme): the larger cap's if it was trained again.
  const Group* randomized(const std::string& task, const std::string& scheme) const {
    const auto it = larger_groups.find({task, scheme});
    return it != larger_groups.end() ? it->second : cells.group(task, scheme + kRandomized);
  }
};

// The larger cap's rule for one task: the schemes whose plain runs learned it in distribution
// but whose randomized runs did not all learn it within the suite's cap are candidates (any
// other cannot count, or already learned: stop_when ended those runs where a larger cap would
// have, as the schedule is constant); the candidate with the best randomized in-distribution
// accuracy is probed (its selected lr, the first seed) at the larger cap, and only if the probe
// learns are the candidates' randomized runs trained again at that cap.
void r2_larger_cap(const ClaimContext& ctx, const R2Settings& s, const std::string& task,
                   R2Runs& out) {
  std::vector<std::pair<double, std::string>> candidates;
  for (const std::string& scheme : out.schemes) {
    const Group* plain = out.cells.group(task, scheme);
    const Group* randomized = out.cells.group(task, scheme + kRandomized);
    if (plain && plain->all_learned() && randomized && !randomized->all_learned())
      candidates.push_back(
          {randomized->in_distribution.n > 0 ? randomized->in_distribution.mean : 0.0, scheme});
  }
  if (candidates.empty()) return;
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  const std::string probed = candidates.front().second;
  const Group& g = *out.cells.group(task, probed + kRandomized);
  const std::string seed = out.source.suite.budget.seeds.front();
  const std::string lr = g.selected.empty() ? out.source.suite.budget.lrs.front() : g.selected;
  out.larger.push_back(suite_cells(ctx, at_steps(out.source, s.larger_cap, {seed}, {lr}), {task},
                                   {probed + kRandomized}));
  const Group* probe = out.larger.back().group(task, probed + kRandomized);
  const bool learned = probe && probe->all_learned();
  std::vector<std::string> labels;
  for (const auto& c : candidates) labels.push_back(c.second + kRandomized);
  out.larger_texts.push_back(
      fmt::format("{}: probe {}{} (lr {}, seed {}) {}{}", task, probed, kRandomized, lr, seed,
                  learned ? "learned it; trained again: " : "did not learn it; not trained again",
                  learned ? join(labels, ", ") : ""));
  if (!learned) return;
  const SuiteSource at = at_steps(out.source, s.larger_cap, out.source.suite.budget.seeds,
                                  out.source.suite.budget.lrs);
  out.larger.push_back(suite_cells(ctx, at, {task}, labels));
  for (const auto& c : candidates)
    if (const Group* again = out.larger.back().group(task, c.second + kRandomized))
      out.larger_groups[{task, c.second}] = again;
}

R2Runs run_r2(const ClaimContext& ctx, const R2Settings& s) {
  const ClaimConfig source_config =
      read_claim_config(claim_config_path(ctx.options.configs_dir, s.plain_runs_of),
                        s.plain_runs_of, ctx.options.quick);
  const R1Settings plain = read_r1_settings(source_config);
  R2Runs out;
  out.source = suite_source(ctx, plain.suite, plain.quick_budget);
  out.tasks = concat(plain.tasks, plain.controls);
  check_suite_tasks(source_config, out.source.suite, "tasks", out.tasks);
  out.schemes = out.source.suite.randomized;
  PELAB_CHECK(!out.schemes.empty(), "{}: the suite {} has no randomized schemes", ctx.config.path,
              out.source.suite.name);
  std::vector<std::string> labels = out.schemes;
  for (const std::string& scheme : out.schemes) labels.push_back(scheme + kRandomized);
  out.cells = suite_cells(ctx, out.source, out.tasks, labels);
  if (s.larger_cap > out.source.suite.budget.steps)
    for (const std::string& task : out.tasks) r2_larger_cap(ctx, s, task, out);
  return out;
}

// The numbers R2 judges, per randomized scheme (in the suite's order), and the table of every
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

R2Measured measure_r2(const R2Runs& runs, const R2Settings& s) {
  R2Measured m;
  m.numbers.min_tasks = s.min_tasks;
  m.numbers.min_seeds = s.min_seeds;
  m.numbers.ceiling = s.ceiling;
  m.numbers.floor_margin = s.floor_margin;
  m.numbers.min_gain = s.min_gain;
  m.numbers.excluded = s.not_judged;
  m.table =
      "| scheme | task | plain (sequence / token) | randomized (sequence / token) | randomized − "
      "plain |\n|---|---|---|---|--:|\n";
  for (const std::string& scheme : runs.schemes) {
    m.numbers.schemes.push_back({scheme, {}});
    for (const std::string& task : runs.tasks) {
      const Group* plain = runs.cells.group(task, scheme);
      const Group* randomized = runs.randomized(task, scheme);
      if (!plain || !randomized) continue;
      const Group& a = *plain;
      const Group& b = *randomized;
      m.numbers.schemes.back().tasks.push_back({task, learned_of(a), learned_of(b),
                                                a.extrapolation.values, b.extrapolation.values,
                                                chance_of(a)});
      // Without numbers on a side (every run of it diverged) there is no difference.
      const bool both = a.extrapolation.n > 0 && b.extrapolation.n > 0;
      const double delta = b.extrapolation.mean - a.extrapolation.mean;
      const bool larger = runs.larger_groups.count({task, scheme}) > 0;
      m.table += fmt::format(
          "| {} | {} | {} | {}{} | {} |\n", scheme, task, protocol_cell(a, Metric::token_accuracy),
          protocol_cell(b, Metric::token_accuracy), larger ? " (larger cap)" : "",
          both ? fmt::format("{:+.3f}", delta) : "—");
      const nlohmann::json pa = protocol_numbers(a), pb = protocol_numbers(b);
      m.pairs.push_back({{"scheme", scheme},
                         {"task", task},
                         {"plain", pa["beyond_training"]},
                         {"plain_selected_lr", a.selected},
                         {"plain_learned", {a.learned_runs, a.trained_runs()}},
                         {"randomized", pb["beyond_training"]},
                         {"randomized_selected_lr", b.selected},
                         {"randomized_learned", {b.learned_runs, b.trained_runs()}},
                         {"randomized_larger_cap", larger},
                         {"delta", both ? nlohmann::json(delta) : nlohmann::json(nullptr)}});
    }
  }
  return m;
}

// What the larger cap did, for the report.
std::string larger_cap_text(const R2Runs& runs, const R2Settings& s) {
  if (s.larger_cap <= runs.source.suite.budget.steps)
    return fmt::format(
        "Every pair is compared at the suite's cap ({} steps; settings.larger_cap "
        "{} is not above it).",
        runs.source.suite.budget.steps, s.larger_cap);
  return fmt::format(
      "**Larger cap** (settings.larger_cap, fixed before the runs): for each task, the "
      "randomized schemes whose plain runs learned it within the suite's cap of {} steps but "
      "whose randomized runs did not were probed at {} steps (the best of them by "
      "in-distribution accuracy, one run) and, if the probe learned, trained again at that "
      "cap; the plain runs stay the suite's (they learned and stopped at the criterion, where "
      "a larger cap would have stopped them too: the schedule is constant). {}",
      runs.source.suite.budget.steps, s.larger_cap,
      runs.larger_texts.empty() ? std::string("No task needed it.")
                                : "Probes: " + join(runs.larger_texts, "; ") + ".");
}

void r2(const ClaimContext& ctx, ClaimResult& r) {
  const R2Settings s = read_r2_settings(ctx);
  const R2Runs runs = run_r2(ctx, s);
  const R2Measured m = measure_r2(runs, s);
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
               {"suite", runs.source.suite.name},
               {"larger_cap", s.larger_cap},
               {"schemes", per_scheme},
               {"pelab_mean_gain_points",
                judged_gains.empty() ? nlohmann::json() : nlohmann::json(pelab_gain)},
               {"published_gain_points", s.published_gain}};
  r.details = fmt::format(
      "Per scheme and task, plain and with randomized positions, under pelab's protocol: the "
      "paper's score of a run (per-token accuracy averaged unweighted over the evaluated "
      "lengths beyond training) at the learning rate in-distribution validation token "
      "accuracy selects, mean over seeds [nominal 95% bootstrap interval] and maximum, then the "
      "in-distribution token accuracy and the runs that learned the task in distribution; "
      "left of each slash, the same mean in sequence accuracy (shown, not judged). "
      "The runs are the suite {}'s, on {}'s tasks and positive controls ({}). {}\n\n{}\n"
      "**Per scheme** (the interval resamples the seeds of each side within each task):\n\n{}\n"
      "**Beside the paper:** randomized − plain, in points of accuracy: published {:+.1f} ({}); "
      "pelab {} (the mean of the judged schemes' gains, {} scheme–task pairs that count).\n\n",
      runs.source.suite.name, s.plain_runs_of, join(runs.tasks, ", "), larger_cap_text(runs, s),
      m.table, effects, s.published_gain, s.published_source,
      judged_gains.empty() ? std::string("— (no scheme judged)")
                           : fmt::format("{:+.1f}", pelab_gain),
      judged_tasks);
  r.details += "**Differences from the paper's setup:**\n\n";
  std::vector<std::string> differences =
      suite_budget_differences(runs.cells, runs.source.suite, "R2's code (R1's defaults)");
  differences.push_back(fmt::format(
      "Positions: randomized runs draw sorted positions from [0, {}) (the suite's max_position), "
      "{} draw{} at evaluation.",
      runs.source.suite.max_position, runs.source.suite.eval_draws,
      runs.source.suite.eval_draws == 1 ? "" : "s"));
  for (const std::string& d : concat(differences, s.differences))
    r.details += fmt::format("- {}\n", d);
  r.details += "\n" + suite_cells_markdown(runs.cells, runs.tasks);
}

// ---- R3 ----

// The paper's figure for one scheme on one task: mean and sample std over its 3 seeds.
struct PublishedScore {
  double mean = 0, std = 0;
};

struct R3Settings {
  ExperimentSettings experiment;
  std::string reference = "none";
  double ceiling = 0.98, floor = 0.02, margin = 0.05;  // R3Numbers
  int64_t min_seeds = 2;                               // R3Numbers
  // A run learned the task when its greedy exact match, averaged over the evaluated training
  // lengths, reaches this (the precondition; validation's teacher-forced check stops runs).
  double min_in_distribution = 0.9;
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
  s.read("min_in_distribution", r.min_in_distribution);
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
            "min_in_distribution", "published_variant", "published", "published_mrr",
            "published_source", "differences"});
  return r;
}

// The runs of a group (at the selected learning rate) whose greedy exact match in distribution
// reaches `at`, of all its runs (a diverged run has no numbers: it did not learn). In the lm
// layout the evaluation generates greedily, so the group's in-distribution values are greedy
// exact match, one per completed run.
LearnedCount greedy_learned(const Group& g, double at) {
  const std::vector<double>& v = g.in_distribution.values;
  return {
      static_cast<int64_t>(std::count_if(v.begin(), v.end(), [&](double x) { return x >= at; })),
      g.trained_runs()};
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
    task->schemes.push_back({c.scheme, greedy_learned(*c.group, s.min_in_distribution),
                             c.group->extrapolation.values, c.group->extrapolation.seeds});
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
      "pelab (sequence / token): exact match beyond training, mean [nominal 95% interval], max; "
      "in distribution | "
      "runs whose greedy exact match in distribution reaches the precondition's line |\n"
      "|---|---|--:|---|--:|\n";
  for (const Cell& c : cells_of(sweep.comparison, runs)) {
    const auto variant = s.published_variant.find(c.task);
    const LearnedCount greedy = greedy_learned(*c.group, s.min_in_distribution);
    table += fmt::format("| {} ({}) | {} | {} | {} | {} of {} (≥ {:.2f}) |\n", c.task,
                         variant == s.published_variant.end() ? "—" : variant->second, c.scheme,
                         published_score_text(s, c.task, c.scheme),
                         protocol_cell(*c.group, sweep.comparison.metric), greedy.learned,
                         greedy.runs, s.min_in_distribution);
    const Group& g = *c.group;
    nlohmann::json x = protocol_numbers(g);
    x["task"] = c.task;
    x["scheme"] = c.scheme;
    x["greedy_learned_runs"] = greedy.learned;
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
      "match and how many runs learned the task in distribution (compare's rule); right of each "
      "slash, the same mean in token accuracy (shown, not judged). Published "
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
