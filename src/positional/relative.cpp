// relative (Shaw et al. 2018): with c = clip(p_j − p_i, −k, k) + k,
//   R[h, i, j] = (q_i · wK[c]) / sqrt(d_h)        U[i, j] = wV[c]
// one (wK, wV) pair of [2k+1, d_h] tables per layer, shared by the heads.
//
// Never a [T, T, d_h] tensor: the logit side projects each query onto the 2k+1 table rows
// (a [rows, 2k+1] GEMM) and gathers; the value side sums the attention weights into the 2k+1
// buckets and multiplies by wV. Backward runs the same steps in reverse:
//   dP[r, c] = Σ_{j: c(i,j) = c} dS[r, j];  dq += dP·wK/√d_h;  dwK += dPᵀ·q/√d_h
//   W[r, c]  = Σ_{j: c(i,j) = c} α[r, j];   dα[r, j] += (dz·wVᵀ)[r, c(i, j)];  dwV += Wᵀ·dz
#include <cmath>
#include <span>

#include "pelab/backend/gemm.h"
#include "pelab/core/error.h"
#include "pelab/core/parallel.h"
#include "pelab/positional/scheme.h"

namespace pelab {

namespace {
class ShawTerms : public AttentionTerms {
 public:
  ShawTerms(const IntTensor& positions, Tensor rel_k, Tensor rel_v, int64_t k)
      : positions_(positions),
        rel_k_(std::move(rel_k)),
        rel_v_(std::move(rel_v)),
        k_(k),
        rows_(2 * k + 1),
        dh_(rel_k_.size(1)),
        scale_(1.0f / std::sqrt(static_cast<float>(dh_))) {
    PELAB_ASSERT(k_ >= 1);  // buckets 0 and 2k must differ
    find_near_keys();
  }

  TensorList parameters() const override { return {rel_k_, rel_v_}; }
  bool has_bias() const override { return true; }
  bool has_values() const override { return true; }

  void add_bias(int64_t b, int64_t, int64_t i0, int64_t i1, int64_t T, const float* q, int64_t ldq,
                float* S, int64_t lds) const override {
    const int64_t n = i1 - i0;
    std::vector<float>& P = scratch(n * rows_);
    // P[r, c] = q_r · wK[c] / √d_h
    gemm(false, true, n, rows_, dh_, scale_, q, ldq, rel_k_.data(), dh_, 0.0f, P.data(), rows_);
    for (int64_t i = i0; i < i1; ++i)
      gather_add(b, i, T, P.data() + (i - i0) * rows_, S + (i - i0) * lds);
  }

  void bias_backward(int64_t b, int64_t, int64_t i0, int64_t i1, int64_t T, const float* q,
                     int64_t ldq, const float* dS, int64_t lds, float* dq, int64_t lddq,
                     const GradBuffers& grads) const override {
    const int64_t n = i1 - i0;
    std::vector<float>& dP = scratch(n * rows_);
    std::fill(dP.begin(), dP.begin() + n * rows_, 0.0f);
    scatter_rows(b, i0, i1, T, dS, lds, dP.data());
    gemm(false, false, n, dh_, rows_, scale_, dP.data(), rows_, rel_k_.data(), dh_, 1.0f, dq, lddq);
    gemm(true, false, rows_, dh_, n, scale_, dP.data(), rows_, q, ldq, 1.0f, grads[0], dh_);
  }

  void add_values(int64_t b, int64_t, int64_t i0, int64_t i1, int64_t T, const float* alpha,
                  int64_t lda, float* z, int64_t ldz) const override {
    const int64_t n = i1 - i0;
    std::vector<float>& W = bucket_weights(b, i0, i1, T, alpha, lda);
    gemm(false, false, n, dh_, rows_, 1.0f, W.data(), rows_, rel_v_.data(), dh_, 1.0f, z, ldz);
  }

