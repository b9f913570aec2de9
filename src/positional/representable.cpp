#include "pelab/positional/representable.h"

#include <fmt/format.h>

#include "pelab/positional/functions.h"
#include "pelab/positional/scheme.h"

namespace pelab {

namespace {

std::string relative_problem(int64_t k, const PositionReach& reach) {
  if (reach.answer_offset > 0 && k <= reach.answer_offset)
    return fmt::format(
        "relative's k = {} does not exceed the offset the answer needs ({}): the row of offset "
        "{} is shared by every offset beyond it, so that offset cannot be singled out; k must "
        "be at least {}",
        k, reach.answer_offset, k, reach.answer_offset + 1);
  const int64_t trained = reach.longest_training_distance;
  if (k > trained && reach.longest_evaluation_distance > trained)
    return fmt::format(
        "relative's k = {} exceeds the longest distance training sees ({}): the rows of "
        "offsets {} to {} are never trained, and evaluation (to distance {}) uses them; k must "
        "be at most {}",
        k, trained, trained + 1, k, reach.longest_evaluation_distance, trained);
  return "";
}

std::string t5_problem(int64_t num_buckets, int64_t max_distance, const PositionReach& reach) {
  const int64_t trained = reach.longest_training_distance;
  const int64_t evaluated = reach.longest_evaluation_distance;
  if (evaluated <= trained) return "";
  // Per sign the bucket never decreases with the distance, and the positive side mirrors the
  // negative one (bucket(+n) = num_buckets / 2 + bucket(−n) for n ≥ 1): one sign tells.
  const int64_t last_trained = t5_bucket(-trained, num_buckets, max_distance);
  const int64_t last_used = t5_bucket(-evaluated, num_buckets, max_distance);
  if (last_used == last_trained) return "";
  return fmt::format(
      "t5's buckets {} to {} of each sign are used at evaluation (distances up to {}) and never "
      "reached in training (distances up to {}, bucket {}); num_buckets = {} and max_distance = "
      "{} must put the longest evaluation distance in the bucket of the longest training one",
      last_trained + 1, last_used, evaluated, trained, last_trained, num_buckets, max_distance);
}

}  // namespace

std::string representability_problem(const PositionalConfig& positional,
                                     const PositionReach& reach) {
  if (positional.type != "relative" && positional.type != "t5") return "";
  const KeyValues keys = resolve_defaults(positional);
  if (positional.type == "relative") return relative_problem(keys.integer("max_distance"), reach);
  return t5_problem(keys.integer("num_buckets"), keys.integer("max_distance"), reach);
}

}  // namespace pelab
