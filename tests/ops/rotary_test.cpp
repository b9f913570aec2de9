// rotary with RotaryAngles: the kept angles give the direct computation's values bit for bit
// (forward and gradient), for small, random and large positions, as the table grows.
#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <string>

#include "ops/gradcheck.h"
#include "pelab/core/error.h"
#include "pelab/core/parallel.h"
#include "pelab/ops/ops.h"

namespace pelab::testing {
namespace {

// Forward values and x's gradient under a fixed random weighting of the output.
std::pair<std::vector<float>, std::vector<float>> run(
    const std::function<Tensor(const Tensor&)>& op, const Shape& shape) {
  Tensor x = random_tensor(shape, 3);
  x.set_requires_grad(true);
  const Tensor y = op(x);
  sum_all(mul(y, random_tensor(shape, 4))).backward();
  return {y.to_vector(), x.grad().to_vector()};
}

IntTensor random_positions(int64_t B, int64_t T, int32_t limit, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> pick(0, limit - 1);
  IntTensor p({B, T});
  for (int32_t& v : p.values) v = pick(rng);
  return p;
}

TEST(RotaryAngles, GiveTheDirectValuesBitForBit) {
  const int64_t B = 4, T = 50, heads = 2, dh = 8;
  const RotaryAngles angles(dh, 10000.0);
  IntTensor in_order({B, T});
  for (int64_t k = 0; k < B * T; ++k) in_order.values[k] = static_cast<int32_t>(k % T);
  // From small to past the cached bound (then computed directly), so the table grows.
  std::vector<IntTensor> cases = {in_order};
  for (int32_t limit : {100, 5000, 200000, 1 << 24})
    cases.push_back(random_positions(B, T, limit, static_cast<uint32_t>(limit)));
  const int saved = num_threads();
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    for (size_t c = 0; c < cases.size(); ++c) {
      const IntTensor& p = cases[c];
      const auto direct =
          run([&](const Tensor& x) { return rotary(x, p, heads, 10000.0); }, {B, T, heads * dh});
      const auto kept =
          run([&](const Tensor& x) { return rotary(x, p, heads, angles); }, {B, T, heads * dh});
      EXPECT_EQ(direct, kept) << "case " << c << ", " << threads << " threads";
    }
  }
  set_num_threads(saved);
}

TEST(RotaryAngles, KeepOneTableUntilAPositionPassesIt) {
  const RotaryAngles angles(4, 100.0);
  const auto first = angles.covering(5);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(angles.covering(0), first);
  EXPECT_EQ(angles.covering(7), first);  // grown to a power of two
  const auto grown = angles.covering(1000);
  EXPECT_NE(grown, first);
  EXPECT_EQ(angles.covering(3), grown);
  EXPECT_EQ(angles.covering(int64_t{1} << 30), nullptr);
  EXPECT_EQ(angles.covering(-1), nullptr);
}

TEST(RotaryAngles, MustMatchTheHeadWidth) {
  const RotaryAngles angles(4, 100.0);
  try {
    rotary(Tensor::zeros({1, 2, 8}), IntTensor({1, 2}, {0, 1}), 1, angles);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the angles are for d_h = 4, x has d_h = 8"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(RotaryAngles(3, 100.0), Error);
  EXPECT_THROW(RotaryAngles(4, 0.0), Error);
}

}  // namespace
}  // namespace pelab::testing
