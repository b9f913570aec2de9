// sum and mean over axes. Each output element is accumulated by one thread in a fixed
// order (in double), so the result does not depend on the thread count.
#include <algorithm>

#include "op_util.h"
#include "pelab/ops/ops.h"

namespace pelab {

namespace {
struct Reduction {
  Shape kept_shape;   // x's shape with reduced axes set to 1 (keepdim form)
  Shape out_shape;    // as requested (keepdim or not)
  int64_t count = 1;  // elements summed into each output
};

Reduction plan(const Tensor& x, const std::vector<int>& axes, bool keepdim) {
  std::vector<bool> reduce(x.ndim(), false);
  for (int a : axes) {
    const int n = normalize_axis(a, x.ndim(), x.shape());
    PELAB_CHECK(!reduce[n], "reduction axis {} given twice for shape {}", a, to_string(x.shape()));
    reduce[n] = true;
  }
  Reduction r;
  for (int d = 0; d < x.ndim(); ++d) {
    r.kept_shape.push_back(reduce[d] ? 1 : x.shape()[d]);
    if (reduce[d])
      r.count *= x.shape()[d];
    else
      r.out_shape.push_back(x.shape()[d]);
    if (reduce[d] && keepdim) r.out_shape.push_back(1);
  }
  return r;
}

// out[o] = scale · Σ over the reduced axes of x.
Tensor reduce_sum(const Tensor& x, const Reduction& r, double scale) {
  Tensor out = Tensor::empty(r.out_shape);
  const int nd = x.ndim();
  const Shape& shape = x.shape();
  const Shape& strides = x.strides();
  // Split the axes into kept (outer loop) and reduced (inner loop) sets.
  Shape kept_dims, kept_strides, red_dims, red_strides;
  for (int d = 0; d < nd; ++d) {
    if (r.kept_shape[d] == 1 && shape[d] != 1) {
      red_dims.push_back(shape[d]);
      red_strides.push_back(strides[d]);
    } else {
      kept_dims.push_back(shape[d]);
      kept_strides.push_back(strides[d]);
    }
  }
  const int64_t n_out = out.numel();
  const float* base = x.data();
  float* o = out.data();
  const int64_t grain =
      std::max<int64_t>(1, detail::kElementwiseGrain / std::max<int64_t>(r.count, 1));
  parallel_for(0, n_out, grain, [&](int64_t lo, int64_t hi) {
    std::vector<int64_t> idx(red_dims.size());
    for (int64_t k = lo; k < hi; ++k) {
      int64_t off = 0, rem = k;
      for (int d = static_cast<int>(kept_dims.size()) - 1; d >= 0; --d) {
        off += (rem % kept_dims[d]) * kept_strides[d];
        rem /= kept_dims[d];
      }
      double acc = 0.0;
      std::fill(idx.begin(), idx.end(), 0);
      int64_t roff = 0;
      for (int64_t m = 0; m < r.count; ++m) {
        acc += base[off + roff];
        for (int d = static_cast<int>(red_dims.size()) - 1; d >= 0; --d) {
          if (++idx[d] < red_dims[d]) {
            roff += red_strides[d];
            break;
          }
          roff -= red_strides[d] * (red_dims[d] - 1);
          idx[d] = 0;
        }
      }
      o[k] = static_cast<float>(acc * scale);
    }
  });
  return out;
}

Tensor reduce_op(const Tensor& x, const std::vector<int>& axes, bool keepdim, bool average,
                 const char* name) {
  const Reduction r = plan(x, axes, keepdim);
  PELAB_CHECK(!average || r.count > 0, "mean over an empty axis of shape {}", to_string(x.shape()));
  const double scale = average ? 1.0 / static_cast<double>(r.count) : 1.0;
  Tensor y = reduce_sum(x, r, scale);
  if (needs_grad(x)) {
    record(y, name, {x}, [kept = r.kept_shape, in_shape = x.shape(), scale](const Tensor& g) {
      Tensor gx = broadcast_to(reshape(g, kept), in_shape).contiguous();
      return TensorList{scale == 1.0 ? gx : mul_scalar(gx, static_cast<float>(scale))};
    });
  }
  return y;
}
}  // namespace

// backward: dx = broadcast(dy) over the reduced axes.
Tensor sum(const Tensor& x, const std::vector<int>& axes, bool keepdim) {
  return reduce_op(x, axes, keepdim, false, "sum");
}

// backward: dx = broadcast(dy) / count.
Tensor mean(const Tensor& x, const std::vector<int>& axes, bool keepdim) {
  return reduce_op(x, axes, keepdim, true, "mean");
}

Tensor sum_all(const Tensor& x) {
  std::vector<int> axes(x.ndim());
  for (int d = 0; d < x.ndim(); ++d) axes[d] = d;
  return sum(x, axes, false);
}

}  // namespace pelab
