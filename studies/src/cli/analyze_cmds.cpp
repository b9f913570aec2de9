// `pelab analyze`: analyses of a model's positional machinery that the claims report is built
// from, for users to call on their own models.
//   analyze encoding CONFIG|RUN   an absolute encoding: heat map, dot products by distance,
//                                 shift maps, uniqueness and norms, dimensions in use
//   analyze attention RUN         attention weights per layer and head, and by distance
//   analyze positions RUN         accuracy and loss by position against training counts, and
//                                 the overlap of position and token subspaces
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <memory>

#include "cli/pelab_commands.h"
#include "pelab/analysis/attention.h"
#include "pelab/analysis/encoding.h"
#include "pelab/analysis/positions.h"
#include "pelab/config/experiment.h"
#include "pelab/config/load_model.h"
#include "pelab/core/error.h"
#include "pelab/data/file_dataset.h"
#include "pelab/report/compare.h"
#include "pelab/run/trainer.h"

namespace pelab::cli {

namespace fs = std::filesystem;

namespace {

constexpr int64_t kMaxPositions = 8192;  // rows of the encoding table analyze encoding draws
constexpr int64_t kMaxAttentionInputs = 100000;  // inputs analyze attention averages

// A trained run (its directory or checkpoint file) or an experiment config (the model as
// initialised from its seed), with overrides for configs.
std::unique_ptr<Encoder> model_from(const std::string& source,
                                    const std::vector<std::string>& overrides,
                                    std::string& described) {
  std::error_code ec;
  const bool dir = fs::is_directory(source, ec);
  const bool checkpoint = !dir && fs::path(source).extension() == ".safetensors";
  if (dir || checkpoint) {
    PELAB_CHECK(overrides.empty(),
                "{}: overrides apply to configs; a trained run is analysed as it is", source);
    const std::string path = dir ? (fs::path(source) / "checkpoint.safetensors").string() : source;
    PELAB_CHECK(fs::exists(path, ec), "{}: no checkpoint.safetensors (is it a run directory?)",
                source);
    described = fmt::format("the trained model of {}", path);
    return load_model(path);
  }
  const ExperimentConfig config = load_experiment(source, overrides);
  described = fmt::format("the model of {} as initialised from seed {}", source, config.seed);
  return initial_model(config);
}

// A trained run's directory (or its checkpoint file) → the directory.
fs::path run_dir_of(const std::string& run) {
  std::error_code ec;
  fs::path dir = fs::is_directory(run, ec) ? fs::path(run) : fs::path(run).parent_path();
  PELAB_CHECK(fs::exists(dir / "checkpoint.safetensors", ec) && fs::exists(dir / "config.yaml", ec),
              "{}: not a run directory (it needs checkpoint.safetensors and config.yaml)", run);
  return dir;
}

std::string out_dir_for(const std::string& out, const std::string& what,
                        const std::string& scheme) {
  return out.empty() ? fmt::format("runs/analysis/{}-{}", what, scheme) : out;
}

// analyze encoding: what analyze_encoding found, in a few lines.
void print_encoding_analysis(const EncodingAnalysis& a, const std::string& described) {
  const EncodingSummary& s = a.summary;
  fmt::print("{} encoding, width {}, {} positions ({})\n", a.scheme, a.width, a.options.positions,
             described);
  fmt::print("  uniqueness: smallest distance between two positions {:.4g} ({} and {})\n",
             s.min_distance, s.closest_i, s.closest_j);
  fmt::print("  norms: encoding {:.4g} (min {:.4g}, max {:.4g}); token embedding {:.4g}\n",
             s.mean_norm, s.min_norm, s.max_norm, s.token_norm);
  fmt::print(
      "  P({0})·P(j): largest at j = {1}; {2} of {3} steps away from {0} do not fall "
      "(largest rise {4:.4g}{5})\n",
      a.options.reference, a.falloff.argmax, a.falloff.rises, a.falloff.steps,
      a.falloff.largest_rise,
      a.falloff.first_rise >= 0 ? fmt::format(", first at distance {}", a.falloff.first_rise)
                                : std::string());
  if (a.sinusoidal_shift_error >= 0)
    fmt::print("  PE(x+Δ) = PE(x)·T(Δ): largest error {:.3g} over x and Δ\n",
               a.sinusoidal_shift_error);
  std::string fitted;
  for (const auto& [delta, r] : a.fitted_shift_residuals)
    fitted += fmt::format("{}Δ={}: {:.3g}", fitted.empty() ? "" : ", ", delta, r);
  if (!fitted.empty()) fmt::print("  best linear shift map, relative residual: {}\n", fitted);
  std::string moving;
  for (const auto& [length, share] : a.moving)
    moving += fmt::format("{}{:.0f}% at {}", moving.empty() ? "" : ", ", 100 * share, length);
  fmt::print("  dimensions in use (moving > {} of the largest value): {}\n",
             a.options.moving_threshold, moving.empty() ? "none measurable" : moving);
  for (const std::string& skip : a.skipped) fmt::print("  skipped {}\n", skip);
}

// analyze attention: per layer, each head's most-attended distance and its mean weight.
void print_attention_analysis(const AttentionAnalysis& a) {
  for (int64_t l = 0; l < a.layers; ++l) {
    std::string line;
    for (int64_t h = 0; h < a.heads; ++h) {
      const std::vector<double>& curve = a.by_distance[static_cast<size_t>(l * a.heads + h)];
      size_t best = 0;
      for (size_t k = 0; k < curve.size(); ++k)
        if (std::isfinite(curve[k]) && (!std::isfinite(curve[best]) || curve[k] > curve[best]))
          best = k;
      line += fmt::format("{}h{} {:+d} ({:.2f})", h ? ", " : "", h, a.distances[best], curve[best]);
    }
    fmt::print("  layer {}: most-attended distance per head: {}\n", l, line);
  }
}

// analyze positions: training counts and the subspace overlap.
void print_positions_analysis(const PositionsAnalysis& a) {
  if (!a.counts.empty())
    fmt::print("  training scored position 0 {} times, position {} {} times\n",
               a.counts.front().scored, a.counts.back().position, a.counts.back().scored);
  if (a.overlap) {
    const SubspaceOverlap& o = *a.overlap;
    fmt::print(
        "  subspaces: {:.1f}% of the encoding's energy lies in the {}-dim token span "
        "(chance {:.1f}%); {:.1f}% of the tokens' in the encoding's {} principal "
        "directions (chance {:.1f}%)\n",
        100 * o.position_in_tokens, o.token_rank, 100 * o.position_in_tokens_chance,
        100 * o.tokens_in_position, o.position_rank, 100 * o.tokens_in_position_chance);
  }
}

// --reference and --shifts name encoded positions: below --positions (CLI11 has parsed all
// three), refused with the message of any value out of its range.
void check_within_positions(const CLI::App& encoding, const EncodingAnalysisOptions& o) {
  const IntegerRange encoded = range_of<int64_t>(0, o.positions - 1);
  if (encoding.count("--reference") > 0)
    option_integer("--reference", std::to_string(o.reference), encoded);
  if (encoding.count("--shifts") > 0)
    for (int64_t shift : o.shifts) option_integer("--shifts", std::to_string(shift), encoded);
}

void print_written(const PlotResult& written, const std::string& out) {
  fmt::print("wrote {} files to {}\n", written.written.size(), out);
  if (!written.message.empty()) fmt::print("note: {}\n", written.message);
}

void add_encoding_command(CLI::App* analyze, Action& action) {
  struct EncodingArgs {
    std::string source;
    std::vector<std::string> overrides;
    EncodingAnalysisOptions options;
    std::string out;
  };
  auto ea = std::make_shared<EncodingArgs>();
  CLI::App* encoding = analyze->add_subcommand(
      "encoding",
      "An absolute encoding (sinusoidal, learned, index, normalized, binary) as the model adds "
      "it: heat map, P(ref)·P(j) by position, shift maps T(Δ), uniqueness and norms, dimensions "
      "in use");
  encoding
      ->add_option("source", ea->source,
                   "an experiment config (the model at initialisation) or a trained run")
      ->required();
  encoding->add_option("overrides", ea->overrides,
                       "key=value overrides for a config, e.g. positional=sinusoidal "
                       "model.d_model=128");
  add_integer(encoding, "--positions", ea->options.positions, range_of<int64_t>(2, kMaxPositions),
              "positions encoded (default 256)");
  add_integer(encoding, "--reference", ea->options.reference,
              range_of<int64_t>(0, kMaxPositions - 1),
              "the reference position of the dot products (default: positions / 2)");
  add_integer_list(encoding, "--shifts", ea->options.shifts,
                   range_of<int64_t>(0, kMaxPositions - 1), "shifts Δ of the shift maps");
  add_integer_list(encoding, "--moving-lengths", ea->options.moving_lengths,
                   range_of<int64_t>(2, 65536),
                   "lengths at which to count the dimensions in use (default 64,256,1024)");
  add_number(encoding, "--threshold", ea->options.moving_threshold,
             NumberRange{0, 1, /*above_min=*/true},
             "a dimension is in use when its values move by more than this share of the "
             "table's largest value (default 0.1)");
  encoding->add_option("--out", ea->out,
                       "directory for encoding.json, encoding.csv and the figures (default "
                       "runs/analysis/encoding-<scheme>)");
  encoding->callback([ea, encoding, &action] {
    check_within_positions(*encoding, ea->options);
    action = [ea] {
      std::string described;
      const std::unique_ptr<Encoder> model = model_from(ea->source, ea->overrides, described);
      const EncodingAnalysis a = analyze_encoding(*model, ea->options);
      const std::string out = out_dir_for(ea->out, "encoding", a.scheme);
      const PlotResult written = write_encoding_analysis(a, out);
      print_encoding_analysis(a, described);
      print_written(written, out);
      return 0;
    };
  });
}

void add_analyze_attention_command(CLI::App* analyze, Action& action) {
  struct AttentionArgs {
    std::string run;
    AttentionAnalysisOptions options;
    std::string out;
  };
  auto aa = std::make_shared<AttentionArgs>();
  CLI::App* attention = analyze->add_subcommand(
      "attention",
      "A trained run's attention weights per layer and head on inputs from its task's "
      "evaluation set, and the mean weight by relative distance j − i");
  attention->add_option("run", aa->run, "a run directory")->required();
  add_integer(attention, "--length", aa->options.length, range_of<int64_t>(0, kMaxProblemSize),
              "problem size n of the inputs (default 8)");
  add_integer(attention, "--examples", aa->options.examples,
              range_of<int64_t>(1, kMaxAttentionInputs),
              "inputs averaged by distance (default 64)");
  add_integer(attention, "--shown", aa->options.shown,
              range_of<int64_t>(0, kMaxAttentionInputs - 1),
              "which input (0-based) is drawn head by head (default 0)");
  attention->add_option("--out", aa->out, "output directory (default RUN/analysis/attention)");
  attention->callback([aa, &action] {
    action = [aa] {
      const fs::path dir = run_dir_of(aa->run);
      const ExperimentConfig config = load_experiment((dir / "config.yaml").string());
      PELAB_CHECK(config.task.name != kFileTaskName,
                  "{}: analyze attention draws inputs from a generated task; this run reads "
                  "files",
                  aa->run);
      const std::unique_ptr<Encoder> model = load_model((dir / "checkpoint.safetensors").string());
      const std::unique_ptr<Task> task = make_task(config.task);
      AttentionAnalysisOptions options = aa->options;
      options.eval_seed = config.evaluation.seed;
      options.position_ids = config.task.position_ids;
      const AttentionAnalysis a = analyze_attention(*model, *task, options);
      const std::string out = aa->out.empty() ? (dir / "analysis" / "attention").string() : aa->out;
      const PlotResult written = write_attention_analysis(a, out);
      fmt::print("{}: {} layers × {} heads on {} inputs of size {} ({} tokens)\n", aa->run,
                 a.layers, a.heads, options.examples, options.length, a.tokens);
      print_attention_analysis(a);
      print_written(written, out);
      return 0;
    };
  });
}

void add_positions_command(CLI::App* analyze, Action& action) {
  struct PositionsArgs {
    std::string run;
    std::vector<int64_t> lengths;
    std::string out;
  };
  auto pa = std::make_shared<PositionsArgs>();
  CLI::App* positions = analyze->add_subcommand(
      "positions",
      "A trained run's accuracy and loss at each position, inside and beyond the trained lengths, "
      "against how often training scored that position; and whether its absolute encoding "
      "shares a subspace with the token embeddings");
  positions->add_option("run", pa->run, "a run directory")->required();
  add_integer_list(positions, "--lengths", pa->lengths, range_of<int64_t>(0, kMaxProblemSize),
                   "problem sizes to evaluate (default: the run's evaluation lengths)");
  positions->add_option("--out", pa->out, "output directory (default RUN/analysis/positions)");
  positions->callback([pa, &action] {
    action = [pa] {
      const fs::path dir = run_dir_of(pa->run);
      const ExperimentConfig config = load_experiment((dir / "config.yaml").string());
      PELAB_CHECK(config.task.name != kFileTaskName,
                  "{}: analyze positions replays a generated task's training data; this run "
                  "reads files",
                  pa->run);
      // The replay stops where the run stopped (training.stop_when may end it early).
      const RunRecord record = read_run(dir.string());
      PELAB_CHECK(record.status == "completed" && record.steps >= 0,
                  "{}: analyze positions needs a finished run (its summary.json says how many "
                  "steps training took); this one is {}",
                  pa->run, record.status);
      const std::unique_ptr<Encoder> model = load_model((dir / "checkpoint.safetensors").string());
      const std::unique_ptr<Task> task = make_task(config.task);
      check_lengths_for_task(pa->lengths, *task);
      const PositionsAnalysis a =
          analyze_positions(*model, *task, config, pa->lengths, record.steps);
      const std::string out = pa->out.empty() ? (dir / "analysis" / "positions").string() : pa->out;
      const PlotResult written = write_positions_analysis(a, out);
      fmt::print("{}: {} positions evaluated; trained on n = {}..{}\n", pa->run, a.rows.size(),
                 a.train_min_length, a.train_max_length);
      print_positions_analysis(a);
      print_written(written, out);
      return 0;
    };
  });
}

}  // namespace

void add_analyze_commands(CLI::App& app, Action& action) {
  CLI::App* analyze = app.add_subcommand(
      "analyze", "Analyses of positional machinery: encoding, attention, positions");
  analyze->require_subcommand(1);
  add_encoding_command(analyze, action);
  add_analyze_attention_command(analyze, action);
  add_positions_command(analyze, action);
}

}  // namespace pelab::cli
