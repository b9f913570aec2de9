#include "pelab/report/compare.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>
#include <sstream>

#include "pelab/config/yaml_reader.h"
#include "pelab/core/error.h"
#include "pelab/core/strings.h"
#include "pelab/io/atomic_file.h"
#include "pelab/positional/scheme.h"
#include "pelab/report/representable.h"
#include "pelab/report/statistics.h"
#include "run/run_files.h"

namespace pelab {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

const char* const kAbsent = "—";

using run_files::json_string;
using run_files::read_json;
using run_files::read_text;

// Path order with numbers compared as numbers ("seed=2" before "seed=10").
bool natural_less(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const bool da = std::isdigit(static_cast<unsigned char>(a[i]));
    const bool db = std::isdigit(static_cast<unsigned char>(b[j]));
    if (da && db) {
      size_t ie = i, je = j;
      while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie]))) ++ie;
      while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je]))) ++je;
      std::string na = a.substr(i, ie - i), nb = b.substr(j, je - j);
      na.erase(0, std::min(na.find_first_not_of('0'), na.size()));
      nb.erase(0, std::min(nb.find_first_not_of('0'), nb.size()));
      if (na.size() != nb.size()) return na.size() < nb.size();
      if (na != nb) return na < nb;
      i = ie;
      j = je;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

void flatten(const YAML::Node& node, const std::string& prefix,
             std::vector<std::pair<std::string, std::string>>& out) {
  if (node.IsMap()) {
    for (const auto& kv : node) {
      const std::string key = kv.first.as<std::string>();
      flatten(kv.second, prefix.empty() ? key : prefix + "." + key, out);
    }
  } else if (node.IsSequence()) {
    YAML::Emitter e;
    e << YAML::Flow << node;
    out.emplace_back(prefix, e.c_str());
  } else if (node.IsScalar()) {
    out.emplace_back(prefix, node.Scalar());
  } else {
    out.emplace_back(prefix, "");
  }
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return q + "\"";
}

std::string md_cell(const std::string& s) {
  std::string out;
  for (char ch : s) out += ch == '|' ? std::string("\\|") : std::string(1, ch);
  return out;
}

json number_or_null(double x) {
  return std::isfinite(x) ? json(x) : json(nullptr);
}

json stat_json(const Stat& s) {
  const auto value = [&](double x) { return s.n ? number_or_null(x) : json(nullptr); };
  return {{"mean", value(s.mean)},
          {"std", number_or_null(s.std)},
          {"n", s.n},
          {"seeds", s.seeds},
          {"values", s.values},
          {"median", value(s.median)},
          {"max", value(s.max)},
          {"ci95", {value(s.ci_low), value(s.ci_high)}}};
}

}  // namespace

Metric parse_metric(const std::string& name) {
  if (name == "sequence_accuracy") return Metric::sequence_accuracy;
  if (name == "token_accuracy") return Metric::token_accuracy;
  throw Error(fmt::format("unknown metric '{}' (valid: sequence_accuracy, token_accuracy)", name));
}

std::string metric_name(Metric m) {
  return m == Metric::sequence_accuracy ? "sequence_accuracy" : "token_accuracy";
}

std::vector<std::pair<std::string, std::string>> flatten_yaml(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  const YAML::Node root = load_yaml_string(text, "config.yaml");
  if (root.IsDefined() && !root.IsNull()) flatten(root, "", out);
  return out;
}

namespace {

constexpr const char* kDamaged =
    "the file is damaged (pelab writes it whole); delete it to report the run as incomplete";

// A run's summary.json (discarded when there is none). pelab writes it atomically, so one
// that is not a JSON object is damaged: an error naming it, never a run without a summary.
json read_summary(const fs::path& path) {
  const std::optional<std::string> text =
      read_regular_file_if_any(path.string(), run_files::kMaxRunFileBytes);
  if (!text) return json(json::value_t::discarded);
  json summary = json::parse(*text, nullptr, false);
  PELAB_CHECK(!summary.is_discarded() && summary.is_object(), "{}: not {}; {}", path.string(),
              summary.is_discarded() ? "valid JSON" : "a JSON object", kDamaged);
  return summary;
}

// A run's representability problems (pelab/report/representable.h), over every evaluated
// length and in distribution. A config.yaml that no longer loads (written by an older pelab,
// or damaged) has nothing to say here: its run is judged as before, and compare reads it as
// it always has.
void read_representability(const fs::path& config, RunRecord& r) {
  try {
    const ExperimentConfig c = load_run_config(config.string());
    r.not_representable = representability_problem(c);
    r.not_representable_in_distribution = representability_problem_in_distribution(c);
  } catch (const Error&) {
    r.not_representable.clear();
    r.not_representable_in_distribution.clear();
  }
}

}  // namespace

