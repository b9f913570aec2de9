#include "pelab/config/experiment.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <yaml-cpp/emitter.h>

#include "pelab/config/key_yaml.h"
#include "pelab/config/model_config_yaml.h"
#include "pelab/config/yaml_reader.h"
#include "pelab/core/error.h"
#include "pelab/core/strings.h"
#include "pelab/data/file_dataset.h"
#include "pelab/data/lm_layout.h"
#include "pelab/data/position_ids.h"
#include "pelab/nn/encoder.h"
#include "pelab/positional/scheme.h"
#include "pelab/train/schedule.h"

namespace pelab {

namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kSections = {"model",    "positional", "task",
                                            "training", "evaluation", "sweep"};
const std::vector<std::string> kTopKeys = {"name", "seed",     "threads",    "model", "positional",
                                           "task", "training", "evaluation", "sweep"};
const std::vector<std::string> kTaskKeys = {"name",       "min_length",   "max_length",
                                            "train_file", "eval_file",    "sampling",
                                            "layout",     "position_ids", "position_offset_max"};
// Bounds that keep a typo (batch_size: 320000) from exhausting memory, far above real use.
constexpr int64_t kMaxBatch = 65536;  // sequences per batch
constexpr int64_t kMaxExamples = kMaxEvalExamples;
constexpr int64_t kMaxLength = kMaxProblemSize;
constexpr int64_t kMaxSweepRuns = 10000;  // every run of a sweep is loaded to check it

// A section written as a name (`positional: rotary`) is a config group: the file
// <configs>/<section>/<name>.yaml holds the section's keys.
struct Group {
  YAML::Node node;
  std::string source;
};

std::string group_path(const std::string& configs_dir, const std::string& section,
                       const std::string& name) {
  return (fs::path(configs_dir) / section / (name + ".yaml")).string();
}

std::vector<std::string> group_names(const std::string& configs_dir, const std::string& section) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path(configs_dir) / section, ec))
    if (e.path().extension() == ".yaml") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

// A group file names what it is: a positional group its scheme (`type`), a task group its
// task (`name`); any other group sets at least one key. An empty file would otherwise
// silently give the defaults (no positions at all) to a run named after the group.
YAML::Node checked_group(const YAML::Node& node, const std::string& section,
                         const std::string& path) {
  const char* naming = section == "positional" ? "type" : section == "task" ? "name" : nullptr;
  const bool empty = !node.IsDefined() || node.IsNull() || (node.IsMap() && node.size() == 0);
  if (naming && (empty || (node.IsMap() && !node[naming])))
    throw Error(fmt::format(
        "{}: a {} group must set '{}' (the {} it stands for){}", message_text(path), section,
        naming, section == "positional" ? "scheme" : "task", empty ? "; the file is empty" : ""));
  if (empty)
    throw Error(fmt::format("{}: the {} group is empty; a group sets keys of its section",
                            message_text(path), section));
  return node;
}

// The directories after a config's own that groups are looked up in (set_config_search_path).
std::vector<std::string>& extra_config_dirs() {
  static std::vector<std::string> dirs;
  return dirs;
}

// Where a config's groups are looked up, in order: its own configs directory, then the
// search path; a directory given twice is looked in once.
std::vector<std::string> search_path_of(const std::string& configs_dir) {
  std::vector<std::string> dirs;
  std::vector<fs::path> seen;
  for (const std::string& d : config_search_path(configs_dir)) {
    std::error_code ec;
    const fs::path canonical = fs::weakly_canonical(d, ec);
    const fs::path key = ec ? fs::path(d).lexically_normal() : canonical;
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
    seen.push_back(key);
    dirs.push_back(d);
  }
  return dirs;
}

Group load_group(const std::string& configs_dir, const std::string& section,
                 const std::string& name, const std::string& where) {
  const std::vector<std::string> dirs = search_path_of(configs_dir);
  std::vector<std::string> names;
  for (const std::string& dir : dirs)
    for (const std::string& n : group_names(dir, section))
      if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  std::sort(names.begin(), names.end());
  std::vector<std::string> shown;  // the directories as a message names them
  for (const std::string& dir : dirs) shown.push_back(dir.empty() ? "." : dir);
  // "valid: none" would read as the scheme named none.
  const std::string valid = names.empty() ? fmt::format("no {} groups found on the search path: {}",
                                                        section, message_text(join(shown)))
                                          : "valid: " + join(names);
  // A group is a file's stem in configs/<section>/: a plain name, never a path (no '/', no
  // leading '.'), and short enough to be a file name at all.
  const bool plain_name =
      !name.empty() && name.size() <= 200 && name[0] != '.' &&
      std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
      });
  PELAB_CHECK(plain_name, "{}: '{}' is not a config group name ({})", where, message_text(name),
              valid);
  for (const std::string& dir : dirs) {
    const std::string path = group_path(dir, section, name);
    std::error_code ec;
    if (fs::exists(path, ec)) return {checked_group(load_yaml_file(path), section, path), path};
  }
  const std::string missing =
      dirs.size() == 1
          ? fmt::format("{} does not exist", message_text(group_path(dirs[0], section, name)))
          : fmt::format("no {}/{}.yaml in {}", section, message_text(name),
                        message_text(join(shown)));
  throw Error(
      fmt::format("{}: no config group '{}' ({}; {})", where, message_text(name), missing, valid));
}

// The parts of a dotted key path ("model.heads" → model, heads), each a name of letters,
// digits, '_' and '-': how every key given outside a file (an override, a sweep axis) is
// checked, so that `seed.=5` or `model..heads=4` is refused rather than read as another key.
// A sweep axis is itself a dotted key: `sweep.positional.type=[...]` sets one axis, so the
// parts after `sweep` stay one.
std::vector<std::string> key_path(const std::string& dotted, const std::string& origin) {
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    const size_t dot = dotted.find('.', start);
    parts.push_back(dotted.substr(start, dot == std::string::npos ? dot : dot - start));
    const std::string& part = parts.back();
    const bool name = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
    });
    PELAB_CHECK(name,
                "{}: '{}' is not a valid key (a dotted path of names of letters, digits, '_' "
                "and '-', e.g. model.heads)",
                origin, message_text(dotted));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  if (parts.size() > 2 && parts.front() == "sweep") return {"sweep", dotted.substr(6)};
  return parts;
}

