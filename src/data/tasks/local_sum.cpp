// local_sum: a binomially weighted sum of each position's neighbours, mod `symbols`.
#include "data/task_base.h"

namespace pelab::tasks {
namespace {

class LocalSumTask : public TaskBase {
 public:
  LocalSumTask(int symbols, int window) : symbols_(symbols), window_(window) {
    // Binomial weights C(2w, o + w) for o = -w..w, reduced mod `symbols`: (1, 2, 1) for w = 1.
    weights_.assign(2 * window + 1, 0);
    std::vector<int64_t> row = {1};
    for (int r = 1; r <= 2 * window; ++r) {
      std::vector<int64_t> next(r + 1, 1);
      for (int k = 1; k < r; ++k) next[k] = (row[k - 1] + row[k]) % symbols;
      row = next;
    }
    for (int k = 0; k <= 2 * window; ++k) weights_[k] = row[k] % symbols;
    info_.name = "local_sum";
    info_.source = "pelab's own";
    info_.layout = TaskLayout::Tagging;
    info_.input_symbols = numbered_symbols(symbols);
    info_.output_symbols = numbered_symbols(symbols);
    info_.description = fmt::format(
        "Tagging. Input: n symbols x_1..x_n from {{0..{}}}. Target at position i: "
        "sum over |o| <= w = {} of C(2w, o+w) * x_(i+o), mod {} (weights (1, 2, 1) for w = 1; "
        "neighbours outside the sequence count as 0). Scored: every position.",
        symbols - 1, window, symbols);
    info_.position_need = fmt::format(
        "Each position combines its neighbours at offsets -{0}..+{0}, weighted by |offset| "
        "(the weights are symmetric, so only the distance matters, not the side). Needs "
        "relative offsets up to w = {0} told apart exactly; a relative scheme clipped at k > w "
        "suffices, one clipped at k <= w cannot (offset k shares its row with every farther one). "
        "Absolute schemes must compute the differences. "
        "Nothing depends on n, so this is the locality baseline.",
        window);
  }

  int sequence_length(int n) const override { return n; }
  int64_t answer_offset() const override { return window_; }

  std::vector<int32_t> answer(const std::vector<int32_t>& tokens, int length) const override {
    check_tokens(tokens, length);
    std::vector<int32_t> targets(length);
    for (int i = 0; i < length; ++i) {
      int64_t sum = 0;
      for (int o = -window_; o <= window_; ++o) {
        const int j = i + o;
        if (j >= 0 && j < length) sum += weights_[o + window_] * tokens[j];
      }
      targets[i] = static_cast<int32_t>(sum % symbols_);
    }
    return targets;
  }

 protected:
  std::vector<int32_t> draw(Generator& rng, int length) const override {
    return random_ids(rng, length, symbols_);
  }

 private:
  int symbols_;
  int window_;
  std::vector<int64_t> weights_;
};

}  // namespace

TaskDef local_sum_task_def() {
  return {"local_sum",
          {symbols_param(),
           integer_key("window", 1, 1, 16, "half-width w: neighbours at offsets -w..w")},
          [](const TaskParams& p) -> std::unique_ptr<Task> {
            return std::make_unique<LocalSumTask>(param_int(p, "symbols"), param_int(p, "window"));
          }};
}

}  // namespace pelab::tasks
