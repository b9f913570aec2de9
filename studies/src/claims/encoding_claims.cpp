// C8, C9, C10: properties of the sinusoidal table itself (note 002). No training: the table
// is read through the sinusoidal scheme's input hook, exactly as a model adds it.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "claims/claim.h"
#include "pelab/analysis/encoding.h"
#include "pelab/claims/order_encoding_verdicts.h"
#include "pelab/core/error.h"
#include "pelab/core/strings.h"

namespace pelab::claims {

namespace {

// The sinusoidal scheme at width d with base `base`, alone.
Encoder sinusoidal_model(int64_t d_model, double base) {
  PositionalConfig positional;
  positional.type = "sinusoidal";
  positional.keys.set("base", base);
  return encoding_model(positional, d_model);
}

void c8(const ClaimContext& ctx, ClaimResult& r) {
  MapReader s = ctx.settings();
  int64_t d_model = 128, positions = 1024;
  double base = 10000, supported_below = 1e-4, refuted_above = 1e-2;
  std::vector<int64_t> shifts;
  s.read("d_model", d_model);
  s.read("positions", positions);
  s.read("base", base);
  s.read("shifts", shifts);
  s.read("supported_below", supported_below);
  s.read("refuted_above", refuted_above);
  s.finish({"d_model", "positions", "base", "shifts", "supported_below", "refuted_above"});
  const Encoder model = sinusoidal_model(d_model, base);
  const Matrix P = absolute_encoding(model, positions);
  double worst = 0;
  std::string table = "| Δ | largest \\|PE(x+Δ) − PE(x)·T(Δ)\\| over x |\n|--:|--:|\n";
  nlohmann::json per_shift = nlohmann::json::array();
  for (int64_t delta : shifts) {
    const double e = sinusoidal_shift_error(P, {delta}, base);
    worst = std::max(worst, e);
    table += fmt::format("| {} | {} |\n", delta, fmt_number(e));
    per_shift.push_back({{"shift", delta}, {"error", e}});
  }
  r.numbers = {{"largest_error", worst},
               {"per_shift", per_shift},
               {"d_model", d_model},
               {"positions", positions}};
  const order_encoding::Judgement j = order_encoding::judge_c8(
      {worst, positions, static_cast<int64_t>(shifts.size())}, {supported_below, refuted_above});
  r.verdict = j.verdict;
  r.because = j.because;
  r.details = fmt::format(
      "The sinusoidal table of width {} (pelab's float32 table, base {}) at positions "
      "0..{}; T(Δ) built from MODEL.md's frequencies as block-diagonal 2×2 rotations "
      "[[cos Δω, −sin Δω], [sin Δω, cos Δω]] (row-vector convention), in double precision. "
      "What remains is the float32 rounding of the table.\n\n{}",
      d_model, base, positions - 1, table);
}

void c9(const ClaimContext& ctx, ClaimResult& r) {
  MapReader s = ctx.settings();
  int64_t d_model = 128, positions = 256, reference = 128;
  double base = 10000;
  s.read("d_model", d_model);
  s.read("positions", positions);
  s.read("reference", reference);
  s.read("base", base);
  s.finish({"d_model", "positions", "reference", "base"});
  const Encoder model = sinusoidal_model(d_model, base);
  EncodingAnalysisOptions o;
  o.positions = positions;
  o.reference = reference;
  o.moving_lengths = {};
  const EncodingAnalysis a = analyze_encoding(model, o);
  const PlotResult files = write_encoding_analysis(a, ctx.dir);
  const Falloff& f = a.falloff;
  const double peak = a.dots[static_cast<size_t>(reference)];
  r.numbers = {
      {"argmax", f.argmax}, {"reference", reference},         {"steps", f.steps},
      {"rises", f.rises},   {"largest_rise", f.largest_rise}, {"first_rise_distance", f.first_rise},
      {"peak", peak}};
  const order_encoding::Judgement j = order_encoding::judge_c9(
      {reference, f.argmax, f.steps, f.rises, f.first_rise, f.largest_rise, peak});
  r.verdict = j.verdict;
  r.because = j.because;
  r.figures = {ctx.rel_dir + "/dot_by_distance.png"};
  r.details = fmt::format(
      "P({0})·P(j) for j = 0..{1}, d_model = {2} (the note's settings). The curve "
      "(`{3}/encoding.json`, key "
      "`dot_with_reference`):\n\n![P({0})·P(j)]({3}/dot_by_distance.png)\n",
      reference, positions - 1, d_model, ctx.rel_dir);
  if (!files.message.empty()) r.details += fmt::format("\n(figures: {})\n", files.message);
}

// For each length L: the share of the table's dimensions whose values move by more than
// `threshold` × the table's largest |value| over positions 0..L−1 (as pelab analyze does).
order_encoding::C10Numbers moving_shares(const Encoder& model, const std::vector<int64_t>& lengths,
                                         double threshold) {
  order_encoding::C10Numbers n;
  for (int64_t length : lengths) {
    const Matrix P = absolute_encoding(model, length);  // [length, d_model]
    double scale = 0;
    for (double v : P.values) scale = std::max(scale, std::abs(v));
    n.moving.emplace_back(length, share_of_moving_columns(P, length, threshold * scale));
  }
  return n;
}

// How the verdict moves with the threshold: one row per threshold (the chosen one marked),
// the share of dimensions that barely move at each length with whether most do there (✓) or
// not (✗), and the verdict over all lengths. `holding` gets, per length, at how many of the
// thresholds most dimensions barely move: the finding that does not hang on the threshold.
std::string threshold_table(const Encoder& model, const std::vector<int64_t>& lengths,
                            double chosen, double most, nlohmann::json& sweep,
                            std::vector<int64_t>& holding, int64_t& thresholds_tried) {
  // A column's span over positions lies in (0, 2] × the largest |value|: thresholds across it.
  std::vector<double> thresholds = {0.05, 0.1, 0.25, 0.5, 0.75, 1.0, 1.5};
  if (std::find(thresholds.begin(), thresholds.end(), chosen) == thresholds.end())
    thresholds.push_back(chosen);
  std::sort(thresholds.begin(), thresholds.end());
  thresholds_tried = static_cast<int64_t>(thresholds.size());
  holding.assign(lengths.size(), 0);
  std::string table = "| threshold |";
  for (int64_t length : lengths) table += fmt::format(" barely move, L = {} |", length);
  table += " verdict |\n|--:|";
  for (size_t i = 0; i < lengths.size(); ++i) table += "--:|";
  table += "---|\n";
  for (double threshold : thresholds) {
    const order_encoding::C10Numbers n = moving_shares(model, lengths, threshold);
    const Verdict v = order_encoding::judge_c10(n, most).verdict;
    table += fmt::format("| {}{} |", fmt_number(threshold), threshold == chosen ? " (chosen)" : "");
    nlohmann::json barely = nlohmann::json::array();
    for (size_t l = 0; l < n.moving.size(); ++l) {
      const auto& [length, share] = n.moving[l];
      const bool holds = 1 - share > most;
      holding[l] += holds;
      table += fmt::format(" {}% {} |", fmt_number(100 * (1 - share)), holds ? "✓" : "✗");
      barely.push_back({{"length", length}, {"barely_moving_share", 1 - share}, {"holds", holds}});
    }
    table += fmt::format(" {} |\n", to_string(v));
    sweep.push_back({{"threshold", threshold}, {"verdict", to_string(v)}, {"by_length", barely}});
  }
  return table;
}

void c10(const ClaimContext& ctx, ClaimResult& r) {
  MapReader s = ctx.settings();
  int64_t d_model = 128;
  double base = 10000, threshold = 0.5, most = 0.5;
  std::vector<int64_t> lengths;
  s.read("d_model", d_model);
  s.read("base", base);
  s.read("lengths", lengths);
  s.read("threshold", threshold);
  s.read("most", most);
  s.finish({"d_model", "base", "lengths", "threshold", "most"});
  PELAB_CHECK(!lengths.empty(), "{}: settings.lengths: give at least one length", ctx.config.path);
  const Encoder model = sinusoidal_model(d_model, base);
  EncodingAnalysisOptions o;
  o.positions = 256;
  o.moving_lengths = lengths;
  o.moving_threshold = threshold;
  const EncodingAnalysis a = analyze_encoding(model, o);
  const PlotResult files = write_encoding_analysis(a, ctx.dir);
  const order_encoding::C10Numbers n{a.moving};
  std::string table = "| positions in use | dimensions that move by more than " +
                      fmt_number(threshold) + " | share |\n|--:|--:|--:|\n";
  nlohmann::json shares = nlohmann::json::array();
  for (const auto& [length, share] : n.moving) {
    table += fmt::format("| {} | {} of {} | {}% |\n", length,
                         static_cast<int64_t>(std::llround(share * static_cast<double>(d_model))),
                         d_model, fmt_number(100 * share));
    shares.push_back({{"length", length}, {"moving_share", share}});
  }
  nlohmann::json sweep = nlohmann::json::array();
  std::vector<int64_t> holding;
  int64_t tried = 0;
  const std::string by_threshold =
      threshold_table(model, lengths, threshold, most, sweep, holding, tried);
  const order_encoding::Judgement j = order_encoding::judge_c10(n, most);
  r.verdict = j.verdict;
  std::vector<std::string> robust;
  for (size_t l = 0; l < lengths.size(); ++l)
    robust.push_back(fmt::format("L = {} at {}", lengths[l], holding[l]));
  r.because = fmt::format("{}; across {} thresholds from 0.05 to 1.5 it is true at {} of them",
                          j.because, tried, join(robust, ", "));
  r.numbers = {{"d_model", d_model},
               {"threshold", threshold},
               {"moving", shares},
               {"threshold_sweep", sweep}};
  r.figures = {ctx.rel_dir + "/encoding_heatmap.png"};
  r.details = fmt::format(
      "The sinusoidal table at d_model = {}: a dimension is *in use* over the first L positions "
      "when its values span more than {} (× the table's largest |value|; the values lie in "
      "[−1, 1]). The threshold was chosen from the note's words before the run (see the "
      "config).\n\n{}\n**How the verdict moves with the threshold, per length** (share of "
      "dimensions that barely move; ✓ where that is most of them, so the claim holds over "
      "those positions; the verdict uses the chosen threshold):\n\n{}\n"
      "![The sinusoidal table]({}/encoding_heatmap.png)\n",
      d_model, fmt_number(threshold), table, by_threshold, ctx.rel_dir);
  if (!files.message.empty()) r.details += fmt::format("\n(figures: {})\n", files.message);
}

}  // namespace

namespace order_encoding {

Judgement judge_c8(const C8Numbers& n, const ErrorRule& rule) {
  Judgement j;
  j.verdict = n.largest_error < rule.supported_below ? Verdict::Supported
              : n.largest_error > rule.refuted_above ? Verdict::Refuted
                                                     : Verdict::Mixed;
  j.because = fmt::format("largest error {} over positions 0..{} and {} shifts",
                          fmt_number(n.largest_error), n.positions - 1, n.shifts);
  return j;
}

Judgement judge_c9(const C9Numbers& n) {
  Judgement j;
  if (n.argmax != n.reference)
    j.verdict = Verdict::Refuted;
  else
    j.verdict = n.rises == 0 ? Verdict::Supported : Verdict::Mixed;
  j.because = fmt::format(
      "largest at j = {} (reference {}); {} of {} steps away from the reference rise instead of "
      "falling, the first at distance {}, the largest by {} ({}% of the peak {})",
      n.argmax, n.reference, n.rises, n.steps, n.first_rise, fmt_number(n.largest_rise),
      fmt_number(n.peak != 0 ? 100 * n.largest_rise / n.peak : 0), fmt_number(n.peak));
  return j;
}

Judgement judge_c10(const C10Numbers& n, double most) {
  std::vector<std::string> holds, fails;  // per length: most dimensions barely move, or not
  for (const auto& [length, share] : n.moving)
    (1 - share > most ? holds : fails)
        .push_back(fmt::format("L = {} ({}% barely move)", length, fmt_number(100 * (1 - share))));
  Judgement j;
  if (n.moving.empty())
    j.verdict = Verdict::Mixed;  // nothing measured, nothing to say either way
  else
    j.verdict = fails.empty()   ? Verdict::Supported
                : holds.empty() ? Verdict::Refuted
                                : Verdict::Mixed;
  j.because =
      fmt::format("most dimensions barely move at {} of {} lengths", holds.size(), n.moving.size());
  if (!holds.empty()) j.because += ": true at " + join(holds, ", ");
  if (!fails.empty())
    j.because += (holds.empty() ? ": false at " : "; false at ") + join(fails, ", ");
  return j;
}

}  // namespace order_encoding

void add_encoding_claims(std::vector<ClaimDef>& defs) {
  defs.push_back({"C8", c8});
  defs.push_back({"C9", c9});
  defs.push_back({"C10", c10});
}

}  // namespace pelab::claims
