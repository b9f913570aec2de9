// Shaw et al.'s relative terms as they are usually implemented: the clipped-distance tables
// gathered into a [T, T, d_h] tensor per layer (a key and a value embedding for every pair of
// positions), then multiplied with the queries and the attention weights. pelab's own scheme
// (positional/relative.cpp) computes the same terms from the [2k+1, d_h] tables without that
// tensor; this one exists to measure what the usual way costs beside it (claim C7), and gives
// the same scores, outputs and gradients.
#pragma once

#include <cstdint>
#include <memory>

#include "pelab/nn/attention.h"

namespace pelab {

// The plain terms over `positions` [B, T] (every row the same positions, as the usual
// implementation assumes: one [T, T, d_h] tensor serves the whole batch) from the tables
// rel_k, rel_v [2k+1, d_h]. Building it gathers both [T, T, d_h] tensors.
std::shared_ptr<const AttentionTerms> plain_shaw_terms(const IntTensor& positions,
                                                       const Tensor& rel_k, const Tensor& rel_v,
                                                       int64_t max_distance);

}  // namespace pelab
