// odds_first (Deletang et al. 2022): the symbols at odd positions, then those at even ones.
#include "data/task_base.h"

namespace pelab::tasks {

TaskDef odds_first_task_def() {
  return {"odds_first", {symbols_param()}, [](const TaskParams& p) -> std::unique_ptr<Task> {
            return std::make_unique<AppendedQueriesTask>(
                "odds_first", param_int(p, "symbols"), [](int n) { return n; }, "n",
                [](const std::vector<int32_t>& x) {
                  std::vector<int32_t> y;
                  for (size_t i = 0; i < x.size(); i += 2) y.push_back(x[i]);  // x_1, x_3, ...
                  for (size_t i = 1; i < x.size(); i += 2) y.push_back(x[i]);  // x_2, x_4, ...
                  return y;
                },
                "x_1 x_3 x_5 .. then x_2 x_4 x_6 .. (1-based odd positions first)",
                "Query j (token n+1+j, 0-based) reads token 2j for j < ceil(n/2), else token "
                "2(j - ceil(n/2)) + 1: position arithmetic (doubling an index measured from the "
                "separator), with offsets that differ per query and grow with n. Needs absolute "
                "positions fine enough to compute 2j plus the separator's position, or relative "
                "offsets up to 2n; a relative scheme clipped at K fails once offsets exceed K.",
                "pelab's own variant of Delétang et al. 2023 (Neural Networks and the Chomsky "
                "Hierarchy)'s odds_first, in the order of their docstring (a separator, 8 symbols "
                "by default); their code's order, exactly, is odds_first_deletang");
          }};
}

}  // namespace pelab::tasks