// Sets root[a][b][c] = value for the dotted key "a.b.c", creating mappings on the way.
void set_dotted(const YAML::Node& root, const std::string& dotted, const YAML::Node& value,
                const std::string& origin) {
  const std::vector<std::string> parts = key_path(dotted, origin);
  std::vector<YAML::Node> chain{root};
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    YAML::Node next = chain.back()[parts[i]];
    if (!next.IsDefined() || next.IsNull()) {
      chain.back()[parts[i]] = YAML::Node(YAML::NodeType::Map);
      next = chain.back()[parts[i]];
    }
    PELAB_CHECK(next.IsMap(), "{}: '{}' is not a section, so '{}' cannot be set", origin,
                message_text(parts[i]), message_text(dotted));
    chain.push_back(next);
  }
  chain.back()[parts.back()] = value;
}

// ---- overrides -------------------------------------------------------------------------

// One key=value override and where it was given, for messages: "command line
// 'model.heads=8'", or for a sweep axis value "x.yaml:23: sweep value 'seed=1'".
struct OverrideText {
  std::string text;
  std::string origin;
};

std::vector<OverrideText> from_command_line(const std::vector<std::string>& texts) {
  std::vector<OverrideText> given;
  for (const std::string& t : texts)
    given.push_back({t, fmt::format("command line '{}'", message_text(t))});
  return given;
}

// The key=value overrides, parsed first so that a group named on the command line is loaded
// like one named in the file.
struct Overrides {
  std::vector<std::pair<std::string, YAML::Node>> values;  // in the order given
  // Each key's origin, "command line 'model.heads=8'", for messages.
  std::shared_ptr<KeyLocations> origins = std::make_shared<KeyLocations>();
};

// The parsed values of override texts, by text: the runs of a sweep repeat theirs (each axis
// value is in many runs, `sweep={}` in every one), and each is parsed once for them all.
using ParsedValues = std::map<std::string, YAML::Node>;

Overrides parse_overrides(const std::vector<OverrideText>& texts, ParsedValues* cache) {
  Overrides parsed;
  for (const auto& [o, origin] : texts) {
    const size_t eq = o.find('=');
    PELAB_CHECK(eq != std::string::npos && eq > 0,
                "override '{}': expected key=value, e.g. model.heads=8", message_text(o));
    // Whole, as given: a sweep writes it into its runs' command lines and batch scripts, and
    // YAML would fold a line break inside a quoted value into a space the check below it
    // never sees.
    PELAB_CHECK(printable_text(o),
                "override '{}': holds a control character or bytes that are not UTF-8; an "
                "override is one line of printable text",
                message_text(o));
    const std::string key = o.substr(0, eq), value = o.substr(eq + 1);
    YAML::Node node;
    if (const auto it = cache ? cache->find(value) : ParsedValues::iterator{};
        cache && it != cache->end()) {
      node = YAML::Clone(it->second);  // the tree takes it in: a copy of its own
    } else {
      node = load_yaml_value(value, origin);
      if (cache) cache->emplace(value, YAML::Clone(node));
    }
    const std::string top = key_path(key, origin).front();
    if (std::find(kTopKeys.begin(), kTopKeys.end(), top) == kTopKeys.end()) {
      const std::string near = nearest_name(top, kTopKeys);
      throw Error(fmt::format("{}: unknown key '{}' ({}valid: {})", origin, message_text(top),
                              near.empty() ? "" : "did you mean '" + near + "'? ", join(kTopKeys)));
    }
    parsed.values.emplace_back(key, node);
    (*parsed.origins)[key] = origin;
  }
  return parsed;
}

bool is_group_override(const std::string& key, const YAML::Node& node) {
  return std::find(kSections.begin(), kSections.end(), key) != kSections.end() && node.IsScalar();
}

// Applies every override that sets a key (not a whole section's group) to the tree.
void apply_overrides(const YAML::Node& root, const Overrides& overrides) {
  for (const auto& [key, node] : overrides.values)
    if (!is_group_override(key, node)) set_dotted(root, key, node, overrides.origins->at(key));
}

// ---- groups ----------------------------------------------------------------------------

// The file each section was read from: the config itself, or a group's file.
using SectionSources = std::map<std::string, std::string>;

// Replaces each section given as a name, in the file or by an override of a whole section
// (`positional=alibi`), by its group file's contents.
SectionSources apply_groups(YAML::Node root, const Overrides& overrides, const std::string& source,
                            const std::string& configs_dir) {
  SectionSources sources;
  for (const std::string& section : kSections) {
    sources[section] = source;
    YAML::Node given = root[section];
    for (const auto& [key, node] : overrides.values)
      if (key == section && node.IsScalar()) given = node;
    if (given.IsDefined() && given.IsScalar() && section != "sweep") {
      const std::string where =
          overrides.origins->count(section)
              ? overrides.origins->at(section)
              : fmt::format("{}:{}: {}", source, given.Mark().line + 1, section);
      Group g = load_group(configs_dir, section, given.Scalar(), where);
      root[section] = g.node;
      sources[section] = g.source;
    }
  }
  return sources;
}

// ---- reading ---------------------------------------------------------------------------

