#include "pelab/claims/reproduce.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "claims/claim.h"
#include "pelab/config/load_model.h"
#include "pelab/core/error.h"
#include "pelab/core/strings.h"
#include "pelab/io/atomic_file.h"
#include "pelab/io/read_file.h"
#include "pelab/positional/scheme.h"
#include "pelab/report/report.h"
#include "pelab/run/provenance.h"
#include "pelab/sweep/sweep.h"

namespace pelab {

namespace fs = std::filesystem;

const char* to_string(Verdict v) {
  switch (v) {
    case Verdict::Supported:
      return "supported";
    case Verdict::Refuted:
      return "refuted";
    case Verdict::Mixed:
      return "mixed";
    case Verdict::Inconclusive:
      return "inconclusive";
  }
  return "?";
}

namespace claims {

std::string fmt_number(double x) {
  if (!std::isfinite(x)) return "n/a";
  if (x != 0 && std::abs(x) < 1e-3) return fmt::format("{:.2e}", x);
  return fmt::format("{:.4g}", x);
}

Encoder encoding_model(const PositionalConfig& positional, int64_t d_model, uint64_t seed) {
  ModelConfig m;
  m.vocab_in = 8;
  m.vocab_out = 8;
  m.d_model = d_model;
  m.heads = 1;
  m.layers = 1;
  m.positional = positional;
  return Encoder(m, make_scheme, seed);
}

const Group* ClaimSweep::group(const std::string& key, const std::string& value) const {
  for (const Group& g : comparison.groups)
    for (const auto& [k, v] : g.keys)
      if (k == key && v == value) return &g;
  return nullptr;
}

namespace {

// FNV-1a: a short name for a list of overrides that is the same on every machine.
std::string overrides_hash(const std::vector<std::string>& overrides) {
  uint64_t h = 14695981039346656037ull;
  for (const std::string& o : overrides) {
    for (const unsigned char c : o) h = (h ^ c) * 1099511628211ull;
    h = (h ^ static_cast<unsigned char>('\n')) * 1099511628211ull;
  }
  return fmt::format("{:08x}", h & 0xffffffffull);
}

}  // namespace

ClaimSweep run_claim_sweep(const ClaimContext& ctx, const std::string& experiment,
                           const std::vector<std::string>& overrides) {
  ClaimSweep cs;
  cs.config = (fs::path(ctx.config.path).parent_path() / experiment).lexically_normal().string();
  PELAB_CHECK(fs::exists(cs.config), "{}: settings.experiment: {} does not exist", ctx.config.path,
              cs.config);
  cs.overrides = overrides;
  const std::string stem = fs::path(cs.config).stem().string();
  cs.runs_dir = overrides.empty() ? fmt::format("runs/{}", stem)
                                  : fmt::format("runs/{}-{}", stem, overrides_hash(overrides));
  SweepOptions so;
  so.config_path = cs.config;
  so.overrides = overrides;
  so.out_dir = (fs::path(ctx.options.out) / cs.runs_dir).string();
  so.jobs = ctx.options.jobs;
  so.progress = false;
  so.report_seconds = 120;
  const SweepResult result = run_sweep(so);
  CompareOptions co;
  co.dirs = {so.out_dir};
  co.out_dir = so.out_dir;
  const CompareOutput out = run_compare(co);
  // A run whose training diverged is a result (compare counts it as one that did not learn);
  // any other failure, or a run not finished, leaves the claim without its numbers.
  const int64_t diverged = static_cast<int64_t>(out.comparison.diverged.size());
  const bool all_ran = !result.stopped && result.interrupted == 0 && result.not_started == 0;
  PELAB_CHECK(
      all_ran && result.failed == diverged && out.comparison.excluded.empty(),
      "{}: the experiment's sweep did not finish ({}{}); see {}", ctx.config.id, result.tally(),
      diverged ? fmt::format(", of which {} diverged", diverged) : std::string(), so.out_dir);
  nlohmann::json diverged_runs = nlohmann::json::array();
  for (const RunRecord& r : out.comparison.diverged)
    diverged_runs.push_back(fs::relative(r.dir, ctx.options.out).string());
  ctx.experiments.push_back({{"config", cs.config},
                             {"overrides", overrides},
                             {"runs", cs.runs_dir},
                             {"diverged", diverged_runs}});
  cs.comparison = out.comparison;
  // The comparison's tables only (its heading and notes are the report's to write), each
  // ended by a blank line: Markdown would read adjoining tables as one.
  std::istringstream lines(out.markdown);
  bool in_table = false;
  for (std::string line; std::getline(lines, line);) {
    const bool table_line = !line.empty() && line[0] == '|';
    if (table_line) cs.table += line + "\n";
    if (in_table && !table_line) cs.table += "\n";
    in_table = table_line;
  }
  if (in_table) cs.table += "\n";
  for (const std::string& f : out.written)
    if (fs::path(f).extension() == ".png")
      cs.figures.push_back(fs::relative(f, ctx.options.out).string());
  return cs;
}

ExperimentSettings read_experiment_settings(MapReader& settings) {
  ExperimentSettings e;
  PELAB_CHECK(settings.read("experiment", e.experiment), "{}: the key 'experiment' is missing",
              settings.where("experiment"));
  settings.read("overrides", e.overrides);
  return e;
}

TrainedRun load_trained_run(const std::string& dir) {
  TrainedRun run;
  run.dir = dir;
  run.config = load_experiment((fs::path(dir) / "config.yaml").string());
  run.model = load_model((fs::path(dir) / "checkpoint.safetensors").string());
  const RunRecord record = read_run(dir);
  PELAB_CHECK(record.status == "completed" && record.steps >= 0,
              "{}: not a finished run ({}); the claims read finished runs only", dir,
              record.status);
  run.steps = record.steps;
  return run;
}

std::vector<std::pair<int64_t, double>> loss_curve(const std::string& run_dir) {
  const std::string path = (fs::path(run_dir) / "metrics.jsonl").string();
  std::istringstream in(read_regular_file(path, "a run's metrics.jsonl", uint64_t{1} << 30));
  std::vector<std::pair<int64_t, double>> curve;
  int64_t line_number = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_number;
    if (line.empty()) continue;
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    PELAB_CHECK(!j.is_discarded(), "{}:{}: not a JSON line", path, line_number);
    if (j.contains("loss") && j.contains("step") && j["loss"].is_number())
      curve.emplace_back(j["step"].get<int64_t>(), j["loss"].get<double>());
  }
  return curve;
}

nlohmann::json group_numbers(const Comparison& comparison) {
  nlohmann::json groups = nlohmann::json::array();
  for (const Group& g : comparison.groups)
    groups.push_back({{"group", g.label},
                      {"in_distribution", g.in_distribution.mean},
                      {"in_distribution_std", g.in_distribution.std},
                      {"extrapolation", g.extrapolation.mean},
                      {"extrapolation_std", g.extrapolation.std},
                      {"seeds", g.in_distribution.seeds},
                      {"in_distribution_per_seed", g.in_distribution.values},
                      {"extrapolation_per_seed", g.extrapolation.values},
                      {"in_distribution_token", g.in_distribution_token.mean},
                      {"extrapolation_token", g.extrapolation_token.mean},
                      {"not_representable", g.not_representable},
                      {"not_representable_in_distribution", g.not_representable_in_distribution}});
  return groups;
}

namespace {

// "0.98, 1.00, 0.97" (one value per seed, in seed order).
std::string per_seed_text(const Stat& s) {
  std::string text;
  for (const double v : s.values) text += fmt::format("{}{:.2f}", text.empty() ? "" : ", ", v);
  return text.empty() ? "—" : text;
}

}  // namespace

std::string sweep_details(const ClaimSweep& sweep) {
  std::string md = fmt::format(
      "`{}`{} (runs in `{}`). Sequence accuracy by problem size (sizes marked * were trained "
      "on), then in distribution and beyond it per group (runs, how many learned, steps), each "
      "as the mean over seeds [95% bootstrap interval] with token accuracy's mean beside it "
      "(sequence / token: a harsh metric tells apart from a real failure), then median and "
      "max; then the learning rate that validation selected per group. † marks the "
      "extrapolation of a group whose runs did not all learn, not comparable with the "
      "others':\n\n{}",
      sweep.config,
      sweep.overrides.empty()
          ? ""
          : fmt::format(" with overrides `{}`", fmt::join(sweep.overrides, " ")),
      sweep.runs_dir, sweep.table);
  md +=
      "Per seed (sequence accuracy / token accuracy):\n\n| group | seeds | in-distribution "
      "(sequence / token) | beyond training (sequence / token) |\n|---|---|---|---|\n";
  for (const Group& g : sweep.comparison.groups)
    md += fmt::format("| {} | {} | {} / {} | {} / {} |\n", g.label,
                      fmt::join(g.in_distribution.seeds, ", "), per_seed_text(g.in_distribution),
                      per_seed_text(g.in_distribution_token), per_seed_text(g.extrapolation),
                      per_seed_text(g.extrapolation_token));
  md += "\n";
  for (const std::string& f : sweep.figures) md += fmt::format("![{}]({})\n", f, f);
  if (!sweep.figures.empty()) md += "\n";  // what follows starts a paragraph of its own
  return md;
}

void add_figures(const ClaimContext& ctx, const PlotResult& plot, ClaimResult& r) {
  for (const std::string& f : plot.written)
    if (f.size() > 4 && f.substr(f.size() - 4) == ".png") {
      const std::string rel = ctx.rel_dir + "/" + std::filesystem::path(f).filename().string();
      r.figures.push_back(rel);
      r.details += fmt::format("![{}]({})\n", rel, rel);
    }
  if (!plot.message.empty()) r.details += fmt::format("\n(Figures: {})\n", plot.message);
}

namespace {

const std::vector<ClaimDef>& claim_table() {
  static const std::vector<ClaimDef> table = [] {
    std::vector<ClaimDef> defs;
    add_order_claims(defs);
    add_absolute_claims(defs);
    add_relative_claims(defs);
    add_cost_claims(defs);
    add_encoding_claims(defs);
    add_rotary_claims(defs);
    add_published_claims(defs);
    // The notes' claims C1..C16, then the published reproductions R1, R2, ...
    std::sort(defs.begin(), defs.end(), [](const ClaimDef& a, const ClaimDef& b) {
      return std::make_pair(a.id[0], std::stoi(a.id.substr(1))) <
             std::make_pair(b.id[0], std::stoi(b.id.substr(1)));
    });
    return defs;
  }();
  return table;
}

std::string text_of(const YAML::Node& node) {
  if (node.IsSequence()) return join(node.as<std::vector<std::string>>());
  return node.as<std::string>();
}

}  // namespace

std::string claim_config_path(const std::string& configs_dir, const std::string& id) {
  const char prefix = static_cast<char>(std::tolower(static_cast<unsigned char>(id[0])));
  return (fs::path(configs_dir) / "claims" /
          fmt::format("{}{:02d}.yaml", prefix, std::stoi(id.substr(1))))
      .string();
}

ClaimConfig read_claim_config(const std::string& path, const std::string& id, bool quick) {
  const YAML::Node root = load_yaml_file(path);
  MapReader r(root, path, "");
  ClaimConfig c;
  c.id = id;
  c.path = path;
  std::string claim;
  PELAB_CHECK(r.read("claim", claim), "{}: the key 'claim' (the claim's id, {}) is missing", path,
              id);
  if (claim != id) r.fail("claim", fmt::format("this file is {}'s config, not '{}'", id, claim));
  PELAB_CHECK(r.read("statement", c.statement), "{}: the key 'statement' is missing", path);
  PELAB_CHECK(r.read("verdict", c.rule), "{}: the key 'verdict' (the rule, in words) is missing",
              path);
  PELAB_CHECK(r.read("precondition", c.precondition),
              "{}: the key 'precondition' (when the rule can tell, in words; otherwise the "
              "verdict is inconclusive) is missing",
              path);
  const std::optional<YAML::Node> sources = r.take("sources");
  PELAB_CHECK(sources.has_value(), "{}: the key 'sources' (the notes) is missing", path);
  c.sources = text_of(*sources);
  const std::optional<YAML::Node> settings = r.take("settings");
  c.settings = settings ? *settings : YAML::Node(YAML::NodeType::Map);
  const std::optional<YAML::Node> quick_settings = r.take("quick");
  r.finish({"claim", "statement", "sources", "verdict", "precondition", "settings", "quick"});
  if (quick && quick_settings) {
    for (const auto& kv : *quick_settings) {
      const std::string key = kv.first.as<std::string>();
      PELAB_CHECK(c.settings[key].IsDefined(),
                  "{}:{}: quick.{}: not a key of settings (quick only changes settings)", path,
                  kv.first.Mark().line + 1, key);
      c.settings[key] = kv.second;
    }
  }
  return c;
}

namespace {

// "C9" → "c9": the anchor of its "## C9" heading.
std::string anchor_of(std::string id) {
  for (char& ch : id) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return id;
}

// The pelab commits and the CPU kinds (model, vector instructions) that trained the runs the
// claims used, from each run's environment.json: finished runs are reused, so a report may
// judge runs that an earlier commit, or another machine, trained.
struct RunMakers {
  std::vector<std::string> commits, cpus;
};
RunMakers run_makers(const std::string& out, const std::vector<ClaimResult>& results) {
  std::set<std::string> commits, cpus;
  for (const ClaimResult& r : results)
    for (const nlohmann::json& e : r.experiments) {
      const fs::path dir = fs::path(out) / e.value("runs", std::string());
      if (e.value("runs", std::string()).empty() || !fs::is_directory(dir)) continue;
      for (const fs::directory_entry& f : fs::recursive_directory_iterator(dir)) {
        if (f.path().filename() != "environment.json") continue;
        const nlohmann::json env = nlohmann::json::parse(
            read_regular_file(f.path().string(), "a run's environment.json", uint64_t{1} << 20),
            nullptr, false);
        if (!env.is_object()) continue;
        if (env.contains("git_commit") && env["git_commit"].is_string())
          commits.insert(env["git_commit"].get<std::string>());
        if (env.contains("cpu") && env["cpu"].is_string()) {
          const bool isa = env.contains("isa") && env["isa"].is_string();
          cpus.insert(fmt::format("{}, {}", env["cpu"].get<std::string>(),
                                  isa ? env["isa"].get<std::string>() : "unknown instructions"));
        }
      }
    }
  return {{commits.begin(), commits.end()}, {cpus.begin(), cpus.end()}};
}

// The runs whose training diverged, which the claim counted as runs that did not learn.
std::string diverged_runs_markdown(const ClaimResult& r) {
  std::vector<std::string> dirs;
  for (const nlohmann::json& e : r.experiments)
    for (const nlohmann::json& d : e.value("diverged", nlohmann::json::array()))
      dirs.push_back(fmt::format("`{}`", d.get<std::string>()));
  if (dirs.empty()) return "";
  return fmt::format(
      "\n**Diverged runs** ({}; each scored 0 in the selection of its learning rate; those at "
      "the rate selected also counted in their group as runs that did not learn; each "
      "status.json has the error): {}.\n",
      dirs.size(), join(dirs, ", "));
}

std::string verdict_badge(Verdict v) {
  switch (v) {
    case Verdict::Supported:
      return "**supported**";
    case Verdict::Refuted:
      return "**refuted**";
    case Verdict::Mixed:
      return "**mixed**";
    case Verdict::Inconclusive:
      return "**inconclusive**";
  }
  return "?";
}

}  // namespace
}  // namespace claims

