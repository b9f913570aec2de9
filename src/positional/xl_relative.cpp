// xl_relative (Dai et al. 2019, as DeepMind's encoder in randomized_positional_encodings):
//
//   R[h, i, j] = (u_h · k_j + (q_i + v_h) · ρ_h(p_j − p_i)) / sqrt(d_h),   ρ(δ) = r(δ) W_Rᵀ
//   r(δ)[m] = sin(δ ω_m),  r(δ)[d/2 + m] = cos(δ ω_m),  ω_m = base^(−2m/d),  m < d/2
//
// head h owning the columns [h·d_h, (h+1)·d_h) of ρ; u, v [H, d_h] and W_R [d, d] per layer.
//
// Never a [T, T, d] tensor. (q_i + v_h)·ρ_h(δ) = a_i · r(δ) with a_i = (q_i + v_h) W_R,h (W_R,h
// the head's rows of W_R, [d_h, d]), and by the angle-addition formulas r(p_j − p_i) is r(p_j)
// turned by −p_i ω: a_i · r(p_j − p_i) = b_i · r(p_j), where
//   b_i[m] = a_i[m] cos(p_i ω_m) + a_i[d/2 + m] sin(p_i ω_m)
//   b_i[d/2 + m] = a_i[d/2 + m] cos(p_i ω_m) − a_i[m] sin(p_i ω_m).
// So a block is two GEMMs, [rows, d_h]·[d_h, d] and [rows, d]·[d, T], against a table of
// r(p) [B, T, d] made once per batch and layer (angles in double, as rotary's). Backward
// runs the same steps in reverse:
//   db = dS·r(P)/√d_h;  da = b's rotation undone;  dW_R,h += (q + v_h)ᵀ da;
//   d(q + v_h) = da W_R,hᵀ → dq, dv_h;  dk_j += (Σ_i dS[i, j])·u_h/√d_h;  du_h += the same·k_j.
//
// A sequence whose positions span little (the usual 0..T−1) takes a cheaper route: ρ(δ) =
// r(δ) W_Rᵀ is tabulated once per call for every distance δ (prepare()), so a block is one
// GEMM of width d_h, [rows, d_h]·[d_h, distances], and a gather of each key's distance; d is
// 8 times d_h in R1's encoder. Its backward scatters dS to the distances and runs the GEMMs
// back, ending in dW_R,h += dρ_hᵀ r(δ). Wide random positions keep the route above.
#include <algorithm>
#include <cmath>

#include "pelab/backend/gemm.h"
#include "pelab/core/error.h"
#include "pelab/positional/scheme.h"

namespace pelab {

namespace {
// One layer's parameters (MODEL.md's names under layers.l.attn.).
struct XlParams {
  Tensor u, v, w_r;  // [H, d_h], [H, d_h], [d, d]
};

// r(p) for every token of a batch: [B, T, d], sines then cosines, angles p·ω_m in double.
std::vector<float> position_table(const IntTensor& positions, int64_t d, double base) {
  const int64_t half = d / 2, n = positions.numel();
  std::vector<double> omega(half);
  for (int64_t m = 0; m < half; ++m)
    omega[m] = std::pow(base, -2.0 * static_cast<double>(m) / static_cast<double>(d));
  std::vector<float> table(static_cast<size_t>(n * d));
  for (int64_t t = 0; t < n; ++t)
    for (int64_t m = 0; m < half; ++m) {
      const double angle = static_cast<double>(positions.values[t]) * omega[m];
      table[t * d + m] = static_cast<float>(std::sin(angle));
      table[t * d + half + m] = static_cast<float>(std::cos(angle));
    }
  return table;
}

// The distances −span..span of the tabulated route, as a positions tensor [1, 2·span + 1].
IntTensor distances(int64_t span) {
  IntTensor d({1, 2 * span + 1});
  for (int64_t i = 0; i <= 2 * span; ++i) d.values[i] = static_cast<int32_t>(i - span);
  return d;
}

// The largest span (max − min position) of a sequence that takes the tabulated route: its
// distances at most 4 times its length, so the table is never larger than the keys it serves.
int64_t tabulated_span(const IntTensor& positions, std::vector<char>& tabulated) {
  const int64_t B = positions.shape[0], T = positions.shape[1];
  int64_t widest = 0;
  tabulated.assign(static_cast<size_t>(B), 0);
  for (int64_t b = 0; b < B; ++b) {
    const auto [lo, hi] =
        std::minmax_element(positions.data() + b * T, positions.data() + b * T + T);
    const int64_t span = static_cast<int64_t>(*hi) - *lo;
    if (2 * span + 1 > 4 * T) continue;
    tabulated[b] = 1;
    widest = std::max(widest, span);
  }
  return widest;
}

class XlTerms : public AttentionTerms {
 public:
  XlTerms(const IntTensor& positions, XlParams p, double base)
      : p_(std::move(p)),
        positions_(positions),
        T_(positions.shape[1]),
        H_(p_.u.size(0)),
        dh_(p_.u.size(1)),
        d_(p_.w_r.size(0)),
        half_(d_ / 2),
        scale_(1.0f / std::sqrt(static_cast<float>(dh_))),
        table_(position_table(positions, d_, base)),
        span_(tabulated_span(positions, tabulated_)),
        delta_table_(position_table(distances(span_), d_, base)) {}