// The task section: the task's name, its lengths and files, and the parameters that task
// takes (each checked against its range).
void read_task_section(MapReader& task, TaskConfig& c) {
  std::vector<std::string> tasks = task_names();
  tasks.push_back(kFileTaskName);
  task.read("name", c.name, tasks);
  task.read("min_length", c.min_length);
  task.read("max_length", c.max_length);
  task.read("train_file", c.train_file);
  task.read("eval_file", c.eval_file);
  task.read("sampling", c.sampling, kSizeSamplings);
  if (std::find(kSizeSamplings.begin(), kSizeSamplings.end(), c.sampling) == kSizeSamplings.end())
    task.fail("sampling",
              fmt::format("'{}' is not valid (valid: {})", c.sampling, join(kSizeSamplings)));
  task.read("layout", c.layout, kTaskLayouts);
  if (std::find(kTaskLayouts.begin(), kTaskLayouts.end(), c.layout) == kTaskLayouts.end())
    task.fail("layout", fmt::format("'{}' is not valid (valid: {})", c.layout, join(kTaskLayouts)));
  task.read("position_ids", c.position_ids);
  if (std::find(kPositionIds.begin(), kPositionIds.end(), c.position_ids) == kPositionIds.end())
    task.fail("position_ids",
              fmt::format("'{}' is not valid (valid: {})", c.position_ids, join(kPositionIds)));
  if (task.read("position_offset_max", c.position_offset_max)) {
    if (c.position_offset_max < 0 || c.position_offset_max > kMaxPositionOffset)
      task.fail("position_offset_max", fmt::format("must be in [0, {}], got {}", kMaxPositionOffset,
                                                   c.position_offset_max));
    if (c.position_ids != "digit_runs")
      task.fail("position_offset_max",
                "only read with task.position_ids: digit_runs (an offset added to the "
                "positions within digit runs)");
  }
  std::vector<std::string> valid = kTaskKeys;
  std::vector<TaskParam> params;
  try {
    params = task_params(c.name);
  } catch (const Error&) {
    task.fail("name",
              fmt::format("unknown task '{}' (valid: {}, file)", c.name, join(task_names())));
  }
  for (const TaskParam& tp : params) {
    valid.push_back(tp.name);
    if (!read_key(task, tp, c.params)) continue;
    const std::string problem = key_value_problem(tp, c.params.all().at(tp.name));
    if (!problem.empty()) task.fail(tp.name, fmt::format("{} ({})", problem, tp.help));
  }
  if (!params.empty()) {  // across parameters: blamed on the first of their keys given
    const TaskParamProblem across =
        task_param_problem(c.name, with_defaults("task", params, c.params));
    if (!across.keys.empty()) {
      std::string key = across.keys.front();
      for (const std::string& k : across.keys)
        if (c.params.has(k)) {
          key = k;
          break;
        }
      task.fail(key, across.what);
    }
  }
  task.finish(valid);
}

void check_training(const MapReader& t, const TrainingConfig& tr) {
  auto positive = [&](const char* key, double v) {
    if (!(v > 0)) t.fail(key, fmt::format("must be positive, got {}", v));
  };
  positive("steps", static_cast<double>(tr.steps));
  positive("batch_size", static_cast<double>(tr.batch_size));
  positive("lr", tr.lr);
  positive("eps", tr.eps);
  positive("log_every", static_cast<double>(tr.log_every));
  if (tr.batch_size > kMaxBatch)
    t.fail("batch_size", fmt::format("must be at most {}, got {}", kMaxBatch, tr.batch_size));
  if (tr.optimizer != "sgd" && tr.optimizer != "adam" && tr.optimizer != "adamw")
    t.fail("optimizer", fmt::format("'{}' is not valid (valid: sgd, adam, adamw)", tr.optimizer));
  if (tr.schedule != "constant" && tr.schedule != "linear" && tr.schedule != "cosine")
    t.fail("schedule",
           fmt::format("'{}' is not valid (valid: constant, linear, cosine)", tr.schedule));
  if (tr.length_sampling != "per_example" && tr.length_sampling != "per_batch")
    t.fail("length_sampling",
           fmt::format("'{}' is not valid (valid: per_example, per_batch)", tr.length_sampling));
  if (tr.weight_decay < 0) t.fail("weight_decay", "must be >= 0");
  if (tr.beta1 < 0 || tr.beta1 >= 1) t.fail("beta1", "must be in [0, 1)");
  if (tr.beta2 < 0 || tr.beta2 >= 1) t.fail("beta2", "must be in [0, 1)");
  if (tr.momentum < 0) t.fail("momentum", "must be >= 0");
  if (tr.warmup < 0 || tr.warmup > tr.steps)
    t.fail("warmup",
           fmt::format("must be in [0, training.steps = {}], got {}", tr.steps, tr.warmup));
  if (tr.min_lr < 0 || tr.min_lr > tr.lr)
    t.fail("min_lr", fmt::format("must be in [0, lr = {}]", tr.lr));
  if (tr.clip_norm < 0) t.fail("clip_norm", "must be >= 0 (0 = no clipping)");
  if (tr.eval_every < 0) t.fail("eval_every", "must be >= 0 (0 = only at the end)");
  if (tr.checkpoint_every < 0) t.fail("checkpoint_every", "must be >= 0 (0 = only at the end)");
}

// training.stop_when: absent or empty leaves the criterion off; given, it needs a threshold.
void read_stop_when(MapReader& s, StopWhen& stop) {
  if (s.keys_present().empty()) return;
  if (!s.read("accuracy", stop.accuracy))
    s.fail("accuracy", "training.stop_when needs a threshold in (0, 1], e.g. accuracy: 0.99");
  s.read("metric", stop.metric, {"token_accuracy", "sequence_accuracy"});
  s.read("patience", stop.patience);
  s.read("every", stop.every);
  s.read("examples", stop.examples);
  s.finish({"accuracy", "metric", "patience", "every", "examples"});
  if (!(stop.accuracy > 0 && stop.accuracy <= 1))
    s.fail("accuracy", fmt::format("must be in (0, 1], got {}", stop.accuracy));
  if (stop.metric != "token_accuracy" && stop.metric != "sequence_accuracy")
    s.fail("metric", fmt::format("'{}' is not valid (valid: token_accuracy, sequence_accuracy)",
                                 stop.metric));
  if (stop.patience < 1 || stop.patience > 1000)
    s.fail("patience", fmt::format("must be in [1, 1000], got {}", stop.patience));
  if (stop.every < 1) s.fail("every", fmt::format("must be >= 1, got {}", stop.every));
  if (stop.examples < 1 || stop.examples > kMaxExamples)
    s.fail("examples", fmt::format("must be in [1, {}], got {}", kMaxExamples, stop.examples));
}

void read_training_section(MapReader& t, TrainingConfig& tr) {
  t.read("steps", tr.steps);
  t.read("batch_size", tr.batch_size);
  t.read("optimizer", tr.optimizer, {"sgd", "adam", "adamw"});
  t.read("lr", tr.lr);
  t.read("weight_decay", tr.weight_decay);
  t.read("beta1", tr.beta1);
  t.read("beta2", tr.beta2);
  t.read("eps", tr.eps);
  t.read("momentum", tr.momentum);
  t.read("warmup", tr.warmup);
  t.read("schedule", tr.schedule, {"constant", "linear", "cosine"});
  t.read("min_lr", tr.min_lr);
  t.read("clip_norm", tr.clip_norm);
  t.read("length_sampling", tr.length_sampling, {"per_example", "per_batch"});
  t.read("log_every", tr.log_every);
  t.read("eval_every", tr.eval_every);
  t.read("checkpoint_every", tr.checkpoint_every);
  t.read("check_finite", tr.check_finite);
  MapReader stop = t.section("stop_when");
  read_stop_when(stop, tr.stop_when);
  t.finish({"steps", "batch_size", "optimizer", "lr", "weight_decay", "beta1", "beta2", "eps",
            "momentum", "warmup", "schedule", "min_lr", "clip_norm", "length_sampling", "log_every",
            "eval_every", "checkpoint_every", "check_finite", "stop_when"});
  check_training(t, tr);
}