RunRecord read_run(const std::string& dir) {
  RunRecord r;
  r.dir = dir;
  const fs::path d(dir);
  const std::string config = read_text(d / "config.yaml");
  if (!config.empty()) {
    try {
      for (auto& [k, v] : flatten_yaml(config)) {
        r.config_order.push_back(k);
        r.config[k] = v;
      }
    } catch (const Error&) {
      r.status = "incomplete";
      r.detail = "config.yaml cannot be read";
    }
  }
  if (auto it = r.config.find("seed"); it != r.config.end()) {
    try {
      r.seed = std::stoull(it->second);
    } catch (const std::exception&) {
    }
  }
  if (!r.status.empty()) return r;
  if (!config.empty()) read_representability(d / "config.yaml", r);

  const json summary = read_summary(d / "summary.json");
  if (json_string(summary, "status") == "completed") {
    if (config.empty()) {
      r.status = "incomplete";
      r.detail = "summary.json but no config.yaml";
      return r;
    }
    try {
      r.seed = summary.value("seed", r.seed);
      r.steps = summary.value("steps", int64_t{-1});  // -1: a summary written without it
      if (summary.contains("train_lengths") && summary["train_lengths"].size() == 2) {
        r.train_min_length = summary["train_lengths"][0].get<int64_t>();
        r.train_max_length = summary["train_lengths"][1].get<int64_t>();
      }
      if (summary.contains("validation")) {
        r.validation_sequence_accuracy = summary["validation"].at("sequence_accuracy");
        r.validation_token_accuracy = summary["validation"].at("token_accuracy");
      }
      if (summary.contains("stop_when")) r.stop_when_met = summary["stop_when"].at("met");
      for (const json& e : summary.at("eval")) {
        RunRecord::Point p;
        p.length = e.at("length").get<int64_t>();
        p.in_training = e.value("in_training", false);
        p.sequence_accuracy = e.at("sequence_accuracy").get<double>();
        p.token_accuracy = e.at("token_accuracy").get<double>();
        r.eval.push_back(p);
      }
    } catch (const json::exception& e) {
      throw Error(fmt::format("{}: not a summary pelab train writes ({}); {}",
                              (d / "summary.json").string(), message_text(e.what()), kDamaged));
    }
    std::sort(r.eval.begin(), r.eval.end(),
              [](const auto& a, const auto& b) { return a.length < b.length; });
    r.status = "completed";
    return r;
  }
  if (!summary.is_discarded() && summary.is_object()) {
    r.status = "incomplete";
    r.detail = fmt::format("summary.json says '{}'", json_string(summary, "status"));
    return r;
  }
  const json status = read_json(d / "status.json");
  const std::string s = json_string(status, "status");
  if (s == "failed") {
    // Exit code 4: the training diverged, an outcome of the run's settings (see compare.h).
    const bool diverged = status.contains("exit_code") && status["exit_code"] == 4;
    r.status = diverged ? "diverged" : "failed";
    std::string how;
    if (status.contains("exit_code") && status["exit_code"].is_number_integer())
      how = fmt::format("exit {}", status["exit_code"].get<int>());
    else if (status.contains("signal"))
      how = "signal " + json_string(status, "signal");
    const std::string error = json_string(status, "error");
    r.detail = how + (error.empty() ? "" : std::string(how.empty() ? "" : ": ") + error);
    return r;
  }
  std::error_code ec;
  const bool checkpoint = fs::exists(d / "checkpoint.safetensors", ec);
  r.status = s == "running" ? "running" : "incomplete";
  if (s == "running")
    r.detail = "running (or its sweep was killed), no summary.json yet";
  else if (s == "interrupted")
    r.detail = "interrupted; the next sweep resumes it";
  else if (checkpoint)
    r.detail = "a checkpoint but no summary.json (resume with --resume)";
  else
    r.detail = "no summary.json";
  return r;
}

std::vector<RunRecord> find_runs(const std::vector<std::string>& dirs) {
  std::vector<RunRecord> runs;
  std::set<std::string> seen;
  std::map<std::string, int64_t> order;       // normalized run dir → index in its sweep.json
  std::map<std::string, std::string> select;  // normalized run dir → its sweep's select
  std::vector<std::string> expected;          // runs listed by sweep.json files
  auto key_of = [](const fs::path& p) { return fs::weakly_canonical(p).string(); };
  // Every directory is read once, however many links lead to it: a link to an ancestor (or
  // to itself) would otherwise be walked again at every level down to the depth limit.
  std::set<std::string> visited;

  std::function<void(const fs::path&, int)> visit = [&](const fs::path& d, int depth) {
    std::error_code ec;
    if (!visited.insert(key_of(d)).second) return;
    if (fs::exists(d / "sweep.json", ec)) {
      const json manifest = read_json(d / "sweep.json");
      if (manifest.is_object() && manifest.contains("runs") && manifest["runs"].is_array()) {
        int64_t i = 0;
        for (const json& r : manifest["runs"]) {
          const std::string name = json_string(r, "name");
          if (name.empty()) continue;
          const fs::path p = d / name;
          order.emplace(key_of(p), i++);
          select.emplace(key_of(p), json_string(manifest, "select"));
          expected.push_back(p.string());
        }
      }
    }
    if (fs::exists(d / "summary.json", ec) || fs::exists(d / "config.yaml", ec) ||
        fs::exists(d / "status.json", ec)) {
      if (seen.insert(key_of(d)).second) runs.push_back(read_run(d.string()));
      return;
    }
    if (depth >= 8) return;
    std::vector<fs::path> subdirs;
    for (const auto& e : fs::directory_iterator(d, ec))
      if (e.is_directory(ec)) subdirs.push_back(e.path());
    for (const fs::path& s : subdirs) visit(s, depth + 1);
  };
  for (const std::string& dir : dirs) {
    std::error_code ec;
    PELAB_CHECK(fs::is_directory(dir, ec), "{}: not a directory", dir);
    visit(fs::path(dir), 0);
  }
  for (const std::string& e : expected)
    if (!seen.count(key_of(e))) {
      RunRecord r;
      r.dir = e;
      r.status = "not started";
      r.detail = "listed in sweep.json, no run directory yet";
      seen.insert(key_of(e));
      runs.push_back(r);
    }
  for (RunRecord& r : runs) {
    if (auto it = order.find(key_of(r.dir)); it != order.end()) r.order = it->second;
    if (auto it = select.find(key_of(r.dir)); it != select.end()) r.sweep_select = it->second;
  }
  std::stable_sort(runs.begin(), runs.end(), [](const RunRecord& a, const RunRecord& b) {
    if ((a.order >= 0) != (b.order >= 0)) return a.order >= 0;
    if (a.order >= 0 && a.order != b.order) return a.order < b.order;
    return natural_less(a.dir, b.dir);
  });
  return runs;
}

