// The model's parameters by their checkpoint names (MODEL.md), in creation order. Modules
// register their own parameters under a prefix, so no table of names is kept by hand.
#pragma once

#include <string>
#include <unordered_set>
#include <vector>

#include "pelab/core/rng.h"
#include "pelab/tensor/tensor.h"

namespace pelab {

class ParameterStore {
 public:
  // Parameters are initialised from streams derived from `init_seed` and their own names,
  // so a parameter's initial values do not depend on the order modules are built in.
  // `Values::Unset` registers the same names and shapes but draws nothing: a config check
  // builds the model that way, so refusing or accepting a large model costs no init time.
  enum class Values { Drawn, Unset };
  explicit ParameterStore(uint64_t init_seed, Values values = Values::Drawn)
      : seed_(init_seed), values_(values) {}

  // Registers a new parameter drawn from N(0, stddev²) (stddev = 0 gives zeros).
  Tensor add_normal(const std::string& name, const Shape& shape, float stddev);
  Tensor add_constant(const std::string& name, const Shape& shape, float value);
  // Registers a new parameter drawn from U(lo, hi) (torch.nn.Linear's init, KERPLE's).
  Tensor add_uniform(const std::string& name, const Shape& shape, float lo, float hi);

  const std::vector<Tensor>& all() const { return params_; }  // each carries its name()
  Tensor get(const std::string& name) const;                  // error listing near names if absent
  bool contains(const std::string& name) const;
  int64_t count() const;  // total number of scalars

 private:
  Tensor add(const std::string& name, Tensor t);
  uint64_t seed_;
  Values values_;
  std::vector<Tensor> params_;
  std::unordered_set<std::string> names_;  // of params_, for the duplicate check
  int64_t count_ = 0;                      // scalars in params_
};

}  // namespace pelab
