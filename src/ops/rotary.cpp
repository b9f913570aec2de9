// rotary: each head's pairs (x₂ᵢ, x₂ᵢ₊₁) of token (b, t) rotated by the angle m·θ_i,
// m = positions[b, t], θ_i = base^(−2i/d_h):
//   x'₂ᵢ   = x₂ᵢ cos mθ_i − x₂ᵢ₊₁ sin mθ_i
//   x'₂ᵢ₊₁ = x₂ᵢ sin mθ_i + x₂ᵢ₊₁ cos mθ_i
// backward: a rotation is orthogonal, so dx is dy rotated by −mθ_i.
// Angles are formed in double precision: positions can be large (randomized positions,
// long evaluation) and m·θ_i in float32 would lose the low bits of the angle.
// The angles depend only on (m, i), so RotaryAngles forms them once per position and the
// op reads them by position; rotary(..., base) forms them per token, for one call.
#include <algorithm>
#include <bit>
#include <cmath>

#include "op_util.h"
#include "pelab/ops/ops.h"

namespace pelab {

// cos/sin of m·θ_i, row-major [rows, half]: the row of a token (per-token tables) or of a
// position (RotaryAngles).
struct RotaryAngles::Table {
  int64_t half = 0;
  std::vector<float> cos, sin;
  int64_t rows() const { return half == 0 ? 0 : static_cast<int64_t>(cos.size()) / half; }
};

namespace {
using Table = RotaryAngles::Table;

// RotaryAngles keeps at most this many (position, pair) entries (8 MB of cos and sin):
// enough for every position of long evaluations; randomized positions past it are rare
// and computed per call.
constexpr int64_t kMaxCachedAngles = int64_t{1} << 20;

// Row k of the table holds position position_of(k).
template <class PositionOf>
Table angle_table(int64_t rows, int64_t half, double base, PositionOf position_of) {
  Table a;
  a.half = half;
  a.cos.resize(static_cast<size_t>(rows * half));
  a.sin.resize(a.cos.size());
  std::vector<double> theta(static_cast<size_t>(half));
  for (int64_t i = 0; i < half; ++i)
    theta[i] = std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(2 * half));
  parallel_for(0, rows, 64, [&](int64_t lo, int64_t hi) {
    for (int64_t t = lo; t < hi; ++t)
      for (int64_t i = 0; i < half; ++i) {
        const double angle = static_cast<double>(position_of(t)) * theta[i];
        a.cos[t * half + i] = static_cast<float>(std::cos(angle));
        a.sin[t * half + i] = static_cast<float>(std::sin(angle));
      }
  });
  return a;
}

// out = x rotated by `direction`·angle (+1 forward, −1 backward); token t reads the table's
// row row_of[t], or row t when row_of is null.
Tensor rotate(const Tensor& x, const Table& a, const int32_t* row_of, int64_t heads,
              float direction) {
  const Tensor xc = x.contiguous();
  const int64_t d = x.size(-1), dh = d / heads, half = dh / 2;
  const int64_t tokens = x.numel() / d;
  Tensor out = Tensor::empty(x.shape());
  const float* in = xc.data();
  float* o = out.data();
  parallel_for(0, tokens, 64, [&](int64_t lo, int64_t hi) {
    for (int64_t t = lo; t < hi; ++t) {
      const int64_t row = row_of ? row_of[t] : t;
      const float* c = a.cos.data() + row * half;
      const float* s = a.sin.data() + row * half;
      for (int64_t h = 0; h < heads; ++h) {
        const float* xi = in + t * d + h * dh;
        float* yo = o + t * d + h * dh;
        for (int64_t i = 0; i < half; ++i) {
          const float x0 = xi[2 * i], x1 = xi[2 * i + 1], sn = direction * s[i];
          yo[2 * i] = x0 * c[i] - x1 * sn;
          yo[2 * i + 1] = x0 * sn + x1 * c[i];
        }
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
}  // namespace

Tensor rotary(const Tensor& x, const IntTensor& positions, int64_t heads, double base) {
  const int64_t half = head_width(x, positions, heads, base) / 2;
  auto table = std::make_shared<const Table>(
      angle_table(positions.numel(), half, base, [&](int64_t t) { return positions.values[t]; }));
  return rotate_recorded(x, std::move(table), IntTensor(), heads);
}

RotaryAngles::RotaryAngles(int64_t head_dim, double base) : head_dim_(head_dim), base_(base) {
  PELAB_CHECK(head_dim >= 2 && head_dim % 2 == 0, "rotary needs an even head width, got d_h = {}",
              head_dim);
  PELAB_CHECK(base > 0.0, "rotary: base must be positive, got {}", base);
}

std::shared_ptr<const RotaryAngles::Table> RotaryAngles::covering(int64_t max_position) const {
  const int64_t half = head_dim_ / 2;
  if (max_position < 0 || max_position >= kMaxCachedAngles / half) return nullptr;
  const std::lock_guard<std::mutex> lock(mutex_);
  if (!table_ || table_->rows() <= max_position) {
    // Doubling keeps the number of rebuilds logarithmic in the largest position.
    const auto wanted =
        static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(max_position) + 1));
    const int64_t rows = std::min(wanted, kMaxCachedAngles / half);
    table_ =
        std::make_shared<const Table>(angle_table(rows, half, base_, [](int64_t m) { return m; }));
  }
  return table_;
}

Tensor rotary(const Tensor& x, const IntTensor& positions, int64_t heads,
              const RotaryAngles& angles) {
  const int64_t dh = head_width(x, positions, heads, angles.base());
  PELAB_CHECK(dh == angles.head_dim(), "rotary: the angles are for d_h = {}, x has d_h = {}",
              angles.head_dim(), dh);
  if (positions.numel() == 0) return rotary(x, positions, heads, angles.base());
  const auto [lowest, highest] =
      std::minmax_element(positions.values.begin(), positions.values.end());
  std::shared_ptr<const Table> table = *lowest >= 0 ? angles.covering(*highest) : nullptr;
  if (!table) return rotary(x, positions, heads, angles.base());
  return rotate_recorded(x, std::move(table), positions, heads);
}

}  // namespace pelab
