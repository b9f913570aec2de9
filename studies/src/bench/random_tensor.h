// The benchmarks' operands: a tensor of N(0, 1) draws from a seeded generator.
#pragma once

#include <cstdint>

#include "pelab/core/rng.h"
#include "pelab/tensor/tensor.h"

namespace pelab::bench_detail {

inline Tensor random_normal(const Shape& shape, uint64_t seed) {
  Generator rng(seed);
  Tensor t = Tensor::empty(shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = rng.normal(0.0f, 1.0f);
  return t;
}

}  // namespace pelab::bench_detail