void read_evaluation_section(MapReader& e, EvaluationConfig& ev) {
  e.read("lengths", ev.lengths);
  e.read("examples", ev.examples);
  e.read("batch_size", ev.batch_size);
  int64_t eval_seed = 0;
  if (e.read("seed", eval_seed)) {
    if (eval_seed < 0) e.fail("seed", fmt::format("must be >= 0, got {}", eval_seed));
    ev.seed = static_cast<uint64_t>(eval_seed);
  }
  e.finish({"lengths", "examples", "batch_size", "seed"});
  if (ev.examples < 1 || ev.examples > kMaxExamples)
    e.fail("examples", fmt::format("must be in [1, {}], got {}", kMaxExamples, ev.examples));
  if (ev.batch_size < 1 || ev.batch_size > kMaxBatch)
    e.fail("batch_size", fmt::format("must be in [1, {}], got {}", kMaxBatch, ev.batch_size));
}

// Axes in file order (run directories nest in that order); `parallel` is a setting. An axis
// key is a key path like an override's; each value is one run, so it is given once.
void read_sweep_section(MapReader& s, SweepConfig& sweep) {
  s.read("parallel", sweep.parallel);
  if (sweep.parallel < 0) s.fail("parallel", "must be >= 0 (0 = as many as cores allow)");
  int64_t runs = 1;
  for (const std::string& key : s.keys_in_file_order()) {
    if (key == "parallel" || key == "select") continue;
    if (key_path(key, s.where(key)).front() == "sweep")
      s.fail(key, "a sweep axis cannot set the sweep");
    std::vector<std::string> values;
    s.read(key, values);
    if (values.empty()) s.fail(key, "a sweep axis needs at least one value");
    for (auto v = values.begin(); v != values.end(); ++v)
      if (std::find(values.begin(), v, *v) != v)
        s.fail(key, fmt::format("the value '{}' is given twice (each value is one run)",
                                message_text(*v)));
    runs *= static_cast<int64_t>(values.size());  // at most kMaxSweepRuns before: no overflow
    if (runs > kMaxSweepRuns)
      s.fail(key, fmt::format("the sweep would have more than {} runs (the product of its axes' "
                              "numbers of values)",
                              kMaxSweepRuns));
    sweep.axes.emplace_back(key, values);
  }
  std::vector<std::string> axes;
  for (const auto& axis : sweep.axes) axes.push_back(axis.first);
  s.read("select", sweep.select, axes);
  if (!sweep.select.empty() &&
      std::none_of(sweep.axes.begin(), sweep.axes.end(),
                   [&](const auto& axis) { return axis.first == sweep.select; }))
    s.fail("select", fmt::format("'{}' is not an axis of this sweep; select names the axis whose "
                                 "value compare chooses by validation score (e.g. training.lr)",
                                 message_text(sweep.select)));
}

// A run's name is its directory's (runs/<name>, the sweep's runs/<name>/...): one path
// component, never the runs/ directory itself nor a path out of it.
void check_run_name(const MapReader& top, const std::string& name) {
  constexpr size_t kMaxName = 200;  // a file name has at most 255 bytes
  if (name.empty() || name.size() > kMaxName || name[0] == '.' ||
      name.find('/') != std::string::npos)
    top.fail("name", fmt::format("'{}' is not a run name: it names the run's directory (runs/"
                                 "<name>), so it is one path component of 1 to {} bytes, "
                                 "without '/' and not starting with '.'",
                                 message_text(name), kMaxName));
}

// A key an override sets is fixed for every run, so the file's sweep no longer varies it: its
// axis is dropped, and so is a selection by it. `pelab sweep deletang.yaml task.name=reverse
// task.symbols=2` sweeps reverse alone, where keeping the axis would set task.name back to
// each of its values (and refuse symbols, which those tasks do not take). An axis the
// overrides set themselves (`sweep.positional=[...]`) stays: they then give the base a value
// for the key that the sweep replaces in every run (a claim's `positional=sinusoidal`, so
// that the base takes sinusoidal's keys).
void drop_fixed_axes(SweepConfig& sweep, const Overrides& overrides) {
  const auto given = [&](const std::string& key) {
    return std::any_of(overrides.values.begin(), overrides.values.end(),
                       [&](const auto& value) { return value.first == key; });
  };
  const auto fixed = [&](const std::string& key) {
    return !key.empty() && given(key) && !given("sweep." + key);
  };
  if (fixed(sweep.select)) sweep.select.clear();
  std::erase_if(sweep.axes, [&](const auto& axis) { return fixed(axis.first); });
}

// Reads every section into `c`, each with the file it came from (a group's own file and
// lines); `locations` collects where each key was given.
void read_sections(const YAML::Node& root, const SectionSources& sources,
                   const Overrides& overrides, const std::shared_ptr<KeyLocations>& locations,
                   ExperimentConfig& c) {
  MapReader top(root, c.source, "", overrides.origins, locations);
  if (top.read("name", c.name)) check_run_name(top, c.name);
  int64_t seed = 0;
  if (top.read("seed", seed)) {
    if (seed < 0) top.fail("seed", fmt::format("must be >= 0, got {}", seed));
    c.seed = static_cast<uint64_t>(seed);
  }
  top.read("threads", c.threads);
  if (c.threads < 1 || c.threads > kMaxThreads)
    top.fail("threads", fmt::format("must be in [1, {}], got {}", kMaxThreads, c.threads));
  auto section = [&](const std::string& name) {
    const std::optional<YAML::Node> n = top.take(name);
    return MapReader(n ? *n : YAML::Node(), sources.at(name), name, overrides.origins, locations);
  };
  MapReader model = section("model");
  read_model_section(model, c.model);
  MapReader positional = section("positional");
  read_positional_section(positional, c.model.positional, &c.randomize);
  MapReader task = section("task");
  read_task_section(task, c.task);
  MapReader training = section("training");
  read_training_section(training, c.training);
  MapReader evaluation = section("evaluation");
  read_evaluation_section(evaluation, c.evaluation);
  const std::optional<YAML::Node> sweep = top.take("sweep");
  if (sweep && sweep->IsDefined() && !sweep->IsNull()) {
    MapReader s(*sweep, sources.at("sweep"), "sweep", overrides.origins, locations);
    read_sweep_section(s, c.sweep);
    drop_fixed_axes(c.sweep, overrides);
  }
  top.finish(kTopKeys);
}

