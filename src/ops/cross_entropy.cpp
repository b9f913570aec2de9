// cross_entropy: logits [N, C], targets [N] → the mean over the K scored rows (targets not
// equal to ignore_index) of ℓ_r = logsumexp(x_r) − x_r[t_r], fused and stable.
// backward: dx_r = dy · (softmax(x_r) − onehot(t_r)) / K on scored rows, 0 on ignored rows.
// The forward keeps each row's logsumexp, so the backward needs one exp per element. Rows
// run in parallel; the per-row losses are summed in double in row order afterwards, so the
// result does not depend on the thread count.
#include <cmath>
#include <limits>
#include <memory>

#include "op_util.h"
#include "pelab/ops/ops.h"

namespace pelab {

namespace {
int64_t row_grain(int64_t classes) {
  return std::max<int64_t>(1, detail::kElementwiseGrain / std::max<int64_t>(classes, 1));
}

// dlogits from the saved logits, row logsumexps and targets; `scale` = dy / K.
Tensor cross_entropy_backward(const Tensor& logits, const std::vector<float>& lse,
                              const std::vector<int32_t>& targets, int32_t ignore_index,
                              float scale) {
  const int64_t rows = logits.size(0), classes = logits.size(1);
  Tensor dx = Tensor::empty(logits.shape());
  const float* x = logits.data();
  float* d = dx.data();
  parallel_for(0, rows, row_grain(classes), [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) {
      float* dr = d + r * classes;
      const int32_t t = targets[r];
      if (t == ignore_index) {
        std::fill_n(dr, classes, 0.0f);
        continue;
      }
      const float* xr = x + r * classes;
      for (int64_t c = 0; c < classes; ++c) dr[c] = std::exp(xr[c] - lse[r]) * scale;
      dr[t] -= scale;
    }
  });
  return dx;
}
}  // namespace

Tensor cross_entropy(const Tensor& logits, const IntTensor& targets, int32_t ignore_index) {
  PELAB_CHECK(logits.ndim() == 2, "cross_entropy: logits must be [rows, classes], got {}",
              to_string(logits.shape()));
  const int64_t rows = logits.size(0), classes = logits.size(1);
  PELAB_CHECK(targets.shape == Shape{rows} && targets.numel() == rows,
              "cross_entropy: targets {} must be [{}] to match logits {}", to_string(targets.shape),
              rows, to_string(logits.shape()));
  const int32_t* t = targets.data();
  int64_t scored = 0;
  for (int64_t r = 0; r < rows; ++r) {
    if (t[r] == ignore_index) continue;
    PELAB_CHECK(t[r] >= 0 && t[r] < classes,
                "cross_entropy: target {} in row {} is outside [0, {}) and is not the "
                "ignore_index {} (logits {})",
                t[r], r, classes, ignore_index, to_string(logits.shape()));
    ++scored;
  }
  PELAB_CHECK(scored > 0,
              "cross_entropy: a batch with no scored position (all {} targets equal the "
              "ignore_index {})",
              rows, ignore_index);

  const Tensor xc = logits.contiguous().detach();
  const float* x = xc.data();
  auto lse = std::make_shared<std::vector<float>>(static_cast<size_t>(rows), 0.0f);
  std::vector<double> loss(static_cast<size_t>(rows), 0.0);
  parallel_for(0, rows, row_grain(classes), [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) {
      if (t[r] == ignore_index) continue;
      const float* xr = x + r * classes;
      float m = -std::numeric_limits<float>::infinity();
      for (int64_t c = 0; c < classes; ++c) m = xr[c] > m ? xr[c] : m;
      double s = 0.0;
      for (int64_t c = 0; c < classes; ++c) s += std::exp(xr[c] - m);
      const double l = static_cast<double>(m) + std::log(s);
      (*lse)[r] = static_cast<float>(l);
      loss[r] = l - xr[t[r]];
    }
  });
  double total = 0.0;
  for (int64_t r = 0; r < rows; ++r) total += loss[r];
  Tensor y = Tensor::scalar(static_cast<float>(total / static_cast<double>(scored)));

  if (needs_grad(logits)) {
    record(y, "cross_entropy", {logits},
           [xc, lse, values = targets.values, ignore_index, scored](const Tensor& g) {
             const float scale = g.item() / static_cast<float>(scored);
             return TensorList{cross_entropy_backward(xc, *lse, values, ignore_index, scale)};
           });
  }
  return y;
}

}  // namespace pelab
