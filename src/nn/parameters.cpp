#include "pelab/nn/parameters.h"

#include "pelab/core/error.h"

namespace pelab {

Tensor ParameterStore::add(const std::string& name, Tensor t) {
  PELAB_CHECK(!contains(name), "internal error: parameter '{}' registered twice", name);
  t.set_name(name).set_requires_grad(true);
  params_.push_back(t);
  return t;
}

Tensor ParameterStore::add_normal(const std::string& name, const Shape& shape, float stddev) {
  Generator named(derive_seed(seed_, name.c_str()));
  Tensor t = Tensor::empty(shape);
  float* p = t.data();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = stddev == 0.0f ? 0.0f : named.normal(0.0f, stddev);
  return add(name, t);
}

Tensor ParameterStore::add_constant(const std::string& name, const Shape& shape, float value) {
  return add(name, Tensor::full(shape, value));
}

Tensor ParameterStore::get(const std::string& name) const {
  for (const Tensor& t : params_)
    if (t.name() == name) return t;
  throw Error(fmt::format("the model has no parameter '{}'", name));
}

bool ParameterStore::contains(const std::string& name) const {
  for (const Tensor& t : params_)
    if (t.name() == name) return true;
  return false;
}

int64_t ParameterStore::count() const {
  int64_t n = 0;
  for (const Tensor& t : params_) n += t.numel();
  return n;
}

}  // namespace pelab
