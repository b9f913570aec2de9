// fire (Li et al. 2023): a learned function of the progressive-interpolated distance in the
// logits, one small MLP per layer shared by its heads:
//
//   R[h, i, j] = f(u_ij)_h,   f(u) = W₂ ReLU(W₁ u + b₁) + b₂   (1 → W → H)
//   u_ij = sign(δ) · ψ(|δ|) / (ψ(max(p_i, L)) + 10⁻⁶),  δ = p_i − p_j,  ψ(x) = ln(|c|·x + 1),
//   L = |ℓ|·L₀ (L₀ = positional.threshold).
//
// As mcleish7/arithmetic's FIRE, with c, ℓ and the MLP learned per layer; sign(δ) is pelab's
// extension (that code sees |δ| only), and changes nothing where every key has p_j ≤ p_i.
// Dividing by ψ(max(p_i, L)) maps the keys at or before a query (0 ≤ δ ≤ p_i) into [0, 1], so
// longer sequences do not reach unseen inputs of f; while p_i ≤ L the divisor is ψ(L), fixed,
// and the bias depends on δ alone.
#include <algorithm>
#include <cmath>

#include "pelab/core/error.h"
#include "pelab/positional/scheme.h"

namespace pelab {

namespace {
constexpr float kEpsilon = 1e-6f;

float sgn(float x) {
  return static_cast<float>((x > 0.0f) - (x < 0.0f));
}

// One layer's parameters (MODEL.md's names under layers.l.attn.fire.).
struct FireParams {
  Tensor w1, b1, w2, b2, c, l;  // [W, 1], [W], [H, W], [H], [1], [1]
};

// The normalised distance of one query row: u(δ) = sign(δ)·ψ(|δ|)/D with D = ψ(m) + ε, and
// what the backward needs of D.
struct FireRow {
  FireRow(int32_t p_i, float c_magnitude, float L)
      : FireRow(c_magnitude, std::max(L, static_cast<float>(p_i)), L > static_cast<float>(p_i)) {}
  // A row with m given: every row with p_i < L shares m = L (above).
  FireRow(float c_magnitude, float m_value, bool above_threshold)
      : c_abs(c_magnitude), m(m_value), above(above_threshold) {
    D = std::log1p(c_abs * m) + kEpsilon;
  }
  float u(int64_t delta) const { return sgn(static_cast<float>(delta)) * psi(delta) / D; }
  float psi(int64_t delta) const { return std::log1p(c_abs * static_cast<float>(std::abs(delta))); }

  float c_abs, m;
  bool above;  // L > p_i: then m = L, and ℓ moves the divisor
  float D = 0.0f;
};

// A work item's parameter gradients, summed in double and added once.
struct FireGrad {
  explicit FireGrad(int64_t W) : w1(W), b1(W), w2(W) {}
  std::vector<double> w1, b1, w2;
  double b2 = 0.0, c = 0.0, l = 0.0;
};

class FireTerms : public AttentionTerms {
 public:
  // Rows with p_i < L share one divisor, so their bias depends on δ alone: prepare() tabulates
  // f for every δ of a sequence once, for all heads, instead of per (head, query, key). A
  // sequence whose positions spread so far that the table would be larger than its [T, T]
  // pairs (few tokens at large random positions) is left to the direct path.
  FireTerms(const IntTensor& positions, FireParams f, float threshold)
      : positions_(positions), f_(std::move(f)), threshold_(threshold) {
    const int64_t B = positions.shape[0], T = positions.shape[1];
    table_start_.assign(static_cast<size_t>(B), -1);
    span_.assign(static_cast<size_t>(B), 0);
    int64_t size = 0;
    for (int64_t b = 0; b < B; ++b) {
      const int32_t* p = positions.data() + b * T;
      const auto [lo, hi] = std::minmax_element(p, p + T);
      span_[b] = static_cast<int64_t>(*hi) - *lo;
      if (2 * span_[b] + 1 > T * T) continue;
      table_start_[b] = size;
      size += (2 * span_[b] + 1) * f_.w2.size(0);
    }
    table_.resize(static_cast<size_t>(size));
  }

