// softmax / log_softmax: values, stability, fully masked rows, axis paths, thread independence.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "ops/gradcheck.h"
#include "pelab/core/error.h"
#include "pelab/core/parallel.h"
#include "pelab/ops/ops.h"

namespace pelab::testing {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

void expect_near(const std::vector<float>& got, const std::vector<float>& want, float tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

TEST(Softmax, HandComputedValues) {
  const Tensor x = Tensor::from_vector({2, 3}, {1, 2, 3, 0, 0, 0});
  // softmax(1, 2, 3) = (e⁻², e⁻¹, 1) / (1 + e⁻¹ + e⁻²).
  expect_near(softmax(x).to_vector(),
              {0.09003057f, 0.24472847f, 0.66524096f, 1 / 3.f, 1 / 3.f, 1 / 3.f}, 1e-6f);
  expect_near(log_softmax(x).to_vector(),
              {-2.40760596f, -1.40760596f, -0.40760596f, -1.09861229f, -1.09861229f, -1.09861229f},
              1e-6f);
}

TEST(Softmax, StableForHugeLogits) {
  const Tensor x = Tensor::from_vector({2, 2}, {1000, 1000, -1000, 0});
  expect_near(softmax(x).to_vector(), {0.5f, 0.5f, 0.0f, 1.0f}, 1e-6f);
  expect_near(log_softmax(x).to_vector(), {-0.69314718f, -0.69314718f, -1000.0f, 0.0f}, 1e-4f);
}

// A fully masked attention row: every score −inf. softmax is defined as all zeros (α = 0),
// log_softmax as all −inf, and nothing is NaN — including the gradient.
TEST(Softmax, AllNegInfRowGivesZerosNotNaN) {
  Tensor x = Tensor::from_vector({2, 3}, {-kInf, -kInf, -kInf, 0, -kInf, 0});
  x.set_requires_grad(true);
  const Tensor y = softmax(x);
  expect_near(y.to_vector(), {0, 0, 0, 0.5f, 0, 0.5f}, 1e-7f);
  sum_all(mul(y, Tensor::from_vector({2, 3}, {1, 2, 3, 4, 5, 6}))).backward();
  for (float g : x.grad().to_vector()) EXPECT_TRUE(std::isfinite(g));
  expect_near(x.grad().to_vector(), {0, 0, 0, -0.5f, 0, 0.5f}, 1e-6f);

  const std::vector<float> ls = log_softmax(x.detach()).to_vector();
  for (int j = 0; j < 3; ++j) EXPECT_EQ(ls[j], -kInf);
}

TEST(Softmax, AllNegInfColumnOnNonLastAxis) {
  const Tensor x = Tensor::from_vector({3, 2}, {-kInf, 1, -kInf, 1, -kInf, 1});
  expect_near(softmax(x, 0).to_vector(), {0, 1 / 3.f, 0, 1 / 3.f, 0, 1 / 3.f}, 1e-6f);
}

TEST(Softmax, NaNPropagates) {
  const Tensor x = Tensor::from_vector({1, 3}, {0, NAN, 1});
  for (float v : softmax(x).to_vector()) EXPECT_TRUE(std::isnan(v));
  const Tensor masked = Tensor::from_vector({1, 2}, {-kInf, NAN});
  EXPECT_TRUE(std::isnan(softmax(masked).to_vector()[1]));
}

// The blocked path (any axis) must agree with the row path (last axis) on the same lines,
// including more than one 64-column block.
TEST(Softmax, NonLastAxisMatchesLastAxisOfThePermutedTensor) {
  const Tensor x = random_tensor({3, 5, 70}, 7, 3.0f);
  for (bool log : {false, true}) {
    const Tensor a = log ? log_softmax(x, 1) : softmax(x, 1);
    const Tensor t = contiguous(transpose(x, 1, 2));
    const Tensor b = transpose(log ? log_softmax(t, -1) : softmax(t, -1), 1, 2);
    EXPECT_LE(closeness(a, b, 1e-6, 1e-7), 1.0) << (log ? "log_softmax" : "softmax");
  }
  const Tensor rows = sum(softmax(x, 0), {0});
  for (float v : rows.to_vector()) EXPECT_NEAR(v, 1.0f, 1e-6f);
}

TEST(Softmax, BitIdenticalForOneAndTwoThreads) {
  const int saved = num_threads();
  const Tensor x = random_tensor({64, 40, 33}, 9);
  auto run = [&](int threads, int axis) {
    set_num_threads(threads);
    Tensor xi = x.detach().clone();
    xi.set_requires_grad(true);
    const Tensor y = softmax(xi, axis);
    sum_all(mul(y, random_tensor(y.shape(), 10))).backward();
    std::vector<float> v = y.to_vector(), g = xi.grad().to_vector();
    v.insert(v.end(), g.begin(), g.end());
    return v;
  };
  for (int axis : {-1, 1}) {
    const std::vector<float> one = run(1, axis), two = run(2, axis);
    EXPECT_EQ(one, two) << "axis " << axis;
  }
  set_num_threads(saved);
}

TEST(Softmax, AxisOutOfRangeIsAnError) {
  EXPECT_THROW(softmax(Tensor::zeros({2, 3}), 2), Error);
  EXPECT_THROW(log_softmax(Tensor::zeros({2, 3}), -3), Error);
  try {
    softmax(Tensor::scalar(1.0f));
    ADD_FAILURE() << "softmax of a scalar should throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("softmax"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace pelab::testing
