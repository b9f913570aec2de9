// The reference paths of ops that also have a faster one, for the tests to hold the fast path
// to, bit for bit. Not ops: no graph is recorded (the op table of tests/ops lists ops.h's).
#pragma once

#include <cstdint>

#include "pelab/tensor/tensor.h"

namespace pelab {

// rotary(x, positions, heads, base)'s rotation (direction +1) or its inverse (−1, what its
// backward applies) through the pair-by-pair loop, which every head width takes but 8 and 16:
// those rotate a head as one vector (src/ops/rotary.cpp).
Tensor rotary_pair_by_pair(const Tensor& x, const IntTensor& positions, int64_t heads, double base,
                           float direction);

}  // namespace pelab
