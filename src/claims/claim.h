// The pieces every claim shares (internal to src/claims/).
#pragma once

#include <yaml-cpp/yaml.h>

#include <functional>
#include <string>

#include "pelab/claims/reproduce.h"
#include "pelab/config/yaml_reader.h"
#include "pelab/experiment/compare.h"

namespace pelab::claims {

// A claim's config file: statement, sources, the verdict rule in words, and its settings
// (with the `quick:` values already applied when --quick).
struct ClaimConfig {
  std::string id;
  std::string path;
  std::string statement;
  std::string sources;
  std::string rule;
  YAML::Node settings;
};

struct ClaimContext {
  const ClaimConfig& config;
  const ReproduceOptions& options;
  std::string dir;      // OUT/<id>: the claim's files
  std::string rel_dir;  // <id>: the same, relative to OUT (for links in the report)
  // The settings, read strictly: unknown keys are errors naming the config's file and line.
  MapReader settings() const { return MapReader(config.settings, config.path, "settings"); }
};

// A claim's measurement and verdict: fills verdict, because, numbers, details, figures.
using ClaimFn = std::function<void(const ClaimContext&, ClaimResult&)>;

struct ClaimDef {
  std::string id;
  ClaimFn run;
};

// A trained claim's experiment: the sweep config named by settings.experiment (relative to
// the claim's config file), with settings.overrides, run into <dir>/runs (finished runs are
// reused), then compared. `group_key` picks the group label (e.g. "positional.type").
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

// The claims, in order (one registration function per file of claims).
void add_order_claims(std::vector<ClaimDef>& defs);     // C1, C5
void add_encoding_claims(std::vector<ClaimDef>& defs);  // C8, C9, C10
void add_rotary_claims(std::vector<ClaimDef>& defs);    // C11, C12

// Markdown helpers.
std::string fmt_number(double x);  // 4 significant digits, scientific when tiny

}  // namespace pelab::claims
