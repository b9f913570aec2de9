// copy: output the input again after a separator.
#include "data/task_base.h"

namespace pelab::tasks {

TaskDef copy_task_def() {
  return {"copy", {symbols_param()}, [](const TaskParams& p) -> std::unique_ptr<Task> {
            return std::make_unique<AppendedQueriesTask>(
                "copy", param_int(p, "symbols"), [](int n) { return n; }, "n",
                [](const std::vector<int32_t>& x) { return x; }, "x_1..x_n (the input again)",
                "Query j (token n+1+j, 0-based) reads x_j (token j): the offset n+1 is the same "
                "for every query but grows with n. Needs relative offsets up to 2n, or absolute "
                "positions plus the separator's position (j = p - (n+1)); a relative scheme "
                "clipped below n+1 cannot represent it, and an absolute scheme must cover "
                "positions up to 2n, beyond those seen when training on shorter sequences.",
                "pelab's own, in its appended layout; with task.layout: lm, the copy setting of "
                "Kazemnejad et al. 2023");
          }};
}

}  // namespace pelab::tasks
