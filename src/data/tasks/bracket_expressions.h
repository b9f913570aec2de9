// Delétang et al. 2023's bracketed expressions mod 5 (tasks/dcf/modular_arithmetic_brackets.py,
// generate_one_expression_and_result), shared by modular_arithmetic_brackets and
// solve_equation, whose alphabets give the symbols different ids.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pelab/core/rng.h"

namespace pelab::tasks {

inline constexpr int kBracketModulus = 5;  // their modulus; the digits are ids 0..4

// The ids of a task's symbols; times is -1 where the alphabet has no '*', unknown -1 where it
// has no 'x'.
struct BracketAlphabet {
  int32_t plus, minus, times, open, close, unknown;
};

// Appends an expression of exactly `length` tokens, drawn as their generator draws it: sizes
// 1-4 are d, -d, (d), (-d); a larger size is (L op R) with |L| uniform in [1, length - 4],
// |R| the rest, op uniform over {+, -} or, with `times`, {+, -, *}; every digit uniform.
void draw_bracket_expression(Generator& rng, int length, const BracketAlphabet& alphabet,
                             bool times, std::vector<int32_t>& out);

// The value mod 5 (in 0..4) of `tokens`, one whole expression of that grammar, with the unknown
// (if any) standing for `unknown_value`. Throws pelab::Error, naming `task`, when the tokens
// are not such an expression.
int bracket_value(const std::vector<int32_t>& tokens, const BracketAlphabet& alphabet,
                  int unknown_value, const std::string& task);

}  // namespace pelab::tasks