// ---- resolving -------------------------------------------------------------------------

// "file:line: dotted.key" for a key's message: where it was given, else the command line
// that set it, else the config file.
struct KeyPlaces {
  std::string source;
  std::shared_ptr<const KeyLocations> locations, origins;

  std::string operator()(const std::string& key) const {
    auto it = locations->find(key);
    if (it != locations->end()) return it->second + ": " + key;
    auto o = origins->find(key);
    return (o != origins->end() ? o->second : source) + ": " + key;
  }
  bool given(const std::string& key) const { return locations->count(key) > 0; }
};

// task.name: file reads task.train_file and task.eval_file: relative to the YAML file that
// gives them (the working directory for command-line overrides), saved absolute so that a
// run's config.yaml reloads from anywhere.
void resolve_task_files(TaskConfig& task, const std::string& task_source, const KeyPlaces& at) {
  const bool from_files = task.name == kFileTaskName;
  if (!from_files && task.sampling != "sizes")
    throw Error(
        fmt::format("{}: '{}' is only for task.name: file (a generated task draws "
                    "each size uniformly, then an example of it)",
                    at("task.sampling"), task.sampling));
  for (std::string* path : {&task.train_file, &task.eval_file}) {
    const std::string key = path == &task.train_file ? "task.train_file" : "task.eval_file";
    if (!from_files && !path->empty())
      throw Error(fmt::format("{}: only read when task.name is 'file'", at(key)));
    if (!from_files) continue;
    if (path->empty())
      throw Error(
          fmt::format("{}: the 'file' task needs task.train_file and task.eval_file (a "
                      "dataset file each; see datasets/README.md)",
                      at("task.name")));
    const fs::path base = at.origins->count(key) ? fs::path() : fs::path(task_source).parent_path();
    *path = fs::absolute(base / *path).lexically_normal().string();
  }
}

// task.layout: lm, for a task whose native layout it fits, a causal model and a scheme whose
// positions do not depend on the sequence's length (greedy generation grows the sequence, so
// such a scheme would encode every prefix unlike training); errors name where task.layout
// was given.
std::unique_ptr<Task> laid_out(std::unique_ptr<Task> native, const ExperimentConfig& c,
                               const KeyPlaces& at) {
  if (c.task.layout != "lm") return native;
  const std::string problem = lm_layout_problem(native->info());
  if (!problem.empty()) throw Error(at("task.layout") + ": " + problem);
  if (!c.model.causal)
    throw Error(fmt::format(
        "{}: 'lm' needs model.causal: true (the answer is fed back as input, so bidirectional "
        "attention would read the token each position is to predict; valid with "
        "model.causal: false: native)",
        at("task.layout")));
  const std::string& scheme = c.model.positional.type;
  if (is_scheme(scheme) && scheme_info(scheme).positions_depend_on_length) {
    std::vector<std::string> refused;
    for (const SchemeInfo& info : scheme_table())
      if (info.positions_depend_on_length) refused.push_back(info.name);
    throw Error(fmt::format(
        "{}: 'lm' cannot take positional.type: {} (it numbers positions by the sequence's "
        "length, which grows during generation); every scheme but {} can",
        at("task.layout"), scheme, join(refused)));
  }
  return make_lm_task(std::move(native));
}

// The tasks that need model.causal: true, for messages.
std::vector<std::string> causal_only_tasks() {
  std::vector<std::string> names;
  for (const std::string& name : task_names())
    if (make_task(name)->info().causal_only) names.push_back(name);
  return names;
}

// What the task asks of the model and of the positions: a causal-only task (flip_flop) needs
// a causal model; task.position_ids: digit_runs needs digits to number and cannot share the
// numbering with positional.randomize.
void check_task_needs(const ExperimentConfig& c, const Task& task, const KeyPlaces& at) {
  if (task.info().causal_only && !c.model.causal)
    throw Error(fmt::format(
        "{}: task '{}' needs model.causal: true (its targets are the next input tokens, which "
        "bidirectional attention would read; valid with model.causal: false: any task but {})",
        at(at.given("model.causal") ? "model.causal" : "task.name"), task.info().name,
        join(causal_only_tasks())));
  if (c.training.length_sampling == "per_batch" && c.task.name == kFileTaskName)
    throw Error(fmt::format(
        "{}: per_batch draws one size in [task.min_length, task.max_length] for a whole batch, "
        "which a file task's training file need not have (valid with task 'file': per_example)",
        at("training.length_sampling")));
  if (c.task.position_ids != "digit_runs") return;
  if (c.randomize.max_position > 0)
    throw Error(fmt::format(
        "{}: digit_runs numbers tokens by their runs of digits and positional.randomize by a "
        "random sample; a batch has one numbering (use one: positional.randomize.max_position: "
        "0, or task.position_ids: index)",
        at("task.position_ids")));
  const DigitRuns runs = digit_runs_of(task.info(), 0);
  if (std::find(runs.is_digit.begin(), runs.is_digit.end(), true) == runs.is_digit.end())
    throw Error(fmt::format(
        "{}: task '{}' has no digit symbol ('0'..'9'), so digit_runs would number every token "
        "0 (valid for it: index)",
        at("task.position_ids"), task.info().name));
}

