// rotary: each head's pairs (x₂ᵢ, x₂ᵢ₊₁) of token (b, t) rotated by the angle m·θ_i,
// m = positions[b, t], θ_i = base^(−2i/d_h):
//   x'₂ᵢ   = x₂ᵢ cos mθ_i − x₂ᵢ₊₁ sin mθ_i
//   x'₂ᵢ₊₁ = x₂ᵢ sin mθ_i + x₂ᵢ₊₁ cos mθ_i
// backward: a rotation is orthogonal, so dx is dy rotated by −mθ_i.
// With options (MODEL.md, "Rotary options") only the first n_rot pairs rotate, θ_i is taken
// over d_r = 2·n_rot, the scaling changes the angle, and YaRN multiplies the rotated features
// by μ (backward: dy rotated back, times μ); the other features pass through (dx = dy).
// Angles are formed in double precision: positions can be large (randomized positions,
// long evaluation) and m·θ_i in float32 would lose the low bits of the angle.
// The angles depend only on (m, i), so RotaryAngles forms them once per position and the
// op reads them by position; rotary(..., base) forms them per token, for one call. Dynamic
// NTK's depend on the sequence's length too, and are formed per token on every call.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <numbers>
#include <utility>

#include "op_util.h"
#include "pelab/ops/ops.h"
#include "pelab/ops/oracles.h"

