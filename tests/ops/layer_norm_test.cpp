// layer_norm: normalised statistics, hand-computed values, constant rows, shape errors,
// thread independence of the reduced dγ and dβ.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "error_message.h"
#include "ops/gradcheck.h"
#include "pelab/core/error.h"
#include "pelab/core/parallel.h"
#include "pelab/ops/ops.h"

namespace pelab::testing {
namespace {

TEST(LayerNorm, RowsHaveZeroMeanAndUnitVariance) {
  const int64_t rows = 64, dim = 256;
  const Tensor x = add_scalar(random_tensor({rows, dim}, 1, 3.0f), 5.0f);
  const Tensor y = layer_norm(x, Tensor::ones({dim}), Tensor::zeros({dim}));
  const std::vector<float> v = y.to_vector();
  for (int64_t r = 0; r < rows; ++r) {
    double s = 0, ss = 0;
    for (int64_t j = 0; j < dim; ++j) s += v[r * dim + j];
    const double mean = s / dim;
    for (int64_t j = 0; j < dim; ++j) ss += (v[r * dim + j] - mean) * (v[r * dim + j] - mean);
    EXPECT_NEAR(mean, 0.0, 1e-5) << "row " << r;
    EXPECT_NEAR(ss / dim, 1.0, 1e-4) << "row " << r;  // biased variance; eps is negligible here
  }
}

TEST(LayerNorm, HandComputedWithGammaAndBeta) {
  // x = (1, 2, 3, 4): mean 2.5, biased variance 1.25; eps = 0.75 makes r = 1/√2 exactly.
  const Tensor x = Tensor::from_vector({1, 4}, {1, 2, 3, 4});
  const Tensor gamma = Tensor::from_vector({4}, {1, 2, -1, 0.5f});
  const Tensor beta = Tensor::from_vector({4}, {0, 1, 0, -1});
  const Tensor y = layer_norm(x, gamma, beta, 0.75f);
  const float r = 0.70710678f;
  const std::vector<float> want = {-1.5f * r, 1 - 0.5f * r * 2, -0.5f * r, 1.5f * r * 0.5f - 1};
  const std::vector<float> got = y.to_vector();
  for (int j = 0; j < 4; ++j) EXPECT_NEAR(got[j], want[j], 1e-6f) << j;
}

TEST(LayerNorm, ConstantRowGivesBetaAndFiniteGradients) {
  Tensor x = Tensor::full({2, 3}, 4.0f);
  x.set_requires_grad(true);
  const Tensor beta = Tensor::from_vector({3}, {1, 2, 3});
  const Tensor y = layer_norm(x, Tensor::ones({3}), beta);
  EXPECT_EQ(y.to_vector(), (std::vector<float>{1, 2, 3, 1, 2, 3}));
  sum_all(mul(y, random_tensor({2, 3}, 2))).backward();
  for (float g : x.grad().to_vector()) EXPECT_TRUE(std::isfinite(g));
}

TEST(LayerNorm, ShapeErrorsNameTheShapes) {
  const Tensor x = Tensor::zeros({2, 4});
  const std::string g =
      error_message([&] { layer_norm(x, Tensor::ones({3}), Tensor::zeros({4})); });
  EXPECT_NE(g.find("gamma [3]"), std::string::npos) << g;
  EXPECT_NE(g.find("[2, 4]"), std::string::npos) << g;
  const std::string b = error_message([&] {
    layer_norm(x, Tensor::ones({4}), Tensor::zeros({1, 4}));
  });
  EXPECT_NE(b.find("beta [1, 4]"), std::string::npos) << b;
  EXPECT_THROW(layer_norm(x, Tensor(), Tensor::zeros({4})), Error);
  EXPECT_THROW(layer_norm(Tensor::zeros({2, 0}), Tensor::ones({0}), Tensor::zeros({0})), Error);
  EXPECT_THROW(layer_norm(x, Tensor::ones({4}), Tensor::zeros({4}), -1.0f), Error);
}

TEST(LayerNorm, BitIdenticalForOneAndTwoThreads) {
  const int saved = num_threads();
  // 1000 rows × 160 columns: both the row split (dx) and the column split (dγ, dβ) happen.
  const Tensor x0 = random_tensor({1000, 160}, 3);
  const Tensor dy = random_tensor({1000, 160}, 4);
  auto run = [&](int threads) {
    set_num_threads(threads);
    Tensor x = x0.detach().clone(), gamma = random_tensor({160}, 5), beta = random_tensor({160}, 6);
    for (Tensor* t : {&x, &gamma, &beta}) t->set_requires_grad(true);
    const Tensor y = layer_norm(x, gamma, beta);
    sum_all(mul(y, dy)).backward();
    std::vector<float> v = y.to_vector();
    for (const Tensor* t : {&x, &gamma, &beta}) {
      const std::vector<float> g = t->grad().to_vector();
      v.insert(v.end(), g.begin(), g.end());
    }
    return v;
  };
  const std::vector<float> one = run(1), two = run(2);
  set_num_threads(saved);
  EXPECT_EQ(one, two);
}

}  // namespace
}  // namespace pelab::testing
