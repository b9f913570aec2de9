// Summary statistics over seeds: mean, sample standard deviation, median, maximum, and a 95%
// bootstrap interval of the mean. Papers on length generalisation report the maximum over
// seeds (Delétang et al. 2023, Ruoss et al. 2023), so a comparison with them needs it beside
// the mean; the interval says how far the mean of a handful of seeds can be trusted.
#pragma once

#include <cstdint>
#include <vector>

namespace pelab {

struct Interval {
  double low = 0, high = 0;
};

struct BootstrapOptions {
  double confidence = 0.95;
  int64_t resamples = 10000;
  // The resampling stream is fixed: the same values give the same interval, bit for bit, on
  // every run and machine (the interval is a summary of the data, not a random draw).
  uint64_t seed = 0x9e3779b97f4a7c15ULL;
};

// The percentile bootstrap interval of the mean: `resamples` samples of values.size() values
// drawn with replacement, and the (1 − confidence)/2 and (1 + confidence)/2 quantiles of their
// means. NaN bounds when values is empty; [v, v] for a single value. With few values (3–5
// seeds) the percentile interval is known to be somewhat narrow; it is reported beside the
// values themselves, never instead of them.
Interval bootstrap_mean_interval(const std::vector<double>& values,
                                 const BootstrapOptions& options = {});

double mean_of(const std::vector<double>& values);     // NaN when empty
double median_of(std::vector<double> values);          // NaN when empty
double max_of(const std::vector<double>& values);      // NaN when empty
double sample_std(const std::vector<double>& values);  // n − 1; NaN when n < 2

}  // namespace pelab
