// The registry against docs/model.md: every scheme has its section under "Keys of each
// scheme", and that section lists exactly the keys of the scheme's table (type, default,
// valid values, meaning), so a scheme or key missing from the docs fails here.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "pelab/config/experiment.h"
#include "pelab/config/model_config_yaml.h"
#include "pelab/core/error.h"
#include "pelab/positional/scheme.h"
#include "pelab_process.h"
#include "robustness/config_messages.h"

namespace pelab {
namespace {

using testing::config_error;

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// docs/model.md from "### Keys of each scheme" up to the next "## " heading.
std::string keys_section() {
  const std::string doc = read_text(std::string(PELAB_SOURCE_DIR) + "/docs/model.md");
  const size_t begin = doc.find("### Keys of each scheme");
  if (begin == std::string::npos) return "";
  const size_t end = doc.find("\n## ", begin);
  return doc.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

// What docs/model.md says of one scheme: its heading, summary and key table.
std::string scheme_section(const SchemeInfo& info) {
  return "#### `" + info.name + "`\n\n" + info.summary + ".\n\n" + scheme_keys_markdown(info);
}

TEST(SchemeKeys, DocsListEverySchemeAndItsKeys) {
  const std::string section = keys_section();
  ASSERT_FALSE(section.empty()) << "docs/model.md has no '### Keys of each scheme' section";
  std::vector<std::string> documented;
  for (size_t at = section.find("#### `"); at != std::string::npos;
       at = section.find("#### `", at + 1)) {
    const size_t name = at + 6;
    documented.push_back(section.substr(name, section.find('`', name) - name));
  }
  EXPECT_EQ(documented, scheme_names()) << "the schemes documented, in registry order";
  for (const SchemeInfo& info : scheme_table())
    EXPECT_NE(section.find(scheme_section(info)), std::string::npos)
        << "docs/model.md should say, for '" << info.name << "':\n\n"
        << scheme_section(info);
}

// `pelab schemes --json` is the registry's table: every scheme, in order, with its facts;
// an unknown name is one line naming the valid ones (exit 2).
TEST(SchemeKeys, TheSchemesCommandShowsTheTable) {
  const testing::Outcome listed = testing::run_pelab({"schemes", "--json"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  const nlohmann::json table = nlohmann::json::parse(listed.out);
  ASSERT_EQ(table.size(), scheme_table().size());
  for (size_t i = 0; i < table.size(); ++i) {
    const SchemeInfo& info = scheme_table()[i];
    EXPECT_EQ(table[i]["name"], info.name);
    EXPECT_EQ(table[i]["acts"], to_string(info.acts));
    EXPECT_EQ(table[i]["shift_invariant"], info.shift_invariant);
    EXPECT_EQ(table[i]["causal_only"], info.causal_only);
    EXPECT_EQ(table[i]["keys"].size(), info.keys.size()) << info.name;
  }
  const testing::Outcome unknown = testing::run_pelab({"schemes", "rotray"});
  EXPECT_EQ(testing::user_error_problem(unknown, {"unknown scheme 'rotray'", "rotary"}), "");
}

TEST(SchemeKeys, EveryKeyIsDescribedAndItsDefaultIsValid) {
  for (const SchemeInfo& info : scheme_table()) {
    EXPECT_FALSE(info.summary.empty()) << info.name;
    PositionalConfig given;
    given.type = info.name;
    for (const SchemeKey& key : info.keys) {
      EXPECT_FALSE(key.help.empty()) << info.name << "." << key.name;
      if (key.default_value) given.keys.set(key.name, *key.default_value);
    }
    EXPECT_NO_THROW(resolve_defaults(given)) << info.name;
  }
}

TEST(SchemeKeys, DefaultsComeFromEachSchemesOwnTable) {
  PositionalConfig relative, t5;
  relative.type = "relative";
  t5.type = "t5";
  EXPECT_EQ(resolve_defaults(relative).integer("max_distance"), 16);
  EXPECT_EQ(resolve_defaults(t5).integer("max_distance"), 128);
  EXPECT_EQ(resolve_defaults(t5).integer("num_buckets"), 32);
  // config.yaml writes them out, in the table's order.
  ModelConfig model;
  model.positional = t5;
  EXPECT_NE(model_sections_yaml(model).find("  type: t5\n  max_distance: 128\n  num_buckets: 32\n"),
            std::string::npos)
      << model_sections_yaml(model);
}

TEST(SchemeKeys, ValuesAreCheckedAgainstTheTable) {
  auto message = [](const std::string& type, const std::string& key, const KeyValue& value) {
    PositionalConfig p;
    p.type = type;
    p.keys.set(key, value);
    try {
      resolve_defaults(p);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(message("relative", "max_distance", int64_t{0}),
            "positional.max_distance: must be in [1, 1000000], got 0");
  EXPECT_EQ(message("sinusoidal", "combine", "stack"),
            "positional.combine: 'stack' is not valid (valid: add, concat)");
  EXPECT_EQ(message("rotary", "max_len", int64_t{8}),
            "positional.max_len: the 'rotary' scheme does not take this key (it takes: base, "
            "fraction, scaling.type, scaling.factor, scaling.original_length)");
  EXPECT_EQ(message("rotary", "scaling.type", "yarm"),
            "positional.scaling.type: 'yarm' is not valid (valid: none, pi, ntk, dynamic_ntk, "
            "yarn)");
  EXPECT_EQ(message("learned", "max_len", 2.5), "positional.max_len: must be an integer");
}

// A config with `positional:` holding type `scheme` and `key` (a nested `group.key` as its
// mapping; none if "") set to `value`, the rest a small causal model (every scheme takes one).
std::string config_with(const std::string& scheme, const std::string& key,
                        const std::string& value) {
  const size_t dot = key.find('.');
  const std::string entry =
      key.empty() ? ""
      : dot == std::string::npos
          ? "  " + key + ": " + value + "\n"
          : "  " + key.substr(0, dot) + ":\n    " + key.substr(dot + 1) + ": " + value + "\n";
  return "model:\n  d_model: 16\n  heads: 2\n  layers: 1\n  causal: true\npositional:\n  type: " +
         scheme + "\n" + entry +
         "task:\n  name: shift\n  max_length: 8\ntraining:\n  steps: 2\n  warmup: 1\n";
}

// A number as the range message prints it.
std::string shown(double v) {
  return fmt::format("{}", v);
}

// Every key of every scheme (fire's, kerple's, sandwich's, alibi's bidirectional, rotary's
// fraction and scaling.* included, and any added later): a value below its range, above it,
// or (a text) outside its choices is refused from a config file at the key's line, naming
// the range. Then the checks a key's table cannot state, which each scheme makes itself.
TEST(SchemeKeys, EveryOutOfRangeValueOfEveryKeyIsABadConfig) {
  int checked = 0;
  for (const std::string& scheme : scheme_names())
    for (const SchemeKey& k : scheme_info(scheme).keys) {
      const std::string line = k.name.find('.') == std::string::npos ? "x.yaml:8: " : "x.yaml:9: ";
      std::vector<std::pair<std::string, std::string>> bad;  // value, what the message says
      if (k.type == SchemeKey::Type::Text) {
        if (!k.choices.empty()) bad.push_back({"bogus", "'bogus' is not valid (valid: "});
      } else {
        const bool integer = k.type == SchemeKey::Type::Integer;
        if (std::isfinite(k.min)) {
          const double below = integer ? k.min - 1 : k.min - 0.5;
          bad.push_back({shown(below), "must be in [" + shown(k.min) + ", "});
        }
        if (std::isfinite(k.max)) {
          const double above = integer ? k.max + 1 : k.max + 0.5;
          bad.push_back({shown(above), ", got " + shown(above)});
        }
      }
      for (const auto& [value, says] : bad) {
        ++checked;
        const std::string message = config_error(config_with(scheme, k.name, value));
        SCOPED_TRACE(scheme + " " + k.name + "=" + value);
        EXPECT_EQ(message.rfind(line + "positional." + k.name + ": ", 0), 0u) << message;
        // The range, or (a key its scheme resolves from the run, learned's max_len) the value
        // and why it cannot be.
        EXPECT_TRUE(message.find(says) != std::string::npos ||
                    message.find(" " + value + " ") != std::string::npos)
            << message;
      }
    }
  EXPECT_GE(checked, 20);
  // The controls: each scheme with its keys at their defaults loads.
  for (const std::string& scheme : scheme_names())
    EXPECT_EQ(config_error(config_with(scheme, "", "")), testing::kNoError) << scheme;

  // The checks of the schemes themselves, at the key's line too.
  EXPECT_EQ(config_error(config_with("fire", "threshold", "0")),
            "x.yaml:8: positional.threshold: must be > 0, got 0");
  EXPECT_EQ(config_error(config_with("sandwich", "base", "-1")),
            "x.yaml:8: positional.base: must be > 0, got -1");
  EXPECT_NE(
      config_error(config_with("rotary", "fraction", "0.2"))
          .find("x.yaml:8: positional.fraction: 0.2 of d_h / 2 = 4 pairs leaves none to rotate"),
      std::string::npos);
  EXPECT_NE(config_error(config_with("rotary", "scaling.type", "yarn"))
                .find("positional.scaling.type: yarn needs positional.scaling.original_length"),
            std::string::npos);
}

TEST(SchemeKeys, LearnedResolvesItsTableFromTheRun) {
  PositionalConfig learned;
  learned.type = "learned";
  resolve_run_facts(learned, {12, 40});
  EXPECT_EQ(learned.keys.integer("max_len"), 40);
  PositionalConfig too_short;
  too_short.type = "learned";
  too_short.keys.set("max_len", int64_t{8});
  try {
    resolve_run_facts(too_short, {12, 12});
    ADD_FAILURE() << "a table shorter than the run's sequences was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("positional.max_len: the learned table has 8 rows", 0),
              0u)
        << e.what();
  }
  PositionalConfig rotary;
  rotary.type = "rotary";
  resolve_run_facts(rotary, {12, 12});  // no hook: nothing changes
  EXPECT_TRUE(rotary.keys.all().empty());
}

}  // namespace
}  // namespace pelab
