// gather_rows / scatter_rows: exact values and gradients, the equivalence with the embedding
// formulation they replace, and index validation.
#include <gtest/gtest.h>

#include <numeric>
#include <string>

#include "error_message.h"
#include "ops/gradcheck.h"
#include "pelab/core/error.h"
#include "pelab/core/parallel.h"
#include "pelab/ops/ops.h"

namespace pelab::testing {
namespace {

void expect_contains(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "'" << part << "' not in: " << text;
}

TEST(GatherRows, PicksRowsAndRoutesTheGradientBack) {
  Tensor x = Tensor::from_vector({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  x.set_requires_grad(true);
  const Tensor y = gather_rows(x, IntTensor({2}, {3, 1}));
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_EQ(y.to_vector(), (std::vector<float>{7, 8, 3, 4}));
  sum_all(mul(y, Tensor::from_vector({2, 2}, {10, 20, 30, 40}))).backward();
  EXPECT_EQ(x.grad().to_vector(), (std::vector<float>{0, 0, 30, 40, 0, 0, 10, 20}));
}

TEST(ScatterRows, PlacesRowsWithZerosAndGathersTheGradient) {
  Tensor x = Tensor::from_vector({2, 2}, {1, 2, 3, 4});
  x.set_requires_grad(true);
  const Tensor y = scatter_rows(x, IntTensor({4}, {2, 1, 2, 0}));
  EXPECT_EQ(y.shape(), (Shape{4, 2}));
  EXPECT_EQ(y.to_vector(), (std::vector<float>{0, 0, 3, 4, 0, 0, 1, 2}));
  sum_all(mul(y, Tensor::from_vector({4, 2}, {10, 20, 30, 40, 50, 60, 70, 80}))).backward();
  EXPECT_EQ(x.grad().to_vector(), (std::vector<float>{70, 80, 30, 40}));
}

TEST(ScatterRows, UndoesGatherRows) {
  const Tensor x = random_tensor({7, 3}, 3);
  const IntTensor rows({3}, {5, 0, 2});
  const IntTensor slots({7}, {1, 3, 2, 3, 3, 0, 3});
  const std::vector<float> back = scatter_rows(gather_rows(x, rows), slots).to_vector();
  const std::vector<float> v = x.to_vector();
  for (int64_t r = 0; r < 7; ++r)
    for (int64_t j = 0; j < 3; ++j) {
      const bool kept = r == 5 || r == 0 || r == 2;
      EXPECT_EQ(back[r * 3 + j], kept ? v[r * 3 + j] : 0.0f) << r << ", " << j;
    }
}

TEST(GatherRows, EmptySelections) {
  const Tensor x = random_tensor({3, 4}, 1);
  EXPECT_EQ(gather_rows(x, IntTensor({0}, std::vector<int32_t>{})).shape(), (Shape{0, 4}));
  const Tensor zeros = scatter_rows(Tensor::zeros({0, 4}), IntTensor({3}, {0, 0, 0}));
  EXPECT_EQ(zeros.to_vector(), std::vector<float>(12, 0.0f));
}

// The rows of a padded batch as the encoder used to move them, with embedding (and a zero
// row appended for the scatter): forward and gradients must agree bit for bit, on more rows
// than one thread's share.
TEST(GatherRows, EqualEmbeddingBitForBit) {
  const int64_t slots = 3000, width = 24;
  std::vector<int32_t> kept, row_of(slots);
  for (int64_t s = 0; s < slots; ++s) {
    const bool real = (s * 7919) % 10 < 6;
    row_of[s] = real ? static_cast<int32_t>(kept.size()) : -1;
    if (real) kept.push_back(static_cast<int32_t>(s));
  }
  const auto n = static_cast<int32_t>(kept.size());
  for (int32_t& r : row_of) r = r < 0 ? n : r;
  const IntTensor gather({n}, kept), scatter({slots}, row_of);
  const Tensor weights = random_tensor({slots, width}, 9);
  auto run = [&](bool new_ops) {
    Tensor x = random_tensor({slots, width}, 4);
    x.set_requires_grad(true);
    const Tensor rows = new_ops ? gather_rows(x, gather) : embedding(x, gather);  // [N, w]
    const Tensor h = mul(rows, rows);
    const Tensor y = new_ops ? scatter_rows(h, scatter)
                             : embedding(concat({h, Tensor::zeros({1, width})}, 0), scatter);
    sum_all(mul(y, weights)).backward();
    return std::pair{y.to_vector(), x.grad().to_vector()};
  };
  const int saved = num_threads();
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    EXPECT_EQ(run(true), run(false)) << threads << " threads";
  }
  set_num_threads(saved);
}

TEST(GatherRows, RejectsRowsOutOfRangeOrRepeated) {
  const Tensor x = Tensor::zeros({3, 2});
  const std::string range = error_message([&] { gather_rows(x, IntTensor({2}, {0, 3})); });
  expect_contains(range, "rows[1] = 3 is outside [0, 3)");
  expect_contains(error_message([&] { gather_rows(x, IntTensor({1}, -1)); }), "= -1");
  const std::string twice = error_message([&] { gather_rows(x, IntTensor({3}, {2, 0, 2})); });
  expect_contains(twice, "row 2 is picked twice (rows[0] and rows[2])");
  expect_contains(error_message([&] { gather_rows(Tensor::zeros({6}), IntTensor({1}, 0)); }),
                  "[rows, width]");
  expect_contains(error_message([&] {
                    gather_rows(x, IntTensor({1, 1}, 0));
                  }),
                  "rows must be a vector");
}

TEST(ScatterRows, RejectsSlotsThatAreNotOneToOne) {
  const Tensor x = Tensor::zeros({2, 2});
  expect_contains(error_message([&] {
                    scatter_rows(x, IntTensor({3}, {0, 3, 1}));
                  }),
                  "slots[1] = 3 is outside [0, 2]");
  expect_contains(error_message([&] {
                    scatter_rows(x, IntTensor({3}, {1, 0, 1}));
                  }),
                  "row 1 of x goes to two slots (0 and 2)");
  expect_contains(error_message([&] {
                    scatter_rows(x, IntTensor({3}, {1, 2, 2}));
                  }),
                  "row 0 of x goes to no slot");
}

}  // namespace
}  // namespace pelab::testing
