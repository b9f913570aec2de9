// binary_multiplication (Delétang et al. 2023, tasks/cs/binary_multiplication.py): the product
// of two binary numbers, least significant bit first, then their terminator.
//
// The input is binary_addition's with '*' for '+' (see draw_operands), but the answer has n
// slots, not n+1: a product of |a| + |b| = n-1 bits at most, then the terminator. Sizes 1 and
// 2 have no room for "a*b": their code draws n bits as binary_addition does but sets the
// answer to n-1 zeros whatever the bits ("arbitrarily", to keep the answer within n slots):
// n = 1 is the terminator alone, n = 2 is '0' and the terminator.
#include "data/task_base.h"
#include "data/tasks/binary_numbers.h"

namespace pelab::tasks {
namespace {

constexpr int32_t kTimes = 2;       // input id, after the bits 0 and 1
constexpr int32_t kTerminator = 2;  // output id, after the bits 0 and 1

class BinaryMultiplicationTask : public BlankAnswerTask {
 public:
  BinaryMultiplicationTask()
      : BlankAnswerTask(
            "binary_multiplication", TaskLayout::AppendedQueries, {"0", "1", "*"},
            {"0", "1", kTerminatorSymbol},
            "Appended. Input: n tokens a '*' b, a and b least significant bit first, |a| "
            "uniform in [1, n-2] and |b| = n-1-|a|, each number uniform in [1, 2^|x| - 1] in "
            "exactly |x| bits (high zeros allowed); for n = 1, 2, n bits of a number uniform "
            "in [0, 2^n - 2] and no '*'. Then n blank tokens '?' (no separator). Target: a*b "
            "least significant bit first without high zeros, then the terminator '$' (for n = "
            "1, 2: n-1 zeros, then '$', whatever the bits). Scored: the blanks up to and "
            "including '$' (kIgnore on the input and on the blanks after '$', as their "
            "accuracy mask).",
            "Bit j of the product sums a_i·b_(j-i) over every i, plus carries: each blank "
            "reads pairs of bits at offsets that vary with i, |a| (where '*' falls, different "
            "in every example) and j. Needs offsets from '*' and from the first blank at "
            "every distance up to 2n (relative offsets up to 2n, or absolute positions plus "
            "the positions of '*' and of the first blank).") {
    info_.source = deletang_source("tasks/cs/binary_multiplication.py");
  }

 protected:
  int output_length(int n) const override { return n; }

  std::vector<int32_t> draw_input(Generator& rng, int n) const override {
    if (n <= 2) return bits_of(static_cast<uint64_t>(rng.uniform_int(0, (1 << n) - 2)), n);
    return draw_operands(rng, n, kTimes);
  }

  std::vector<int32_t> solve(const std::vector<int32_t>& input, int n) const override {
    if (n <= 2) {
      for (int32_t bit : input)
        PELAB_CHECK(bit < 2, "task '{}': sizes 1 and 2 are a number, no '*'", info_.name);
      return terminated(std::vector<int32_t>(n - 1, 0), kTerminator, output_length(n));
    }
    const auto [a, b] = split_operands(input, kTimes, info_.name);
    return terminated(minimal(multiply(a, b)), kTerminator, output_length(n));
  }
};

}  // namespace

TaskDef binary_multiplication_task_def() {
  return {"binary_multiplication", {}, [](const TaskParams&) -> std::unique_ptr<Task> {
            return std::make_unique<BinaryMultiplicationTask>();
          }};
}

}  // namespace pelab::tasks
