// layer_norm over the last axis (D entries): x̂ = (x − μ)·r with μ the row mean, r = 1/√(σ² + eps)
// and σ² the biased row variance; y = x̂ ⊙ γ + β.
// backward, per row with g = dy ⊙ γ:  dx = r · (g − mean(g) − x̂ ⊙ mean(g ⊙ x̂)),
//           over all rows:             dγ = Σ_rows dy ⊙ x̂,  dβ = Σ_rows dy.
// The forward saves μ and r per row (x̂ is recomputed from x). Row statistics are taken in
// double, two-pass, as interleaved partial sums (detail::lane_sum) so that they vectorise. dx runs
// one row per task; dγ and dβ give each thread a range of columns and sum the rows in order, so
// every result is independent of the thread count.
#include <cmath>
#include <memory>

#include "op_util.h"
#include "pelab/ops/ops.h"

namespace pelab {

namespace {
struct RowStats {
  std::vector<float> mean, rstd;
};

int64_t row_grain(int64_t dim) {
  return std::max<int64_t>(1, detail::kElementwiseGrain / std::max<int64_t>(dim, 1));
}

Tensor layer_norm_dx(const Tensor& x, const Tensor& gamma, const RowStats& st, const Tensor& dy) {
  const int64_t dim = x.shape().back(), rows = x.numel() / dim;
  Tensor dx = Tensor::empty(x.shape());
  const float* px = x.data();
  const float* pg = gamma.data();
  const float* pdy = dy.data();
  float* pdx = dx.data();
  parallel_for(0, rows, row_grain(dim), [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) {
      const float* xr = px + r * dim;
      const float* gr = pdy + r * dim;
      float* dr = pdx + r * dim;
      const float mu = st.mean[r], rs = st.rstd[r];
      const double sum_g =
          detail::lane_sum(dim, [&](int64_t j) { return static_cast<double>(gr[j] * pg[j]); });
      const double sum_gx = detail::lane_sum(
          dim, [&](int64_t j) { return static_cast<double>(gr[j] * pg[j]) * ((xr[j] - mu) * rs); });
      const float a = static_cast<float>(sum_g / dim), b = static_cast<float>(sum_gx / dim);
      for (int64_t j = 0; j < dim; ++j) {
        const float xhat = (xr[j] - mu) * rs;
        dr[j] = rs * (gr[j] * pg[j] - a - xhat * b);
      }
    }
  });
  return dx;
}

// dγ (if wanted) and dβ (if wanted), each [D].
void layer_norm_dparams(const Tensor& x, const RowStats& st, const Tensor& dy, Tensor* dgamma,
                        Tensor* dbeta) {
  const int64_t dim = x.shape().back(), rows = x.numel() / dim;
  const float* px = x.data();
  const float* pdy = dy.data();
  float* og = dgamma ? dgamma->data() : nullptr;
  float* ob = dbeta ? dbeta->data() : nullptr;
  parallel_for(0, dim, 64, [&](int64_t lo, int64_t hi) {
    std::vector<double> acc_g(hi - lo, 0.0), acc_b(hi - lo, 0.0);
    for (int64_t r = 0; r < rows; ++r) {
      const float* xr = px + r * dim;
      const float* gr = pdy + r * dim;
      const float mu = st.mean[r], rs = st.rstd[r];
      if (og)
        for (int64_t j = lo; j < hi; ++j)
          acc_g[j - lo] += static_cast<double>(gr[j]) * ((xr[j] - mu) * rs);
      for (int64_t j = lo; j < hi; ++j) acc_b[j - lo] += gr[j];
    }
    for (int64_t j = lo; j < hi; ++j) {
      if (og) og[j] = static_cast<float>(acc_g[j - lo]);
      if (ob) ob[j] = static_cast<float>(acc_b[j - lo]);
    }
  });
}
}  // namespace

Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps) {
  PELAB_CHECK(x.ndim() >= 1 && x.shape().back() > 0,
              "layer_norm: x must have a non-empty last axis, got shape {}", to_string(x.shape()));
  const int64_t dim = x.shape().back();
  PELAB_CHECK(gamma.defined() && gamma.shape() == Shape{dim},
              "layer_norm: gamma {} must be [{}] to match x {}",
              gamma.defined() ? to_string(gamma.shape()) : "(undefined)", dim,
              to_string(x.shape()));
  PELAB_CHECK(beta.defined() && beta.shape() == Shape{dim},
              "layer_norm: beta {} must be [{}] to match x {}",
              beta.defined() ? to_string(beta.shape()) : "(undefined)", dim, to_string(x.shape()));
  PELAB_CHECK(eps >= 0.0f && std::isfinite(eps),
              "layer_norm: eps must be finite and non-negative, got {}", eps);
  const Tensor xc = x.contiguous().detach();
  const Tensor gc = gamma.contiguous().detach();
  const Tensor bc = beta.contiguous().detach();
  const int64_t rows = x.numel() / dim;
  auto st = std::make_shared<RowStats>();
  st->mean.resize(static_cast<size_t>(rows));
  st->rstd.resize(static_cast<size_t>(rows));
  Tensor y = Tensor::empty(x.shape());
  const float* px = xc.data();
  const float* pg = gc.data();
  const float* pb = bc.data();
  float* py = y.data();
  parallel_for(0, rows, row_grain(dim), [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) {
      const float* xr = px + r * dim;
      float* yr = py + r * dim;
      const double mu = detail::lane_sum(dim, [&](int64_t j) { return double{xr[j]}; }) / dim;
      const double ss = detail::lane_sum(dim, [&](int64_t j) {
        const double d = xr[j] - mu;
        return d * d;
      });
      const float muf = static_cast<float>(mu);
      const float rs = static_cast<float>(1.0 / std::sqrt(ss / dim + eps));
      st->mean[r] = muf;
      st->rstd[r] = rs;
      for (int64_t j = 0; j < dim; ++j) yr[j] = (xr[j] - muf) * rs * pg[j] + pb[j];
    }
  });

  if (needs_grad(x, gamma, beta)) {
    const bool nx = x.requires_grad(), ng = gamma.requires_grad(), nb = beta.requires_grad();
    record(y, "layer_norm", {x, gamma, beta}, [xc, gc, st, nx, ng, nb, dim](const Tensor& g) {
      const Tensor dy = g.contiguous();
      TensorList grads(3);
      if (nx) grads[0] = layer_norm_dx(xc, gc, *st, dy);
      if (ng || nb) {
        Tensor dgamma = ng ? Tensor::empty({dim}) : Tensor();
        Tensor dbeta = nb ? Tensor::empty({dim}) : Tensor();
        layer_norm_dparams(xc, *st, dy, ng ? &dgamma : nullptr, nb ? &dbeta : nullptr);
        grads[1] = dgamma;
        grads[2] = dbeta;
      }
      return grads;
    });
  }
  return y;
}

}  // namespace pelab
