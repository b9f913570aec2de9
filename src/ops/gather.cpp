// gather_last and scatter_add_last along the last axis; each is the other's gradient.
// gather_last:      y[..., j] = x[..., index[..., j]];   backward: dx = scatter_add_last(dy, index,
// n) scatter_add_last: y[..., index[..., j]] += x[..., j];  backward: dx = gather_last(dy, index)
// Both run one row (all axes but the last) per task, so every output element is written by
// one thread in a fixed order; scatter_add_last sums repeated indices in double.
#include <string>

#include "op_util.h"
#include "pelab/ops/ops.h"

namespace pelab {

namespace {
// Every value of `index` must lie in [0, limit).
void check_values(const char* op, const IntTensor& index, int64_t limit, const Shape& x_shape) {
  PELAB_CHECK(numel(index.shape) == index.numel(), "{}: index holds {} values for shape {}", op,
              index.numel(), to_string(index.shape));
  const int32_t* p = index.data();
  for (int64_t i = 0; i < index.numel(); ++i) {
    PELAB_CHECK(p[i] >= 0 && p[i] < limit,
                "{}: index{} = {} is outside [0, {}) (index shape {}, x shape {})", op,
                detail::index_string(i, index.shape), p[i], limit, to_string(index.shape),
                to_string(x_shape));
  }
}

int64_t row_grain(int64_t row_work) {
  return std::max<int64_t>(1, detail::kElementwiseGrain / std::max<int64_t>(row_work, 1));
}
}  // namespace

Tensor gather_last(const Tensor& x, const IntTensor& index) {
  PELAB_CHECK(x.ndim() >= 1, "gather_last: x must have at least one axis, got shape {}",
              to_string(x.shape()));
  bool fits = index.shape.size() == x.shape().size();
  for (int d = 0; fits && d + 1 < x.ndim(); ++d) fits = index.shape[d] == x.shape()[d];
  PELAB_CHECK(fits, "gather_last: index shape {} must equal x shape {} on every axis but the last",
              to_string(index.shape), to_string(x.shape()));
  const int64_t n = x.shape().back(), m = index.shape.back();
  check_values("gather_last", index, n, x.shape());
  const Tensor xc = x.contiguous().detach();
  Tensor y = Tensor::empty(index.shape);
  const int64_t rows = m == 0 ? 0 : index.numel() / m;
  const float* in = xc.data();
  const int32_t* idx = index.data();
  float* o = y.data();
  parallel_for(0, rows, row_grain(m), [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) {
      const float* src = in + r * n;
      for (int64_t j = 0; j < m; ++j) o[r * m + j] = src[idx[r * m + j]];
    }
  });
  if (needs_grad(x)) {
    record(y, "gather_last", {x},
           [index, n](const Tensor& g) { return TensorList{scatter_add_last(g, index, n)}; });
  }
  return y;
}

Tensor scatter_add_last(const Tensor& x, const IntTensor& index, int64_t size) {
  PELAB_CHECK(x.ndim() >= 1, "scatter_add_last: x must have at least one axis, got shape {}",
              to_string(x.shape()));
  PELAB_CHECK(index.shape == x.shape(), "scatter_add_last: index shape {} must equal x shape {}",
              to_string(index.shape), to_string(x.shape()));
  PELAB_CHECK(size >= 0, "scatter_add_last: negative output size {}", size);
  check_values("scatter_add_last", index, size, x.shape());
  const Tensor xc = x.contiguous().detach();
  Shape out_shape = x.shape();
  out_shape.back() = size;
  Tensor y = Tensor::empty(out_shape);
  const int64_t m = x.shape().back();
  const int64_t rows = numel(Shape(x.shape().begin(), x.shape().end() - 1));
  const float* in = xc.data();
  const int32_t* idx = index.data();
  float* o = y.data();
  parallel_for(0, rows, row_grain(m + size), [&](int64_t lo, int64_t hi) {
    std::vector<double> acc(static_cast<size_t>(size));
    for (int64_t r = lo; r < hi; ++r) {
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t j = 0; j < m; ++j) acc[idx[r * m + j]] += in[r * m + j];
      for (int64_t k = 0; k < size; ++k) o[r * size + k] = static_cast<float>(acc[k]);
    }
  });
  if (needs_grad(x)) {
    record(y, "scatter_add_last", {x},
           [index](const Tensor& g) { return TensorList{gather_last(g, index)}; });
  }
  return y;
}

}  // namespace pelab
