// shift: y_i = x_{i-s}; a blank class where i < s.
#include "data/task_base.h"

namespace pelab::tasks {
namespace {

class ShiftTask : public TaskBase {
 public:
  ShiftTask(int symbols, int shift) : symbols_(symbols), shift_(shift) {
    info_.name = "shift";
    info_.source = "pelab's own";
    info_.layout = TaskLayout::Tagging;
    info_.input_symbols = numbered_symbols(symbols);
    info_.output_symbols = numbered_symbols(symbols);
    info_.output_symbols.push_back("_");  // the blank class, id symbols
    info_.description = fmt::format(
        "Tagging. Input: n symbols x_1..x_n from {{0..{}}}. Target at position i: x_(i-{}), "
        "or the blank class '_' where i <= {} (nothing that far back). Scored: every "
        "position.",
        symbols - 1, shift, shift);
    info_.position_need = fmt::format(
        "Each position reads the token exactly s = {} before it: a fixed relative offset. "
        "Needs absolute or relative offsets of exactly s; a relative scheme clipped at k <= s "
        "cannot represent it (offset k shares its row with every farther one). Positions i <= s "
        "must also know there is no token s back "
        "(absolute position, or the absence of a key at offset s).",
        shift);
  }

  int sequence_length(int n) const override { return n; }
  int64_t answer_offset() const override { return shift_; }

  std::vector<int32_t> answer(const std::vector<int32_t>& tokens, int length) const override {
    check_tokens(tokens, length);
    std::vector<int32_t> targets(length);
    for (int i = 0; i < length; ++i) targets[i] = i >= shift_ ? tokens[i - shift_] : symbols_;
    return targets;
  }

 protected:
  std::vector<int32_t> draw(Generator& rng, int length) const override {
    return random_ids(rng, length, symbols_);
  }

 private:
  int symbols_;
  int shift_;
};

}  // namespace

TaskDef shift_task_def() {
  return {"shift",
          {symbols_param(), integer_key("shift", 2, 1, 4096, "offset s: y_i = x_(i-s)")},
          [](const TaskParams& p) -> std::unique_ptr<Task> {
            return std::make_unique<ShiftTask>(param_int(p, "symbols"), param_int(p, "shift"));
          }};
}

}  // namespace pelab::tasks
