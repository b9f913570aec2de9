#include "pelab/analysis/attention.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

#include "pelab/core/error.h"
#include "pelab/data/batching.h"
#include "pelab/data/position_ids.h"
#include "pelab/io/atomic_file.h"

namespace pelab {

AttentionAnalysis analyze_attention(const Encoder& model, const Task& task,
                                    const AttentionAnalysisOptions& options) {
  PELAB_CHECK(options.examples >= 1, "--examples must be at least 1, got {}", options.examples);
  PELAB_CHECK(options.shown >= 0 && options.shown < options.examples,
              "--shown {} is not one of the {} inputs (0..{})", options.shown, options.examples,
              options.examples - 1);
  PELAB_CHECK(options.length >= task.min_length(), "--length {} is below the task's minimum {}",
              options.length, task.min_length());
  const ModelConfig& m = model.config();
  const int64_t longest = task.sequence_length(static_cast<int>(options.length));
  PELAB_CHECK(model.scheme().max_position() < 0 || longest - 1 <= model.scheme().max_position(),
              "--length {} needs positions up to {}, but the model represents positions up to {}",
              options.length, longest - 1, model.scheme().max_position());
  const std::vector<Example> examples =
      evaluation_examples(task, options.length, options.examples, options.eval_seed);
  // Examples of one size may differ in length (decimal_addition's operands): T is the longest
  // drawn, and each batch of them is as long as its own longest.
  const int64_t count = std::ssize(examples);  // a task may have fewer than asked
  PELAB_CHECK(options.shown < count, "--shown {}: the task has {} inputs of size {}", options.shown,
              count, options.length);
  int64_t T = 0;
  for (const Example& e : examples) T = std::max<int64_t>(T, std::ssize(e.tokens));
  std::optional<DigitRuns> digit_runs;
  if (options.position_ids == "digit_runs") digit_runs = digit_runs_of(task.info(), 0);

  AttentionAnalysis a;
  a.scheme = m.positional.type;
  a.options = options;
  a.layers = m.layers;
  a.heads = m.heads;
  a.tokens = T;
  const std::vector<int32_t>& shown_input = examples[static_cast<size_t>(options.shown)].tokens;
  for (int32_t id : shown_input)
    a.shown_tokens.push_back(task.info().input_symbols[static_cast<size_t>(id)]);
  const int64_t shown_T = std::ssize(shown_input);

  for (int64_t d = -(T - 1); d <= T - 1; ++d) a.distances.push_back(d);
  const size_t maps = static_cast<size_t>(a.layers * a.heads);
  std::vector<std::vector<double>> sums(maps, std::vector<double>(a.distances.size(), 0.0));
  std::vector<int64_t> counts(a.distances.size(), 0);
  a.shown.assign(maps, Matrix(shown_T, shown_T));

  // In batches, so a long evaluation does not hold every input's [L, H, T, T] at once.
  const int64_t chunk = 16;
  for (int64_t first = 0; first < count; first += chunk) {
    const int64_t last = std::min(count, first + chunk);
    const std::vector<Example> part(examples.begin() + first, examples.begin() + last);
    const Batch batch = collate(part, nullptr, nullptr, digit_runs ? &*digit_runs : nullptr);
    const std::vector<Tensor> alphas = model.attention_maps(batch);  // [B, H, Tb, Tb] per layer
    const int64_t B = last - first, Tb = batch.length();
    const auto real = [&](int64_t b, int64_t t) { return batch.key_mask.values[b * Tb + t] != 0; };
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t i = 0; i < Tb; ++i)
        for (int64_t j = 0; j < Tb; ++j)
          if (real(b, i) && real(b, j)) ++counts[static_cast<size_t>(j - i + T - 1)];
    }
    for (int64_t l = 0; l < a.layers; ++l) {
      const std::vector<float> alpha = alphas[static_cast<size_t>(l)].to_vector();
      for (int64_t b = 0; b < B; ++b)
        for (int64_t h = 0; h < a.heads; ++h) {
          const float* w = alpha.data() + ((b * a.heads + h) * Tb) * Tb;
          std::vector<double>& sum = sums[static_cast<size_t>(l * a.heads + h)];
          for (int64_t i = 0; i < Tb; ++i)
            for (int64_t j = 0; j < Tb; ++j)
              if (real(b, i) && real(b, j))
                sum[static_cast<size_t>(j - i + T - 1)] += w[i * Tb + j];
          if (first + b != options.shown) continue;
          Matrix& shown = a.shown[static_cast<size_t>(l * a.heads + h)];
          for (int64_t i = 0; i < shown_T; ++i)
            for (int64_t j = 0; j < shown_T; ++j) shown.at(i, j) = w[i * Tb + j];
        }
    }
  }
  a.by_distance.assign(maps, std::vector<double>(a.distances.size()));
  for (size_t mi = 0; mi < maps; ++mi)
    for (size_t k = 0; k < a.distances.size(); ++k)
      a.by_distance[mi][k] = counts[k] ? sums[mi][k] / static_cast<double>(counts[k])
                                       : std::numeric_limits<double>::quiet_NaN();
  return a;
}

