// sort: output the input symbols in ascending order.
#include <algorithm>

#include "data/task_base.h"

namespace pelab::tasks {

TaskDef sort_task_def() {
  return {"sort", {symbols_param()}, [](const TaskParams& p) -> std::unique_ptr<Task> {
            return std::make_unique<AppendedQueriesTask>(
                "sort", param_int(p, "symbols"), [](int n) { return n; }, "n",
                [](const std::vector<int32_t>& x) {
                  std::vector<int32_t> y = x;
                  std::sort(y.begin(), y.end());
                  return y;
                },
                "the input symbols in ascending order",
                "The input is a bag: its order does not matter, only counts per symbol. Query "
                "j (token n+1+j, 0-based) must emit the j-th smallest symbol, so it needs its "
                "own rank j = p - (n+1) after the separator: absolute positions plus the "
                "separator's position, or relative offsets from the separator up to n (a "
                "relative scheme clipped at K cannot tell queries past the K-th apart). No "
                "offset to a source token is needed.",
                "pelab's own variant of Delétang et al. 2023 (Neural Networks and the Chomsky "
                "Hierarchy)'s bucket_sort (a separator, 8 symbols by default); theirs exactly is "
                "bucket_sort");
          }};
}

}  // namespace pelab::tasks
