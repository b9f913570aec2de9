// linear: y = x Wᵀ + b, x [..., in], W [out, in], b [out] (optional).
// backward: dx = dy · W, dW = dyᵀ · x, db = Σ_rows dy — one GEMM each, no copies.
#include <cstring>

#include "op_util.h"
#include "pelab/backend/gemm.h"
#include "pelab/ops/ops.h"

namespace pelab {

namespace {
// db[j] = Σ_r dy[r, j]; each thread owns a range of columns (deterministic order).
Tensor column_sums(const float* dy, int64_t rows, int64_t cols) {
  Tensor db = Tensor::empty({cols});
  float* out = db.data();
  parallel_for(0, cols, 64, [&](int64_t lo, int64_t hi) {
    std::vector<double> acc(hi - lo, 0.0);
    for (int64_t r = 0; r < rows; ++r) {
      const float* row = dy + r * cols;
      for (int64_t j = lo; j < hi; ++j) acc[j - lo] += row[j];
    }
    for (int64_t j = lo; j < hi; ++j) out[j] = static_cast<float>(acc[j - lo]);
  });
  return db;
}

// dst[0:n] = src[0:n]. A library memcpy per row costs a call for a row of 64 floats (the
// default model's), thousands a step; copies of a constant 16 floats are inlined moves.
inline void copy_row(const float* src, int64_t n, float* dst) {
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) std::memcpy(dst + j, src + j, 16 * sizeof(float));
  for (; j < n; ++j) dst[j] = src[j];
}
}  // namespace

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  PELAB_CHECK(weight.ndim() == 2, "linear: weight must be [out, in], got {}",
              to_string(weight.shape()));
  const int64_t out_features = weight.size(0), in_features = weight.size(1);
  PELAB_CHECK(x.ndim() >= 1 && x.size(-1) == in_features,
              "linear: input {} does not end in the weight's input size {} (weight {})",
              to_string(x.shape()), in_features, to_string(weight.shape()));
  PELAB_CHECK(!bias.defined() || bias.shape() == Shape{out_features},
              "linear: bias {} does not match weight {}", to_string(bias.shape()),
              to_string(weight.shape()));
  const Tensor xc = x.contiguous().detach();
  const Tensor wc = weight.contiguous().detach();
  const int64_t rows = x.numel() / std::max<int64_t>(in_features, 1);
  Shape out_shape = x.shape();
  out_shape.back() = out_features;
  Tensor y = Tensor::empty(out_shape);
  float beta = 0.0f;
  if (bias.defined()) {  // start from the bias rows, then accumulate the product onto them
    const Tensor bc = bias.contiguous();
    const float* b = bc.data();
    float* o = y.data();
    parallel_for(0, rows, 256, [&](int64_t lo, int64_t hi) {
      for (int64_t r = lo; r < hi; ++r) copy_row(b, out_features, o + r * out_features);
    });
    beta = 1.0f;
  }
  gemm(false, true, rows, out_features, in_features, 1.0f, xc.data(), in_features, wc.data(),
       in_features, beta, y.data(), out_features);

  if (needs_grad(x, weight, bias)) {
    const bool nx = x.requires_grad(), nw = weight.requires_grad();
    const bool nb = bias.defined() && bias.requires_grad();
    record(y, "linear", {x, weight, bias},
           [xc, wc, nx, nw, nb, rows, in_features, out_features,
            x_shape = x.shape()](const Tensor& g) {
             const Tensor gc = g.contiguous();
             TensorList grads(3);
             if (nx) {  // dx [rows, in] = dy [rows, out] · W [out, in]
               Tensor dx = Tensor::empty(x_shape);
               gemm(false, false, rows, in_features, out_features, 1.0f, gc.data(), out_features,
                    wc.data(), in_features, 0.0f, dx.data(), in_features);
               grads[0] = dx;
             }
             if (nw) {  // dW [out, in] = dyᵀ [out, rows] · x [rows, in]
               Tensor dw = Tensor::empty({out_features, in_features});
               gemm(true, false, out_features, in_features, rows, 1.0f, gc.data(), out_features,
                    xc.data(), in_features, 0.0f, dw.data(), in_features);
               grads[1] = dw;
             }
             if (nb) grads[2] = column_sums(gc.data(), rows, out_features);
             return grads;
           });
  }
  return y;
}

}  // namespace pelab
