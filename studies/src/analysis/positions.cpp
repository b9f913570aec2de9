#include "pelab/analysis/positions.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>

#include "pelab/analysis/encoding.h"
#include "pelab/core/error.h"
#include "pelab/io/atomic_file.h"
#include "pelab/run/evaluate.h"
#include "pelab/run/trainer.h"

namespace pelab {

namespace {

// Orthonormal basis (as rows) of the span of `rows`, by modified Gram–Schmidt; directions
// whose remaining norm is below `tol` × the largest row norm are dropped (rank detection).
std::vector<std::vector<double>> orthonormal_rows(const Matrix& m, double tol = 1e-9) {
  double largest = 0;
  for (int64_t r = 0; r < m.rows; ++r) {
    double n2 = 0;
    for (int64_t c = 0; c < m.cols; ++c) n2 += m.at(r, c) * m.at(r, c);
    largest = std::max(largest, std::sqrt(n2));
  }
  std::vector<std::vector<double>> basis;
  for (int64_t r = 0; r < m.rows; ++r) {
    std::vector<double> v(m.values.begin() + r * m.cols, m.values.begin() + (r + 1) * m.cols);
    for (int pass = 0; pass < 2; ++pass)  // twice is enough for orthogonality in floating point
      for (const std::vector<double>& b : basis) {
        const double dot = std::inner_product(v.begin(), v.end(), b.begin(), 0.0);
        for (size_t c = 0; c < v.size(); ++c) v[c] -= dot * b[c];
      }
    const double n = std::sqrt(std::inner_product(v.begin(), v.end(), v.begin(), 0.0));
    if (n <= tol * largest || n == 0) continue;
    for (double& x : v) x /= n;
    basis.push_back(std::move(v));
  }
  return basis;
}

// Eigenvectors of a symmetric matrix A (n×n) by cyclic Jacobi rotations, sorted by eigenvalue
// (largest first): (eigenvalues, eigenvectors as rows).
std::pair<std::vector<double>, std::vector<std::vector<double>>> symmetric_eigen(
    std::vector<double> A, int64_t n) {
  std::vector<double> V(static_cast<size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i) V[i * n + i] = 1.0;
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0, total = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        total += A[i * n + j] * A[i * n + j];
        if (i != j) off += A[i * n + j] * A[i * n + j];
      }
    if (off <= 1e-24 * total || total == 0) break;
    for (int64_t p = 0; p < n; ++p)
      for (int64_t q = p + 1; q < n; ++q) {
        const double apq = A[p * n + q];
        if (std::abs(apq) < 1e-300) continue;
        const double theta = (A[q * n + q] - A[p * n + p]) / (2 * apq);
        const double t =
            (theta >= 0 ? 1.0 : -1.0) / (std::abs(theta) + std::sqrt(theta * theta + 1));
        const double c = 1 / std::sqrt(t * t + 1), s = t * c;
        for (int64_t k = 0; k < n; ++k) {  // A ← Jᵀ A J: columns p, q, then rows p, q
          const double akp = A[k * n + p], akq = A[k * n + q];
          A[k * n + p] = c * akp - s * akq;
          A[k * n + q] = s * akp + c * akq;
        }
        for (int64_t k = 0; k < n; ++k) {
          const double apk = A[p * n + k], aqk = A[q * n + k];
          A[p * n + k] = c * apk - s * aqk;
          A[q * n + k] = s * apk + c * aqk;
        }
        for (int64_t k = 0; k < n; ++k) {
          const double vkp = V[k * n + p], vkq = V[k * n + q];
          V[k * n + p] = c * vkp - s * vkq;
          V[k * n + q] = s * vkp + c * vkq;
        }
      }
  }
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](int64_t a, int64_t b) { return A[a * n + a] > A[b * n + b]; });
  std::vector<double> values;
  std::vector<std::vector<double>> vectors;
  for (int64_t i : order) {
    values.push_back(A[i * n + i]);
    std::vector<double> v(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) v[static_cast<size_t>(k)] = V[k * n + i];
    vectors.push_back(std::move(v));
  }
  return {values, vectors};
}

// Share of the rows' total squared norm that lies in the span of `basis` (orthonormal rows).
double energy_in_span(const Matrix& m, const std::vector<std::vector<double>>& basis) {
  double inside = 0, total = 0;
  for (int64_t r = 0; r < m.rows; ++r) {
    for (int64_t c = 0; c < m.cols; ++c) total += m.at(r, c) * m.at(r, c);
    for (const std::vector<double>& b : basis) {
      double dot = 0;
      for (int64_t c = 0; c < m.cols; ++c) dot += m.at(r, c) * b[static_cast<size_t>(c)];
      inside += dot * dot;
    }
  }
  return total > 0 ? inside / total : 0.0;
}

}  // namespace