Stat summarize(const std::vector<double>& values, const std::vector<uint64_t>& seeds) {
  Stat s;
  s.values = values;
  s.seeds = seeds;
  s.n = static_cast<int64_t>(values.size());
  if (s.n == 0) {
    s.std = std::numeric_limits<double>::quiet_NaN();
    return s;
  }
  s.mean = mean_of(values);
  s.std = sample_std(values);
  s.median = median_of(values);
  s.max = max_of(values);
  const Interval ci = bootstrap_mean_interval(values);
  s.ci_low = ci.low;
  s.ci_high = ci.high;
  return s;
}

std::vector<std::string> grouping_keys(const std::vector<RunRecord>& runs) {
  if (runs.size() < 2) return {};
  // Every key, in first-seen file order.
  std::vector<std::string> keys;
  std::set<std::string> known;
  for (const RunRecord& r : runs)
    for (const std::string& k : r.config_order)
      if (known.insert(k).second) keys.push_back(k);
  auto value = [](const RunRecord& r, const std::string& k) {
    auto it = r.config.find(k);
    return it == r.config.end() ? std::string("\x01") : it->second;
  };
  // Keys named in the run directories ("…/positional.type=rotary/seed=0").
  std::set<std::string> axis_keys;
  for (const RunRecord& r : runs)
    for (const auto& part : fs::path(r.dir))
      if (const std::string s = part.string(); s.find('=') != std::string::npos)
        axis_keys.insert(s.substr(0, s.find('=')));

  struct Candidate {
    std::string key;
    int rank;
    size_t order;
  };
  std::vector<Candidate> differing;
  for (size_t i = 0; i < keys.size(); ++i) {
    const std::string& k = keys[i];
    if (k == "seed" || k == "sweep" || k.rfind("sweep.", 0) == 0) continue;
    bool differs = false, everywhere = true;
    for (const RunRecord& r : runs) {
      differs = differs || value(r, k) != value(runs[0], k);
      everywhere = everywhere && r.config.count(k);
    }
    if (!differs) continue;
    const int rank = axis_keys.count(k)                             ? 0
                     : (k == "positional.type" || k == "task.name") ? 1
                     : everywhere                                   ? 2
                                                                    : 3;
    differing.push_back({k, rank, i});
  }
  std::stable_sort(differing.begin(), differing.end(), [](const Candidate& a, const Candidate& b) {
    return a.rank != b.rank ? a.rank < b.rank : a.order < b.order;
  });
  // The grouping a set of keys induces: the group index of each run.
  auto partition = [&](const std::vector<Candidate>& ks) {
    std::map<std::vector<std::string>, size_t> ids;
    std::vector<size_t> p;
    for (const RunRecord& r : runs) {
      std::vector<std::string> v;
      for (const Candidate& c : ks) v.push_back(value(r, c.key));
      p.push_back(ids.emplace(v, ids.size()).first->second);
    }
    return p;
  };
  const std::vector<size_t> full = partition(differing);
  for (size_t i = differing.size(); i-- > 0;) {
    std::vector<Candidate> fewer = differing;
    fewer.erase(fewer.begin() + static_cast<std::ptrdiff_t>(i));
    if (partition(fewer) == full) differing = std::move(fewer);
  }
  std::vector<std::string> out;
  for (const Candidate& c : differing) out.push_back(c.key);
  return out;
}

