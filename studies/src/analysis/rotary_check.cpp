#include "pelab/analysis/rotary_check.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "pelab/autograd/autograd.h"
#include "pelab/core/error.h"
#include "pelab/core/rng.h"
#include "pelab/ops/ops.h"

namespace pelab {

PositionMap pelab_rotary(int64_t dim, double base) {
  return [dim, base](const std::vector<double>& x, int64_t position) {
    PELAB_CHECK(static_cast<int64_t>(x.size()) == dim, "rotary: expected {} values, got {}", dim,
                x.size());
    std::vector<float> xf(x.begin(), x.end());
    NoGradGuard no_grad;
    const Tensor out =
        rotary(Tensor::from_vector({1, 1, dim}, xf),
               IntTensor({1, 1}, std::vector<int32_t>{static_cast<int32_t>(position)}), 1, base);
    const std::vector<float> v = out.to_vector();
    return std::vector<double>(v.begin(), v.end());
  };
}

std::vector<double> note003_rope(const std::vector<double>& x, int64_t position, int64_t dim_arg) {
  const int64_t dim = static_cast<int64_t>(x.size());
  PELAB_CHECK(dim_arg >= 1, "dim_arg must be positive, got {}", dim_arg);
  std::vector<double> inv_freq;
  for (int64_t i = 0; i < dim_arg; i += 2)
    inv_freq.push_back(1.0 /
                       std::pow(10000.0, static_cast<double>(i) / static_cast<double>(dim_arg)));
  std::vector<double> theta;
  for (int copy = 0; copy < 2; ++copy)
    for (double f : inv_freq) theta.push_back(static_cast<double>(position) * f);
  const int64_t width = static_cast<int64_t>(theta.size());
  PELAB_CHECK(width == dim || width == 1,
              "operands could not be broadcast together with shapes ({},) ({},): the angles "
              "have {} entries for an embedding of {}",
              dim, width, width, dim);
  std::vector<double> out(static_cast<size_t>(dim));
  for (int64_t i = 0; i < dim; ++i) {
    const double angle = theta[static_cast<size_t>(width == 1 ? 0 : i)];
    const double rolled = x[static_cast<size_t>((i - 1 + dim) % dim)];  // np.roll(x, 1)[i]
    out[static_cast<size_t>(i)] =
        x[static_cast<size_t>(i)] * std::cos(angle) + rolled * std::sin(angle);
  }
  return out;
}

RotaryCheck check_rotary(const PositionMap& f, int64_t dim, int64_t max_position,
                         const std::vector<int64_t>& offsets, int64_t trials, uint64_t seed) {
  PELAB_CHECK(trials >= 1 && max_position >= 1 && !offsets.empty(),
              "check_rotary: need trials, positions and offsets");
  Generator rng(seed);
  auto random_vector = [&] {
    std::vector<double> v(static_cast<size_t>(dim));
    for (double& x : v) x = rng.normal(0.0f, 1.0f);
    return v;
  };
  auto dot = [](const std::vector<double>& a, const std::vector<double>& b) {
    double s = 0;
    for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
    return s;
  };
  RotaryCheck c;
  c.trials = trials;
  c.min_norm_ratio = std::numeric_limits<double>::infinity();
  for (int64_t t = 0; t < trials; ++t) {
    const std::vector<double> q = random_vector(), k = random_vector();
    const int64_t m = rng.uniform_int(0, max_position), n = rng.uniform_int(0, max_position);
    const double scale = std::sqrt(dot(q, q) * dot(k, k));
    const double score = dot(f(q, m), f(k, n));
    for (int64_t delta : offsets) {
      const double shifted = dot(f(q, m + delta), f(k, n + delta));
      c.max_score_change = std::max(c.max_score_change, std::abs(shifted - score) / scale);
    }
    const double ratio = std::sqrt(dot(f(q, m), f(q, m)) / dot(q, q));
    c.min_norm_ratio = std::min(c.min_norm_ratio, ratio);
    c.max_norm_ratio = std::max(c.max_norm_ratio, ratio);
  }
  return c;
}

}  // namespace pelab
