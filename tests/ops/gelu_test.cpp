// gelu's forward takes a cheaper erf for blocks of eight whose arguments all lie in
// [−1, 1] (src/ops/unary.cpp). Which blocks do must change no result. The oracle is gelu
// itself on a layout where every block takes the full erf: each value alone in a block with
// seven values far outside the range. Outputs and gradients (the backward reads the Φ(x) the
// forward kept) must equal the oracle's bit for bit — for blocks in range, blocks with one
// element out of range at each place, NaN and ±inf, the ends of the range, a tail shorter
// than a block, and at 1 and 2 threads (a thread's range need not start on a block).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "pelab/core/parallel.h"
#include "pelab/ops/ops.h"

namespace pelab::testing {
namespace {

constexpr float kInvSqrt2 = 0.70710678118654752f;  // as src/ops/unary.cpp
constexpr float kFar = 5.0f;                       // x/√2 ≈ 3.5: outside [−1, 1]

// The smallest x > 0 whose x/√2, computed as gelu does (x·kInvSqrt2 in float), exceeds 1:
// 0x1.6a09eap+0. The float below it is the largest in range.
float first_outside() {
  float x = 1.41f;
  while (x * kInvSqrt2 <= 1.0f) x = std::nextafter(x, 2.0f);
  return x;
}

std::vector<float> mixed_inputs(int64_t repeats) {
  const float outside = first_outside(), inside = std::nextafter(outside, 0.0f);
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x;
  const auto add = [&x](float v) { x.push_back(v); };
  for (int64_t r = 0; r < repeats; ++r) {
    for (int i = 0; i < 16; ++i) add(0.3f * normal(rng));  // blocks in range
    // The first value outside the range, at each place of a block otherwise in range.
    for (int at = 0; at < 8; ++at)
      for (int i = 0; i < 8; ++i) add(i == at ? (at % 2 ? -outside : outside) : 0.1f * i);
    for (float special :
         {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
          -std::numeric_limits<float>::infinity()})
      for (int i = 0; i < 8; ++i) add(i == 3 ? special : -0.2f);
    // A block in range up to its ends: the last value inside, x/√2 near ±1, ±0.
    for (float v : {inside, 1.4142f, 0.0f, 0.5f}) {
      add(v);
      add(-v);
    }
    for (float scale : {0.5f, 1.0f, 3.0f})
      for (int i = 0; i < 64; ++i) add(scale * normal(rng));
  }
  for (int i = 0; i < 5; ++i) add(0.25f * static_cast<float>(i) - 0.5f);  // the tail
  return x;
}

struct GeluResult {
  std::vector<float> inference;  // no gradient needed: Φ not kept
  std::vector<float> training;   // Φ kept for the backward
  std::vector<float> grad;       // d(sum y)/dx
};

GeluResult run_gelu(const std::vector<float>& values, int threads) {
  const int saved = num_threads();
  set_num_threads(threads);
  const int64_t n = static_cast<int64_t>(values.size());
  Tensor x = Tensor::from_vector({n}, values);
  GeluResult r;
  r.inference = gelu(x).to_vector();
  x.set_requires_grad(true);
  const Tensor y = gelu(x);
  sum_all(y).backward();
  r.training = y.to_vector();
  r.grad = x.grad().to_vector();
  set_num_threads(saved);
  return r;
}

// Every value at the start of a block of its own, the rest kFar: all blocks take fast_erf.
GeluResult oracle(const std::vector<float>& values) {
  std::vector<float> spread(values.size() * 8, kFar);
  for (size_t k = 0; k < values.size(); ++k) spread[8 * k] = values[k];
  const GeluResult full = run_gelu(spread, 1);
  GeluResult r;
  for (size_t k = 0; k < values.size(); ++k) {
    r.inference.push_back(full.inference[8 * k]);
    r.training.push_back(full.training[8 * k]);
    r.grad.push_back(full.grad[8 * k]);
  }
  return r;
}

bool same_bits(float a, float b) {
  return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b);
}

void expect_matches_oracle(const std::vector<float>& values, int threads) {
  const GeluResult want = oracle(values), got = run_gelu(values, threads);
  int64_t mismatches = 0;
  for (size_t k = 0; k < values.size(); ++k) {
    const bool ok = same_bits(got.inference[k], want.inference[k]) &&
                    same_bits(got.training[k], want.training[k]) &&
                    same_bits(got.grad[k], want.grad[k]);
    if (!ok && mismatches++ < 5)
      ADD_FAILURE() << "element " << k << " x = " << values[k] << ": y " << got.inference[k]
                    << " / " << got.training[k] << " want " << want.inference[k] << " / "
                    << want.training[k] << ", dy/dx " << got.grad[k] << " want " << want.grad[k];
  }
  EXPECT_EQ(mismatches, 0) << "of " << values.size() << " elements, " << threads << " thread(s)";
}

// The inputs straddle the range's end where the test means them to.
TEST(Gelu, TheTestInputsStraddleTheEndOfTheRange) {
  const float outside = first_outside(), inside = std::nextafter(outside, 0.0f);
  EXPECT_EQ(outside, 0x1.6a09eap+0f);
  EXPECT_GT(outside * kInvSqrt2, 1.0f);
  EXPECT_LE(inside * kInvSqrt2, 1.0f);
  EXPECT_LE(1.4142f * kInvSqrt2, 1.0f);
}

TEST(Gelu, BlocksNearZeroGiveTheFullErfsBitsForBit) {
  expect_matches_oracle(mixed_inputs(1), 1);
}

// More than parallel_for's grain (16384 elements) so that two threads split it, at a point
// that is not a multiple of 8: the second thread's range starts mid-block.
TEST(Gelu, BlocksNearZeroGiveTheFullErfsBitsAtTwoThreads) {
  const std::vector<float> values = mixed_inputs(100);
  ASSERT_GT(values.size(), 16384u);
  ASSERT_NE(values.size() / 2 % 8, 0u);
  expect_matches_oracle(values, 2);
}

// The harness reads real GELU values: Φ(0) = ½ is the slope at 0, GELU(±10) = 10 and −0.
TEST(Gelu, OracleSanity) {
  const GeluResult r = run_gelu({0.0f, 10.0f, -10.0f, -0.0f}, 1);
  EXPECT_EQ(r.grad[0], 0.5f);
  EXPECT_EQ(r.inference[1], 10.0f);
  EXPECT_EQ(r.inference[2], -0.0f);
  EXPECT_TRUE(std::signbit(r.inference[3]));  // GELU(−0) = −0·Φ(0) = −0
}

}  // namespace
}  // namespace pelab::testing
