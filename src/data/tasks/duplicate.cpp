// duplicate: output the input twice after a separator.
#include "data/task_base.h"

namespace pelab::tasks {

TaskDef duplicate_task_def() {
  return {"duplicate", {symbols_param()}, [](const TaskParams& p) -> std::unique_ptr<Task> {
            return std::make_unique<AppendedQueriesTask>(
                "duplicate", param_int(p, "symbols"), [](int n) { return 2 * n; }, "2n",
                [](const std::vector<int32_t>& x) {
                  std::vector<int32_t> y = x;
                  y.insert(y.end(), x.begin(), x.end());
                  return y;
                },
                "x_1..x_n x_1..x_n (the input twice)",
                "Query j (token n+1+j, 0-based) reads token j mod n: offset n+1 for the first "
                "copy, 2n+1 for the second, both growing with n. Needs relative offsets up to "
                "2n+1, or absolute positions plus the separator's position (and n, to wrap into "
                "the second copy); a relative scheme clipped below n+1 cannot represent it.",
                "pelab's own variant of Delétang et al. 2023 (Neural Networks and the Chomsky "
                "Hierarchy)'s duplicate_string (a separator, 8 symbols by default); theirs exactly "
                "is duplicate_string");
          }};
}

}  // namespace pelab::tasks
