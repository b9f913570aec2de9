// even_pairs_deletang: Delétang et al. 2023's even_pairs (tasks/regular/even_pairs.py). Their
// layout is pelab's classification layout already (n symbols, then one blank read for the
// label, which is the '?' here), but their classes are the other way round from pelab's
// `even_pairs` (class 0 is an even number of unequal neighbours, pelab's 'true' is class 1),
// and they draw strings of length 1, which have no pairs and class 0.
#include "data/task_base.h"

namespace pelab::tasks {

TaskDef even_pairs_deletang_task_def() {
  return {"even_pairs_deletang", {}, [](const TaskParams&) -> std::unique_ptr<Task> {
            return std::make_unique<StringClassificationTask>(
                "even_pairs_deletang", std::vector<std::string>{"0", "1"},
                std::vector<std::string>{"even", "odd"},
                [](const std::vector<int32_t>& x) {
                  int32_t unequal = 0;
                  for (size_t i = 0; i + 1 < x.size(); ++i) unequal ^= x[i] != x[i + 1];
                  return unequal;  // 0 = even, 1 = odd
                },
                "'even' (class 0) when the number of unequal neighbours (\"01\" and \"10\" "
                "pairs) is even, equivalently when the first symbol equals the last, else "
                "'odd' (class 1); the '?' is their blank.",
                "Needs to find the first and the last symbol: the last is at relative offset 1 "
                "from the blank, the first at absolute position 0 (relative offset n from the "
                "blank, growing with n). Absolute schemes mark position 0 directly; a relative "
                "scheme clipped below n cannot single out the first token, and a bidirectional "
                "encoder with no position at all cannot either. Counting unequal pairs instead "
                "needs offset 1 between neighbours.",
                "Delétang et al. 2023 (Neural Networks and the Chomsky Hierarchy), "
                "tasks/regular/even_pairs.py, as their generator draws it",
                1);
          }};
}

}  // namespace pelab::tasks
