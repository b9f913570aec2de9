// Private helpers shared by the op files: strided iteration and elementwise maps.
#pragma once

#include <string>
#include <vector>

#include "pelab/core/error.h"
#include "pelab/core/parallel.h"
#include "pelab/tensor/tensor.h"

namespace pelab::detail {

// Elementwise work below this many elements runs on one thread: the fork costs more.
constexpr int64_t kElementwiseGrain = 16384;

// x's strides seen as a tensor of `out_shape` (x broadcast to it): 0 along broadcast axes.
inline Shape broadcast_strides(const Tensor& x, const Shape& out_shape) {
  const size_t nd = out_shape.size(), xd = x.shape().size();
  Shape strides(nd, 0);
  for (size_t i = 0; i < xd; ++i) {
    const size_t o = nd - xd + i;
    strides[o] = x.shape()[i] == 1 ? 0 : x.strides()[i];
  }
  return strides;
}

// "[1, 2]": the multi-index of flat position `flat` in `shape` (for error messages).
inline std::string index_string(int64_t flat, const Shape& shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = shape[d] > 0 ? flat % shape[d] : 0;
    flat = shape[d] > 0 ? flat / shape[d] : 0;
  }
  return to_string(idx);
}

// Offset of row `row` (all axes but the last, row-major) for the given strides.
inline int64_t row_offset(int64_t row, const Shape& shape, const Shape& strides) {
  int64_t off = 0;
  for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d) {
    const int64_t i = row % shape[d];
    row /= shape[d];
    off += i * strides[d];
  }
  return off;
}

// Σ_{j < n} term(j) in double as 8 interleaved partial sums (lane j mod 8) added in a fixed
// order at the end: the loop vectorises (a single running sum cannot without reordering),
// and the result depends only on the values, never on the thread count.
template <class Term>
double lane_sum(int64_t n, Term term) {
  constexpr int64_t kLanes = 8;
  double acc[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int64_t l = 0; l < kLanes; ++l) acc[l] += term(j + l);
  for (int64_t l = 0; j < n; ++j, ++l) acc[l] += term(j);
  return ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
}

// out[k] = fn(x[k]) over x's elements (x may be strided); out is contiguous, x's shape.
template <class Fn>
Tensor map_unary(const Tensor& x, Fn fn) {
  Tensor out = Tensor::empty(x.shape());
  float* o = out.data();
  if (x.is_contiguous()) {
    const float* in = x.data();
    parallel_for(0, x.numel(), kElementwiseGrain, [&](int64_t lo, int64_t hi) {
      for (int64_t k = lo; k < hi; ++k) o[k] = fn(in[k]);
    });
    return out;
  }
  const Tensor xc = x.contiguous();
  const float* in = xc.data();
  parallel_for(0, x.numel(), kElementwiseGrain, [&](int64_t lo, int64_t hi) {
    for (int64_t k = lo; k < hi; ++k) o[k] = fn(in[k]);
  });
  return out;
}

// out = fn(a, b) with broadcasting; out is contiguous with the broadcast shape.
template <class Fn>
Tensor map_binary(const Tensor& a, const Tensor& b, const Shape& out_shape, Fn fn) {
  Tensor out = Tensor::empty(out_shape);
  float* o = out.data();
  const float* pa = a.data();
  const float* pb = b.data();
  const int64_t n = out.numel();
  if (a.shape() == out_shape && b.shape() == out_shape && a.is_contiguous() && b.is_contiguous()) {
    parallel_for(0, n, kElementwiseGrain, [&](int64_t lo, int64_t hi) {
      for (int64_t k = lo; k < hi; ++k) o[k] = fn(pa[k], pb[k]);
    });
    return out;
  }
  if (out_shape.empty()) {
    o[0] = fn(pa[0], pb[0]);
    return out;
  }
  const Shape sa = broadcast_strides(a, out_shape);
  const Shape sb = broadcast_strides(b, out_shape);
  const int64_t inner = out_shape.back();
  const int64_t rows = inner == 0 ? 0 : n / inner;
  const int64_t ia = sa.back(), ib = sb.back();
  parallel_for(0, rows, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(inner, 1)),
               [&](int64_t lo, int64_t hi) {
                 for (int64_t r = lo; r < hi; ++r) {
                   const float* ra = pa + row_offset(r, out_shape, sa);
                   const float* rb = pb + row_offset(r, out_shape, sb);
                   float* ro = o + r * inner;
                   for (int64_t j = 0; j < inner; ++j) ro[j] = fn(ra[j * ia], rb[j * ib]);
                 }
               });
  return out;
}

}  // namespace pelab::detail
