// Natural numbers as bit vectors, for Delétang et al. 2023's binary tasks (binary_addition,
// binary_multiplication, compute_sqrt). Their generators use Python's integers, which have no
// width limit; an example of size n holds numbers of up to n bits, beyond 64 at the lengths
// they evaluate (up to 100, and 500 in Ruoss et al. 2023), so the arithmetic here is on bits.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "pelab/core/rng.h"

namespace pelab::tasks {

// A natural number, least significant bit first; each entry 0 or 1 (the tasks' bit ids).
// High zeros are allowed: {1, 0, 0} is 1.
using Bits = std::vector<int32_t>;

// `width` bits of a number uniform in [1, 2^width - 1] (Python's random.randint(1, 2**w - 1)).
Bits random_positive(Generator& rng, int width);
// The `width` low bits of `value` (the tiny sizes, where their generators use numpy integers).
Bits bits_of(uint64_t value, int width);
// a + b, a * b, floor(sqrt(a)); the results may have high zeros.
Bits add(const Bits& a, const Bits& b);
Bits multiply(const Bits& a, const Bits& b);
Bits integer_sqrt(const Bits& a);
// Without its high zeros, and {0} for zero: the digits of Python's f'{x:b}', reversed.
Bits minimal(Bits a);
// `a` written in exactly `width` bits, most significant first (f'{x:b}'.zfill(width)), which
// must fit.
Bits big_endian(const Bits& a, int width);

// Delétang's two-operand input for sizes n >= 3 (binary_addition.py,
// _sample_expressions_and_results): a, the operator token `op`, b, both least significant bit
// first, |a| uniform in [1, n-2] and |b| = n-1-|a|, each number uniform in [1, 2^|x| - 1]
// written in exactly |x| bits (high zeros allowed).
std::vector<int32_t> draw_operands(Generator& rng, int n, int32_t op);
// The two operands of such an input; throws pelab::Error naming `task` unless the input is
// bits, one `op` and bits, neither side empty.
std::pair<Bits, Bits> split_operands(const std::vector<int32_t>& input, int32_t op,
                                     const std::string& task);

}  // namespace pelab::tasks
