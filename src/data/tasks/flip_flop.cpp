// flip_flop: flip-flop language modelling (Liu et al. 2023, "Exposing Attention Glitches with
// Flip-Flop Language Modeling"). A sequence of n instructions, each followed by a bit: 'w'
// writes its bit to a one-bit register, 'r' reads it (its bit is the last bit written), 'i'
// ignores its bit. Only the bit after each 'r' is determined by what came before, and only it
// is scored, at the 'r' token, as a language model predicts the next token.
//
// As their FFL(T, p): the first instruction is always 'w' (so every read has a written bit),
// the last is always 'r' (so every sequence is scored at least once), the others are drawn
// independently with probabilities p_w, p_r, p_i; the bits after 'w' and 'i' are uniform.
// Their default and their training distribution, FFL(0.8), has p_i = 0.8 and p_w = p_r = 0.1
// (T = 512 tokens: 256 instructions); their sparse and dense tests are p_i = 0.98 and 0.1.
// Their ids (the released data's tokenizer: w 0, r 1, i 2, '0' 3, '1' 4) are kept.
#include <cmath>

#include "data/task_base.h"

namespace pelab::tasks {
namespace {

constexpr int32_t kWrite = 0, kRead = 1, kIgnoreInstruction = 2, kZero = 3, kOne = 4;

class FlipFlopTask : public TaskBase {
 public:
  FlipFlopTask(double p_w, double p_r, double p_i) : p_w_(p_w), p_r_(p_r) {
    info_.name = "flip_flop";
    info_.layout = TaskLayout::Tagging;
    info_.input_symbols = {"w", "r", "i", "0", "1"};
    info_.output_symbols = {"0", "1"};
    info_.causal_only = true;
    info_.description = fmt::format(
        "Tagging. Input: n instructions, each followed by a bit (2n tokens): the first is 'w', "
        "the last 'r', the others drawn independently, 'w' with probability p_w = {}, 'r' "
        "with p_r = {}, 'i' with p_i = {}; the bit after 'w' or 'i' is uniform, the bit after "
        "'r' is the bit of the last 'w'. Target at each 'r': the bit that follows it (the next "
        "token, as a language model predicts it; needs model.causal: true, since a "
        "bidirectional model would read it). Scored: the 'r' tokens only (kIgnore elsewhere).",
        key_value_text(p_w), key_value_text(p_r), key_value_text(p_i));
    info_.position_need =
        "The read must find the most recent 'w' before it and copy the bit after it: the "
        "latest of several matching tokens, at a distance that is geometric with mean about "
        "2/p_w tokens and unbounded, past any number of 'i' tokens whose bits are noise. Needs "
        "an order between the candidate writes (recency: relative offsets of every size, or "
        "absolute positions fine enough to tell the last write from earlier ones) and the "
        "offset +1 from an instruction to its bit. A scheme whose attention favours nearby "
        "tokens (ALiBi, T5's buckets) helps recency; one without position (none) must order "
        "writes from the causal mask alone. Liu et al. find Transformers make rare, sporadic "
        "errors here ('attention glitches'), most on sparse (p_i near 1) and dense sequences.";
    info_.source =
        "Liu et al. 2023, Exposing Attention Glitches with Flip-Flop Language Modeling "
        "(NeurIPS), their FFL(T, p) with T = 2n; their token ids";
  }

  int min_length() const override { return 2; }  // a first 'w' and a last 'r'
  int sequence_length(int n) const override { return 2 * n; }

  std::vector<int32_t> answer(const std::vector<int32_t>& tokens, int length) const override {
    check_tokens(tokens, length);
    std::vector<int32_t> targets(tokens.size(), kIgnore);
    int32_t written = -1;
    for (int k = 0; k < length; ++k) {
      const int32_t instruction = tokens[2 * k], bit = tokens[2 * k + 1];
      PELAB_CHECK(instruction <= kIgnoreInstruction,
                  "task 'flip_flop': expected an instruction at position {}, got '{}'", 2 * k,
                  info_.input_symbols[instruction]);
      PELAB_CHECK(bit == kZero || bit == kOne,
                  "task 'flip_flop': expected a bit at position {}, got '{}'", 2 * k + 1,
                  info_.input_symbols[bit]);
      if (instruction == kWrite) written = bit - kZero;
      if (instruction != kRead) continue;
      PELAB_CHECK(written >= 0, "task 'flip_flop': 'r' at position {} before any 'w'", 2 * k);
      PELAB_CHECK(bit - kZero == written,
                  "task 'flip_flop': the bit after 'r' at position {} is {}, but the last "
                  "written bit is {}",
                  2 * k, bit - kZero, written);
      targets[2 * k] = written;
    }
    return targets;
  }

 protected:
  std::vector<int32_t> draw(Generator& rng, int length) const override {
    std::vector<int32_t> tokens;
    tokens.reserve(2 * static_cast<size_t>(length));
    int32_t written = 0;
    for (int k = 0; k < length; ++k) {
      const int32_t instruction = k == 0 ? kWrite : k == length - 1 ? kRead : draw_instruction(rng);
      const int32_t bit =
          instruction == kRead ? written : static_cast<int32_t>(rng.uniform_int(0, 1));
      if (instruction == kWrite) written = bit;
      tokens.push_back(instruction);
      tokens.push_back(kZero + bit);
    }
    return tokens;
  }

 private:
  int32_t draw_instruction(Generator& rng) const {
    const double u = rng.uniform();
    return u < p_w_ ? kWrite : u < p_w_ + p_r_ ? kRead : kIgnoreInstruction;
  }

  double p_w_, p_r_;
};

KeySpec probability_key(const char* name, double default_value, const char* help) {
  return {.name = name,
          .type = KeySpec::Type::Number,
          .default_value = default_value,
          .min = 0,
          .max = 1,
          .help = help};
}

}  // namespace

TaskDef flip_flop_task_def() {
  TaskDef def{
      "flip_flop",
      {probability_key("p_w", 0.1, "probability of a 'w' (write) instruction after the first"),
       probability_key("p_r", 0.1, "probability of an 'r' (read) instruction before the last"),
       probability_key("p_i", 0.8, "probability of an 'i' (ignore) instruction")},
      [](const TaskParams& p) -> std::unique_ptr<Task> {
        return std::make_unique<FlipFlopTask>(p.number("p_w"), p.number("p_r"), p.number("p_i"));
      }};
  def.check = [](const TaskParams& p) -> TaskParamProblem {
    const double w = p.number("p_w"), r = p.number("p_r"), i = p.number("p_i");
    if (std::abs(w + r + i - 1.0) <= 1e-9) return {};
    return {{"p_w", "p_r", "p_i"},
            fmt::format("task.p_w + task.p_r + task.p_i must be 1, got {} + {} + {} = {:.10g}",
                        key_value_text(w), key_value_text(r), key_value_text(i), w + r + i)};
  };
  return def;
}

}  // namespace pelab::tasks
