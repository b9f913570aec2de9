// missing_duplicate (Deletang et al. 2022): w w with one symbol blanked; predict it.
#include "data/task_base.h"

namespace pelab::tasks {
namespace {

class MissingDuplicateTask : public TaskBase {
 public:
  explicit MissingDuplicateTask(int symbols) : symbols_(symbols) {
    info_.name = "missing_duplicate";
    info_.source =
        "pelab's own variant of Delétang et al. 2023 (Neural Networks and the Chomsky Hierarchy)'s "
        "missing_duplicate_string (n counts the word, 8 symbols by default); theirs exactly is "
        "missing_duplicate_string";
    info_.layout = TaskLayout::Classification;
    info_.input_symbols = numbered_symbols(symbols);
    info_.input_symbols.push_back("_");  // the blanked symbol, id symbols
    info_.input_symbols.push_back("?");  // the query, id symbols + 1
    info_.output_symbols = numbered_symbols(symbols);
    info_.description = fmt::format(
        "Classification. Input: a word w of n symbols from {{0..{}}} written twice (w w, 2n "
        "tokens) with one of the 2n tokens replaced by the blank '_', then one query token "
        "'?'. Target: the blanked symbol. Scored: the query token only (the last token); every "
        "other target is kIgnore.",
        symbols - 1);
    info_.position_need =
        "The blank at token b has its twin at token b+n or b-n (the same place in the other "
        "copy): an offset of exactly n, which grows with n. Needs relative offsets of exactly "
        "n (a relative scheme clipped below n cannot represent it), or absolute positions "
        "plus n (half the query's position 2n); the query itself finds the blank by content.";
  }

  int sequence_length(int n) const override { return 2 * n + 1; }

  std::vector<int32_t> answer(const std::vector<int32_t>& tokens, int length) const override {
    check_tokens(tokens, length);
    const int n = length;
    const int32_t blank = symbols_, query = symbols_ + 1;
    expect_token(tokens, 2 * n, query);
    int blanked = -1;
    for (int i = 0; i < 2 * n; ++i) {
      PELAB_CHECK(tokens[i] != query, "task 'missing_duplicate': '?' at position {}", i);
      if (tokens[i] != blank) continue;
      PELAB_CHECK(blanked < 0, "task 'missing_duplicate': blanks at {} and {}; expected one",
                  blanked, i);
      blanked = i;
    }
    PELAB_CHECK(blanked >= 0, "task 'missing_duplicate': no blank '_' in the input");
    for (int i = 0; i < n; ++i)
      PELAB_CHECK(i == blanked || i + n == blanked || tokens[i] == tokens[i + n],
                  "task 'missing_duplicate': the two copies differ at positions {} and {}", i,
                  i + n);
    return label_at(2 * n + 1, 2 * n, tokens[(blanked + n) % (2 * n)]);
  }

 protected:
  std::vector<int32_t> draw(Generator& rng, int length) const override {
    const std::vector<int32_t> w = random_ids(rng, length, symbols_);
    std::vector<int32_t> tokens = w;
    tokens.insert(tokens.end(), w.begin(), w.end());
    tokens[rng.uniform_int(0, 2 * length - 1)] = symbols_;
    tokens.push_back(symbols_ + 1);
    return tokens;
  }

 private:
  int symbols_;
};

}  // namespace

TaskDef missing_duplicate_task_def() {
  return {"missing_duplicate", {symbols_param()}, [](const TaskParams& p) -> std::unique_ptr<Task> {
            return std::make_unique<MissingDuplicateTask>(param_int(p, "symbols"));
          }};
}

}  // namespace pelab::tasks
