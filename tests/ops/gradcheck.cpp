#include "ops/gradcheck.h"

#include <cmath>
#include <random>

#include <fmt/format.h>

#include "pelab/backend/gemm.h"

namespace pelab::testing {

Tensor random_tensor(const Shape& shape, uint64_t seed, float scale) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> values(static_cast<size_t>(numel(shape)));
  for (float& v : values) v = normal(rng);
  return Tensor::from_vector(shape, values);
}

double closeness(const Tensor& a, const Tensor& b, double rtol, double atol) {
  if (a.shape() != b.shape()) return INFINITY;
  const std::vector<float> va = a.to_vector(), vb = b.to_vector();
  double worst = 0.0;
  for (size_t i = 0; i < va.size(); ++i) {
    const double err = std::fabs(static_cast<double>(va[i]) - vb[i]);
    const double allowed = atol + rtol * std::fabs(static_cast<double>(vb[i]));
    if (!std::isfinite(va[i]) || !std::isfinite(vb[i])) return INFINITY;
    worst = std::max(worst, err / allowed);
  }
  return worst;
}

namespace {
double weighted_sum(const Tensor& y, const std::vector<float>& w) {
  const std::vector<float> v = y.to_vector();
  double acc = 0.0;
  for (size_t i = 0; i < v.size(); ++i) acc += static_cast<double>(v[i]) * w[i];
  return acc;
}

struct BackendScope {
  GemmBackend saved = gemm_backend();
  explicit BackendScope(GemmBackend b) { set_gemm_backend(b); }
  ~BackendScope() { set_gemm_backend(saved); }
};
}  // namespace

GradCheckResult gradcheck(const std::function<Tensor(const TensorList&)>& fn, TensorList inputs,
                          const GradCheckOptions& options, uint64_t seed) {
  BackendScope reference(GemmBackend::Reference);
  for (Tensor& x : inputs) {
    x.zero_grad();
    x.set_requires_grad(true);
  }
  GradCheckResult result;
  Tensor y = fn(inputs);
  const std::vector<float> w = random_tensor(y.shape(), seed ^ 0x9e3779b97f4a7c15ULL).to_vector();
  const Tensor loss = sum_all(mul(y, Tensor::from_vector(y.shape(), w)));
  loss.backward();

  int reported = 0;
  for (size_t k = 0; k < inputs.size(); ++k) {
    Tensor& x = inputs[k];
    const Tensor analytic = x.grad().defined() ? x.grad() : Tensor::zeros(x.shape());
    const std::vector<float> grad = analytic.to_vector();
    const int64_t n = x.numel();
    const int64_t step = std::max<int64_t>(1, n / options.max_elements_per_input);
    for (int64_t i = 0; i < n; i += step) {
      float* p = x.data() + i;
      const float saved = *p;
      double numeric;
      {
        NoGradGuard no_grad;
        *p = static_cast<float>(saved + options.epsilon);
        const double plus = weighted_sum(fn(inputs), w);
        *p = static_cast<float>(saved - options.epsilon);
        const double minus = weighted_sum(fn(inputs), w);
        *p = saved;
        // The perturbation actually applied in float32, not the nominal epsilon.
        const double h = (static_cast<double>(static_cast<float>(saved + options.epsilon)) -
                          static_cast<float>(saved - options.epsilon));
        numeric = (plus - minus) / h;
      }
      const double err = std::fabs(grad[i] - numeric);
      const double allowed =
          options.atol + options.rtol * std::max(std::fabs(numeric), std::fabs((double)grad[i]));
      result.max_error = std::max(result.max_error, err / allowed);
      if (!(err <= allowed)) {
        result.ok = false;
        if (reported++ < 5)
          result.message += fmt::format("input {} element {}: analytic {:.6g} numeric {:.6g}\n", k,
                                        i, grad[i], numeric);
      }
    }
  }
  return result;
}

}  // namespace pelab::testing
