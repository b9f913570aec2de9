#include "pelab/report/statistics.h"

#include <algorithm>
#include <cmath>
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
  Generator rng(options.seed);
  const int64_t n = static_cast<int64_t>(values.size());
  std::vector<double> means(static_cast<size_t>(options.resamples));
  for (double& m : means) {
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += values[static_cast<size_t>(rng.uniform_int(0, n - 1))];
    m = sum / static_cast<double>(n);
  }
  std::sort(means.begin(), means.end());
  const double tail = (1 - options.confidence) / 2;
  return {quantile_sorted(means, tail), quantile_sorted(means, 1 - tail)};
}

}  // namespace pelab
