// masked_fill: broadcast masks, −inf fills, zero gradient at filled places, shape errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "ops/gradcheck.h"
#include "pelab/core/error.h"
#include "pelab/ops/ops.h"

namespace pelab::testing {
namespace {

constexpr float kMaskedOut = -std::numeric_limits<float>::infinity();

TEST(MaskedFill, FillsWhereMaskIsNonZeroWithBroadcasting) {
  const Tensor x = Tensor::from_vector({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor row = Tensor::from_vector({3}, {0, 2, -1});  // any non-zero value fills
  EXPECT_EQ(masked_fill(x, row, 9).to_vector(), (std::vector<float>{1, 9, 9, 4, 9, 9}));
  const Tensor col = Tensor::from_vector({2, 1}, {1, 0});
  EXPECT_EQ(masked_fill(x, col, 0).to_vector(), (std::vector<float>{0, 0, 0, 4, 5, 6}));
  EXPECT_EQ(masked_fill(x, Tensor::scalar(0), 7).to_vector(), x.to_vector());
  EXPECT_EQ(x.to_vector(), (std::vector<float>{1, 2, 3, 4, 5, 6}));  // out of place
}

TEST(MaskedFill, NegInfFillThenSoftmax) {
  // A causal mask: position i may look at j ≤ i. Row 0 is additionally fully masked.
  const Tensor scores = Tensor::zeros({3, 3});
  const Tensor mask = Tensor::from_vector({3, 3}, {1, 1, 1, 0, 0, 1, 0, 0, 0});
  const Tensor filled = masked_fill(scores, mask, kMaskedOut);
  EXPECT_EQ(filled.to_vector()[0], kMaskedOut);
  const std::vector<float> a = softmax(filled).to_vector();
  const std::vector<float> want = {0, 0, 0, 0.5f, 0.5f, 0, 1 / 3.f, 1 / 3.f, 1 / 3.f};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(a[i], want[i], 1e-6f) << i;
}

TEST(MaskedFill, GradientIsZeroAtFilledPlacesAndMaskGetsNone) {
  Tensor x = Tensor::from_vector({2, 2}, {1, 2, 3, 4});
  Tensor mask = Tensor::from_vector({2, 2}, {1, 0, 0, 1});
  x.set_requires_grad(true);
  mask.set_requires_grad(true);
  sum_all(mul(masked_fill(x, mask, kMaskedOut) * 0.0f + masked_fill(x, mask, 5.0f),
              Tensor::from_vector({2, 2}, {10, 20, 30, 40})))
      .backward();
  EXPECT_EQ(x.grad().to_vector(), (std::vector<float>{0, 20, 30, 0}));
  EXPECT_FALSE(mask.grad().defined());
}

TEST(MaskedFill, MaskMustBroadcastToX) {
  const Tensor x = Tensor::zeros({2, 3});
  for (const Shape& bad : {Shape{2}, Shape{3, 3}, Shape{1, 2, 3}}) {
    EXPECT_THROW(masked_fill(x, Tensor::zeros(bad), 0), Error) << to_string(bad);
    try {
      masked_fill(x, Tensor::zeros(bad), 0);
    } catch (const Error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(to_string(bad)), std::string::npos) << msg;
      EXPECT_NE(msg.find("[2, 3]"), std::string::npos) << msg;
    }
  }
}

}  // namespace
}  // namespace pelab::testing
