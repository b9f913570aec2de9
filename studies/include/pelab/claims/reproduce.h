// Reproducing the notes' claims (pelab reproduce). Each claim has a config under
// studies/configs/claims/ (its statement, sources, settings and the verdict rule in words) and one
// function that measures it and applies that rule in code; neither depends on the result.
// The report gathers every claim's numbers, figures and verdict:
//   OUT/report.md      per claim: statement, what was run, the numbers, figures, verdict + rule
//   OUT/claims.json    per claim: verdict, key numbers, configs used
//   OUT/<id>/          each claim's figures and data (and its runs, for trained claims)
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace pelab {

// Inconclusive: the claim's precondition failed (the models did not learn the task in
// distribution, the compared groups are all at the ceiling or all at the floor, a difference
// is within its own noise), so the experiment cannot tell; `because` says which.
enum class Verdict { Supported, Refuted, Mixed, Inconclusive };
const char* to_string(Verdict v);

struct ClaimResult {
  std::string id;            // "C9"
  std::string statement;     // the claim, paraphrased (from its config)
  std::string sources;       // the notes it comes from
  std::string config;        // the claim's config file
  std::string rule;          // the verdict rule, in words (from its config)
  std::string precondition;  // when the rule can tell, in words (from its config)
  // Trained: config, overrides, runs, and the runs whose training diverged.
  nlohmann::json experiments = nlohmann::json::array();
  Verdict verdict = Verdict::Mixed;
  std::string because;     // one line: the numbers the rule compared
  nlohmann::json numbers;  // the key numbers
  std::string details;     // Markdown: what was run, tables, figure links (relative to OUT)
  std::vector<std::string> figures;  // relative to OUT
};

struct ReproduceOptions {
  std::vector<std::string> only;  // claim ids; empty = all
  bool quick = false;             // smaller settings (each config's `quick:` section)
  std::string out = "runs/claims";
  std::string configs_dir = "studies/configs";  // holds claims/ and reproductions/
  int64_t jobs = 0;                             // concurrent training runs (0 = cores)
  // A full run refuses a binary or configs that are not one clean commit unless this is set
  // (then the report says so).
  bool allow_dirty = false;
};

// The ids of the claims pelab measures, in order.
std::vector<std::string> claim_ids();

// Runs the chosen claims and writes the report; returns their results.
std::vector<ClaimResult> reproduce(const ReproduceOptions& options);

}  // namespace pelab
