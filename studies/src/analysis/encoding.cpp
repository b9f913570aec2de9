#include "pelab/analysis/encoding.h"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>

#include "pelab/autograd/autograd.h"
#include "pelab/core/error.h"
#include "pelab/io/atomic_file.h"
#include "pelab/ops/ops.h"
#include "pelab/positional/scheme.h"
#include "pelab/report/plot.h"

namespace pelab {

namespace {

// The scheme's input hook on zero token embeddings: [length, d_model].
Tensor embed_zeros(const Encoder& model, int64_t length) {
  const ModelConfig& m = model.config();
  const int64_t width = model.scheme().token_width(m.d_model);
  Batch batch;
  batch.tokens = IntTensor({1, length}, 0);
  batch.key_mask = IntTensor({1, length}, 1);
  batch.targets = IntTensor({1, length}, -1);
  std::vector<int32_t> positions(static_cast<size_t>(length));
  for (int64_t t = 0; t < length; ++t) positions[static_cast<size_t>(t)] = static_cast<int32_t>(t);
  batch.positions = IntTensor({1, length}, positions);
  NoGradGuard no_grad;
  const Tensor x = model.scheme().embed(Tensor::zeros({1, length, width}), batch);
  return reshape(x, {length, m.d_model});
}

double row_norm(const Matrix& P, int64_t r) {
  double s = 0;
  for (int64_t c = 0; c < P.cols; ++c) s += P.at(r, c) * P.at(r, c);
  return std::sqrt(s);
}

// Solves A x = b for symmetric positive semi-definite A (n×n, row-major) by Cholesky with a
// tiny ridge, for every right-hand side column of B (n×m); returns X (n×m).
std::vector<double> solve_spd(std::vector<double> A, std::vector<double> B, int64_t n, int64_t m) {
  double trace = 0;
  for (int64_t i = 0; i < n; ++i) trace += A[i * n + i];
  // The ridge keeps rank-deficient Gram matrices (constant or unused columns) solvable; it is
  // far below the residuals reported.
  const double ridge = 1e-12 * std::max(trace / static_cast<double>(n), 1e-300);
  for (int64_t i = 0; i < n; ++i) A[i * n + i] += ridge;
  for (int64_t j = 0; j < n; ++j) {
    double d = A[j * n + j];
    for (int64_t k = 0; k < j; ++k) d -= A[j * n + k] * A[j * n + k];
    d = std::sqrt(std::max(d, ridge));
    A[j * n + j] = d;
    for (int64_t i = j + 1; i < n; ++i) {
      double s = A[i * n + j];
      for (int64_t k = 0; k < j; ++k) s -= A[i * n + k] * A[j * n + k];
      A[i * n + j] = s / d;
    }
  }
  for (int64_t col = 0; col < m; ++col) {
    for (int64_t i = 0; i < n; ++i) {  // L y = b
      double s = B[i * m + col];
      for (int64_t k = 0; k < i; ++k) s -= A[i * n + k] * B[k * m + col];
      B[i * m + col] = s / A[i * n + i];
    }
    for (int64_t i = n - 1; i >= 0; --i) {  // Lᵀ x = y
      double s = B[i * m + col];
      for (int64_t k = i + 1; k < n; ++k) s -= A[k * n + i] * B[k * m + col];
      B[i * m + col] = s / A[i * n + i];
    }
  }
  return B;
}

}  // namespace

bool has_absolute_encoding(const Encoder& model) {
  const Tensor e = embed_zeros(model, 2);
  const std::vector<float> v = e.to_vector();
  return std::any_of(v.begin(), v.end(), [](float x) { return x != 0.0f; });
}

Matrix absolute_encoding(const Encoder& model, int64_t length) {
  PELAB_CHECK(length >= 1, "the encoding needs at least one position, got {}", length);
  const ModelConfig& m = model.config();
  const int64_t max_position = model.scheme().max_position();
  PELAB_CHECK(max_position < 0 || length - 1 <= max_position,
              "positional.type {} represents positions up to {}; position {} was asked for",
              m.positional.type, max_position, length - 1);
  PELAB_CHECK(has_absolute_encoding(model),
              "positional.type {} adds nothing to the input (its position enters attention); an "
              "encoding matrix exists only for sinusoidal, learned, index, normalized and binary",
              m.positional.type);
  const Tensor e = embed_zeros(model, length);  // [length, d_model]
  const int64_t d = m.d_model;
  const int64_t token_width = model.scheme().token_width(d);
  const int64_t first = token_width < d ? token_width : 0;  // concat: P is the last columns
  Matrix P(length, d - first);
  const float* data = e.data();
  for (int64_t r = 0; r < length; ++r)
    for (int64_t c = first; c < d; ++c) P.at(r, c - first) = data[r * d + c];
  return P;
}

EncodingSummary summarize_encoding(const Matrix& P, const Encoder& model) {
  EncodingSummary s;
  s.positions = P.rows;
  s.min_distance = std::numeric_limits<double>::infinity();
  for (int64_t i = 0; i < P.rows; ++i)
    for (int64_t j = i + 1; j < P.rows; ++j) {
      double d2 = 0;
      for (int64_t c = 0; c < P.cols; ++c) {
        const double diff = P.at(i, c) - P.at(j, c);
        d2 += diff * diff;
      }
      if (std::sqrt(d2) < s.min_distance) {
        s.min_distance = std::sqrt(d2);
        s.closest_i = i;
        s.closest_j = j;
      }
    }
  if (P.rows < 2) s.min_distance = 0;
  s.min_norm = std::numeric_limits<double>::infinity();
  for (int64_t r = 0; r < P.rows; ++r) {
    const double n = row_norm(P, r);
    s.min_norm = std::min(s.min_norm, n);
    s.max_norm = std::max(s.max_norm, n);
    s.mean_norm += n / static_cast<double>(P.rows);
  }
  const Tensor embed = model.params().get("embed.weight");  // [V_in, token width]
  const std::vector<float> E = embed.to_vector();
  const int64_t vocab = embed.shape()[0], width = embed.shape()[1];
  const double scale = model.config().embedding_scale();
  for (int64_t v = 0; v < vocab; ++v) {
    double n2 = 0;
    for (int64_t c = 0; c < width; ++c)
      n2 += static_cast<double>(E[v * width + c]) * E[v * width + c];
    s.token_norm += scale * std::sqrt(n2) / static_cast<double>(vocab);
  }
  return s;
}

std::vector<double> dot_with_reference(const Matrix& P, int64_t reference) {
  PELAB_CHECK(reference >= 0 && reference < P.rows,
              "the reference position {} is outside the encoded positions 0..{}", reference,
              P.rows - 1);
  std::vector<double> dots(static_cast<size_t>(P.rows));
  for (int64_t j = 0; j < P.rows; ++j) {
    double s = 0;
    for (int64_t c = 0; c < P.cols; ++c) s += P.at(reference, c) * P.at(j, c);
    dots[static_cast<size_t>(j)] = s;
  }
  return dots;
}

Falloff falloff(const std::vector<double>& curve, int64_t reference) {
  const int64_t n = static_cast<int64_t>(curve.size());
  PELAB_CHECK(reference >= 0 && reference < n, "the reference {} is outside the curve 0..{}",
              reference, n - 1);
  Falloff f;
  f.argmax = std::max_element(curve.begin(), curve.end()) - curve.begin();
  // Outwards from the reference, one side at a time; a tie counts as a rise (not strict).
  for (int64_t dir : {-1, 1}) {
    for (int64_t j = reference + dir; j >= 0 && j < n; j += dir) {
      const double step = curve[static_cast<size_t>(j)] - curve[static_cast<size_t>(j - dir)];
      ++f.steps;
      if (step >= 0) {
        ++f.rises;
        f.largest_rise = std::max(f.largest_rise, step);
        const int64_t distance = std::abs(j - reference);
        if (f.first_rise < 0 || distance < f.first_rise) f.first_rise = distance;
      }
    }
  }
  return f;
}

double sinusoidal_shift_error(const Matrix& P, const std::vector<int64_t>& shifts, double base) {
  PELAB_CHECK(P.cols % 2 == 0, "a sinusoidal table has an even width, got {}", P.cols);
  double worst = 0;
  for (int64_t delta : shifts) {
    PELAB_CHECK(delta >= 0 && delta < P.rows, "shift {} is outside 0..{}", delta, P.rows - 1);
    for (int64_t x = 0; x + delta < P.rows; ++x) {
      for (int64_t i = 0; i < P.cols / 2; ++i) {
        // Row-vector convention: (sin, cos)(x+Δ) = (sin, cos)(x) · [[cos, −sin], [sin, cos]].
        const double w =
            std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(P.cols));
        const double c = std::cos(static_cast<double>(delta) * w);
        const double s = std::sin(static_cast<double>(delta) * w);
        const double sx = P.at(x, 2 * i), cx = P.at(x, 2 * i + 1);
        const double sin_shifted = sx * c + cx * s;
        const double cos_shifted = -sx * s + cx * c;
        worst = std::max(worst, std::abs(sin_shifted - P.at(x + delta, 2 * i)));
        worst = std::max(worst, std::abs(cos_shifted - P.at(x + delta, 2 * i + 1)));
      }
    }
  }
  return worst;
}

