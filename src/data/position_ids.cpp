// Positions from the task: digit runs (see pelab/data/position_ids.h).
#include "pelab/data/position_ids.h"

#include "pelab/core/error.h"

namespace pelab {

DigitRuns digit_runs_of(const TaskInfo& info, int64_t offset_max) {
  DigitRuns runs;
  runs.offset_max = offset_max;
  for (const std::string& symbol : info.input_symbols)
    runs.is_digit.push_back(symbol.size() == 1 && symbol[0] >= '0' && symbol[0] <= '9');
  return runs;
}

std::vector<int32_t> digit_run_positions(const std::vector<int32_t>& tokens,
                                         const std::vector<bool>& is_digit, int64_t offset) {
  std::vector<int32_t> positions(tokens.size(), 0);
  int32_t index = 0;  // within the current run; 0 outside one
  for (size_t t = 0; t < tokens.size(); ++t) {
    const int32_t id = tokens[t];
    PELAB_ASSERT(id >= 0 && static_cast<size_t>(id) < is_digit.size());
    index = is_digit[id] ? index + 1 : 0;
    if (index > 0) positions[t] = static_cast<int32_t>(index + offset);
  }
  return positions;
}

}  // namespace pelab
