#include "pelab/suite/suite.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>
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

// A protocol mapping as dotted KEY=VALUE overrides, in file order, each with its line.
void flatten_protocol(const YAML::Node& node, const std::string& prefix,
                      std::vector<std::string>& out, std::vector<int>& lines) {
  for (const auto& kv : node) {
    const std::string key = kv.first.Scalar();
    const std::string dotted = prefix.empty() ? key : prefix + "." + key;
    if (kv.second.IsMap() && dotted != "positional") {
      flatten_protocol(kv.second, dotted, out, lines);
      continue;
    }
    out.push_back(dotted + "=" + flow_yaml(kv.second));
    lines.push_back(line_of(kv.first));
  }
}

// The keys the budget sets, and the budget key that sets each (a protocol may not: the budget
// is the same for every task and scheme).
const std::vector<std::pair<std::string, std::string>>& budget_keys() {
  static const std::vector<std::pair<std::string, std::string>> keys = {
      {"training.steps", "steps"},
      {"training.stop_when", "stop_when"},
      {"training.lr", "lrs"},
      {"task.min_length", "training_lengths"},
      {"task.max_length", "training_lengths"},
      {"evaluation.lengths", "evaluation_lengths"},
      {"evaluation.examples", "examples"}};
  return keys;
}

// A protocol (the suite's, `label` "protocol", or a task's, "tasks.T.protocol") as overrides;
// the keys the suite itself or its budget decides are refused.
void read_protocol_node(const YAML::Node& node, const std::string& label, const std::string& path,
                        std::vector<std::string>& out, std::vector<int>& lines) {
  PELAB_CHECK(node.IsMap(),
              "{}:{}: {}: expected a mapping of config sections, e.g. {{model: {{d_model: 64}}}}",
              path, line_of(node), label);
  for (const auto& kv : node) {
    const std::string key = kv.first.Scalar();
    static const std::set<std::string> owned = {"positional", "seed", "sweep", "name"};
    if (owned.count(key))
      throw Error(fmt::format("{}:{}: {}.{}: set by the suite itself ({}), not by a protocol", path,
                              line_of(kv.first), label, key,
                              key == "positional" ? "schemes, randomized"
                              : key == "seed"     ? "budget.seeds"
                                                  : "the suite's runs"));
  }
  const size_t first = out.size();
  flatten_protocol(node, "", out, lines);
  for (size_t i = first; i < out.size(); ++i)
    for (const auto& [key, budget] : budget_keys())
      if (out[i].starts_with(key + "=") || out[i].starts_with(key + "."))
        throw Error(fmt::format(
            "{}:{}: {}.{}: set by the budget (budget.{}), the same for every task and scheme", path,
            lines[i], label, out[i].substr(0, out[i].find('=')), budget));
}

void read_protocol(MapReader& root, Suite& s) {
  if (!root.has("protocol")) return;
  read_protocol_node(*root.take("protocol"), "protocol", s.path, s.protocol, s.protocol_lines);
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
  for (const auto& [key, name] : budget_keys()) s.budget_lines.emplace_back(key, b.where(name));
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
    SuiteTask task;
    task.name = name;
    // Not a YAML::Node assigned to: yaml-cpp's operator= writes through into the node it holds.
    std::optional<YAML::Node> config;
    if (!kv.second.IsMap()) {
      config.emplace(kv.second);
    } else {  // {config: PATH, protocol: {...}}
      for (const auto& entry : kv.second) {
        const std::string key = entry.first.Scalar();
        PELAB_CHECK(key == "config" || key == "protocol",
                    "{}:{}: tasks.{}.{}: unknown key (valid: config, protocol)", s.path,
                    line_of(entry.first), name, message_text(key));
        if (key == "config") config.emplace(entry.second);
        if (key == "protocol")
          read_protocol_node(entry.second, "tasks." + name + ".protocol", s.path, task.protocol,
                             task.protocol_lines);
      }
      PELAB_CHECK(config, "{}.config: missing (the task's experiment config)", where);
    }
    PELAB_CHECK(config->IsScalar() && !config->Scalar().empty(),
                "{}: expected the path of an experiment config, or {{config: PATH, protocol: "
                "{{...}}}}",
                where);
    const fs::path file = (dir / config->Scalar()).lexically_normal();
    std::error_code ec;
    PELAB_CHECK(fs::is_regular_file(file, ec), "{}: {} is not a file", where,
                message_text(file.string()));
    task.config = fs::absolute(file).string();
    s.tasks.push_back(std::move(task));
  }
}

void read_cost(MapReader& root, Suite& s) {
  PELAB_CHECK(root.has("cost"),
              "{}: cost: missing (the cost model of --dry-run: seconds_per_token, at_length, "
              "measured, step_time)",
              s.path);
  MapReader c = root.section("cost");
  s.cost = read_suite_cost(c, s.path);
}

// Loads each task's config with the protocol and budget, so that a bad key or value is
// reported now, against the suite file's line, rather than by every run.
void check_runs_load(const Suite& s) {
  for (const SuiteTask& t : s.tasks) {
    std::vector<std::string> overrides = s.task_overrides(t);
    overrides.push_back("training.lr=" + s.budget.lrs.front());
    overrides.push_back("sweep={}");
    try {
      (void)load_experiment(t.config, overrides);
    } catch (const Error& e) {
      const std::string what = e.what();
      for (size_t i = 0; i < t.protocol.size(); ++i)
        if (what.find("'" + message_text(t.protocol[i]) + "'") != std::string::npos)
          throw Error(fmt::format("{}:{}: tasks.{}.protocol: {}", s.path, t.protocol_lines[i],
                                  t.name, what));
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

std::vector<std::string> Suite::task_overrides(const SuiteTask& task) const {
  std::vector<std::string> o = protocol;
  o.insert(o.end(), task.protocol.begin(), task.protocol.end());
  const std::vector<std::string> fixed = budget_overrides();
  o.insert(o.end(), fixed.begin(), fixed.end());
  return o;
}

std::string Suite::fingerprint() const {
  // FNV-1a over the text that fixes the runs: stable across machines and compilers.
  std::string text = join(protocol, "\n") + "\n" + join(budget_overrides(), "\n") + "\nlrs " +
                     join(budget.lrs) + "\nseeds " + join(budget.seeds) + "\n";
  for (const SuiteTask& t : tasks) {
    text += t.name + "\n" + read_yaml_file_text(t.config);
    if (!t.protocol.empty()) text += "protocol " + join(t.protocol, "\n") + "\n";
  }
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
  read_protocol(root, s);
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
  int64_t max_threads = 1;
  for (const SuiteTask& task : suite.tasks)
    for (const SuiteScheme& scheme : schemes) {
      std::vector<std::string> overrides = suite.task_overrides(task);
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

}  // namespace pelab