  TensorList parameters() const override { return {p_.u, p_.v, p_.w_r}; }
  bool bias_reads_keys() const override { return true; }

  // rho_[(δ + span)·d + h·d_h + c] = ρ_h(δ)[c] = (r(δ) W_Rᵀ)[h·d_h + c].
  void prepare() const override {
    const int64_t n = 2 * span_ + 1;
    rho_.resize(static_cast<size_t>(n * d_));
    gemm(false, true, n, d_, d_, 1.0f, delta_table_.data(), d_, p_.w_r.data(), d_, 0.0f,
         rho_.data(), d_);
  }

  void add_bias_with_keys(int64_t b, int64_t h, int64_t i0, int64_t i1, int64_t T, const float* q,
                          int64_t ldq, const float* k, int64_t ldk, float* S,
                          int64_t lds) const override {
    const int64_t n = i1 - i0;
    Scratch& s = scratch(n, T);
    add_key_term(h, n, T, k, ldk, S, lds, s);
    if (tabulated_[b]) {
      const Distances w = block_distances(b, i0, i1, T);
      grow(s.g, n * w.count);
      query_plus_v(h, n, q, ldq, s.qv.data());
      // g[r, δ − lo] = (q_r + v_h) · ρ_h(δ) / √d_h
      gemm(false, true, n, w.count, dh_, scale_, s.qv.data(), dh_, rho_row(w.lo) + h * dh_, d_,
           0.0f, s.g.data(), w.count);
      const int32_t* p = positions_.data() + b * T_;
      for (int64_t r = 0; r < n; ++r) {
        const float* g = s.g.data() + r * w.count;
        const int64_t at = w.lo + p[i0 + r];  // key j's distance is at g[p_j − at]
        for (int64_t j = 0; j < T; ++j) S[r * lds + j] += g[p[j] - at];
      }
      return;
    }
    query_plus_v(h, n, q, ldq, s.qv.data());
    // a = (q + v_h) W_R,h: [n, d]
    gemm(false, false, n, d_, dh_, 1.0f, s.qv.data(), dh_, head_rows(h), d_, 0.0f, s.a.data(), d_);
    turn(b, i0, n, s.a.data(), s.rot.data(), /*inverse=*/false);
    // S += b r(P)ᵀ / √d_h
    gemm(false, true, n, T, d_, scale_, s.rot.data(), d_, table(b), d_, 1.0f, S, lds);
  }

