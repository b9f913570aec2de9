// rotary with RotaryAngles: the kept angles give the direct computation's values bit for bit
// (forward and gradient), for small, random and large positions, as the table grows. Rotary's
// options (MODEL.md, "Rotary options"): the settings that are plain rotary give its bits,
// the first pairs alone rotate, and each scaling's angles follow the contract's formulas.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <numbers>
#include <random>
#include <string>

#include "ops/gradcheck.h"
#include "pelab/core/error.h"
#include "pelab/core/parallel.h"
#include "pelab/ops/ops.h"
#include "pelab/ops/oracles.h"

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

// ---- options ---------------------------------------------------------------------------
using Scaling = RotaryOptions::Scaling;

float max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  float m = 0.0f;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

IntTensor in_order(int64_t B, int64_t T, int32_t offset = 0) {
  IntTensor p({B, T});
  for (int64_t k = 0; k < B * T; ++k) p.values[k] = static_cast<int32_t>(k % T) + offset;
  return p;
}

// Fraction 1 and the scalings at s = 1 (dynamic NTK: every sequence within L) are plain
// rotary, bit for bit, from the kept table and from per-token angles (a position past the
// table's bound); the same scalings at s just above 1 must differ, or the test could not fail.
TEST(RotaryOptions, PlainSettingsGiveRotaryBitForBit) {
  const int64_t B = 2, T = 9, heads = 2, dh = 8;
  const IntTensor all_real({B, T}, 1);
  IntTensor far = in_order(B, T);
  far.values[3] = 1 << 22;  // past the kept table: angles formed per token
  const std::vector<std::pair<std::string, RotaryOptions>> plain = {
      {"fraction 1", {.pairs = dh / 2}},
      {"pi s=1", {.scaling = Scaling::Pi, .factor = 1.0}},
      {"ntk s=1", {.scaling = Scaling::Ntk, .factor = 1.0}},
      {"yarn s=1", {.scaling = Scaling::Yarn, .factor = 1.0, .original_length = 4}},
      {"dynamic_ntk n<=L",
       {.scaling = Scaling::DynamicNtk, .factor = 3.0, .original_length = 1 << 23}}};
  for (const IntTensor& p : {in_order(B, T), far}) {
    const auto direct =
        run([&](const Tensor& x) { return rotary(x, p, heads, 10000.0); }, {B, T, heads * dh});
    for (const auto& [name, options] : plain) {
      const RotaryAngles angles(dh, 10000.0, options);
      const auto got = run([&](const Tensor& x) { return rotary(x, p, heads, angles, all_real); },
                           {B, T, heads * dh});
      EXPECT_EQ(direct, got) << name << ", largest position " << p.values[3];
      RotaryOptions nudged = options;
      if (options.scaling == Scaling::DynamicNtk) {
        nudged.original_length = 4;  // n = 9 > L now
      } else {
        nudged.scaling = options.scaling == Scaling::None ? Scaling::Pi : options.scaling;
        nudged.factor = 1.0 + 1e-6;
      }
      const RotaryAngles moved(dh, 10000.0, nudged);
      const auto differs =
          run([&](const Tensor& x) { return rotary(x, p, heads, moved, all_real); },
              {B, T, heads * dh});
      EXPECT_NE(direct.first, differs.first) << name << " nudged";
    }
  }
}

