// slice (a view) and concat (a copy) along one axis. concat's gradient is slices of dy; slice's
// is dy padded with zeros, written in one pass.
#include "op_util.h"
#include "pelab/ops/ops.h"

namespace pelab {

// backward: dx = zeros(x.shape) with dy written into [start, end) along `axis`.
Tensor slice(const Tensor& x, int axis, int64_t start, int64_t end) {
  const int a = normalize_axis(axis, x.ndim(), x.shape());
  const int64_t n = x.shape()[a];
  PELAB_CHECK(0 <= start && start <= end && end <= n,
              "slice [{}, {}) is out of range for axis {} of shape {}", start, end, axis,
              to_string(x.shape()));
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = x.impl()->storage;
  impl->offset = x.impl()->offset + start * x.strides()[a];
  impl->shape = x.shape();
  impl->shape[a] = end - start;
  impl->strides = x.strides();
  Tensor y(impl);
  if (needs_grad(x)) {
    record(y, "slice", {x}, [a, start, end, n, in_shape = x.shape()](const Tensor& g) {
      // dx viewed as [outer, n · inner]: per row, zeros, then dy's row, then zeros.
      int64_t outer = 1, inner = 1;
      for (int d = 0; d < a; ++d) outer *= in_shape[d];
      for (int d = a + 1; d < static_cast<int>(in_shape.size()); ++d) inner *= in_shape[d];
      const Tensor gc = g.contiguous();
      Tensor dx = Tensor::empty(in_shape);
      const int64_t row = n * inner, lead = start * inner, width = (end - start) * inner;
      const float* src = gc.data();
      float* dst = dx.data();
      parallel_for(0, outer,
                   std::max<int64_t>(1, detail::kElementwiseGrain / std::max<int64_t>(row, 1)),
                   [&](int64_t lo, int64_t hi) {
                     for (int64_t r = lo; r < hi; ++r) {
                       float* out = dst + r * row;
                       std::fill_n(out, lead, 0.0f);
                       std::copy_n(src + r * width, width, out + lead);
                       std::fill_n(out + lead + width, row - lead - width, 0.0f);
                     }
                   });
      return TensorList{dx};
    });
  }
  return y;
}

// backward: dx_k = slice of dy at x_k's place along `axis`.
Tensor concat(const TensorList& xs, int axis) {
  PELAB_CHECK(!xs.empty(), "concat of no tensors");
  const Shape& first = xs[0].shape();
  const int a = normalize_axis(axis, xs[0].ndim(), first);
  Shape out_shape = first;
  out_shape[a] = 0;
  for (const Tensor& x : xs) {
    bool fits = x.ndim() == static_cast<int>(first.size());
    for (int d = 0; fits && d < x.ndim(); ++d) fits = d == a || x.shape()[d] == first[d];
    PELAB_CHECK(fits, "concat along axis {}: shape {} does not fit shape {}", axis,
                to_string(x.shape()), to_string(first));
    out_shape[a] += x.shape()[a];
  }
  Tensor y = Tensor::empty(out_shape);
  // View the output as [outer, out_shape[a] * inner] and each input as [outer, n_k * inner].
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < a; ++d) outer *= out_shape[d];
  for (int d = a + 1; d < static_cast<int>(out_shape.size()); ++d) inner *= out_shape[d];
  const int64_t out_row = out_shape[a] * inner;
  int64_t col = 0;
  std::vector<int64_t> starts;
  for (const Tensor& x : xs) {
    const Tensor xc = x.contiguous();
    const int64_t row = x.shape()[a] * inner;
    const float* src = xc.data();
    float* dst = y.data() + col;
    for (int64_t r = 0; r < outer; ++r) std::copy_n(src + r * row, row, dst + r * out_row);
    starts.push_back(col / std::max<int64_t>(inner, 1));
    col += row;
  }
  bool any = false;
  for (const Tensor& x : xs) any = any || x.requires_grad();
  if (grad_enabled() && any) {
    std::vector<int64_t> sizes;
    for (const Tensor& x : xs) sizes.push_back(x.shape()[a]);
    record(y, "concat", xs, [a, starts, sizes](const Tensor& g) {
      TensorList grads;
      for (size_t k = 0; k < sizes.size(); ++k)
        grads.push_back(slice(g, a, starts[k], starts[k] + sizes[k]));
      return grads;
    });
  }
  return y;
}

}  // namespace pelab
