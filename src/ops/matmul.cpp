// matmul: a [..., M, K] · b [..., K, N] through the one GEMM entry point.
// backward: da = dy · bᵀ, db = aᵀ · dy (both as transposed views, no copies).
#include "op_util.h"
#include "pelab/backend/gemm.h"
#include "pelab/ops/ops.h"

namespace pelab {

namespace {
// How a [..., R, C] tensor is handed to the GEMM: base pointer, transposed or not, leading
// dimension and the stride between batch entries. Falls back to a contiguous copy when the
// layout is neither plain nor transposed row-major, or the batch axes do not collapse.
struct Operand {
  Tensor keep;  // owns the memory the pointer refers to
  const float* ptr = nullptr;
  bool trans = false;
  int64_t ld = 0;
  int64_t batch_stride = 0;
};

bool batch_axes_collapse(const Tensor& t) {
  const int nd = t.ndim();
  for (int d = 0; d + 3 < nd; ++d)
    if (t.shape()[d] != 1 && t.strides()[d] != t.strides()[d + 1] * t.shape()[d + 1]) return false;
  return true;
}

Operand as_operand(const Tensor& t) {
  const int nd = t.ndim();
  const int64_t rows = t.shape()[nd - 2], cols = t.shape()[nd - 1];
  const int64_t s_row = t.strides()[nd - 2], s_col = t.strides()[nd - 1];
  Operand op;
  if (batch_axes_collapse(t)) {
    if (s_col == 1 && s_row >= std::max<int64_t>(cols, 1)) {
      op.trans = false;
      op.ld = s_row;
    } else if (s_row == 1 && s_col >= std::max<int64_t>(rows, 1) && rows > 1) {
      op.trans = true;
      op.ld = s_col;
    } else {
      op.ld = 0;
    }
  }
  if (op.ld == 0) {
    op.keep = t.contiguous().detach();
    op.trans = false;
    op.ld = std::max<int64_t>(cols, 1);
  } else {
    op.keep = t.detach();
  }
  op.ptr = op.keep.data();
  op.batch_stride = nd > 2 ? op.keep.strides()[nd - 3] : 0;
  return op;
}

Tensor matmul_forward(const Tensor& a, const Tensor& b, const Shape& out_shape) {
  const int nd = a.ndim();
  const int64_t M = a.shape()[nd - 2], K = a.shape()[nd - 1], N = b.shape()[nd - 1];
  const int64_t batch = numel(Shape(a.shape().begin(), a.shape().end() - 2));
  Tensor y = Tensor::empty(out_shape);
  const Operand A = as_operand(a), B = as_operand(b);
  if (batch == 1) {
    gemm(A.trans, B.trans, M, N, K, 1.0f, A.ptr, A.ld, B.ptr, B.ld, 0.0f, y.data(), N);
  } else {
    gemm_batched(A.trans, B.trans, M, N, K, 1.0f, A.ptr, A.ld, A.batch_stride, B.ptr, B.ld,
                 B.batch_stride, 0.0f, y.data(), N, M * N, batch);
  }
  return y;
}
}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  PELAB_CHECK(a.ndim() >= 2 && b.ndim() >= 2, "matmul needs matrices, got shapes {} and {}",
              to_string(a.shape()), to_string(b.shape()));
  const int64_t K = a.size(-1);
  PELAB_CHECK(b.size(-2) == K, "matmul: inner sizes differ for shapes {} and {} ({} vs {})",
              to_string(a.shape()), to_string(b.shape()), K, b.size(-2));
  if (b.ndim() == 2 && a.ndim() > 2) {
    // A shared right-hand matrix: fold the batch into the rows (one large GEMM).
    Shape out_shape = a.shape();
    out_shape.back() = b.size(-1);
    return reshape(matmul(reshape(a, {-1, K}), b), out_shape);
  }
  PELAB_CHECK(
      a.ndim() == b.ndim() && std::equal(a.shape().begin(), a.shape().end() - 2, b.shape().begin()),
      "matmul: batch axes of shapes {} and {} differ", to_string(a.shape()), to_string(b.shape()));
  Shape out_shape = a.shape();
  out_shape.back() = b.size(-1);
  Tensor y = matmul_forward(a, b, out_shape);
  if (needs_grad(a, b)) {
    record(y, "matmul", {a, b},
           [ad = a.detach(), bd = b.detach(), na = a.requires_grad(),
            nb = b.requires_grad()](const Tensor& g) {
             return TensorList{na ? matmul(g, transpose(bd, -1, -2)) : Tensor(),
                               nb ? matmul(transpose(ad, -1, -2), g) : Tensor()};
           });
  }
  return y;
}

}  // namespace pelab