double fitted_shift_residual(const Matrix& P, int64_t shift) {
  PELAB_CHECK(shift >= 0 && shift < P.rows, "shift {} is outside 0..{}", shift, P.rows - 1);
  const int64_t n = P.rows - shift, d = P.cols;
  // With fewer rows than columns some T fits exactly whatever the encoding: no evidence.
  PELAB_CHECK(n > d,
              "fitting a {0}×{0} shift map needs more than {0} positions after the shift; there "
              "are {1} (encode more positions)",
              d, n);
  // Normal equations: (XᵀX) T = XᵀY with X = P[0:n), Y = P[Δ:Δ+n).
  std::vector<double> gram(static_cast<size_t>(d * d), 0.0), rhs(static_cast<size_t>(d * d), 0.0);
  for (int64_t x = 0; x < n; ++x)
    for (int64_t a = 0; a < d; ++a) {
      const double xa = P.at(x, a);
      if (xa == 0) continue;
      for (int64_t b = 0; b < d; ++b) {
        gram[a * d + b] += xa * P.at(x, b);
        rhs[a * d + b] += xa * P.at(x + shift, b);
      }
    }
  const std::vector<double> T = solve_spd(gram, rhs, d, d);
  double residual = 0, total = 0;
  for (int64_t x = 0; x < n; ++x)
    for (int64_t b = 0; b < d; ++b) {
      double predicted = 0;
      for (int64_t a = 0; a < d; ++a) predicted += P.at(x, a) * T[a * d + b];
      const double y = P.at(x + shift, b);
      residual += (y - predicted) * (y - predicted);
      total += y * y;
    }
  return total > 0 ? std::sqrt(residual / total) : 0.0;
}

