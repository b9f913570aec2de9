// The registry against docs/model.md: every scheme has its section under "Keys of each
// scheme", and that section lists exactly the keys of the scheme's table (type, default,
// valid values, meaning), so a scheme or key missing from the docs fails here.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "pelab/config/model_config_yaml.h"
#include "pelab/core/error.h"
#include "pelab/positional/scheme.h"
#include "pelab_process.h"

namespace pelab {
namespace {

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
