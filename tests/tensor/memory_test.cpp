// What a training step keeps alive: the autograd graph holds no tensor's data, only what the
// backward closures saved; the storage pool keeps small idle buffers and returns large ones.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "pelab/autograd/autograd.h"
#include "pelab/ops/ops.h"
#include "pelab/tensor/storage.h"

namespace pelab {
namespace {

constexpr int64_t kElements = int64_t{1} << 20;  // 4 MiB of floats: far above the pool's cache
constexpr double kBytes = kElements * sizeof(float);

double live_since(size_t before) {
  return static_cast<double>(memory::live_bytes()) - static_cast<double>(before);
}

// mul_scalar's backward reads nothing of its input: a chain of them keeps no intermediate.
// Were the graph to hold its nodes' inputs, a and b would live until the backward (3 × 4 MiB
// with x).
TEST(Memory, GraphKeepsOnlyWhatTheBackwardReads) {
  Tensor x = Tensor::full({kElements}, 0.5f).set_requires_grad(true);
  const size_t before = memory::live_bytes();
  Tensor loss;
  {
    const Tensor a = mul_scalar(x, 2.0f);
    const Tensor b = mul_scalar(a, 3.0f);
    loss = sum_all(b);
  }
  EXPECT_LT(live_since(before), 0.5 * kBytes);  // a and b are gone: only the scalar loss
  loss.backward();
  const std::vector<float> g = x.grad().to_vector();
  ASSERT_EQ(static_cast<int64_t>(g.size()), kElements);
  for (int64_t i = 0; i < kElements; i += 4099) ASSERT_EQ(g[i], 6.0f) << i;
}

// ReLU keeps its output, which the op after it (here mul, as a linear layer would) saves
// anyway, not its input: one 4 MiB tensor lives until the backward, not two.
TEST(Memory, ReluKeepsItsOutputNotItsInput) {
  Tensor x = Tensor::zeros({kElements}).set_requires_grad(true);
  {
    NoGradGuard no_grad;
    float* p = x.data();
    for (int64_t i = 0; i < kElements; ++i) p[i] = static_cast<float>(i % 7) - 3.0f;  // −3..3
  }
  const size_t before = memory::live_bytes();
  Tensor loss;
  {
    const Tensor h = mul_scalar(x, 1.0f);
    const Tensor r = relu(h);
    loss = sum_all(mul(r, r));
  }
  EXPECT_GT(live_since(before), 0.5 * kBytes);  // r, saved by mul
  EXPECT_LT(live_since(before), 1.5 * kBytes);  // not h
  loss.backward();
  const std::vector<float> g = x.grad().to_vector();
  for (int64_t i = 0; i < 7; ++i) {  // d/dx Σ relu(x)² = 2x where x > 0, else 0
    const float xi = static_cast<float>(i) - 3.0f;
    EXPECT_EQ(g[i], xi > 0.0f ? 2.0f * xi : 0.0f) << i;
  }
}

TEST(Memory, PoolKeepsSmallIdleBuffersAndReturnsLargeOnes) {
  if (!memory::pool_enabled()) GTEST_SKIP() << "the pool is off in sanitized builds";
  memory::release_cached();
  { const Tensor large = Tensor::empty({kElements}); }
  EXPECT_EQ(memory::cached_bytes(), 0u);
  { const Tensor small = Tensor::empty({256}); }
  EXPECT_GT(memory::cached_bytes(), 0u);
  memory::release_cached();
}

// Every buffer, whatever its size, starts on a 64-byte boundary and owns all its elements.
TEST(Memory, BuffersAreAlignedToSixtyFourBytes) {
  std::vector<Tensor> kept;
  for (int64_t n : {1, 3, 15, 16, 17, 1000, 4096, 65537, 300000, 1 << 21}) {
    Tensor t = Tensor::full({n}, 1.0f);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data()) % 64, 0u) << n;
    EXPECT_EQ(t.data()[n - 1], 1.0f) << n;
    kept.push_back(t);
  }
}

}  // namespace
}  // namespace pelab
