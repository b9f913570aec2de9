// exp and erf in float32 as branch-free inline code, so that loops over arrays of them
// vectorise (libm's expf/erff are scalar calls; -ffast-math is not an option, see
// CMakeLists.txt). Accuracy, checked against double-precision libm by
// tests/core/fast_math_test.cpp:
//   fast_exp: relative error ≤ 2 ulp over the whole float range (0 below ≈ −103.97, where
//             exp underflows to zero; +inf above ≈ 88.72; NaN stays NaN)
//   fast_erf: absolute error ≤ 1.3e-7 (about 1 ulp of 1.0) everywhere, ≤ 2.5 ulp for |x| ≤ 1
//             — as accurate as glibc's erff where erf(x) is near ±1, which is what exact GELU
//             (x·½(1 + erf(x/√2))) depends on.
//   fast_erf_near_zero: fast_erf's first branch alone, for |x| ≤ 1: the same bits as
//             fast_erf there, without the second branch's polynomial and exp.
#pragma once

#include <bit>
#include <cstdint>

namespace pelab {

namespace detail {
// fast_exp's constants, shared with the vector kernels that evaluate it lane by lane
// (src/nn/attention_lanes_body.h).
namespace exp_constants {
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2Hi = 0.693359375f;
constexpr float kLn2Lo = -2.12194440e-4f;
constexpr float kRound = 12582912.0f;  // 1.5·2²³: adding it rounds to an integer
constexpr float kLowest = -104.0f;     // below: exp underflows to 0
constexpr float kClampHigh = 89.0f;
constexpr float kOverflow = 88.7228394f;  // above: +inf
// exp(r) ≈ 1 + r + r²·P(r), P's coefficients from the highest degree down.
constexpr float kPoly[6] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                            4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};
}  // namespace exp_constants
}  // namespace detail

// exp(x) = 2ⁿ·exp(r), n = round(x/ln 2), r = x − n·ln 2 ∈ [−ln2/2, ln2/2] (Cody–Waite, ln 2
// split in two so that n·ln2_hi is exact), exp(r) by Cephes' degree-6 polynomial. 2ⁿ is
// applied as two factors 2^⌊n/2⌋·2^(n−⌊n/2⌋) so that results near overflow and in the
// subnormal range come out right.
inline float fast_exp(float x) {
  using namespace detail::exp_constants;
  // Written so that NaN clamps to −104 too: the float → int conversion below must only ever
  // see finite values (NaN's result is chosen at the end).
  const float xc = x > kLowest ? (x < kClampHigh ? x : kClampHigh) : kLowest;
  const float nf = (xc * kLog2e + kRound) - kRound;
  float r = __builtin_fmaf(nf, -kLn2Hi, xc);
  r = __builtin_fmaf(nf, -kLn2Lo, r);
  float p = kPoly[0];
  p = __builtin_fmaf(p, r, kPoly[1]);
  p = __builtin_fmaf(p, r, kPoly[2]);
  p = __builtin_fmaf(p, r, kPoly[3]);
  p = __builtin_fmaf(p, r, kPoly[4]);
  p = __builtin_fmaf(p, r, kPoly[5]);
  const float r2 = r * r;
  const float e = __builtin_fmaf(p, r2, r) + 1.0f;
  const int32_t n = static_cast<int32_t>(nf);
  const int32_t n1 = n >> 1, n2 = n - n1;
  const float s1 = std::bit_cast<float>((n1 + 127) << 23);
  const float s2 = std::bit_cast<float>((n2 + 127) << 23);
  float y = e * s1 * s2;
  y = x < kLowest ? 0.0f : y;
  y = x > kOverflow ? __builtin_inff() : y;
  return x != x ? x : y;
}

namespace detail {
// erf(a) = a·P(a²) for 0 ≤ a ≤ 1 (P of degree 6 in s = a²; a may be −0): the one copy both
// erf functions below evaluate. The product a·P is rounded on its own, written as an FMA that
// adds −0 (the same bits as a * P for every a, −0 included): as a plain product the compiler
// could fuse it into the caller's next addition in one place and not in another (GELU's
// 1 + erf), and the two would differ in the last bit.
inline float erf_near_zero_abs(float a, float s) {
  float p = 7.882498793e-05f;
  p = __builtin_fmaf(p, s, -8.018857009e-04f);
  p = __builtin_fmaf(p, s, 5.189312378e-03f);
  p = __builtin_fmaf(p, s, -2.685432917e-02f);
  p = __builtin_fmaf(p, s, 1.128359748e-01f);
  p = __builtin_fmaf(p, s, -3.761262691e-01f);
  p = __builtin_fmaf(p, s, 1.128379166e+00f);
  return __builtin_fmaf(a, p, -0.0f);
}
}  // namespace detail

// erf(x): for |x| ≤ 1, x·P(x²) (degree 6 in x²); for 1 < |x| < 4,
// 1 − exp(−x²)·Q(|x| − 2.5) with Q ≈ erfc(x)·exp(x²) (degree 12); beyond 4, ±1 (the float
// nearest to erf(4) is 1). Least-squares fits on Chebyshev nodes, relative error of P and Q
// below 1e-8. Both branches are evaluated for every x (that is what lets a loop of it
// vectorise); fast_erf_near_zero below is the first alone.
inline float fast_erf(float x) {
  const float a = x < 0.0f ? -x : x;
  const float s = x * x;
  const float small = detail::erf_near_zero_abs(a, s);
  const float u = (a > 4.0f ? 4.0f : a) - 2.5f;
  float q = 1.065094089e-07f;
  q = __builtin_fmaf(q, u, -4.269374781e-07f);
  q = __builtin_fmaf(q, u, 9.528637816e-07f);
  q = __builtin_fmaf(q, u, -3.744412178e-06f);
  q = __builtin_fmaf(q, u, 1.617347311e-05f);
  q = __builtin_fmaf(q, u, -5.952956972e-05f);
  q = __builtin_fmaf(q, u, 2.108489694e-04f);
  q = __builtin_fmaf(q, u, -7.331466830e-04f);
  q = __builtin_fmaf(q, u, 2.467101966e-03f);
  q = __builtin_fmaf(q, u, -8.001696395e-03f);
  q = __builtin_fmaf(q, u, 2.493798781e-02f);
  q = __builtin_fmaf(q, u, -7.434733646e-02f);
  q = __builtin_fmaf(q, u, 2.108063643e-01f);
  const float sc = s > 16.0f ? 16.0f : s;
  const float large = 1.0f - fast_exp(-sc) * q;
  const float m = a <= 1.0f ? small : large;
  const float r = x < 0.0f ? -m : m;
  return x != x ? x : r;
}

// fast_erf(x) for |x| ≤ 1 only — the same operations as fast_erf's first branch, so the same
// bits (tests/core/fast_math_test.cpp checks it). Outside [−1, 1] the result is meaningless.
inline float fast_erf_near_zero(float x) {
  const float a = x < 0.0f ? -x : x;
  const float m = detail::erf_near_zero_abs(a, x * x);
  return x < 0.0f ? -m : m;
}

}  // namespace pelab
