// The schemes' pure functions, for tests and analyses (pelab analyze encoding, the claims).
#pragma once

#include <cstdint>
#include <vector>

#include "pelab/tensor/tensor.h"

namespace pelab {

// MODEL.md's sinusoidal table: [positions.size(), dim], P[p, 2i] = sin(p·ω_i),
// P[p, 2i+1] = cos(p·ω_i), ω_i = base^(−2i/dim). dim must be even.
Tensor sinusoidal_encoding(const std::vector<int64_t>& positions, int64_t dim, double base);

// ALiBi slopes m_h for `heads` heads (the paper's rule for non-powers of two).
std::vector<double> alibi_slopes(int64_t heads);

// T5's bidirectional bucket of the relative distance p_j − p_i.
int64_t t5_bucket(int64_t relative, int64_t num_buckets, int64_t max_distance);

}  // namespace pelab
