// add, sub, mul, div with NumPy broadcasting; add_scalar, mul_scalar.
// Gradients are summed back down to each input's shape (sum_to).
#include "op_util.h"
#include "pelab/ops/ops.h"

namespace pelab {

// backward: da = sum_to(dy), db = sum_to(dy).
Tensor add(const Tensor& a, const Tensor& b) {
  const Shape shape = broadcast_shapes(a.shape(), b.shape());
  Tensor y = detail::map_binary(a, b, shape, [](float u, float v) { return u + v; });
  if (needs_grad(a, b)) {
    record(y, "add", {a, b}, [sa = a.shape(), sb = b.shape()](const Tensor& g) {
      return TensorList{sum_to(g, sa), sum_to(g, sb)};
    });
  }
  return y;
}

// backward: da = sum_to(dy), db = −sum_to(dy).
Tensor sub(const Tensor& a, const Tensor& b) {
  const Shape shape = broadcast_shapes(a.shape(), b.shape());
  Tensor y = detail::map_binary(a, b, shape, [](float u, float v) { return u - v; });
  if (needs_grad(a, b)) {
    record(y, "sub", {a, b},
           [sa = a.shape(), sb = b.shape(), nb = b.requires_grad()](const Tensor& g) {
             return TensorList{sum_to(g, sa), nb ? neg(sum_to(g, sb)) : Tensor()};
           });
  }
  return y;
}

// backward: da = sum_to(dy ⊙ b), db = sum_to(dy ⊙ a).
Tensor mul(const Tensor& a, const Tensor& b) {
  const Shape shape = broadcast_shapes(a.shape(), b.shape());
  Tensor y = detail::map_binary(a, b, shape, [](float u, float v) { return u * v; });
  if (needs_grad(a, b)) {
    const bool na = a.requires_grad(), nb = b.requires_grad();
    record(y, "mul", {a, b},
           [sa = a.shape(), sb = b.shape(), ad = nb ? a.detach() : Tensor(),
            bd = na ? b.detach() : Tensor()](const Tensor& g) {
             return TensorList{bd.defined() ? sum_to(mul(g, bd), sa) : Tensor(),
                               ad.defined() ? sum_to(mul(g, ad), sb) : Tensor()};
           });
  }
  return y;
}

// backward: da = sum_to(dy / b), db = −sum_to(dy ⊙ y / b).
Tensor div(const Tensor& a, const Tensor& b) {
  const Shape shape = broadcast_shapes(a.shape(), b.shape());
  Tensor y = detail::map_binary(a, b, shape, [](float u, float v) { return u / v; });
  if (needs_grad(a, b)) {
    record(y, "div", {a, b},
           [sa = a.shape(), sb = b.shape(), bd = b.detach(), yd = y.detach(),
            nb = b.requires_grad()](const Tensor& g) {
             const Tensor ga = div(g, bd);
             return TensorList{sum_to(ga, sa), nb ? neg(sum_to(mul(ga, yd), sb)) : Tensor()};
           });
  }
  return y;
}

// backward: dx = dy.
Tensor add_scalar(const Tensor& x, float s) {
  Tensor y = detail::map_unary(x, [s](float v) { return v + s; });
  if (needs_grad(x)) record(y, "add_scalar", {x}, [](const Tensor& g) { return TensorList{g}; });
  return y;
}

// backward: dx = s·dy.
Tensor mul_scalar(const Tensor& x, float s) {
  Tensor y = detail::map_unary(x, [s](float v) { return v * s; });
  if (needs_grad(x)) {
    record(y, "mul_scalar", {x}, [s](const Tensor& g) { return TensorList{mul_scalar(g, s)}; });
  }
  return y;
}

}  // namespace pelab