  void values_backward(int64_t b, int64_t, int64_t i0, int64_t i1, int64_t T, const float* alpha,
                       int64_t lda, const float* dz, int64_t lddz, float* dalpha, int64_t ldda,
                       const GradBuffers& grads) const override {
    const int64_t n = i1 - i0;
    std::vector<float>& W = bucket_weights(b, i0, i1, T, alpha, lda);
    gemm(true, false, rows_, dh_, n, 1.0f, W.data(), rows_, dz, lddz, 1.0f, grads[1], dh_);
    std::vector<float>& dW = scratch(n * rows_);  // dW = dz · wVᵀ
    gemm(false, true, n, rows_, dh_, 1.0f, dz, lddz, rel_v_.data(), dh_, 0.0f, dW.data(), rows_);
    for (int64_t i = i0; i < i1; ++i)
      gather_add(b, i, T, dW.data() + (i - i0) * rows_, dalpha + (i - i0) * ldda);
  }

  Tensor composed_bias(const Tensor& q) const override {  // q: [B, H, T, d_h]
    const Tensor projected = mul_scalar(matmul(q, transpose(rel_k_, 0, 1)), scale_);
    return gather_last(projected, bucket_index(q.size(0), q.size(1), q.size(2)));
  }

  Tensor composed_values(const Tensor& alpha) const override {  // alpha: [B, H, T, T]
    const IntTensor idx = bucket_index(alpha.size(0), alpha.size(1), alpha.size(2));
    return matmul(scatter_add_last(alpha, idx, rows_), rel_v_);
  }

 private:
  int64_t bucket(int64_t relative) const { return std::clamp<int64_t>(relative, -k_, k_) + k_; }

  // idx[b, h, i, j] = c(b, i, j), the same for every head.
  IntTensor bucket_index(int64_t B, int64_t H, int64_t T) const {
    IntTensor idx({B, H, T, T});
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t i = 0; i < T; ++i)
          for (int64_t j = 0; j < T; ++j)
            idx.values[((b * H + h) * T + i) * T + j] = static_cast<int32_t>(
                bucket(positions_.values[b * T + j] - positions_.values[b * T + i]));
    return idx;
  }

  // W[r, c] = Σ_{j: c(i, j) = c} α[r, j] for the rows [i0, i1), in the thread's scratch.
  std::vector<float>& bucket_weights(int64_t b, int64_t i0, int64_t i1, int64_t T,
                                     const float* alpha, int64_t lda) const {
    thread_local std::vector<float> W;
    const int64_t n = i1 - i0;
    if (static_cast<int64_t>(W.size()) < n * rows_) W.resize(n * rows_);
    std::fill(W.begin(), W.begin() + n * rows_, 0.0f);
    scatter_rows(b, i0, i1, T, alpha, lda, W.data());
    return W;
  }

  // With consecutive positions (p[j] = p[0] + j: the default, and any shift of it) the bucket
  // of (i, j) is clip(j − i, −k, k) + k: bucket 0 for the keys j < i − k, one key per bucket
  // in between, bucket 2k for j > i + k. gather_add and scatter_rows then run over whole
  // ranges (vector code instead of a bucket computation and an indexed access per key), and
  // add the same terms in the same order as the definition: bit-identical results.
  static bool consecutive(const int32_t* p, int64_t T) {
    for (int64_t j = 1; j < T; ++j)
      if (static_cast<int64_t>(p[j]) != static_cast<int64_t>(p[0]) + j) return false;
    return true;
  }

  // The keys [lo, hi) of query row i that fall in distinct buckets, when consecutive.
  std::pair<int64_t, int64_t> middle(int64_t i, int64_t T) const {
    return {std::clamp<int64_t>(i - k_, 0, T), std::clamp<int64_t>(i + k_ + 1, 0, T)};
  }