std::vector<PositionCount> training_position_counts(const ExperimentConfig& config,
                                                    const Task& task, int64_t steps) {
  TrainingStream stream(config, task);
  std::map<int64_t, PositionCount> counts;
  for (int64_t step = 0; step < steps; ++step) {
    const Batch batch = stream.next();
    for (size_t k = 0; k < batch.tokens.values.size(); ++k) {
      if (!batch.key_mask.values[k]) continue;
      PositionCount& c = counts[batch.positions.values[k]];
      c.position = batch.positions.values[k];
      ++c.present;
      if (batch.targets.values[k] != kIgnore) ++c.scored;
    }
  }
  std::vector<PositionCount> out;
  for (const auto& [p, c] : counts) out.push_back(c);
  return out;
}

std::optional<SubspaceOverlap> subspace_overlap(const Encoder& model, int64_t positions,
                                                double energy, bool centred) {
  const ModelConfig& m = model.config();
  if (!has_absolute_encoding(model) || model.scheme().token_width(m.d_model) != m.d_model)
    return std::nullopt;
  PELAB_CHECK(energy > 0 && energy <= 1, "the energy share must be in (0, 1], got {}", energy);
  Matrix P = absolute_encoding(model, positions);  // [positions, d]
  if (centred)
    for (int64_t c = 0; c < P.cols; ++c) {
      double mean = 0;
      for (int64_t r = 0; r < P.rows; ++r) mean += P.at(r, c);
      mean /= static_cast<double>(P.rows);
      for (int64_t r = 0; r < P.rows; ++r) P.at(r, c) -= mean;
    }
  const Tensor embed = model.params().get("embed.weight");  // [V_in, d]
  const std::vector<float> e = embed.to_vector();
  Matrix E(embed.shape()[0], embed.shape()[1]);
  const double scale = m.embedding_scale();
  for (size_t i = 0; i < e.size(); ++i) E.values[i] = scale * e[i];

  SubspaceOverlap o;
  o.width = m.d_model;
  o.energy = energy;
  const std::vector<std::vector<double>> token_basis = orthonormal_rows(E);
  o.token_rank = static_cast<int64_t>(token_basis.size());
  o.position_in_tokens = energy_in_span(P, token_basis);
  o.position_in_tokens_chance = static_cast<double>(o.token_rank) / static_cast<double>(o.width);

  // P's principal directions: eigenvectors of PᵀP, as many as hold `energy` of ‖P‖².
  std::vector<double> gram(static_cast<size_t>(o.width * o.width), 0.0);
  for (int64_t r = 0; r < P.rows; ++r)
    for (int64_t a = 0; a < o.width; ++a)
      for (int64_t b = 0; b < o.width; ++b) gram[a * o.width + b] += P.at(r, a) * P.at(r, b);
  const auto [values, vectors] = symmetric_eigen(gram, o.width);
  const double total = std::accumulate(values.begin(), values.end(), 0.0);
  std::vector<std::vector<double>> position_basis;
  double held = 0;
  for (size_t i = 0; i < values.size() && held < energy * total; ++i) {
    held += values[i];
    position_basis.push_back(vectors[i]);
  }
  o.position_rank = static_cast<int64_t>(position_basis.size());
  o.position_basis = position_basis;
  o.tokens_in_position = energy_in_span(E, position_basis);
  o.tokens_in_position_chance = static_cast<double>(o.position_rank) / static_cast<double>(o.width);
  return o;
}

PositionsAnalysis analyze_positions(const Encoder& model, const Task& task,
                                    const ExperimentConfig& config,
                                    const std::vector<int64_t>& lengths, int64_t steps) {
  PositionsAnalysis a;
  a.scheme = model.config().positional.type;
  a.train_min_length = config.task.min_length;
  a.train_max_length = config.task.max_length;
  a.counts = training_position_counts(config, task, steps);
  std::map<int64_t, int64_t> trained;
  for (const PositionCount& c : a.counts) trained[c.position] = c.scored;
  const Evaluation e = evaluate(model, task, config, lengths);
  for (const PositionResult& p : e.by_position) {
    if (p.scored == 0) continue;
    PositionRow row;
    row.length = p.length;
    row.position = p.position;
    row.scored = p.scored;
    row.accuracy = static_cast<double>(p.correct) / static_cast<double>(p.scored);
    row.loss = p.loss_sum / static_cast<double>(p.scored);
    const auto it = trained.find(p.position);
    row.trained_scored = it == trained.end() ? 0 : it->second;
    a.rows.push_back(row);
  }
  int64_t longest = 0;
  for (const PositionRow& r : a.rows) longest = std::max(longest, r.position + 1);
  const int64_t max_position = model.scheme().max_position();
  const int64_t encoded = max_position >= 0 ? std::min(longest, max_position + 1) : longest;
  if (encoded >= 2) a.overlap = subspace_overlap(model, encoded);
  return a;
}

