// dropout (inverted): y_i = x_i · k_i / (1 − p) with the keep mask k_i = [u(seed, i) ≥ p],
// u = counter_uniform and i the row-major element index.
// backward: dx_i = dy_i · k_i / (1 − p), the mask recomputed from (seed, i) rather than stored.
// Because k_i is a pure function of (seed, i), the mask is the same for every thread count
// and every split of the work. p = 0 returns x itself (no copy, no graph node).
#include <cmath>

#include "op_util.h"
#include "pelab/core/rng.h"
#include "pelab/ops/ops.h"

namespace pelab {

namespace {
// y_i = x_i · k_i · scale over a contiguous x.
Tensor apply_mask(const Tensor& x, float p, uint64_t seed) {
  const Tensor xc = x.contiguous().detach();
  const float scale = 1.0f / (1.0f - p);
  Tensor y = Tensor::empty(x.shape());
  const float* in = xc.data();
  float* o = y.data();
  parallel_for(0, x.numel(), detail::kElementwiseGrain, [&](int64_t lo, int64_t hi) {
    // Copies, not the captured references: a store through o could alias a float the
    // lambda refers to, and reloading it every element kept the loop from vectorising.
    const float* __restrict src = in;
    float* __restrict dst = o;
    const float drop_p = p, keep_scale = scale;
    const uint64_t mask_seed = seed;
    for (int64_t i = lo; i < hi; ++i)
      dst[i] = counter_uniform(mask_seed, static_cast<uint64_t>(i)) >= drop_p ? src[i] * keep_scale
                                                                              : 0.0f;
  });
  return y;
}
}  // namespace

Tensor dropout(const Tensor& x, float p, uint64_t seed) {
  PELAB_CHECK(p >= 0.0f && p < 1.0f, "dropout: p = {} must be in [0, 1) (x {})", p,
              to_string(x.shape()));
  if (p == 0.0f) return x;
  Tensor y = apply_mask(x, p, seed);
  if (needs_grad(x)) {
    record(y, "dropout", {x},
           [p, seed](const Tensor& g) { return TensorList{apply_mask(g, p, seed)}; });
  }
  return y;
}

}  // namespace pelab
