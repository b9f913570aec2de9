// modular_arithmetic_brackets (Delétang et al. 2023, tasks/dcf/modular_arithmetic_brackets.py):
// a bracketed expression over {0..4} mod 5; predict its value. Their task table builds it with
// mult=True, so '*' is drawn as well as '+' and '-'.
//
// Their vocabulary (input_size = modulus + 6) has 'x' at id 10, which this task never draws
// (solve_equation's unknown; their '=' maps to id 11, past input_size, and is never used
// here either); 'x' is kept so that the ids and the input width are theirs, the blank then
// being id 11 as in their model input.
#include "data/task_base.h"
#include "data/tasks/bracket_expressions.h"

namespace pelab::tasks {
namespace {

constexpr BracketAlphabet kAlphabet = {
    .plus = 5, .minus = 6, .times = 7, .open = 8, .close = 9, .unknown = -1};

class ModularArithmeticBracketsTask : public BlankAnswerTask {
 public:
  ModularArithmeticBracketsTask()
      : BlankAnswerTask(
            "modular_arithmetic_brackets", TaskLayout::Classification,
            {"0", "1", "2", "3", "4", "+", "-", "*", "(", ")", "x"},
            numbered_symbols(kBracketModulus),
            "Classification. Input: an expression of exactly n tokens over the digits 0..4, "
            "'+', '-', '*' and brackets, drawn as their grammar draws it (n = 1..4: d, -d, "
            "(d), (-d); n >= 5: (L op R) with |L| uniform in [1, n-4], op uniform over "
            "{+, -, *}, every digit uniform; 'x' is in the vocabulary, never drawn), then one "
            "blank token '?'. Target: the value of the expression mod 5. Scored: the blank "
            "only (the last token); every other target is kIgnore.",
            "Evaluating nested brackets is a stack computation: which operands an operator "
            "joins depends on the bracket depth, not on a fixed offset, so the model must "
            "match each '(' with its ')' at distances up to n and order the tokens at every "
            "distance. Needs the relative order of tokens at all offsets up to n; a "
            "relative scheme clipped at K cannot order tokens further apart than K.") {
    info_.source = deletang_source(
        "tasks/dcf/modular_arithmetic_brackets.py",
        ", with mult=True as their task table builds it, as their generator draws it");
  }

 protected:
  int output_length(int /*n*/) const override { return 1; }

  std::vector<int32_t> draw_input(Generator& rng, int n) const override {
    std::vector<int32_t> input;
    input.reserve(n);
    draw_bracket_expression(rng, n, kAlphabet, /*times=*/true, input);
    return input;
  }

  std::vector<int32_t> solve(const std::vector<int32_t>& input, int /*n*/) const override {
    return {bracket_value(input, kAlphabet, 0, info_.name)};
  }
};

}  // namespace

TaskDef modular_arithmetic_brackets_task_def() {
  return {"modular_arithmetic_brackets", {}, [](const TaskParams&) -> std::unique_ptr<Task> {
            return std::make_unique<ModularArithmeticBracketsTask>();
          }};
}

}  // namespace pelab::tasks
