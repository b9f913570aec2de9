// kerple (Chi et al. 2022): a learned, conditionally positive definite kernel of the distance
// in the attention logits, one (r1, r2) per head shared by every layer (the reference code
// builds one module and hands it to each layer):
//
//   log:   R[h, i, j] = −r1_h · ln(1 + r2_h · |p_j − p_i|)
//   power: R[h, i, j] = −r1_h · |p_j − p_i|^r2_h      (0, with derivative 0, at p_j = p_i)
//
// Before every forward the stored values are projected, r1 ← max(r1, 0.01), r2 ← max(r2,
// 0.01) (power: r2 ← min(max(r2, 0.01), 2)): the kernel is only a kernel there. The forward
// uses the projected values, and the gradient is the one at the projected value, handed to
// the stored value unchanged, so a value pushed past the bound can still come back.
#include <algorithm>
#include <cmath>
#include <limits>

#include "pelab/positional/scheme.h"

namespace pelab {

namespace {
constexpr float kLowest = 0.01f;  // the projection's lower bound, both parameters
constexpr float kPowerR2 = 2.0f;  // power: r2's upper bound (beyond 2 the kernel is not CPD)
constexpr float kNoBound = std::numeric_limits<float>::infinity();

// r [H] → r clamped into [lo, hi]; the backward hands the gradient through unchanged (the
// derivative at the projected value), where a clamp's own derivative would be 0 outside.
Tensor project(const Tensor& r, float lo, float hi) {
  Tensor out = Tensor::empty(r.shape());
  for (int64_t i = 0; i < r.numel(); ++i) out.data()[i] = std::clamp(r.data()[i], lo, hi);
  if (needs_grad(r))
    record(out, "kerple_project", {r}, [](const Tensor& g) { return TensorList{g}; });
  return out;
}

class KerpleTerms : public AttentionTerms {
 public:
  // r1, r2: the stored parameters [H], read and projected at every use, so that the terms
  // always compute with the values a forward would project now.
  KerpleTerms(const IntTensor& positions, Tensor r1, Tensor r2, bool power)
      : positions_(positions), r1_(std::move(r1)), r2_(std::move(r2)), power_(power) {}

  TensorList parameters() const override { return {r1_, r2_}; }
  bool has_bias() const override { return true; }
  bool bias_reads_queries() const override { return false; }

  void add_bias(int64_t b, int64_t h, int64_t i0, int64_t i1, int64_t T, const float*, int64_t,
                float* S, int64_t lds) const override {
    const int32_t* p = positions_.data() + b * T;
    const float r1 = r1_at(h), r2 = r2_at(h);
    const std::vector<float> k = by_distance(p, i0, i1, T, [&](float d) { return kernel(r2, d); });
    for (int64_t i = i0; i < i1; ++i) {
      float* row = S + (i - i0) * lds;
      for (int64_t j = 0; j < T; ++j) {
        const int32_t d = std::abs(p[j] - p[i]);
        row[j] -= r1 * (k.empty() ? kernel(r2, static_cast<float>(d)) : k[d]);
      }
    }
  }

  // ∂R/∂r1 = −k(r2, d), ∂R/∂r2 = −r1 · ∂k/∂r2, both at the projected values; summed in
  // double over the block (thousands of terms of either sign).
  void bias_backward(int64_t b, int64_t h, int64_t i0, int64_t i1, int64_t T, const float*, int64_t,
                     const float* dS, int64_t lds, float*, int64_t,
                     const GradBuffers& grads) const override {
    const int32_t* p = positions_.data() + b * T;
    const float r1 = r1_at(h), r2 = r2_at(h);
    const std::vector<float> k = by_distance(p, i0, i1, T, [&](float d) { return kernel(r2, d); });
    const std::vector<float> dk =
        by_distance(p, i0, i1, T, [&](float d) { return kernel_dr2(r2, d); });
    double g1 = 0.0, g2 = 0.0;
    for (int64_t i = i0; i < i1; ++i) {
      const float* row = dS + (i - i0) * lds;
      for (int64_t j = 0; j < T; ++j) {
        const int32_t d = std::abs(p[j] - p[i]);
        const float df = static_cast<float>(d);
        g1 -= static_cast<double>(row[j]) * (k.empty() ? kernel(r2, df) : k[d]);
        g2 -= static_cast<double>(row[j]) * r1 * (dk.empty() ? kernel_dr2(r2, df) : dk[d]);
      }
    }
    grads[0][h] += static_cast<float>(g1);
    grads[1][h] += static_cast<float>(g2);
  }

