// The encoding analyses: each measurement is checked on a case whose answer is known exactly,
// and paired with one where it must come out differently.
#include "pelab/analysis/encoding.h"

#include <gtest/gtest.h>

#include <cmath>

#include "nn/model_util.h"
#include "pelab/core/error.h"
#include "pelab/positional/functions.h"
#include "pelab/positional/scheme.h"

namespace pelab {
namespace {

using testing::tiny_config;

Matrix from_tensor(const Tensor& t) {
  Matrix m(t.shape()[0], t.shape()[1]);
  const std::vector<float> v = t.to_vector();
  for (size_t i = 0; i < v.size(); ++i) m.values[i] = v[i];
  return m;
}

std::vector<int64_t> range(int64_t n) {
  std::vector<int64_t> r(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) r[static_cast<size_t>(i)] = i;
  return r;
}

TEST(AbsoluteEncoding, IsWhatTheInputHookAddsScaleIncluded) {
  ModelConfig c = tiny_config("sinusoidal", 16);
  c.positional.keys.set("scale", 0.5);
  const Encoder model(c, make_scheme, 1);
  const Matrix P = absolute_encoding(model, 40);
  const Matrix table = from_tensor(sinusoidal_encoding(range(40), 16, 10000.0));
  ASSERT_EQ(P.rows, 40);
  ASSERT_EQ(P.cols, 16);
  for (size_t i = 0; i < P.values.size(); ++i)
    EXPECT_DOUBLE_EQ(P.values[i], static_cast<double>(static_cast<float>(0.5 * table.values[i])));
}

TEST(AbsoluteEncoding, ConcatKeepsOnlyThePositionalColumns) {
  ModelConfig c = tiny_config("sinusoidal", 16);
  c.positional.keys.set("combine", "concat");
  c.positional.keys.set("dim", int64_t{6});
  const Encoder model(c, make_scheme, 1);
  const Matrix P = absolute_encoding(model, 10);
  const Matrix table = from_tensor(sinusoidal_encoding(range(10), 6, 10000.0));
  ASSERT_EQ(P.cols, 6);
  for (size_t i = 0; i < P.values.size(); ++i) EXPECT_FLOAT_EQ(P.values[i], table.values[i]);
}

TEST(AbsoluteEncoding, SchemesThatActInsideAttentionHaveNone) {
  for (const std::string scheme : {"none", "rotary", "relative", "alibi", "t5"}) {
    const Encoder model(tiny_config(scheme, 16), make_scheme, 1);
    EXPECT_FALSE(has_absolute_encoding(model)) << scheme;
    try {
      absolute_encoding(model, 8);
      ADD_FAILURE() << scheme << " gave an encoding";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("adds nothing to the input"), std::string::npos);
    }
  }
  for (const std::string scheme : {"sinusoidal", "learned", "index", "normalized", "binary"})
    EXPECT_TRUE(has_absolute_encoding(Encoder(tiny_config(scheme, 16), make_scheme, 1))) << scheme;
}

TEST(AbsoluteEncoding, LearnedTableEndsAtMaxLen) {
  ModelConfig c = tiny_config("learned", 16);
  c.positional.keys.set("max_len", int64_t{20});
  const Encoder model(c, make_scheme, 1);
  EXPECT_EQ(absolute_encoding(model, 20).rows, 20);
  EXPECT_THROW(absolute_encoding(model, 21), Error);
}

TEST(EncodingSummary, FindsTheClosestPairAndNorms) {
  Matrix P(3, 2);
  P.values = {0, 0, 3, 4, 3, 5};  // rows 1 and 2 are 1 apart
  const Encoder model(tiny_config("sinusoidal", 16), make_scheme, 1);
  const EncodingSummary s = summarize_encoding(P, model);
  EXPECT_DOUBLE_EQ(s.min_distance, 1.0);
  EXPECT_EQ(s.closest_i, 1);
  EXPECT_EQ(s.closest_j, 2);
  EXPECT_DOUBLE_EQ(s.min_norm, 0.0);
  EXPECT_DOUBLE_EQ(s.max_norm, std::sqrt(34.0));
  EXPECT_NEAR(s.mean_norm, (0 + 5 + std::sqrt(34.0)) / 3, 1e-12);
  EXPECT_GT(s.token_norm, 0.0);
}

TEST(Falloff, CountsRisesMovingAwayFromTheReference) {
  // Strictly falling on both sides of index 2: no rises.
  Falloff f = falloff({1, 2, 5, 3, 0}, 2);
  EXPECT_EQ(f.argmax, 2);
  EXPECT_EQ(f.steps, 4);
  EXPECT_EQ(f.rises, 0);
  EXPECT_EQ(f.first_rise, -1);
  // A bump at distance 2 on the right, and a tie (not strict) at distance 1 on the left.
  f = falloff({0, 5, 5, 1, 2}, 2);
  EXPECT_EQ(f.rises, 2);
  EXPECT_EQ(f.first_rise, 1);
  EXPECT_DOUBLE_EQ(f.largest_rise, 1.0);
}

TEST(ShiftMaps, SinusoidalRotationIsExactAndOtherTablesAreNot) {
  const Matrix P = from_tensor(sinusoidal_encoding(range(200), 32, 10000.0));
  EXPECT_LT(sinusoidal_shift_error(P, {1, 5, 64}, 10000.0), 1e-6);
  // The wrong base must fail: the rotation angles no longer match the table.
  EXPECT_GT(sinusoidal_shift_error(P, {1, 5, 64}, 1000.0), 0.1);
  EXPECT_LT(fitted_shift_residual(P, 7), 1e-6);
  // A learned table at initialisation is random: no linear map shifts it.
  ModelConfig c = tiny_config("learned", 32);
  c.positional.keys.set("max_len", int64_t{200});
  const Matrix L = absolute_encoding(Encoder(c, make_scheme, 3), 200);
  EXPECT_GT(fitted_shift_residual(L, 7), 0.5);
  // Too few rows to fit a 32×32 map is refused rather than reported as a perfect fit.
  EXPECT_THROW(fitted_shift_residual(P, 170), Error);
}

TEST(MovingColumns, CountsColumnsWhoseRangeExceedsTheThreshold) {
  Matrix P(4, 3);
  // column 0 moves by 1, column 1 by 0.05, column 2 not at all
  P.values = {0, 0, 1, 1, 0.05, 1, 0.5, 0, 1, 0, 0.02, 1};
  EXPECT_DOUBLE_EQ(share_of_moving_columns(P, 4, 0.1), 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(share_of_moving_columns(P, 4, 0.01), 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(share_of_moving_columns(P, 1, 0.01), 0.0);  // one row: nothing moves
}

TEST(AnalyzeEncoding, SinusoidalAtTheNotesSettings) {
  // Note 002's settings: d_model 128, positions 0..255, reference 128.
  ModelConfig c = tiny_config("sinusoidal", 128, 4, 1);
  const Encoder model(c, make_scheme, 0);
  EncodingAnalysisOptions o;
  o.positions = 256;
  o.moving_lengths = {64, 256};
  const EncodingAnalysis a = analyze_encoding(model, o);
  EXPECT_EQ(a.options.reference, 128);
  EXPECT_EQ(a.falloff.argmax, 128);  // a position is most similar to itself
  EXPECT_LT(a.sinusoidal_shift_error, 1e-6);
  ASSERT_EQ(a.moving.size(), 2u);
  EXPECT_LT(a.moving[0].second, a.moving[1].second);  // longer spans move more dimensions
  EXPECT_NEAR(a.summary.mean_norm, 8.0, 1e-5);        // ‖PE(p)‖ = sqrt(d/2)
}

}  // namespace
}  // namespace pelab