  void bias_backward_with_keys(int64_t b, int64_t h, int64_t i0, int64_t i1, int64_t T,
                               const float* q, int64_t ldq, const float* k, int64_t ldk, float* dS,
                               int64_t lds, float* dq, int64_t lddq, float* dk, int64_t lddk,
                               const GradBuffers& grads) const override {
    const int64_t n = i1 - i0;
    Scratch& s = scratch(n, T);
    key_term_backward(h, n, T, k, ldk, dS, lds, dk, lddk, grads);
    query_plus_v(h, n, q, ldq, s.qv.data());
    if (tabulated_[b])
      tabulated_backward(b, h, i0, i1, T, dS, lds, grads, s);
    else
      direct_backward(b, h, i0, n, T, dS, lds, grads, s);
    // d(q + v_h), in qv's scratch, to q and v_h
    float* dv = grads[1] + h * dh_;
    for (int64_t r = 0; r < n; ++r)
      for (int64_t c = 0; c < dh_; ++c) {
        dq[r * lddq + c] += s.qv[r * dh_ + c];
        dv[c] += s.qv[r * dh_ + c];
      }
  }

  // q, k: [B, H, T, d_h] → R: [B, H, T, T], the same factored form from differentiable ops.
  Tensor composed_bias_with_keys(const Tensor& q, const Tensor& k, const Tensor&) const override {
    const int64_t B = q.size(0);
    const Tensor qv = add(q, reshape(p_.v, {1, H_, 1, dh_}));  // [B, H, T, d_h]
    const Tensor w = broadcast_to(reshape(p_.w_r, {1, H_, dh_, d_}), {B, H_, dh_, d_});
    const Tensor a = matmul(qv, w);  // [B, H, T, d]
    const Tensor a_sin = slice(a, 3, 0, half_), a_cos = slice(a, 3, half_, d_);
    const Tensor cos_p = constant_table(B, half_), sin_p = constant_table(B, 0);  // [B, 1, T, d/2]
    const Tensor turned = concat(
        {add(mul(a_sin, cos_p), mul(a_cos, sin_p)), sub(mul(a_cos, cos_p), mul(a_sin, sin_p))},
        3);  // [B, H, T, d]
    const Tensor r = broadcast_to(Tensor::from_vector({B, 1, T_, d_}, std::vector<float>(table_)),
                                  {B, H_, T_, d_});
    const Tensor position = matmul(turned, transpose(r, -1, -2));  // [B, H, T, T]
    const Tensor key = reshape(sum(mul(k, reshape(p_.u, {1, H_, 1, dh_})), {3}, true),
                               {B, H_, 1, T_});  // u_h · k_j
    return mul_scalar(add(position, key), scale_);
  }

 private:
  struct Scratch {
    std::vector<float> qv, a, rot, key_term, g, drho;
  };
  static void grow(std::vector<float>& v, int64_t size) {
    if (static_cast<int64_t>(v.size()) < size) v.resize(size);
  }
  // The calling thread's scratch, grown to a block of `rows` query rows and T keys.
  Scratch& scratch(int64_t rows, int64_t T) const {
    thread_local Scratch s;
    grow(s.qv, rows * dh_);
    grow(s.a, rows * d_);
    grow(s.rot, rows * d_);
    grow(s.key_term, T);
    return s;
  }

  // The distances p_j − p_i a block of query rows meets: [lo, lo + count).
  struct Distances {
    int64_t lo, count;
  };
  Distances block_distances(int64_t b, int64_t i0, int64_t i1, int64_t T) const {
    const int32_t* p = positions_.data() + b * T_;
    const auto [key_lo, key_hi] = std::minmax_element(p, p + T);
    const auto [row_lo, row_hi] = std::minmax_element(p + i0, p + i1);
    const int64_t lo = static_cast<int64_t>(*key_lo) - *row_hi;
    return {lo, static_cast<int64_t>(*key_hi) - *row_lo - lo + 1};
  }
  const float* rho_row(int64_t delta) const { return rho_.data() + (delta + span_) * d_; }

  // S[r, j] += u_h · k_j / √d_h, the same for every query row.
  void add_key_term(int64_t h, int64_t n, int64_t T, const float* k, int64_t ldk, float* S,
                    int64_t lds, Scratch& s) const {
    const float* u = p_.u.data() + h * dh_;
    for (int64_t j = 0; j < T; ++j) {
      float uk = 0.0f;
      for (int64_t c = 0; c < dh_; ++c) uk += u[c] * k[j * ldk + c];
      s.key_term[j] = scale_ * uk;
    }
    for (int64_t r = 0; r < n; ++r)
      for (int64_t j = 0; j < T; ++j) S[r * lds + j] += s.key_term[j];
  }