namespace pelab {

// cos/sin of the angle of pair i, row-major [rows, half] (half = n_rot): the row of a token
// (per-token tables) or of a position (RotaryAngles); mu multiplies the rotated features.
struct RotaryAngles::Table {
  int64_t half = 0;
  float mu = 1.0f;
  std::vector<float> cos, sin;
  int64_t rows() const { return half == 0 ? 0 : static_cast<int64_t>(cos.size()) / half; }
};

namespace {
using Table = RotaryAngles::Table;
using Scaling = RotaryOptions::Scaling;

// RotaryAngles keeps at most this many (position, pair) entries (8 MB of cos and sin):
// enough for every position of long evaluations; randomized positions past it are rare
// and computed per call.
constexpr int64_t kMaxCachedAngles = int64_t{1} << 20;

// θ_i = b^(−2i/d_r) for i < half, d_r = 2·half.
std::vector<double> frequencies(int64_t half, double b) {
  std::vector<double> theta(static_cast<size_t>(half));
  for (int64_t i = 0; i < half; ++i)
    theta[i] = std::pow(b, -2.0 * static_cast<double>(i) / static_cast<double>(2 * half));
  return theta;
}

// ntk's b' = base · s^(d_r/(d_r−2)) (n_rot ≥ 2, so d_r > 2).
double ntk_base(double base, double s, int64_t half) {
  const auto dr = static_cast<double>(2 * half);
  return base * std::pow(s, dr / (dr - 2.0));
}

// YaRN's θ'_i = θ_i·(1 − γ_i) + (θ_i/s)·γ_i, γ_i = clamp((i − lo)/(hi − lo), 0, 1), with
// lo, hi from κ(β) = d_r·ln(L/(2πβ)) / (2 ln base) at β = 32 and 1 (jquesnelle/yarn's
// correction range): the fast pairs keep their frequency, the slow ones are interpolated.
std::vector<double> yarn_frequencies(int64_t half, double base, double s, int64_t length) {
  const auto dr = static_cast<double>(2 * half);
  const auto kappa = [&](double beta) {
    return dr * std::log(static_cast<double>(length) / (2.0 * std::numbers::pi * beta)) /
           (2.0 * std::log(base));
  };
  const double lo = std::max(std::floor(kappa(32.0)), 0.0);
  double hi = std::min(std::ceil(kappa(1.0)), dr - 1.0);
  if (hi == lo) hi = lo + 0.001;  // the ramp must not divide by 0
  std::vector<double> theta = frequencies(half, base);
  for (int64_t i = 0; i < half; ++i) {
    const double gamma = std::clamp((static_cast<double>(i) - lo) / (hi - lo), 0.0, 1.0);
    theta[i] = theta[i] * (1.0 - gamma) + (theta[i] / s) * gamma;
  }
  return theta;
}

// Scalings that are plain rotary: none, and pi, ntk and yarn at s = 1 (MODEL.md takes them
// so bit for bit: the same frequencies by the same operations, μ = 1).
bool is_plain(const RotaryOptions& o) {
  return o.scaling == Scaling::None || (o.scaling != Scaling::DynamicNtk && o.factor == 1.0);
}

// The frequencies of every sequence alike (all scalings but dynamic NTK's).
std::vector<double> fixed_frequencies(int64_t half, double base, const RotaryOptions& o) {
  if (is_plain(o) || o.scaling == Scaling::Pi) return frequencies(half, base);
  if (o.scaling == Scaling::Ntk) return frequencies(half, ntk_base(base, o.factor, half));
  PELAB_CHECK(o.scaling == Scaling::Yarn, "rotary: dynamic NTK has no fixed frequencies");
  return yarn_frequencies(half, base, o.factor, o.original_length);
}

float yarn_mu(const RotaryOptions& o) {
  return o.scaling == Scaling::Yarn && !is_plain(o)
             ? static_cast<float>(0.1 * std::log(o.factor) + 1.0)
             : 1.0f;
}

// Row k of the table holds position position_of(k) at the frequencies theta_of(k); pi
// divides the position by s first, (m/s)·θ_i as MODEL.md writes it.
template <class PositionOf, class ThetaOf>
Table angle_table(int64_t rows, int64_t half, const RotaryOptions& o, PositionOf position_of,
                  ThetaOf theta_of) {
  Table a;
  a.half = half;
  a.mu = yarn_mu(o);
  a.cos.resize(static_cast<size_t>(rows * half));
  a.sin.resize(a.cos.size());
  const bool pi = o.scaling == Scaling::Pi && !is_plain(o);
  parallel_for(0, rows, 64, [&](int64_t lo, int64_t hi) {
    for (int64_t t = lo; t < hi; ++t) {
      const std::vector<double>& theta = theta_of(t);
      double m = static_cast<double>(position_of(t));
      if (pi) m /= o.factor;
      for (int64_t i = 0; i < half; ++i) {
        const double angle = m * theta[i];
        a.cos[t * half + i] = static_cast<float>(std::cos(angle));
        a.sin[t * half + i] = static_cast<float>(std::sin(angle));
      }
    }
  });
  return a;
}

// Dynamic NTK's frequencies of each sequence b: b' = base·(s·n/L − (s − 1))^(d_r/(d_r−2))
// where n > L, base otherwise; n = 1 + the largest position among its real tokens (0 for a
// row of padding only). Each row uses its own n, so the rows of a batch do not interact.
std::vector<std::vector<double>> dynamic_frequencies(const IntTensor& positions,
                                                     const IntTensor& key_mask, int64_t half,
                                                     double base, const RotaryOptions& o) {
  PELAB_CHECK(key_mask.shape == positions.shape,
              "rotary: dynamic NTK needs the key mask of the positions {}, got {}",
              to_string(positions.shape), to_string(key_mask.shape));
  const int64_t B = positions.shape[0], T = positions.shape[1];
  const auto dr = static_cast<double>(2 * half);
  const auto L = static_cast<double>(o.original_length);
  const double s = o.factor;
  std::vector<std::vector<double>> theta(static_cast<size_t>(B));
  for (int64_t b = 0; b < B; ++b) {
    int64_t largest = -1;
    for (int64_t t = 0; t < T; ++t)
      if (key_mask.values[b * T + t] != 0)
        largest = std::max<int64_t>(largest, positions.values[b * T + t]);
    const auto n = static_cast<double>(largest + 1);
    const double grown = n > L ? base * std::pow(s * n / L - (s - 1.0), dr / (dr - 2.0)) : base;
    theta[b] = frequencies(half, grown);
  }
  return theta;
}

// GCC's and clang's vector type of one head of width W floats.
template <int W>
struct HeadLanes;
template <>
struct HeadLanes<8> {
  using Floats = float __attribute__((vector_size(32)));
};
template <>
struct HeadLanes<16> {
  using Floats = float __attribute__((vector_size(64)));
};

// Lane 2i and 2i+1 of the result both take x's lane 2i (pair_firsts) or 2i+1 (pair_seconds);
// even_odd takes the even lanes from `even` and the odd ones from `odd`. The lanes are
// constants (I is 0, 1, …, W − 1), as __builtin_shufflevector needs, in GCC and clang alike.
template <class V, size_t... I>
inline V pair_firsts(const V& x, std::index_sequence<I...>) {
  return __builtin_shufflevector(x, x, static_cast<int>(I & ~size_t{1})...);
}
template <class V, size_t... I>
inline V pair_seconds(const V& x, std::index_sequence<I...>) {
  return __builtin_shufflevector(x, x, static_cast<int>(I | 1)...);
}
template <class V, size_t... I>
inline V even_odd(const V& even, const V& odd, std::index_sequence<I...>) {
  return __builtin_shufflevector(even, odd,
                                 static_cast<int>((I & 1) != 0 ? sizeof...(I) + I : I)...);
}

// Heads of width W = 2·half (8 or 16), every pair rotating and μ = 1: each head's pairs side
// by side in one vector of W floats, y = a·b + p lane by lane with
//   even lanes 2i:   a = x₂ᵢ,   b = cos, p = −(x₂ᵢ₊₁·sin)
//   odd lanes 2i+1:  a = x₂ᵢ,   b = sin, p = x₂ᵢ₊₁·cos
// which is the pair-by-pair loop's x₂ᵢ cos − x₂ᵢ₊₁ sin and x₂ᵢ sin + x₂ᵢ₊₁ cos with the same
// products; where the machine has FMA, the compiler fuses both alike, fma(a, b, p) here and
// fma(x₂ᵢ, cos, −x₂ᵢ₊₁ sin), fma(x₂ᵢ, sin, x₂ᵢ₊₁ cos) in the loop, so the bits are the same
// (tests/ops/rotary_test.cpp holds the two to that). c and s: the token's half cosines and
// (direction-signed) sines; x and y: the token's rows of heads·W floats.
template <int W>
void rotate_token(const float* x_row, const float* c, const float* s, int64_t heads, float* y_row) {
  using Floats = typename HeadLanes<W>::Floats;
  constexpr auto lanes = std::make_index_sequence<W>();
  Floats cs, sn;
  for (int f = 0; f < W; ++f) {
    cs[f] = c[f / 2];
    sn[f] = s[f / 2];
  }
  const Floats b = even_odd(cs, sn, lanes);
  for (int64_t h = 0; h < heads; ++h) {
    Floats x;
    std::memcpy(&x, x_row + h * W, sizeof x);
    const Floats first = pair_firsts(x, lanes);    // x₂ᵢ in both lanes of pair i
    const Floats second = pair_seconds(x, lanes);  // x₂ᵢ₊₁ in both
    const Floats p = even_odd(Floats(-(second * sn)), Floats(second * cs), lanes);
    const Floats y = first * b + p;
    std::memcpy(y_row + h * W, &y, sizeof y);
  }
}

// out = x with its first a.half pairs per head rotated by `direction`·angle (+1 forward, −1
// backward) and multiplied by a.mu, the other features copied; token t reads the table's row
// row_of[t], or row t when row_of is null. Heads of width 8 or 16 that rotate whole (plain
// rotary at R1's and the suites' widths) take rotate_token unless `pair_by_pair` (tests).
Tensor rotate(const Tensor& x, const Table& a, const int32_t* row_of, int64_t heads,
              float direction, bool pair_by_pair = false) {
  const Tensor xc = x.contiguous();
  const int64_t d = x.size(-1), dh = d / heads, half = a.half;
  const int64_t tokens = x.numel() / d;
  const float mu = a.mu;
  const bool whole_heads = !pair_by_pair && mu == 1.0f && 2 * half == dh && (dh == 8 || dh == 16);
  Tensor out = Tensor::empty(x.shape());
  const float* in = xc.data();
  float* o = out.data();
  parallel_for(0, tokens, 64, [&](int64_t lo, int64_t hi) {
    float signed_sin[8];
    for (int64_t t = lo; t < hi; ++t) {
      const int64_t row = row_of ? row_of[t] : t;
      const float* c = a.cos.data() + row * half;
      const float* s = a.sin.data() + row * half;
      if (whole_heads) {
        for (int64_t i = 0; i < half; ++i) signed_sin[i] = direction * s[i];
        if (dh == 8)
          rotate_token<8>(in + t * d, c, signed_sin, heads, o + t * d);
        else
          rotate_token<16>(in + t * d, c, signed_sin, heads, o + t * d);
        continue;
      }
      for (int64_t h = 0; h < heads; ++h) {
        const float* xi = in + t * d + h * dh;
        float* yo = o + t * d + h * dh;
        for (int64_t i = 0; i < half; ++i) {
          const float x0 = xi[2 * i], x1 = xi[2 * i + 1], sn = direction * s[i];
          yo[2 * i] = x0 * c[i] - x1 * sn;
          yo[2 * i + 1] = x0 * sn + x1 * c[i];
        }
        // μ = 1 (all but YaRN) skips the product, so plain rotary keeps its bits.
        if (mu != 1.0f)
          for (int64_t f = 0; f < 2 * half; ++f) yo[f] *= mu;
        std::copy(xi + 2 * half, xi + dh, yo + 2 * half);
      }
    }
  });
  return out;
}

// Forward, and the backward recorded beside it: both read the same table and rows.
Tensor rotate_recorded(const Tensor& x, std::shared_ptr<const Table> table, IntTensor rows,
                       int64_t heads) {
  const int32_t* row_of = rows.numel() > 0 ? rows.data() : nullptr;
  Tensor y = rotate(x, *table, row_of, heads, 1.0f);
  if (needs_grad(x)) {
    record(y, "rotary", {x},
           [table = std::move(table), rows = std::move(rows), heads](const Tensor& g) {
             const int32_t* back_row_of = rows.numel() > 0 ? rows.data() : nullptr;
             return TensorList{rotate(g, *table, back_row_of, heads, -1.0f)};
           });
  }
  return y;
}

// Checks the arguments; returns d_h.
int64_t head_width(const Tensor& x, const IntTensor& positions, int64_t heads, double base) {
  PELAB_CHECK(x.ndim() == 3, "rotary: x must be [B, T, d], got {}", to_string(x.shape()));
  PELAB_CHECK(positions.shape == Shape({x.size(0), x.size(1)}),
              "rotary: positions {} do not match x {}", to_string(positions.shape),
              to_string(x.shape()));
  PELAB_CHECK(heads >= 1 && x.size(2) % heads == 0, "rotary: {} heads do not divide d = {}", heads,
              x.size(2));
  const int64_t dh = x.size(2) / heads;
  PELAB_CHECK(dh % 2 == 0, "rotary needs an even head width, got d_h = {}", dh);
  PELAB_CHECK(base > 0.0, "rotary: base must be positive, got {}", base);
  return dh;
}

// Plain rotary's angles of every token of `positions`, formed for one call.
Table plain_token_table(const Tensor& x, const IntTensor& positions, int64_t heads, double base) {
  const int64_t half = head_width(x, positions, heads, base) / 2;
  const std::vector<double> theta = frequencies(half, base);
  return angle_table(
      positions.numel(), half, RotaryOptions{}, [&](int64_t t) { return positions.values[t]; },
      [&](int64_t) -> const std::vector<double>& { return theta; });
}
}  // namespace

Tensor rotary(const Tensor& x, const IntTensor& positions, int64_t heads, double base) {
  return rotate_recorded(
      x, std::make_shared<const Table>(plain_token_table(x, positions, heads, base)), IntTensor(),
      heads);
}

Tensor rotary_pair_by_pair(const Tensor& x, const IntTensor& positions, int64_t heads, double base,
                           float direction) {
  return rotate(x, plain_token_table(x, positions, heads, base), nullptr, heads, direction,
                /*pair_by_pair=*/true);
}

RotaryAngles::RotaryAngles(int64_t head_dim, double base, RotaryOptions options)
    : head_dim_(head_dim), base_(base), options_(options) {
  PELAB_CHECK(head_dim >= 2 && head_dim % 2 == 0, "rotary needs an even head width, got d_h = {}",
              head_dim);
  PELAB_CHECK(base > 0.0, "rotary: base must be positive, got {}", base);
  if (options_.pairs == 0) options_.pairs = head_dim / 2;
  PELAB_CHECK(options_.pairs >= 1 && options_.pairs <= head_dim / 2,
              "rotary: {} pairs rotated, of d_h / 2 = {}", options_.pairs, head_dim / 2);
  PELAB_CHECK(std::isfinite(options_.factor) && options_.factor >= 1.0,
              "rotary: the scaling factor must be finite and at least 1, got {}", options_.factor);
  const bool ntk = options_.scaling == Scaling::Ntk || options_.scaling == Scaling::DynamicNtk;
  PELAB_CHECK(!ntk || options_.pairs >= 2, "rotary: NTK scaling needs at least 2 pairs rotated");
  const bool needs_length =
      options_.scaling == Scaling::DynamicNtk || options_.scaling == Scaling::Yarn;
  PELAB_CHECK(!needs_length || options_.original_length >= 1,
              "rotary: dynamic NTK and YaRN need an original length of at least 1, got {}",
              options_.original_length);
}

std::shared_ptr<const RotaryAngles::Table> RotaryAngles::covering(int64_t max_position) const {
  const int64_t half = options_.pairs;
  if (options_.scaling == Scaling::DynamicNtk) return nullptr;
  if (max_position < 0 || max_position >= kMaxCachedAngles / half) return nullptr;
  const std::lock_guard<std::mutex> lock(mutex_);
  if (!table_ || table_->rows() <= max_position) {
    // Doubling keeps the number of rebuilds logarithmic in the largest position.
    const auto wanted =
        static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(max_position) + 1));
    const int64_t rows = std::min(wanted, kMaxCachedAngles / half);
    const std::vector<double> theta = fixed_frequencies(half, base_, options_);
    table_ = std::make_shared<const Table>(angle_table(
        rows, half, options_, [](int64_t m) { return m; },
        [&](int64_t) -> const std::vector<double>& { return theta; }));
  }
  return table_;
}

