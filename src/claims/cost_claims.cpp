// The claims about cost:
//   C7   relative encodings are slower (their extra step inside attention); rotary's overhead
//        is minimal (notes 000, 003)
//   C13  adding and concatenating both work; concatenating costs more computation (000)
// Step times are measured in this process, one thread, each case right after the other, with
// the benchmark's timing loop (pelab bench): they describe this implementation on this machine.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>

#include "claims/claim.h"
#include "pelab/analysis/plain_shaw.h"
#include "pelab/bench/train_bench.h"
#include "pelab/claims/relative_cost_verdicts.h"
#include "pelab/core/error.h"
#include "pelab/core/parallel.h"
#include "pelab/nn/attention.h"
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

// One layer's attention op, forward and backward, with relative's terms built the fused way
// (the scheme's own) or the plain way (a [T, T, d_h] tensor), in ms: the median of `steps`
// after one warm-up. Building the terms is part of each step, as in a model.
struct AttentionTimes {
  double fused_ms = 0, plain_ms = 0;
};

AttentionTimes time_relative_attention(const BenchConfig& c, const Batch& batch, int64_t steps) {
  const ModelConfig config = bench_model_config(c, "relative");
  const Encoder model(config, 0);
  const int64_t k = config.positional.keys.integer("max_distance");
  // q, k, v: [B, T, d]; their values do not change the work done.
  Tensor q = Tensor::full({c.B, c.T, c.d_model}, 0.01f), kk = clone(q), v = clone(q);
  for (Tensor* x : {&q, &kk, &v}) x->set_requires_grad(true);
  AttentionOptions o;
  o.heads = c.heads;
  o.causal = config.causal;
  auto time = [&](bool plain) {
    std::vector<double> ms;
    for (int64_t step = 0; step <= steps; ++step) {
      const auto start = std::chrono::steady_clock::now();
      std::shared_ptr<const AttentionTerms> terms = model.scheme().attention_terms(batch, 0);
      if (plain) {
        const TensorList tables = terms->parameters();
        terms = plain_shaw_terms(batch.positions, tables[0], tables[1], k);
      }
      sum_all(attention(q, kk, v, batch.key_mask, terms, o)).backward();
      const std::chrono::duration<double, std::milli> took =
          std::chrono::steady_clock::now() - start;
      if (step > 0) ms.push_back(took.count());  // the first is a warm-up
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
  };
  set_num_threads(1);
  return {time(false), time(true)};
}

// Step times of each scheme at config c over `rounds` interleaved rounds (each case timed
// once per round, so a slow spell of the machine touches every scheme alike), summarised over
// the rounds, plus "relative (plain)": relative's step with its attention terms built the
// plain way, estimated per round as relative's step + layers × (plain − fused attention op).
// Every case also goes to `cases`.
std::map<std::string, Stat> time_schemes(const BenchConfig& c,
                                         const std::vector<std::string>& schemes, int64_t rounds,
                                         const TrainCaseOptions& options, nlohmann::json& cases) {
  const Batch batch = bench_batch(c, 0);
  std::map<std::string, std::vector<double>> per_round;
  std::map<std::string, double> peak_mb;
  for (int64_t round = 0; round < rounds; ++round) {
    for (const std::string& scheme : schemes) {
      const StepTiming t = time_training_steps(bench_model_config(c, scheme), batch, options);
      per_round[scheme].push_back(t.ms_median);
      peak_mb[scheme] = std::max(peak_mb[scheme], t.peak_tensor_mb);
    }
    const AttentionTimes a = time_relative_attention(c, batch, options.min_steps);
    per_round["attention op, relative (fused)"].push_back(a.fused_ms);
    per_round["attention op, relative (plain)"].push_back(a.plain_ms);
    per_round["relative (plain)"].push_back(
        per_round["relative"].back() + static_cast<double>(c.layers) * (a.plain_ms - a.fused_ms));
  }
  std::map<std::string, Stat> timing;
  for (const auto& [name, ms] : per_round) {
    timing[name] = summarize(ms);
    cases.push_back({{"length", c.T},
                     {"batch", c.B},
                     {"case", name},
                     {"ms_mean", timing[name].mean},
                     {"ms_ci", {timing[name].ci_low, timing[name].ci_high}},
                     {"ms_per_round", ms},
                     {"peak_tensor_mb", peak_mb.count(name) ? peak_mb[name] : 0.0}});
  }
  return timing;
}

struct C7Settings {
  int64_t d_model = 64, layers = 2, heads = 4, tokens = 2048, min_steps = 5, rounds = 5;
  std::vector<int64_t> lengths;
  std::vector<std::string> schemes, others;
  double max_seconds = 2;
  C7Numbers rule;
};

C7Settings read_c7_settings(const ClaimContext& ctx) {
  MapReader s = ctx.settings();
  C7Settings c;
  s.read("d_model", c.d_model);
  s.read("layers", c.layers);
  s.read("heads", c.heads);
  s.read("tokens_per_batch", c.tokens);
  s.read("lengths", c.lengths);
  s.read("schemes", c.schemes);
  s.read("others", c.others);
  s.read("min_steps", c.min_steps);
  s.read("max_seconds", c.max_seconds);
  s.read("rounds", c.rounds);
  s.read("minimal_overhead", c.rule.minimal_overhead);
  s.read("slower_by", c.rule.slower_by);
  s.finish({"d_model", "layers", "heads", "tokens_per_batch", "lengths", "schemes", "others",
            "min_steps", "max_seconds", "rounds", "minimal_overhead", "slower_by"});
  for (const std::string required : {"none", "relative", "rotary"})
    PELAB_CHECK(std::find(c.schemes.begin(), c.schemes.end(), required) != c.schemes.end(),
                "{}: settings.schemes must include {}", ctx.config.path, required);
  for (const std::string& other : c.others)
    PELAB_CHECK(std::find(c.schemes.begin(), c.schemes.end(), other) != c.schemes.end() &&
                    other != "relative",
                "{}: settings.others must be schemes timed other than relative, got {}",
                ctx.config.path, other);
  PELAB_CHECK(!c.lengths.empty() && c.min_steps >= 1 && c.rounds >= 1,
              "{}: settings need lengths, min_steps ≥ 1 and rounds ≥ 1", ctx.config.path);
  return c;
}

void c7(const ClaimContext& ctx, ClaimResult& r) {
  const C7Settings set = read_c7_settings(ctx);
  std::vector<std::string> columns = set.schemes;
  for (const char* extra :
       {"relative (plain)", "attention op, relative (fused)", "attention op, relative (plain)"})
    columns.push_back(extra);
  std::string table = "| length T × batch B |", rule = "|---|";
  for (const std::string& name : columns) {
    table += fmt::format(" {} |", name);
    rule += "--:|";
  }
  table += "\n" + rule + "\n";
  C7Numbers plain = set.rule, fused = set.rule;
  nlohmann::json cases = nlohmann::json::array();
  for (const int64_t T : set.lengths) {
    const BenchConfig c{
        "claim", set.d_model, set.layers, set.heads, T, std::max<int64_t>(1, set.tokens / T), 16};
    const std::map<std::string, Stat> timing = time_schemes(
        c, set.schemes, set.rounds, claim_timing(set.min_steps, set.max_seconds), cases);
    C7Length length{T, timing.at("none"), timing.at("relative (plain)"), {}};
    for (const std::string& other : set.others) length.others.emplace_back(other, timing.at(other));
    plain.lengths.push_back(length);
    length.relative = timing.at("relative");
    fused.lengths.push_back(length);
    table += fmt::format("| {} × {} |", T, c.B);
    for (const std::string& name : columns)
      table += fmt::format(" {} ms ({:.2f}×) |", format_interval(timing.at(name), 1),
                           timing.at(name).mean / timing.at("none").mean);
    table += "\n";
  }
  const Judgement j = judge_c7(plain);
  apply(j, r);
  const Judgement pelab_own = judge_c7(fused);
  r.because += fmt::format(" — with pelab's fused relative instead: {} ({})",
                           to_string(pelab_own.verdict), pelab_own.because);
  r.numbers = {{"cases", cases},
               {"others", set.others},
               {"verdict_with_fused_relative", to_string(pelab_own.verdict)}};
  const BenchConfig shape{"claim", set.d_model, set.layers, set.heads, set.lengths.front(), 1, 16};
  const ModelConfig relative = bench_model_config(shape, "relative");
  r.details = fmt::format(
      "One training step (forward, backward, AdamW) of the same encoder (d_model {}, {} layers, "
      "{} heads, {}, relative with k = {}) on {} tokens per batch, one thread; each case timed "
      "once per round over {} interleaved rounds (each time the median of at least {} steps), "
      "shown as the mean over rounds with its 95% interval, and in parentheses over `none`. "
      "\"The others\" are {}: the absolute schemes and rotary. The note speaks of relative "
      "encodings as usually implemented, with a [T, T, d_h] tensor of key and value embeddings "
      "per layer; pelab's relative scheme computes the same terms from the [2k+1, d_h] tables "
      "without it (fused). Both are timed as one layer's attention op (forward and backward, "
      "the terms built each step), and \"relative (plain)\" is relative's step with the plain "
      "op in place of the fused one in each of its {} layers, estimated round by round. The "
      "verdict judges the plain one; the fused one's is given beside it. Times describe this "
      "implementation on this machine.\n\n{}",
      set.d_model, set.layers, set.heads, relative.causal ? "causal" : "bidirectional",
      relative.positional.keys.integer("max_distance"), set.tokens, set.rounds, set.min_steps,
      fmt::join(set.others, ", "), set.layers, table);
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
