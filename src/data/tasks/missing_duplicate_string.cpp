// missing_duplicate_string (Delétang et al. 2023, tasks/cs/missing_duplicate_string.py): a
// binary word written twice with one bit replaced by a placeholder; predict that bit. pelab's
// `missing_duplicate` is the same idea at problem size = word length, over 8 symbols.
//
// Their length is the whole input: the word has floor(n/2) bits, and an odd n ends with their
// padding token. n = 1 has no word at all; their code then fixes the input to "1" and the
// label to 1 ("arbitrarily", says their comment), and so does this task.
#include "data/task_base.h"

namespace pelab::tasks {
namespace {

constexpr int32_t kPlaceholder = 2, kPad = 3;  // after the bits 0 and 1, as their ids

class MissingDuplicateStringTask : public BlankAnswerTask {
 public:
  MissingDuplicateStringTask()
      : BlankAnswerTask(
            "missing_duplicate_string", TaskLayout::Classification, {"0", "1", "_", "pad"},
            {"0", "1"},
            "Classification. Input: n tokens: a word w of floor(n/2) bits drawn uniformly, "
            "written twice (w w), one of those 2 floor(n/2) tokens (uniform) replaced by the "
            "placeholder '_', then 'pad' when n is odd; n = 1 is the fixed input '1' with label "
            "1, as their generator has it. Then one blank token '?'. Target: the replaced bit. "
            "Scored: the blank only (the last token); every other target is kIgnore.",
            "The placeholder at token b has its twin at token b+m or b-m, m = floor(n/2) (the "
            "same place in the other copy): an offset of exactly m, which grows with n. Needs "
            "relative offsets of exactly m (a relative scheme clipped below m cannot represent "
            "it), or absolute positions plus m (half the blank's position, rounded down); the "
            "blank itself finds the placeholder by content.") {
    info_.source = deletang_source("tasks/cs/missing_duplicate_string.py");
  }

 protected:
  int output_length(int /*n*/) const override { return 1; }

  std::vector<int32_t> draw_input(Generator& rng, int n) const override {
    if (n == 1) return {1};
    const int m = n / 2;
    std::vector<int32_t> input = random_ids(rng, m, 2);
    input.insert(input.end(), input.begin(), input.end());
    input[rng.uniform_int(0, 2 * m - 1)] = kPlaceholder;
    if (n % 2 == 1) input.push_back(kPad);
    return input;
  }

  std::vector<int32_t> solve(const std::vector<int32_t>& input, int n) const override {
    if (n == 1) {
      PELAB_CHECK(input[0] == 1, "task 'missing_duplicate_string': size 1 has the input '1'");
      return {1};
    }
    const int m = n / 2;
    PELAB_CHECK(n % 2 == 0 || input[n - 1] == kPad,
                "task 'missing_duplicate_string': an odd size ends with 'pad'");
    int placeholder = -1;
    for (int i = 0; i < 2 * m; ++i) {
      PELAB_CHECK(input[i] != kPad, "task 'missing_duplicate_string': 'pad' at position {}", i);
      if (input[i] != kPlaceholder) continue;
      PELAB_CHECK(placeholder < 0,
                  "task 'missing_duplicate_string': placeholders at {} and {}; expected one",
                  placeholder, i);
      placeholder = i;
    }
    PELAB_CHECK(placeholder >= 0, "task 'missing_duplicate_string': no placeholder '_'");
    for (int i = 0; i < m; ++i)
      PELAB_CHECK(input[i] == input[i + m] || i == placeholder || i + m == placeholder,
                  "task 'missing_duplicate_string': the copies differ at positions {} and {}", i,
                  i + m);
    return {input[(placeholder + m) % (2 * m)]};
  }
};

}  // namespace

TaskDef missing_duplicate_string_task_def() {
  return {"missing_duplicate_string", {}, [](const TaskParams&) -> std::unique_ptr<Task> {
            return std::make_unique<MissingDuplicateStringTask>();
          }};
}

}  // namespace pelab::tasks