namespace {

double metric_of(Metric metric, const RunRecord::Point& p) {
  return metric == Metric::sequence_accuracy ? p.sequence_accuracy : p.token_accuracy;
}

// The values a run's directory names for its sweep's axes ("positional=rotary/seed=0" →
// "rotary"), without the seed and the selected key, which tell runs of one group apart.
std::string single_axis_label(const RunRecord& r, const std::string& select) {
  std::string label;
  for (const auto& part : fs::path(r.dir)) {
    const std::string s = part.string();
    const size_t eq = s.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    const std::string key = s.substr(0, eq);
    if (key == "seed" || key == select) continue;
    label += (label.empty() ? "" : " / ") + s.substr(eq + 1);
  }
  return label;
}

// A run's value of `key`: as its config.yaml gives it; for a key its scheme leaves out of
// config.yaml at its default (rotary's fraction and scaling, pelab/core/keys.h), that
// default, so that a sweep over such a key labels its default's runs with the value; else "—".
// Those keys are newer than any run made without them, so no earlier grouping changes.
std::string config_value(const RunRecord& r, const std::string& key) {
  if (auto it = r.config.find(key); it != r.config.end()) return it->second;
  const std::string prefix = "positional.";
  const auto type = r.config.find("positional.type");
  if (key.rfind(prefix, 0) != 0 || type == r.config.end() || !is_scheme(type->second))
    return kAbsent;
  const SchemeKey* spec = scheme_info(type->second).key(key.substr(prefix.size()));
  return spec && spec->omitted_at_default && spec->default_value
             ? key_value_text(*spec->default_value)
             : kAbsent;
}

// Groups the completed runs by their values of c.group_keys, in the order the groups first
// appear; fills c.groups' keys and labels and returns each group's runs.
std::vector<std::vector<const RunRecord*>> group_runs(Comparison& c,
                                                      const std::vector<RunRecord>& done) {
  std::map<std::vector<std::string>, size_t> index;
  std::vector<std::vector<const RunRecord*>> members;
  for (const RunRecord& r : done) {
    std::vector<std::string> v;
    for (const std::string& k : c.group_keys) v.push_back(config_value(r, k));
    auto [it, fresh] = index.emplace(v, c.groups.size());
    if (fresh) {
      Group g;
      for (size_t i = 0; i < v.size(); ++i) {
        g.keys.emplace_back(c.group_keys[i], v[i]);
        g.label += std::string(i ? " / " : "") + v[i];
      }
      // One group: the sweep's single-valued axes name it when it has any (a sweep of one
      // scheme is that scheme, not the experiment), else the experiment's name.
      if (g.label.empty()) g.label = single_axis_label(r, c.rule.select);
      if (g.label.empty()) {
        auto name = r.config.find("name");
        g.label = name != r.config.end() ? name->second : "all runs";
      }
      c.groups.push_back(g);
      members.emplace_back();
    }
    members[it->second].push_back(&r);
  }
  return members;
}

// Over runs (by seed): each run's mean of `metric` over the lengths inside training into
// `inside`, over those beyond into `beyond`.
void split_by_training(const std::vector<const RunRecord*>& rs, Metric metric, Stat& inside,
                       Stat& beyond) {
  std::vector<double> in_values, out_values;
  std::vector<uint64_t> in_seeds, out_seeds;
  for (const RunRecord* r : rs) {
    std::vector<double> in, out;
    for (const auto& p : r->eval) (p.in_training ? in : out).push_back(metric_of(metric, p));
    if (!in.empty()) {
      in_values.push_back(mean_of(in));
      in_seeds.push_back(r->seed);
    }
    if (!out.empty()) {
      out_values.push_back(mean_of(out));
      out_seeds.push_back(r->seed);
    }
  }
  inside = summarize(in_values, in_seeds);
  beyond = summarize(out_values, out_seeds);
}

// A group's statistics over its runs (by seed): the metric at each evaluated length, and the
// per-run means inside and beyond the trained lengths. Adds the group's lengths to
// `all_lengths`.
void summarize_group(Group& g, std::vector<const RunRecord*> rs, Metric metric,
                     const CompareRule& rule, std::set<int64_t>& all_lengths) {
  std::stable_sort(rs.begin(), rs.end(),
                   [](const RunRecord* a, const RunRecord* b) { return a->seed < b->seed; });
  // A diverged run did not learn and has no numbers: it is counted, not summarised. Its
  // settings are the group's, so it tells representability as well as a completed run.
  for (const RunRecord* r : rs) {
    if (r->status == "diverged") g.diverged.push_back(r->dir);
    if (g.not_representable.empty()) g.not_representable = r->not_representable;
    if (g.not_representable_in_distribution.empty())
      g.not_representable_in_distribution = r->not_representable_in_distribution;
  }
  rs.erase(std::remove_if(rs.begin(), rs.end(),
                          [](const RunRecord* r) { return r->status == "diverged"; }),
           rs.end());
  std::set<int64_t> lengths;
  for (const RunRecord* r : rs) {
    g.runs.push_back(r->dir);
    g.learned_runs += run_learned(*r, metric, rule);
    g.train_max_length = std::max(g.train_max_length, r->train_max_length);
    for (const auto& p : r->eval) lengths.insert(p.length);
  }
  for (int64_t n : lengths) {
    GroupLength gl;
    gl.length = n;
    std::vector<double> values, tokens;
    std::vector<uint64_t> seeds;
    for (const RunRecord* r : rs)
      for (const auto& p : r->eval)
        if (p.length == n) {
          values.push_back(metric_of(metric, p));
          tokens.push_back(p.token_accuracy);
          seeds.push_back(r->seed);
          gl.in_training = gl.in_training || p.in_training;
        }
    gl.stat = summarize(values, seeds);
    gl.token = summarize(tokens, seeds);
    g.lengths.push_back(gl);
    all_lengths.insert(n);
  }
  std::vector<double> step_values;
  std::vector<uint64_t> step_seeds;
  for (const RunRecord* r : rs)
    if (r->steps >= 0) {
      step_values.push_back(static_cast<double>(r->steps));
      step_seeds.push_back(r->seed);
    }
  g.steps = summarize(step_values, step_seeds);
  split_by_training(rs, metric, g.in_distribution, g.extrapolation);
  split_by_training(rs, Metric::token_accuracy, g.in_distribution_token, g.extrapolation_token);
  split_by_training(rs, Metric::sequence_accuracy, g.in_distribution_sequence,
                    g.extrapolation_sequence);
}

// A group's accuracy by position at `position_length`, from its runs' per_position.csv, and
// the last position its training lengths reach.
void read_group_positions(Group& g, const std::vector<const RunRecord*>& rs,
                          int64_t position_length) {
  std::map<int64_t, std::vector<double>> by_position;
  int64_t last_train = -1;
  for (const RunRecord* r : rs) {
    if (r->status != "completed") continue;  // a diverged run has no numbers
    std::istringstream in(run_files::read_text(fs::path(r->dir) / "per_position.csv"));
    std::string line;
    if (!std::getline(in, line)) continue;  // header: length,position,scored,accuracy,loss
    while (std::getline(in, line)) {
      std::stringstream ss(line);
      std::string f[5];
      for (auto& x : f) std::getline(ss, x, ',');
      try {
        const int64_t length = std::stoll(f[0]), position = std::stoll(f[1]);
        if (length == position_length) by_position[position].push_back(std::stod(f[3]));
        if (length == g.train_max_length) last_train = std::max(last_train, position);
      } catch (const std::exception&) {
        break;  // a malformed file: use what was read
      }
    }
  }
  for (const auto& [position, values] : by_position) {
    const Stat s = summarize(values);
    g.by_position.push_back({position, s.mean, s.std, s.n});
  }
  g.last_train_position = last_train;
}

}  // namespace

