// Typed keys (pelab/core/keys.h): the checks and defaults every scheme's and task's key
// table goes through.
#include "pelab/core/keys.h"

#include <gtest/gtest.h>

#include "error_message.h"
#include "pelab/core/error.h"

namespace pelab {
namespace {

using testing::error_message;

const KeySpec kWindow = integer_key("window", 1, 1, 16, "half-width");
const KeySpec kBase = {.name = "base",
                       .type = KeySpec::Type::Number,
                       .default_value = 10000.0,
                       .min = 1.0,
                       .max = 1e9,
                       .help = "base"};
const KeySpec kMode = {.name = "mode",
                       .type = KeySpec::Type::Text,
                       .default_value = std::string("add"),
                       .choices = {"add", "concat"},
                       .help = "how"};

TEST(Keys, ValuesAreCheckedByTypeThenRangeOrChoices) {
  EXPECT_EQ(key_value_problem(kWindow, int64_t{1}), "");
  EXPECT_EQ(key_value_problem(kWindow, int64_t{16}), "");
  EXPECT_EQ(key_value_problem(kWindow, int64_t{17}), "must be in [1, 16], got 17");
  EXPECT_EQ(key_value_problem(kWindow, int64_t{0}), "must be in [1, 16], got 0");
  EXPECT_EQ(key_value_problem(kWindow, 2.0), "must be an integer");
  EXPECT_EQ(key_value_problem(kBase, int64_t{2}), "");  // an integer is a number
  EXPECT_EQ(key_value_problem(kBase, 0.5), "must be in [1, 1000000000], got 0.5");
  EXPECT_EQ(key_value_problem(kBase, std::string("x")), "must be a number");
  EXPECT_EQ(key_value_problem(kMode, std::string("concat")), "");
  EXPECT_EQ(key_value_problem(kMode, std::string("mul")),
            "'mul' is not valid (valid: add, concat)");
  EXPECT_EQ(key_value_problem(kMode, int64_t{1}), "must be a text");
}

TEST(Keys, WithDefaultsFillsTheMissingAndNamesTheSectionInErrors) {
  const std::vector<KeySpec> specs = {kWindow, kBase, kMode};
  const KeyValues filled = with_defaults("task", specs, {{"window", int64_t{3}}});
  EXPECT_EQ(filled.integer("window"), 3);
  EXPECT_EQ(filled.number("base"), 10000.0);
  EXPECT_EQ(filled.text("mode"), "add");
  EXPECT_EQ(error_message([&] {
              with_defaults("task", specs, {{"window", int64_t{0}}});
            }),
            "task.window: must be in [1, 16], got 0");
  EXPECT_EQ(error_message([&] {
              with_defaults("positional", specs, {{"mode", std::string("x")}});
            }),
            "positional.mode: 'x' is not valid (valid: add, concat)");
}

TEST(Keys, AccessorsRefuseTheWrongType) {
  const KeyValues v = {{"n", int64_t{2}}, {"x", 0.5}, {"s", std::string("a")}};
  EXPECT_EQ(v.number("n"), 2.0);
  EXPECT_EQ(error_message([&] { v.integer("x"); }), "key 'x' is not an integer");
  EXPECT_EQ(error_message([&] { v.text("n"); }), "key 'n' is not a text");
  EXPECT_EQ(error_message([&] { v.integer("missing"); }), "key 'missing' is not set");
}

TEST(Keys, MarkdownListsEveryKey) {
  EXPECT_EQ(keys_markdown({kWindow, kMode}),
            "| key | type | default | valid | meaning |\n| --- | --- | --- | --- | --- |\n"
            "| `window` | integer | `1` | [1, 16] | half-width |\n"
            "| `mode` | text | `add` | add, concat | how |\n");
}

}  // namespace
}  // namespace pelab