// With n_rot of the d_h/2 pairs, each head's first 2·n_rot features are plain rotary of
// width d_r = 2·n_rot (θ over d_r), bit for bit, and the others pass through with gradient 1.
TEST(RotaryOptions, OnlyTheFirstPairsRotate) {
  const int64_t B = 2, T = 5, heads = 2, dh = 8;
  const IntTensor p = random_positions(B, T, 300, 9);
  for (int64_t pairs = 1; pairs <= 3; ++pairs) {
    const int64_t dr = 2 * pairs;
    const RotaryAngles angles(dh, 100.0, {.pairs = pairs});
    Tensor x = random_tensor({B, T, heads * dh}, 5);
    x.set_requires_grad(true);
    const Tensor y = rotary(x, p, heads, angles);
    const Tensor w = random_tensor({B, T, heads * dh}, 6);
    sum_all(mul(y, w)).backward();
    Tensor front = Tensor::empty({B, T, heads * dr});  // each head's first d_r features
    for (int64_t t = 0; t < B * T; ++t)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t f = 0; f < dr; ++f)
          front.data()[(t * heads + h) * dr + f] = x.data()[(t * heads + h) * dh + f];
    const Tensor expected = rotary(front, p, heads, 100.0);
    for (int64_t t = 0; t < B * T; ++t)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t f = 0; f < dh; ++f) {
          const int64_t at = (t * heads + h) * dh + f;
          if (f < dr) {
            EXPECT_EQ(y.data()[at], expected.data()[(t * heads + h) * dr + f])
                << pairs << " " << at;
          } else {
            EXPECT_EQ(y.data()[at], x.data()[at]) << pairs << " " << at;
            EXPECT_EQ(x.grad().data()[at], w.data()[at]) << pairs << " " << at;
          }
        }
  }
}

// A unit vector on pair i comes out as μ·(cos a, sin a), a the pair's angle: each scaling's
// angles against MODEL.md's formulas, computed here in double from the contract's text.
// YaRN at d_r = 8, base 100, L = 1000: κ(32) ≈ 1.39 and κ(1) ≈ 4.40, so lo = 1, hi = 5 and
// γ = 0, 0, 1/4, 1/2 (worked by hand).
TEST(RotaryOptions, ScalingsFollowTheFormulas) {
  const int64_t dh = 8, half = 4, T = 7;
  const double base = 100.0;
  const double dr = 8.0;
  const auto theta = [&](double b, int64_t i) {
    return std::pow(b, -2.0 * static_cast<double>(i) / dr);
  };
  struct Case {
    std::string name;
    RotaryOptions options;
    std::function<double(double m, int64_t i, double n)> angle;
    double mu = 1.0;
  };
  const double yarn_gamma[half] = {0.0, 0.0, 0.25, 0.5};
  const std::vector<Case> cases = {
      {"pi",
       {.scaling = Scaling::Pi, .factor = 4.0},
       [&](double m, int64_t i, double) { return m / 4.0 * theta(base, i); }},
      {"ntk",
       {.scaling = Scaling::Ntk, .factor = 3.0},
       [&](double m, int64_t i, double) {
         return m * theta(base * std::pow(3.0, dr / (dr - 2)), i);
       }},
      {"dynamic_ntk",
       {.scaling = Scaling::DynamicNtk, .factor = 2.0, .original_length = 5},
       [&](double m, int64_t i, double n) {
         const double b = n > 5 ? base * std::pow(2.0 * n / 5.0 - 1.0, dr / (dr - 2)) : base;
         return m * theta(b, i);
       }},
      {"yarn",
       {.scaling = Scaling::Yarn, .factor = 4.0, .original_length = 1000},
       [&](double m, int64_t i, double) {
         return m * (theta(base, i) * (1 - yarn_gamma[i]) + theta(base, i) / 4.0 * yarn_gamma[i]);
       },
       0.1 * std::log(4.0) + 1.0}};
  // Row 0: 7 real tokens (n = 7 > L = 5); row 1: 4 real ones (n = 4), its padding at
  // positions past L that dynamic NTK must not count.
  const IntTensor positions({2, T}, {0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 40, 50, 60});
  const IntTensor mask({2, T}, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0});
  for (const Case& c : cases) {
    const RotaryAngles angles(dh, base, c.options);
    for (int64_t i = 0; i < half; ++i) {
      Tensor x = Tensor::zeros({2, T, dh});
      for (int64_t t = 0; t < 2 * T; ++t) x.data()[t * dh + 2 * i] = 1.0f;
      const Tensor y = rotary(x, positions, 1, angles, mask);
      for (int64_t t = 0; t < 2 * T; ++t) {
        const double n = t < T ? 7.0 : 4.0;
        const double a = c.angle(positions.values[t], i, n);
        EXPECT_NEAR(y.data()[t * dh + 2 * i], c.mu * std::cos(a), 2e-6)
            << c.name << " " << i << " " << t;
        EXPECT_NEAR(y.data()[t * dh + 2 * i + 1], c.mu * std::sin(a), 2e-6)
            << c.name << " " << i << " " << t;
      }
    }
  }
}