  // The key term's backward: its column sums of dS reach k_j and u_h.
  void key_term_backward(int64_t h, int64_t n, int64_t T, const float* k, int64_t ldk,
                         const float* dS, int64_t lds, float* dk, int64_t lddk,
                         const GradBuffers& grads) const {
    const float* u = p_.u.data() + h * dh_;
    float* du = grads[0] + h * dh_;
    for (int64_t j = 0; j < T; ++j) {
      float column = 0.0f;
      for (int64_t r = 0; r < n; ++r) column += dS[r * lds + j];
      column *= scale_;
      for (int64_t c = 0; c < dh_; ++c) {
        dk[j * lddk + c] += column * u[c];
        du[c] += column * k[j * ldk + c];
      }
    }
  }

  // The direct route back: db = dS r(P)/√d_h, da = b's rotation undone, dW_R,h += (q+v_h)ᵀ da;
  // leaves d(q + v_h) = da W_R,hᵀ in s.qv.
  void direct_backward(int64_t b, int64_t h, int64_t i0, int64_t n, int64_t T, const float* dS,
                       int64_t lds, const GradBuffers& grads, Scratch& s) const {
    gemm(false, false, n, d_, T, scale_, dS, lds, table(b), d_, 0.0f, s.rot.data(), d_);
    turn(b, i0, n, s.rot.data(), s.a.data(), /*inverse=*/true);
    gemm(true, false, dh_, d_, n, 1.0f, s.qv.data(), dh_, s.a.data(), d_, 1.0f,
         grads[2] + h * dh_ * d_, d_);
    gemm(false, true, n, dh_, d_, 1.0f, s.a.data(), d_, head_rows(h), d_, 0.0f, s.qv.data(), dh_);
  }

  // The tabulated route back: dS summed per distance (dg), dρ_h = dgᵀ (q + v_h)/√d_h,
  // dW_R,h += dρ_hᵀ r(δ); leaves d(q + v_h) = dg ρ_h/√d_h in s.qv.
  void tabulated_backward(int64_t b, int64_t h, int64_t i0, int64_t i1, int64_t T, const float* dS,
                          int64_t lds, const GradBuffers& grads, Scratch& s) const {
    const int64_t n = i1 - i0;
    const Distances w = block_distances(b, i0, i1, T);
    grow(s.g, n * w.count);
    grow(s.drho, w.count * dh_);
    std::fill_n(s.g.data(), n * w.count, 0.0f);
    const int32_t* p = positions_.data() + b * T_;
    for (int64_t r = 0; r < n; ++r) {
      float* g = s.g.data() + r * w.count;
      const int64_t at = w.lo + p[i0 + r];
      for (int64_t j = 0; j < T; ++j) g[p[j] - at] += dS[r * lds + j];
    }
    gemm(true, false, w.count, dh_, n, scale_, s.g.data(), w.count, s.qv.data(), dh_, 0.0f,
         s.drho.data(), dh_);
    gemm(true, false, dh_, d_, w.count, 1.0f, s.drho.data(), dh_,
         delta_table_.data() + (w.lo + span_) * d_, d_, 1.0f, grads[2] + h * dh_ * d_, d_);
    gemm(false, false, n, dh_, w.count, scale_, s.g.data(), w.count, rho_row(w.lo) + h * dh_, d_,
         0.0f, s.qv.data(), dh_);
  }

  const float* table(int64_t b) const { return table_.data() + b * T_ * d_; }
  const float* head_rows(int64_t h) const { return p_.w_r.data() + h * dh_ * d_; }

  // out[r, :] = q[r, :] + v_h for the block's n query rows.
  void query_plus_v(int64_t h, int64_t n, const float* q, int64_t ldq, float* out) const {
    const float* v = p_.v.data() + h * dh_;
    for (int64_t r = 0; r < n; ++r)
      for (int64_t c = 0; c < dh_; ++c) out[r * dh_ + c] = q[r * ldq + c] + v[c];
  }

