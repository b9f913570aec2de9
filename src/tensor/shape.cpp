#include "pelab/tensor/shape.h"

#include "pelab/core/error.h"

namespace pelab {

int64_t numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

Shape contiguous_strides(const Shape& shape) {
  Shape strides(shape.size());
  int64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= shape[i];
  }
  return strides;
}

std::string to_string(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

int normalize_axis(int axis, int ndim, const Shape& shape_for_message) {
  int a = axis < 0 ? axis + ndim : axis;
  PELAB_CHECK(a >= 0 && a < ndim, "axis {} is out of range for a tensor of shape {}", axis,
              to_string(shape_for_message));
  return a;
}

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  const size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    PELAB_CHECK(da == db || da == 1 || db == 1, "shapes {} and {} do not broadcast", to_string(a),
                to_string(b));
    out[i] = da == 1 ? db : da;
  }
  return out;
}

}  // namespace pelab