std::vector<std::string> claim_ids() {
  std::vector<std::string> ids;
  for (const claims::ClaimDef& d : claims::claim_table()) ids.push_back(d.id);
  return ids;
}

std::vector<ClaimResult> reproduce(const ReproduceOptions& options) {
  using namespace claims;
  const std::vector<std::string> known = claim_ids();
  for (const std::string& id : options.only)
    PELAB_CHECK(std::find(known.begin(), known.end(), id) != known.end(),
                "--only: '{}' is not a claim pelab measures (valid: {})", id,
                fmt::join(known, ", "));
  // Every config is read before anything runs, so a bad one stops the run at once.
  std::vector<std::pair<const ClaimDef*, ClaimConfig>> chosen;
  for (const ClaimDef& def : claim_table()) {
    if (!options.only.empty() &&
        std::find(options.only.begin(), options.only.end(), def.id) == options.only.end())
      continue;
    chosen.emplace_back(&def, read_claim_config(claim_config_path(options.configs_dir, def.id),
                                                def.id, options.quick));
  }
  // A full run's report is a finding, so it must come from one clean commit; --quick only
  // checks that everything runs, and records where it came from all the same.
  const Provenance provenance = read_provenance(options.configs_dir, options.allow_dirty);
  if (!options.quick) require_clean_tree(provenance, "pelab reproduce");
  ensure_directory(options.out);

  std::vector<ClaimResult> results;
  for (const auto& [def, config] : chosen) {
    ClaimResult r;
    r.id = def->id;
    r.statement = config.statement;
    r.sources = config.sources;
    r.config = config.path;
    r.rule = config.rule;
    r.precondition = config.precondition;
    const ClaimContext ctx{config, options, (fs::path(options.out) / def->id).string(), def->id};
    ensure_directory(ctx.dir);
    def->run(ctx, r);
    r.experiments = ctx.experiments;
    results.push_back(std::move(r));
  }

  // claims.json and report.md
  nlohmann::json j;
  j["quick"] = options.quick;
  j["provenance"] = provenance.to_json();
  j["claims"] = nlohmann::json::array();
  const RunMakers makers = run_makers(options.out, results);
  const std::vector<std::string>& commits = makers.commits;
  j["run_commits"] = commits;
  j["run_cpus"] = makers.cpus;
  std::string md = "# The notes' claims, reproduced\n\n";
  md += fmt::format(
      "Made by `pelab reproduce{}` ({}). Each claim's config (under `studies/configs/claims/`) "
      "states "
      "the verdict rule; the code applies it to the numbers below. The trained claims use toy "
      "tasks, small models (d_model 64) and short training; a verdict holds for the settings "
      "its section lists, and the per-seed tables show how much it depends on the seed.{}{}\n\n",
      options.quick ? " --quick" : "", provenance.describe(),
      commits.empty()
          ? ""
          : fmt::format(" The training runs it judges were made by pelab commit{} {} (finished "
                        "runs are reused), on {}.",
                        commits.size() == 1 ? "" : "s", join(commits, ", "),
                        makers.cpus.empty() ? std::string("an unrecorded CPU")
                                            : join(makers.cpus, " and on ")),
      options.quick ? " With --quick the settings are smaller still (fewer seeds, schemes and "
                      "steps): it checks that everything runs, its verdicts are not findings."
                    : "");
  md += "| claim | verdict | because |\n|---|---|---|\n";
  for (const ClaimResult& r : results)
    // "## C9" is anchored as #c9.
    md += fmt::format("| [{}](#{}) | {} | {} |\n", r.id, anchor_of(r.id), to_string(r.verdict),
                      r.because);
  for (const ClaimResult& r : results) {
    j["claims"].push_back({{"id", r.id},
                           {"statement", r.statement},
                           {"sources", r.sources},
                           {"config", r.config},
                           {"experiments", r.experiments},
                           {"rule", r.rule},
                           {"precondition", r.precondition},
                           {"verdict", to_string(r.verdict)},
                           {"because", r.because},
                           {"numbers", r.numbers},
                           {"figures", r.figures}});
    // The notes' claims cite the notes by number; the reproductions cite their papers.
    md += fmt::format("\n## {}\n\n> {} ({}{})\n\n", r.id, r.statement,
                      r.id[0] == 'C' ? "notes " : "", r.sources);
    md += fmt::format("**Verdict:** {} — {}.\n\n", verdict_badge(r.verdict), r.because);
    md += fmt::format("**Rule** (from `{}`): {}\n\n", r.config, r.rule);
    md += fmt::format("**Precondition:** {}\n\n", r.precondition);
    md += r.details;
    if (!r.details.empty() && r.details.back() != '\n') md += '\n';
    md += diverged_runs_markdown(r);
  }
  write_file_atomic((fs::path(options.out) / "claims.json").string(), j.dump(2) + "\n");
  write_file_atomic((fs::path(options.out) / "report.md").string(), md);
  return results;
}

}  // namespace pelab
