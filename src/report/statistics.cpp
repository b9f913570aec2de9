#include "pelab/report/statistics.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "pelab/core/error.h"
#include "pelab/core/rng.h"

namespace pelab {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The q-quantile of sorted values, linearly interpolated between order statistics (the
// default of numpy.quantile and R's type 7).
double quantile_sorted(const std::vector<double>& sorted, double q) {
  const double at = q * static_cast<double>(sorted.size() - 1);
  const size_t below = static_cast<size_t>(std::floor(at));
  const size_t above = std::min(below + 1, sorted.size() - 1);
  const double frac = at - static_cast<double>(below);
  return sorted[below] + frac * (sorted[above] - sorted[below]);
}

// quantile_sorted of `values` once sorted, reading only the two order statistics it needs:
// nth_element puts the lower one in place, and the upper one is the least of those after it.
// Reorders `values`.
double quantile_selected(std::vector<double>& values, double q) {
  const double at = q * static_cast<double>(values.size() - 1);
  const size_t below = static_cast<size_t>(std::floor(at));
  const auto nth = values.begin() + static_cast<std::ptrdiff_t>(below);
  std::nth_element(values.begin(), nth, values.end());
  const double low = *nth;
  const double high = below + 1 < values.size() ? *std::min_element(nth + 1, values.end()) : low;
  const double frac = at - static_cast<double>(below);
  return low + frac * (high - low);
}

}  // namespace

double mean_of(const std::vector<double>& values) {
  if (values.empty()) return kNaN;
  double sum = 0;
  for (double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

double median_of(std::vector<double> values) {
  if (values.empty()) return kNaN;
  std::sort(values.begin(), values.end());
  return quantile_sorted(values, 0.5);
}

double max_of(const std::vector<double>& values) {
  if (values.empty()) return kNaN;
  return *std::max_element(values.begin(), values.end());
}

double sample_std(const std::vector<double>& values) {
  if (values.size() < 2) return kNaN;
  const double mean = mean_of(values);
  double ss = 0;
  for (double v : values) ss += (v - mean) * (v - mean);
  return std::sqrt(ss / static_cast<double>(values.size() - 1));
}

Interval bootstrap_mean_interval(const std::vector<double>& values,
                                 const BootstrapOptions& options) {
  PELAB_CHECK(options.confidence > 0 && options.confidence < 1,
              "bootstrap: confidence must be in (0, 1), got {}", options.confidence);
  PELAB_CHECK(options.resamples >= 1, "bootstrap: resamples must be at least 1, got {}",
              options.resamples);
  if (values.empty()) return {kNaN, kNaN};
  if (values.size() == 1) return {values[0], values[0]};
  const int64_t n = static_cast<int64_t>(values.size());
  const double tail = (1 - options.confidence) / 2;
  // Every value the same (a group at the floor or the ceiling, common): every resample sums
  // the same n numbers in the same order, so the loop below would give this one mean
  // `resamples` times. Computed once; the interval is the same, bit for bit.
  if (std::isfinite(values[0]) &&
      std::all_of(values.begin(), values.end(), [&](double v) { return v == values[0]; })) {
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += values[0];
    const std::vector<double> same(2, sum / static_cast<double>(n));
    return {quantile_sorted(same, tail), quantile_sorted(same, 1 - tail)};
  }
  // Generator::uniform_int(0, n - 1), with its bound computed once: the same draws.
  Generator rng(options.seed);
  const auto range = static_cast<uint64_t>(n);
  const uint64_t limit = UINT64_MAX - UINT64_MAX % range;
  std::vector<double> means(static_cast<size_t>(options.resamples));
  for (double& m : means) {
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) {
      uint64_t v;
      do v = rng.next_u64();
      while (v >= limit);
      sum += values[static_cast<size_t>(v % range)];
    }
    m = sum / static_cast<double>(n);
  }
  // Only the order statistics the two quantiles read, not a whole sort: the same numbers
  // (a NaN, which has no place in an order, takes the sort it always took).
  if (std::all_of(values.begin(), values.end(), [](double v) { return std::isfinite(v); }))
    return {quantile_selected(means, tail), quantile_selected(means, 1 - tail)};
  std::sort(means.begin(), means.end());
  return {quantile_sorted(means, tail), quantile_sorted(means, 1 - tail)};
}

}  // namespace pelab
