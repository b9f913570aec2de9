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

// xpos's centre c of each sequence: the middle of its real positions, rounded down (of all its
// positions for a row of padding only). [B] from positions, key_mask [B, T].
std::vector<int64_t> xpos_centres(const IntTensor& positions, const IntTensor& key_mask);

// xpos's factors ζ_k^(sign·(p − c_b)/B) on the pair k of every head: [B, T, heads·head_dim],
// sign +1 for queries and −1 for keys, c_b = centres[b]. An error when a factor would leave
// float range (positions too far from their centre for scale_base).
Tensor xpos_scales(const IntTensor& positions, const std::vector<int64_t>& centres, int64_t heads,
                   int64_t head_dim, double scale_base, int sign);

}  // namespace pelab
