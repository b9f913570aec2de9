// The claims about cost:
//   C7   relative encodings are slower (their extra step inside attention); rotary's overhead
//        is minimal (notes 000, 003)
//   C13  adding and concatenating both work; concatenating costs more computation (000)
// Step times are measured in this process, one thread, each case right after the other, with
// the benchmark's timing loop (pelab bench): they describe this implementation on this machine.
#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>

#include "claims/claim.h"
#include "pelab/analysis/plain_shaw.h"
#include "pelab/bench/train_bench.h"
#include "pelab/claims/relative_cost_verdicts.h"
#include "pelab/config/experiment.h"
#include "pelab/core/error.h"
#include "pelab/core/parallel.h"
#include "pelab/nn/attention.h"
#include "pelab/positional/scheme.h"
#include "pelab/run/trainer.h"

namespace pelab::claims {

namespace {

// Timing needs a quiet machine: another process on the same cores slows some rounds and not
// others, and shares caches and memory bandwidth. The rounds pair the cases, which cancels a
// slow spell that touches both sides of a ratio alike, but not one that falls on one side.
// So the claims measure how busy the rest of the machine was while they timed: the CPU time
// all processes used (from /proc/stat), less this process's own, over the wall time, in
// cores. NaN where /proc/stat cannot be read.
class OtherProcessesLoad {
 public:
  OtherProcessesLoad() : busy_(machine_busy_seconds()), own_(own_cpu_seconds()) {}
  double cores() const {
    const double wall = std::chrono::duration<double>(Clock::now() - start_).count();
    const double others = (machine_busy_seconds() - busy_) - (own_cpu_seconds() - own_);
    if (std::isnan(others) || wall <= 0) return std::numeric_limits<double>::quiet_NaN();
    return std::max(0.0, others) / wall;
  }

