// rotary: each head's pairs (x₂ᵢ, x₂ᵢ₊₁) of token (b, t) rotated by the angle m·θ_i,
// m = positions[b, t], θ_i = base^(−2i/d_h):
//   x'₂ᵢ   = x₂ᵢ cos mθ_i − x₂ᵢ₊₁ sin mθ_i
//   x'₂ᵢ₊₁ = x₂ᵢ sin mθ_i + x₂ᵢ₊₁ cos mθ_i
// backward: a rotation is orthogonal, so dx is dy rotated by −mθ_i.
// Angles are formed in double precision: positions can be large (randomized positions,
// long evaluation) and m·θ_i in float32 would lose the low bits of the angle.
#include <cmath>

#include "op_util.h"
#include "pelab/ops/ops.h"

namespace pelab {

namespace {
// cos/sin of m·θ_i for every token and pair: [B·T, d_h/2] each.
struct Angles {
  std::vector<float> cos, sin;
};

Angles angles(const IntTensor& positions, int64_t half, double base) {
  Angles a;
  const int64_t n = positions.numel();
  a.cos.resize(static_cast<size_t>(n * half));
  a.sin.resize(a.cos.size());
  std::vector<double> theta(static_cast<size_t>(half));
  for (int64_t i = 0; i < half; ++i)
    theta[i] = std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(2 * half));
  parallel_for(0, n, 64, [&](int64_t lo, int64_t hi) {
    for (int64_t t = lo; t < hi; ++t)
      for (int64_t i = 0; i < half; ++i) {
        const double angle = static_cast<double>(positions.values[t]) * theta[i];
        a.cos[t * half + i] = static_cast<float>(std::cos(angle));
        a.sin[t * half + i] = static_cast<float>(std::sin(angle));
      }
  });
  return a;
}

// out = x rotated by `direction`·angle (+1 forward, −1 backward).
Tensor rotate(const Tensor& x, const Angles& a, int64_t heads, float direction) {
  const Tensor xc = x.contiguous();
  const int64_t d = x.size(-1), dh = d / heads, half = dh / 2;
  const int64_t tokens = x.numel() / d;
  Tensor out = Tensor::empty(x.shape());
  const float* in = xc.data();
  float* o = out.data();
  parallel_for(0, tokens, 64, [&](int64_t lo, int64_t hi) {
    for (int64_t t = lo; t < hi; ++t) {
      const float* c = a.cos.data() + t * half;
      const float* s = a.sin.data() + t * half;
      for (int64_t h = 0; h < heads; ++h) {
        const float* xi = in + t * d + h * dh;
        float* yo = o + t * d + h * dh;
        for (int64_t i = 0; i < half; ++i) {
          const float x0 = xi[2 * i], x1 = xi[2 * i + 1], sn = direction * s[i];
          yo[2 * i] = x0 * c[i] - x1 * sn;
          yo[2 * i + 1] = x0 * sn + x1 * c[i];
        }
      }
    }
  });
  return out;
}
}  // namespace

Tensor rotary(const Tensor& x, const IntTensor& positions, int64_t heads, double base) {
  PELAB_CHECK(x.ndim() == 3, "rotary: x must be [B, T, d], got {}", to_string(x.shape()));
  PELAB_CHECK(positions.shape == Shape({x.size(0), x.size(1)}),
              "rotary: positions {} do not match x {}", to_string(positions.shape),
              to_string(x.shape()));
  PELAB_CHECK(heads >= 1 && x.size(2) % heads == 0, "rotary: {} heads do not divide d = {}", heads,
              x.size(2));
  const int64_t dh = x.size(2) / heads;
  PELAB_CHECK(dh % 2 == 0, "rotary needs an even head width, got d_h = {}", dh);
  PELAB_CHECK(base > 0.0, "rotary: base must be positive, got {}", base);
  auto table = std::make_shared<Angles>(angles(positions, dh / 2, base));
  Tensor y = rotate(x, *table, heads, 1.0f);
  if (needs_grad(x)) {
    record(y, "rotary", {x},
           [table, heads](const Tensor& g) { return TensorList{rotate(g, *table, heads, -1.0f)}; });
  }
  return y;
}

}  // namespace pelab