namespace {
// The angles of every token of `positions`, formed for this call.
Table token_table(const IntTensor& positions, const IntTensor& key_mask,
                  const RotaryAngles& angles) {
  const RotaryOptions& o = angles.options();
  const int64_t half = angles.pairs();
  const auto position_of = [&](int64_t t) { return positions.values[t]; };
  if (o.scaling == Scaling::DynamicNtk) {
    const std::vector<std::vector<double>> theta =
        dynamic_frequencies(positions, key_mask, half, angles.base(), o);
    const int64_t T = positions.shape[1];
    return angle_table(positions.numel(), half, o, position_of,
                       [&](int64_t t) -> const std::vector<double>& { return theta[t / T]; });
  }
  const std::vector<double> theta = fixed_frequencies(half, angles.base(), o);
  return angle_table(positions.numel(), half, o, position_of,
                     [&](int64_t) -> const std::vector<double>& { return theta; });
}
}  // namespace

Tensor rotary(const Tensor& x, const IntTensor& positions, int64_t heads,
              const RotaryAngles& angles, const IntTensor& key_mask) {
  const int64_t dh = head_width(x, positions, heads, angles.base());
  PELAB_CHECK(dh == angles.head_dim(), "rotary: the angles are for d_h = {}, x has d_h = {}",
              angles.head_dim(), dh);
  std::shared_ptr<const Table> table;
  if (positions.numel() > 0) {
    const auto [lowest, highest] =
        std::minmax_element(positions.values.begin(), positions.values.end());
    if (*lowest >= 0) table = angles.covering(*highest);
  }
  if (table) return rotate_recorded(x, std::move(table), positions, heads);
  return rotate_recorded(x, std::make_shared<const Table>(token_table(positions, key_mask, angles)),
                         IntTensor(), heads);
}

}  // namespace pelab
