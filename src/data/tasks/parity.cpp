// parity: is the number of 1s in a binary string even?
#include "data/task_base.h"

namespace pelab::tasks {

TaskDef parity_task_def() {
  return {"parity", {}, [](const TaskParams&) -> std::unique_ptr<Task> {
            return std::make_unique<StringClassificationTask>(
                "parity", std::vector<std::string>{"0", "1"},
                std::vector<std::string>{"even", "odd"},
                [](const std::vector<int32_t>& x) {
                  int32_t ones = 0;
                  for (int32_t b : x) ones ^= b;
                  return ones;  // 0 = even, 1 = odd
                },
                "'even' when the number of 1s is even, else 'odd'",
                "Nothing: the label depends only on the count of 1s, not on their order, so "
                "the task is permutation invariant and a scheme that carries no position at all "
                "can in principle solve it. Position only matters by how much it disturbs "
                "content-based counting at lengths not seen in training (e.g. absolute "
                "embeddings of unseen positions). Parity is hard for transformers regardless of "
                "the encoding: the count must be resolved exactly, mod 2.",
                "Delétang et al. 2023 (Neural Networks and the Chomsky Hierarchy), "
                "tasks/regular/parity_check.py: their parity_check exactly (alphabet and ids, one "
                "blank read for the label, classes 0 = even and 1 = odd, sizes from 1)");
          }};
}

}  // namespace pelab::tasks
