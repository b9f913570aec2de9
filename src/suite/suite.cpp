#include "pelab/suite/suite.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>

#include "pelab/config/experiment.h"
#include "pelab/config/yaml_reader.h"
#include "pelab/core/error.h"
#include "pelab/core/strings.h"
#include "pelab/data/task.h"
#include "pelab/positional/scheme.h"

namespace pelab {

namespace fs = std::filesystem;

namespace {

constexpr int64_t kMaxSuiteRuns = 100000;  // every run is loaded to plan it
constexpr const char* kRandomizedSuffix = "+randomized";

// A node as one line of YAML (flow style), the form an override value takes.
std::string flow_yaml(const YAML::Node& node) {
  YAML::Emitter out;
  out.SetMapFormat(YAML::Flow);
  out.SetSeqFormat(YAML::Flow);
  out << node;
  return out.c_str();
}

int line_of(const YAML::Node& node) {
  return node.Mark().line + 1;
}

// The protocol section as dotted KEY=VALUE overrides, in file order, each with its line.
void flatten_protocol(const YAML::Node& node, const std::string& prefix, Suite& s) {
  for (const auto& kv : node) {
    const std::string key = kv.first.Scalar();
    const std::string dotted = prefix.empty() ? key : prefix + "." + key;
    if (kv.second.IsMap() && dotted != "positional") {
      flatten_protocol(kv.second, dotted, s);
      continue;
    }
    s.protocol.push_back(dotted + "=" + flow_yaml(kv.second));
    s.protocol_lines.push_back(line_of(kv.first));
  }
}

void read_protocol(MapReader& root, const YAML::Node& doc, Suite& s) {
  if (!root.has("protocol")) return;
  const YAML::Node protocol = *root.take("protocol");
  if (!protocol.IsMap())
    root.fail("protocol", "expected a mapping of config sections, e.g. {model: {d_model: 64}}");
  for (const auto& kv : protocol) {
    const std::string key = kv.first.Scalar();
    // The suite's own keys decide these; the protocol may not set them behind its back.
    static const std::set<std::string> owned = {"positional", "seed", "sweep", "name"};
    if (owned.count(key))
      throw Error(
          fmt::format("{}:{}: protocol.{}: set by the suite itself ({}), not by the "
                      "protocol",
                      s.path, line_of(kv.first), key,
                      key == "positional" ? "schemes, randomized"
                      : key == "seed"     ? "budget.seeds"
                                          : "the suite's runs"));
  }
  (void)doc;
  flatten_protocol(protocol, "", s);
}

// A positive integer key.
int64_t read_count(MapReader& r, const std::string& key, int64_t max) {
  PELAB_CHECK(r.has(key), "{}: missing (the budget states it, e.g. {}: 1000)", r.where(key), key);
  int64_t v = 0;
  r.read(key, v);
  if (v < 1 || v > max) r.fail(key, fmt::format("must be in [1, {}], got {}", max, v));
  return v;
}

std::vector<std::string> read_list(MapReader& r, const std::string& key, const char* example) {
  PELAB_CHECK(r.has(key), "{}: missing (e.g. {}: {})", r.where(key), key, example);
  std::vector<std::string> v;
  r.read(key, v);
  if (v.empty()) r.fail(key, fmt::format("needs at least one value, e.g. {}", example));
  std::set<std::string> seen;
  for (const std::string& x : v)
    if (!seen.insert(x).second) r.fail(key, fmt::format("'{}' is given twice", message_text(x)));
  return v;
}

void read_budget(MapReader& root, Suite& s) {
  PELAB_CHECK(root.has("budget"),
              "{}: budget: missing (steps, stop_when, seeds, lrs, "
              "training_lengths, evaluation_lengths, examples)",
              s.path);
  MapReader b = root.section("budget");
  SuiteBudget& g = s.budget;
  g.steps = read_count(b, "steps", 100000000);
  if (b.has("stop_when")) {
    const YAML::Node sw = *b.take("stop_when");
    if (!sw.IsMap()) b.fail("stop_when", "expected a mapping, e.g. {accuracy: 0.95, patience: 2}");
    for (const auto& kv : sw)
      g.stop_when.push_back("training.stop_when." + kv.first.Scalar() + "=" + flow_yaml(kv.second));
  }
  g.seeds = read_list(b, "seeds", "[0, 1, 2]");
  for (const std::string& seed : g.seeds)
    if (seed.empty() || !std::all_of(seed.begin(), seed.end(), ::isdigit) || seed.size() > 18)
      b.fail("seeds",
             fmt::format("'{}' is not a seed (a non-negative integer)", message_text(seed)));
  g.lrs = read_list(b, "lrs", "[0.0003, 0.001]");
  std::vector<int64_t> range;
  if (b.read("training_lengths", range)) {
    if (range.size() != 2 || range[0] < 1 || range[1] < range[0])
      b.fail("training_lengths", "expected [MIN, MAX] with 1 <= MIN <= MAX, e.g. [1, 40]");
    g.min_length = range[0];
    g.max_length = range[1];
  }
  if (b.read("evaluation_lengths", g.evaluation_lengths) &&
      (g.evaluation_lengths.empty() ||
       !std::is_sorted(g.evaluation_lengths.begin(), g.evaluation_lengths.end(),
                       [](int64_t a, int64_t c) { return a <= c; }) ||
       g.evaluation_lengths.front() < 1))
    b.fail("evaluation_lengths",
           "expected positive lengths in increasing order, e.g. [8, 40, 160]");
  g.examples = read_count(b, "examples", kMaxEvalExamples);
  b.finish(
      {"steps", "stop_when", "seeds", "lrs", "training_lengths", "evaluation_lengths", "examples"});
  for (const auto& [key, name] : std::vector<std::pair<std::string, std::string>>{
           {"training.steps", "steps"},
           {"training.stop_when", "stop_when"},
           {"task.min_length", "training_lengths"},
           {"task.max_length", "training_lengths"},
           {"evaluation.lengths", "evaluation_lengths"},
           {"evaluation.examples", "examples"}})
    s.budget_lines.emplace_back(key, b.where(name));
}

// The configs directory a suite file sits in (configs/suites/NAME.yaml → configs): groups are
// looked up from there, as its tasks' configs look them up.
std::string configs_of(const Suite& s) {
  return fs::path(s.path).parent_path().parent_path().string();
}

// The shipped positional group of that name ("" if none): it holds the scheme's settings as
// pelab runs it (relative's clip, say), or a variant of a scheme (t5_causal).
std::string group_of(const std::string& name, const std::string& configs) {
  for (const std::string& dir : config_search_path(configs)) {
    std::error_code ec;
    if (fs::exists(fs::path(dir) / "positional" / (name + ".yaml"), ec)) return name;
  }
  return "";
}

// What a suite or --schemes may name: a scheme of the registry or a shipped positional group.
std::vector<std::string> scheme_choices(const std::string& configs) {
  std::vector<std::string> names = scheme_names();
  for (const std::string& dir : config_search_path(configs)) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(fs::path(dir) / "positional", ec))
      if (e.path().extension() == ".yaml") names.push_back(e.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

bool is_scheme_choice(const std::string& name, const std::string& configs) {
  const std::vector<std::string> known = scheme_names();
  return std::find(known.begin(), known.end(), name) != known.end() ||
         !group_of(name, configs).empty();
}

// A scheme the suite names must be one pelab has.
void check_scheme_names(MapReader& r, const std::string& key, const std::vector<std::string>& v,
                        const std::string& configs) {
  for (const std::string& name : v)
    if (!is_scheme_choice(name, configs))
      r.fail(key, fmt::format("unknown scheme '{}' (valid: {})", message_text(name),
                              join(scheme_choices(configs))));
}

void read_schemes(MapReader& root, Suite& s) {
  s.schemes = read_list(root, "schemes", "[none, sinusoidal, rotary]");
  check_scheme_names(root, "schemes", s.schemes, configs_of(s));
  if (!root.has("randomized")) return;
  MapReader r = root.section("randomized");
  s.randomized = read_list(r, "schemes", "[sinusoidal, rotary]");
  check_scheme_names(r, "schemes", s.randomized, configs_of(s));
  s.max_position = read_count(r, "max_position", 1 << 24);
  if (r.has("eval_draws")) s.eval_draws = read_count(r, "eval_draws", 1000);
  r.finish({"schemes", "max_position", "eval_draws"});
}

void read_tasks(MapReader& root, Suite& s) {
  PELAB_CHECK(root.has("tasks"),
              "{}: tasks: missing (task name: its config, e.g. "
              "reverse_string: ../tasks/reverse_string.yaml)",
              s.path);
  const YAML::Node tasks = *root.take("tasks");
  if (!tasks.IsMap() || tasks.size() == 0)
    root.fail("tasks",
              "expected a mapping of task names to configs, e.g. {reverse_string: "
              "../tasks/reverse_string.yaml}");
  const fs::path dir = fs::path(s.path).parent_path();
  for (const auto& kv : tasks) {
    const std::string name = kv.first.Scalar();
    const std::string where = fmt::format("{}:{}: tasks.{}", s.path, line_of(kv.first), name);
    PELAB_CHECK(!name.empty() && std::all_of(name.begin(), name.end(),
                                             [](char c) {
                                               return std::isalnum(static_cast<unsigned char>(c)) ||
                                                      c == '_' || c == '-';
                                             }),
                "{}: a task's name is letters, digits, '_' and '-'", where);
    PELAB_CHECK(kv.second.IsScalar() && !kv.second.Scalar().empty(),
                "{}: expected the path of an experiment config", where);
    const fs::path config = (dir / kv.second.Scalar()).lexically_normal();
    std::error_code ec;
    PELAB_CHECK(fs::is_regular_file(config, ec), "{}: {} is not a file", where,
                message_text(config.string()));
    s.tasks.push_back({name, fs::absolute(config).string()});
  }
}

void read_cost(MapReader& root, Suite& s) {
  PELAB_CHECK(root.has("cost"),
              "{}: cost: missing (seconds_per_token: the cost model of "
              "--dry-run, and measured: how)",
              s.path);
  MapReader c = root.section("cost");
  PELAB_CHECK(c.has("seconds_per_token"), "{}: missing", c.where("seconds_per_token"));
  c.read("seconds_per_token", s.seconds_per_token);
  if (!(s.seconds_per_token > 0) || s.seconds_per_token > 1)
    c.fail("seconds_per_token", fmt::format("must be in (0, 1], got {}", s.seconds_per_token));
  c.read("measured", s.cost_measured);
  c.finish({"seconds_per_token", "measured"});
}

// Loads each task's config with the protocol and budget, so that a bad key or value is
// reported now, against the suite file's line, rather than by every run.
void check_runs_load(const Suite& s) {
  std::vector<std::string> overrides = s.protocol;
  const std::vector<std::string> budget = s.budget_overrides();
  overrides.insert(overrides.end(), budget.begin(), budget.end());
  overrides.push_back("training.lr=" + s.budget.lrs.front());
  overrides.push_back("sweep={}");
  for (const SuiteTask& t : s.tasks) {
    try {
      (void)load_experiment(t.config, overrides);
    } catch (const Error& e) {
      const std::string what = e.what();
      for (size_t i = 0; i < s.protocol.size(); ++i)
        if (what.find("'" + message_text(s.protocol[i]) + "'") != std::string::npos)
          throw Error(fmt::format("{}:{}: protocol: task {}: {}", s.path, s.protocol_lines[i],
                                  t.name, what));
      for (const auto& [key, where] : s.budget_lines)
        if (what.find("'" + key) != std::string::npos)
          throw Error(fmt::format("{}: task {}: {}", where, t.name, what));
      throw Error(fmt::format("{}: task {} under the suite's protocol and budget: {}", s.path,
                              t.name, what));
    }
  }
}

}  // namespace

std::vector<std::string> Suite::budget_overrides() const {
  std::vector<std::string> o = {fmt::format("training.steps={}", budget.steps)};
  if (budget.max_length > 0) {
    o.push_back(fmt::format("task.min_length={}", budget.min_length));
    o.push_back(fmt::format("task.max_length={}", budget.max_length));
  }
  if (!budget.evaluation_lengths.empty())
    o.push_back(fmt::format("evaluation.lengths=[{}]", fmt::join(budget.evaluation_lengths, ", ")));
  o.push_back(fmt::format("evaluation.examples={}", budget.examples));
  o.insert(o.end(), budget.stop_when.begin(), budget.stop_when.end());
  return o;
}

std::string Suite::fingerprint() const {
  // FNV-1a over the text that fixes the runs: stable across machines and compilers.
  std::string text = join(protocol, "\n") + "\n" + join(budget_overrides(), "\n") + "\nlrs " +
                     join(budget.lrs) + "\nseeds " + join(budget.seeds) + "\n";
  for (const SuiteTask& t : tasks) text += t.name + "\n" + read_yaml_file_text(t.config);
  if (max_position > 0) text += fmt::format("randomized {} {}\n", max_position, eval_draws);
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char ch : text) h = (h ^ ch) * 0x100000001b3ULL;
  return fmt::format("{:016x}", h);
}

Suite load_suite(const std::string& path) {
  return parse_suite(read_yaml_file_text(path), path);
}

Suite parse_suite(const std::string& text, const std::string& path) {
  Suite s;
  s.path = fs::absolute(path).lexically_normal().string();
  const YAML::Node doc = load_yaml_string(text, s.path);
  PELAB_CHECK(doc.IsMap(),
              "{}: a suite file is a mapping (suite, description, tasks, protocol, "
              "budget, schemes, randomized, cost)",
              s.path);
  MapReader root(doc, s.path, "");
  // An unknown key (a misspelt section) is named before the sections it hides go missing.
  const std::vector<std::string> sections = {"suite",  "description", "tasks",      "protocol",
                                             "budget", "schemes",     "randomized", "cost"};
  for (const std::string& key : root.keys_in_file_order())
    if (std::find(sections.begin(), sections.end(), key) == sections.end()) {
      const std::string near = nearest_name(key, sections);
      root.fail(key,
                fmt::format("unknown key ({}valid: {})",
                            near.empty() ? "" : "did you mean '" + near + "'? ", join(sections)));
    }
  PELAB_CHECK(root.has("suite"), "{}: suite: missing (the suite's name, the file's stem)", s.path);
  root.read("suite", s.name);
  const std::string stem = fs::path(path).stem().string();
  if (s.name != stem)
    root.fail("suite", fmt::format("'{}' must be the file's stem, '{}'", message_text(s.name),
                                   message_text(stem)));
  root.read("description", s.description);
  read_tasks(root, s);
  read_protocol(root, doc, s);
  read_budget(root, s);
  read_schemes(root, s);
  read_cost(root, s);
  root.finish(sections);
  const int64_t runs =
      static_cast<int64_t>(s.tasks.size() * s.budget.seeds.size() * s.budget.lrs.size() *
                           (s.schemes.size() + s.randomized.size()));
  PELAB_CHECK(runs <= kMaxSuiteRuns, "{}: {} runs; a suite holds at most {}", s.path, runs,
              kMaxSuiteRuns);
  check_runs_load(s);
  return s;
}

std::vector<std::string> suite_files() {
  std::vector<std::string> files;
  std::set<std::string> names;
  for (const std::string& dir : config_search_path("configs")) {
    std::error_code ec;
    std::vector<fs::path> found;
    for (const auto& e : fs::directory_iterator(fs::path(dir) / "suites", ec))
      if (e.path().extension() == ".yaml") found.push_back(e.path());
    std::sort(found.begin(), found.end());
    for (const fs::path& p : found)
      if (names.insert(p.stem().string()).second) files.push_back(p.string());
  }
  return files;
}

std::string find_suite(const std::string& name_or_path) {
  std::error_code ec;
  if (name_or_path.find('/') != std::string::npos || name_or_path.ends_with(".yaml")) {
    PELAB_CHECK(fs::is_regular_file(name_or_path, ec), "suite file {} does not exist",
                message_text(name_or_path));
    return name_or_path;
  }
  std::vector<std::string> names;
  for (const std::string& f : suite_files()) {
    if (fs::path(f).stem() == name_or_path) return f;
    names.push_back(fs::path(f).stem().string());
  }
  throw Error(fmt::format("no suite '{}' (valid: {}; or a suite file's path)",
                          message_text(name_or_path), names.empty() ? "none found" : join(names)));
}

namespace {

// A column from a registry name or a group file.
SuiteScheme scheme_of(const Suite& suite, const std::string& given, const std::string& origin) {
  SuiteScheme s;
  std::string spec = given;
  if (spec.ends_with(kRandomizedSuffix)) {
    spec.resize(spec.size() - std::string(kRandomizedSuffix).size());
    s.randomized = true;
    PELAB_CHECK(suite.max_position > 0,
                "{}: '{}': the suite {} has no randomized section (no max_position to sample "
                "positions from)",
                origin, message_text(given), suite.name);
  }
  const bool is_file = spec.find('/') != std::string::npos || spec.ends_with(".yaml");
  if (!is_file) {
    PELAB_CHECK(is_scheme_choice(spec, configs_of(suite)),
                "{}: unknown scheme '{}' (valid: {}, a config group file's path, either with "
                "'+randomized')",
                origin, message_text(spec), join(scheme_choices(configs_of(suite))));
    s.label = spec;
    s.source = spec;
    s.shipped = std::find(suite.schemes.begin(), suite.schemes.end(), spec) != suite.schemes.end();
    const std::string group = group_of(spec, configs_of(suite));
    s.overrides = {group.empty() ? "positional={type: " + spec + "}" : "positional=" + spec};
  } else {
    std::error_code ec;
    PELAB_CHECK(fs::is_regular_file(spec, ec), "{}: {} is not a file", origin, message_text(spec));
    const YAML::Node node = load_yaml_file(spec);
    PELAB_CHECK(node.IsMap() && node["type"],
                "{}: {}: a positional group file is a mapping that names its scheme (type: ...)",
                origin, message_text(spec));
    s.label = fs::path(spec).stem().string();
    s.source = fs::absolute(spec).lexically_normal().string();
    PELAB_CHECK(!is_scheme_choice(s.label, configs_of(suite)),
                "{}: {}: its column would be named '{}', a shipped scheme's; give the file "
                "another name",
                origin, message_text(spec), s.label);
    s.overrides = {"positional=" + flow_yaml(node)};
  }
  if (s.randomized) {
    s.shipped = s.shipped && std::find(suite.randomized.begin(), suite.randomized.end(), s.label) !=
                                 suite.randomized.end();
    s.label += kRandomizedSuffix;
    s.overrides.push_back(fmt::format("positional.randomize.max_position={}", suite.max_position));
    s.overrides.push_back(fmt::format("positional.randomize.eval_draws={}", suite.eval_draws));
  }
  return s;
}

}  // namespace

std::vector<SuiteScheme> suite_schemes(const Suite& suite,
                                       const std::vector<std::string>& requested) {
  std::vector<SuiteScheme> out;
  if (requested.empty()) {
    for (const std::string& s : suite.schemes) out.push_back(scheme_of(suite, s, suite.path));
    for (const std::string& s : suite.randomized)
      out.push_back(scheme_of(suite, s + kRandomizedSuffix, suite.path));
    return out;
  }
  std::set<std::string> labels;
  for (const std::string& r : requested) {
    SuiteScheme s = scheme_of(suite, r, "--schemes");
    PELAB_CHECK(labels.insert(s.label).second, "--schemes: '{}' is given twice", s.label);
    out.push_back(std::move(s));
  }
  return out;
}

std::string default_suite_dir(const Suite& suite) {
  return (fs::path("runs") / "suites" / suite.name).string();
}

SweepPlan plan_suite(const Suite& suite, const std::vector<SuiteScheme>& schemes,
                     const std::string& out_dir, const std::vector<std::string>& task_command,
                     const std::vector<std::string>& report_command) {
  SweepPlan plan;
  plan.name = "suite-" + suite.name;
  plan.config_path = suite.path;
  plan.axes = {{"training.lr", suite.budget.lrs}, {"seed", suite.budget.seeds}};
  plan.select = "training.lr";
  plan.out_dir = out_dir.empty() ? default_suite_dir(suite) : out_dir;
  plan.task_command = task_command;
  plan.report_command = report_command;
  std::vector<std::string> base = suite.protocol;
  const std::vector<std::string> budget = suite.budget_overrides();
  base.insert(base.end(), budget.begin(), budget.end());
  int64_t max_threads = 1;
  for (const SuiteTask& task : suite.tasks)
    for (const SuiteScheme& scheme : schemes) {
      std::vector<std::string> overrides = base;
      overrides.insert(overrides.end(), scheme.overrides.begin(), scheme.overrides.end());
      const std::string cell = (fs::path(sweep_dir_component("task", task.name)) /
                                sweep_dir_component("scheme", scheme.label))
                                   .string();
      for (SweepRun& run :
           expand_sweep(plan.axes, (fs::path(plan.out_dir) / cell).string(), overrides)) {
        run.name = cell + "/" + run.name;
        run.values.insert(run.values.begin(), {{"task", task.name}, {"scheme", scheme.label}});
        ExperimentConfig c;
        try {
          c = load_experiment(task.config, run.overrides);
        } catch (const Error& e) {
          throw Error(fmt::format("suite run {}: {}", run.name, e.what()));
        }
        PlannedRun p;
        p.run = std::move(run);
        p.config_path = task.config;
        p.config_yaml = to_yaml(c);
        p.steps = c.training.steps;
        max_threads = std::max(max_threads, c.threads);
        plan.runs.push_back(std::move(p));
      }
    }
  for (PlannedRun& p : plan.runs) p.plan = plan_run(p.run.dir, p.config_yaml);
  check_completed_runs_match(plan);
  plan.jobs = default_jobs(max_threads);
  return plan;
}

RunCost estimate_run(const Suite& suite, const ExperimentConfig& c) {
  const std::unique_ptr<Task> task = make_task(c.task);
  auto mean_tokens = [&](int64_t lo, int64_t hi) {
    double sum = 0;
    for (int64_t n = lo; n <= hi; ++n) sum += task->sequence_length(static_cast<int>(n));
    return sum / static_cast<double>(hi - lo + 1);
  };
  const double train_tokens = mean_tokens(c.task.min_length, c.task.max_length);
  RunCost cost;
  cost.steps = c.training.steps;
  const double per_step = static_cast<double>(c.training.batch_size) * train_tokens;
  const int64_t draws =
      c.randomize.max_position > 0 && c.randomize.at_eval ? c.randomize.eval_draws : 1;
  // Forward only: about a third of a training step's cost per token.
  double eval_tokens = 0;
  for (int64_t n : c.evaluation.lengths)
    eval_tokens += static_cast<double>(c.evaluation.examples * draws) *
                   task->sequence_length(static_cast<int>(n)) / 3.0;
  double check_tokens = 0;
  if (c.training.stop_when.enabled()) {
    const int64_t checks = c.training.steps / c.training.stop_when.every;  // at its multiples
    check_tokens =
        static_cast<double>(checks) * static_cast<double>(c.training.stop_when.examples * draws) *
        static_cast<double>(c.task.max_length - c.task.min_length + 1) * train_tokens / 3.0;
  }
  cost.core_seconds = suite.seconds_per_token *
                      (static_cast<double>(cost.steps) * per_step + eval_tokens + check_tokens);
  return cost;
}

}  // namespace pelab
