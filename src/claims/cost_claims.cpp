// The claims about cost:
//   C7   relative encodings are slower (their extra step inside attention); rotary's overhead
//        is minimal (notes 000, 003)
//   C13  adding and concatenating both work; concatenating costs more computation (000)
// Step times are measured in this process, one thread, each case right after the other, with
// the benchmark's timing loop (pelab bench): they describe this implementation on this machine.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "claims/claim.h"
#include "pelab/bench/train_bench.h"
#include "pelab/core/error.h"
#include "pelab/positional/scheme.h"

namespace pelab::claims {

namespace {

TrainCaseOptions claim_timing(int64_t min_steps, double max_seconds) {
  TrainCaseOptions o;
  o.threads = 1;
  o.warmup = 2;
  o.min_steps = static_cast<int>(min_steps);
  o.max_steps = static_cast<int>(std::max<int64_t>(min_steps, 30));
  o.max_seconds = max_seconds;
  return o;
}

// One training step of each scheme at config c, median over `rounds` rounds; each case also
// goes to `cases`. Rounds over the schemes, each case timed once per round: a slow spell of
// the machine then touches every scheme alike instead of one.
std::map<std::string, StepTiming> time_schemes(const BenchConfig& c,
                                               const std::vector<std::string>& schemes,
                                               int64_t rounds, const TrainCaseOptions& options,
                                               nlohmann::json& cases) {
  const Batch batch = bench_batch(c, 0);
  std::map<std::string, std::vector<StepTiming>> rounds_of;
  for (int64_t round = 0; round < rounds; ++round)
    for (const std::string& scheme : schemes)
      rounds_of[scheme].push_back(
          time_training_steps(bench_model_config(c, scheme), batch, options));
  std::map<std::string, StepTiming> timing;
  for (auto& [scheme, times] : rounds_of) {
    std::sort(times.begin(), times.end(),
              [](const StepTiming& a, const StepTiming& b) { return a.ms_median < b.ms_median; });
    timing[scheme] = times[times.size() / 2];
    std::vector<double> per_round;
    for (const StepTiming& t : times) per_round.push_back(t.ms_median);
    cases.push_back({{"length", c.T},
                     {"batch", c.B},
                     {"scheme", scheme},
                     {"ms_median", timing[scheme].ms_median},
                     {"ms_median_per_round", per_round},
                     {"peak_tensor_mb", timing[scheme].peak_tensor_mb}});
  }
  return timing;
}

void c7(const ClaimContext& ctx, ClaimResult& r) {
  MapReader s = ctx.settings();
  int64_t d_model = 64, layers = 2, heads = 4, tokens = 2048, min_steps = 5, rounds = 3;
  std::vector<int64_t> lengths;
  std::vector<std::string> schemes;
  double max_seconds = 2, minimal = 0.1, slower = 0.1;
  s.read("d_model", d_model);
  s.read("layers", layers);
  s.read("heads", heads);
  s.read("tokens_per_batch", tokens);
  s.read("lengths", lengths);
  s.read("schemes", schemes);
  s.read("min_steps", min_steps);
  s.read("max_seconds", max_seconds);
  s.read("rounds", rounds);
  s.read("minimal_overhead", minimal);
  s.read("slower_by", slower);
  s.finish({"d_model", "layers", "heads", "tokens_per_batch", "lengths", "schemes", "min_steps",
            "max_seconds", "rounds", "minimal_overhead", "slower_by"});
  for (const std::string required : {"none", "relative", "rotary"})
    PELAB_CHECK(std::find(schemes.begin(), schemes.end(), required) != schemes.end(),
                "{}: settings.schemes must include {}", ctx.config.path, required);
  PELAB_CHECK(!lengths.empty() && min_steps >= 1 && rounds >= 1,
              "{}: settings need lengths, min_steps ≥ 1 and rounds ≥ 1", ctx.config.path);

  std::string table = "| length T × batch B |";
  std::string rule = "|---|";
  for (const std::string& scheme : schemes) {
    table += fmt::format(" {} |", scheme);
    rule += "--:|";
  }
  table += "\n" + rule + "\n";
  std::string memory = table;
  int64_t relative_slowest = 0, rotary_minimal = 0;
  double worst_rotary = 0;
  std::vector<std::string> relative_ratio;
  nlohmann::json cases = nlohmann::json::array();
  for (const int64_t T : lengths) {
    const BenchConfig c{"claim", d_model, layers, heads, T, std::max<int64_t>(1, tokens / T), 16};
    std::map<std::string, StepTiming> timing =
        time_schemes(c, schemes, rounds, claim_timing(min_steps, max_seconds), cases);
    const double base = timing["none"].ms_median;
    double slowest_other = 0;
    for (const std::string& scheme : schemes)
      if (scheme != "relative") slowest_other = std::max(slowest_other, timing[scheme].ms_median);
    const double rel = timing["relative"].ms_median;
    if (rel >= (1 + slower) * slowest_other) ++relative_slowest;
    const double rotary_overhead = timing["rotary"].ms_median / base - 1;
    worst_rotary = std::max(worst_rotary, rotary_overhead);
    if (rotary_overhead <= minimal) ++rotary_minimal;
    relative_ratio.push_back(fmt::format("{}× at T = {}", fmt_number(rel / base), T));
    table += fmt::format("| {} × {} |", T, c.B);
    memory += fmt::format("| {} × {} |", T, c.B);
    for (const std::string& scheme : schemes) {
      table += fmt::format(" {} ms ({}×) |", fmt_number(timing[scheme].ms_median),
                           fmt_number(timing[scheme].ms_median / base));
      memory += fmt::format(" {} |", fmt_number(timing[scheme].peak_tensor_mb));
    }
    table += "\n";
    memory += "\n";
  }
  const int64_t n = static_cast<int64_t>(lengths.size());
  const bool relative_part = relative_slowest == n, rotary_part = rotary_minimal == n;
  r.verdict = relative_part && rotary_part     ? Verdict::Supported
              : !relative_part && !rotary_part ? Verdict::Refuted
                                               : Verdict::Mixed;
  r.numbers = {{"cases", cases},
               {"lengths_where_relative_is_slowest", relative_slowest},
               {"lengths_where_rotary_overhead_is_minimal", rotary_minimal},
               {"largest_rotary_overhead", worst_rotary}};
  r.because = fmt::format(
      "relative's step takes {} of none's and is the slowest by ≥ {}% at {} of {} lengths; "
      "rotary's overhead is at most {}% (minimal: ≤ {}% at {} of {})",
      fmt::join(relative_ratio, ", "), fmt_number(100 * slower), relative_slowest, n,
      fmt_number(100 * worst_rotary), fmt_number(100 * minimal), rotary_minimal, n);
  const BenchConfig shape{"claim", d_model, layers, heads, lengths.front(), 1, 16};
  const ModelConfig relative = bench_model_config(shape, "relative");
  r.details = fmt::format(
      "One training step (forward, backward, AdamW) of the same encoder (d_model {}, {} layers, "
      "{} heads, {}, relative with k = {}) on {} tokens per batch, one thread: the median over {} "
      "interleaved rounds of each case's median step time (at least {} timed steps); in "
      "parentheses, the time relative to `none`. This measures pelab's "
      "implementation on this machine: relative's term is computed from the [2k+1, d_h] tables "
      "without forming a [T, T, d_h] tensor.\n\n{}\nThe most memory tensors held at once "
      "during a step, MB:\n\n{}",
      d_model, layers, heads, relative.causal ? "causal" : "bidirectional",
      relative.positional.keys.integer("max_distance"), tokens, rounds, min_steps, table, memory);
}

void c13(const ClaimContext& ctx, ClaimResult& r) {
  MapReader s = ctx.settings();
  std::string experiment;
  std::vector<std::string> add_overrides, concat_overrides;
  double in_distribution_min = 0.95, costlier_by = 0.05, max_seconds = 2;
  int64_t min_steps = 10;
  PELAB_CHECK(s.read("experiment", experiment), "{}: the key 'experiment' is missing",
              s.where("experiment"));
  s.read("add_overrides", add_overrides);
  s.read("concat_overrides", concat_overrides);
  s.read("in_distribution_min", in_distribution_min);
  s.read("costlier_by", costlier_by);
  s.read("min_steps", min_steps);
  s.read("max_seconds", max_seconds);
  s.finish({"experiment", "add_overrides", "concat_overrides", "in_distribution_min", "costlier_by",
            "min_steps", "max_seconds"});
  const ClaimSweep add = run_claim_sweep(ctx, experiment, add_overrides);
  const ClaimSweep concat = run_claim_sweep(ctx, experiment, concat_overrides);

  // Both variants, every scheme: accuracy, parameters, matmul FLOPs and step time.
  std::string table =
      "| scheme | combine | d_model | parameters | matmul GFLOP/step | ms/step | in-distribution | "
      "beyond training |\n|---|---|--:|--:|--:|--:|--:|--:|\n";
  bool all_work = true, any_fails = false, all_costlier = true, any_not_slower = false;
  nlohmann::json rows = nlohmann::json::array();
  std::map<std::string, double> add_ms;
  for (const ClaimSweep* sweep : {&add, &concat}) {
    for (const Group& g : sweep->comparison.groups) {
      const TrainedRun run = load_trained_run(g.runs.front());
      const ModelConfig& m = run.config.model;
      const int64_t T = run.config.task.max_length, B = run.config.training.batch_size;
      const BenchConfig c{
          "claim", m.d_model, m.layers, m.heads, T, B, std::min(m.vocab_in, m.vocab_out)};
      const StepTiming t =
          time_training_steps(m, bench_batch(c, 0), claim_timing(min_steps, max_seconds));
      const double gflop = bench_matmul_flops(c, m.positional.type) / 1e9;
      const KeyValues keys = resolve_defaults(m.positional);
      const std::string scheme = m.positional.type,
                        combine = keys.has("combine") ? keys.text("combine") : "add";
      if (sweep == &add) {
        add_ms[scheme] = t.ms_median;
      } else {
        PELAB_CHECK(add_ms.count(scheme) > 0,
                    "{}: concat_overrides train {}, which add_overrides do not", ctx.config.path,
                    scheme);
        all_costlier = all_costlier && t.ms_median >= (1 + costlier_by) * add_ms[scheme];
        any_not_slower = any_not_slower || t.ms_median <= add_ms[scheme];
      }
      all_work = all_work && g.in_distribution.mean >= in_distribution_min;
      any_fails = any_fails || g.in_distribution.mean < 0.5;
      table +=
          fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", scheme, combine, m.d_model,
                      run.model->params().count(), fmt_number(gflop), fmt_number(t.ms_median),
                      format_stat(g.in_distribution), format_stat(g.extrapolation));
      rows.push_back({{"scheme", scheme},
                      {"combine", combine},
                      {"d_model", m.d_model},
                      {"parameters", run.model->params().count()},
                      {"matmul_gflop_per_step", gflop},
                      {"ms_per_step", t.ms_median},
                      {"in_distribution", g.in_distribution.mean},
                      {"in_distribution_std", g.in_distribution.std},
                      {"extrapolation", g.extrapolation.mean}});
    }
  }
  if (all_work && all_costlier)
    r.verdict = Verdict::Supported;
  else if (any_fails || any_not_slower)
    r.verdict = Verdict::Refuted;
  else
    r.verdict = Verdict::Mixed;
  r.numbers = {{"variants", rows}, {"both_work", all_work}, {"concat_costlier", all_costlier}};
  r.because = fmt::format(
      "{} variant reaches {} in-distribution; concatenating {} more per step (≥ {}%) at equal "
      "token width",
      all_work ? "every" : "not every", fmt_number(in_distribution_min),
      all_costlier ? "costs" : "does not cost", fmt_number(100 * costlier_by));
  r.details = fmt::format(
      "At equal token width: adding uses d_model = the token width; concatenating appends "
      "`positional.dim` columns of position, so the model is that much wider. Step times are "
      "measured on one batch of the run's shape (one thread); FLOPs count the matmuls.\n\n{}\n"
      "**Adding.** {}\n**Concatenating.** {}",
      table, sweep_details(add), sweep_details(concat));
}

}  // namespace

void add_cost_claims(std::vector<ClaimDef>& defs) {
  defs.push_back({"C7", c7});
  defs.push_back({"C13", c13});
}

}  // namespace pelab::claims