  // Turns each row r (query i0 + r) by −p_i ω (a → b), or back by +p_i ω (db → da).
  void turn(int64_t b, int64_t i0, int64_t n, const float* in, float* out, bool inverse) const {
    for (int64_t r = 0; r < n; ++r) {
      const float* rp = table(b) + (i0 + r) * d_;  // sin(p_i ω), then cos(p_i ω)
      const float* x = in + r * d_;
      float* y = out + r * d_;
      for (int64_t m = 0; m < half_; ++m) {
        const float sn = inverse ? -rp[m] : rp[m], cs = rp[half_ + m];
        y[m] = x[m] * cs + x[half_ + m] * sn;
        y[half_ + m] = x[half_ + m] * cs - x[m] * sn;
      }
    }
  }

  // cos (offset d/2) or sin (offset 0) of p·ω_m: [B, 1, T, d/2].
  Tensor constant_table(int64_t B, int64_t offset) const {
    std::vector<float> values(static_cast<size_t>(B * T_ * half_));
    for (int64_t t = 0; t < B * T_; ++t)
      for (int64_t m = 0; m < half_; ++m) values[t * half_ + m] = table_[t * d_ + offset + m];
    return Tensor::from_vector({B, 1, T_, half_}, values);
  }

  XlParams p_;
  IntTensor positions_;
  int64_t T_, H_, dh_, d_, half_;
  float scale_;
  std::vector<float> table_;        // [B, T, d]: r(p) of every token
  std::vector<char> tabulated_;     // [B]: the sequence takes the tabulated route
  int64_t span_;                    // the tabulated distances are −span..span
  std::vector<float> delta_table_;  // [2·span + 1, d]: r(δ)
  mutable std::vector<float> rho_;  // [2·span + 1, d]: ρ(δ) = r(δ) W_Rᵀ, by prepare()
};

class XlRelative : public PositionalScheme {
 public:
  explicit XlRelative(const SchemeContext& c) : base_(c.keys.number("base")) {
    const ModelConfig& m = c.model;
    PELAB_CHECK(m.d_model % 2 == 0,
                "xl_relative needs an even d_model (r(δ) pairs sines and "
                "cosines over the model width), got {}",
                m.d_model);
    PELAB_CHECK(base_ > 0.0, "positional.base: must be > 0, got {}", base_);
    // The sources' init: u, v ~ N(0, 0.02); W_R like any linear weight.
    for (int64_t l = 0; l < m.layers; ++l) {
      const std::string prefix = "layers." + std::to_string(l) + ".attn.";
      ParameterStore& ps = c.params;
      layers_.push_back({ps.add_normal(prefix + "xl_u", {m.heads, m.head_dim()}, 0.02f),
                         ps.add_normal(prefix + "xl_v", {m.heads, m.head_dim()}, 0.02f),
                         ps.add_normal(prefix + "xl_r.weight", {m.d_model, m.d_model}, 0.02f)});
    }
  }

  std::shared_ptr<const AttentionTerms> attention_terms(const Batch& batch,
                                                        int layer) const override {
    return std::make_shared<XlTerms>(batch.positions, layers_[layer], base_);
  }

 private:
  double base_;
  std::vector<XlParams> layers_;
};
}  // namespace

SchemeInfo xl_relative_scheme() {
  SchemeInfo info{"xl_relative",
                  "Transformer-XL's relative logits: u·k_j + (q_i + v)·W_R r(p_j − p_i), "
                  "r sinusoidal, no clipping",
                  {{.name = "base",
                    .type = SchemeKey::Type::Number,
                    .default_value = 10000.0,
                    .help = "the base of the frequencies `ω_m = base^(−2m/d)` of `r(δ)`; > 0"}},
                  [](const SchemeContext& c) { return std::make_unique<XlRelative>(c); }};
  info.acts = SchemeInfo::Acts::Logits;
  info.shift_invariant = true;
  return info;
}

}  // namespace pelab
