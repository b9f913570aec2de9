// dropout: keep fraction, scaling, the mask as a pure function of (seed, i), thread
// independence, p = 0 as identity, p validation.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "ops/gradcheck.h"
#include "pelab/core/error.h"
#include "pelab/core/parallel.h"
#include "pelab/core/rng.h"
#include "pelab/ops/ops.h"

namespace pelab::testing {
namespace {

TEST(Dropout, KeepsAboutOneMinusPAndScalesKeptValues) {
  const int64_t n = 1 << 20;
  const float p = 0.3f;
  const Tensor y = dropout(Tensor::ones({n}), p, 42);
  const std::vector<float> v = y.to_vector();
  int64_t kept = 0;
  for (float e : v) {
    if (e != 0.0f) {
      ++kept;
      EXPECT_EQ(e, 1.0f / (1.0f - p));
    }
  }
  // Binomial: σ of the fraction is √(0.21 / 2²⁰) ≈ 4.5e-4; 3e-3 is over six σ.
  EXPECT_NEAR(static_cast<double>(kept) / n, 1.0 - p, 3e-3);
}

TEST(Dropout, MaskIsCounterUniformOfSeedAndRowAndColumn) {
  const Tensor x = random_tensor({7, 9}, 1);
  const uint64_t seed = 123;
  const float p = 0.4f;
  const std::vector<float> xv = x.to_vector(), y = dropout(x, p, seed).to_vector();
  for (size_t i = 0; i < y.size(); ++i) {  // element (r, j) of [7, 9]: counter r·2³² + j
    const bool keep = counter_uniform(seed, ((i / 9) << 32) + i % 9) >= p;
    EXPECT_EQ(y[i], keep ? xv[i] * (1.0f / (1.0f - p)) : 0.0f) << i;
  }
  EXPECT_EQ(dropout(x, p, seed).to_vector(), y);      // same seed, same mask
  EXPECT_NE(dropout(x, p, seed + 1).to_vector(), y);  // another seed, another mask
}

TEST(Dropout, StridedInputUsesLogicalIndex) {
  const Tensor x = random_tensor({5, 6}, 2);
  const Tensor t = transpose(x, 0, 1);
  EXPECT_EQ(dropout(t, 0.5f, 9).to_vector(), dropout(contiguous(t), 0.5f, 9).to_vector());
}

TEST(Dropout, BitIdenticalMasksForOneAndTwoThreads) {
  const int saved = num_threads();
  const Tensor x0 = random_tensor({300, 401}, 3);  // > 2 × the elementwise grain: really split
  auto run = [&](int threads) {
    set_num_threads(threads);
    Tensor x = x0.detach().clone();
    x.set_requires_grad(true);
    const Tensor y = dropout(x, 0.25f, 77);
    sum_all(y).backward();
    std::vector<float> v = y.to_vector(), g = x.grad().to_vector();
    v.insert(v.end(), g.begin(), g.end());
    return v;
  };
  const std::vector<float> one = run(1), two = run(2);
  set_num_threads(saved);
  EXPECT_EQ(one, two);
}

TEST(Dropout, GradientIsTheSameMaskScaled) {
  Tensor x = Tensor::ones({1000});
  x.set_requires_grad(true);
  const Tensor y = dropout(x, 0.5f, 5);
  sum_all(y).backward();
  EXPECT_EQ(x.grad().to_vector(), y.to_vector());  // x = 1: y_i = k_i·2 = dL/dx_i
}

TEST(Dropout, PZeroReturnsXItself) {
  Tensor x = random_tensor({3, 4}, 4);
  x.set_requires_grad(true);
  const Tensor y = dropout(x, 0.0f, 1);
  EXPECT_EQ(y.impl(), x.impl());
}

TEST(Dropout, PMustBeInZeroOne) {
  const Tensor x = Tensor::ones({4});
  for (float p : {1.0f, 1.5f, -0.1f, NAN}) {
    EXPECT_THROW(dropout(x, p, 0), Error) << p;
    try {
      dropout(x, p, 0);
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("[0, 1)"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace pelab::testing
