// fast_exp and fast_erf against double-precision libm on dense grids, and their edge cases.
#include "pelab/core/fast_math.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace pelab {
namespace {

// The spacing of floats at |v| (the smallest subnormal below the normal range).
double ulp_of(double v) {
  const float f = static_cast<float>(std::fabs(v));
  if (f < std::numeric_limits<float>::min()) return std::numeric_limits<float>::denorm_min();
  return static_cast<double>(std::nextafter(f, std::numeric_limits<float>::infinity()) - f);
}

TEST(FastMath, ExpWithinTwoUlpOverTheWholeRange) {
  double worst = 0, worst_at = 0;
  for (double xd = -110.0; xd <= 88.7; xd += 3e-4) {
    const float x = static_cast<float>(xd);
    const double ref = std::exp(static_cast<double>(x));
    const double err = std::fabs(static_cast<double>(fast_exp(x)) - ref) / ulp_of(ref);
    if (err > worst) worst = err, worst_at = x;
  }
  EXPECT_LE(worst, 2.0) << "at x = " << worst_at;
}

TEST(FastMath, ExpEdgeCases) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(fast_exp(0.0f), 1.0f);
  EXPECT_EQ(fast_exp(-inf), 0.0f);
  EXPECT_EQ(fast_exp(-200.0f), 0.0f);
  EXPECT_EQ(fast_exp(inf), inf);
  EXPECT_EQ(fast_exp(89.0f), inf);
  EXPECT_TRUE(std::isnan(fast_exp(std::nanf(""))));
  EXPECT_GT(fast_exp(-103.0f), 0.0f);  // subnormal results are kept
}

TEST(FastMath, ErfWithinOneUlpOfOneEverywhereAndTwoAndAHalfUlpNearZero) {
  double worst_abs = 0, worst_ulp = 0;
  for (double xd = -7.0; xd <= 7.0; xd += 1e-5) {
    const float x = static_cast<float>(xd);
    const double ref = std::erf(static_cast<double>(x));
    const double err = std::fabs(static_cast<double>(fast_erf(x)) - ref);
    worst_abs = std::max(worst_abs, err);
    if (std::fabs(x) <= 1.0f && x != 0.0f) worst_ulp = std::max(worst_ulp, err / ulp_of(ref));
  }
  EXPECT_LE(worst_abs, 1.3e-7);  // 1.0's ulp is 1.19e-7
  EXPECT_LE(worst_ulp, 2.5);
}

// GELU takes fast_erf_near_zero for blocks whose arguments all lie in [−1, 1]: it must give
// fast_erf's bits there. Every 61st float of [0, 1] (17 million) and its negative, and the
// ends.
TEST(FastMath, ErfNearZeroIsFastErfBitForBitOnMinusOneToOne) {
  const uint32_t one = std::bit_cast<uint32_t>(1.0f);
  int64_t mismatches = 0;
  float first_mismatch = 0;
  const auto check = [&](float x) {
    if (std::bit_cast<uint32_t>(fast_erf_near_zero(x)) != std::bit_cast<uint32_t>(fast_erf(x))) {
      if (mismatches++ == 0) first_mismatch = x;
    }
  };
  for (uint32_t bits = 0; bits <= one; bits += 61) {
    check(std::bit_cast<float>(bits));
    check(-std::bit_cast<float>(bits));
  }
  for (float x : {0.0f, -0.0f, 1.0f, -1.0f, std::numeric_limits<float>::denorm_min(),
                  std::nextafter(1.0f, 0.0f), -std::nextafter(1.0f, 0.0f)})
    check(x);
  EXPECT_EQ(mismatches, 0) << "first at x = " << first_mismatch;
  // erf is odd: −0 stays −0 (EXPECT_EQ alone would take +0 for it).
  EXPECT_TRUE(std::signbit(fast_erf(-0.0f)));
  EXPECT_TRUE(std::signbit(fast_erf_near_zero(-0.0f)));
  EXPECT_FALSE(std::signbit(fast_erf_near_zero(0.0f)));
}

TEST(FastMath, ErfEdgeCases) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(fast_erf(0.0f), 0.0f);
  EXPECT_EQ(fast_erf(inf), 1.0f);
  EXPECT_EQ(fast_erf(-inf), -1.0f);
  EXPECT_EQ(fast_erf(10.0f), 1.0f);
  EXPECT_EQ(fast_erf(-1.5f), -fast_erf(1.5f));
  EXPECT_TRUE(std::isnan(fast_erf(std::nanf(""))));
  EXPECT_FLOAT_EQ(fast_erf(1e-20f), static_cast<float>(2.0 / std::sqrt(M_PI) * 1e-20));
}

}  // namespace
}  // namespace pelab