// The task itself, with the defaults a file task takes from its files: training sizes =
// the training file's range, evaluation lengths = every size in the evaluation file.
std::unique_ptr<Task> resolve_task(ExperimentConfig& c, const std::string& task_source,
                                   const KeyPlaces& at) {
  resolve_task_files(c.task, task_source, at);
  std::unique_ptr<Task> task;
  if (c.task.name == kFileTaskName) {
    task = load_file_task(c.task.train_file, c.task.eval_file, at("task.train_file"),
                          at("task.eval_file"), c.task.sampling);
  } else {
    TaskConfig native = c.task;
    native.layout = "native";
    try {
      task = make_task(native);
    } catch (const Error& e) {
      throw Error(at("task.name") + ": " + e.what());
    }
  }
  task = laid_out(std::move(task), c, at);
  check_task_needs(c, *task, at);
  // A task with sizes of its own (the file task) gives the defaults: training sizes = the
  // training file's range, evaluation lengths = every size in the evaluation file.
  const std::vector<int> train_sizes = task->train_sizes(), eval_sizes = task->eval_sizes();
  if (!train_sizes.empty()) {
    if (!at.given("task.min_length")) c.task.min_length = train_sizes.front();
    if (!at.given("task.max_length")) c.task.max_length = train_sizes.back();
    if (c.evaluation.lengths.empty())
      c.evaluation.lengths.assign(eval_sizes.begin(), eval_sizes.end());
  }
  return task;
}

// Training and evaluation lengths: checked against the task, the evaluation ladder by default.
void resolve_lengths(ExperimentConfig& c, const Task& task, const KeyPlaces& at) {
  if (c.task.min_length < task.min_length())
    throw Error(fmt::format("{}: {} is below the task's shortest problem size {}",
                            at("task.min_length"), c.task.min_length, task.min_length()));
  if (c.task.max_length < c.task.min_length)
    throw Error(fmt::format("{}: {} is below task.min_length = {}", at("task.max_length"),
                            c.task.max_length, c.task.min_length));
  if (c.task.max_length > kMaxLength)
    throw Error(fmt::format("{}: {} is above the longest problem size pelab takes, {}",
                            at("task.max_length"), c.task.max_length, kMaxLength));
  std::vector<int64_t>& lengths = c.evaluation.lengths;
  if (lengths.empty()) {  // the default ladder: inside training, then up to 4×
    const int64_t mn = c.task.min_length, mx = c.task.max_length;
    const std::set<int64_t> ladder{mn,    std::max(mn, mx / 2), mx, mx + mx / 2, 2 * mx, 3 * mx,
                                   4 * mx};
    lengths.assign(ladder.begin(), ladder.end());
  }
  std::sort(lengths.begin(), lengths.end());
  lengths.erase(std::unique(lengths.begin(), lengths.end()), lengths.end());
  for (int64_t n : lengths)
    if (n < task.min_length() || n > kMaxLength)
      throw Error(fmt::format("{}: length {} is outside [{}, {}]", at("evaluation.lengths"), n,
                              task.min_length(), kMaxLength));
  const std::string range = task.check_training_range(c.task.min_length, c.task.max_length);
  if (!range.empty())
    throw Error(fmt::format(
        "{}: {}", at(at.given("task.max_length") ? "task.max_length" : "task.min_length"), range));
  const std::string bad = task.check_evaluation_lengths(lengths);
  if (!bad.empty()) throw Error(fmt::format("{}: {}", at("evaluation.lengths"), bad));
}

// The dotted keys of the config a message mentions ("model.heads", "model.d_model"), in order.
std::vector<std::string> keys_mentioned(const std::string& msg) {
  std::vector<std::string> keys;
  auto key_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t i = 0; i < msg.size();) {
    size_t end = i;
    while (end < msg.size() && (key_char(msg[end]) || msg[end] == '.')) ++end;
    std::string word = msg.substr(i, end - i);
    while (!word.empty() && word.back() == '.') word.pop_back();
    const size_t dot = word.find('.');
    if (dot != std::string::npos &&
        std::find(kSections.begin(), kSections.end(), word.substr(0, dot)) != kSections.end())
      keys.push_back(word);
    i = std::max(end, i + 1);
  }
  return keys;
}

// A message from building the model, prefixed with where the bad value was written. It is
// about the keys it names ("model.heads: 4 heads do not divide model.d_model = 6"): of those,
// one given on the command line or by a sweep axis is the value just changed, so the message
// points there; else at the key it starts with. A message without a key of its own is about
// the model's size (the parameter budget) or about the scheme and the model's widths.
Error located(const Error& e, const KeyPlaces& at) {
  const std::string msg = e.what();
  std::vector<std::string> keys = keys_mentioned(msg);
  const bool starts_with_key = !keys.empty() && msg.rfind(keys.front(), 0) == 0 &&
                               msg.find_first_of(": ") == keys.front().size();
  const std::string fallback = msg.rfind("the model would have", 0) == 0 ? "model"
                               : starts_with_key                         ? keys.front()
                                                                         : "positional.type";
  if (fallback == "model") keys.insert(keys.end(), {"model.d_model", "model.d_ff", "model.layers"});
  if (fallback == "positional.type") keys.insert(keys.end(), {"model.d_model", "model.heads"});
  std::string key = fallback;
  for (const std::string& k : keys)
    if (at.origins->count(k)) {
      key = k;
      break;
    }
  std::string place = at(key);
  // The message names its own key first: the place is the file and line (or the argument).
  if (starts_with_key) place = place.substr(0, place.rfind(": "));
  return Error(fmt::format("{}: {}", place, msg));
}

// Values the task determines (its vocabulary sizes) may be written out, as a run's
// config.yaml does, but only with the task's value: another would be silently replaced.
void check_derived(const KeyPlaces& at, const std::string& key, int64_t given, int64_t derived,
                   const char* what) {
  if (at.given(key) && given != derived)
    throw Error(
        fmt::format("{}: {} differs from the task's {}, {}; the task determines it "
                    "(leave {} out)",
                    at(key), given, what, derived, key));
}