double share_of_moving_columns(const Matrix& P, int64_t length, double threshold) {
  PELAB_CHECK(length >= 1 && length <= P.rows, "length {} is outside 1..{}", length, P.rows);
  int64_t moving = 0;
  for (int64_t c = 0; c < P.cols; ++c) {
    double lo = P.at(0, c), hi = P.at(0, c);
    for (int64_t r = 1; r < length; ++r) {
      lo = std::min(lo, P.at(r, c));
      hi = std::max(hi, P.at(r, c));
    }
    if (hi - lo > threshold) ++moving;
  }
  return P.cols ? static_cast<double>(moving) / static_cast<double>(P.cols) : 0.0;
}

EncodingAnalysis analyze_encoding(const Encoder& model, const EncodingAnalysisOptions& options) {
  EncodingAnalysis a;
  a.scheme = model.config().positional.type;
  a.options = options;
  PELAB_CHECK(options.positions >= 2, "--positions: at least 2 positions, got {}",
              options.positions);
  if (a.options.reference < 0) a.options.reference = options.positions / 2;
  PELAB_CHECK(a.options.reference < options.positions,
              "--reference {} is outside the encoded positions 0..{}", a.options.reference,
              options.positions - 1);
  PELAB_CHECK(options.moving_threshold > 0, "--threshold must be > 0, got {}",
              options.moving_threshold);

  a.encoding = absolute_encoding(model, options.positions);
  const Matrix& P = a.encoding;
  a.width = P.cols;
  a.summary = summarize_encoding(P, model);
  a.dots = dot_with_reference(P, a.options.reference);
  a.falloff = falloff(a.dots, a.options.reference);
  const KeyValues keys = resolve_defaults(model.config().positional);
  std::vector<int64_t> shifts;
  for (int64_t delta : options.shifts)
    if (delta >= 0 && delta < P.rows) shifts.push_back(delta);
  if (a.scheme == "sinusoidal" && P.cols % 2 == 0) {
    // The analytic map is for the table itself: undo the scale (a linear map commutes with it).
    Matrix unscaled = P;
    for (double& v : unscaled.values) v /= keys.number("scale");
    a.sinusoidal_shift_error = sinusoidal_shift_error(unscaled, shifts, keys.number("base"));
  }
  for (int64_t delta : shifts)
    if (P.rows - delta > P.cols)
      a.fitted_shift_residuals.emplace_back(delta, fitted_shift_residual(P, delta));

  const int64_t max_position = model.scheme().max_position();
  for (int64_t length : options.moving_lengths) {
    if (max_position >= 0 && length - 1 > max_position) {
      a.skipped.push_back(
          fmt::format("length {}: the scheme represents positions up to {}", length, max_position));
      continue;
    }
    // Schemes whose table depends on the sequence length (normalized) are read at that length.
    const Matrix at_length = absolute_encoding(model, length);
    double scale = 0;
    for (double v : at_length.values) scale = std::max(scale, std::abs(v));
    a.moving.emplace_back(
        length, share_of_moving_columns(at_length, length, options.moving_threshold * scale));
  }
  return a;
}