  // row[j] += table[c(i, j)] for every key j of query i in batch row b: one addition each.
  void gather_add(int64_t b, int64_t i, int64_t T, const float* table, float* row) const {
    PELAB_ASSERT(T == positions_.shape[1]);
    const float first = table[0], last = table[2 * k_];
    if (!consecutive_[b]) {  // the outer buckets' keys in vector code, then the near keys
      const int32_t* p = positions_.data() + b * T;
      const int64_t pi = p[i];
      for (int64_t j = 0; j < T; ++j) {
        const int64_t d = p[j] - pi;
        row[j] = d <= -k_ ? row[j] + first : d >= k_ ? row[j] + last : row[j];
      }
      for (const NearKey& near : near_keys(b, i)) row[near.key] += table[near.bucket];
      return;
    }
    const auto [lo, hi] = middle(i, T);
    for (int64_t j = 0; j < lo; ++j) row[j] += first;
    for (int64_t j = lo; j < hi; ++j) row[j] += table[j - i + k_];
    for (int64_t j = hi; j < T; ++j) row[j] += last;
  }

  // out[r, c(i0 + r, j)] += in[r, j] for the query rows [i0, i1) of batch row b and every
  // key j, each bucket's terms added in the order of j (the definition: for j, out[c(i, j)]
  // += in[j]).
  void scatter_rows(int64_t b, int64_t i0, int64_t i1, int64_t T, const float* in, int64_t ld,
                    float* out) const {
    PELAB_ASSERT(T == positions_.shape[1]);
    if (!consecutive_[b]) {
      scatter_rows_spread(b, i0, i1, T, in, ld, out);
      return;
    }
    for (int64_t i = i0; i < i1; ++i) {
      const float* row = in + (i - i0) * ld;
      float* o = out + (i - i0) * rows_;
      const auto [lo, hi] = middle(i, T);
      float first = o[0];
      for (int64_t j = 0; j < lo; ++j) first += row[j];
      o[0] = first;
      for (int64_t j = lo; j < hi; ++j) o[j - i + k_] += row[j];
      float last = o[2 * k_];
      for (int64_t j = hi; j < T; ++j) last += row[j];
      o[2 * k_] = last;
    }
  }

  // scatter_rows for positions that are not consecutive (randomized ones: sorted, far apart,
  // then the padding numbered by its index). A key at distance ≤ −k or ≥ k from its query
  // goes to an outer bucket (0 or 2k); with spread-out positions that is nearly every key,
  // and adding them one at a time into memory makes a chain of dependent loads and stores.
  // So each row's two outer sums are carried in a lane of their own, all rows side by side,
  // still key by key in the order of j; the few near keys go straight to their buckets. The
  // same additions in the same order, bit for bit, as the definition.
  void scatter_rows_spread(int64_t b, int64_t i0, int64_t i1, int64_t T, const float* in,
                           int64_t ld, float* out) const {
    const int64_t n = i1 - i0;
    thread_local std::vector<float> in_by_key, outer;  // [T, n]: in transposed; [2, n]
    if (static_cast<int64_t>(in_by_key.size()) < T * n) in_by_key.resize(T * n);
    if (static_cast<int64_t>(outer.size()) < 2 * n) outer.resize(2 * n);
    float* __restrict t = in_by_key.data();
    float* __restrict first = outer.data();
    float* __restrict last = first + n;
    for (int64_t r = 0; r < n; ++r) {
      const float* row = in + r * ld;
      float* o = out + r * rows_;
      for (const NearKey& near : near_keys(b, i0 + r)) o[near.bucket] += row[near.key];
      first[r] = o[0];
      last[r] = o[2 * k_];
    }
    for (int64_t j = 0; j < T; ++j)  // contiguous stores: strided ones would queue up
      for (int64_t r = 0; r < n; ++r) t[j * n + r] = in[r * ld + j];
    const int32_t* p = positions_.data() + b * T;
    const int32_t* pq = p + i0;
    for (int64_t j = 0; j < T; ++j) {
      const float* x = t + j * n;
      const int64_t pj = p[j];
      for (int64_t r = 0; r < n; ++r) {
        const int64_t d = pj - pq[r];
        first[r] = d <= -k_ ? first[r] + x[r] : first[r];
        last[r] = d >= k_ ? last[r] + x[r] : last[r];
      }
    }
    for (int64_t r = 0; r < n; ++r) {
      out[r * rows_] = first[r];
      out[r * rows_ + 2 * k_] = last[r];
    }
  }

