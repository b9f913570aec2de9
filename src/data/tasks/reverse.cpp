// reverse: output the input backwards after a separator.
#include "data/task_base.h"

namespace pelab::tasks {

TaskDef reverse_task_def() {
  return {"reverse", {symbols_param()}, [](const TaskParams& p) -> std::unique_ptr<Task> {
            return std::make_unique<AppendedQueriesTask>(
                "reverse", param_int(p, "symbols"), [](int n) { return n; }, "n",
                [](const std::vector<int32_t>& x) {
                  return std::vector<int32_t>(x.rbegin(), x.rend());
                },
                "x_n..x_1 (the input backwards)",
                "Query j (token n+1+j, 0-based) reads token n-1-j: the offset 2j+2 is "
                "different for every query and ranges over 2..2n; source and query mirror "
                "around the separator (their positions sum to 2n). Needs absolute positions "
                "plus the separator's position, or relative offsets up to 2n; a relative scheme "
                "clipped at K cannot serve queries whose offset exceeds K.",
                "pelab's own variant of Delétang et al. 2023 (Neural Networks and the Chomsky "
                "Hierarchy)'s reverse_string (a separator, 8 symbols by default); theirs exactly "
                "is reverse_string");
          }};
}

}  // namespace pelab::tasks
