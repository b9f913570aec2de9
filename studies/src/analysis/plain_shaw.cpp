#include "pelab/analysis/plain_shaw.h"

#include <algorithm>
#include <cmath>

#include "pelab/core/error.h"

namespace pelab {

namespace {

class PlainShawTerms : public AttentionTerms {
 public:
  PlainShawTerms(const IntTensor& positions, Tensor rel_k, Tensor rel_v, int64_t k)
      : rel_k_(std::move(rel_k)),
        rel_v_(std::move(rel_v)),
        T_(positions.shape[1]),
        dh_(rel_k_.size(1)),
        scale_(1.0f / std::sqrt(static_cast<float>(dh_))) {
    const int64_t B = positions.shape[0];
    for (int64_t b = 1; b < B; ++b)
      PELAB_CHECK(std::equal(positions.data(), positions.data() + T_, positions.data() + b * T_),
                  "plain Shaw terms: every row of the batch must have the same positions");
    bucket_ = IntTensor({T_, T_});  // c(i, j) = clip(p_j − p_i, −k, k) + k
    for (int64_t i = 0; i < T_; ++i)
      for (int64_t j = 0; j < T_; ++j)
        bucket_.values[i * T_ + j] = static_cast<int32_t>(
            std::clamp<int64_t>(positions.values[j] - positions.values[i], -k, k) + k);
    // EK[i, j, :] = wK[c(i, j)], EV likewise: [T, T, d_h] each.
    ek_.resize(T_ * T_ * dh_);
    ev_.resize(T_ * T_ * dh_);
    for (int64_t ij = 0; ij < T_ * T_; ++ij) {
      const int64_t c = bucket_.values[ij];
      std::copy_n(rel_k_.data() + c * dh_, dh_, ek_.data() + ij * dh_);
      std::copy_n(rel_v_.data() + c * dh_, dh_, ev_.data() + ij * dh_);
    }
  }

  TensorList parameters() const override { return {rel_k_, rel_v_}; }
  bool has_bias() const override { return true; }
  bool has_values() const override { return true; }

  // S[r, :] += EK[i] · q_r / √d_h: [T, d_h] · [d_h]. Loops rather than one GEMM call per
  // row, whose set-up would dominate products this small and overstate the plain way's cost.
  void add_bias(int64_t, int64_t, int64_t i0, int64_t i1, int64_t, const float* q, int64_t ldq,
                float* S, int64_t lds) const override {
    for (int64_t i = i0; i < i1; ++i)
      matvec(row(ek_, i), q + (i - i0) * ldq, scale_, S + (i - i0) * lds);
  }

  // dq_r += dS_r · EK[i] / √d_h; dEK[i, j] = dS[r, j] q_r / √d_h, summed into wK by bucket.
  void bias_backward(int64_t, int64_t, int64_t i0, int64_t i1, int64_t, const float* q, int64_t ldq,
                     const float* dS, int64_t lds, float* dq, int64_t lddq,
                     const GradBuffers& grads) const override {
    for (int64_t i = i0; i < i1; ++i) {
      const float* dS_i = dS + (i - i0) * lds;
      vecmat(dS_i, row(ek_, i), scale_, dq + (i - i0) * lddq);
      outer_into_buckets(i, dS_i, q + (i - i0) * ldq, scale_, grads[0]);
    }
  }

  // z_r += α_r · EV[i]: [T] · [T, d_h].
  void add_values(int64_t, int64_t, int64_t i0, int64_t i1, int64_t, const float* alpha,
                  int64_t lda, float* z, int64_t ldz) const override {
    for (int64_t i = i0; i < i1; ++i)
      vecmat(alpha + (i - i0) * lda, row(ev_, i), 1.0f, z + (i - i0) * ldz);
  }

  // dα_r += EV[i] · dz_r; dEV[i, j] = α[r, j] dz_r, summed into wV by bucket.
  void values_backward(int64_t, int64_t, int64_t i0, int64_t i1, int64_t, const float* alpha,
                       int64_t lda, const float* dz, int64_t lddz, float* dalpha, int64_t ldda,
                       const GradBuffers& grads) const override {
    for (int64_t i = i0; i < i1; ++i) {
      const float* dz_i = dz + (i - i0) * lddz;
      matvec(row(ev_, i), dz_i, 1.0f, dalpha + (i - i0) * ldda);
      outer_into_buckets(i, alpha + (i - i0) * lda, dz_i, 1.0f, grads[1]);
    }
  }

  // The [T, T, d_h] tensors as differentiable gathers; per query position i one product.
  Tensor composed_bias(const Tensor& q) const override {  // q: [B, H, T, d_h]
    const int64_t B = q.size(0), H = q.size(1);
    const Tensor ek = embedding(rel_k_, bucket_);  // [T, T, d_h]
    const Tensor qi = reshape(contiguous(permute(q, {2, 0, 1, 3})), {T_, B * H, dh_});
    const Tensor r = mul_scalar(matmul(qi, transpose(ek, 1, 2)), scale_);  // [T, B·H, T]
    return contiguous(permute(reshape(r, {T_, B, H, T_}), {1, 2, 0, 3}));
  }

  Tensor composed_values(const Tensor& alpha) const override {  // alpha: [B, H, T, T]
    const int64_t B = alpha.size(0), H = alpha.size(1);
    const Tensor ev = embedding(rel_v_, bucket_);  // [T, T, d_h]
    const Tensor ai = reshape(contiguous(permute(alpha, {2, 0, 1, 3})), {T_, B * H, T_});
    const Tensor u = matmul(ai, ev);  // [T, B·H, d_h]
    return contiguous(permute(reshape(u, {T_, B, H, dh_}), {1, 2, 0, 3}));
  }

 private:
  const float* row(const std::vector<float>& table, int64_t i) const {
    return table.data() + i * T_ * dh_;
  }

  // out[j] += scale · E[j, :] · x for the T rows of E [T, d_h].
  void matvec(const float* E, const float* x, float scale, float* out) const {
    for (int64_t j = 0; j < T_; ++j) {
      float dot = 0;
      for (int64_t d = 0; d < dh_; ++d) dot += E[j * dh_ + d] * x[d];
      out[j] += scale * dot;
    }
  }

  // out[:] += scale · Σ_j w[j] E[j, :].
  void vecmat(const float* w, const float* E, float scale, float* out) const {
    for (int64_t j = 0; j < T_; ++j) {
      const float wj = scale * w[j];
      for (int64_t d = 0; d < dh_; ++d) out[d] += wj * E[j * dh_ + d];
    }
  }

  // grad[c(i, j), :] += scale · w[j] x for every key j: the row i of the [T, T, d_h] gradient,
  // summed into the table rows it was gathered from.
  void outer_into_buckets(int64_t i, const float* w, const float* x, float scale,
                          float* grad) const {
    for (int64_t j = 0; j < T_; ++j) {
      float* out = grad + static_cast<int64_t>(bucket_.values[i * T_ + j]) * dh_;
      const float wj = scale * w[j];
      for (int64_t d = 0; d < dh_; ++d) out[d] += wj * x[d];
    }
  }

  Tensor rel_k_, rel_v_;
  int64_t T_, dh_;
  float scale_;
  IntTensor bucket_;
  std::vector<float> ek_, ev_;
};

}  // namespace

std::shared_ptr<const AttentionTerms> plain_shaw_terms(const IntTensor& positions,
                                                       const Tensor& rel_k, const Tensor& rel_v,
                                                       int64_t max_distance) {
  return std::make_shared<PlainShawTerms>(positions, rel_k, rel_v, max_distance);
}

}  // namespace pelab