PlotResult write_attention_analysis(const AttentionAnalysis& a, const std::string& out_dir) {
  namespace fs = std::filesystem;
  ensure_directory(out_dir);
  PlotResult out;

  nlohmann::json j;
  j["scheme"] = a.scheme;
  j["length"] = a.options.length;
  j["tokens"] = a.tokens;
  j["examples"] = a.options.examples;
  j["eval_seed"] = a.options.eval_seed;
  j["shown_input"] = a.shown_tokens;
  j["distances"] = a.distances;
  j["by_distance"] = nlohmann::json::array();
  for (int64_t l = 0; l < a.layers; ++l)
    for (int64_t h = 0; h < a.heads; ++h) {
      nlohmann::json curve = nlohmann::json::array();
      for (double v : a.by_distance[static_cast<size_t>(l * a.heads + h)])
        curve.push_back(std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr));
      j["by_distance"].push_back({{"layer", l}, {"head", h}, {"mean_weight", curve}});
    }
  j["shown"] = nlohmann::json::array();
  for (int64_t l = 0; l < a.layers; ++l)
    for (int64_t h = 0; h < a.heads; ++h)
      j["shown"].push_back({{"layer", l},
                            {"head", h},
                            {"alpha", a.shown[static_cast<size_t>(l * a.heads + h)].values}});
  const std::string json_path = (fs::path(out_dir) / "attention.json").string();
  write_file_atomic(json_path, j.dump() + "\n");
  out.written.push_back(json_path);

  std::string tics;
  for (size_t t = 0; t < a.shown_tokens.size(); ++t)
    tics += fmt::format("{}{} {}", t ? ", " : "", gnuplot_quoted(a.shown_tokens[t]), t);
  const int64_t cols = std::min<int64_t>(a.heads, 4);
  const int64_t rows = (a.heads + cols - 1) / cols;
  for (int64_t l = 0; l < a.layers; ++l) {
    std::string body = fmt::format(
        "# pelab analyze attention: layer {} of the {} model, one panel per head; rows are "
        "queries, columns keys\n",
        l, a.scheme);
    for (int64_t h = 0; h < a.heads; ++h) {
      const Matrix& w = a.shown[static_cast<size_t>(l * a.heads + h)];
      body += fmt::format("$h{} << EOD\n", h);
      for (int64_t r = 0; r < w.rows; ++r) {
        for (int64_t c = 0; c < w.cols; ++c) {
          if (c) body += ' ';
          body += gnuplot_number(w.at(r, c));
        }
        body += '\n';
      }
      body += "EOD\n";
    }
    body += "set palette defined (0 'white', 1 '#08306b')\nset cbrange [0:1]\n";
    body += "set autoscale xfix\nset autoscale yfix\nset yrange [] reverse\n";
    if (a.tokens <= 40)
      body +=
          "set xtics (" + tics + ") rotate by 90 font ',8'\nset ytics (" + tics + ") font ',8'\n";
    std::string plot =
        fmt::format("set multiplot layout {},{} title {}\n", rows, cols,
                    gnuplot_quoted(fmt::format("Attention weights, layer {} ({}, n = {})", l,
                                               a.scheme, a.options.length)));
    for (int64_t h = 0; h < a.heads; ++h)
      plot += fmt::format("set title 'head {}'\nplot $h{} matrix with image notitle\n", h, h);
    plot += "unset multiplot";
    append(out, draw_figure(body, plot, out_dir, fmt::format("attention_layer{}", l),
                            fmt::format("{},{}", 320 * cols, 300 * rows + 40)));
  }

  std::string body = fmt::format(
      "# pelab analyze attention: mean weight by relative distance j − i ({} model, n = {}, {} "
      "inputs)\n",
      a.scheme, a.options.length, a.options.examples);
  for (int64_t m = 0; m < a.layers * a.heads; ++m) {
    body += fmt::format("$m{} << EOD\n", m);
    for (size_t k = 0; k < a.distances.size(); ++k)
      body += fmt::format("{} {}\n", a.distances[k],
                          gnuplot_number(a.by_distance[static_cast<size_t>(m)][k]));
    body += "EOD\n";
  }
  body += "set xlabel 'relative distance j − i (key − query)'\nset ylabel 'mean weight'\n";
  body += "set grid\nset border 3\nset tics nomirror\nset key outside right top\n";
  const int64_t lcols = std::min<int64_t>(a.layers, 3);
  const int64_t lrows = (a.layers + lcols - 1) / lcols;
  std::string plot =
      fmt::format("set multiplot layout {},{} title {}\n", lrows, lcols,
                  gnuplot_quoted(fmt::format("Mean attention weight by distance ({}, n = {})",
                                             a.scheme, a.options.length)));
  for (int64_t l = 0; l < a.layers; ++l) {
    plot += fmt::format("set title 'layer {}'\nplot ", l);
    for (int64_t h = 0; h < a.heads; ++h)
      plot += fmt::format("{}$m{} using 1:2 with linespoints pt 7 ps 0.5 title 'head {}'",
                          h ? ", " : "", l * a.heads + h, h);
    plot += "\n";
  }
  plot += "unset multiplot";
  append(out, draw_figure(body, plot, out_dir, "attention_by_distance",
                          fmt::format("{},{}", 560 * lcols, 400 * lrows + 40)));
  return out;
}

}  // namespace pelab
