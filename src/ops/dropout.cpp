// dropout (inverted): y_i = x_i · k_i / (1 − p) with the keep mask k_i = [u(seed, c(i)) ≥ p],
// u = counter_uniform and c(i) = r·2³² + j the counter of element i at row r (of the rows of
// the last dimension, row-major) and column j: each row starts a span of counters, so the
// mask's vector path runs over whole blocks from every row's start, and the fused attention
// (whose rows are α's rows) draws the same mask as dropout() on α.
// backward: dx_i = dy_i · k_i / (1 − p), the mask recomputed from (seed, i) rather than stored.
// Because k_i is a pure function of (seed, i), the mask is the same for every thread count
// and every split of the work. p = 0 returns x itself (no copy, no graph node).
#include <algorithm>
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
  const int64_t cols = x.ndim() == 0 ? 1 : x.size(-1), rows = cols ? x.numel() / cols : 0;
  PELAB_CHECK(cols < (int64_t{1} << 32), "dropout: a last dimension of {} is 2^32 or more", cols);
  const int64_t grain =
      std::max<int64_t>(1, detail::kElementwiseGrain / std::max<int64_t>(cols, 1));
  parallel_for(0, rows, grain, [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r)
      apply_counter_mask(seed, static_cast<uint64_t>(r) << 32, cols, p, scale, in + r * cols,
                         o + r * cols);
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