  TensorList parameters() const override { return {f_.w1, f_.b1, f_.w2, f_.b2, f_.c, f_.l}; }
  bool has_bias() const override { return true; }
  bool bias_reads_queries() const override { return false; }

  // table_[start_b + h·(2·span_b + 1) + δ + span_b] = f(u(δ))_h for the rows with m = L.
  void prepare() const override {
    const int64_t B = positions_.shape[0], W = f_.w1.size(0), H = f_.w2.size(0);
    prepared_L_ = L();
    const FireRow r(std::fabs(f_.c.data()[0]), prepared_L_, true);
    const float *w1 = f_.w1.data(), *b1 = f_.b1.data(), *w2 = f_.w2.data(), *b2 = f_.b2.data();
    std::vector<float> hidden(static_cast<size_t>(W));
    for (int64_t b = 0; b < B; ++b) {
      if (table_start_[b] < 0) continue;
      const int64_t span = span_[b], n = 2 * span + 1;
      for (int64_t delta = -span; delta <= span; ++delta) {
        const float u = r.u(delta);
        for (int64_t k = 0; k < W; ++k) hidden[k] = std::max(0.0f, w1[k] * u + b1[k]);
        for (int64_t h = 0; h < H; ++h) {
          float out = b2[h];
          for (int64_t k = 0; k < W; ++k) out += w2[h * W + k] * hidden[k];
          table_[table_start_[b] + h * n + delta + span] = out;
        }
      }
    }
  }

  void add_bias(int64_t b, int64_t h, int64_t i0, int64_t i1, int64_t T, const float*, int64_t,
                float* S, int64_t lds) const override {
    const int32_t* p = positions_.data() + b * T;
    const int64_t W = f_.w1.size(0);
    const float *w1 = f_.w1.data(), *b1 = f_.b1.data(), *w2 = f_.w2.data() + h * W;
    const float b2 = f_.b2.data()[h];
    for (int64_t i = i0; i < i1; ++i) {
      float* row = S + (i - i0) * lds;
      if (const float* f = tabulated(b, h, p[i])) {
        for (int64_t j = 0; j < T; ++j) row[j] += f[p[i] - p[j]];
        continue;
      }
      const FireRow row_u(p[i], std::fabs(f_.c.data()[0]), prepared_L_);
      for (int64_t j = 0; j < T; ++j) {
        const float u = row_u.u(p[i] - p[j]);
        float out = b2;
        for (int64_t k = 0; k < W; ++k) out += w2[k] * std::max(0.0f, w1[k] * u + b1[k]);
        row[j] += out;
      }
    }
  }

  // Back through f (ReLU passes where its input is > 0), then through u to c and ℓ. The rows
  // of the table first sum dS per δ, then pass each δ's sum through f once.
  void bias_backward(int64_t b, int64_t h, int64_t i0, int64_t i1, int64_t T, const float*, int64_t,
                     const float* dS, int64_t lds, float*, int64_t,
                     const GradBuffers& grads) const override {
    const int32_t* p = positions_.data() + b * T;
    const int64_t W = f_.w1.size(0);
    const float c_abs = std::fabs(f_.c.data()[0]);
    FireGrad g(W);
    const bool table = table_start_[b] >= 0;
    const int64_t span = span_[b];
    std::vector<double> per_delta(table ? static_cast<size_t>(2 * span + 1) : 0, 0.0);
    for (int64_t i = i0; i < i1; ++i) {
      const FireRow r(p[i], c_abs, L());
      for (int64_t j = 0; j < T; ++j) {
        const float ds = dS[(i - i0) * lds + j];
        if (ds == 0.0f) continue;  // masked keys, and nothing to pass back
        if (table && r.above)
          per_delta[p[i] - p[j] + span] += ds;
        else
          accumulate(g, ds, p[i] - p[j], r, h);
      }
    }
    if (table) {
      const FireRow r(c_abs, L(), true);
      for (int64_t delta = -span; delta <= span; ++delta)
        if (per_delta[delta + span] != 0.0) accumulate(g, per_delta[delta + span], delta, r, h);
    }
    for (int64_t k = 0; k < W; ++k) {
      grads[0][k] += static_cast<float>(g.w1[k]);
      grads[1][k] += static_cast<float>(g.b1[k]);
      grads[2][h * W + k] += static_cast<float>(g.w2[k]);
    }
    grads[3][h] += static_cast<float>(g.b2);
    grads[4][0] += static_cast<float>(g.c);
    grads[5][0] += static_cast<float>(g.l);
  }