PlotResult write_encoding_analysis(const EncodingAnalysis& a, const std::string& out_dir) {
  namespace fs = std::filesystem;
  ensure_directory(out_dir);
  PlotResult out;
  const Matrix& P = a.encoding;

  nlohmann::json j;
  j["scheme"] = a.scheme;
  j["width"] = a.width;
  j["positions"] = a.options.positions;
  j["reference"] = a.options.reference;
  j["summary"] = {{"min_distance", a.summary.min_distance},
                  {"closest_pair", {a.summary.closest_i, a.summary.closest_j}},
                  {"min_norm", a.summary.min_norm},
                  {"mean_norm", a.summary.mean_norm},
                  {"max_norm", a.summary.max_norm},
                  {"token_norm", a.summary.token_norm}};
  j["dot_with_reference"] = a.dots;
  j["falloff"] = {{"argmax", a.falloff.argmax},
                  {"steps", a.falloff.steps},
                  {"rises", a.falloff.rises},
                  {"largest_rise", a.falloff.largest_rise},
                  {"first_rise_distance", a.falloff.first_rise}};
  if (a.sinusoidal_shift_error >= 0) j["sinusoidal_shift_error"] = a.sinusoidal_shift_error;
  j["fitted_shift_residuals"] = nlohmann::json::array();
  for (const auto& [delta, r] : a.fitted_shift_residuals)
    j["fitted_shift_residuals"].push_back({{"shift", delta}, {"residual", r}});
  j["moving_threshold"] = a.options.moving_threshold;
  j["moving_columns"] = nlohmann::json::array();
  for (const auto& [length, share] : a.moving)
    j["moving_columns"].push_back({{"length", length}, {"share", share}});
  j["skipped"] = a.skipped;
  const std::string json_path = (fs::path(out_dir) / "encoding.json").string();
  write_file_atomic(json_path, j.dump(2) + "\n");
  out.written.push_back(json_path);

  std::string csv = "position";
  for (int64_t c = 0; c < P.cols; ++c) csv += fmt::format(",d{}", c);
  csv += "\n";
  for (int64_t r = 0; r < P.rows; ++r) {
    csv += std::to_string(r);
    for (int64_t c = 0; c < P.cols; ++c) {
      csv += ',';
      csv += gnuplot_number(P.at(r, c));
    }
    csv += "\n";
  }
  const std::string csv_path = (fs::path(out_dir) / "encoding.csv").string();
  write_file_atomic(csv_path, csv);
  out.written.push_back(csv_path);

  // The heat map: positions down, dimensions across.
  std::string body = fmt::format(
      "# pelab analyze encoding: the {} encoding, positions × dimensions\n$P << EOD\n", a.scheme);
  for (int64_t r = 0; r < P.rows; ++r) {
    for (int64_t c = 0; c < P.cols; ++c) {
      if (c) body += ' ';
      body += gnuplot_number(P.at(r, c));
    }
    body += "\n";
  }
  body += "EOD\n";
  body += fmt::format("set title 'The {} encoding P (position × dimension)'\n", a.scheme);
  body += "set xlabel 'dimension'\nset ylabel 'position'\nset yrange [] reverse\n";
  body +=
      "set autoscale xfix\nset autoscale yfix\nset palette defined (-1 '#2166ac', 0 'white', 1 "
      "'#b2182b')\n";
  double largest = 0;
  for (double v : P.values) largest = std::max(largest, std::abs(v));
  body += fmt::format("set cbrange [{}:{}]\n", gnuplot_number(-largest),
                      gnuplot_number(largest > 0 ? largest : 1));
  append(out, draw_figure(body, "plot $P matrix with image notitle", out_dir, "encoding_heatmap",
                          "900,700"));

  std::string dots =
      fmt::format("# pelab analyze encoding: P({0})·P(j) for the {1} encoding\n$D << EOD\n",
                  a.options.reference, a.scheme);
  for (size_t jj = 0; jj < a.dots.size(); ++jj)
    dots += fmt::format("{} {}\n", jj, gnuplot_number(a.dots[jj]));
  dots += "EOD\n";
  dots += fmt::format("set title 'P({0}) · P(j), {1} encoding'\n", a.options.reference, a.scheme);
  dots +=
      "set xlabel 'position j'\nset ylabel 'dot product'\nset grid\nset border 3\nset tics "
      "nomirror\n";
  dots += fmt::format(
      "set arrow 1 from {0}, graph 0 to {0}, graph 1 nohead dashtype 2 lc rgb 'gray40'\n",
      a.options.reference);
  append(out, draw_figure(dots, "plot $D using 1:2 with lines lw 2 notitle", out_dir,
                          "dot_by_distance"));
  return out;
}

}  // namespace pelab
