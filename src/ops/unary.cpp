// Elementwise unary math. Each op: forward f, backward dx = dy ⊙ f'(x) (from x or y).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

#include "op_util.h"
#include "pelab/core/fast_math.h"
#include "pelab/ops/ops.h"

namespace pelab {

namespace {
// dx = dy ⊙ d(saved), where d maps the saved value (x or y) to f'(x).
template <class Deriv>
TensorList chain(const Tensor& g, const Tensor& saved, Deriv d) {
  const Tensor dfx = detail::map_unary(saved, d);
  return TensorList{mul(g, dfx)};
}

template <class F, class Deriv>
Tensor unary_from_x(const Tensor& x, const char* name, F f, Deriv d) {
  Tensor y = detail::map_unary(x, f);
  if (needs_grad(x))
    record(y, name, {x}, [xd = x.detach(), d](const Tensor& g) { return chain(g, xd, d); });
  return y;
}

template <class F, class Deriv>
Tensor unary_from_y(const Tensor& x, const char* name, F f, Deriv d) {
  Tensor y = detail::map_unary(x, f);
  if (needs_grad(x))
    record(y, name, {x}, [yd = y.detach(), d](const Tensor& g) { return chain(g, yd, d); });
  return y;
}

constexpr float kInvSqrt2 = 0.70710678118654752f;
constexpr float kInvSqrt2Pi = 0.39894228040143268f;

// y = x·Φ(x) and, when kKeepCdf, Φ(x) = ½(1 + erf(x/√2)) into cdf, over n elements, erf
// computed by `erf`.
template <bool kKeepCdf, class Erf>
inline void gelu_span(const float* __restrict x, float* __restrict y, float* __restrict cdf,
                      int64_t n, Erf erf) {
  for (int64_t k = 0; k < n; ++k) {
    const float c = 0.5f * (1.0f + erf(x[k] * kInvSqrt2));
    if constexpr (kKeepCdf) cdf[k] = c;
    y[k] = x[k] * c;
  }
}

// GELU's forward over n elements (cdf as in gelu_span). fast_erf evaluates both of its
// branches for every element so that the loop vectorises; a block of eight (one AVX2 vector)
// whose arguments x/√2 all lie in [−1, 1] takes fast_erf_near_zero instead, which skips the
// second branch (a degree-12 polynomial and an exp) and gives the same bits, so which blocks
// take it changes no result. At initialisation every block does; over the 1500 steps of
// configs/default.yaml 36% of the blocks do.
template <bool kKeepCdf>
void gelu_forward(const float* x, float* y, float* cdf, int64_t n) {
  constexpr int64_t kBlock = 8;
  const auto full = [](float v) { return fast_erf(v); };
  const auto near_zero = [](float v) { return fast_erf_near_zero(v); };
  int64_t k = 0;
  for (; k + kBlock <= n; k += kBlock) {
    // |x/√2| ≤ 1 tested on the bits: with the sign cleared, at most 1.0f's (every NaN's are
    // larger), as an integer max that GCC turns into vector code.
    uint32_t max_abs_bits = 0;
    for (int64_t j = 0; j < kBlock; ++j)
      max_abs_bits =
          std::max(max_abs_bits, std::bit_cast<uint32_t>(x[k + j] * kInvSqrt2) & 0x7fffffffu);
    float* const cdf_block = kKeepCdf ? cdf + k : nullptr;
    if (max_abs_bits <= std::bit_cast<uint32_t>(1.0f))
      gelu_span<kKeepCdf>(x + k, y + k, cdf_block, kBlock, near_zero);
    else
      gelu_span<kKeepCdf>(x + k, y + k, cdf_block, kBlock, full);
  }
  gelu_span<kKeepCdf>(x + k, y + k, kKeepCdf ? cdf + k : nullptr, n - k, full);
}
}  // namespace

// backward: dx = −dy.
Tensor neg(const Tensor& x) {
  Tensor y = detail::map_unary(x, [](float v) { return -v; });
  if (needs_grad(x)) record(y, "neg", {x}, [](const Tensor& g) { return TensorList{neg(g)}; });
  return y;
}

// backward: dx = dy ⊙ y.
Tensor exp(const Tensor& x) {
  return unary_from_y(
      x, "exp", [](float v) { return std::exp(v); }, [](float y) { return y; });
}

// backward: dx = dy / x.
Tensor log(const Tensor& x) {
  return unary_from_x(
      x, "log", [](float v) { return std::log(v); }, [](float v) { return 1.0f / v; });
}

// backward: dx = dy ⊙ cos x.
Tensor sin(const Tensor& x) {
  return unary_from_x(
      x, "sin", [](float v) { return std::sin(v); }, [](float v) { return std::cos(v); });
}

// backward: dx = −dy ⊙ sin x.
Tensor cos(const Tensor& x) {
  return unary_from_x(
      x, "cos", [](float v) { return std::cos(v); }, [](float v) { return -std::sin(v); });
}

// backward: dx = dy / (2y).
Tensor sqrt(const Tensor& x) {
  return unary_from_y(
      x, "sqrt", [](float v) { return std::sqrt(v); }, [](float y) { return 0.5f / y; });
}

// backward: dx = 2x ⊙ dy.
Tensor square(const Tensor& x) {
  return unary_from_x(
      x, "square", [](float v) { return v * v; }, [](float v) { return 2.0f * v; });
}

// backward: dx = sign(x) ⊙ dy (0 at x = 0).
Tensor abs(const Tensor& x) {
  return unary_from_x(
      x, "abs", [](float v) { return std::fabs(v); },
      [](float v) { return v > 0.0f ? 1.0f : (v < 0.0f ? -1.0f : 0.0f); });
}

// backward: dx = dy ⊙ (1 − y²).
Tensor tanh(const Tensor& x) {
  return unary_from_y(
      x, "tanh", [](float v) { return std::tanh(v); }, [](float y) { return 1.0f - y * y; });
}

// backward: dx = dy ⊙ [x > 0].
// The backward reads y, not x (y > 0 exactly where x > 0), so the op's input, the linear
// layer's output, is freed after the forward while y, which the next layer saves anyway, is
// the one tensor kept.
Tensor relu(const Tensor& x) {
  return unary_from_y(
      x, "relu", [](float v) { return v > 0.0f ? v : 0.0f; },
      [](float y) { return y > 0.0f ? 1.0f : 0.0f; });
}

// Exact GELU, x·Φ(x) with Φ(x) = ½(1 + erf(x/√2)).
// backward: dx = dy ⊙ (Φ(x) + x·φ(x)), φ the standard normal density.
// erf and exp are the vectorising fast_erf / fast_exp (core/fast_math.h, within ~2 ulp of
// libm; gelu_forward above for the blocks near zero). When a gradient is needed the forward
// keeps Φ(x), so the backward is one pass with one exp per element instead of an erf and an
// exp.
Tensor gelu(const Tensor& x) {
  const Tensor xc = x.contiguous().detach();
  const bool grad = needs_grad(x);
  Tensor y = Tensor::empty(x.shape());
  Tensor cdf = grad ? Tensor::empty(x.shape()) : Tensor();
  const float* px = xc.data();
  float* py = y.data();
  float* pc = grad ? cdf.data() : nullptr;
  parallel_for(0, y.numel(), detail::kElementwiseGrain, [&](int64_t lo, int64_t hi) {
    if (pc)
      gelu_forward<true>(px + lo, py + lo, pc + lo, hi - lo);
    else
      gelu_forward<false>(px + lo, py + lo, nullptr, hi - lo);
  });
  if (grad) {
    record(y, "gelu", {x}, [xc, cdf](const Tensor& g) {
      const Tensor gc = g.contiguous();
      Tensor dx = Tensor::empty(xc.shape());
      const float* xs = xc.data();
      const float* cs = cdf.data();
      const float* gs = gc.data();
      float* pd = dx.data();
      parallel_for(0, dx.numel(), detail::kElementwiseGrain, [&](int64_t lo, int64_t hi) {
        for (int64_t k = lo; k < hi; ++k) {
          const float v = xs[k];
          pd[k] = gs[k] * (cs[k] + v * kInvSqrt2Pi * fast_exp(-0.5f * v * v));
        }
      });
      return TensorList{dx};
    });
  }
  return y;
}

}  // namespace pelab
