// cycle_navigation (Deletang et al. 2022): the final position on a 5-cycle after a walk.
#include "data/task_base.h"

namespace pelab::tasks {

TaskDef cycle_navigation_task_def() {
  return {"cycle_navigation", {}, [](const TaskParams&) -> std::unique_ptr<Task> {
            return std::make_unique<StringClassificationTask>(
                "cycle_navigation", std::vector<std::string>{"-1", "0", "+1"}, numbered_symbols(5),
                [](const std::vector<int32_t>& x) {
                  int sum = 0;
                  for (int32_t move : x) sum += move - 1;  // ids 0, 1, 2 are moves -1, 0, +1
                  return static_cast<int32_t>(((sum % 5) + 5) % 5);
                },
                "the sum of the moves mod 5 (the position reached on a cycle of 5 starting at "
                "0), one of 0..4",
                "Nothing: the sum does not depend on the order of the moves, so the task is "
                "permutation invariant; position matters only by how much it disturbs "
                "content-based counting at unseen lengths. The count must be resolved exactly, "
                "mod 5.",
                "Delétang et al. 2023 (Neural Networks and the Chomsky Hierarchy), "
                "tasks/regular/cycle_navigation.py: theirs exactly (moves -1, 0, +1 as ids 0, 1, "
                "2, one blank read for the label, 5 classes, sizes from 1)");
          }};
}

}  // namespace pelab::tasks
