// The model's parameters by their checkpoint names (MODEL.md), in creation order. Modules
// register their own parameters under a prefix, so no table of names is kept by hand.
#pragma once

#include <string>
#include <vector>

#include "pelab/core/rng.h"
#include "pelab/tensor/tensor.h"

namespace pelab {

class ParameterStore {
 public:
  // Parameters are initialised from streams derived from `init_seed` and their own names,
  // so a parameter's initial values do not depend on the order modules are built in.
  explicit ParameterStore(uint64_t init_seed) : seed_(init_seed) {}

  // Registers a new parameter drawn from N(0, stddev²) (stddev = 0 gives zeros).
  Tensor add_normal(const std::string& name, const Shape& shape, float stddev);
  Tensor add_constant(const std::string& name, const Shape& shape, float value);

  const std::vector<Tensor>& all() const { return params_; }  // each carries its name()
  Tensor get(const std::string& name) const;                  // error listing near names if absent
  bool contains(const std::string& name) const;
  int64_t count() const;  // total number of scalars

 private:
  Tensor add(const std::string& name, Tensor t);
  uint64_t seed_;
  std::vector<Tensor> params_;
};

}  // namespace pelab
