#include "pelab/nn/parameters.h"

#include "pelab/core/error.h"

namespace pelab {

namespace {
// Far beyond any model pelab trains on one machine, and small enough that the check fires
// before a config with a typo (d_model: 640000) allocates memory it does not have.
constexpr int64_t kMaxParameters = int64_t{1} << 28;  // 1 GiB of float32

// Refuses a parameter that would take the model past kMaxParameters, before allocating it.
void check_budget(const std::string& name, const Shape& shape, int64_t so_far) {
  int64_t n = 1;
  for (const int64_t d : shape) {
    PELAB_CHECK(d >= 0, "internal error: parameter '{}' has shape {}", name, to_string(shape));
    if (__builtin_mul_overflow(n, d, &n) || n > kMaxParameters) n = kMaxParameters + 1;
  }
  PELAB_CHECK(so_far + n <= kMaxParameters,
              "the model would have more than {} parameters (at '{}', shape {}); reduce "
              "model.d_model, model.layers, model.d_ff or the positional table",
              kMaxParameters, name, to_string(shape));
}
}  // namespace

Tensor ParameterStore::add(const std::string& name, Tensor t) {
  PELAB_CHECK(names_.insert(name).second, "internal error: parameter '{}' registered twice", name);
  t.set_name(name).set_requires_grad(true);
  count_ += t.numel();
  params_.push_back(t);
  return t;
}

Tensor ParameterStore::add_normal(const std::string& name, const Shape& shape, float stddev) {
  check_budget(name, shape, count());
  Generator named(derive_seed(seed_, name.c_str()));
  Tensor t = Tensor::empty(shape);
  if (values_ == Values::Unset) return add(name, t);
  float* p = t.data();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = stddev == 0.0f ? 0.0f : named.normal(0.0f, stddev);
  return add(name, t);
}

Tensor ParameterStore::add_constant(const std::string& name, const Shape& shape, float value) {
  check_budget(name, shape, count());
  return add(name, values_ == Values::Unset ? Tensor::empty(shape) : Tensor::full(shape, value));
}

Tensor ParameterStore::add_uniform(const std::string& name, const Shape& shape, float lo,
                                   float hi) {
  check_budget(name, shape, count());
  Generator named(derive_seed(seed_, name.c_str()));
  Tensor t = Tensor::empty(shape);
  if (values_ == Values::Unset) return add(name, t);
  float* p = t.data();
  for (int64_t i = 0; i < t.numel(); ++i)
    p[i] = lo + (hi - lo) * static_cast<float>(named.uniform());
  return add(name, t);
}

Tensor ParameterStore::get(const std::string& name) const {
  for (const Tensor& t : params_)
    if (t.name() == name) return t;
  throw Error(fmt::format("the model has no parameter '{}'", name));
}

bool ParameterStore::contains(const std::string& name) const {
  return names_.count(name) > 0;
}

int64_t ParameterStore::count() const {
  return count_;
}

}  // namespace pelab
