// modular_arithmetic (Deletang et al. 2022, without brackets): evaluate a flat expression of
// numbers in 0..4 and +, -, * mod 5.
#include "data/task_base.h"

namespace pelab::tasks {
namespace {

constexpr int kModulus = 5;
constexpr int32_t kPlus = kModulus, kMinus = kModulus + 1, kTimes = kModulus + 2,
                  kQuery = kModulus + 3;

class ModularArithmeticTask : public TaskBase {
 public:
  explicit ModularArithmeticTask(bool precedence) : precedence_(precedence) {
    info_.name = "modular_arithmetic";
    info_.source =
        "pelab's own variant of Delétang et al. 2023 (Neural Networks and the Chomsky Hierarchy)'s "
        "modular_arithmetic (n counts the numbers, not the tokens; a separator); theirs exactly is "
        "modular_arithmetic_deletang";
    info_.layout = TaskLayout::Classification;
    info_.input_symbols = numbered_symbols(kModulus);
    info_.input_symbols.insert(info_.input_symbols.end(), {"+", "-", "*", "?"});
    info_.output_symbols = numbered_symbols(kModulus);
    info_.description = fmt::format(
        "Classification. Input: an expression of n numbers from {{0..4}} separated by n-1 "
        "operators from {{+, -, *}}, all drawn uniformly (2n-1 tokens), then one query token "
        "'?'. Target: the value of the expression mod 5, evaluated {}. Scored: the query token "
        "only (the last token); every other target is kIgnore.",
        precedence ? "with precedence ('*' binds tighter than '+' and '-'; left-associative)"
                   : "strictly left to right (((a op b) op c) ..., no precedence)");
    info_.position_need =
        precedence
            ? "Each operator binds the numbers at offsets -1 and +1, and products group runs "
              "joined by '*': local structure at exact offsets of 1 (any relative scheme "
              "that tells offset 1 from 2, or absolute positions). The signed products are "
              "then summed, which does not depend on their order; the expression's length "
              "grows with n but no long offset is needed."
            : "Evaluated left to right, the value is a fold of non-commuting steps (x -> x+d, "
              "x-d, x*d): every step depends on all earlier ones in order, so the model needs "
              "the relative order of tokens at every distance up to 2n, plus offset 1 to pair "
              "each operator with its number. A relative scheme clipped at K cannot order "
              "tokens further than K apart.";
  }

  int sequence_length(int n) const override { return 2 * n; }

  std::vector<int32_t> answer(const std::vector<int32_t>& tokens, int length) const override {
    check_tokens(tokens, length);
    const int n = length;
    for (int i = 0; i < n; ++i) {
      expect_below(tokens, 2 * i, kModulus);
      if (i + 1 < n)
        PELAB_CHECK(tokens[2 * i + 1] >= kPlus && tokens[2 * i + 1] <= kTimes,
                    "task 'modular_arithmetic': expected an operator at position {}, got '{}'",
                    2 * i + 1, info_.input_symbols[tokens[2 * i + 1]]);
    }
    expect_token(tokens, 2 * n - 1, kQuery);
    int value;
    if (precedence_) {
      int sum = 0, product = tokens[0], sign = 1;
      for (int i = 1; i < n; ++i) {
        const int32_t op = tokens[2 * i - 1], d = tokens[2 * i];
        if (op == kTimes) {
          product = product * d % kModulus;
        } else {
          sum += sign * product;
          sign = op == kPlus ? 1 : -1;
          product = d;
        }
      }
      value = sum + sign * product;
    } else {
      value = tokens[0];
      for (int i = 1; i < n; ++i) {
        const int32_t op = tokens[2 * i - 1], d = tokens[2 * i];
        value = op == kPlus ? value + d : op == kMinus ? value - d : value * d;
        value = (value % kModulus + kModulus) % kModulus;
      }
    }
    return label_at(2 * n, 2 * n - 1, (value % kModulus + kModulus) % kModulus);
  }

 protected:
  std::vector<int32_t> draw(Generator& rng, int length) const override {
    std::vector<int32_t> tokens;
    tokens.reserve(2 * length);
    for (int i = 0; i < length; ++i) {
      if (i > 0) tokens.push_back(static_cast<int32_t>(rng.uniform_int(kPlus, kTimes)));
      tokens.push_back(static_cast<int32_t>(rng.uniform_int(0, kModulus - 1)));
    }
    tokens.push_back(kQuery);
    return tokens;
  }

 private:
  bool precedence_;
};

}  // namespace

TaskDef modular_arithmetic_task_def() {
  return {"modular_arithmetic",
          {integer_key("precedence", 1, 0, 1,
                       "1: '*' before '+' and '-' (usual precedence); 0: strictly left to right")},
          [](const TaskParams& p) -> std::unique_ptr<Task> {
            return std::make_unique<ModularArithmeticTask>(param_int(p, "precedence") != 0);
          }};
}

}  // namespace pelab::tasks