namespace {

// The run's in-distribution validation score in `metric`; runs written before summary.json
// held one fall back to the mean of their in-distribution evaluation. A diverged run has none
// and scores 0: it did not learn.
double validation_score(const RunRecord& r, Metric metric) {
  const double v = metric == Metric::sequence_accuracy ? r.validation_sequence_accuracy
                                                       : r.validation_token_accuracy;
  if (std::isfinite(v)) return v;
  std::vector<double> in;
  for (const auto& p : r.eval)
    if (p.in_training) in.push_back(metric_of(metric, p));
  return in.empty() ? 0.0 : mean_of(in);
}

// The selection rule: of the values of `key` in a group's runs, keeps the runs of the value
// with the best mean validation score (the first in sweep order on a tie).
std::vector<const RunRecord*> select_runs(Group& g, const std::vector<const RunRecord*>& rs,
                                          const std::string& key, Metric metric) {
  std::vector<std::vector<const RunRecord*>> by_value;
  for (const RunRecord* r : rs) {
    const std::string value = config_value(*r, key);
    auto c = std::find_if(g.candidates.begin(), g.candidates.end(),
                          [&](const Group::Candidate& x) { return x.value == value; });
    if (c == g.candidates.end()) {
      g.candidates.push_back({value, 0.0, 0});
      by_value.emplace_back();
      c = g.candidates.end() - 1;
    }
    by_value[c - g.candidates.begin()].push_back(r);
  }
  // Numbers in ascending order (learning rates), else in the order the runs came.
  std::vector<size_t> order(g.candidates.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::vector<double> numbers;
  for (const Group::Candidate& x : g.candidates) {
    char* end = nullptr;
    numbers.push_back(std::strtod(x.value.c_str(), &end));
    if (end == x.value.c_str() || *end != '\0') numbers.clear();
    if (numbers.empty()) break;
  }
  if (numbers.size() == g.candidates.size())
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return numbers[a] < numbers[b]; });
  std::vector<Group::Candidate> sorted;
  std::vector<std::vector<const RunRecord*>> sorted_runs;
  for (size_t i : order) {
    sorted.push_back(g.candidates[i]);
    sorted_runs.push_back(by_value[i]);
  }
  g.candidates = std::move(sorted);
  by_value = std::move(sorted_runs);
  size_t best = 0;
  for (size_t i = 0; i < g.candidates.size(); ++i) {
    std::vector<double> scores;
    for (const RunRecord* r : by_value[i]) scores.push_back(validation_score(*r, metric));
    g.candidates[i].validation = mean_of(scores);
    g.candidates[i].runs = static_cast<int64_t>(scores.size());
    if (g.candidates[i].validation > g.candidates[best].validation) best = i;
  }
  g.selected = g.candidates[best].value;
  return by_value[best];
}

}  // namespace

bool run_learned(const RunRecord& run, Metric metric, const CompareRule& rule) {
  if (run.status == "diverged") return false;
  if (run.stop_when_met) return *run.stop_when_met;
  return validation_score(run, metric) >= rule.learned_at;
}

namespace {
// The key every run's sweep names as its selection (sweep.select, recorded in sweep.json or
// in a config.yaml that kept its sweep section), or "" if they disagree.
std::string sweep_selection(const std::vector<RunRecord>& runs) {
  std::string key;
  for (const RunRecord& r : runs) {
    auto it = r.config.find("sweep.select");
    const std::string k = !r.sweep_select.empty() ? r.sweep_select
                          : it == r.config.end()  ? ""
                                                  : it->second;
    if (&r != &runs.front() && k != key) return "";
    key = k;
  }
  return key;
}
}  // namespace

