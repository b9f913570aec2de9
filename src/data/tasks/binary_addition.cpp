// binary_addition: the sum of two binary numbers, least significant bit first.
#include "data/task_base.h"

namespace pelab::tasks {
namespace {

constexpr int32_t kPlus = 2, kEquals = 3, kQuery = 4;  // after the bits "0" and "1"

class BinaryAdditionTask : public TaskBase {
 public:
  BinaryAdditionTask() {
    info_.name = "binary_addition";
    info_.source =
        "pelab's own (two n-bit operands, '+' and '='); Delétang et al. 2023 (Neural Networks and "
        "the Chomsky Hierarchy)'s is binary_addition_deletang";
    info_.layout = TaskLayout::AppendedQueries;
    info_.input_symbols = {"0", "1", "+", "=", "?"};
    info_.output_symbols = {"0", "1"};
    info_.description =
        "Appended. Input: two n-bit numbers a and b written least significant bit "
        "first (uniform random bits, leading zeros allowed), as a_0..a_(n-1) '+' b_0..b_(n-1) "
        "'=', then n+1 query tokens '?'. Target: the n+1 bits of a+b, least significant "
        "first, one per query token. Scored: the query tokens only (kIgnore on the operands "
        "and the '+' and '=').";
    info_.position_need =
        "Query j (token 2n+2+j) needs bit j of both operands, at offsets 2n+2 (a_j, token j) "
        "and n+1 (b_j, token n+1+j), both growing with n, plus the carry into bit j, which "
        "depends on all lower bits in order (a prefix computation). Needs relative offsets up "
        "to 2n+2 (a relative scheme clipped below n+1 cannot align the bits), or absolute "
        "positions plus the positions of '+' and '=' to turn token indices into bit indices.";
  }

  int sequence_length(int n) const override { return 3 * n + 3; }

  std::vector<int32_t> answer(const std::vector<int32_t>& tokens, int length) const override {
    check_tokens(tokens, length);
    const int n = length;
    for (int i = 0; i < n; ++i) {
      expect_below(tokens, i, 2);
      expect_below(tokens, n + 1 + i, 2);
    }
    expect_token(tokens, n, kPlus);
    expect_token(tokens, 2 * n + 1, kEquals);
    for (int j = 0; j <= n; ++j) expect_token(tokens, 2 * n + 2 + j, kQuery);
    std::vector<int32_t> targets(tokens.size(), kIgnore);
    int carry = 0;
    for (int j = 0; j <= n; ++j) {
      const int sum = (j < n ? tokens[j] + tokens[n + 1 + j] : 0) + carry;
      targets[2 * n + 2 + j] = sum & 1;
      carry = sum >> 1;
    }
    return targets;
  }

 protected:
  std::vector<int32_t> draw(Generator& rng, int length) const override {
    std::vector<int32_t> tokens = random_ids(rng, length, 2);
    tokens.push_back(kPlus);
    const std::vector<int32_t> b = random_ids(rng, length, 2);
    tokens.insert(tokens.end(), b.begin(), b.end());
    tokens.push_back(kEquals);
    tokens.resize(sequence_length(length), kQuery);
    return tokens;
  }
};

}  // namespace

TaskDef binary_addition_task_def() {
  return {"binary_addition", {}, [](const TaskParams&) -> std::unique_ptr<Task> {
            return std::make_unique<BinaryAdditionTask>();
          }};
}

}  // namespace pelab::tasks
