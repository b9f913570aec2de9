// C11: pelab's rotary keeps relative position and norms. C12: note 003's construction, run as
// written, tested for the same two properties.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "claims/claim.h"
#include "pelab/analysis/rotary_check.h"
#include "pelab/claims/order_encoding_verdicts.h"
#include "pelab/core/error.h"

namespace pelab::claims {

namespace {

struct RotarySettings {
  int64_t dim = 64, max_position = 1024, trials = 200;
  std::vector<int64_t> offsets;
  double supported_below = 1e-4, refuted_above = 1e-2;
};

RotarySettings read_settings(const ClaimContext& ctx, int64_t* dim_arg = nullptr,
                             int64_t* seq_len = nullptr) {
  MapReader s = ctx.settings();
  RotarySettings r;
  s.read("dim", r.dim);
  s.read("max_position", r.max_position);
  s.read("trials", r.trials);
  s.read("offsets", r.offsets);
  s.read("supported_below", r.supported_below);
  s.read("refuted_above", r.refuted_above);
  std::vector<std::string> keys{"dim",     "max_position",    "trials",
                                "offsets", "supported_below", "refuted_above"};
  if (dim_arg) {
    s.read("note_dim_arg", *dim_arg);
    keys.push_back("note_dim_arg");
  }
  if (seq_len) {
    s.read("note_seq_len", *seq_len);
    keys.push_back("note_seq_len");
  }
  s.finish(keys);
  PELAB_CHECK(!r.offsets.empty(), "{}: settings.offsets: give at least one offset",
              ctx.config.path);
  return r;
}

order_encoding::RotaryNumbers rotary_numbers(const RotaryCheck& c) {
  return {c.max_score_change, c.min_norm_ratio, c.max_norm_ratio};
}

nlohmann::json check_json(const RotaryCheck& c) {
  return {{"trials", c.trials},
          {"max_score_change", c.max_score_change},
          {"min_norm_ratio", c.min_norm_ratio},
          {"max_norm_ratio", c.max_norm_ratio}};
}

std::string check_row(const std::string& what, const RotaryCheck& c) {
  return fmt::format("| {} | {} | {} – {} |\n", what, fmt_number(c.max_score_change),
                     fmt_number(c.min_norm_ratio), fmt_number(c.max_norm_ratio));
}

const char* kTableHead =
    "| construction | largest score change under a common shift (× ‖q‖‖k‖) | ‖f(x)‖ / ‖x‖ |\n"
    "|---|--:|--:|\n";

void c11(const ClaimContext& ctx, ClaimResult& r) {
  const RotarySettings s = read_settings(ctx);
  const RotaryCheck c =
      check_rotary(pelab_rotary(s.dim, 10000.0), s.dim, s.max_position, s.offsets, s.trials, 11);
  r.numbers = check_json(c);
  const order_encoding::Judgement j =
      order_encoding::judge_c11(rotary_numbers(c), {s.supported_below, s.refuted_above});
  r.verdict = j.verdict;
  r.because = j.because;
  r.details = fmt::format(
      "pelab's rotary op (one head of width {}, base 10000), {} random pairs q, k ~ N(0, I) at "
      "random positions m, n in [0, {}], each shifted by Δ ∈ {{{}}}; float32 arithmetic.\n\n{}{}",
      s.dim, s.trials, s.max_position, fmt::join(s.offsets, ", "), kTableHead,
      check_row("pelab rotary", c));
}

// What NumPy says when the note's example runs as written: its embeddings are [seq_len, dim]
// and get_rotary_embedding(positions, dim_arg) gives [seq_len, 2 × ⌈dim_arg / 2⌉] angles
// (arange(0, dim_arg, 2), twice), so `embeddings * cos` fails unless the widths agree. The
// analysis checks one position's vector; the message names the example's whole arrays.
std::string note003_as_written(int64_t seq_len, int64_t dim, int64_t dim_arg) {
  try {
    note003_rope(std::vector<double>(static_cast<size_t>(dim), 1.0), 1, dim_arg);
    return "runs";
  } catch (const Error&) {
    const int64_t angles = 2 * ((dim_arg + 1) / 2);
    return fmt::format(
        "operands could not be broadcast together with shapes ({},{}) ({},{}): the angles have "
        "{} entries per position for an embedding of {}",
        seq_len, dim, seq_len, angles, angles, dim);
  }
}

void c12(const ClaimContext& ctx, ClaimResult& r) {
  int64_t dim_arg = 32, seq_len = 10;
  const RotarySettings s = read_settings(ctx, &dim_arg, &seq_len);
  // As written: the note's example calls get_rotary_embedding(positions, dim // 2).
  const std::string as_written = note003_as_written(seq_len, s.dim, dim_arg);
  // The one reading of the code that runs: angles as wide as the embedding.
  const int64_t dim = s.dim;
  const PositionMap note = [dim](const std::vector<double>& x, int64_t p) {
    return note003_rope(x, p, dim);
  };
  const RotaryCheck c = check_rotary(note, s.dim, s.max_position, s.offsets, s.trials, 12);
  const RotaryCheck reference =
      check_rotary(pelab_rotary(s.dim, 10000.0), s.dim, s.max_position, s.offsets, s.trials, 12);
  r.numbers = {{"as_written", as_written},
               {"note_dim_arg", dim_arg},
               {"note_seq_len", seq_len},
               {"note_construction", check_json(c)},
               {"pelab_rotary", check_json(reference)}};
  const order_encoding::Judgement j = order_encoding::judge_c12(
      rotary_numbers(c), as_written, {s.supported_below, s.refuted_above});
  r.verdict = j.verdict;
  r.because = j.because;
  r.details = fmt::format(
      "Note 003's `apply_rope` computes `x·cos θ + np.roll(x, 1)·sin θ` with "
      "`θ = concatenate(p·f, p·f)`. Its example passes `dim // 2` = {} to "
      "`get_rotary_embedding` for embeddings of width {}; as written that gives: *{}*. With "
      "angles as wide as the embedding (the only width that runs), each coordinate is mixed with "
      "its left neighbour (`roll`) instead of its rotation partner, with no sign flip: that is "
      "not a rotation, so norms are not kept and scores depend on absolute position. The same "
      "test on pelab's rotary, beside it:\n\n{}{}{}",
      dim_arg, s.dim, as_written, kTableHead, check_row("note 003 (angles as wide as x)", c),
      check_row("pelab rotary", reference));
}

}  // namespace

namespace order_encoding {

namespace {

// The largest relative change of norm.
double norm_error(const RotaryNumbers& n) {
  return std::max(std::abs(n.max_norm_ratio - 1), std::abs(1 - n.min_norm_ratio));
}

// Both properties below `supported_below` → supported; either above `refuted_above` → refuted.
Verdict rotary_verdict(const RotaryNumbers& n, const ErrorRule& rule) {
  if (n.max_score_change < rule.supported_below && norm_error(n) < rule.supported_below)
    return Verdict::Supported;
  if (n.max_score_change > rule.refuted_above || norm_error(n) > rule.refuted_above)
    return Verdict::Refuted;
  return Verdict::Mixed;
}

}  // namespace

Judgement judge_c11(const RotaryNumbers& n, const ErrorRule& rule) {
  return {rotary_verdict(n, rule),
          fmt::format("scores change by at most {} of ‖q‖‖k‖ when both positions shift; norms "
                      "kept within {}",
                      fmt_number(n.max_score_change), fmt_number(norm_error(n)))};
}

Judgement judge_c12(const RotaryNumbers& n, const std::string& as_written, const ErrorRule& rule) {
  const std::string written = as_written == "runs"
                                  ? std::string("the example runs as written")
                                  : fmt::format("the example as written fails ({})", as_written);
  return {rotary_verdict(n, rule),
          fmt::format("{}; run with angles as wide as the embedding, scores change by up to {} "
                      "of ‖q‖‖k‖ under a common shift and norms scale by {} – {}",
                      written, fmt_number(n.max_score_change), fmt_number(n.min_norm_ratio),
                      fmt_number(n.max_norm_ratio))};
}

}  // namespace order_encoding

void add_rotary_claims(std::vector<ClaimDef>& defs) {
  defs.push_back({"C11", c11});
  defs.push_back({"C12", c12});
}

}  // namespace pelab::claims