Comparison compare_runs(const std::vector<RunRecord>& runs, Metric metric, bool read_positions,
                        const CompareRule& rule) {
  Comparison c;
  c.metric = metric;
  c.rule = rule;
  if (c.rule.select.empty()) c.rule.select = sweep_selection(runs);
  std::vector<RunRecord> done;  // completed, and diverged with a config (they did not learn)
  for (const RunRecord& r : runs) {
    const bool trained = r.status == "completed" || (r.status == "diverged" && !r.config.empty());
    (trained ? done : c.excluded).push_back(r);
    c.completed_runs += r.status == "completed";
    if (trained && r.status == "diverged") c.diverged.push_back(r);
  }
  // The keys come from every run with a config, so that a group keeps its label when some of
  // its runs failed (a failed rotary run next to a completed one is still "rotary").
  std::vector<RunRecord> configured;
  for (const RunRecord& r : runs)
    if (!r.config.empty()) configured.push_back(r);
  c.group_keys = grouping_keys(configured);
  if (!c.rule.select.empty())  // the selected key tells runs apart inside a group
    c.group_keys.erase(std::remove(c.group_keys.begin(), c.group_keys.end(), c.rule.select),
                       c.group_keys.end());

  std::vector<std::vector<const RunRecord*>> members = group_runs(c, done);
  if (!c.rule.select.empty())
    for (size_t gi = 0; gi < c.groups.size(); ++gi)
      members[gi] = select_runs(c.groups[gi], members[gi], c.rule.select, metric);
  std::set<int64_t> all_lengths;
  for (size_t gi = 0; gi < c.groups.size(); ++gi)
    summarize_group(c.groups[gi], members[gi], metric, c.rule, all_lengths);
  c.lengths.assign(all_lengths.begin(), all_lengths.end());
  if (!c.lengths.empty()) c.position_length = c.lengths.back();

  if (read_positions && c.position_length > 0)
    for (size_t gi = 0; gi < c.groups.size(); ++gi)
      read_group_positions(c.groups[gi], members[gi], c.position_length);
  return c;
}

std::string format_interval(const Stat& s, int decimals) {
  if (s.n == 0) return kAbsent;
  if (s.n < 2) return fmt::format("{:.{}f}", s.mean, decimals);
  return fmt::format("{:.{}f} [{:.{}f}, {:.{}f}]", s.mean, decimals, s.ci_low, decimals, s.ci_high,
                     decimals);
}

double number_or_nan(const Stat& s, double x) {
  return s.n ? x : std::numeric_limits<double>::quiet_NaN();
}

std::string format_number(const Stat& s, double x, int decimals) {
  return s.n ? fmt::format("{:.{}f}", x, decimals) : std::string(kAbsent);
}

std::string format_stat(const Stat& s, int decimals) {
  if (s.n == 0) return kAbsent;
  if (s.n < 2 || !std::isfinite(s.std)) return fmt::format("{:.{}f}", s.mean, decimals);
  return fmt::format("{:.{}f} ± {:.{}f}", s.mean, decimals, s.std, decimals);
}

std::string with_token(const std::string& sequence_text, const Stat& token) {
  return token.n ? sequence_text + " / " + format_number(token, token.mean) : sequence_text;
}

std::string with_sequence(const Stat& sequence, const std::string& token_text) {
  return sequence.n ? format_number(sequence, sequence.mean) + " / " + token_text : token_text;
}

std::string group_label(const Group& g) {
  std::string label = g.label.empty() ? "all runs" : g.label;
  if (!g.not_representable_in_distribution.empty()) return label + " (" + kNotRepresentable + ")";
  if (!g.not_representable.empty()) return label + " (not representable beyond training)";
  if (g.all_learned()) return label;
  if (g.learned_runs == 0) return label + " (did not learn)";
  return fmt::format("{} (learned {} of {})", label, g.learned_runs, g.trained_runs());
}

