// t5 (Raffel et al. 2020): R[h, i, j] = bias[bucket(p_j − p_i), h], one [num_buckets, H] table
// shared by all layers. Bucketing as T5's reference code, bidirectional: half the buckets
// per sign (j > i in the upper half); exact below nb/4 where nb = num_buckets; then
// logarithmic up to max_distance, beyond which distances share the last bucket. The log is
// taken in double precision per integer distance (a float32 log can round a boundary down).
#include <cmath>

#include "pelab/core/error.h"
#include "pelab/positional/functions.h"
#include "pelab/positional/scheme.h"

namespace pelab {

int64_t t5_bucket(int64_t relative, int64_t num_buckets, int64_t max_distance) {
  const int64_t nb = num_buckets / 2;
  int64_t bucket = relative > 0 ? nb : 0;
  const int64_t n = relative < 0 ? -relative : relative;
  const int64_t max_exact = nb / 2;
  if (n < max_exact) return bucket + n;
  const double scaled = std::log(static_cast<double>(n) / max_exact) /
                        std::log(static_cast<double>(max_distance) / max_exact) *
                        static_cast<double>(nb - max_exact);
  // Distances far past max_distance saturate; cap before converting to avoid overflow.
  const int64_t large = max_exact + static_cast<int64_t>(std::min(scaled, 1e9));
  return bucket + std::min(nb - 1, large);
}

namespace {
class T5Terms : public AttentionTerms {
 public:
  T5Terms(const IntTensor& positions, Tensor table, std::shared_ptr<const std::vector<int32_t>> lut,
          int64_t lut_radius)
      : positions_(positions),
        table_(std::move(table)),
        lut_(std::move(lut)),
        radius_(lut_radius) {}

  TensorList parameters() const override { return {table_}; }
  bool has_bias() const override { return true; }
  bool bias_reads_queries() const override { return false; }

  void add_bias(int64_t b, int64_t h, int64_t i0, int64_t i1, int64_t T, const float*, int64_t,
                float* S, int64_t lds) const override {
    const int32_t* p = positions_.data() + b * T;
    const float* bias = table_.data();
    const int64_t H = table_.size(1);
    for (int64_t i = i0; i < i1; ++i) {
      float* row = S + (i - i0) * lds;
      for (int64_t j = 0; j < T; ++j) row[j] += bias[bucket(p[j] - p[i]) * H + h];
    }
  }

  void bias_backward(int64_t b, int64_t h, int64_t i0, int64_t i1, int64_t T, const float*, int64_t,
                     const float* dS, int64_t lds, float*, int64_t,
                     const GradBuffers& grads) const override {
    const int32_t* p = positions_.data() + b * T;
    const int64_t H = table_.size(1);
    float* g = grads[0];
    for (int64_t i = i0; i < i1; ++i) {
      const float* row = dS + (i - i0) * lds;
      for (int64_t j = 0; j < T; ++j) g[bucket(p[j] - p[i]) * H + h] += row[j];
    }
  }

  Tensor composed_bias(const Tensor& q) const override {
    const int64_t B = q.size(0), T = q.size(2);
    IntTensor buckets({B, T, T});
    for (int64_t b = 0; b < B; ++b)
      for (int64_t i = 0; i < T; ++i)
        for (int64_t j = 0; j < T; ++j)
          buckets.values[(b * T + i) * T + j] = static_cast<int32_t>(
              bucket(positions_.values[b * T + j] - positions_.values[b * T + i]));
    return permute(embedding(table_, buckets), {0, 3, 1, 2});  // [B, T, T, H] → [B, H, T, T]
  }

 private:
  int64_t bucket(int64_t relative) const {
    const int64_t r = std::clamp<int64_t>(relative, -radius_, radius_);
    return (*lut_)[r + radius_];
  }
  IntTensor positions_;
  Tensor table_;
  std::shared_ptr<const std::vector<int32_t>> lut_;
  int64_t radius_;
};

class T5 : public PositionalScheme {
 public:
  explicit T5(const SchemeContext& c) {
    const int64_t nb = c.keys.integer("num_buckets");
    const int64_t max_distance = c.keys.integer("max_distance");
    PELAB_CHECK(nb >= 4 && nb % 2 == 0,
                "positional.num_buckets must be even and at least 4, got {}", nb);
    PELAB_CHECK(max_distance > nb / 4,
                "positional.max_distance ({}) must exceed num_buckets / 4 = {} (the exact range)",
                max_distance, nb / 4);
    table_ = c.params.add_normal("t5_bias.weight", {nb, c.model.heads}, 0.02f);
    // Every distance at or past max_distance falls in the last bucket of its sign, so one
    // lookup table over [−max_distance, max_distance] covers all distances.
    radius_ = max_distance;
    auto lut = std::make_shared<std::vector<int32_t>>(2 * radius_ + 1);
    for (int64_t r = -radius_; r <= radius_; ++r)
      (*lut)[r + radius_] = static_cast<int32_t>(t5_bucket(r, nb, max_distance));
    lut_ = lut;
  }

  std::shared_ptr<const AttentionTerms> attention_terms(const Batch& batch,
                                                        int /*layer*/) const override {
    return std::make_shared<T5Terms>(batch.positions, table_, lut_, radius_);
  }

 private:
  Tensor table_;
  std::shared_ptr<const std::vector<int32_t>> lut_;
  int64_t radius_ = 0;
};
}  // namespace

SchemeInfo t5_scheme() {
  SchemeInfo info{"t5",
                  "a learned per-head bias for bucketed relative distances (shared by layers)",
                  {{.name = "max_distance",
                    .type = SchemeKey::Type::Integer,
                    .default_value = int64_t{128},
                    .min = 1,
                    .max = 1 << 24,
                    .help = "distances at or beyond it share the last bucket of their sign"},
                   {.name = "num_buckets",
                    .type = SchemeKey::Type::Integer,
                    .default_value = int64_t{32},
                    .min = 4,
                    .max = 1 << 20,
                    .help = "buckets of the bias table, half per sign; even"}},
                  [](const SchemeContext& c) { return std::make_unique<T5>(c); }};
  info.acts = SchemeInfo::Acts::Logits;
  info.shift_invariant = true;
  return info;
}

}  // namespace pelab
