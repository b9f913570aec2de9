// Testing a rotary construction for what makes it rotary (claims C11, C12): the score between
// a query at m and a key at n must depend only on m − n, and the rotation must keep norms.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace pelab {

// A position-dependent map of one vector: (x [dim], position) → [dim].
using PositionMap = std::function<std::vector<double>(const std::vector<double>&, int64_t)>;

// pelab's rotary op (MODEL.md: pairs (2i, 2i+1) rotated by position·base^(−2i/dim)), one head.
PositionMap pelab_rotary(int64_t dim, double base);

// Note 003's construction exactly as its code writes it, for an embedding of width x.size():
//   inv_freq = 1 / 10000^(arange(0, dim_arg, 2) / dim_arg)
//   θ        = concatenate(pos·inv_freq, pos·inv_freq)          (2·⌈dim_arg/2⌉ entries)
//   out      = x·cos θ + roll(x, shift=1)·sin θ
// Like numpy, it throws when θ's width neither equals x's width nor is 1 (no broadcasting):
// the note's example passes dim_arg = dim / 2.
std::vector<double> note003_rope(const std::vector<double>& x, int64_t position, int64_t dim_arg);

struct RotaryCheck {
  int64_t trials = 0;
  // Largest |score(m+Δ, n+Δ) − score(m, n)| / (‖q‖·‖k‖) over random q, k, m, n and Δ.
  double max_score_change = 0;
  // ‖f(x, p)‖ / ‖x‖ over random x and p.
  double min_norm_ratio = 0, max_norm_ratio = 0;
};
RotaryCheck check_rotary(const PositionMap& f, int64_t dim, int64_t max_position,
                         const std::vector<int64_t>& offsets, int64_t trials, uint64_t seed);

}  // namespace pelab
