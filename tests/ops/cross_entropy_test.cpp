// cross_entropy: values, ignored rows, the gradient formula, stability, error messages.
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

TEST(CrossEntropy, HandComputedMean) {
  // Row 0: logsumexp(1, 2, 3) − 3 = 0.40760596; row 1: log 3 − 0 = 1.09861229.
  const Tensor logits = Tensor::from_vector({2, 3}, {1, 2, 3, 0, 0, 0});
  const Tensor loss = cross_entropy(logits, IntTensor({2}, {2, 0}));
  EXPECT_EQ(loss.shape(), Shape{});
  EXPECT_NEAR(loss.item(), (0.40760596 + 1.09861229) / 2, 1e-6);
}

TEST(CrossEntropy, IgnoredRowsDoNotCountEvenIfGarbage) {
  const Tensor logits = Tensor::from_vector({4, 3}, {1, 2, 3, NAN, INFINITY, 5, 0, 0, 0, 9, 9, 9});
  const Tensor loss = cross_entropy(logits, IntTensor({4}, {2, -1, 0, -1}));
  EXPECT_NEAR(loss.item(), (0.40760596 + 1.09861229) / 2, 1e-6);
  // A custom ignore_index inside [0, C) works too.
  const Tensor loss7 = cross_entropy(logits.slice(0, 2, 4), IntTensor({2}, {1, 7}), 7);
  EXPECT_NEAR(loss7.item(), 1.09861229, 1e-6);
}

TEST(CrossEntropy, GradientIsSoftmaxMinusOneHotOverScoredCount) {
  Tensor logits = Tensor::from_vector({3, 3}, {1, 2, 3, 4, 4, 4, 0, 0, 0});
  logits.set_requires_grad(true);
  mul_scalar(cross_entropy(logits, IntTensor({3}, {2, -1, 0})), 2.0f).backward();
  const float p0 = 0.09003057f, p1 = 0.24472847f, p2 = 0.66524096f, t = 1 / 3.f;
  const std::vector<float> want = {p0, p1, p2 - 1, 0, 0, 0, t - 1, t, t};  // ·2/K, K = 2
  const std::vector<float> got = logits.grad().to_vector();
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6f) << i;
}

TEST(CrossEntropy, StableForHugeLogits) {
  const Tensor logits = Tensor::from_vector({2, 2}, {1000, 0, -1000, -1000});
  const Tensor loss = cross_entropy(logits, IntTensor({2}, {1, 0}));
  EXPECT_NEAR(loss.item(), (1000.0 + std::log(2.0)) / 2, 1e-3);
}

TEST(CrossEntropy, MatchesLogSoftmaxPick) {
  const Tensor logits = random_tensor({6, 11}, 4, 2.0f);
  const std::vector<int32_t> t = {3, 10, -1, 0, 5, 5};
  const std::vector<float> ls = log_softmax(logits).to_vector();
  double want = 0;
  for (int r = 0; r < 6; ++r)
    if (t[r] >= 0) want -= ls[r * 11 + t[r]];
  EXPECT_NEAR(cross_entropy(logits, IntTensor({6}, t)).item(), want / 5, 1e-5);
}

TEST(CrossEntropy, TargetOutOfRangeNamesRowAndValue) {
  const Tensor logits = Tensor::zeros({3, 4});
  EXPECT_THROW(cross_entropy(logits, IntTensor({3}, {0, 4, 1})), Error);
  const std::string msg = error_message([&] { cross_entropy(logits, IntTensor({3}, {0, 4, 1})); });
  EXPECT_NE(msg.find("target 4 in row 1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[0, 4)"), std::string::npos) << msg;
  const std::string neg = error_message([&] { cross_entropy(logits, IntTensor({3}, {0, 1, -2})); });
  EXPECT_NE(neg.find("target -2 in row 2"), std::string::npos) << neg;
}

TEST(CrossEntropy, NoScoredRowIsAnError) {
  const Tensor logits = Tensor::zeros({2, 4});
  EXPECT_THROW(cross_entropy(logits, IntTensor({2}, {-1, -1})), Error);
  const std::string msg = error_message([&] { cross_entropy(logits, IntTensor({2}, {-1, -1})); });
  EXPECT_NE(msg.find("a batch with no scored position"), std::string::npos) << msg;
  const std::string empty = error_message([&] {
    cross_entropy(Tensor::zeros({0, 4}), IntTensor({0}, 0));
  });
  EXPECT_NE(empty.find("a batch with no scored position"), std::string::npos) << empty;
}

TEST(CrossEntropy, ShapesAreChecked) {
  const std::string msg = error_message([&] {
    cross_entropy(Tensor::zeros({3, 4}), IntTensor({2}, {0, 0}));
  });
  EXPECT_NE(msg.find("[2]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[3, 4]"), std::string::npos) << msg;
  EXPECT_THROW(cross_entropy(Tensor::zeros({2, 3, 4}), IntTensor({2}, {0, 0})), Error);
}

TEST(CrossEntropy, BitIdenticalForOneAndTwoThreads) {
  const int saved = num_threads();
  const Tensor logits = random_tensor({3000, 29}, 5);
  std::vector<int32_t> t(3000);
  for (int i = 0; i < 3000; ++i) t[i] = i % 7 == 0 ? -1 : (i * 13) % 29;
  auto run = [&](int threads) {
    set_num_threads(threads);
    Tensor x = logits.detach().clone();
    x.set_requires_grad(true);
    const Tensor loss = cross_entropy(x, IntTensor({3000}, t));
    loss.backward();
    std::vector<float> v = x.grad().to_vector();
    v.push_back(loss.item());
    return v;
  };
  const std::vector<float> one = run(1), two = run(2);
  set_num_threads(saved);
  EXPECT_EQ(one, two);
}

}  // namespace
}  // namespace pelab::testing
