// softmax and log_softmax over one axis, numerically stable (the line maximum is subtracted).
// softmax:     y = exp(x − m) / Σ exp(x − m);  backward: dx = y ⊙ (dy − Σ_axis y ⊙ dy)
// log_softmax: y = x − m − log Σ exp(x − m);   backward: dx = dy − exp(y) ⊙ Σ_axis dy
//
// A line whose entries are all −inf (a fully masked attention row) has no maximum to
// subtract. We define softmax of such a line as all zeros (attention weight α = 0, so the
// row contributes nothing) and log_softmax as all −inf (the log of those zeros); the
// gradients above then give dx = 0 for softmax and dx = dy for log_softmax. NaN entries
// still propagate as NaN.
//
// The tensor is seen as [outer, n, inner] with the reduced axis in the middle. The last axis
// (inner = 1) is the fast path: one contiguous row per task. Otherwise a task is a block of
// up to kBlock neighbouring inner columns of one outer index, swept together so that memory
// is read in order. Either way each output element is computed by one thread in a fixed
// order; sums are accumulated in double.
#include <cmath>
#include <limits>

#include "op_util.h"
#include "pelab/ops/ops.h"

namespace pelab {

namespace {
constexpr float kNegInf = -std::numeric_limits<float>::infinity();
constexpr int64_t kBlock = 64;

struct Layout {
  int64_t outer = 1, n = 1, inner = 1;
};

Layout layout_of(const Shape& shape, int axis) {
  Layout l;
  for (int d = 0; d < axis; ++d) l.outer *= shape[d];
  l.n = shape[axis];
  for (size_t d = axis + 1; d < shape.size(); ++d) l.inner *= shape[d];
  return l;
}

// Fully masked line: zeros (softmax) or −inf (log_softmax); a NaN stays NaN.
inline float masked_value(float v, bool log) {
  return std::isnan(v) ? v : (log ? kNegInf : 0.0f);
}

// Forward over one contiguous row of n values.
void forward_row(const float* x, float* y, int64_t n, bool log) {
  float m = kNegInf;
  for (int64_t j = 0; j < n; ++j) m = x[j] > m ? x[j] : m;
  if (m == kNegInf) {
    for (int64_t j = 0; j < n; ++j) y[j] = masked_value(x[j], log);
    return;
  }
  double s = 0.0;
  if (log) {
    for (int64_t j = 0; j < n; ++j) s += std::exp(x[j] - m);
    const float lse = static_cast<float>(std::log(s));
    for (int64_t j = 0; j < n; ++j) y[j] = (x[j] - m) - lse;
  } else {
    for (int64_t j = 0; j < n; ++j) {
      y[j] = std::exp(x[j] - m);
      s += y[j];
    }
    const float inv = static_cast<float>(1.0 / s);
    for (int64_t j = 0; j < n; ++j) y[j] *= inv;
  }
}

// Forward over columns [0, w) of a block whose line element j sits at offset j·stride.
void forward_block(const float* x, float* y, int64_t n, int64_t stride, int64_t w, bool log,
                   std::vector<float>& m, std::vector<double>& s) {
  std::fill_n(m.begin(), w, kNegInf);
  std::fill_n(s.begin(), w, 0.0);
  for (int64_t j = 0; j < n; ++j) {
    const float* xj = x + j * stride;
    for (int64_t i = 0; i < w; ++i) m[i] = xj[i] > m[i] ? xj[i] : m[i];
  }
  for (int64_t j = 0; j < n; ++j) {
    const float* xj = x + j * stride;
    float* yj = y + j * stride;
    for (int64_t i = 0; i < w; ++i) {
      if (m[i] == kNegInf) continue;
      const float e = std::exp(xj[i] - m[i]);
      if (!log) yj[i] = e;
      s[i] += e;
    }
  }
  for (int64_t j = 0; j < n; ++j) {
    const float* xj = x + j * stride;
    float* yj = y + j * stride;
    for (int64_t i = 0; i < w; ++i) {
      if (m[i] == kNegInf)
        yj[i] = masked_value(xj[i], log);
      else if (log)
        yj[i] = (xj[i] - m[i]) - static_cast<float>(std::log(s[i]));
      else
        yj[i] *= static_cast<float>(1.0 / s[i]);
    }
  }
}

// Backward over one contiguous row: y the saved output, dy the incoming gradient.
void backward_row(const float* y, const float* dy, float* dx, int64_t n, bool log) {
  double s = 0.0;
  if (log) {
    for (int64_t j = 0; j < n; ++j) s += dy[j];
    const float sf = static_cast<float>(s);
    for (int64_t j = 0; j < n; ++j) dx[j] = dy[j] - std::exp(y[j]) * sf;
  } else {
    for (int64_t j = 0; j < n; ++j) s += static_cast<double>(y[j]) * dy[j];
    const float sf = static_cast<float>(s);
    for (int64_t j = 0; j < n; ++j) dx[j] = y[j] * (dy[j] - sf);
  }
}

void backward_block(const float* y, const float* dy, float* dx, int64_t n, int64_t stride,
                    int64_t w, bool log, std::vector<double>& s) {
  std::fill_n(s.begin(), w, 0.0);
  for (int64_t j = 0; j < n; ++j) {
    const float* yj = y + j * stride;
    const float* gj = dy + j * stride;
    for (int64_t i = 0; i < w; ++i) s[i] += log ? gj[i] : static_cast<double>(yj[i]) * gj[i];
  }
  for (int64_t j = 0; j < n; ++j) {
    const float* yj = y + j * stride;
    const float* gj = dy + j * stride;
    float* dj = dx + j * stride;
    for (int64_t i = 0; i < w; ++i) {
      const float si = static_cast<float>(s[i]);
      dj[i] = log ? gj[i] - std::exp(yj[i]) * si : yj[i] * (gj[i] - si);
    }
  }
}

// Per-task scratch of the blocked path: one maximum and one sum per column of the block.
struct Scratch {
  std::vector<float> m = std::vector<float>(kBlock);
  std::vector<double> s = std::vector<double>(kBlock);
};

// Runs row_fn(offset) for each contiguous line (inner = 1), or block_fn(offset, width,
// scratch) for each block of inner columns, in parallel.
template <class RowFn, class BlockFn>
void for_each_line(const Layout& l, RowFn row_fn, BlockFn block_fn) {
  if (l.inner == 1) {
    parallel_for(0, l.outer,
                 std::max<int64_t>(1, detail::kElementwiseGrain / std::max<int64_t>(l.n, 1)),
                 [&](int64_t lo, int64_t hi) {
                   for (int64_t r = lo; r < hi; ++r) row_fn(r * l.n);
                 });
    return;
  }
  const int64_t blocks = (l.inner + kBlock - 1) / kBlock;
  const int64_t work = std::max<int64_t>(1, l.n * std::min(l.inner, kBlock));
  parallel_for(0, l.outer * blocks, std::max<int64_t>(1, detail::kElementwiseGrain / work),
               [&](int64_t lo, int64_t hi) {
                 Scratch scratch;
                 for (int64_t t = lo; t < hi; ++t) {
                   const int64_t o = t / blocks, b = t % blocks;
                   const int64_t i0 = b * kBlock;
                   block_fn(o * l.n * l.inner + i0, std::min(kBlock, l.inner - i0), scratch);
                 }
               });
}

Tensor softmax_backward(const Tensor& y, const Tensor& g, int axis, bool log) {
  const Tensor gc = g.contiguous();
  const Layout l = layout_of(y.shape(), axis);
  Tensor dx = Tensor::empty(y.shape());
  if (dx.numel() == 0) return dx;
  const float* py = y.data();
  const float* pg = gc.data();
  float* pd = dx.data();
  for_each_line(
      l, [&](int64_t off) { backward_row(py + off, pg + off, pd + off, l.n, log); },
      [&](int64_t off, int64_t w, Scratch& sc) {
        backward_block(py + off, pg + off, pd + off, l.n, l.inner, w, log, sc.s);
      });
  return dx;
}

Tensor softmax_impl(const Tensor& x, int axis, bool log, const char* name) {
  PELAB_CHECK(x.ndim() >= 1, "{}: x must have at least one axis, got shape {}", name,
              to_string(x.shape()));
  const int a = normalize_axis(axis, x.ndim(), x.shape());
  const Tensor xc = x.contiguous().detach();
  const Layout l = layout_of(x.shape(), a);
  Tensor y = Tensor::empty(x.shape());
  if (y.numel() > 0) {
    const float* px = xc.data();
    float* py = y.data();
    for_each_line(
        l, [&](int64_t off) { forward_row(px + off, py + off, l.n, log); },
        [&](int64_t off, int64_t w, Scratch& sc) {
          forward_block(px + off, py + off, l.n, l.inner, w, log, sc.m, sc.s);
        });
  }
  if (needs_grad(x)) {
    record(y, name, {x}, [yd = y.detach(), a, log](const Tensor& g) {
      return TensorList{softmax_backward(yd, g, a, log)};
    });
  }
  return y;
}
}  // namespace

Tensor softmax(const Tensor& x, int axis) {
  return softmax_impl(x, axis, false, "softmax");
}

Tensor log_softmax(const Tensor& x, int axis) {
  return softmax_impl(x, axis, true, "log_softmax");
}

}  // namespace pelab
