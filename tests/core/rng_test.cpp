// The counter-based noise of dropout: apply_counter_mask, the vectorised path, against
// counter_uniform, the definition, one counter at a time; spans that start and end inside a
// block of 32, and spans that cross a 2³² boundary (where the key changes).
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <limits>
#include <vector>

#include "pelab/core/error.h"
#include "pelab/core/rng.h"

namespace pelab::testing {
namespace {

// Each kernel this CPU runs, and apply_counter_mask's choice among them, against the definition.
void expect_mask_is_counter_uniform(uint64_t seed, uint64_t first, int64_t n, float p) {
  std::vector<float> x(static_cast<size_t>(n)), y(static_cast<size_t>(n));
  for (int64_t t = 0; t < n; ++t) x[t] = 1.0f + static_cast<float>(t);
  const float scale = 1.0f / (1.0f - p);
  apply_counter_mask(seed, first, n, p, scale, x.data(), y.data());
  for (int64_t t = 0; t < n; ++t) {
    const bool keep = counter_uniform(seed, first + static_cast<uint64_t>(t)) >= p;
    ASSERT_EQ(y[t], keep ? x[t] * scale : 0.0f) << "first " << first << " t " << t;
  }
  for (const VectorKernel kernel :
       {VectorKernel::Avx512, VectorKernel::Avx2, VectorKernel::Portable}) {
    if (!vector_kernel_runs_here(kernel)) continue;
    std::vector<float> w(static_cast<size_t>(n), -1.0f);
    apply_counter_mask_with(kernel, seed, first, n, p, scale, x.data(), w.data());
    EXPECT_EQ(w, y) << "kernel " << static_cast<int>(kernel) << " first " << first << " n " << n;
    std::vector<float> z = x;  // in place: the same
    apply_counter_mask_with(kernel, seed, first, n, p, scale, z.data(), z.data());
    EXPECT_EQ(z, y) << "kernel " << static_cast<int>(kernel) << " in place";
  }
}

TEST(CounterMask, EqualsCounterUniformOnEverySpan) {
  for (uint64_t first :
       {uint64_t{0}, uint64_t{5}, uint64_t{16}, uint64_t{31}, uint64_t{32}, uint64_t{1000003}})
    for (int64_t n : {1, 7, 15, 16, 17, 31, 32, 33, 100})
      for (float p : {0.1f, 0.5f, 0.9f}) expect_mask_is_counter_uniform(17, first, n, p);
  // A rate equal to a counter's own draw, in the low and the high half of its hash: that
  // counter sits on the threshold and is kept (u ≥ p), its neighbours fall either way.
  for (uint64_t at : {uint64_t{5}, uint64_t{21}, uint64_t{40}}) {
    const float p = counter_uniform(17, at);
    if (p > 0.0f) expect_mask_is_counter_uniform(17, 0, 64, p);
  }
  // Across the boundary between two keys.
  expect_mask_is_counter_uniform(17, (uint64_t{1} << 32) - 45, 100, 0.3f);
  expect_mask_is_counter_uniform(17, (uint64_t{3} << 32) - 1, 2, 0.3f);
}

// The keep bits: bit t % 32 of word t / 32 says whether element t was kept, by the
// definition, from every kernel, with the bits past n clear and words past them untouched;
// a first counter inside a block is refused. The control: the decisions of another seed.
TEST(CounterMask, KeepBitsAreTheDecisions) {
  for (const VectorKernel kernel :
       {VectorKernel::Avx512, VectorKernel::Avx2, VectorKernel::Portable}) {
    if (!vector_kernel_runs_here(kernel)) continue;
    for (uint64_t first : {uint64_t{0}, uint64_t{64}, (uint64_t{5} << 32)})
      for (int64_t n : {1, 31, 32, 33, 82}) {
        std::vector<float> x(static_cast<size_t>(n), 1.0f), y(static_cast<size_t>(n));
        std::vector<uint32_t> bits(4, 0xdeadbeefU);
        apply_counter_mask_with(kernel, 17, first, n, 0.3f, 2.0f, x.data(), y.data(), bits.data());
        const int64_t words = (n + 31) / 32;
        for (int64_t t = 0; t < 32 * words; ++t) {
          const bool keep = t < n && counter_uniform(17, first + static_cast<uint64_t>(t)) >= 0.3f;
          ASSERT_EQ((bits[t / 32] >> (t % 32)) & 1U, keep ? 1U : 0U)
              << "kernel " << static_cast<int>(kernel) << " first " << first << " t " << t;
        }
        for (int64_t w = words; w < 4; ++w) EXPECT_EQ(bits[w], 0xdeadbeefU);
        std::vector<uint32_t> other(4, 0);
        apply_counter_mask_with(kernel, 18, first, n, 0.3f, 2.0f, x.data(), y.data(), other.data());
        if (n >= 32) {
          EXPECT_NE(other, bits);
        }
      }
    std::vector<float> x(8, 1.0f);
    std::vector<uint32_t> bits(1);
    EXPECT_THROW(
        apply_counter_mask_with(kernel, 17, 5, 8, 0.3f, 2.0f, x.data(), x.data(), bits.data()),
        Error);
  }
}

// A kept value is the float product, whatever it is; a dropped one is +0 even for inf or NaN.
TEST(CounterMask, EveryKernelKeepsAndDropsSpecialValuesAlike) {
  const int64_t n = 64;
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t t = 0; t < n; ++t)
    x[t] = t % 4 == 0   ? std::numeric_limits<float>::infinity()
           : t % 4 == 1 ? -0.0f
           : t % 4 == 2 ? 3.0e38f
                        : std::numeric_limits<float>::denorm_min();
  std::vector<float> want(static_cast<size_t>(n));
  apply_counter_mask_with(VectorKernel::Portable, 9, 3, n, 0.5f, 2.0f, x.data(), want.data());
  for (const VectorKernel kernel : {VectorKernel::Avx512, VectorKernel::Avx2}) {
    if (!vector_kernel_runs_here(kernel)) continue;
    std::vector<float> got(static_cast<size_t>(n));
    apply_counter_mask_with(kernel, 9, 3, n, 0.5f, 2.0f, x.data(), got.data());
    for (int64_t t = 0; t < n; ++t)  // bit for bit: +0 and −0 apart
      EXPECT_EQ(std::bit_cast<uint32_t>(got[t]), std::bit_cast<uint32_t>(want[t]))
          << "kernel " << static_cast<int>(kernel) << " t " << t;
  }
}

TEST(CounterMask, KeepRateIsPRoundedUpTo16Bits) {
  // u = bits·2⁻¹⁶: a rate between two multiples keeps what the larger one keeps. The control:
  // the next multiple keeps fewer.
  const int64_t n = 1 << 16;
  std::vector<float> ones(static_cast<size_t>(n), 1.0f), out(static_cast<size_t>(n));
  auto kept = [&](float p) {
    apply_counter_mask(3, 0, n, p, 1.0f, ones.data(), out.data());
    int64_t k = 0;
    for (float v : out) k += v != 0.0f;
    return k;
  };
  const float lower = 6553.0f / 65536.0f, upper = 6554.0f / 65536.0f;
  EXPECT_EQ(kept(0.1f), kept(upper));  // 0.1 lies in (6553, 6554]·2⁻¹⁶
  EXPECT_GT(kept(lower), kept(upper));
}

TEST(CounterMask, SeedsAndCountersGiveIndependentLookingBits) {
  // Each of the 16 bits is set about half the time over 2¹⁶ counters, for two seeds; and the
  // two seeds agree on about half of the keep decisions at p = 0.5 (no shared structure).
  const int64_t n = 1 << 16;
  std::vector<int64_t> ones_by_bit(16, 0);
  int64_t agree = 0;
  for (int64_t c = 0; c < n; ++c) {
    const float u = counter_uniform(11, static_cast<uint64_t>(c));
    const auto bits = static_cast<uint32_t>(u * 65536.0f);
    for (int b = 0; b < 16; ++b) ones_by_bit[b] += (bits >> b) & 1U;
    agree += (u >= 0.5f) == (counter_uniform(12, static_cast<uint64_t>(c)) >= 0.5f);
  }
  // σ of a count over 2¹⁶ fair bits is 128; 6σ = 768.
  for (int b = 0; b < 16; ++b) EXPECT_NEAR(ones_by_bit[b], n / 2.0, 768) << "bit " << b;
  EXPECT_NEAR(agree, n / 2.0, 768);
}

}  // namespace
}  // namespace pelab::testing