 private:
  using Clock = std::chrono::steady_clock;
  static double machine_busy_seconds() {
    std::ifstream in("/proc/stat");
    std::string cpu;
    double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
    if (!(in >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal) ||
        cpu != "cpu")
      return std::numeric_limits<double>::quiet_NaN();
    return (user + nice + system + irq + softirq + steal) /
           static_cast<double>(sysconf(_SC_CLK_TCK));
  }
  static double own_cpu_seconds() {
    struct rusage usage {};
    getrusage(RUSAGE_SELF, &usage);
    auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
    return seconds(usage.ru_utime) + seconds(usage.ru_stime);
  }
  double busy_, own_;
  Clock::time_point start_ = Clock::now();
};

nlohmann::json quiet_numbers(double other_cores, double quiet_below) {
  return {{"other_processes_cores", other_cores},  // NaN is written as null
          {"quiet_below", quiet_below},
          {"quiet", !std::isnan(other_cores) && other_cores < quiet_below}};
}

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
  const Encoder model(config, make_scheme, 0);
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
// Every case also goes to `cases`; each scheme's most tensor memory during a step to `peak_mb`.
std::map<std::string, Stat> time_schemes(const BenchConfig& c,
                                         const std::vector<std::string>& schemes, int64_t rounds,
                                         const TrainCaseOptions& options, nlohmann::json& cases,
                                         std::map<std::string, double>& peak_mb) {
  const Batch batch = bench_batch(c, 0);
  std::map<std::string, std::vector<double>> per_round;
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
  double max_seconds = 2, quiet_below = 0.1;
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
  s.read("quiet_below", c.quiet_below);
  s.finish({"d_model", "layers", "heads", "tokens_per_batch", "lengths", "schemes", "others",
            "min_steps", "max_seconds", "rounds", "minimal_overhead", "slower_by", "quiet_below"});
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
  std::string memory = "| length T × batch B |";
  for (const std::string& scheme : set.schemes) memory += fmt::format(" {} |", scheme);
  memory += " plain Shaw's [T, T, d_h] tensors per layer |\n|---|";
  for (size_t i = 0; i <= set.schemes.size(); ++i) memory += "--:|";
  memory += "\n";
  C7Numbers plain = set.rule, fused = set.rule;
  nlohmann::json cases = nlohmann::json::array();
  const OtherProcessesLoad load;
  for (const int64_t T : set.lengths) {
    const BenchConfig c{
        "claim", set.d_model, set.layers, set.heads, T, std::max<int64_t>(1, set.tokens / T), 16};
    std::map<std::string, double> peak_mb;
    const std::map<std::string, Stat> timing = time_schemes(
        c, set.schemes, set.rounds, claim_timing(set.min_steps, set.max_seconds), cases, peak_mb);
    C7Length length{T, timing.at("none").values, timing.at("relative (plain)").values, {}};
    for (const std::string& other : set.others)
      length.others.emplace_back(other, timing.at(other).values);
    plain.lengths.push_back(length);
    length.relative = timing.at("relative").values;
    fused.lengths.push_back(length);
    table += fmt::format("| {} × {} |", T, c.B);
    for (const std::string& name : columns)
      table += fmt::format(" {} ms ({:.2f}×) |", format_interval(timing.at(name), 1),
                           paired_ratio(timing.at(name).values, timing.at("none").values).mean);
    table += "\n";
    memory += fmt::format("| {} × {} |", T, c.B);
    for (const std::string& scheme : set.schemes)
      memory += fmt::format(" {} |", fmt_number(peak_mb.at(scheme)));
    // Key and value embeddings, [T, T, d_h] floats each (d_h: heads divide d_model).
    const int64_t head_width = set.d_model / set.heads;
    memory +=
        fmt::format(" {} |\n", fmt_number(2.0 * T * T * static_cast<double>(head_width) * 4 / 1e6));
  }
  const double other_cores = load.cores();
  const Judgement j = judge_c7(plain);
  apply(j, r);
  const Judgement pelab_own = judge_c7(fused);
  r.because +=
      fmt::format(" — with pelab's fused relative instead: {} ({}){}", to_string(pelab_own.verdict),
                  pelab_own.because, quiet_clause(other_cores, set.quiet_below));
  r.numbers = {{"cases", cases},
               {"others", set.others},
               {"verdict_with_fused_relative", to_string(pelab_own.verdict)},
               {"machine", quiet_numbers(other_cores, set.quiet_below)}};
  const BenchConfig shape{"claim", set.d_model, set.layers, set.heads, set.lengths.front(), 1, 16};
  const ModelConfig relative = bench_model_config(shape, "relative");
  r.details = fmt::format(
      "One training step (forward, backward, AdamW) of the same encoder (d_model {}, {} layers, "
      "{} heads, {}, relative with k = {}) on {} tokens per batch, one thread; each case timed "
      "once per round over {} interleaved rounds (each time the median of at least {} steps), "
      "shown as the mean over rounds with its 95% interval, and in parentheses the mean over "
      "rounds of its ratio to `none` in the same round. The rule's ratios are paired the same "
      "way: one ratio per round, their mean, and the 95% bootstrap interval of that mean over "
      "the rounds. {} "
      "\"The others\" are {}: the absolute schemes and rotary. The note speaks of relative "
      "encodings as usually implemented, with a [T, T, d_h] tensor of key and value embeddings "
      "per layer; pelab's relative scheme computes the same terms from the [2k+1, d_h] tables "
      "without it (fused). Both are timed as one layer's attention op (forward and backward, "
      "the terms built each step), and \"relative (plain)\" is relative's step with the plain "
      "op in place of the fused one in each of its {} layers, estimated round by round. The "
      "verdict judges the plain one; the fused one's is given beside it. Times describe this "
      "implementation on this machine.\n\n{}\nThe most memory tensors held at once during a "
      "step, MB, and what the plain implementation's two [T, T, d_h] tensors take per layer "
      "(pelab's fused relative holds none):\n\n{}",
      set.d_model, set.layers, set.heads, relative.causal ? "causal" : "bidirectional",
      relative.positional.keys.integer("max_distance"), set.tokens, set.rounds, set.min_steps,
      quiet_text(other_cores, set.quiet_below), fmt::join(set.others, ", "), set.layers, table,
      memory);
}

// One trained variant of C13: its group, its model and the batch shape it trained on.
struct C13Run {
  std::string width;  // which comparison: "equal token width" ...
  std::string scheme, combine;
  const Group* group = nullptr;
  ModelConfig model;
  BenchConfig shape;
  int64_t parameters = 0;
  std::vector<double> ms;  // step time per round
};

std::vector<C13Run> c13_runs(const ClaimSweep& sweep, const std::string& width) {
  std::vector<C13Run> out;
  for (const Group& g : sweep.comparison.groups) {
    // The variant's architecture, from its config: a group whose every run diverged is timed
    // too (the timing needs no trained weights) and counts as a variant that did not learn
    // (by C13's rule, refuted beside variants that learned; inconclusive if none has numbers).
    const ExperimentConfig config =
        load_experiment((std::filesystem::path(g.first_run()) / "config.yaml").string());
    const ModelConfig& m = config.model;
    const KeyValues keys = resolve_defaults(m.positional);
    C13Run v{width,
             m.positional.type,
             keys.has("combine") ? keys.text("combine") : "add",
             &g,
             m,
             {"claim", m.d_model, m.layers, m.heads, config.task.max_length,
              config.training.batch_size, std::min(m.vocab_in, m.vocab_out)},
             initial_model(config)->params().count(),
             {}};
    out.push_back(std::move(v));
  }
  return out;
}

const C13Run& c13_find(const std::vector<C13Run>& runs, const std::string& width,
                       const std::string& scheme, const std::string& path) {
  const auto it = std::find_if(runs.begin(), runs.end(), [&](const C13Run& v) {
    return v.width == width && v.scheme == scheme;
  });
  PELAB_CHECK(it != runs.end(), "{}: the {} variants train no {} run", path, width, scheme);
  return *it;
}

void c13(const ClaimContext& ctx, ClaimResult& r) {
  MapReader s = ctx.settings();
  std::string experiment;
  std::vector<std::string> add_overrides, concat_overrides, wide_add_overrides;
  double costlier_by = 0.05, max_seconds = 2, quiet_below = 0.1;
  int64_t min_steps = 10, rounds = 5;
  PELAB_CHECK(s.read("experiment", experiment), "{}: the key 'experiment' is missing",
              s.where("experiment"));
  s.read("add_overrides", add_overrides);
  s.read("concat_overrides", concat_overrides);
  s.read("wide_add_overrides", wide_add_overrides);
  s.read("costlier_by", costlier_by);
  s.read("min_steps", min_steps);
  s.read("max_seconds", max_seconds);
  s.read("rounds", rounds);
  s.read("quiet_below", quiet_below);
  s.finish({"experiment", "add_overrides", "concat_overrides", "wide_add_overrides", "costlier_by",
            "min_steps", "max_seconds", "rounds", "quiet_below"});
  const ClaimSweep add = run_claim_sweep(ctx, experiment, add_overrides);
  const ClaimSweep concat = run_claim_sweep(ctx, experiment, concat_overrides);
  const ClaimSweep wide_add = run_claim_sweep(ctx, experiment, wide_add_overrides);
  std::vector<C13Run> runs = c13_runs(add, "add");
  for (C13Run& v : c13_runs(concat, "concat")) runs.push_back(std::move(v));
  for (C13Run& v : c13_runs(wide_add, "wide add")) runs.push_back(std::move(v));

  // Step times over interleaved rounds: a slow spell of the machine touches every variant.
  const OtherProcessesLoad load;
  for (int64_t round = 0; round < rounds; ++round)
    for (C13Run& v : runs)
      v.ms.push_back(time_training_steps(v.model, bench_batch(v.shape, 0),
                                         claim_timing(min_steps, max_seconds))
                         .ms_median);
  const double other_cores = load.cores();

  C13Numbers numbers;
  numbers.costlier_by = costlier_by;
  std::string table =
      "| scheme | combine | d_model (token + position) | parameters | matmul GFLOP/step | "
      "ms/step | in-distribution (sequence / token) | beyond training (sequence / token) |\n"
      "|---|---|--:|--:|--:|--:|--:|--:|\n";
  nlohmann::json rows = nlohmann::json::array();
  for (const C13Run& v : runs) {
    const Group& g = *v.group;
    const double gflop = bench_matmul_flops(v.shape, v.scheme) / 1e9;
    const Stat ms = summarize(v.ms);
    const std::string name =
        fmt::format("{}, {}, d_model {}", v.scheme, v.combine, v.model.d_model);
    // No numbers (every run diverged): NaN, written as null.
    numbers.variants.push_back({name,
                                {g.learned_runs, g.trained_runs()},
                                number_or_nan(g.in_distribution, g.in_distribution.mean)});
    if (v.width == "concat") {
      numbers.costs.push_back(
          {v.scheme, c13_find(runs, "add", v.scheme, ctx.config.path).ms, v.ms});
      numbers.equal_total_width.push_back(
          {v.scheme, c13_find(runs, "wide add", v.scheme, ctx.config.path).ms, v.ms});
    }
    const int64_t token_width =
        v.model.d_model -
        (v.combine == "concat" ? resolve_defaults(v.model.positional).integer("dim") : 0);
    table += fmt::format("| {} | {} | {} ({} + {}) | {} | {} | {} | {}{} | {} |\n", v.scheme,
                         v.combine, v.model.d_model, token_width, v.model.d_model - token_width,
                         v.parameters, fmt_number(gflop), format_interval(ms, 1),
                         with_token(format_stat(g.in_distribution), g.in_distribution_token),
                         g.all_learned() ? "" : " †",
                         with_token(format_stat(g.extrapolation), g.extrapolation_token));
    rows.push_back({{"scheme", v.scheme},
                    {"combine", v.combine},
                    {"d_model", v.model.d_model},
                    {"token_width", token_width},
                    {"parameters", v.parameters},
                    {"matmul_gflop_per_step", gflop},
                    {"ms_per_step", ms.mean},
                    {"ms_ci", {ms.ci_low, ms.ci_high}},
                    {"ms_per_round", v.ms},
                    {"learned_runs", g.learned_runs},
                    {"runs", g.trained_runs()},
                    {"in_distribution", number_or_nan(g.in_distribution, g.in_distribution.mean)},
                    {"extrapolation", number_or_nan(g.extrapolation, g.extrapolation.mean)}});
  }
  apply(judge_c13(numbers), r);
  r.because += quiet_clause(other_cores, quiet_below);
  r.numbers = {{"variants", rows}, {"machine", quiet_numbers(other_cores, quiet_below)}};
  r.details = fmt::format(
      "Three variants. At equal token width, adding uses d_model = the token width, and "
      "concatenating appends `positional.dim` columns of position, so its model is that much "
      "wider; at equal total width, adding uses a model as wide as concatenating's, whose "
      "tokens then have the wider embedding. Step times: one batch of the run's shape, one "
      "thread, each variant timed once per round over {} interleaved rounds (mean and 95% "
      "interval); the cost ratios are paired by round (one ratio per round, their mean and the "
      "95% bootstrap interval of that mean). {} FLOPs count the matmuls. † marks a variant "
      "whose runs did not all learn the task in distribution.\n\n{}\n"
      "**Adding, equal token width.** {}\n**Concatenating.** {}\n"
      "**Adding, equal total width.** {}",
      rounds, quiet_text(other_cores, quiet_below), table, sweep_details(add),
      sweep_details(concat), sweep_details(wide_add));
}

}  // namespace

void add_cost_claims(std::vector<ClaimDef>& defs) {
  defs.push_back({"C7", c7});
  defs.push_back({"C13", c13});
}

}  // namespace pelab::claims
