// cope (Golovneva et al. 2024), contextual position: a query counts the keys it attends to
// and reads a learned embedding at that count. With the content scores S⁰ = q_i·k_j/√d_h,
//
//   g_it = σ(S⁰[h, i, t]) for an admissible key t (real, t ≤ i), else 0
//   ν_ij = min(Σ_{t ≥ j} g_it, npos − 1)
//   R[h, i, j] = (1 − w)·q_i·e[⌊ν_ij⌋] + w·q_i·e[⌈ν_ij⌉],   w = ν_ij − ⌊ν_ij⌋
//
// e [npos, d_h] per layer, shared by the heads (npos = positional.max_position). `positions`
// are not read: a position is what the gates count. Causal only, as the paper's code and
// x-transformers' CoPE.
//
// The fused hooks work on one block of query rows at a time: the gates are recomputed from
// the block's content scores in backward (S⁰ = q kᵀ/√d_h again), never kept as [B, H, T, T].
// Backward, per query row, with dS the gradient of the block's scores:
//   dP[n] += dS_ij·(1 − w) at n = ⌊ν⌋, dS_ij·w at n = ⌈ν⌉;  dq += dP·e;  de += dPᵀ·q
//   dν_ij = dS_ij·(q·e[⌈ν⌉] − q·e[⌊ν⌋]) (0 where ν is clamped);  dg_it = Σ_{j ≤ t} dν_ij
//   dS⁰_it = dg_it·g_it(1 − g_it), added to dS: the kernel takes it to q and k with the rest.
#include <cmath>

#include "pelab/backend/gemm.h"
#include "pelab/core/error.h"
#include "pelab/positional/scheme.h"

namespace pelab {

namespace {
float sigmoid(float x) {
  return 1.0f / (1.0f + std::exp(-x));
}

// Where ν_ij falls between two rows of e, for one key.
struct Count {
  int64_t lo, hi;
  float w;
  bool clamped;
};

class CopeTerms : public AttentionTerms {
 public:
  CopeTerms(const IntTensor& key_mask, Tensor e)
      : key_mask_(key_mask), e_(std::move(e)), npos_(e_.size(0)), dh_(e_.size(1)) {}

  TensorList parameters() const override { return {e_}; }
  bool bias_reads_keys() const override { return true; }
  bool needs_every_key() const override { return true; }

  // S holds S⁰ on entry: each key's gate is read before its own R is added.
  void add_bias_with_keys(int64_t b, int64_t, int64_t i0, int64_t i1, int64_t T, const float* q,
                          int64_t ldq, const float*, int64_t, float* S,
                          int64_t lds) const override {
    const int64_t n = i1 - i0;
    std::vector<float>& P = scratch(n * npos_, 0);
    // P[r, n] = q_r · e[n]
    gemm(false, true, n, npos_, dh_, 1.0f, q, ldq, e_.data(), dh_, 0.0f, P.data(), npos_);
    const int32_t* mask = key_mask_.data() + b * T;
    for (int64_t r = 0; r < n; ++r) {
      float* row = S + r * lds;
      const float* p = P.data() + r * npos_;
      float total = 0.0f;
      for (int64_t j = T - 1; j >= 0; --j) {
        if (admissible(mask, i0 + r, j)) total += sigmoid(row[j]);
        const Count c = count(total);
        row[j] += (1.0f - c.w) * p[c.lo] + c.w * p[c.hi];
      }
    }
  }

  void bias_backward_with_keys(int64_t b, int64_t, int64_t i0, int64_t i1, int64_t T,
                               const float* q, int64_t ldq, const float* k, int64_t ldk, float* dS,
                               int64_t lds, float* dq, int64_t lddq, float*, int64_t,
                               const GradBuffers& grads) const override {
    const int64_t n = i1 - i0;
    std::vector<float>& P = scratch(n * npos_, 0);
    std::vector<float>& dP = scratch(n * npos_, 1);
    std::vector<float>& S0 = scratch(n * T, 2);
    std::vector<float>& dnu = scratch(T, 3);
    std::fill(dP.begin(), dP.begin() + n * npos_, 0.0f);
    gemm(false, true, n, npos_, dh_, 1.0f, q, ldq, e_.data(), dh_, 0.0f, P.data(), npos_);
    const float scale = 1.0f / std::sqrt(static_cast<float>(dh_));  // as the kernel's
    gemm(false, true, n, T, dh_, scale, q, ldq, k, ldk, 0.0f, S0.data(), T);
    const int32_t* mask = key_mask_.data() + b * T;
    for (int64_t r = 0; r < n; ++r) {
      float* ds = dS + r * lds;
      const float* s0 = S0.data() + r * T;
      const float* p = P.data() + r * npos_;
      float* dp = dP.data() + r * npos_;
      float total = 0.0f;
      for (int64_t j = T - 1; j >= 0; --j) {  // the forward's order: counts from the right
        if (admissible(mask, i0 + r, j)) total += sigmoid(s0[j]);
        const Count c = count(total);
        dp[c.lo] += ds[j] * (1.0f - c.w);
        dp[c.hi] += ds[j] * c.w;
        dnu[j] = c.clamped ? 0.0f : ds[j] * (p[c.hi] - p[c.lo]);
      }
      float prefix = 0.0f;  // dg_it = Σ_{j ≤ t} dν_ij
      for (int64_t t = 0; t < T; ++t) {
        prefix += dnu[t];
        if (!admissible(mask, i0 + r, t)) continue;
        const float g = sigmoid(s0[t]);
        ds[t] += prefix * g * (1.0f - g);
      }
    }
    gemm(false, false, n, dh_, npos_, 1.0f, dP.data(), npos_, e_.data(), dh_, 1.0f, dq, lddq);
    gemm(true, false, npos_, dh_, n, 1.0f, dP.data(), npos_, q, ldq, 1.0f, grads[0], dh_);
  }

