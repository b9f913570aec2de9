// solve_equation (Delétang et al. 2023, tasks/dcf/solve_equation.py): a bracketed expression
// mod 5 with one digit replaced by the unknown 'x', '=', and the expression's value; predict
// the replaced digit. Only '+' and '-' are drawn (mult=False, so that x has one solution).
//
// Two things their generator does that a reader might not expect, both kept:
//   - sizes 1 and 2 are too short for an equation; their code then returns inputs of all 0s
//     with the label 0, and so does this task;
//   - the replaced digit is not uniform among the digits: a position is drawn uniformly in
//     the expression and, if it holds no digit, the next digit to its right is taken
//     (wrapping around), so a digit after a long run of brackets and operators is likelier.
#include <algorithm>

#include "data/task_base.h"
#include "data/tasks/bracket_expressions.h"

namespace pelab::tasks {
namespace {

constexpr BracketAlphabet kAlphabet = {
    .plus = 5, .minus = 6, .times = -1, .open = 7, .close = 8, .unknown = 9};
constexpr int32_t kEquals = 10;

class SolveEquationTask : public BlankAnswerTask {
 public:
  SolveEquationTask()
      : BlankAnswerTask(
            "solve_equation", TaskLayout::Classification,
            {"0", "1", "2", "3", "4", "+", "-", "(", ")", "x", "="},
            numbered_symbols(kBracketModulus),
            "Classification. Input: for n >= 3, a bracketed expression of n-2 tokens over "
            "0..4, '+' and '-' (drawn as modular_arithmetic_brackets draws it, without '*'), "
            "one of its digits replaced by 'x', then '=' and the expression's value mod 5; "
            "for n = 1, 2, n tokens '0' (their generator's fixed input). Then one blank "
            "token '?'. Target: the replaced digit, the one value of x in 0..4 that solves "
            "the equation mod 5 (0 for n = 1, 2). Scored: the blank only (the last token); "
            "every other target is kIgnore.",
            "As modular_arithmetic_brackets, the expression must be read through its bracket "
            "structure (matching brackets at distances up to n), and then inverted: whether x "
            "counts with sign + or - depends on the '-' operators enclosing it, at any "
            "distance. Needs the order of tokens at all offsets up to n; the value after "
            "'=' is at fixed offset 2 from the blank.") {
    info_.source = deletang_source("tasks/dcf/solve_equation.py");
  }

 protected:
  int output_length(int /*n*/) const override { return 1; }

  std::vector<int32_t> draw_input(Generator& rng, int n) const override {
    if (n < 3) return std::vector<int32_t>(n, 0);
    std::vector<int32_t> input;
    input.reserve(n);
    draw_bracket_expression(rng, n - 2, kAlphabet, /*times=*/false, input);
    const int value = bracket_value(input, kAlphabet, 0, info_.name);
    int at = static_cast<int>(rng.uniform_int(0, n - 3));
    while (input[at] >= kBracketModulus) at = (at + 1) % (n - 2);
    input[at] = kAlphabet.unknown;
    input.push_back(kEquals);
    input.push_back(value);
    return input;
  }

  std::vector<int32_t> solve(const std::vector<int32_t>& input, int n) const override {
    if (n < 3) {
      for (int i = 0; i < n; ++i)
        PELAB_CHECK(input[i] == 0, "task 'solve_equation': size {} has the input of 0s", n);
      return {0};
    }
    PELAB_CHECK(input[n - 2] == kEquals && input[n - 1] < kBracketModulus,
                "task 'solve_equation': expected '=' and a digit at the end");
    const std::vector<int32_t> expression(input.begin(), input.end() - 2);
    PELAB_CHECK(std::count(expression.begin(), expression.end(), kAlphabet.unknown) == 1,
                "task 'solve_equation': expected one 'x' in the expression");
    // Without '*' the expression is c + a·x with a = ±1: solve by two evaluations.
    const int c = bracket_value(expression, kAlphabet, 0, info_.name);
    const int a = (bracket_value(expression, kAlphabet, 1, info_.name) - c + 5) % 5;
    PELAB_ASSERT(a == 1 || a == 4);
    return {static_cast<int32_t>(((a == 1 ? 1 : -1) * (input[n - 1] - c) % 5 + 5) % 5)};
  }
};

}  // namespace

TaskDef solve_equation_task_def() {
  return {"solve_equation", {}, [](const TaskParams&) -> std::unique_ptr<Task> {
            return std::make_unique<SolveEquationTask>();
          }};
}

}  // namespace pelab::tasks
