// sandwich (Chi et al. 2023): the inner product of two sinusoidal embeddings, as a logit bias
// with a per-head scale and no parameters,
//
//   R[h, i, j] = H / (8(h + 1)) · (Σ_{k=1..d_h/2} cos((p_i − p_j) · base^(−2k/d_h)) − d_h/2),
//
// as NeMo's SandwichRelativePositionEmbedding with hidden_size = d_h. k starts at 1, so the
// frequencies run base^(−2/d_h) … base^(−1). The bias depends on |p_i − p_j| alone, and is 0
// at distance 0 and below 0 elsewhere.
#include <algorithm>
#include <cmath>

#include "pelab/core/error.h"
#include "pelab/positional/scheme.h"

namespace pelab {

namespace {
// Σ_k cos(δ ω_k) − d_h/2 for the head-independent part, in double: the sum of d_h/2 cosines
// near 1 cancels against d_h/2 at short distances.
class CosineSum {
 public:
  CosineSum(int64_t head_dim, double base) : half_(0.5 * static_cast<double>(head_dim)) {
    for (int64_t k = 1; k <= head_dim / 2; ++k)
      omega_.push_back(std::pow(base, -2.0 * static_cast<double>(k) / head_dim));
  }
  double operator()(int64_t delta) const {
    double s = 0.0;
    for (const double w : omega_) s += std::cos(static_cast<double>(delta) * w);
    return s - half_;
  }

 private:
  double half_;
  std::vector<double> omega_;
};

class SandwichTerms : public AttentionTerms {
 public:
  // Every |δ| up to the batch's widest spread of positions is tabulated once per batch when
  // that costs no more than the B·T² values the blocks would compute; otherwise (positions
  // far apart, few tokens) each block computes its cosines itself.
  SandwichTerms(const IntTensor& positions, std::shared_ptr<const CosineSum> cosines,
                std::vector<float> scales)
      : positions_(positions), cosines_(std::move(cosines)), scales_(std::move(scales)) {
    const int64_t B = positions.shape[0], T = positions.shape[1];
    int64_t spread = 0;
    for (int64_t b = 0; b < B; ++b) {
      const auto first = positions.values.begin() + b * T;
      const auto [lo, hi] = std::minmax_element(first, first + T);
      if (T > 0) spread = std::max<int64_t>(spread, static_cast<int64_t>(*hi) - *lo);
    }
    if (spread + 1 <= B * T * T)
      for (int64_t d = 0; d <= spread; ++d) table_.push_back(static_cast<float>((*cosines_)(d)));
  }

  bool has_bias() const override { return true; }
  bool bias_reads_queries() const override { return false; }

  void add_bias(int64_t b, int64_t h, int64_t i0, int64_t i1, int64_t T, const float*, int64_t,
                float* S, int64_t lds) const override {
    const int32_t* p = positions_.data() + b * T;
    const float scale = scales_[h];
    for (int64_t i = i0; i < i1; ++i) {
      float* row = S + (i - i0) * lds;
      for (int64_t j = 0; j < T; ++j) row[j] += scale * cosine_sum(std::abs(p[i] - p[j]));
    }
  }

  Tensor composed_bias(const Tensor& q) const override {
    const int64_t B = q.size(0), H = q.size(1), T = q.size(2);
    Tensor r = Tensor::empty({B, H, T, T});
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t i = 0; i < T; ++i)
          for (int64_t j = 0; j < T; ++j)
            r.data()[((b * H + h) * T + i) * T + j] = static_cast<float>(
                H / (8.0 * (h + 1)) *
                (*cosines_)(positions_.values[b * T + i] - positions_.values[b * T + j]));
    return r;
  }

 private:
  float cosine_sum(int64_t distance) const {
    if (distance < static_cast<int64_t>(table_.size())) return table_[distance];
    return static_cast<float>((*cosines_)(distance));
  }

  IntTensor positions_;
  std::shared_ptr<const CosineSum> cosines_;
  std::vector<float> scales_;  // [H]: H / (8(h + 1))
  std::vector<float> table_;   // [spread + 1]: the cosine sum by |δ|, or empty
};

class Sandwich : public PositionalScheme {
 public:
  explicit Sandwich(const SchemeContext& c) {
    const int64_t dh = c.model.head_dim();
    PELAB_CHECK(dh % 2 == 0, "sandwich needs an even head width: d_model / heads = {} / {} = {}",
                c.model.d_model, c.model.heads, dh);
    const double base = c.keys.number("base");
    PELAB_CHECK(base > 0.0, "positional.base: must be > 0, got {}", base);
    cosines_ = std::make_shared<const CosineSum>(dh, base);
    for (int64_t h = 0; h < c.model.heads; ++h)
      scales_.push_back(static_cast<float>(static_cast<double>(c.model.heads) / (8.0 * (h + 1))));
  }

  std::shared_ptr<const AttentionTerms> attention_terms(const Batch& batch,
                                                        int /*layer*/) const override {
    return std::make_shared<SandwichTerms>(batch.positions, cosines_, scales_);
  }

 private:
  std::shared_ptr<const CosineSum> cosines_;
  std::vector<float> scales_;
};
}  // namespace

SchemeInfo sandwich_scheme() {
  SchemeInfo info{"sandwich",
                  "a fixed per-head bias, the dot product of sinusoidal embeddings of p_i, p_j",
                  {{.name = "base",
                    .type = SchemeKey::Type::Number,
                    .default_value = 10000.0,
                    .help = "the base of the frequencies `base^(−2k/d_h)`, k = 1..d_h/2; > 0"}},
                  [](const SchemeContext& c) { return std::make_unique<Sandwich>(c); }};
  info.acts = SchemeInfo::Acts::Logits;
  info.shift_invariant = true;
  return info;
}

}  // namespace pelab