  // Per batch row, whether its positions are consecutive; for each query of a row whose
  // positions are not, its near keys (distance within ±(k − 1), the only ones not in an outer
  // bucket) with their buckets, in key order. Found once per batch and layer, not again for
  // every head and hook.
  void find_near_keys() {
    const int64_t B = positions_.shape[0], T = positions_.shape[1];
    consecutive_.assign(B, 0);
    near_begin_.assign(B, {});
    near_.assign(B, {});
    parallel_for(0, B, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t b = lo; b < hi; ++b) {
        const int32_t* p = positions_.data() + b * T;
        consecutive_[b] = consecutive(p, T);
        if (consecutive_[b]) continue;
        near_begin_[b].resize(T + 1);
        for (int64_t i = 0; i < T; ++i) {
          near_begin_[b][i] = static_cast<int64_t>(near_[b].size());
          for (int64_t j = 0; j < T; ++j) {
            const int64_t d = int64_t{p[j]} - p[i];
            if (d > -k_ && d < k_)
              near_[b].push_back({static_cast<int32_t>(j), static_cast<int32_t>(d + k_)});
          }
        }
        near_begin_[b][T] = static_cast<int64_t>(near_[b].size());
      }
    });
  }

  struct NearKey {
    int32_t key, bucket;
  };
  // The near keys of query i in batch row b (a row whose positions are not consecutive).
  std::span<const NearKey> near_keys(int64_t b, int64_t i) const {
    return {near_[b].data() + near_begin_[b][i], near_[b].data() + near_begin_[b][i + 1]};
  }

  static std::vector<float>& scratch(int64_t size) {
    thread_local std::vector<float> buffer;
    if (static_cast<int64_t>(buffer.size()) < size) buffer.resize(size);
    return buffer;
  }

  IntTensor positions_;
  Tensor rel_k_, rel_v_;
  int64_t k_, rows_, dh_;
  float scale_;
  std::vector<uint8_t> consecutive_;              // [B]
  std::vector<std::vector<int64_t>> near_begin_;  // [B][T + 1], rows not consecutive only
  std::vector<std::vector<NearKey>> near_;        // [B]: near_keys(b, i) for every i
};

class Relative : public PositionalScheme {
 public:
  explicit Relative(const SchemeContext& c) : k_(c.keys.integer("max_distance")) {
    const ModelConfig& m = c.model;
    ParameterStore& params = c.params;
    for (int64_t l = 0; l < m.layers; ++l) {
      const std::string prefix = "layers." + std::to_string(l) + ".attn.";
      rel_k_.push_back(params.add_normal(prefix + "rel_k", {2 * k_ + 1, m.head_dim()}, 0.02f));
      rel_v_.push_back(params.add_normal(prefix + "rel_v", {2 * k_ + 1, m.head_dim()}, 0.02f));
    }
  }

  std::shared_ptr<const AttentionTerms> attention_terms(const Batch& batch,
                                                        int layer) const override {
    return std::make_shared<ShawTerms>(batch.positions, rel_k_[layer], rel_v_[layer], k_);
  }

 private:
  int64_t k_;
  std::vector<Tensor> rel_k_, rel_v_;
};
}  // namespace

SchemeInfo relative_scheme() {
  SchemeInfo info{
      "relative",
      "Shaw et al.: learned embeddings of clipped distances in the logits and the values",
      {{.name = "max_distance",
        .type = SchemeKey::Type::Integer,
        .default_value = int64_t{16},
        .min = 1,
        .max = 1000000,
        .help = "`k`: distances beyond ±k share the outermost embedding"}},
      [](const SchemeContext& c) { return std::make_unique<Relative>(c); }};
  info.acts = SchemeInfo::Acts::LogitsAndValues;
  info.shift_invariant = true;
  return info;
}

}  // namespace pelab