  // q: [B, H, T, d_h], scores S⁰: [B, H, T, T] → R: [B, H, T, T], from differentiable ops:
  // σ(x) as (1 + tanh(x/2))/2, the count from the right as a product with [t ≥ j], the clamp
  // as npos − 1 − ReLU(npos − 1 − Σ).
  Tensor composed_bias_with_keys(const Tensor& q, const Tensor&,
                                 const Tensor& scores) const override {
    const int64_t B = q.size(0), H = q.size(1), T = q.size(2);
    const Tensor gates = mul(mul_scalar(add_scalar(tanh(mul_scalar(scores, 0.5f)), 1.0f), 0.5f),
                             admissible_mask(B, T));
    std::vector<float> later(static_cast<size_t>(T * T));  // [t, j] = [t ≥ j]
    for (int64_t t = 0; t < T; ++t)
      for (int64_t j = 0; j <= t; ++j) later[t * T + j] = 1.0f;
    const Tensor total = matmul(gates, Tensor::from_vector({T, T}, later));
    const float top = static_cast<float>(npos_ - 1);
    const Tensor nu = add_scalar(neg(relu(add_scalar(neg(total), top))), top);  // [B, H, T, T]
    IntTensor lo({B, H, T, T}), hi({B, H, T, T});
    std::vector<float> floor_nu(static_cast<size_t>(nu.numel()));
    const std::vector<float> values = nu.to_vector();
    for (size_t x = 0; x < values.size(); ++x) {
      floor_nu[x] = std::floor(values[x]);
      lo.values[x] = static_cast<int32_t>(floor_nu[x]);
      hi.values[x] = static_cast<int32_t>(std::ceil(values[x]));
    }
    const Tensor w = sub(nu, Tensor::from_vector({B, H, T, T}, floor_nu));
    const Tensor qe = matmul(q, transpose(e_, 0, 1));  // [B, H, T, npos]
    const Tensor at_lo = gather_last(qe, lo), at_hi = gather_last(qe, hi);
    return add(at_lo, mul(w, sub(at_hi, at_lo)));
  }

 private:
  static bool admissible(const int32_t* mask, int64_t i, int64_t t) { return t <= i && mask[t]; }

  Count count(float total) const {
    const float top = static_cast<float>(npos_ - 1);
    if (total >= top) return {npos_ - 1, npos_ - 1, 0.0f, true};
    const float lo = std::floor(total);
    return {static_cast<int64_t>(lo), static_cast<int64_t>(std::ceil(total)), total - lo, false};
  }

  // [B, 1, T, T]: 1 where key j is real and j ≤ i.
  Tensor admissible_mask(int64_t B, int64_t T) const {
    std::vector<float> m(static_cast<size_t>(B * T * T));
    for (int64_t b = 0; b < B; ++b)
      for (int64_t i = 0; i < T; ++i)
        for (int64_t j = 0; j < T; ++j)
          m[(b * T + i) * T + j] = admissible(key_mask_.data() + b * T, i, j) ? 1.0f : 0.0f;
    return Tensor::from_vector({B, 1, T, T}, m);
  }

  // The calling thread's scratch buffer `slot`, at least `size` long.
  static std::vector<float>& scratch(int64_t size, int slot) {
    thread_local std::vector<float> buffers[4];
    std::vector<float>& v = buffers[slot];
    if (static_cast<int64_t>(v.size()) < size) v.resize(size);
    return v;
  }

  IntTensor key_mask_;
  Tensor e_;
  int64_t npos_, dh_;
};

class Cope : public PositionalScheme {
 public:
  explicit Cope(const SchemeContext& c) {
    const ModelConfig& m = c.model;
    PELAB_CHECK(m.causal,
                "model.causal: cope counts the keys at or before each query and is causal only; "
                "it needs model.causal: true, got false");
    const int64_t npos = c.keys.integer("max_position");
    for (int64_t l = 0; l < m.layers; ++l)  // the sources' init: e = 0
      e_.push_back(c.params.add_constant("layers." + std::to_string(l) + ".attn.cope_emb",
                                         {npos, m.head_dim()}, 0.0f));
  }

  std::shared_ptr<const AttentionTerms> attention_terms(const Batch& batch,
                                                        int layer) const override {
    return std::make_shared<CopeTerms>(batch.key_mask, e_[layer]);
  }

 private:
  std::vector<Tensor> e_;
};
}  // namespace

SchemeInfo cope_scheme() {
  SchemeInfo info{"cope",
                  "contextual position: each query counts its gated keys and reads a learned "
                  "embedding at that count (causal only)",
                  {{.name = "max_position",
                    .type = SchemeKey::Type::Integer,
                    .default_value = int64_t{16},
                    .min = 1,
                    .max = 1 << 20,
                    .help = "`npos`, the rows of `e`: counts are capped at npos − 1 (not "
                            "`randomize.max_position`)"}},
                  [](const SchemeContext& c) { return std::make_unique<Cope>(c); }};
  info.acts = SchemeInfo::Acts::Logits;
  info.shift_invariant = true;  // it reads no position at all
  info.causal_only = true;
  return info;
}

}  // namespace pelab
