// Views and copies: contiguous, clone, reshape, transpose, permute, broadcast_to, sum_to.
// Views share storage and differentiate by the inverse view of the gradient.
#include <numeric>

#include "op_util.h"
#include "pelab/ops/ops.h"

namespace pelab {

namespace {
Tensor make_view(const Tensor& x, Shape shape, Shape strides, int64_t offset) {
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = x.impl()->storage;
  impl->offset = offset;
  impl->shape = std::move(shape);
  impl->strides = std::move(strides);
  return Tensor(impl);
}

// Copies a strided tensor into a new contiguous one.
Tensor copy_contiguous(const Tensor& x) {
  Tensor out = Tensor::empty(x.shape());
  if (x.numel() == 0) return out;
  if (x.ndim() == 0) {
    out.data()[0] = x.data()[0];
    return out;
  }
  const Shape& shape = x.shape();
  const Shape& strides = x.strides();
  const int64_t inner = shape.back(), step = strides.back();
  const int64_t rows = x.numel() / inner;
  const float* src = x.data();
  float* dst = out.data();
  parallel_for(0, rows, std::max<int64_t>(1, detail::kElementwiseGrain / inner),
               [&](int64_t lo, int64_t hi) {
                 for (int64_t r = lo; r < hi; ++r) {
                   const float* s = src + detail::row_offset(r, shape, strides);
                   float* d = dst + r * inner;
                   for (int64_t j = 0; j < inner; ++j) d[j] = s[j * step];
                 }
               });
  return out;
}
}  // namespace

// backward: dx = dy.
Tensor contiguous(const Tensor& x) {
  if (x.is_contiguous()) return x;
  Tensor y = copy_contiguous(x);
  if (needs_grad(x)) record(y, "contiguous", {x}, [](const Tensor& g) { return TensorList{g}; });
  return y;
}

// backward: dx = dy.
Tensor clone(const Tensor& x) {
  Tensor y = copy_contiguous(x);
  if (needs_grad(x)) record(y, "clone", {x}, [](const Tensor& g) { return TensorList{g}; });
  return y;
}

// backward: dx = reshape(dy, x.shape).
Tensor reshape(const Tensor& x, const Shape& requested) {
  Shape shape = requested;
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      PELAB_CHECK(infer < 0, "reshape {} -> {}: only one -1 is allowed", to_string(x.shape()),
                  to_string(requested));
      infer = static_cast<int>(i);
    } else {
      PELAB_CHECK(shape[i] >= 0, "reshape {} -> {}: negative size", to_string(x.shape()),
                  to_string(requested));
      known *= shape[i];
    }
  }
  if (infer >= 0) {
    PELAB_CHECK(known > 0 && x.numel() % known == 0, "cannot reshape {} to {}",
                to_string(x.shape()), to_string(requested));
    shape[infer] = x.numel() / known;
  }
  PELAB_CHECK(numel(shape) == x.numel(), "cannot reshape {} ({} elements) to {}",
              to_string(x.shape()), x.numel(), to_string(requested));
  const Tensor base = x.contiguous();
  Tensor y = make_view(base, shape, contiguous_strides(shape), base.impl()->offset);
  if (needs_grad(base)) {
    record(y, "reshape", {base},
           [in_shape = base.shape()](const Tensor& g) { return TensorList{reshape(g, in_shape)}; });
  }
  return y;
}

// backward: dx = permute(dy, inverse(axes)).
Tensor permute(const Tensor& x, const std::vector<int>& axes) {
  const int nd = x.ndim();
  PELAB_CHECK(static_cast<int>(axes.size()) == nd, "permute: {} axes for a tensor of shape {}",
              axes.size(), to_string(x.shape()));
  std::vector<int> normalized(nd), inverse(nd, -1);
  Shape shape(nd), strides(nd);
  for (int i = 0; i < nd; ++i) {
    const int a = normalize_axis(axes[i], nd, x.shape());
    PELAB_CHECK(inverse[a] < 0, "permute: axis {} repeated", a);
    inverse[a] = i;
    normalized[i] = a;
    shape[i] = x.shape()[a];
    strides[i] = x.strides()[a];
  }
  Tensor y = make_view(x, shape, strides, x.impl()->offset);
  if (needs_grad(x)) {
    record(y, "permute", {x},
           [inverse](const Tensor& g) { return TensorList{permute(g, inverse)}; });
  }
  return y;
}

Tensor transpose(const Tensor& x, int axis_a, int axis_b) {
  std::vector<int> axes(x.ndim());
  std::iota(axes.begin(), axes.end(), 0);
  std::swap(axes[normalize_axis(axis_a, x.ndim(), x.shape())],
            axes[normalize_axis(axis_b, x.ndim(), x.shape())]);
  return permute(x, axes);
}

// backward: dx = sum_to(dy, x.shape).
Tensor broadcast_to(const Tensor& x, const Shape& shape) {
  PELAB_CHECK(broadcast_shapes(x.shape(), shape) == shape, "cannot broadcast {} to {}",
              to_string(x.shape()), to_string(shape));
  Tensor y = make_view(x, shape, detail::broadcast_strides(x, shape), x.impl()->offset);
  if (needs_grad(x)) {
    record(y, "broadcast_to", {x},
           [in_shape = x.shape()](const Tensor& g) { return TensorList{sum_to(g, in_shape)}; });
  }
  return y;
}

// backward: dx = broadcast_to(dy, x.shape).
Tensor sum_to(const Tensor& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  PELAB_CHECK(broadcast_shapes(shape, x.shape()) == x.shape(), "cannot sum {} down to {}",
              to_string(x.shape()), to_string(shape));
  const int lead = x.ndim() - static_cast<int>(shape.size());
  std::vector<int> axes;
  for (int d = 0; d < x.ndim(); ++d)
    if (d < lead || (shape[d - lead] == 1 && x.shape()[d] != 1)) axes.push_back(d);
  return reshape(sum(x, axes, /*keepdim=*/true), shape);
}

// The methods of Tensor that are ops, defined here so that tensor/ never includes ops/.
Tensor Tensor::contiguous() const {
  return pelab::contiguous(*this);
}
Tensor Tensor::clone() const {
  return pelab::clone(*this);
}
Tensor Tensor::reshape(const Shape& s) const {
  return pelab::reshape(*this, s);
}
Tensor Tensor::transpose(int a, int b) const {
  return pelab::transpose(*this, a, b);
}
Tensor Tensor::slice(int axis, int64_t start, int64_t end) const {
  return pelab::slice(*this, axis, start, end);
}

}  // namespace pelab