PlotResult write_positions_analysis(const PositionsAnalysis& a, const std::string& out_dir) {
  namespace fs = std::filesystem;
  ensure_directory(out_dir);
  PlotResult out;
  nlohmann::json j;
  j["scheme"] = a.scheme;
  j["train_lengths"] = {a.train_min_length, a.train_max_length};
  j["training_counts"] = nlohmann::json::array();
  for (const PositionCount& c : a.counts)
    j["training_counts"].push_back(
        {{"position", c.position}, {"present", c.present}, {"scored", c.scored}});
  j["by_position"] = nlohmann::json::array();
  std::string csv = "length,position,scored,accuracy,loss,trained_scored\n";
  for (const PositionRow& r : a.rows) {
    j["by_position"].push_back({{"length", r.length},
                                {"position", r.position},
                                {"scored", r.scored},
                                {"accuracy", r.accuracy},
                                {"loss", r.loss},
                                {"trained_scored", r.trained_scored}});
    csv += fmt::format("{},{},{},{},{},{}\n", r.length, r.position, r.scored,
                       gnuplot_number(r.accuracy), gnuplot_number(r.loss), r.trained_scored);
  }
  if (a.overlap) {
    const SubspaceOverlap& o = *a.overlap;
    j["subspace_overlap"] = {{"width", o.width},
                             {"token_rank", o.token_rank},
                             {"position_rank", o.position_rank},
                             {"energy", o.energy},
                             {"position_in_tokens", o.position_in_tokens},
                             {"position_in_tokens_chance", o.position_in_tokens_chance},
                             {"tokens_in_position", o.tokens_in_position},
                             {"tokens_in_position_chance", o.tokens_in_position_chance}};
  }
  const std::string json_path = (fs::path(out_dir) / "positions.json").string();
  write_file_atomic(json_path, j.dump(2) + "\n");
  const std::string csv_path = (fs::path(out_dir) / "positions.csv").string();
  write_file_atomic(csv_path, csv);
  out.written = {json_path, csv_path};

  // Accuracy by position, one line per evaluated length, over the training counts (bars).
  std::string body = fmt::format(
      "# pelab analyze positions: token accuracy by position per problem size n ({} model), "
      "and how often training scored each position\n$counts << EOD\n",
      a.scheme);
  int64_t most = 1;
  for (const PositionCount& c : a.counts) {
    body += fmt::format("{} {}\n", c.position, c.scored);
    most = std::max(most, c.scored);
  }
  body += "EOD\n";
  std::vector<int64_t> lengths;
  for (const PositionRow& r : a.rows)
    if (lengths.empty() || lengths.back() != r.length) lengths.push_back(r.length);
  for (size_t li = 0; li < lengths.size(); ++li) {
    body += fmt::format("$n{} << EOD\n", li);
    for (const PositionRow& r : a.rows)
      if (r.length == lengths[li])
        body += fmt::format("{} {} {}\n", r.position, gnuplot_number(r.accuracy),
                            gnuplot_number(r.loss));
    body += "EOD\n";
  }
  body += fmt::format("set title 'Accuracy by position ({}; trained on n = {}..{})'\n", a.scheme,
                      a.train_min_length, a.train_max_length);
  body += "set xlabel 'position (token index)'\nset ylabel 'token accuracy'\nset yrange [0:1.05]\n";
  body += fmt::format("set y2label 'times scored in training'\nset y2range [0:{}]\nset y2tics\n",
                      static_cast<double>(most) * 1.05);
  body +=
      "set ytics nomirror\nset grid\nset key outside right top\nset style fill solid 0.25 "
      "noborder\n";
  std::string plot =
      "plot $counts using 1:2 axes x1y2 with boxes lc rgb 'gray70' title 'scored in training'";
  for (size_t li = 0; li < lengths.size(); ++li)
    plot += fmt::format(", $n{} using 1:2 with linespoints lw 2 pt 7 ps 0.6 title 'n = {}'", li,
                        lengths[li]);
  const PlotResult r = draw_figure(body, plot, out_dir, "positions");
  out.written.insert(out.written.end(), r.written.begin(), r.written.end());
  out.message = r.message;
  return out;
}

}  // namespace pelab