// Dynamic NTK takes each sequence's own n: a row's output is the same alone as next to a
// longer row, and a padded token's position does not count; a real token's does.
TEST(RotaryOptions, DynamicNtkReadsEachSequenceAlone) {
  const int64_t T = 6, dh = 8;
  const RotaryAngles angles(dh, 100.0,
                            {.scaling = Scaling::DynamicNtk, .factor = 2.0, .original_length = 4});
  const Tensor x = random_tensor({2, T, dh}, 7);
  const IntTensor positions({2, T}, {0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5});
  const IntTensor mask({2, T}, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0});
  const std::vector<float> both = rotary(x, positions, 1, angles, mask).to_vector();
  const Tensor row1 = slice(x, 0, 1, 2);
  const std::vector<float> alone = rotary(row1, IntTensor({1, T}, {0, 1, 2, 3, 4, 5}), 1, angles,
                                          IntTensor({1, T}, {1, 1, 1, 1, 1, 0}))
                                       .to_vector();
  EXPECT_EQ(std::vector<float>(both.begin() + T * dh, both.end()), alone);
  const std::vector<float> far_padding = rotary(row1, IntTensor({1, T}, {0, 1, 2, 3, 4, 900}), 1,
                                                angles, IntTensor({1, T}, {1, 1, 1, 1, 1, 0}))
                                             .to_vector();
  EXPECT_EQ(std::vector<float>(alone.begin(), alone.begin() + 5 * dh),
            std::vector<float>(far_padding.begin(), far_padding.begin() + 5 * dh));
  const std::vector<float> all_real =
      rotary(row1, IntTensor({1, T}, {0, 1, 2, 3, 4, 5}), 1, angles, IntTensor({1, T}, 1))
          .to_vector();
  EXPECT_GT(max_abs_diff(alone, all_real), 1e-3f) << "n = 6 against n = 5 must change the angles";
  EXPECT_THROW(rotary(row1, IntTensor({1, T}, 0), 1, angles), Error) << "no key mask";
}

// The kept table and the per-token angles agree bit for bit under every fixed scaling.
TEST(RotaryOptions, KeptAnglesGiveTheDirectValuesBitForBit) {
  const int64_t B = 2, T = 8, heads = 2, dh = 8;
  const IntTensor near = random_positions(B, T, 1000, 3);
  IntTensor far = near;
  far.values.back() = 1 << 22;  // forces per-token angles for the whole call
  for (const RotaryOptions& o :
       {RotaryOptions{.pairs = 3, .scaling = Scaling::Pi, .factor = 2.5},
        RotaryOptions{.pairs = 2, .scaling = Scaling::Ntk, .factor = 3.0},
        RotaryOptions{.scaling = Scaling::Yarn, .factor = 8.0, .original_length = 64}}) {
    const RotaryAngles angles(dh, 10000.0, o);
    const auto kept =
        run([&](const Tensor& x) { return rotary(x, near, heads, angles); }, {B, T, heads * dh});
    const auto direct =
        run([&](const Tensor& x) { return rotary(x, far, heads, angles); }, {B, T, heads * dh});
    const size_t last = static_cast<size_t>(heads * dh);  // the last token's features differ
    EXPECT_EQ(std::vector<float>(kept.first.begin(), kept.first.end() - last),
              std::vector<float>(direct.first.begin(), direct.first.end() - last));
    EXPECT_EQ(std::vector<float>(kept.second.begin(), kept.second.end() - last),
              std::vector<float>(direct.second.begin(), direct.second.end() - last));
  }
}

