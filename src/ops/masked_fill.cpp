// masked_fill: y = value where mask ≠ 0 (mask broadcast to x's shape), else x.
// backward: dx = dy where mask = 0, 0 where mask ≠ 0; the mask gets no gradient.
// `value` may be ±inf (−inf before softmax masks attention scores). A NaN mask entry counts
// as non-zero, i.e. as "fill".
#include "op_util.h"
#include "pelab/ops/ops.h"

namespace pelab {

Tensor masked_fill(const Tensor& x, const Tensor& mask, float value) {
  PELAB_CHECK(mask.defined(), "masked_fill: the mask is undefined (x {})", to_string(x.shape()));
  bool fits = mask.ndim() <= x.ndim();
  for (int d = 1; fits && d <= mask.ndim(); ++d) {
    const int64_t m = mask.shape()[mask.ndim() - d];
    fits = m == 1 || m == x.shape()[x.ndim() - d];
  }
  PELAB_CHECK(fits, "masked_fill: mask {} does not broadcast to x {}", to_string(mask.shape()),
              to_string(x.shape()));
  const Tensor md = mask.detach();
  Tensor y = detail::map_binary(x, md, x.shape(),
                                [value](float v, float m) { return m != 0.0f ? value : v; });
  if (needs_grad(x)) {
    record(y, "masked_fill", {x}, [md](const Tensor& g) {
      return TensorList{detail::map_binary(g, md, g.shape(),
                                           [](float v, float m) { return m != 0.0f ? 0.0f : v; })};
    });
  }
  return y;
}

}  // namespace pelab
