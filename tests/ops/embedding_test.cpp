// embedding: forward values, the scatter-add backward, id validation, thread independence.
#include <gtest/gtest.h>

#include <string>

#include "error_message.h"
#include "ops/gradcheck.h"
#include "pelab/core/error.h"
#include "pelab/core/parallel.h"
#include "pelab/ops/ops.h"

namespace pelab::testing {
namespace {

TEST(Embedding, LooksUpRowsInIdsShape) {
  const Tensor w = Tensor::from_vector({3, 2}, {0, 1, 10, 11, 20, 21});
  const Tensor y = embedding(w, IntTensor({2, 2}, {2, 0, 1, 2}));
  EXPECT_EQ(y.shape(), (Shape{2, 2, 2}));
  EXPECT_EQ(y.to_vector(), (std::vector<float>{20, 21, 0, 1, 10, 11, 20, 21}));
  const Tensor s = embedding(w, IntTensor({}, 1));
  EXPECT_EQ(s.shape(), (Shape{2}));
  EXPECT_EQ(s.to_vector(), (std::vector<float>{10, 11}));
}

TEST(Embedding, BackwardScatterAddsRepeatedIds) {
  Tensor w = Tensor::zeros({3, 2});
  w.set_requires_grad(true);
  const Tensor y = embedding(w, IntTensor({4}, {1, 1, 0, 1}));
  const Tensor dy = Tensor::from_vector({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  sum_all(mul(y, dy)).backward();
  // Row 1 collects positions 0, 1, 3; row 0 position 2; row 2 nothing.
  EXPECT_EQ(w.grad().to_vector(), (std::vector<float>{5, 6, 11, 14, 0, 0}));
}

TEST(Embedding, OutOfRangeIdNamesIdIndexAndVocabulary) {
  const Tensor w = Tensor::zeros({5, 3});
  EXPECT_THROW(embedding(w, IntTensor({2, 2}, {0, 1, 7, 2})), Error);
  const std::string msg = error_message([&] { embedding(w, IntTensor({2, 2}, {0, 1, 7, 2})); });
  EXPECT_NE(msg.find("id 7"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[1, 0]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[0, 5)"), std::string::npos) << msg;
  const std::string neg = error_message([&] { embedding(w, IntTensor({3}, {0, -1, 2})); });
  EXPECT_NE(neg.find("id -1"), std::string::npos) << neg;
  EXPECT_NE(neg.find("[1]"), std::string::npos) << neg;
}

TEST(Embedding, WeightMustBeTwoDimensional) {
  EXPECT_THROW(embedding(Tensor::zeros({5}), IntTensor({1}, 0)), Error);
  const std::string msg = error_message([&] {
    embedding(Tensor::zeros({2, 3, 4}), IntTensor({1}, 0));
  });
  EXPECT_NE(msg.find("[2, 3, 4]"), std::string::npos) << msg;
}

TEST(Embedding, GradientIsBitIdenticalForOneAndTwoThreads) {
  const int saved = num_threads();
  // Enough rows per side that both the forward (ids) and backward (vocabulary) split.
  const int64_t n = 20000, vocab = 2000, dim = 16;
  std::vector<int32_t> ids(n);
  for (int64_t i = 0; i < n; ++i) ids[i] = static_cast<int32_t>((i * 7919) % vocab);
  const Tensor dy = random_tensor({n, dim}, 3);
  auto grad = [&](int threads) {
    set_num_threads(threads);
    Tensor w = random_tensor({vocab, dim}, 4);
    w.set_requires_grad(true);
    sum_all(mul(embedding(w, IntTensor({n}, ids)), dy)).backward();
    return w.grad().to_vector();
  };
  const std::vector<float> one = grad(1), two = grad(2);
  set_num_threads(saved);
  EXPECT_EQ(one, two);
}

}  // namespace
}  // namespace pelab::testing