namespace {
// A sequence-accuracy cell with token accuracy beside it; a token-accuracy comparison's cells
// are that already.
std::string cell_with_token(const Comparison& c, const std::string& text, const Stat& token) {
  return c.metric == Metric::sequence_accuracy ? with_token(text, token) : text;
}

// What a cell holds, for the tables' captions.
std::string cell_text_rule(const Comparison& c) {
  return c.metric == Metric::sequence_accuracy
             ? "each cell: sequence accuracy, mean over seeds [95% bootstrap interval] / token "
               "accuracy, mean over seeds"
             : "each cell: token accuracy, mean over seeds [95% bootstrap interval]";
}

// The groups whose settings cannot represent the task, and why: their numbers are no result
// about their scheme.
std::string not_representable_markdown(const Comparison& c) {
  std::string md;
  for (const Group& g : c.groups)
    if (!g.not_representable.empty())
      md +=
          fmt::format("- {}{}: {}\n", md_cell(g.label),
                      g.not_representable_in_distribution.empty() ? " (beyond training only)" : "",
                      g.not_representable);
  if (md.empty()) return "";
  return "\nNot representable at these settings (the scheme cannot single out what the task "
         "asks, or evaluation uses parameters training never reached: these numbers are no "
         "result about the scheme):\n\n" +
         md;
}

// How "learned" was judged, for the tables' captions.
std::string learned_rule_text(const Comparison& c) {
  return fmt::format(
      "A run learned the task when its training.stop_when criterion was met, or (without "
      "one) when its in-distribution validation {} reached {}; † marks the extrapolation of "
      "a group whose runs did not all learn: it is not comparable with the others'.",
      metric_name(c.metric), c.rule.learned_at);
}

// The in-distribution and extrapolation scores over seeds: mean and interval, median, max.
std::string over_seeds_markdown(const Comparison& c) {
  std::string md = fmt::format(
      "\nOver seeds (each seed's mean over the lengths inside and beyond training; papers "
      "report the max; steps: the mean training steps a run took, where a run with "
      "training.stop_when met its criterion; in-distribution and extrapolation: the mean [95% "
      "interval]{}):\n\n| group | runs | learned | steps | in-distribution | median | max | "
      "extrapolation | median | max |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n",
      c.metric == Metric::sequence_accuracy ? " / token accuracy's mean" : "");
  for (const Group& g : c.groups) {
    const std::string mark = g.all_learned() ? "" : " †";
    md += fmt::format(
        "| {} | {} | {} | {} | {} | {} | {} | {}{} | {}{} | {}{} |\n", md_cell(group_label(g)),
        g.trained_runs(), g.learned_runs, format_number(g.steps, g.steps.mean, 0),
        cell_with_token(c, format_interval(g.in_distribution), g.in_distribution_token),
        format_number(g.in_distribution, g.in_distribution.median),
        format_number(g.in_distribution, g.in_distribution.max),
        cell_with_token(c, format_interval(g.extrapolation), g.extrapolation_token), mark,
        format_number(g.extrapolation, g.extrapolation.median), mark,
        format_number(g.extrapolation, g.extrapolation.max), mark);
  }
  return md;
}

// The selection rule's candidates, per group.
std::string selection_markdown(const Comparison& c) {
  if (c.rule.select.empty()) return "";
  std::string md = fmt::format(
      "\nSelected per group: the value of `{}` with the best mean in-distribution validation "
      "{} (fixed before the runs; the other values' runs are left out above).\n\n| group | "
      "{} (validation {}, runs) | selected |\n|---|---|---|\n",
      c.rule.select, metric_name(c.metric), c.rule.select, metric_name(c.metric));
  for (const Group& g : c.groups) {
    std::string candidates;
    for (const Group::Candidate& x : g.candidates)
      candidates += fmt::format("{}{}: {:.3f} ({})", candidates.empty() ? "" : "; ", x.value,
                                x.validation, x.runs);
    md += fmt::format("| {} | {} | {} |\n", md_cell(g.label), md_cell(candidates), g.selected);
  }
  return md;
}
}  // namespace

std::string comparison_markdown(const Comparison& c) {
  std::string md;
  const std::string metric = c.metric == Metric::sequence_accuracy ? "Sequence" : "Token";
  md += fmt::format("## {} accuracy by length\n\n", metric);
  if (c.groups.empty()) {
    md += "No completed runs.\n";
  } else {
    // A length is marked in the header when every group that evaluated it trained on it; if
    // the groups disagree, the cells are marked instead.
    std::map<int64_t, int> in_count, eval_count;
    for (const Group& g : c.groups)
      for (const GroupLength& gl : g.lengths) {
        eval_count[gl.length]++;
        in_count[gl.length] += gl.in_training;
      }
    auto header_marked = [&](int64_t n) { return in_count[n] > 0 && in_count[n] == eval_count[n]; };
    auto mixed = [&](int64_t n) { return in_count[n] > 0 && in_count[n] < eval_count[n]; };
    md += fmt::format(
        "{} completed run{} in {} group{} ({}; n = seeds). Lengths marked * were in training; "
        "in-distribution and extrapolation average each seed over the lengths inside and beyond "
        "training. {}\n\n",
        c.completed_runs, c.completed_runs == 1 ? "" : "s", c.groups.size(),
        c.groups.size() == 1 ? "" : "s", cell_text_rule(c), learned_rule_text(c));
    std::string first = "group";
    if (!c.group_keys.empty()) {
      first.clear();
      for (const std::string& k : c.group_keys)
        first += std::string(first.empty() ? "" : " / ") + k;
    }
    md += "| " + md_cell(first) + " | n |";
    for (int64_t n : c.lengths) md += fmt::format(" {}{} |", n, header_marked(n) ? "*" : "");
    md += " in-distribution | extrapolation |\n|---|--:|";
    for (size_t i = 0; i < c.lengths.size(); ++i) md += "--:|";
    md += "--:|--:|\n";
    for (const Group& g : c.groups) {
      const int64_t n_runs = static_cast<int64_t>(g.runs.size());
      md += fmt::format("| {} | {} |", md_cell(group_label(g)), n_runs);
      for (int64_t n : c.lengths) {
        auto it = std::find_if(g.lengths.begin(), g.lengths.end(),
                               [&](const GroupLength& gl) { return gl.length == n; });
        if (it == g.lengths.end()) {
          md += fmt::format(" {} |", kAbsent);
          continue;
        }
        std::string cell = cell_with_token(c, format_interval(it->stat), it->token);
        if (mixed(n) && it->in_training) cell += "*";
        if (!it->in_training && !g.all_learned()) cell += " †";
        if (it->stat.n != n_runs) cell += fmt::format(" (n={})", it->stat.n);
        md += " " + cell + " |";
      }
      auto summary_cell = [&](const Stat& s, const Stat& token) {
        std::string cell = cell_with_token(c, format_interval(s), token);
        if (s.n && s.n != n_runs) cell += fmt::format(" (n={})", s.n);
        return cell;
      };
      md += fmt::format(" {} | {}{} |\n", summary_cell(g.in_distribution, g.in_distribution_token),
                        summary_cell(g.extrapolation, g.extrapolation_token),
                        g.all_learned() ? "" : " †");
    }
    md += not_representable_markdown(c);
    md += over_seeds_markdown(c);
    md += selection_markdown(c);
  }
  if (!c.diverged.empty()) {
    md += fmt::format(
        "\nDiverged ({} run{}; {}):\n\n", c.diverged.size(), c.diverged.size() == 1 ? "" : "s",
        c.rule.select.empty() ? "each counts in its group as a run that did not learn"
                              : fmt::format("each scores 0 in the selection of `{}`; those at the "
                                            "value selected also count in their group as runs that "
                                            "did not learn",
                                            c.rule.select));
    for (const RunRecord& r : c.diverged) md += fmt::format("- `{}`: {}\n", r.dir, r.detail);
  }
  if (!c.excluded.empty()) {
    md += fmt::format("\nNot included ({} run{}):\n\n", c.excluded.size(),
                      c.excluded.size() == 1 ? "" : "s");
    for (const RunRecord& r : c.excluded)
      md += fmt::format("- `{}`: {}{}\n", r.dir, r.status, r.detail.empty() ? "" : ": " + r.detail);
  }
  return md;
}

