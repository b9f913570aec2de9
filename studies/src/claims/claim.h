// The pieces every claim shares (internal to src/claims/).
#pragma once

#include <yaml-cpp/yaml.h>

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "pelab/claims/preconditions.h"
#include "pelab/claims/reproduce.h"
#include "pelab/config/experiment.h"
#include "pelab/config/yaml_reader.h"
#include "pelab/nn/encoder.h"
#include "pelab/report/compare.h"
#include "pelab/report/plot.h"
#include "pelab/report/statistics.h"

namespace pelab::claims {

// A claim's config file: statement, sources, the verdict rule in words, and its settings
// (with the `quick:` values already applied when --quick).
struct ClaimConfig {
  std::string id;
  std::string path;
  std::string statement;
  std::string sources;
  std::string rule;
  std::string precondition;
  YAML::Node settings;
};

struct ClaimContext {
  const ClaimConfig& config;
  const ReproduceOptions& options;
  std::string dir;      // OUT/<id>: the claim's files
  std::string rel_dir;  // <id>: the same, relative to OUT (for links in the report)
  // The settings, read strictly: unknown keys are errors naming the config's file and line.
  MapReader settings() const { return MapReader(config.settings, config.path, "settings"); }
  // The experiments the claim ran (config, overrides, runs directory), recorded by
  // run_claim_sweep for claims.json.
  mutable nlohmann::json experiments = nlohmann::json::array();
};

// A claim's measurement and verdict: fills verdict, because, numbers, details, figures.
using ClaimFn = std::function<void(const ClaimContext&, ClaimResult&)>;

struct ClaimDef {
  std::string id;
  ClaimFn run;
};

// A trained claim's experiment: the sweep config named by settings.experiment (relative to
// the claim's config file), with settings.overrides, run into OUT/runs/<experiment>[-<hash of
// the overrides>] and compared. Finished runs are reused, so claims that ask for the same
// experiment with the same overrides (C4, C5, C14, C16 on the default comparison) share runs.
struct ClaimSweep {
  std::string config;  // the experiment config file
  std::vector<std::string> overrides;
  std::string runs_dir;  // relative to OUT
  Comparison comparison;
  std::string table;                 // the comparison as Markdown
  std::vector<std::string> figures;  // relative to OUT
  // The group whose key `key` has `value` (nullptr if none).
  const Group* group(const std::string& key, const std::string& value) const;
};
ClaimSweep run_claim_sweep(const ClaimContext& ctx, const std::string& experiment,
                           const std::vector<std::string>& overrides);

// The two settings every trained claim has: the experiment config and its overrides.
struct ExperimentSettings {
  std::string experiment;
  std::vector<std::string> overrides;
};
ExperimentSettings read_experiment_settings(MapReader& settings);

// A finished run of a claim's sweep, as the analyses need it.
struct TrainedRun {
  std::string dir;
  ExperimentConfig config;         // its resolved config.yaml
  std::unique_ptr<Encoder> model;  // its final checkpoint
  int64_t steps = 0;               // the training steps it took (fewer than training.steps
                                   // when training.stop_when ended it)
};
TrainedRun load_trained_run(const std::string& dir);

// (step, loss) for every logged training step of a run (metrics.jsonl).
std::vector<std::pair<int64_t, double>> loss_curve(const std::string& run_dir);

// The per-group summaries the trained claims put in claims.json.
nlohmann::json group_numbers(const Comparison& comparison);

// The table and figures of a sweep, as a report paragraph.
std::string sweep_details(const ClaimSweep& sweep);

// A figure a claim drew into ctx.dir: its PNG is linked in r.details and listed in r.figures;
// any plotting trouble is said in one line.
void add_figures(const ClaimContext& ctx, const PlotResult& plot, ClaimResult& r);

// The claims, in order (one registration function per file of claims).
void add_order_claims(std::vector<ClaimDef>& defs);      // C1, C5
void add_encoding_claims(std::vector<ClaimDef>& defs);   // C8, C9, C10
void add_rotary_claims(std::vector<ClaimDef>& defs);     // C11, C12
void add_absolute_claims(std::vector<ClaimDef>& defs);   // C2, C3, C4, C14, C16
void add_relative_claims(std::vector<ClaimDef>& defs);   // C6, C15
void add_cost_claims(std::vector<ClaimDef>& defs);       // C7, C13
void add_published_claims(std::vector<ClaimDef>& defs);  // R1, R2, R3

// A claim's config file: studies/configs/claims/c08.yaml for C8, r01.yaml for R1 (zero-padded so
// the files sort in claim order).
std::string claim_config_path(const std::string& configs_dir, const std::string& id);
// Reads a claim's config, with its `quick:` values applied when `quick` (a claim that shares
// another's runs reads that claim's settings, so both name the same runs).
ClaimConfig read_claim_config(const std::string& path, const std::string& id, bool quick);

// Markdown helpers.
std::string fmt_number(double x);  // 4 significant digits, scientific when tiny

// An untrained model that holds `positional` at width d_model, for analyses of the encoding
// alone (one layer, one head, 8 tokens; the seed sets learned's initial table).
Encoder encoding_model(const PositionalConfig& positional, int64_t d_model, uint64_t seed = 0);

}  // namespace pelab::claims
