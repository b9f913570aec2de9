// Analyses of absolute positional encodings, as a model sees them (pelab analyze encoding;
// the claims C3, C8, C9 and C10). The encoding is read through the scheme's input hook, so it
// is exactly what the model adds (scale included) for any absolute scheme, initialised or
// trained, and no analysis asks which scheme it holds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pelab/nn/encoder.h"
#include "pelab/report/plot.h"

namespace pelab {

// A dense row-major matrix of doubles (analyses are small and want precision, not speed).
struct Matrix {
  int64_t rows = 0, cols = 0;
  std::vector<double> values;
  Matrix() = default;
  Matrix(int64_t r, int64_t c) : rows(r), cols(c), values(static_cast<size_t>(r * c), 0.0) {}
  double& at(int64_t r, int64_t c) { return values[static_cast<size_t>(r * cols + c)]; }
  double at(int64_t r, int64_t c) const { return values[static_cast<size_t>(r * cols + c)]; }
};

// The positional part of the model's input for one sequence of `length` tokens at positions
// 0..length−1: P[length, d_pe], read as embed(zero token embeddings) and keeping only the
// columns the encoding occupies (all d_model when added, the last positional.dim when
// concatenated). Throws when the scheme adds nothing to the input (its position enters
// attention: relative, rotary, alibi, t5, none), or when length exceeds what it represents.
Matrix absolute_encoding(const Encoder& model, int64_t length);

// True when absolute_encoding can read the model's scheme.
bool has_absolute_encoding(const Encoder& model);

// C3: uniqueness and size.
struct EncodingSummary {
  int64_t positions = 0;
  double min_distance = 0;  // smallest ‖P(i) − P(j)‖ over i < j
  int64_t closest_i = 0, closest_j = 0;
  double min_norm = 0, mean_norm = 0, max_norm = 0;  // ‖P(p)‖
  double token_norm = 0;  // mean ‖s_emb·E[v]‖ over the vocabulary (the content it is added to)
};
EncodingSummary summarize_encoding(const Matrix& P, const Encoder& model);

// C9: P(reference) · P(j) for every row j.
std::vector<double> dot_with_reference(const Matrix& P, int64_t reference);

// How strictly a curve falls off on both sides of `reference`: the index of its maximum, and
// the steps away from the reference where it rises instead of falling.
struct Falloff {
  int64_t argmax = 0;
  int64_t steps = 0;        // steps compared (moving outwards, both sides)
  int64_t rises = 0;        // of them, steps where the value does not decrease
  double largest_rise = 0;  // the largest such increase
  int64_t first_rise = -1;  // the distance |j − reference| of the first rise (−1: none)
};
Falloff falloff(const std::vector<double>& curve, int64_t reference);

// C8: the largest |P(x+Δ) − P(x)·T(Δ)| over x and the given shifts, with T(Δ) MODEL.md's
// block-diagonal rotation for the sinusoidal table of width P.cols and `base` (exact in real
// arithmetic, so what remains is float32 rounding of the table).
double sinusoidal_shift_error(const Matrix& P, const std::vector<int64_t>& shifts, double base);

// The same question for any encoding: the best linear map T(Δ) by least squares over
// x = 0..rows−1−Δ, and the residual ‖P(x+Δ) − P(x)T‖ relative to ‖P(x+Δ)‖ (Frobenius).
// 0 means some linear map shifts every position by Δ.
double fitted_shift_residual(const Matrix& P, int64_t shift);

// C10: the share of columns whose values move by more than `threshold` (max − min) over the
// first `length` rows.
double share_of_moving_columns(const Matrix& P, int64_t length, double threshold);

// Everything `pelab analyze encoding` measures, with the settings it used.
struct EncodingAnalysisOptions {
  int64_t positions = 256;  // rows encoded for the summary, dot products and shift maps
  int64_t reference = -1;   // C9's reference position (−1: positions / 2)
  std::vector<int64_t> shifts = {1, 2, 4, 8, 16, 32, 64};
  std::vector<int64_t> moving_lengths = {64, 256, 1024};  // C10
  double moving_threshold = 0.1;                          // × the table's largest |value|
};

struct EncodingAnalysis {
  std::string scheme;
  int64_t width = 0;  // columns of P
  EncodingAnalysisOptions options;
  EncodingSummary summary;
  std::vector<double> dots;  // P(reference) · P(j), j < positions
  Falloff falloff;
  double sinusoidal_shift_error = -1;                              // sinusoidal only (else −1)
  std::vector<std::pair<int64_t, double>> fitted_shift_residuals;  // (Δ, residual)
  // (length, share of moving columns); lengths the scheme cannot represent are left out and
  // listed in `skipped` with why.
  std::vector<std::pair<int64_t, double>> moving;
  std::vector<std::string> skipped;
  Matrix encoding;  // P at `positions` rows (for the heat map)
};

EncodingAnalysis analyze_encoding(const Encoder& model, const EncodingAnalysisOptions& options);

// Writes encoding.json, encoding.csv and the figures (encoding_heatmap, dot_by_distance) into
// out_dir; returns the files written and one line about any plotting trouble in `message`.
PlotResult write_encoding_analysis(const EncodingAnalysis& analysis, const std::string& out_dir);

}  // namespace pelab
