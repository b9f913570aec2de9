// even_pairs (Deletang et al. 2022): are there as many "ab" as "ba" pairs?
#include "data/task_base.h"

namespace pelab::tasks {

TaskDef even_pairs_task_def() {
  return {"even_pairs", {}, [](const TaskParams&) -> std::unique_ptr<Task> {
            return std::make_unique<StringClassificationTask>(
                "even_pairs", std::vector<std::string>{"a", "b"},
                std::vector<std::string>{"false", "true"},
                [](const std::vector<int32_t>& x) {
                  int ab = 0, ba = 0;
                  for (size_t i = 0; i + 1 < x.size(); ++i) {
                    ab += x[i] == 0 && x[i + 1] == 1;
                    ba += x[i] == 1 && x[i + 1] == 0;
                  }
                  return static_cast<int32_t>(ab == ba);
                },
                "'true' when the string has as many \"ab\" as \"ba\" pairs (equivalently, the "
                "total number of such pairs is even; equivalently, the first symbol equals the "
                "last), else 'false'",
                "Needs to find the first and the last symbol: the last is at relative offset 1 "
                "from the query, the first at absolute position 0 (relative offset n from the "
                "query, growing with n). Absolute schemes mark position 0 directly; a relative "
                "scheme clipped below n cannot single out the first token, and a bidirectional "
                "encoder with no position at all cannot either. Counting pairs instead needs "
                "offset 1 between neighbours.",
                "pelab's own variant of Delétang et al. 2023 (Neural Networks and the Chomsky "
                "Hierarchy)'s even_pairs (its classes the other way round, sizes from 2); theirs "
                "exactly is even_pairs_deletang",
                2);
          }};
}

}  // namespace pelab::tasks
