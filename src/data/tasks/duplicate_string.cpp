// duplicate_string (Delétang et al. 2023, tasks/cs/duplicate_string.py): the input twice, in
// their layout (binary by default, blanks instead of a separator). pelab's `duplicate` is the
// same transduction laid out with a separator over 8 symbols.
#include "data/task_base.h"

namespace pelab::tasks {

TaskDef duplicate_string_task_def() {
  return {"duplicate_string", {symbols_param(2)}, [](const TaskParams& p) -> std::unique_ptr<Task> {
            return std::make_unique<BlankStringTask>(
                "duplicate_string", param_int(p, "symbols"), [](int n) { return 2 * n; }, "2n",
                [](const std::vector<int32_t>& x) {
                  std::vector<int32_t> y = x;
                  y.insert(y.end(), x.begin(), x.end());
                  return y;
                },
                "x_1..x_n x_1..x_n (the input twice, with nothing between the copies)",
                "tasks/cs/duplicate_string.py",
                "Blank j (token n+j, 0-based) reads token j mod n: offset n for the first copy, "
                "2n for the second, both growing with n; the sequence is 3n tokens. Needs "
                "relative offsets of exactly n and 2n, or absolute positions plus n (where the "
                "blanks begin); a relative scheme clipped below n cannot represent it.");
          }};
}

}  // namespace pelab::tasks