  // q: [B, H, T, d_h] → R: [B, H, T, T], from ops on the projected [H] values.
  Tensor composed_bias(const Tensor& q) const override {
    const int64_t B = q.size(0), H = q.size(1), T = q.size(2);
    std::vector<float> dist(static_cast<size_t>(B * T * T));  // |p_j − p_i|: [B, 1, T, T]
    for (int64_t b = 0; b < B; ++b)
      for (int64_t i = 0; i < T; ++i)
        for (int64_t j = 0; j < T; ++j)
          dist[(b * T + i) * T + j] = static_cast<float>(
              std::abs(positions_.values[b * T + j] - positions_.values[b * T + i]));
    const Tensor r1 = reshape(project(r1_, kLowest, kNoBound), {H, 1, 1});
    const Tensor r2 = reshape(project(r2_, kLowest, r2_max()), {H, 1, 1});
    if (!power_) {
      const Tensor d = Tensor::from_vector({B, 1, T, T}, dist);
      return neg(mul(r1, log(add_scalar(mul(r2, d), 1.0f))));
    }
    // d^r2 = exp(r2 ln d) where d > 0; where d = 0 the term is 0 and so is its derivative
    // (ln 1 = 0 stands in for ln 0 so that no inf · 0 reaches the backward).
    std::vector<float> log_d(dist.size()), nonzero(dist.size());
    for (size_t e = 0; e < dist.size(); ++e) {
      log_d[e] = dist[e] > 0.0f ? std::log(dist[e]) : 0.0f;
      nonzero[e] = dist[e] > 0.0f ? 1.0f : 0.0f;
    }
    const Tensor pow_d = mul(exp(mul(r2, Tensor::from_vector({B, 1, T, T}, log_d))),
                             Tensor::from_vector({B, 1, T, T}, nonzero));
    return neg(mul(r1, pow_d));
  }

 private:
  // f at every distance 0..D the block's pairs meet, D the largest: the block then takes one
  // log (or pow) per distance instead of one per pair. Empty where positions lie so far apart
  // that there are more distances than pairs; the caller then computes each pair's own.
  template <class F>
  static std::vector<float> by_distance(const int32_t* p, int64_t i0, int64_t i1, int64_t T, F f) {
    const auto [lo, hi] = std::minmax_element(p, p + T);
    int64_t longest = 0;
    for (int64_t i = i0; i < i1; ++i)
      longest = std::max<int64_t>({longest, int64_t{p[i]} - *lo, int64_t{*hi} - p[i]});
    if (longest + 1 > (i1 - i0) * T) return {};
    std::vector<float> table(static_cast<size_t>(longest + 1));
    for (int64_t d = 0; d <= longest; ++d) table[d] = f(static_cast<float>(d));
    return table;
  }
  float r2_max() const { return power_ ? kPowerR2 : kNoBound; }
  float r1_at(int64_t h) const { return std::clamp(r1_.data()[h], kLowest, kNoBound); }
  float r2_at(int64_t h) const { return std::clamp(r2_.data()[h], kLowest, r2_max()); }
  float kernel(float r2, float d) const {
    if (!power_) return std::log1p(r2 * d);
    return d > 0.0f ? std::pow(d, r2) : 0.0f;
  }
  // ∂k/∂r2: log: d / (1 + r2 d); power: d^r2 ln d (0 at d = 0).
  float kernel_dr2(float r2, float d) const {
    if (!power_) return d / (1.0f + r2 * d);
    return d > 0.0f ? std::pow(d, r2) * std::log(d) : 0.0f;
  }

  IntTensor positions_;
  Tensor r1_, r2_;  // [H], stored (unprojected)
  bool power_;
};

class Kerple : public PositionalScheme {
 public:
  explicit Kerple(const SchemeContext& c) : power_(c.keys.text("kernel") == "power") {
    const int64_t H = c.model.heads;
    // The sources' init: log r1 ~ U(0, 2), r2 ~ U(0, 1); power r1 ~ U(0, 1), r2 ~ U(0, 2);
    // then projected, so a fresh checkpoint stores values the forward uses as they are.
    r1_ = c.params.add_uniform("kerple.r1", {H}, 0.0f, power_ ? 1.0f : 2.0f);
    r2_ = c.params.add_uniform("kerple.r2", {H}, 0.0f, power_ ? 2.0f : 1.0f);
    for (int64_t h = 0; h < H; ++h) {
      r1_.data()[h] = std::max(r1_.data()[h], kLowest);
      r2_.data()[h] = std::max(r2_.data()[h], kLowest);
    }
  }

  // The terms project the stored values wherever they use them, in every forward (training,
  // evaluation, dump): whatever a checkpoint or an optimizer step left there.
  std::shared_ptr<const AttentionTerms> attention_terms(const Batch& batch,
                                                        int /*layer*/) const override {
    return std::make_shared<KerpleTerms>(batch.positions, r1_, r2_, power_);
  }

 private:
  bool power_;
  Tensor r1_, r2_;  // [H], stored (unprojected) values
};
}  // namespace

SchemeInfo kerple_scheme() {
  SchemeInfo info{"kerple",
                  "a learned per-head log or power kernel of |p_j − p_i| in the logits (shared)",
                  {{.name = "kernel",
                    .type = SchemeKey::Type::Text,
                    .default_value = std::string("log"),
                    .choices = {"log", "power"},
                    .help = "`log`: −r1·ln(1 + r2·δ); `power`: −r1·δ^r2, δ the distance"}},
                  [](const SchemeContext& c) { return std::make_unique<Kerple>(c); }};
  info.acts = SchemeInfo::Acts::Logits;
  info.shift_invariant = true;
  return info;
}

}  // namespace pelab
