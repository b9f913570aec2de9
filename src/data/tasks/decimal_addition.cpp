// decimal_addition: the sum of two decimal numbers, every number written least significant
// digit first, the setting of Zhou et al. 2024 ("Transformers Can Achieve Length
// Generalization But Not Robustly") and McLeish et al. 2024 ("Transformers Can Do Arithmetic
// with the Right Embeddings"), who train a decoder on "a+b=s" with a, b and s reversed. Made
// for the lm layout (task.layout: lm), where the answer follows '=' and ends with <end>;
// natively, '=' is followed by one '?' per answer digit.
//
// The problem size n is the longer operand's digits, the length the papers generalize over.
// At size n the pair of operand widths (|a|, |b|) is uniform over the pairs within the
// parameters' ranges whose longer width is n, and each operand is uniform over the numbers of
// exactly its width (a leading digit 1-9, except a width of 1: 0-9). The sum is written
// without a high zero, as the papers write it: n or n+1 digits. So examples of one size differ
// in length, up to 3n+3 tokens.
//
// McLeish et al. draw both widths uniformly up to 20 per batch; here, as for every generated
// task, the training size n is uniform in [task.min_length, task.max_length], then the pair.
#include <algorithm>

#include "data/task_base.h"

namespace pelab::tasks {
namespace {

constexpr int32_t kPlus = 10, kEquals = 11, kQuery = 12;  // after the digits 0..9

struct Widths {
  int min_a, max_a, min_b, max_b;
};

class DecimalAdditionTask : public TaskBase {
 public:
  explicit DecimalAdditionTask(const Widths& w) : w_(w) {
    info_.name = "decimal_addition";
    info_.layout = TaskLayout::AppendedQueries;
    info_.input_symbols = numbered_symbols(10);
    info_.input_symbols.insert(info_.input_symbols.end(), {"+", "=", "?"});
    info_.output_symbols = numbered_symbols(10);
    info_.description = fmt::format(
        "Appended. Input: a '+' b '=', then one query token '?' per digit of the sum; a, b and "
        "the sum are decimal, least significant digit first. At problem size n the longer "
        "operand has n digits: the widths (|a|, |b|) are uniform over the pairs with |a| in "
        "[{}, {}], |b| in [{}, {}] and max(|a|, |b|) = n; each operand is uniform over the "
        "numbers of its width (no leading zero). Target: a+b, least significant digit first, "
        "without a high zero (n or n+1 digits), one per query token. Scored: the query tokens "
        "only (kIgnore on a, b, '+' and '='). Examples of one size differ in length (at most "
        "3n+3 tokens). Made for task.layout: lm (model.causal: true), where the sum follows "
        "'=' and ends with <end>.",
        w.min_a, w.max_a, w.min_b, w.max_b);
    info_.position_need =
        "Digit j of the sum needs digit j of both operands and the carry from below: a_j at "
        "token j and b_j at token |a|+1+j, where |a| (where '+' falls) differs per example. "
        "Reversed, the carry flows in reading order. The two digits of one significance sit "
        "|a|+1 apart, and the answer digit |a|+|b|+2 after a_j: offsets that grow with n and "
        "vary per example, so a scheme must align digits by their index within their number, "
        "not by absolute position. That index is what task.position_ids: digit_runs gives "
        "(McLeish et al.'s Abacus, with positional.type: learned); relative schemes need "
        "offsets up to 3n, and a scheme clipped at K fails once |a| + 1 exceeds K.";
    info_.source =
        "Zhou et al. 2024 and McLeish et al. 2024 (reversed operands and sum); pelab's "
        "generator, with their format";
  }

  int min_length() const override { return std::max(w_.min_a, w_.min_b); }
  int sequence_length(int n) const override { return 3 * n + 3; }  // the longest
  std::string check_training_range(int64_t /*min_length*/, int64_t max_length) const override {
    return too_long(max_length);
  }
  std::string check_evaluation_lengths(const std::vector<int64_t>& lengths) const override {
    return lengths.empty() ? "" : too_long(*std::max_element(lengths.begin(), lengths.end()));
  }

  std::vector<int32_t> answer(const std::vector<int32_t>& tokens, int length) const override {
    check_tokens(tokens, length);
    const auto plus = std::find(tokens.begin(), tokens.end(), kPlus);
    const auto equals = std::find(tokens.begin(), tokens.end(), kEquals);
    PELAB_CHECK(plus != tokens.end() && equals != tokens.end() && plus < equals,
                "task 'decimal_addition': expected a '+' b '=' then the queries");
    const std::vector<int32_t> a(tokens.begin(), plus), b(plus + 1, equals);
    check_operand(a, "a");
    check_operand(b, "b");
    PELAB_CHECK(static_cast<int>(std::max(a.size(), b.size())) == length,
                "task 'decimal_addition': an example of size {} has a longer operand of {} "
                "digits",
                length, std::max(a.size(), b.size()));
    const std::vector<int32_t> sum = add(a, b);
    const auto queries = static_cast<size_t>(tokens.end() - equals - 1);
    PELAB_CHECK(queries == sum.size() &&
                    std::all_of(equals + 1, tokens.end(), [](int32_t t) { return t == kQuery; }),
                "task 'decimal_addition': expected {} query tokens after '=' (one per digit of "
                "the sum)",
                sum.size());
    std::vector<int32_t> targets(tokens.size() - sum.size(), kIgnore);
    targets.insert(targets.end(), sum.begin(), sum.end());
    return targets;
  }