  // q: [B, H, T, d_h] → R: [B, H, T, T], every step a differentiable op; max(p_i, L) is
  // p_i + ReLU(L − p_i).
  Tensor composed_bias(const Tensor& q) const override {
    const int64_t B = q.size(0), T = q.size(2);
    std::vector<float> p_i(static_cast<size_t>(B * T)), dist(static_cast<size_t>(B * T * T)),
        sign(dist.size());
    for (int64_t b = 0; b < B; ++b)
      for (int64_t i = 0; i < T; ++i) {
        p_i[b * T + i] = static_cast<float>(positions_.values[b * T + i]);
        for (int64_t j = 0; j < T; ++j) {
          const int64_t delta = positions_.values[b * T + i] - positions_.values[b * T + j];
          dist[(b * T + i) * T + j] = static_cast<float>(std::abs(delta));
          sign[(b * T + i) * T + j] = sgn(static_cast<float>(delta));
        }
      }
    const Tensor pi = Tensor::from_vector({B, T, 1}, p_i);
    const Tensor c_abs = abs(f_.c);                      // [1]
    const Tensor L = mul_scalar(abs(f_.l), threshold_);  // [1]
    const Tensor m = add(pi, relu(sub(L, pi)));          // [B, T, 1]
    const Tensor D = add_scalar(log(add_scalar(mul(c_abs, m), 1.0f)), kEpsilon);
    const Tensor N = log(add_scalar(mul(c_abs, Tensor::from_vector({B, T, T}, dist)), 1.0f));
    const Tensor u = div(mul(N, Tensor::from_vector({B, T, T}, sign)), D);       // [B, T, T]
    const Tensor hidden = relu(linear(reshape(u, {B, T, T, 1}), f_.w1, f_.b1));  // [B, T, T, W]
    return permute(linear(hidden, f_.w2, f_.b2), {0, 3, 1, 2});  // [B, T, T, H] → [B, H, T, T]
  }

 private:
  float L() const { return std::fabs(f_.l.data()[0]) * threshold_; }

  // Head h's f at δ = 0 for a query at p_i, when its row is tabulated; else null.
  const float* tabulated(int64_t b, int64_t h, int32_t p_i) const {
    if (table_start_[b] < 0 || !(prepared_L_ > static_cast<float>(p_i))) return nullptr;
    return table_.data() + table_start_[b] + h * (2 * span_[b] + 1) + span_[b];
  }

