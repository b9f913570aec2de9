#include "pelab/suite/suite_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "pelab/config/experiment.h"
#include "pelab/core/error.h"
#include "pelab/core/strings.h"
#include "pelab/io/atomic_file.h"
#include "pelab/io/read_file.h"
#include "pelab/report/plot.h"
#include "pelab/report/report.h"
#include "pelab/report/representable.h"

namespace pelab {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr const char* kSelect = "training.lr";

std::string value_of(const PlannedRun& p, const std::string& key) {
  for (const auto& [k, v] : p.run.values)
    if (k == key) return v;
  return "";
}

// A CSV field: quoted, inner quotes doubled ("" when empty).
std::string csv_quoted(const std::string& s) {
  if (s.empty()) return "";
  std::string out = "\"";
  for (char ch : s) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

// ---- recorded runs ----------------------------------------------------------------------

double finite_or_nan(const json& j) {
  return j.is_number() ? j.get<double>() : std::numeric_limits<double>::quiet_NaN();
}

json run_to_json(const std::string& task, const std::string& lr, const RunRecord& r) {
  json eval = json::array();
  for (const RunRecord::Point& p : r.eval)
    eval.push_back({{"length", p.length},
                    {"in_training", p.in_training},
                    {"sequence_accuracy", p.sequence_accuracy},
                    {"token_accuracy", p.token_accuracy}});
  json j = {{"task", task},
            {"lr", lr},
            {"seed", r.seed},
            {"status", r.status},
            {"steps", r.steps},
            {"train_lengths", {r.train_min_length, r.train_max_length}},
            {"validation",
             {{"sequence_accuracy", r.validation_sequence_accuracy},
              {"token_accuracy", r.validation_token_accuracy}}},
            {"eval", eval}};
  if (r.stop_when_met) j["stop_when_met"] = *r.stop_when_met;
  return j;
}

RunRecord run_from_json(const json& j, const std::string& label) {
  RunRecord r;
  const std::string lr = j.at("lr").get<std::string>();
  r.seed = j.at("seed").get<uint64_t>();
  r.dir = fmt::format("recorded:{}/{}/lr={}/seed={}", label, j.at("task").get<std::string>(), lr,
                      r.seed);
  r.status = j.at("status").get<std::string>();
  r.steps = j.at("steps").get<int64_t>();
  r.train_min_length = j.at("train_lengths").at(0).get<int64_t>();
  r.train_max_length = j.at("train_lengths").at(1).get<int64_t>();
  r.validation_sequence_accuracy = finite_or_nan(j.at("validation").at("sequence_accuracy"));
  r.validation_token_accuracy = finite_or_nan(j.at("validation").at("token_accuracy"));
  if (j.contains("stop_when_met")) r.stop_when_met = j["stop_when_met"].get<bool>();
  for (const json& p : j.at("eval"))
    r.eval.push_back({p.at("length").get<int64_t>(), p.at("in_training").get<bool>(),
                      p.at("sequence_accuracy").get<double>(),
                      p.at("token_accuracy").get<double>()});
  r.config = {{kSelect, lr}, {"seed", std::to_string(r.seed)}};
  r.config_order = {kSelect, "seed"};
  r.sweep_select = kSelect;
  return r;
}

struct Recording {
  SuiteColumn column;
  std::map<std::string, std::vector<RunRecord>> runs;  // task → its runs
};

// The recording of one column, if there is one of this suite's fingerprint.
std::optional<Recording> read_recording(const Suite& suite, const std::string& recorded,
                                        const std::string& label, std::vector<std::string>& notes) {
  const fs::path file = fs::path(recorded) / (label + ".json");
  std::error_code ec;
  if (recorded.empty() || !fs::exists(file, ec)) return std::nullopt;
  json j;
  try {
    j = json::parse(read_regular_file(file.string(), "a recorded baseline", uint64_t{64} << 20));
    Recording rec;
    PELAB_CHECK(j.at("suite") == suite.name && j.at("scheme") == label,
                "{}: records suite {} scheme {}", file.string(), j.at("suite").dump(),
                j.at("scheme").dump());
    if (j.at("fingerprint") != suite.fingerprint()) {
      notes.push_back(
          fmt::format("{}: recorded under another version of the suite (fingerprint "
                      "{}, now {}); left out",
                      file.string(), j.at("fingerprint").get<std::string>(), suite.fingerprint()));
      return std::nullopt;
    }
    rec.column = {label,
                  j.value("randomized", false),
                  true,
                  j.at("commit").get<std::string>(),
                  j.at("cpu").get<std::string>(),
                  j.value("date", "")};
    for (const json& run : j.at("runs"))
      rec.runs[run.at("task").get<std::string>()].push_back(run_from_json(run, label));
    return rec;
  } catch (const json::exception& e) {
    throw Error(
        fmt::format("{}: not a recorded baseline pelab wrote ({})", file.string(), e.what()));
  }
}

SuiteCell cell_of(const std::vector<RunRecord>& records, int64_t missing, Metric metric) {
  SuiteCell cell;
  cell.missing = missing;
  std::vector<RunRecord> trained;
  for (const RunRecord& r : records)
    if (r.status == "completed" || r.status == "diverged")
      trained.push_back(r);
    else
      ++cell.missing;
  if (trained.empty()) return cell;
  CompareRule rule;
  rule.select = kSelect;
  const Comparison c = compare_runs(trained, metric, false, rule);
  if (c.groups.empty()) return cell;
  PELAB_ASSERT(c.groups.size() == 1);
  cell.present = true;
  cell.group = c.groups.front();
  return cell;
}

// The columns in table order: each shipped scheme plain, then randomized, then the others.
std::vector<SuiteColumn> ordered_columns(const Suite& suite, std::vector<SuiteColumn> columns) {
  auto rank = [&](const SuiteColumn& c) {
    std::string base = c.label.substr(0, c.label.find('+'));
    const auto it = std::find(suite.schemes.begin(), suite.schemes.end(), base);
    const size_t i = it == suite.schemes.end() ? suite.schemes.size() : it - suite.schemes.begin();
    return std::make_pair(i, c.randomized);
  };
  std::stable_sort(columns.begin(), columns.end(),
                   [&](const SuiteColumn& a, const SuiteColumn& b) { return rank(a) < rank(b); });
  return columns;
}

// ROOT for ROOT/configs/suites/NAME.yaml; a suite file anywhere else (a user's own) is its
// own directory's, never a directory above it.
fs::path suite_root(const Suite& suite) {
  const fs::path dir = fs::path(suite.path).parent_path();
  const bool shipped_layout =
      dir.filename() == "suites" && dir.parent_path().filename() == "configs";
  return shipped_layout ? dir.parent_path().parent_path() : dir;
}

}  // namespace

std::string recorded_dir(const Suite& suite) {
  return (suite_root(suite) / "results" / "suites" / suite.name).string();
}

SuiteTable suite_table(const Suite& suite, const SweepPlan& plan,
                       const std::vector<SuiteScheme>& schemes, const std::string& recorded,
                       Metric metric) {
  SuiteTable t;
  t.suite = suite.name;
  t.metric = metric;
  for (const SuiteTask& task : suite.tasks) t.tasks.push_back(task.name);
  // Live columns: the runs of the plan.
  std::map<std::string, std::map<std::string, std::vector<RunRecord>>> live;  // label → task
  std::map<std::string, std::map<std::string, int64_t>> missing;
  std::map<std::string, std::map<std::string, std::string>> problems;  // label → task → why
  for (const PlannedRun& p : plan.runs) {
    std::error_code ec;
    const std::string label = value_of(p, "scheme"), task = value_of(p, "task");
    if (!problems[label].count(task))  // one check per cell: its runs differ in seed and lr only
      problems[label][task] =
          representability_problem(parse_experiment(p.config_yaml, p.run.name, {}, ""));
    if (fs::is_directory(p.run.dir, ec))
      live[label][task].push_back(read_run(p.run.dir));
    else
      ++missing[label][task];
  }
  std::vector<SuiteColumn> columns;
  std::map<std::string, std::map<std::string, std::vector<RunRecord>>> runs = live;
  for (const SuiteScheme& s : schemes)
    columns.push_back({s.label, s.randomized, false, "", "", ""});
  // Recorded columns: each shipped scheme not run here.
  std::vector<SuiteScheme> shipped = suite_schemes(suite, {});
  for (const SuiteScheme& s : shipped) {
    if (std::any_of(columns.begin(), columns.end(),
                    [&](const SuiteColumn& c) { return c.label == s.label; }))
      continue;
    std::optional<Recording> rec = read_recording(suite, recorded, s.label, t.notes);
    if (!rec) continue;
    columns.push_back(rec->column);
    runs[s.label] = rec->runs;
  }
  t.columns = ordered_columns(suite, columns);
  for (const std::string& task : t.tasks) {
    std::vector<SuiteCell> row;
    for (const SuiteColumn& c : t.columns) {
      const int64_t absent =
          missing.count(c.label) && missing[c.label].count(task) ? missing[c.label][task] : 0;
      row.push_back(cell_of(runs[c.label][task], absent, metric));
      if (problems.count(c.label) && problems[c.label].count(task))
        row.back().not_representable = problems[c.label][task];
    }
    t.cells.push_back(std::move(row));
  }
  return t;
}

namespace {

std::string column_header(const SuiteColumn& c) {
  return c.label + (c.recorded ? " (rec.)" : "");
}

// "0.62 · 0.55 [0.50, 0.60]", ✗ when no run learned, "k/n learned" when some did not; "not
// representable at these settings (note N)" when its settings cannot represent the task.
// The metric's max · mean [interval], with the other accuracy's mean beside it, sequence
// accuracy left of the slash as in every table (compare.h's with_token, with_sequence).
std::string cell_text(const SuiteCell& c, int note, Metric metric) {
  if (!c.not_representable.empty()) return fmt::format("{} (note {})", kNotRepresentable, note);
  if (!c.present) return c.missing ? fmt::format("({} to run)", c.missing) : "—";
  const Group& g = c.group;
  const Stat& s = g.extrapolation;
  const std::string stat = fmt::format("{} · {}", format_number(s, s.max), format_interval(s));
  std::string text = metric == Metric::token_accuracy
                         ? with_sequence(g.extrapolation_sequence, stat)
                         : with_token(stat, g.extrapolation_token);
  if (g.learned_runs == 0)
    text = "✗ " + text;
  else if (!g.all_learned())
    text += fmt::format(" ({}/{} learned)", g.learned_runs, g.trained_runs());
  if (c.missing) text += fmt::format(" ({} to run)", c.missing);
  return text;
}

std::vector<std::string> recorded_lines(const SuiteTable& t) {
  std::vector<std::string> lines;
  for (const SuiteColumn& c : t.columns)
    if (c.recorded)
      lines.push_back(fmt::format("{}: recorded at commit {} on {}{}", c.label, c.commit, c.cpu,
                                  c.date.empty() ? "" : " (" + c.date + ")"));
  return lines;
}

}  // namespace

std::string suite_markdown(const SuiteTable& t) {
  std::string md = fmt::format(
      "Suite `{}`: {} beyond the training lengths, each seed's mean over those lengths; per "
      "cell the maximum over seeds · the mean [95% interval] (the learning rate chosen by "
      "in-distribution validation), and {} accuracy's mean beside it (sequence / token). ✗: no "
      "run met the in-distribution criterion (did not learn). (rec.): a recorded baseline, not "
      "run here.\n\n| task |",
      t.suite, metric_name(t.metric), t.metric == Metric::token_accuracy ? "sequence" : "token");
  for (const SuiteColumn& c : t.columns) md += fmt::format(" {} |", column_header(c));
  md += "\n|---|";
  for (size_t i = 0; i < t.columns.size(); ++i) md += "---|";
  md += "\n";
  std::vector<std::string> unrepresentable;
  for (size_t r = 0; r < t.tasks.size(); ++r) {
    md += fmt::format("| {} |", t.tasks[r]);
    for (size_t k = 0; k < t.columns.size(); ++k) {
      const SuiteCell& c = t.cells[r][k];
      if (!c.not_representable.empty())
        unrepresentable.push_back(
            fmt::format("{}, {}: {}", t.tasks[r], t.columns[k].label, c.not_representable));
      md += fmt::format(" {} |", cell_text(c, static_cast<int>(unrepresentable.size()), t.metric));
    }
    md += "\n";
  }
  if (!unrepresentable.empty())
    md += "\nNot representable at these settings (no result about the scheme):\n\n";
  for (size_t i = 0; i < unrepresentable.size(); ++i)
    md += fmt::format("{}. {}\n", i + 1, unrepresentable[i]);
  const std::vector<std::string> recorded = recorded_lines(t);
  if (!recorded.empty()) md += "\nRecorded baselines:\n\n";
  for (const std::string& line : recorded) md += fmt::format("- {}\n", line);
  for (const std::string& note : t.notes) md += fmt::format("\nNote: {}\n", note);
  return md;
}

std::string suite_csv(const SuiteTable& t) {
  std::string csv =
      "task,scheme,randomized,recorded,commit,cpu,runs,learned_runs,missing_runs,selected_lr,"
      "max,mean,ci_low,ci_high,n,in_distribution_mean,sequence_mean,token_mean,"
      "not_representable\n";
  auto num = [](const Stat& s, double x) {
    return s.n == 0 ? std::string() : fmt::format("{:.6g}", x);
  };
  for (size_t r = 0; r < t.tasks.size(); ++r)
    for (size_t k = 0; k < t.columns.size(); ++k) {
      const SuiteColumn& col = t.columns[k];
      const SuiteCell& c = t.cells[r][k];
      const Stat& s = c.group.extrapolation;
      const Stat &seq = c.group.extrapolation_sequence, &tok = c.group.extrapolation_token;
      csv += fmt::format("{},{},{},{},{},\"{}\",{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
                         t.tasks[r], col.label, col.randomized, col.recorded, col.commit, col.cpu,
                         c.present ? c.group.trained_runs() : 0, c.group.learned_runs, c.missing,
                         c.group.selected, num(s, s.max), num(s, s.mean), num(s, s.ci_low),
                         num(s, s.ci_high), s.n,
                         num(c.group.in_distribution, c.group.in_distribution.mean),
                         num(seq, seq.mean), num(tok, tok.mean), csv_quoted(c.not_representable));
    }
  return csv;
}

std::string suite_latex(const SuiteTable& t) {
  auto tex = [](const std::string& s) {
    std::string out;
    for (char ch : s) out += ch == '_' ? std::string("\\_") : std::string(1, ch);
    return out;
  };
  std::string s = "% pelab suite " + t.suite +
                  ": max over seeds (mean); \\dag: did not learn; *: recorded baseline; n/r: not "
                  "representable at these settings\n"
                  "\\begin{tabular}{l" +
                  std::string(t.columns.size(), 'c') + "}\n\\hline\ntask";
  for (const SuiteColumn& c : t.columns) s += " & " + tex(c.label) + (c.recorded ? "*" : "");
  s += " \\\\\n\\hline\n";
  for (size_t r = 0; r < t.tasks.size(); ++r) {
    s += tex(t.tasks[r]);
    for (const SuiteCell& c : t.cells[r]) {
      const Stat& st = c.group.extrapolation;
      if (!c.not_representable.empty()) {
        s += " & n/r";
        continue;
      }
      if (!c.present || st.n == 0) {
        s += " & --";
        continue;
      }
      s += fmt::format(" & {:.2f} ({:.2f}){}", st.max, st.mean,
                       c.group.all_learned() ? "" : "\\dag");
    }
    s += " \\\\\n";
  }
  return s + "\\hline\n\\end{tabular}\n";
}

SuiteReport write_suite_report(const SuiteTable& table, const std::string& out_dir,
                               const std::string& gnuplot) {
  SuiteReport report;
  report.table = table;
  fs::create_directories(out_dir);
  const std::vector<std::pair<std::string, std::string>> files = {
      {"suite.md", suite_markdown(table)},
      {"suite.csv", suite_csv(table)},
      {"suite.tex", suite_latex(table)}};
  for (const auto& [name, text] : files) {
    const std::string path = (fs::path(out_dir) / name).string();
    write_file_atomic(path, text);
    report.written.push_back(path);
  }
  // The heat map: tasks down, columns across, the maximum over seeds in each cell.
  std::string body = "$map << EOD\n";
  for (size_t r = 0; r < table.tasks.size(); ++r) {
    std::vector<std::string> row;
    for (const SuiteCell& c : table.cells[r])
      row.push_back(gnuplot_number(c.present && c.group.extrapolation.n > 0
                                       ? c.group.extrapolation.max
                                       : std::numeric_limits<double>::quiet_NaN()));
    body += join(row, " ") + "\n";
  }
  body += "EOD\nset xtics (";
  for (size_t k = 0; k < table.columns.size(); ++k)
    body +=
        fmt::format("{}{} {}", k ? ", " : "", gnuplot_quoted(column_header(table.columns[k])), k);
  body += ") rotate by 45 right\nset ytics (";
  for (size_t r = 0; r < table.tasks.size(); ++r)
    body += fmt::format("{}{} {}", r ? ", " : "", gnuplot_quoted(table.tasks[r]), r);
  body += fmt::format(
      ")\nset yrange [{}:-0.5] reverse\nset xrange [-0.5:{}]\nset cbrange [0:1]\n"
      "set palette defined (0 '#f7fbff', 0.5 '#6baed6', 1 '#08306b')\n"
      "set title {}\nunset key\n",
      static_cast<double>(table.tasks.size()) - 0.5,
      static_cast<double>(table.columns.size()) - 0.5,
      gnuplot_quoted(fmt::format("suite {}: max over seeds of {} beyond training", table.suite,
                                 metric_name(table.metric))));
  const std::string plot =
      "plot $map matrix with image, $map matrix using 1:2:($3 == $3 ? sprintf('%.2f', $3) : "
      "'') with labels";
  const std::string size =
      fmt::format("{},{}", 300 + 70 * table.columns.size(), 260 + 32 * table.tasks.size());
  const PlotResult plot_result = draw_figure(body, plot, out_dir, "suite_heatmap", size, gnuplot);
  report.written.insert(report.written.end(), plot_result.written.begin(),
                        plot_result.written.end());
  report.plot_message = plot_result.message;
  return report;
}

std::vector<std::string> write_task_comparisons(const Suite& suite, const std::string& out_dir,
                                                bool plots) {
  std::vector<std::string> written;
  for (const SuiteTask& task : suite.tasks) {
    const std::string dir = (fs::path(out_dir) / sweep_dir_component("task", task.name)).string();
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    CompareOptions o;
    o.dirs = {dir};
    o.plots = plots;
    o.rule.select = kSelect;
    const CompareOutput out = run_compare(o);
    written.insert(written.end(), out.written.begin(), out.written.end());
  }
  return written;
}

namespace {

// The commit and CPU a run names in its environment.json (written when it started).
std::pair<std::string, std::string> trained_by(const std::string& run_dir) {
  const std::string file = (fs::path(run_dir) / "environment.json").string();
  try {
    const json env = json::parse(read_regular_file(file, "a run's environment", uint64_t{1} << 20));
    return {env.at("git_commit").get<std::string>(), env.at("cpu").get<std::string>()};
  } catch (const json::exception& e) {
    throw Error(fmt::format("{}: not a run's environment.json ({})", file, e.what()));
  }
}

// "A" for one CPU; "A (300 runs), B (210 runs)" when runs came from several.
std::string cpus_text(const std::map<std::string, int64_t>& cpus) {
  if (cpus.size() == 1) return cpus.begin()->first;
  std::vector<std::string> parts;
  for (const auto& [cpu, n] : cpus)
    parts.push_back(fmt::format("{} ({} run{})", cpu, n, n == 1 ? "" : "s"));
  return join(parts, ", ");
}

}  // namespace

std::vector<std::string> record_suite(const Suite& suite, const SweepPlan& plan,
                                      const std::vector<SuiteScheme>& schemes,
                                      const std::string& recorded, bool allow_dirty) {
  std::vector<std::pair<std::string, json>> files;
  for (const SuiteScheme& s : schemes) {
    PELAB_CHECK(s.shipped,
                "--schemes {}: not one of the suite's recorded schemes (schemes: {}; randomized: "
                "{}); only those are recorded",
                s.label, join(suite.schemes), join(suite.randomized));
    json runs = json::array();
    std::map<std::string, int64_t> commits, cpus;
    for (const PlannedRun& p : plan.runs) {
      if (value_of(p, "scheme") != s.label) continue;
      const RunRecord r = read_run(p.run.dir);
      PELAB_CHECK(r.status == "completed" || r.status == "diverged",
                  "{}: {} ({}); record a suite once every run of the scheme has finished",
                  p.run.dir, r.status, r.detail.empty() ? "run the suite to finish it" : r.detail);
      runs.push_back(run_to_json(value_of(p, "task"), value_of(p, kSelect), r));
      const auto [commit, cpu] = trained_by(p.run.dir);
      ++commits[commit];
      ++cpus[cpu];
    }
    std::vector<std::string> named;
    for (const auto& [commit, n] : commits)
      named.push_back(fmt::format("{} ({} run{})", commit, n, n == 1 ? "" : "s"));
    PELAB_CHECK(commits.size() <= 1,
                "{}: its runs come from {} commits, {}; a recorded baseline is one commit's: "
                "train the others again at one",
                s.label, commits.size(), join(named, ", "));
    PELAB_CHECK(!commits.empty(), "{}: no run of it in this suite's plan; nothing to record",
                s.label);
    std::string commit = commits.begin()->first;
    const bool clean = !commit.ends_with("-dirty") && commit != "unknown";
    PELAB_CHECK(clean || allow_dirty,
                "{}: its runs were trained by a build of {}, not one clean commit; record them "
                "with --allow-dirty to say so, or train them again from a clean checkout",
                s.label, commit);
    if (!clean) commit += " (not clean)";
    std::time_t now = std::time(nullptr);
    char date[32];
    std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
    files.emplace_back(s.label, json{{"suite", suite.name},
                                     {"scheme", s.label},
                                     {"randomized", s.randomized},
                                     {"fingerprint", suite.fingerprint()},
                                     {"commit", commit},
                                     {"cpu", cpus_text(cpus)},
                                     {"date", date},
                                     {"runs", runs}});
  }
  // Every scheme is checked before any file is written.
  std::vector<std::string> written;
  fs::create_directories(recorded);
  for (const auto& [label, j] : files) {
    const std::string path = (fs::path(recorded) / (label + ".json")).string();
    write_file_atomic(path, j.dump(1) + "\n");
    written.push_back(path);
  }
  return written;
}

std::string suite_budget_markdown(const Suite& suite, const SweepPlan& plan) {
  double seconds = 0;
  int64_t steps = 0;
  std::vector<std::pair<std::string, double>> by_column;  // in the plan's order
  for (size_t i = 0; i < plan.runs.size(); ++i) {
    const ExperimentConfig c =
        parse_experiment(plan.runs[i].config_yaml, plan.runs[i].run.name, {}, "");
    const RunCost cost = estimate_run(suite.cost, c);
    seconds += cost.core_seconds;
    steps += cost.steps;
    const std::string column = value_of(plan.runs[i], "scheme");
    auto it = std::find_if(by_column.begin(), by_column.end(),
                           [&](const auto& e) { return e.first == column; });
    if (it == by_column.end()) it = by_column.insert(by_column.end(), {column, 0.0});
    it->second += cost.core_seconds;
  }
  std::vector<std::string> columns, task_protocols;
  for (const auto& [column, s] : by_column)
    columns.push_back(fmt::format("{} {:.2f}", column, s / 3600));
  for (const SuiteTask& t : suite.tasks)
    if (!t.protocol.empty()) task_protocols.push_back(t.name + ": " + join(t.protocol));
  const SuiteCost& model = suite.cost;
  const SuiteBudget& b = suite.budget;
  std::string md = fmt::format(
      "- Tasks: {} ({}).\n- Schemes recorded: {} plain ({}){}.\n"
      "- Per task and scheme: learning rates {{{}}} × seeds {{{}}}; each run at most {} steps, "
      "stopped earlier by the criterion ({}).\n"
      "- Training lengths {}; evaluated at {} ({} examples each).\n"
      "{}- Runs: {}; at most {} training steps in all.\n"
      "- Estimated cost: at most {:.1f} core-hours, one thread a run, every run counted at its "
      "step cap (an upper bound: the criterion ends most runs that learn sooner). By column: "
      "{}. Cost model (src/suite/suite_cost.h): {:.3g} s a training token of {} at length {} "
      "({}); each scheme's step relative to {}'s from {} ({}).\n",
      suite.tasks.size(),
      fmt::join(
          [&] {
            std::vector<std::string> n;
            for (const SuiteTask& t : suite.tasks) n.push_back(t.name);
            return n;
          }(),
          ", "),
      suite.schemes.size(), join(suite.schemes),
      suite.randomized.empty()
          ? std::string()
          : fmt::format(" and {} randomized ({}; positions drawn from [0, {}), {} draw(s) at "
                        "evaluation)",
                        suite.randomized.size(), join(suite.randomized), suite.max_position,
                        suite.eval_draws),
      join(b.lrs), join(b.seeds), b.steps,
      b.stop_when.empty() ? std::string("none") : join(b.stop_when),
      b.max_length > 0 ? fmt::format("{}–{}", b.min_length, b.max_length)
                       : std::string("each task config's own"),
      b.evaluation_lengths.empty() ? std::string("each task config's own lengths")
                                   : fmt::format("{}", fmt::join(b.evaluation_lengths, ", ")),
      b.examples,
      task_protocols.empty()
          ? std::string()
          : fmt::format("- The tasks' own protocol keys: {}.\n", join(task_protocols, "; ")),
      plan.runs.size(), steps, seconds / 3600, join(columns), model.seconds_per_token,
      model.step_time.base, model.at_length, model.measured.empty() ? "not stated" : model.measured,
      model.step_time.base,
      fs::path(model.step_time.source).lexically_relative(suite_root(suite)).string(),
      model.step_time.measured);
  return md;
}

std::string suite_page(const Suite& suite, const SuiteTable& t, const std::string& figure,
                       const std::string& budget) {
  std::string md = fmt::format(
      "# Suite `{}`\n\n<!-- Written by `pelab suite docs {}` from results/suites/{}/; do not "
      "edit above the hand-written part. -->\n\n{}\n\nRun it: `pelab suite run {}` (all its "
      "schemes), or with your own "
      "scheme only: `pelab suite run {} --schemes path/to/group.yaml` — the table then shows "
      "the recorded baselines beside it.\n\n",
      suite.name, suite.name, suite.name, suite.description, suite.name, suite.name);
  const bool any = std::any_of(t.columns.begin(), t.columns.end(),
                               [](const SuiteColumn& c) { return c.recorded; });
  md += "## Results\n\n";
  if (!any) {
    md += "The baselines of this suite are not recorded yet (`pelab suite record " + suite.name +
          "` writes them from a finished run of every scheme at one clean commit).\n\n";
  } else {
    md += suite_markdown(t) + "\n";
    if (!figure.empty()) md += "![heat map](" + figure + ")\n\n";
  }
  return md + "## Budget\n\nFixed in configs/suites/" + suite.name +
         ".yaml before any run, the same for every scheme (its arithmetic, and how it compares "
         "with the published setups, below):\n\n" +
         budget;
}

}  // namespace pelab
