// binary_addition_deletang: Delétang et al. 2023's binary_addition (tasks/cs/binary_addition.py)
// in their layout. The name `binary_addition` is pelab's own variant (two n-bit operands with
// '+' and '=', recorded results), so theirs takes a suffix.
//
// Their size n counts the whole input, '+' included, and splits it at random between the
// operands (see draw_operands). Sizes 1 and 2 have no room for "a+b": their code then draws a
// number uniform in [0, 2^n - 2] (numpy's exclusive upper bound: n = 1 is always 0) written
// in n bits, with that number as the answer.
#include "data/task_base.h"
#include "data/tasks/binary_numbers.h"

namespace pelab::tasks {
namespace {

constexpr int32_t kPlus = 2;        // input id, after the bits 0 and 1
constexpr int32_t kTerminator = 2;  // output id, after the bits 0 and 1

class BinaryAdditionDeletangTask : public BlankAnswerTask {
 public:
  BinaryAdditionDeletangTask()
      : BlankAnswerTask(
            "binary_addition_deletang", TaskLayout::AppendedQueries, {"0", "1", "+"},
            {"0", "1", kTerminatorSymbol},
            "Appended. Input: n tokens a '+' b, a and b least significant bit first, |a| "
            "uniform in [1, n-2] and |b| = n-1-|a|, each number uniform in [1, 2^|x| - 1] in "
            "exactly |x| bits (high zeros allowed); for n = 1, 2, n bits of a number uniform "
            "in [0, 2^n - 2] and no '+'. Then n+1 blank tokens '?' (no separator). Target: "
            "a+b least significant bit first without high zeros ('0' for zero), then the "
            "terminator '$'. Scored: the blanks up to and including '$' (kIgnore on the input "
            "and on the blanks after '$', as their accuracy mask).",
            "Blank j needs bit j of both operands: a_j at token j, b_j at token |a|+1+j, "
            "where |a| is where '+' falls, different in every example; plus the carry into "
            "bit j, which depends on all lower bits in order. Needs offsets from '+' and from "
            "the first blank (relative offsets up to 2n, or absolute positions plus the "
            "positions of '+' and of the first blank); a relative scheme clipped below n "
            "cannot align the bits.") {
    info_.source = deletang_source("tasks/cs/binary_addition.py");
  }

 protected:
  int output_length(int n) const override { return n + 1; }

  std::vector<int32_t> draw_input(Generator& rng, int n) const override {
    if (n <= 2) return bits_of(static_cast<uint64_t>(rng.uniform_int(0, (1 << n) - 2)), n);
    return draw_operands(rng, n, kPlus);
  }

  std::vector<int32_t> solve(const std::vector<int32_t>& input, int n) const override {
    if (n <= 2) {
      for (int32_t bit : input)
        PELAB_CHECK(bit < 2, "task '{}': sizes 1 and 2 are a number, no '+'", info_.name);
      return terminated(minimal(input), kTerminator, output_length(n));
    }
    const auto [a, b] = split_operands(input, kPlus, info_.name);
    return terminated(minimal(add(a, b)), kTerminator, output_length(n));
  }
};

}  // namespace

TaskDef binary_addition_deletang_task_def() {
  return {"binary_addition_deletang", {}, [](const TaskParams&) -> std::unique_ptr<Task> {
            return std::make_unique<BinaryAdditionDeletangTask>();
          }};
}

}  // namespace pelab::tasks
