// bucket_sort (Delétang et al. 2023, tasks/cs/bucket_sort.py): the input sorted, over their
// alphabet of 5 symbols, in their layout.
#include <algorithm>

#include "data/task_base.h"

namespace pelab::tasks {

TaskDef bucket_sort_task_def() {
  return {"bucket_sort", {symbols_param(5)}, [](const TaskParams& p) -> std::unique_ptr<Task> {
            return std::make_unique<BlankStringTask>(
                "bucket_sort", param_int(p, "symbols"), [](int n) { return n; }, "n",
                [](const std::vector<int32_t>& x) {
                  std::vector<int32_t> y = x;
                  std::sort(y.begin(), y.end());
                  return y;
                },
                "the input symbols in ascending order", "tasks/cs/bucket_sort.py",
                "The input is a bag: its order does not matter, only the count of each symbol. "
                "Blank j (token n+j) must emit the j-th smallest symbol, so it needs its own "
                "rank j = p - n among the blanks: absolute positions plus n (where the blanks "
                "begin), or relative offsets up to n from the first blank (a relative scheme "
                "clipped at K cannot tell blanks past the K-th apart). No offset to a source "
                "token is needed.");
          }};
}

}  // namespace pelab::tasks
