// odds_first_deletang: Delétang et al. 2023's odds_first (tasks/cs/odds_first.py) in their
// layout. The name `odds_first` is pelab's own variant (a separator, 8 symbols, recorded
// results), so theirs takes a suffix.
//
// Their docstring says s_1 s_3 s_5 .. come first, but their code concatenates x[1::2] then
// x[::2]: 0-based odd indices first, i.e. s_2 s_4 .. then s_1 s_3 .. in 1-based terms (their
// own example, 00110101 -> 0100 0111, follows the docstring, not the code). The data the
// paper trained on came from the code, so this task follows the code.
#include "data/task_base.h"

namespace pelab::tasks {

TaskDef odds_first_deletang_task_def() {
  return {
      "odds_first_deletang", {symbols_param(2)}, [](const TaskParams& p) -> std::unique_ptr<Task> {
        return std::make_unique<BlankStringTask>(
            "odds_first_deletang", param_int(p, "symbols"), [](int n) { return n; }, "n",
            [](const std::vector<int32_t>& x) {
              std::vector<int32_t> y;
              for (size_t i = 1; i < x.size(); i += 2) y.push_back(x[i]);  // x_2, x_4, ...
              for (size_t i = 0; i < x.size(); i += 2) y.push_back(x[i]);  // x_1, x_3, ...
              return y;
            },
            "x_2 x_4 x_6 .. then x_1 x_3 x_5 .. (1-based even positions first, as their "
            "code orders them: x[1::2] then x[::2])",
            "tasks/cs/odds_first.py",
            "Blank j (token n+j, 0-based) reads token 2j+1 for j < floor(n/2), else token "
            "2(j - floor(n/2)): position arithmetic (doubling an index counted from where "
            "the blanks begin), with offsets that differ per blank and grow with n. Needs "
            "absolute positions fine enough to compute 2j plus n, or relative offsets up to "
            "2n; a relative scheme clipped at K fails once offsets exceed K.");
      }};
}

}  // namespace pelab::tasks
