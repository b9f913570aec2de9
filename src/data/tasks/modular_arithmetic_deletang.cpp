// modular_arithmetic_deletang: Delétang et al. 2023's modular_arithmetic (tasks/regular/
// modular_arithmetic.py): a flat expression over {0..4} and {+, -, *}, evaluated mod 5 with
// '*' before '+' and '-'. The name `modular_arithmetic` is pelab's own variant (its size n
// counts numbers, recorded results), so theirs takes a suffix.
//
// Their size counts tokens and must be odd: an even n is lowered to n - 1 ("we force it to be
// by subtracting one"), so sizes 2k and 2k - 1 draw from the same expressions. Their vocabulary has
// a fifth operator '_' (a blank their evaluator reads as '+' or 0) that the generator never
// draws; it is kept so that the ids and the input width are theirs.
//
// Their evaluator multiplies in int32 without reducing mod 5, so a product beyond 2^31 would
// wrap before the final mod; that takes at least 15 '*' in a row (16 factors of 4 reach
// 2^32), below 1e-5 per example at their longest size, 100. This task gives the true value.
//
// Their constructor keeps the operators as a Python generator expression, which the first
// trace of their jitted sample_batch uses up; a later size, traced anew, would find no
// operator to draw. This task draws from all three at every size, as their paper describes.
#include "data/task_base.h"

namespace pelab::tasks {
namespace {

constexpr int kModulus = 5;
constexpr int32_t kPlus = kModulus, kMinus = kModulus + 1, kTimes = kModulus + 2;

class ModularArithmeticDeletangTask : public BlankAnswerTask {
 public:
  ModularArithmeticDeletangTask()
      : BlankAnswerTask(
            "modular_arithmetic_deletang", TaskLayout::Classification,
            {"0", "1", "2", "3", "4", "+", "-", "*", "_"}, numbered_symbols(kModulus),
            "Classification. Input: an expression of m tokens, m = n for odd n and n - 1 for "
            "even n: numbers from {0..4} at even positions and operators from {+, -, *} "
            "between them, all drawn uniformly ('_' is in the vocabulary, never drawn), then "
            "one blank token '?'. Target: the value of the expression mod 5, with '*' before "
            "'+' and '-'. Scored: the blank only (the last token); every other target is "
            "kIgnore.",
            "Each operator binds the numbers at offsets -1 and +1, and products group runs "
            "joined by '*': local structure at exact offsets of 1 (any relative scheme that "
            "tells offset 1 from 2, or absolute positions, which must also tell even "
            "positions from odd ones). The signed products are then summed, which does not "
            "depend on their order; no long offset is needed.") {
    info_.source =
        deletang_source("tasks/regular/modular_arithmetic.py",
                        ", as their paper describes it: all three operators at every size (their "
                        "released constructor keeps them in a Python generator that the first size "
                        "uses up; Ruoss et al. 2023's copy keeps a list)");
  }

 protected:
  int input_length(int n) const override { return n % 2 == 1 ? n : n - 1; }
  int output_length(int /*n*/) const override { return 1; }

  std::vector<int32_t> draw_input(Generator& rng, int n) const override {
    std::vector<int32_t> input(input_length(n));
    for (size_t i = 0; i < input.size(); ++i)
      input[i] = static_cast<int32_t>(i % 2 == 0 ? rng.uniform_int(0, kModulus - 1)
                                                 : rng.uniform_int(kPlus, kTimes));
    return input;
  }

  std::vector<int32_t> solve(const std::vector<int32_t>& input, int /*n*/) const override {
    // The sum of signed products: `sign * product` is the term being multiplied out.
    int sum = 0, sign = 1, product = 1;
    for (size_t i = 0; i < input.size(); ++i) {
      const int32_t t = input[i];
      if (i % 2 == 0) {
        PELAB_CHECK(t < kModulus, "task '{}': expected a number at position {}, got '{}'",
                    info_.name, i, info_.input_symbols[t]);
        product = product * t % kModulus;
        continue;
      }
      PELAB_CHECK(t >= kPlus && t <= kTimes,
                  "task '{}': expected an operator at position {}, got '{}'", info_.name, i,
                  info_.input_symbols[t]);
      if (t == kTimes) continue;
      sum += sign * product;
      sign = t == kMinus ? -1 : 1;
      product = 1;
    }
    sum += sign * product;
    return {static_cast<int32_t>((sum % kModulus + kModulus) % kModulus)};
  }
};

}  // namespace

TaskDef modular_arithmetic_deletang_task_def() {
  return {"modular_arithmetic_deletang", {}, [](const TaskParams&) -> std::unique_ptr<Task> {
            return std::make_unique<ModularArithmeticDeletangTask>();
          }};
}

}  // namespace pelab::tasks