  // g: the gradient of f(u(δ))_h for a row r; adds its parts to every parameter:
  //   ∂u/∂c = sign(δ)·(ψ_c(|δ|)·D − ψ(|δ|)·ψ_c(m)) / D²,  ψ_c(x) = sgn(c)·x / (|c|x + 1)
  //   ∂u/∂ℓ = −sign(δ)·ψ(|δ|)/D² · |c|/(|c|m + 1) · sgn(ℓ)·L₀   where L > p_i, else 0.
  void accumulate(FireGrad& g, double ds, int64_t delta, const FireRow& r, int64_t h) const {
    const int64_t W = f_.w1.size(0);
    const float *w1 = f_.w1.data(), *b1 = f_.b1.data(), *w2 = f_.w2.data() + h * W;
    const float c = f_.c.data()[0], ell = f_.l.data()[0];
    const float u = r.u(delta);
    double du = 0.0;
    g.b2 += ds;
    for (int64_t k = 0; k < W; ++k) {
      const float z = w1[k] * u + b1[k];
      if (z <= 0.0f) continue;
      g.w2[k] += ds * z;
      const double dz = ds * w2[k];
      g.w1[k] += dz * u;
      g.b1[k] += dz;
      du += dz * w1[k];
    }
    const double dD_dc = sgn(c) * r.m / (r.c_abs * r.m + 1.0);
    const double dD_dl = r.above ? sgn(ell) * threshold_ * r.c_abs / (r.c_abs * r.m + 1.0) : 0.0;
    const double a = static_cast<double>(std::abs(delta)), s = sgn(static_cast<float>(delta));
    const double N = r.psi(delta), D = r.D;
    const double dN_dc = sgn(c) * a / (r.c_abs * a + 1.0);
    g.c += du * s * (dN_dc * D - N * dD_dc) / (D * D);
    g.l -= du * s * N / (D * D) * dD_dl;
  }

  IntTensor positions_;
  FireParams f_;
  float threshold_;
  std::vector<int64_t> table_start_, span_;  // per sequence; start −1: not tabulated
  mutable std::vector<float> table_;         // written by prepare() only
  mutable float prepared_L_ = 0.0f;
};

class Fire : public PositionalScheme {
 public:
  explicit Fire(const SchemeContext& c)
      : threshold_(static_cast<float>(c.keys.number("threshold"))) {
    PELAB_CHECK(c.keys.number("threshold") > 0.0, "positional.threshold: must be > 0, got {}",
                c.keys.number("threshold"));
    const int64_t W = c.keys.integer("mlp_width"), H = c.model.heads;
    // The sources' init: c = 0.1, ℓ = 1, the MLP as torch.nn.Linear (U(±1/sqrt(fan_in))).
    const float bound2 = 1.0f / std::sqrt(static_cast<float>(W));
    for (int64_t l = 0; l < c.model.layers; ++l) {
      const std::string prefix = "layers." + std::to_string(l) + ".attn.fire.";
      ParameterStore& ps = c.params;
      layers_.push_back({ps.add_uniform(prefix + "fc1.weight", {W, 1}, -1.0f, 1.0f),
                         ps.add_uniform(prefix + "fc1.bias", {W}, -1.0f, 1.0f),
                         ps.add_uniform(prefix + "fc2.weight", {H, W}, -bound2, bound2),
                         ps.add_uniform(prefix + "fc2.bias", {H}, -bound2, bound2),
                         ps.add_constant(prefix + "c", {1}, 0.1f),
                         ps.add_constant(prefix + "l_mult", {1}, 1.0f)});
    }
  }

  std::shared_ptr<const AttentionTerms> attention_terms(const Batch& batch,
                                                        int layer) const override {
    return std::make_shared<FireTerms>(batch.positions, layers_[layer], threshold_);
  }

 private:
  float threshold_;
  std::vector<FireParams> layers_;
};
}  // namespace

SchemeInfo fire_scheme() {
  SchemeInfo info{"fire",
                  "a learned MLP of the log-scaled distance, normalised by the query's position",
                  {{.name = "mlp_width",
                    .type = SchemeKey::Type::Integer,
                    .default_value = int64_t{32},
                    .min = 1,
                    .max = 1 << 16,
                    .help = "`W`, the hidden width of each layer's MLP 1 → W → H"},
                   {.name = "threshold",
                    .type = SchemeKey::Type::Number,
                    .default_value = 512.0,
                    .help = "`L₀`, > 0: while p_i ≤ L = abs(ℓ)·L₀ the divisor is ψ(L)"}},
                  [](const SchemeContext& c) { return std::make_unique<Fire>(c); }};
  info.acts = SchemeInfo::Acts::Logits;
  info.shift_invariant = false;  // only while every position stays ≤ L
  return info;
}

}  // namespace pelab
