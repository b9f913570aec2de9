// gather_last / scatter_add_last: forward values, adjointness, index and shape validation.
#include <gtest/gtest.h>

#include <string>

#include "error_message.h"
#include "ops/gradcheck.h"
#include "pelab/core/error.h"
#include "pelab/ops/ops.h"

namespace pelab::testing {
namespace {

TEST(GatherLast, PicksAlongTheLastAxisPerRow) {
  const Tensor x = Tensor::from_vector({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor y = gather_last(x, IntTensor({2, 4}, {2, 2, 0, 1, 0, 1, 2, 0}));
  EXPECT_EQ(y.shape(), (Shape{2, 4}));
  EXPECT_EQ(y.to_vector(), (std::vector<float>{3, 3, 1, 2, 4, 5, 6, 4}));
}

TEST(ScatterAddLast, SumsRepeatedIndices) {
  const Tensor x = Tensor::from_vector({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor y = scatter_add_last(x, IntTensor({2, 3}, {0, 0, 3, 2, 2, 2}), 4);
  EXPECT_EQ(y.shape(), (Shape{2, 4}));
  EXPECT_EQ(y.to_vector(), (std::vector<float>{3, 0, 0, 3, 0, 0, 15, 0}));
}

// <gather(x, idx), v> = <x, scatter_add(v, idx, n)>: each is the other's adjoint.
TEST(GatherLast, IsTheAdjointOfScatterAddLast) {
  const Tensor x = random_tensor({3, 2, 5}, 1);
  const Tensor v = random_tensor({3, 2, 7}, 2);
  std::vector<int32_t> idx(42);
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<int32_t>((i * 3 + 1) % 5);
  const IntTensor index({3, 2, 7}, idx);
  const double lhs = sum_all(mul(gather_last(x, index), v)).item();
  const double rhs = sum_all(mul(x, scatter_add_last(v, index, 5))).item();
  EXPECT_NEAR(lhs, rhs, 1e-4);
}

TEST(GatherLast, OutOfRangeIndexNamesPositionAndValue) {
  const Tensor x = Tensor::zeros({2, 3});
  EXPECT_THROW(gather_last(x, IntTensor({2, 2}, {0, 1, 3, 0})), Error);
  const std::string msg = error_message([&] { gather_last(x, IntTensor({2, 2}, {0, 1, 3, 0})); });
  EXPECT_NE(msg.find("index[1, 0] = 3"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[0, 3)"), std::string::npos) << msg;
  const std::string neg = error_message([&] { gather_last(x, IntTensor({2, 1}, {-1, 0})); });
  EXPECT_NE(neg.find("= -1"), std::string::npos) << neg;
}

TEST(GatherLast, LeadingShapeMustMatch) {
  const std::string msg = error_message([&] {
    gather_last(Tensor::zeros({2, 3}), IntTensor({3, 1}, {0, 0, 0}));
  });
  EXPECT_NE(msg.find("[3, 1]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[2, 3]"), std::string::npos) << msg;
  EXPECT_THROW(gather_last(Tensor::zeros({6}), IntTensor({2, 1}, {0, 0})), Error);
  EXPECT_THROW(gather_last(Tensor::scalar(1.0f), IntTensor({}, 0)), Error);
}

TEST(ScatterAddLast, ValidatesShapeSizeAndIndices) {
  const Tensor x = Tensor::zeros({2, 3});
  const std::string shape = error_message([&] {
    scatter_add_last(x, IntTensor({2, 2}, {0, 0, 0, 0}), 4);
  });
  EXPECT_NE(shape.find("[2, 2]"), std::string::npos) << shape;
  EXPECT_THROW(scatter_add_last(x, IntTensor({2, 3}, 0), -1), Error);
  const std::string range = error_message([&] {
    scatter_add_last(x, IntTensor({2, 3}, {0, 1, 2, 0, 4, 1}), 4);
  });
  EXPECT_NE(range.find("index[1, 1] = 4"), std::string::npos) << range;
  EXPECT_NE(range.find("[0, 4)"), std::string::npos) << range;
}

TEST(GatherLast, GradientScattersBack) {
  Tensor x = Tensor::zeros({1, 3});
  x.set_requires_grad(true);
  sum_all(mul(gather_last(x, IntTensor({1, 4}, {2, 0, 2, 2})),
              Tensor::from_vector({1, 4}, {1, 2, 3, 4})))
      .backward();
  EXPECT_EQ(x.grad().to_vector(), (std::vector<float>{2, 0, 8}));
}

}  // namespace
}  // namespace pelab::testing
