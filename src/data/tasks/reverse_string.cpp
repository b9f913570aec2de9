// reverse_string (Delétang et al. 2023, tasks/dcf/reverse_string.py): the input backwards, in
// their layout (binary by default, blanks instead of a separator). pelab's `reverse` is the
// same transduction laid out with a separator over 8 symbols.
#include "data/task_base.h"

namespace pelab::tasks {

TaskDef reverse_string_task_def() {
  return {"reverse_string", {symbols_param(2)}, [](const TaskParams& p) -> std::unique_ptr<Task> {
            return std::make_unique<BlankStringTask>(
                "reverse_string", param_int(p, "symbols"), [](int n) { return n; }, "n",
                [](const std::vector<int32_t>& x) {
                  return std::vector<int32_t>(x.rbegin(), x.rend());
                },
                "x_n..x_1 (the input backwards)", "tasks/dcf/reverse_string.py",
                "Blank j (token n+j, 0-based) reads token n-1-j: the offset 2j+1 differs for "
                "every blank and ranges over 1..2n-1; source and blank mirror around the "
                "middle (their positions sum to 2n-1). With no separator the middle is known "
                "only from the length, so absolute schemes need n (from where the blanks "
                "begin), and relative ones need offsets up to 2n-1; a relative scheme clipped "
                "at K cannot serve blanks whose offset exceeds K.");
          }};
}

}  // namespace pelab::tasks
