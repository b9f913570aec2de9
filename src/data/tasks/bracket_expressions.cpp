// Delétang's bracketed expressions: drawing and evaluating them (see bracket_expressions.h).
// Not a task itself.
#include "data/tasks/bracket_expressions.h"

#include "pelab/core/error.h"

namespace pelab::tasks {

namespace {

int mod5(int v) {
  return (v % kBracketModulus + kBracketModulus) % kBracketModulus;
}

// A recursive-descent reader of the grammar E := d | -d | (E) | (E op E), which covers every
// expression the generator draws ((d) and (-d) are (E) around d and -d).
class Reader {
 public:
  Reader(const std::vector<int32_t>& tokens, const BracketAlphabet& alphabet, int unknown_value,
         const std::string& task)
      : t_(tokens), a_(alphabet), unknown_value_(unknown_value), task_(task) {}

  int whole() {
    const int value = expression();
    PELAB_CHECK(pos_ == t_.size(),
                "task '{}': unexpected token at position {} after a whole "
                "expression",
                task_, pos_);
    return value;
  }

 private:
  int32_t next() {
    PELAB_CHECK(pos_ < t_.size(), "task '{}': the expression ends early", task_);
    return t_[pos_++];
  }

  // A digit or the unknown; -1 for any other token.
  int operand(int32_t token) const {
    if (token >= 0 && token < kBracketModulus) return token;
    if (token == a_.unknown && a_.unknown >= 0) return unknown_value_;
    return -1;
  }

  int expression() {
    const size_t at = pos_;
    const int32_t token = next();
    if (operand(token) >= 0) return operand(token);
    if (token == a_.minus) {
      const int v = operand(next());
      PELAB_CHECK(v >= 0, "task '{}': '-' at position {} is not followed by a number", task_, at);
      return mod5(-v);
    }
    PELAB_CHECK(token == a_.open, "task '{}': unexpected token at position {}", task_, at);
    const int left = expression();
    const int32_t op = next();
    if (op == a_.close) return left;
    PELAB_CHECK(op == a_.plus || op == a_.minus || (op == a_.times && a_.times >= 0),
                "task '{}': expected an operator or ')' at position {}", task_, pos_ - 1);
    const int right = expression();
    PELAB_CHECK(next() == a_.close, "task '{}': expected ')' at position {}", task_, pos_ - 1);
    if (op == a_.plus) return mod5(left + right);
    if (op == a_.minus) return mod5(left - right);
    return mod5(left * right);
  }

  const std::vector<int32_t>& t_;
  const BracketAlphabet& a_;
  int unknown_value_;
  const std::string& task_;
  size_t pos_ = 0;
};

}  // namespace

void draw_bracket_expression(Generator& rng, int length, const BracketAlphabet& alphabet,
                             bool times, std::vector<int32_t>& out) {
  PELAB_ASSERT(length >= 1);
  if (length <= 4) {
    const auto digit = static_cast<int32_t>(rng.uniform_int(0, kBracketModulus - 1));
    if (length >= 3) out.push_back(alphabet.open);
    if (length % 2 == 0) out.push_back(alphabet.minus);
    out.push_back(digit);
    if (length >= 3) out.push_back(alphabet.close);
    return;
  }
  // Their draw order is the left size, the left, the right, then the operator; the operator is
  // drawn before the right here so that the tokens come out in order. Independent draws: the
  // same distribution.
  const int left = static_cast<int>(rng.uniform_int(1, length - 4));
  out.push_back(alphabet.open);
  draw_bracket_expression(rng, left, alphabet, times, out);
  const int64_t op = rng.uniform_int(0, times ? 2 : 1);
  out.push_back(op == 0 ? alphabet.plus : op == 1 ? alphabet.minus : alphabet.times);
  draw_bracket_expression(rng, length - left - 3, alphabet, times, out);
  out.push_back(alphabet.close);
}

int bracket_value(const std::vector<int32_t>& tokens, const BracketAlphabet& alphabet,
                  int unknown_value, const std::string& task) {
  return Reader(tokens, alphabet, unknown_value, task).whole();
}

}  // namespace pelab::tasks
