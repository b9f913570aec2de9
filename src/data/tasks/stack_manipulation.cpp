// stack_manipulation (Delétang et al. 2023, tasks/dcf/stack_manipulation.py): a stack of bits
// given bottom to top, then POP / PUSH 0 / PUSH 1 actions; output the final stack top to
// bottom, then their terminator.
//
// Their size n counts the whole input: the stack has k bits, k uniform in [1, n-1], and the
// n-k actions are each uniform over the three; n = 1 is a single bit and no action. A POP on
// an empty stack does nothing. The answer has n+1 slots: the final stack (at most n bits), the
// terminator, then padding that their accuracy mask leaves out (kIgnore here).
#include "data/task_base.h"

namespace pelab::tasks {
namespace {

constexpr int32_t kPop = 2, kPush0 = 3, kPush1 = 4;  // their ids, after the bits 0 and 1
constexpr int32_t kTerminator = 2;                   // output id, after the bits 0 and 1

class StackManipulationTask : public BlankAnswerTask {
 public:
  StackManipulationTask()
      : BlankAnswerTask(
            "stack_manipulation", TaskLayout::AppendedQueries, {"0", "1", "pop", "push0", "push1"},
            {"0", "1", kTerminatorSymbol},
            "Appended. Input: n tokens: a stack of k bits given bottom to top, k uniform in "
            "[1, n-1], then n-k actions uniform over {pop, push0, push1} (n = 1: one bit, no "
            "action), then n+1 blank tokens '?' (no separator). Target: the stack after the "
            "actions, top to bottom (a pop on an empty stack does nothing), then the "
            "terminator '$'. Scored: the blanks up to and including '$' (kIgnore on the input "
            "and on the blanks after '$', as their accuracy mask).",
            "Blank j holds the j-th element from the top of the final stack, whose position "
            "in the input depends on every action after it (each pop uncovers an element "
            "pushed earlier, at any distance): the model must order all tokens at offsets up "
            "to 2n and count from where the blanks begin. A relative scheme clipped at K "
            "cannot order tokens more than K apart; absolute schemes need positions up to 2n "
            "plus n.") {
    info_.source = deletang_source("tasks/dcf/stack_manipulation.py");
  }

 protected:
  int output_length(int n) const override { return n + 1; }

  std::vector<int32_t> draw_input(Generator& rng, int n) const override {
    if (n == 1) return random_ids(rng, 1, 2);
    const int k = static_cast<int>(rng.uniform_int(1, n - 1));
    std::vector<int32_t> input = random_ids(rng, k, 2);
    for (int i = k; i < n; ++i)
      input.push_back(static_cast<int32_t>(rng.uniform_int(kPop, kPush1)));
    return input;
  }

  std::vector<int32_t> solve(const std::vector<int32_t>& input, int n) const override {
    int k = 0;  // the initial stack: the leading bits
    while (k < n && input[k] < 2) ++k;
    PELAB_CHECK(k >= 1, "task 'stack_manipulation': the input starts with an action");
    std::vector<int32_t> stack(input.begin(), input.begin() + k);
    for (int i = k; i < n; ++i) {
      PELAB_CHECK(input[i] >= kPop,
                  "task 'stack_manipulation': a bit at position {} after an "
                  "action",
                  i);
      if (input[i] == kPop) {
        if (!stack.empty()) stack.pop_back();
      } else {
        stack.push_back(input[i] - kPush0);
      }
    }
    return terminated({stack.rbegin(), stack.rend()}, kTerminator, output_length(n));
  }
};

}  // namespace

TaskDef stack_manipulation_task_def() {
  return {"stack_manipulation", {}, [](const TaskParams&) -> std::unique_ptr<Task> {
            return std::make_unique<StackManipulationTask>();
          }};
}

}  // namespace pelab::tasks
