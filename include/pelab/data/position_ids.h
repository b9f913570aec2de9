// Positions from the task (`task.position_ids`): how a batch numbers its tokens when the
// numbering comes from what the tokens are rather than where they stand. With `digit_runs`
// (McLeish et al. 2024's Abacus), a token's position is its 1-based index within its run of
// consecutive digit tokens, and 0 for every other token: the digits of one significance in
// two reversed operands and their sum share a position, whatever the operands' widths.
//
// Every scheme reads these positions as it reads any (pelab/data/batch.h); with `learned`
// they index its table, which is the paper's Abacus embedding. In training an offset uniform
// in [0, task.position_offset_max] is added to every nonzero position of an example (their
// random k, so that the positions of long numbers are trained too); at evaluation there is
// none, as in their code, so a run evaluates its positions 1..n exactly.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pelab/data/task.h"

namespace pelab {

// task.position_ids: "index" (0..T-1, or positional.randomize's sample) or "digit_runs".
inline const std::vector<std::string> kPositionIds = {"index", "digit_runs"};
// The largest task.position_offset_max.
inline constexpr int64_t kMaxPositionOffset = 10000;

struct DigitRuns {
  std::vector<bool> is_digit;  // by input id: its symbol is one decimal digit
  int64_t offset_max = 0;      // 0: no offset (evaluation)
};

// The digit runs of a task: its input ids whose printable symbol is one of "0".."9"; none
// (every id false) for a task without digits.
DigitRuns digit_runs_of(const TaskInfo& info, int64_t offset_max);

// The positions of `tokens`: within each maximal run of digits 1, 2, ..., each plus `offset`;
// 0 for every other token.
std::vector<int32_t> digit_run_positions(const std::vector<int32_t>& tokens,
                                         const std::vector<bool>& is_digit, int64_t offset);

}  // namespace pelab