// The facts of the run the positions depend on: randomized positions must number the longest
// sequence they are used for, and the scheme resolves its run-dependent keys (learned's
// table length). Then the checks only building the model can do (heads dividing d_model,
// odd head width for rotary, ...), reported at the key they concern.
void resolve_model(ExperimentConfig& c, const Task& task, const KeyPlaces& at,
                   bool derived_must_match) {
  if (derived_must_match) {
    check_derived(at, "model.vocab_in", c.model.vocab_in, task.info().vocab_in(),
                  "input vocabulary size");
    check_derived(at, "model.vocab_out", c.model.vocab_out, task.info().vocab_out(),
                  "output vocabulary size");
  }
  c.model.vocab_in = task.info().vocab_in();
  c.model.vocab_out = task.info().vocab_out();
  const int64_t longest = longest_sequence(c, task);
  const int64_t longest_train = task.sequence_length(static_cast<int>(c.task.max_length));
  const RandomizeConfig& rnd = c.randomize;
  if (rnd.max_position > 0) {
    const int64_t needed = rnd.at_eval ? longest : longest_train;
    if (rnd.max_position < needed)
      throw Error(
          fmt::format("{}: {} is shorter than the longest sequence it must number ({} tokens)",
                      at("positional.randomize.max_position"), rnd.max_position, needed));
  }
  // Digit runs number a token at most by its run's length (up to the whole sequence) plus the
  // training offset, so the table needs one row past that.
  const int64_t digit_positions =
      c.task.position_ids == "digit_runs"
          ? std::max(longest, longest_train + c.task.position_offset_max) + 1
          : 0;
  try {
    resolve_run_facts(c.model.positional,
                      {longest, std::max({longest, rnd.max_position, digit_positions})});
    validate_model_config(c.model);
    const Encoder probe(c.model, make_scheme, 0, ParameterStore::Values::Unset);
  } catch (const Error& e) {
    throw located(e, at);
  }
}

}  // namespace

int64_t longest_sequence(const ExperimentConfig& c, const Task& task) {
  int64_t n = c.task.max_length;
  for (int64_t len : c.evaluation.lengths) n = std::max(n, len);
  return task.sequence_length(static_cast<int>(n));
}

namespace {

// Stages, in order: overrides are parsed, groups replace sections given by name, overrides
// are applied, the sections are read into typed structs, and what depends on several keys
// (the task, the lengths, the model) is resolved and checked. `locations` receives where
// each key was given; `derived_must_match` refuses a value the task determines given otherwise.
// What the loads of a sweep's runs share: the config's text parsed once (parse_one works on a
// copy: groups and overrides change the tree), and the override values parsed so far.
struct SharedParse {
  YAML::Node text;
  ParsedValues values;
};

// `shared`, if given, holds load_yaml_string(text, source), which parse_one need not repeat.
ExperimentConfig parse_one(const std::string& text, const std::string& source,
                           const std::vector<OverrideText>& given, const std::string& configs_dir,
                           const std::shared_ptr<KeyLocations>& locations,
                           bool derived_must_match = true, SharedParse* shared = nullptr) {
  YAML::Node root = shared ? YAML::Clone(shared->text) : load_yaml_string(text, source);
  // An empty file (or one of comments only) is most likely a mistake, not a wish for every
  // default; `{}` says that.
  PELAB_CHECK(root.IsDefined() && !root.IsNull(),
              "{}: the config is empty (a config that takes every default is `{{}}`)", source);
  PELAB_CHECK(root.IsMap(), "{}: a config is a mapping of sections ({})", source, join(kTopKeys));
  const Overrides overrides = parse_overrides(given, shared ? &shared->values : nullptr);
  const SectionSources sources = apply_groups(root, overrides, source, configs_dir);
  apply_overrides(root, overrides);

  ExperimentConfig c;
  c.source = source;
  for (const auto& [section, file] : sources)
    if (file != source) c.group_files[section] = file;
  read_sections(root, sources, overrides, locations, c);

  const KeyPlaces at{source, locations, overrides.origins};
  const std::unique_ptr<Task> task = resolve_task(c, sources.at("task"), at);
  resolve_lengths(c, *task, at);
  resolve_model(c, *task, at, derived_must_match);
  return c;
}

// Every run of the config's sweep, checked as the sweep will load it (pelab/sweep/
// sweep.h): the given overrides, then the run's axis values, then no sweep section. So every
// command that reads a config checks its sweep too, and an error names the line of the axis
// (or the command-line override that set it) and the value.
// The configs are kept in `runs`, if given: a sweep plans its runs with them.
void check_sweep_runs(const ExperimentConfig& c, const KeyLocations& locations,
                      const std::string& text, const std::vector<OverrideText>& given,
                      const std::string& configs_dir, std::vector<ExperimentConfig>* runs) {
  const auto& axes = c.sweep.axes;
  if (axes.empty()) return;
  // Parsed once for all runs: a sweep may have thousands.
  SharedParse shared{load_yaml_string(text, c.source), {}};
  std::vector<size_t> index(axes.size(), 0);  // the run: one value of each axis
  while (true) {
    std::vector<OverrideText> run = given;
    for (size_t a = 0; a < axes.size(); ++a) {
      const auto& [key, values] = axes[a];
      const auto it = locations.find("sweep." + key);
      const std::string axis_at = it != locations.end() ? it->second : c.source;
      run.push_back(
          {key + "=" + values[index[a]],
           fmt::format("{}: sweep value '{}={}'", axis_at, key, message_text(values[index[a]]))});
    }
    run.push_back({"sweep={}", c.source + ": sweep"});
    ExperimentConfig loaded = parse_one(text, c.source, run, configs_dir,
                                        std::make_shared<KeyLocations>(), true, &shared);
    if (runs) runs->push_back(std::move(loaded));
    size_t a = axes.size();  // the next run, the last axis fastest (expand_sweep's order)
    for (; a > 0; --a) {
      if (++index[a - 1] < axes[a - 1].second.size()) break;
      index[a - 1] = 0;
    }
    if (a == 0) return;
  }
}

}  // namespace

namespace {
ExperimentConfig parse_with_runs(const std::string& text, const std::string& source,
                                 const std::vector<std::string>& override_texts,
                                 const std::string& configs_dir,
                                 std::vector<ExperimentConfig>* runs) {
  const std::vector<OverrideText> given = from_command_line(override_texts);
  const auto locations = std::make_shared<KeyLocations>();
  ExperimentConfig c = parse_one(text, source, given, configs_dir, locations);
  check_sweep_runs(c, *locations, text, given, configs_dir, runs);
  return c;
}
}  // namespace

ExperimentConfig parse_experiment(const std::string& text, const std::string& source,
                                  const std::vector<std::string>& override_texts,
                                  const std::string& configs_dir) {
  return parse_with_runs(text, source, override_texts, configs_dir, nullptr);
}

namespace {

// Groups resolve from the configs/ folder the file sits in (or its parent's configs/).
std::string configs_dir_of(const std::string& path) {
  fs::path dir = fs::path(path).parent_path();
  fs::path configs = dir;
  for (fs::path d = dir; !d.empty(); d = d.parent_path()) {
    if (d.filename() == "configs") {
      configs = d;
      break;
    }
    if (fs::is_directory(d / "configs")) {
      configs = d / "configs";
      break;
    }
    if (d == d.parent_path()) break;
  }
  return configs.string();
}

}  // namespace