// Floats as their bit patterns, so that −0 and +0 differ and equal NaNs match.
std::vector<uint32_t> rotary_bits(const std::vector<float>& v) {
  std::vector<uint32_t> bits(v.size());
  std::transform(v.begin(), v.end(), bits.begin(),
                 [](float f) { return std::bit_cast<uint32_t>(f); });
  return bits;
}

// Heads of width 8 and 16 rotate as one vector each; every other width, and these when asked,
// pair by pair. Forward (direction +1) and gradient (the inverse rotation of the incoming
// gradient) must be the same bits, at positions whose angles take every quadrant. The control
// rounds each pair's rotation once, in double, and must differ somewhere: the comparison can
// tell.
TEST(RotaryHeads, WholeHeadVectorsGiveThePairByPairBits) {
  for (const int64_t dh : {8, 16}) {
    for (const int64_t heads : {1, 3}) {
      SCOPED_TRACE("d_h " + std::to_string(dh) + ", heads " + std::to_string(heads));
      const Shape shape{2, 9, heads * dh};
      const IntTensor positions = random_positions(2, 9, 5000, 11);
      const double base = 10000.0;
      const auto [y, dx] =
          run([&](const Tensor& x) { return rotary(x, positions, heads, base); }, shape);
      const Tensor x = random_tensor(shape, 3), upstream = random_tensor(shape, 4);
      const std::vector<float> loop_y =
          rotary_pair_by_pair(x, positions, heads, base, 1.0f).to_vector();
      EXPECT_EQ(rotary_bits(y), rotary_bits(loop_y));
      EXPECT_EQ(
          rotary_bits(dx),
          rotary_bits(rotary_pair_by_pair(upstream, positions, heads, base, -1.0f).to_vector()));

      std::vector<float> rounded_once(loop_y.size());
      const std::vector<float> xs = x.to_vector();
      const int64_t half = dh / 2;
      for (size_t e = 0; e < xs.size(); e += 2) {
        const auto token = static_cast<int64_t>(e) / (heads * dh);
        const auto i = (static_cast<int64_t>(e) % dh) / 2;
        const double angle =
            positions.values[token] *
            std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(2 * half));
        const double c = static_cast<float>(std::cos(angle)),
                     sn = static_cast<float>(std::sin(angle));
        rounded_once[e] = static_cast<float>(xs[e] * c - xs[e + 1] * sn);
        rounded_once[e + 1] = static_cast<float>(xs[e] * sn + xs[e + 1] * c);
      }
      // The same rotation up to its last bits, so that the difference is rounding alone.
      for (size_t e = 0; e < xs.size(); ++e) EXPECT_NEAR(rounded_once[e], loop_y[e], 1e-5f) << e;
      EXPECT_NE(rotary_bits(rounded_once), rotary_bits(loop_y));
    }
  }
}

TEST(RotaryOptions, BadOptionsAreRefused) {
  EXPECT_THROW(RotaryAngles(8, 100.0, {.pairs = 5}), Error);
  EXPECT_THROW(RotaryAngles(8, 100.0, {.pairs = -1}), Error);
  EXPECT_THROW(RotaryAngles(8, 100.0, {.scaling = Scaling::Pi, .factor = 0.5}), Error);
  EXPECT_THROW(RotaryAngles(8, 100.0, {.scaling = Scaling::Pi, .factor = INFINITY}), Error);
  EXPECT_THROW(RotaryAngles(8, 100.0, {.pairs = 1, .scaling = Scaling::Ntk, .factor = 2.0}), Error);
  EXPECT_THROW(RotaryAngles(8, 100.0, {.scaling = Scaling::Yarn, .factor = 2.0}), Error);
  EXPECT_THROW(RotaryAngles(8, 100.0, {.scaling = Scaling::DynamicNtk, .factor = 2.0}), Error);
  EXPECT_NO_THROW(RotaryAngles(8, 100.0, {.pairs = 2, .scaling = Scaling::Ntk, .factor = 2.0}));
}

}  // namespace
}  // namespace pelab::testing
