// alibi (Press et al. 2022), symmetric: R[h, i, j] = −m_h·|p_j − p_i|, with the paper's slopes
// m_h = 2^(−8(h+1)/H) for H a power of two; otherwise the slopes for the power of two c below H
// followed by every other slope of the schedule for 2c. No parameters.
//
// positional.bidirectional: deepmind is the encoder ALiBi of DeepMind's
// randomized_positional_encodings, R[h, i, j] = m_h·(−|p_j − p_i| + ½·[p_j < p_i]): an earlier
// key costs half a slope less than a later one at the same distance, so that the model can
// tell left from right. symmetric (the default) stays exactly the paper's mirrored form.
#include <cmath>

#include "pelab/core/error.h"
#include "pelab/positional/functions.h"
#include "pelab/positional/scheme.h"

namespace pelab {

std::vector<double> alibi_slopes(int64_t heads) {
  auto power_of_two = [](int64_t n) {
    std::vector<double> s;
    for (int64_t h = 0; h < n; ++h) s.push_back(std::pow(2.0, -8.0 * (h + 1) / n));
    return s;
  };
  int64_t c = 1;
  while (c * 2 <= heads) c *= 2;
  std::vector<double> slopes = power_of_two(c);
  if (c != heads) {
    const std::vector<double> extra = power_of_two(2 * c);
    for (int64_t i = 0; static_cast<int64_t>(slopes.size()) < heads; i += 2)
      slopes.push_back(extra[i]);
  }
  return slopes;
}

namespace {
class AlibiTerms : public AttentionTerms {
 public:
  AlibiTerms(const IntTensor& positions, std::vector<float> slopes, bool deepmind)
      : positions_(positions), slopes_(std::move(slopes)), deepmind_(deepmind) {}

  bool has_bias() const override { return true; }
  bool bias_reads_queries() const override { return false; }

  void add_bias(int64_t b, int64_t h, int64_t i0, int64_t i1, int64_t T, const float*, int64_t,
                float* S, int64_t lds) const override {
    const int32_t* p = positions_.data() + b * T;
    const float m = slopes_[h];
    for (int64_t i = i0; i < i1; ++i) {
      float* row = S + (i - i0) * lds;
      for (int64_t j = 0; j < T; ++j) row[j] -= m * static_cast<float>(std::abs(p[j] - p[i]));
      if (!deepmind_) continue;  // symmetric: the loop above, bit for bit as it always was
      for (int64_t j = 0; j < T; ++j)
        if (p[j] < p[i]) row[j] += 0.5f * m;
    }
  }

  Tensor composed_bias(const Tensor& q) const override {
    const int64_t B = q.size(0), H = q.size(1), T = q.size(2);
    Tensor r = Tensor::empty({B, H, T, T});
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t i = 0; i < T; ++i)
          for (int64_t j = 0; j < T; ++j) {
            const int32_t pi = positions_.values[b * T + i], pj = positions_.values[b * T + j];
            float& r_ij = r.data()[((b * H + h) * T + i) * T + j];
            r_ij = -slopes_[h] * static_cast<float>(std::abs(pj - pi));
            if (deepmind_ && pj < pi) r_ij += 0.5f * slopes_[h];
          }
    return r;
  }

 private:
  IntTensor positions_;
  std::vector<float> slopes_;
  bool deepmind_;
};

class Alibi : public PositionalScheme {
 public:
  explicit Alibi(const SchemeContext& c) : deepmind_(c.keys.text("bidirectional") == "deepmind") {
    for (double s : alibi_slopes(c.model.heads)) slopes_.push_back(static_cast<float>(s));
  }
  std::shared_ptr<const AttentionTerms> attention_terms(const Batch& batch,
                                                        int /*layer*/) const override {
    return std::make_shared<AlibiTerms>(batch.positions, slopes_, deepmind_);
  }

 private:
  bool deepmind_;
  std::vector<float> slopes_;
};
}  // namespace

SchemeInfo alibi_scheme() {
  SchemeInfo info{
      "alibi",
      "a fixed per-head linear penalty on |p_j − p_i| in the attention logits",
      {{.name = "bidirectional",
        .type = SchemeKey::Type::Text,
        .default_value = std::string("symmetric"),
        .choices = {"symmetric", "deepmind"},
        .help = "`symmetric`: −m_h times the distance; `deepmind`: ½·m_h more where p_j < p_i",
        // Added after alibi runs were recorded: their config.yaml, and the sweeps and
        // checkpoints that compare against it, stay as they were.
        .omitted_at_default = true}},
      [](const SchemeContext& c) { return std::make_unique<Alibi>(c); }};
  info.acts = SchemeInfo::Acts::Logits;
  info.shift_invariant = true;
  return info;
}

}  // namespace pelab