std::string comparison_csv(const Comparison& c) {
  std::string s = "group,length,in_training,mean,std,n,seeds,values,median,max,ci_low,ci_high\n";
  for (const Group& g : c.groups)
    for (const GroupLength& gl : g.lengths) {
      std::string seeds, values;
      for (size_t i = 0; i < gl.stat.values.size(); ++i) {
        seeds += std::string(i ? ";" : "") + std::to_string(gl.stat.seeds[i]);
        values += std::string(i ? ";" : "") + fmt::format("{:.6f}", gl.stat.values[i]);
      }
      s += fmt::format(
          "{},{},{},{:.6f},{},{},{},{},{:.6f},{:.6f},{:.6f},{:.6f}\n", csv_field(g.label),
          gl.length, gl.in_training ? "true" : "false", gl.stat.mean,
          std::isfinite(gl.stat.std) ? fmt::format("{:.6f}", gl.stat.std) : "", gl.stat.n, seeds,
          values, gl.stat.median, gl.stat.max, gl.stat.ci_low, gl.stat.ci_high);
    }
  return s;
}

std::string comparison_json(const Comparison& c) {
  json j = {{"metric", metric_name(c.metric)},
            {"learned_at", c.rule.learned_at},
            {"select", c.rule.select},
            {"dirs", c.dirs},
            {"group_keys", c.group_keys},
            {"lengths", c.lengths},
            {"completed_runs", c.completed_runs},
            {"position_length", c.position_length},
            {"groups", json::array()},
            {"diverged", json::array()},
            {"excluded", json::array()}};
  for (const Group& g : c.groups) {
    json keys = json::object();
    for (const auto& [k, v] : g.keys) keys[k] = v;
    json lengths = json::array();
    for (const GroupLength& gl : g.lengths) {
      json x = stat_json(gl.stat);
      x["token_accuracy"] = stat_json(gl.token);
      x["length"] = gl.length;
      x["in_training"] = gl.in_training;
      lengths.push_back(x);
    }
    json positions = json::array();
    for (const PositionStat& p : g.by_position)
      positions.push_back(
          {{"position", p.position}, {"mean", p.mean}, {"std", number_or_null(p.std)}, {"n", p.n}});
    json candidates = json::array();
    for (const Group::Candidate& x : g.candidates)
      candidates.push_back({{"value", x.value}, {"validation", x.validation}, {"runs", x.runs}});
    j["groups"].push_back(
        {{"label", g.label},
         {"learned_runs", g.learned_runs},
         {"candidates", candidates},
         {"selected", g.selected},
         {"keys", keys},
         {"runs", g.runs},
         {"diverged", g.diverged},
         {"train_max_length", g.train_max_length},
         {"lengths", lengths},
         {"not_representable", g.not_representable},
         {"not_representable_in_distribution", g.not_representable_in_distribution},
         {"in_distribution", stat_json(g.in_distribution)},
         {"in_distribution_token", stat_json(g.in_distribution_token)},
         {"extrapolation_token", stat_json(g.extrapolation_token)},
         {"steps", stat_json(g.steps)},
         {"extrapolation", stat_json(g.extrapolation)},
         {"by_position", positions},
         {"last_train_position", g.last_train_position}});
  }
  for (const RunRecord& r : c.diverged)
    j["diverged"].push_back({{"dir", r.dir}, {"detail", r.detail}});
  for (const RunRecord& r : c.excluded)
    j["excluded"].push_back({{"dir", r.dir}, {"status", r.status}, {"detail", r.detail}});
  return j.dump(2) + "\n";
}

}  // namespace pelab
