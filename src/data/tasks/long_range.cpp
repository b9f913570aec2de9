// long_range: copy the token a controlled distance D before a marker.
#include "data/task_base.h"

namespace pelab::tasks {
namespace {

class LongRangeTask : public TaskBase {
 public:
  LongRangeTask(int symbols, int distance) : symbols_(symbols), distance_(distance) {
    info_.name = "long_range";
    info_.source = "pelab's own";
    info_.layout = TaskLayout::Classification;
    info_.input_symbols = numbered_symbols(symbols);
    info_.input_symbols.push_back("#");  // the marker, id symbols
    info_.output_symbols = numbered_symbols(symbols);
    const std::string layout =
        distance > 0
            ? fmt::format(
                  "The distance is D = {0} for every example. Input: n symbols from {{0..{1}}} "
                  "drawn uniformly, with the marker '#' inserted after the p-th of them, p "
                  "uniform in [D, n] (n+1 tokens; n >= D).",
                  distance, symbols - 1)
            : fmt::format(
                  "The distance is D = n, the problem size, so bucketing by length is bucketing "
                  "by distance. Input: 2n symbols from {{0..{0}}} drawn uniformly, with the "
                  "marker '#' inserted after the p-th of them, p uniform in [n, 2n] (2n+1 "
                  "tokens).",
                  symbols - 1);
    info_.description =
        "Classification. " + layout +
        " Target at the marker (token p): the symbol D tokens before it (token p-D). Scored: the "
        "marker only, whose position varies per example; every other target is kIgnore.";
    info_.position_need =
        "The answer is the token exactly D before the marker, and it carries no content cue: "
        "only the offset identifies it. Needs relative offsets of exactly D (a relative scheme "
        "clipped at k <= D cannot represent it, offset k sharing its row with every farther one; "
        "one that blurs large offsets degrades with D), or "
        "absolute positions precise enough to compute p-D at a marker position p that varies "
        "per example. Accuracy by D is the scheme's reach. With D = n (task.distance 0) the "
        "model must also know n, which a causal model cannot see at the marker: the tokens that "
        "reveal it come after.";
  }

  int min_length() const override { return distance_ > 0 ? distance_ : 1; }
  int sequence_length(int n) const override { return distance_ > 0 ? n + 1 : 2 * n + 1; }
  // With D = n (distance 0) the offset varies with the example: none is fixed.
  int64_t answer_offset() const override { return distance_; }

  std::vector<int32_t> answer(const std::vector<int32_t>& tokens, int length) const override {
    check_tokens(tokens, length);
    const int32_t marker = symbols_;
    int pos = -1;
    for (int i = 0; i < static_cast<int>(tokens.size()); ++i) {
      if (tokens[i] != marker) continue;
      PELAB_CHECK(pos < 0, "task 'long_range': markers at {} and {}; expected one", pos, i);
      pos = i;
    }
    const int d = distance(length);
    PELAB_CHECK(pos >= d,
                "task 'long_range': the marker at position {} has fewer than {} "
                "tokens before it",
                pos, d);
    return label_at(static_cast<int>(tokens.size()), pos, tokens[pos - d]);
  }

 protected:
  std::vector<int32_t> draw(Generator& rng, int length) const override {
    const int symbols = sequence_length(length) - 1;
    std::vector<int32_t> tokens = random_ids(rng, symbols, symbols_);
    const int pos = static_cast<int>(rng.uniform_int(distance(length), symbols));
    tokens.insert(tokens.begin() + pos, symbols_);
    return tokens;
  }

 private:
  int distance(int length) const { return distance_ > 0 ? distance_ : length; }

  int symbols_;
  int distance_;
};

}  // namespace

TaskDef long_range_task_def() {
  return {"long_range",
          {symbols_param(),
           integer_key(
               "distance", 0, 0, 1 << 20,
               "distance D from the marker back to the answer; 0: D = n (set per example by its "
               "length)")},
          [](const TaskParams& p) -> std::unique_ptr<Task> {
            return std::make_unique<LongRangeTask>(param_int(p, "symbols"),
                                                   param_int(p, "distance"));
          }};
}

}  // namespace pelab::tasks
