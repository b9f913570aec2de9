// compute_sqrt (Delétang et al. 2023, tasks/cs/compute_sqrt.py): the floor of the square root
// of a binary number, both most significant bit first.
//
// The number is uniform in [1, 2^n - 1] written in exactly n bits, so leading zeros are
// common (half the numbers are below 2^(n-1)); the root is written in exactly ceil(n/2) bits,
// with leading zeros too. There is no terminator: every blank is scored.
#include <algorithm>

#include "data/task_base.h"
#include "data/tasks/binary_numbers.h"

namespace pelab::tasks {
namespace {

class ComputeSqrtTask : public BlankAnswerTask {
 public:
  ComputeSqrtTask()
      : BlankAnswerTask(
            "compute_sqrt", TaskLayout::AppendedQueries, {"0", "1"}, {"0", "1"},
            "Appended. Input: a number uniform in [1, 2^n - 1] in exactly n bits, most "
            "significant first (leading zeros allowed), then ceil(n/2) blank tokens '?' (no "
            "separator). Target: floor(sqrt(x)) in exactly ceil(n/2) bits, most significant "
            "first, one bit per blank. Scored: the blanks only (kIgnore on the input).",
            "Bit j of the root (most significant first) is fixed by the input's first "
            "2j+2-(n mod 2) bits, all of them: blank j (token n+j) reads a prefix of the input "
            "whose end advances two tokens per blank, so it needs its rank j among the blanks "
            "and offsets into the input up to n+j. Absolute schemes need positions plus n "
            "(where the blanks begin); relative ones need offsets up to 3n/2, and a relative "
            "scheme clipped at K cannot reach the input's start from blanks more than K past "
            "it.") {
    info_.source = deletang_source("tasks/cs/compute_sqrt.py");
  }

 protected:
  int output_length(int n) const override { return (n + 1) / 2; }

  std::vector<int32_t> draw_input(Generator& rng, int n) const override {
    Bits x = random_positive(rng, n);
    std::reverse(x.begin(), x.end());  // most significant first
    return x;
  }

  std::vector<int32_t> solve(const std::vector<int32_t>& input, int n) const override {
    const Bits x(input.rbegin(), input.rend());
    return big_endian(integer_sqrt(x), output_length(n));
  }
};

}  // namespace

TaskDef compute_sqrt_task_def() {
  return {"compute_sqrt", {}, [](const TaskParams&) -> std::unique_ptr<Task> {
            return std::make_unique<ComputeSqrtTask>();
          }};
}

}  // namespace pelab::tasks
