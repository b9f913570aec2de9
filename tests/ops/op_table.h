// The op table: one entry per differentiable op (and per interesting shape of it). It
// drives the finite-difference gradient check and, for ops with a fast path, the
// backend-vs-reference check. tests/ops/op_table_test.cpp fails if an op declared in
// include/pelab/ops/ops.h has no entry here.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "pelab/ops/ops.h"

namespace pelab::testing {

enum class Domain {
  Any,           // N(0, 1)
  Positive,      // uniform in [0.5, 2]: log, sqrt, div's denominator
  AwayFromKink,  // N(0,1) with |x| >= 0.1: relu, abs (finite differences across a kink lie)
};

struct OpCase {
  std::string name;  // "<op>/<variant>"; <op> is the function name in ops.h
  std::vector<Shape> inputs;
  std::function<Tensor(const TensorList&)> fn;
  std::vector<Domain> domains = {};  // per input; Any where missing
  bool has_fast_path = false;        // compare onednn/openblas against the reference kernel
  double tolerance_scale = 1.0;      // widen the default tolerance (justified at the entry)
};

const std::vector<OpCase>& op_cases();

}  // namespace pelab::testing