 protected:
  bool fixed_length() const override { return false; }

  std::vector<int32_t> draw(Generator& rng, int length) const override {
    const std::string beyond = too_long(length);
    PELAB_CHECK(beyond.empty(), "task 'decimal_addition': {}", beyond);
    const auto [width_a, width_b] = draw_widths(rng, length);
    std::vector<int32_t> tokens = draw_number(rng, width_a);
    tokens.push_back(kPlus);
    const std::vector<int32_t> b = draw_number(rng, width_b);
    tokens.insert(tokens.end(), b.begin(), b.end());
    const size_t digits =
        add(std::vector<int32_t>(tokens.begin(), tokens.begin() + width_a), b).size();
    tokens.push_back(kEquals);
    tokens.insert(tokens.end(), digits, kQuery);
    return tokens;
  }

 private:
  std::string too_long(int64_t n) const {
    const int most = std::max(w_.max_a, w_.max_b);
    return n <= most ? ""
                     : fmt::format(
                           "size {} is above the longest operand task.max_digits_a = {} "
                           "and task.max_digits_b = {} allow (raise them)",
                           n, w_.max_a, w_.max_b);
  }

  // Uniform over the pairs (wa, wb) within the ranges whose larger width is n: those with
  // wa = n, then those with wb = n and wa < n.
  std::pair<int, int> draw_widths(Generator& rng, int n) const {
    const int with_a = n >= w_.min_a && n <= w_.max_a ? std::min(n, w_.max_b) - w_.min_b + 1 : 0;
    const int with_b =
        n >= w_.min_b && n <= w_.max_b ? std::min(n - 1, w_.max_a) - w_.min_a + 1 : 0;
    const int count = std::max(with_a, 0) + std::max(with_b, 0);
    PELAB_ASSERT(count > 0);
    const auto k = static_cast<int>(rng.uniform_int(0, count - 1));
    if (k < std::max(with_a, 0)) return {n, w_.min_b + k};
    return {w_.min_a + k - std::max(with_a, 0), n};
  }

  // `width` digits, least significant first, the most significant nonzero unless width is 1.
  static std::vector<int32_t> draw_number(Generator& rng, int width) {
    std::vector<int32_t> digits = random_ids(rng, width, 10);
    if (width > 1) digits.back() = static_cast<int32_t>(rng.uniform_int(1, 9));
    return digits;
  }

  void check_operand(const std::vector<int32_t>& x, const char* name) const {
    PELAB_CHECK(!x.empty(), "task 'decimal_addition': operand {} is empty", name);
    for (int32_t d : x)
      PELAB_CHECK(d < 10, "task 'decimal_addition': operand {} has the non-digit '{}'", name,
                  info_.input_symbols[d]);
    PELAB_CHECK(x.size() == 1 || x.back() != 0,
                "task 'decimal_addition': operand {} has a leading zero", name);
    const int width = static_cast<int>(x.size());
    const bool is_a = name[0] == 'a';
    const int lo = is_a ? w_.min_a : w_.min_b, hi = is_a ? w_.max_a : w_.max_b;
    PELAB_CHECK(width >= lo && width <= hi,
                "task 'decimal_addition': operand {} has {} digits, outside [{}, {}]", name, width,
                lo, hi);
  }

  // a + b, least significant digit first, without a high zero.
  static std::vector<int32_t> add(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
    std::vector<int32_t> sum;
    int carry = 0;
    for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
      const int s = (i < a.size() ? a[i] : 0) + (i < b.size() ? b[i] : 0) + carry;
      sum.push_back(s % 10);
      carry = s / 10;
    }
    if (carry) sum.push_back(carry);
    return sum;
  }

  Widths w_;
};

}  // namespace

TaskDef decimal_addition_task_def() {
  TaskDef def{"decimal_addition",
              {integer_key("min_digits_a", 1, 1, 1000, "fewest digits of the first operand a"),
               integer_key("max_digits_a", 1000, 1, 1000, "most digits of the first operand a"),
               integer_key("min_digits_b", 1, 1, 1000, "fewest digits of the second operand b"),
               integer_key("max_digits_b", 1000, 1, 1000, "most digits of the second operand b")},
              [](const TaskParams& p) -> std::unique_ptr<Task> {
                return std::make_unique<DecimalAdditionTask>(
                    Widths{param_int(p, "min_digits_a"), param_int(p, "max_digits_a"),
                           param_int(p, "min_digits_b"), param_int(p, "max_digits_b")});
              }};
  def.check = [](const TaskParams& p) -> TaskParamProblem {
    for (const char* operand : {"a", "b"}) {
      const std::string lo = fmt::format("min_digits_{}", operand),
                        hi = fmt::format("max_digits_{}", operand);
      if (p.integer(hi) < p.integer(lo))
        return {{hi, lo},
                fmt::format("must be >= task.{} = {}, got {}", lo, p.integer(lo), p.integer(hi))};
    }
    return {};
  };
  return def;
}

}  // namespace pelab::tasks
