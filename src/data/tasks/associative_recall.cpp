// associative_recall: key-value pairs, then a query key; predict its value.
#include "data/task_base.h"

namespace pelab::tasks {
namespace {

class AssociativeRecallTask : public TaskBase {
 public:
  AssociativeRecallTask(int keys, int values) : keys_(keys), values_(values) {
    info_.name = "associative_recall";
    info_.source = "pelab's own";
    info_.layout = TaskLayout::Classification;
    info_.input_symbols = numbered_symbols(keys, "k");
    const std::vector<std::string> value_names = numbered_symbols(values, "v");
    info_.input_symbols.insert(info_.input_symbols.end(), value_names.begin(), value_names.end());
    info_.input_symbols.push_back("?");  // the query, id keys + values
    info_.output_symbols = value_names;
    info_.description = fmt::format(
        "Classification. Input: n key-value pairs k v (keys from k0..k{}, values from v0..v{}, "
        "both drawn uniformly, keys with repetition; 2n tokens), then a query key that occurs "
        "among the pairs, then one query token '?'. Target: the value paired with the query "
        "key; when the key occurs more than once, its last (rightmost) pair wins. Scored: the "
        "query token only (the last token); every other target is kIgnore.",
        keys - 1, values - 1);
    info_.position_need =
        "The query key is matched against the keys by content (no position needed); the "
        "answer is the token at relative offset exactly +1 from the matched key, so the "
        "scheme must tell +1 (this pair's value) from -1 (the previous pair's). Keys repeat, "
        "and the last match wins, so the model also needs the order of matches at any "
        "distance up to 2n; a relative scheme clipped at K cannot order matches more than K "
        "apart.";
  }

  int sequence_length(int n) const override { return 2 * n + 2; }

  std::vector<int32_t> answer(const std::vector<int32_t>& tokens, int length) const override {
    check_tokens(tokens, length);
    const int n = length;
    const int32_t query = keys_ + values_;
    int32_t found = -1;
    for (int i = 0; i <= n; ++i) expect_below(tokens, 2 * i, keys_);
    for (int i = 0; i < n; ++i) {
      const int32_t v = tokens[2 * i + 1];
      PELAB_CHECK(v >= keys_ && v < query,
                  "task 'associative_recall': expected a value at position {}, got '{}'", 2 * i + 1,
                  info_.input_symbols[v]);
      if (tokens[2 * i] == tokens[2 * n]) found = v - keys_;
    }
    expect_token(tokens, 2 * n + 1, query);
    PELAB_CHECK(found >= 0, "task 'associative_recall': the query key '{}' is in no pair",
                info_.input_symbols[tokens[2 * n]]);
    return label_at(2 * n + 2, 2 * n + 1, found);
  }

  int min_length() const override { return 1; }  // at least one pair to ask about

 protected:
  std::vector<int32_t> draw(Generator& rng, int length) const override {
    std::vector<int32_t> tokens;
    tokens.reserve(2 * length + 2);
    for (int i = 0; i < length; ++i) {
      tokens.push_back(static_cast<int32_t>(rng.uniform_int(0, keys_ - 1)));
      tokens.push_back(static_cast<int32_t>(rng.uniform_int(keys_, keys_ + values_ - 1)));
    }
    tokens.push_back(tokens[2 * rng.uniform_int(0, length - 1)]);  // the key of a random pair
    tokens.push_back(keys_ + values_);
    return tokens;
  }

 private:
  int keys_;
  int values_;
};

}  // namespace

TaskDef associative_recall_task_def() {
  return {"associative_recall",
          {integer_key("keys", 16, 2, 64, "number of distinct keys k0..k(keys-1)"),
           integer_key("values", 8, 2, 64, "number of distinct values v0..v(values-1)")},
          [](const TaskParams& p) -> std::unique_ptr<Task> {
            return std::make_unique<AssociativeRecallTask>(param_int(p, "keys"),
                                                           param_int(p, "values"));
          }};
}

}  // namespace pelab::tasks