void set_config_search_path(std::vector<std::string> dirs) {
  extra_config_dirs() = std::move(dirs);
}

std::vector<std::string> config_search_path(const std::string& configs_dir) {
  std::vector<std::string> dirs = {configs_dir};
  for (const std::string& d : extra_config_dirs()) dirs.push_back(d);
  return dirs;
}

ExperimentConfig load_experiment(const std::string& path,
                                 const std::vector<std::string>& overrides) {
  return parse_experiment(read_yaml_file_text(path), path, overrides, configs_dir_of(path));
}

ExperimentConfig load_experiment(const std::string& path, const std::vector<std::string>& overrides,
                                 std::vector<ExperimentConfig>& sweep_runs) {
  sweep_runs.clear();
  return parse_with_runs(read_yaml_file_text(path), path, overrides, configs_dir_of(path),
                         &sweep_runs);
}

ExperimentConfig load_run_config(const std::string& path) {
  return parse_one(read_yaml_file_text(path), path, {}, configs_dir_of(path),
                   std::make_shared<KeyLocations>(), /*derived_must_match=*/false);
}

std::string to_yaml(const ExperimentConfig& c) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << c.name;
  out << YAML::Key << "seed" << YAML::Value << c.seed;
  out << YAML::Key << "threads" << YAML::Value << c.threads;
  out << YAML::EndMap;
  std::string text = std::string(out.c_str()) + "\n" + model_sections_yaml(c.model, c.randomize);
  YAML::Emitter rest;
  rest << YAML::BeginMap;
  rest << YAML::Key << "task" << YAML::Value << YAML::BeginMap;
  rest << YAML::Key << "name" << YAML::Value << c.task.name;
  const std::vector<TaskParam> params = task_params(c.task.name);
  emit_keys(rest, params, with_defaults("task", params, c.task.params));
  rest << YAML::Key << "min_length" << YAML::Value << c.task.min_length;
  rest << YAML::Key << "max_length" << YAML::Value << c.task.max_length;
  if (!c.task.train_file.empty())
    rest << YAML::Key << "train_file" << YAML::Value << c.task.train_file;
  if (!c.task.eval_file.empty())
    rest << YAML::Key << "eval_file" << YAML::Value << c.task.eval_file;
  if (c.task.name == kFileTaskName)
    rest << YAML::Key << "sampling" << YAML::Value << c.task.sampling;
  if (c.task.layout != "native")  // written only when chosen: native configs keep their text
    rest << YAML::Key << "layout" << YAML::Value << c.task.layout;
  if (c.task.position_ids != "index") {  // likewise
    rest << YAML::Key << "position_ids" << YAML::Value << c.task.position_ids;
    rest << YAML::Key << "position_offset_max" << YAML::Value << c.task.position_offset_max;
  }
  rest << YAML::EndMap;
  const TrainingConfig& t = c.training;
  rest << YAML::Key << "training" << YAML::Value << YAML::BeginMap;
  rest << YAML::Key << "steps" << YAML::Value << t.steps << YAML::Key << "batch_size" << YAML::Value
       << t.batch_size << YAML::Key << "optimizer" << YAML::Value << t.optimizer << YAML::Key
       << "lr" << YAML::Value << yaml_number(t.lr) << YAML::Key << "weight_decay" << YAML::Value
       << yaml_number(t.weight_decay) << YAML::Key << "beta1" << YAML::Value << yaml_number(t.beta1)
       << YAML::Key << "beta2" << YAML::Value << yaml_number(t.beta2) << YAML::Key << "eps"
       << YAML::Value << yaml_number(t.eps) << YAML::Key << "momentum" << YAML::Value
       << yaml_number(t.momentum) << YAML::Key << "warmup" << YAML::Value << t.warmup << YAML::Key
       << "schedule" << YAML::Value << t.schedule << YAML::Key << "min_lr" << YAML::Value
       << yaml_number(t.min_lr) << YAML::Key << "clip_norm" << YAML::Value
       << yaml_number(t.clip_norm) << YAML::Key << "log_every" << YAML::Value << t.log_every
       << YAML::Key << "eval_every" << YAML::Value << t.eval_every << YAML::Key
       << "checkpoint_every" << YAML::Value << t.checkpoint_every << YAML::Key << "check_finite"
       << YAML::Value << t.check_finite;
  if (t.length_sampling != "per_example")  // written only when set: older configs keep their text
    rest << YAML::Key << "length_sampling" << YAML::Value << t.length_sampling;
  if (t.stop_when.enabled()) {  // written only when on: configs without it keep their text
    const StopWhen& w = t.stop_when;
    rest << YAML::Key << "stop_when" << YAML::Value << YAML::BeginMap << YAML::Key << "accuracy"
         << YAML::Value << yaml_number(w.accuracy) << YAML::Key << "metric" << YAML::Value
         << w.metric << YAML::Key << "patience" << YAML::Value << w.patience << YAML::Key << "every"
         << YAML::Value << w.every << YAML::Key << "examples" << YAML::Value << w.examples
         << YAML::EndMap;
  }
  rest << YAML::EndMap;
  rest << YAML::Key << "evaluation" << YAML::Value << YAML::BeginMap;
  rest << YAML::Key << "lengths" << YAML::Value << YAML::Flow << c.evaluation.lengths;
  rest << YAML::Key << "examples" << YAML::Value << c.evaluation.examples;
  rest << YAML::Key << "batch_size" << YAML::Value << c.evaluation.batch_size;
  rest << YAML::Key << "seed" << YAML::Value << c.evaluation.seed;
  rest << YAML::EndMap;
  if (!c.sweep.axes.empty()) {
    rest << YAML::Key << "sweep" << YAML::Value << YAML::BeginMap;
    for (const auto& [key, values] : c.sweep.axes)
      rest << YAML::Key << key << YAML::Value << YAML::Flow << values;
    if (!c.sweep.select.empty()) rest << YAML::Key << "select" << YAML::Value << c.sweep.select;
    rest << YAML::EndMap;
  }
  rest << YAML::EndMap;
  return text + rest.c_str() + "\n";
}

}  // namespace pelab
