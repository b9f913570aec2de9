// The differentiable ops. Each lives in one file under src/ops/ with its forward kernel,
// its backward kernel (the formula in its first comment) and the function below, which
// records a graph node only when an input needs a gradient. tests/ops/op_table.cpp holds
// one entry per op that drives the gradient check and, for kernels with a fast path, the
// backend-vs-reference check.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "pelab/autograd/autograd.h"
#include "pelab/tensor/tensor.h"

namespace pelab {

// ---- shape and copies (src/ops/shape_ops.cpp, src/ops/concat_slice.cpp) ---------------
Tensor contiguous(const Tensor& x);
Tensor clone(const Tensor& x);
Tensor reshape(const Tensor& x, const Shape& shape);        // one -1 allowed; views when contiguous
Tensor transpose(const Tensor& x, int axis_a, int axis_b);  // a view
Tensor permute(const Tensor& x, const std::vector<int>& axes);        // a view
Tensor slice(const Tensor& x, int axis, int64_t start, int64_t end);  // a view, [start, end)
Tensor concat(const TensorList& xs, int axis);
// Sums `x` down to `shape` (the reverse of broadcasting `shape` up to x.shape()).
Tensor sum_to(const Tensor& x, const Shape& shape);
Tensor broadcast_to(const Tensor& x, const Shape& shape);

// ---- elementwise, with NumPy broadcasting (src/ops/binary.cpp) --------------------------
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor add_scalar(const Tensor& x, float s);
Tensor mul_scalar(const Tensor& x, float s);
inline Tensor operator+(const Tensor& a, const Tensor& b) {
  return add(a, b);
}
inline Tensor operator-(const Tensor& a, const Tensor& b) {
  return sub(a, b);
}
inline Tensor operator*(const Tensor& a, const Tensor& b) {
  return mul(a, b);
}
inline Tensor operator/(const Tensor& a, const Tensor& b) {
  return div(a, b);
}
inline Tensor operator*(const Tensor& a, float s) {
  return mul_scalar(a, s);
}
inline Tensor operator+(const Tensor& a, float s) {
  return add_scalar(a, s);
}

// ---- elementwise, unary (src/ops/unary.cpp) --------------------------------------------
Tensor neg(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor sin(const Tensor& x);
Tensor cos(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor square(const Tensor& x);
Tensor abs(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor relu(const Tensor& x);
Tensor gelu(const Tensor& x);  // exact: x·Φ(x)

// ---- reductions (src/ops/reduce.cpp) ------------------------------------------------------
Tensor sum(const Tensor& x, const std::vector<int>& axes, bool keepdim = false);
Tensor mean(const Tensor& x, const std::vector<int>& axes, bool keepdim = false);
Tensor sum_all(const Tensor& x);  // shape []

// ---- linear algebra (src/ops/matmul.cpp, src/ops/linear.cpp) ---------------------------
// a [..., M, K] · b [..., K, N]; batch axes must match or b may be 2-D (shared). Inputs that
// are transposed views of contiguous tensors are handed to the GEMM as transposed, not copied.
Tensor matmul(const Tensor& a, const Tensor& b);
// y = x Wᵀ + b: x [..., in], weight [out, in], bias [out] (may be undefined).
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias);

// ---- indexing (src/ops/embedding.cpp, src/ops/gather.cpp, src/ops/rows.cpp) -----------
// weight [V, D], ids of any shape with values in [0, V) → [ids.shape..., D].
Tensor embedding(const Tensor& weight, const IntTensor& ids);
// out[..., j] = x[..., index[..., j]]; index has x's shape except along the last axis.
Tensor gather_last(const Tensor& x, const IntTensor& index);
// out[..., index[..., j]] += x[..., j]; out's last axis has `size` entries.
Tensor scatter_add_last(const Tensor& x, const IntTensor& index, int64_t size);
// x [R, w], rows [N] with distinct values in [0, R) → [N, w]: y[i] = x[rows[i]].
Tensor gather_rows(const Tensor& x, const IntTensor& rows);
// x [N, w], slots [R] with values in [0, N], each of [0, N) exactly once → [R, w]:
// y[s] = x[slots[s]], or zeros where slots[s] = N. The inverse of gather_rows.
Tensor scatter_rows(const Tensor& x, const IntTensor& slots);

// ---- normalisation and probabilities (src/ops/softmax.cpp, layer_norm.cpp, ...) --------
Tensor softmax(const Tensor& x, int axis = -1);
Tensor log_softmax(const Tensor& x, int axis = -1);
// logits [N, C]; targets [N] with values in [0, C) or ignore_index. Mean over the
// non-ignored rows; an error if there are none.
Tensor cross_entropy(const Tensor& logits, const IntTensor& targets, int32_t ignore_index = -1);
// Over the last axis: (x − mean) / sqrt(var + eps) ⊙ gamma + beta, biased variance.
Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps = 1e-5f);

// ---- position (src/ops/rotary.cpp) ------------------------------------------------------
// Rotary embedding of MODEL.md: x [B, T, heads·d_h], each head's pairs (2i, 2i+1) rotated by
// positions[b, t]·θ_i, θ_i = base^(−2i/d_h). d_h must be even.
Tensor rotary(const Tensor& x, const IntTensor& positions, int64_t heads, double base);

// Rotary's options (MODEL.md, "Rotary options"): how many pairs rotate and how their angles
// are scaled. The defaults are plain rotary.
struct RotaryOptions {
  enum class Scaling { None, Pi, Ntk, DynamicNtk, Yarn };
  int64_t pairs = 0;  // n_rot: the first pairs rotate, θ over d_r = 2·n_rot; 0: all d_h/2
  Scaling scaling = Scaling::None;
  double factor = 1.0;          // s ≥ 1
  int64_t original_length = 0;  // L ≥ 1, read by dynamic_ntk and yarn
};

// The angles rotary() forms on every call, kept across calls: cos and sin of the angle of
// pair i at position m (m·θ_i, or as the options scale it) for the positions m in [0, P),
// computed once by the same formula and grown on demand to the largest position seen. Past a
// bound on the table's size, and for dynamic NTK (whose angles depend on each sequence's
// length), calls compute their angles directly. Safe to share between threads.
class RotaryAngles {
 public:
  RotaryAngles(int64_t head_dim, double base, RotaryOptions options = {});
  int64_t head_dim() const { return head_dim_; }
  double base() const { return base_; }
  const RotaryOptions& options() const { return options_; }
  int64_t pairs() const { return options_.pairs; }  // n_rot, resolved (never 0)

  struct Table;  // [P, n_rot] cos and sin, and YaRN's μ
  // A table that holds position `max_position`, or null when that would pass the bound or
  // the angles depend on the sequence (dynamic NTK).
  std::shared_ptr<const Table> covering(int64_t max_position) const;

 private:
  int64_t head_dim_;
  double base_;
  RotaryOptions options_;
  mutable std::mutex mutex_;
  mutable std::shared_ptr<const Table> table_;
};

// rotary() reading its angles from `angles` (made for x's d_h): without options, the same
// values bit for bit. The first n_rot pairs rotate (and are multiplied by YaRN's μ), the
// other features pass through. key_mask [B, T] (1 for real tokens) is read by dynamic NTK
// only, for each sequence's n = 1 + its largest real position; the other scalings ignore it.
Tensor rotary(const Tensor& x, const IntTensor& positions, int64_t heads,
              const RotaryAngles& angles, const IntTensor& key_mask = IntTensor());

// ---- masking and noise (src/ops/masked_fill.cpp, src/ops/dropout.cpp) ------------------
// Where mask (broadcast to x's shape) is non-zero, the output is `value`; gradient 0 there.
Tensor masked_fill(const Tensor& x, const Tensor& mask, float value);
// Inverted dropout with keep-probability 1 − p. The mask element i is a pure function of
// (seed, i), so it does not depend on the thread count. p = 0 returns x itself.
Tensor dropout(const Tensor& x, float p, uint64_t seed);

}  // namespace pelab
