// Numbers and lists on the command line are checked like config values (one parser,
// pelab/config/numbers.h): never wrapped, saturated, dropped or quietly replaced by a
// default. First the parser itself, then every numeric and list option of every command
// (found in the commands' --help, so that a new option is covered without being listed
// here), then the cases the issue named, each through the real binary.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "pelab/config/numbers.h"
#include "pelab_process.h"

namespace pelab::testing {
namespace {

// ---- the shared parser ------------------------------------------------------------------------

std::string integer_error(const std::string& text, IntegerRange range = {}) {
  int64_t value = 0;
  return parse_integer(text, range, value);
}

std::string number_error(const std::string& text, NumberRange range = {}) {
  double value = 0;
  return parse_number(text, range, value);
}

TEST(CheckedNumbers, IntegersAreTheWholeTextInRange) {
  int64_t v = 0;
  EXPECT_EQ(parse_integer("42", {}, v), "");
  EXPECT_EQ(v, 42);
  EXPECT_EQ(parse_integer("+7", {}, v), "");
  EXPECT_EQ(v, 7);
  EXPECT_EQ(parse_integer("-9223372036854775808", {}, v), "");
  EXPECT_EQ(v, std::numeric_limits<int64_t>::min());
  for (const char* bad : {"", " 1", "1 ", "1.5", "1e3", "0x10", "four", "+-1", "++1", "-"})
    EXPECT_EQ(integer_error(bad), fmt::format("expected an integer, got '{}'", bad)) << bad;
  EXPECT_EQ(integer_error("0", {1}), "expected an integer >= 1, got '0'");
  EXPECT_EQ(integer_error("9", {0, 8}), "expected an integer in [0, 8], got '9'");
  EXPECT_EQ(integer_error("-1", {0, 8}), "expected an integer in [0, 8], got '-1'");
}

TEST(CheckedNumbers, IntegersBeyond64BitsAreRefusedNotSaturated) {
  EXPECT_EQ(integer_error("99999999999999999999"),
            "expected an integer in [-9223372036854775808, 9223372036854775807], got "
            "'99999999999999999999'");
  EXPECT_EQ(integer_error("18446744073709551616", {0}),
            "expected an integer in [0, 9223372036854775807], got '18446744073709551616'");
  EXPECT_EQ(integer_error("-99999999999999999999", {0, 10}),
            "expected an integer in [0, 10], got '-99999999999999999999'");
}

TEST(CheckedNumbers, NumbersMustBeRepresentableInFloat32) {
  double v = 0;
  EXPECT_EQ(parse_number("1e-3", {}, v), "");
  EXPECT_EQ(v, 1e-3);
  EXPECT_EQ(parse_number("0", {}, v), "");
  EXPECT_EQ(parse_number("0.0e-99", {}, v), "");  // zero, however written
  EXPECT_EQ(v, 0.0);
  EXPECT_EQ(parse_number("1.2e-38", {}, v), "");  // just above the smallest normal float
  EXPECT_EQ(parse_number("3.4e38", {}, v), "");
  for (const char* tiny : {"1e-50", "-1e-40", "1e-400"})
    EXPECT_EQ(number_error(tiny),
              fmt::format("{} is out of range (a number other than 0 must be at least "
                          "1.17549e-38 in magnitude)",
                          tiny));
  for (const char* huge : {"1e39", "-1e39", "1e400"})
    EXPECT_EQ(number_error(huge),
              fmt::format("{} is out of range (a number must be at most 3.40282e+38 in magnitude)",
                          huge));
  for (const char* bad : {"", "nan", "inf", "-inf", ".inf", "0x1p3", " 1", "1 ", "1e", "abc"})
    EXPECT_EQ(number_error(bad), fmt::format("expected a number, got '{}'", bad)) << bad;
  EXPECT_EQ(number_error("0", {0, 1, true}), "expected a number in (0, 1], got '0'");
  EXPECT_EQ(number_error("2e6", {0, 1e6}), "expected a number in [0, 1e+06], got '2e6'");
}

TEST(CheckedNumbers, ListsKeepTheirEmptyItems) {
  EXPECT_EQ(split_list("4,8"), (std::vector<std::string>{"4", "8"}));
  EXPECT_EQ(split_list("1,,2"), (std::vector<std::string>{"1", "", "2"}));
  EXPECT_EQ(split_list("1,"), (std::vector<std::string>{"1", ""}));
  EXPECT_EQ(split_list(""), (std::vector<std::string>{""}));
}

// ---- through the binary -------------------------------------------------------------------------

class CliNumbers : public ::testing::Test {
 protected:
  void SetUp() override {
    write_file(dir_ / "tiny.yaml", tiny_config("tiny", "training:\n  steps: 2\n  warmup: 1\n"));
  }

  void expect_user_error(const std::vector<std::string>& args,
                         const std::vector<std::string>& parts) {
    const std::vector<std::string> before = listing(dir_.path());
    const Outcome o = run_pelab(args, dir_.path());
    EXPECT_EQ(user_error_problem(o, parts), "") << ::testing::PrintToString(args);
    EXPECT_EQ(listing(dir_.path()), before) << "files were left behind";
  }

  TempDir dir_;
};

// The commands, nested ones included ("analyze encoding"), from the help of `pelab`.
std::vector<std::vector<std::string>> all_commands(const fs::path& cwd) {
  std::vector<std::vector<std::string>> commands, todo{{}};
  const std::regex line(R"(^  ([a-z][a-z-]*) )");
  while (!todo.empty()) {
    const std::vector<std::string> command = todo.back();
    todo.pop_back();
    std::vector<std::string> args = command;
    args.push_back("--help");
    const Outcome o = run_pelab(args, cwd);
    bool in_subcommands = false;
    for (const std::string& l : lines_of(o.out)) {
      if (l.rfind("Subcommands:", 0) == 0) in_subcommands = true;
      std::smatch m;
      if (in_subcommands && std::regex_search(l, m, line)) {
        std::vector<std::string> sub = command;
        sub.push_back(m[1]);
        todo.push_back(sub);
      }
    }
    if (!command.empty()) commands.push_back(command);
  }
  return commands;
}

struct NumericOption {
  std::vector<std::string> command;
  std::string name;
  bool list = false;
  bool number = false;  // a real number, not an integer
};

// The options of `command` whose value is a number or a list, by the type its help shows
// (INT, NUMBER, NAME,... for pelab's checked options; UINT, FLOAT or TEXT ... for an option
// CLI11 would convert itself, which the tests below then catch).
std::vector<NumericOption> numeric_options(const std::vector<std::string>& command,
                                           const fs::path& cwd) {
  std::vector<std::string> args = command;
  args.push_back("--help");
  const Outcome o = run_pelab(args, cwd);
  const std::regex option(R"(^  (?:-\w,)?(--[a-z-]+) ([A-Z][A-Z,.-]*)( \.\.\.)?)");
  std::vector<NumericOption> found;
  for (const std::string& l : lines_of(o.out)) {
    std::smatch m;
    if (!std::regex_search(l, m, option)) continue;
    const std::string type = m[2];
    const bool list = m[3].matched || type.find(',') != std::string::npos;
    const bool numeric = std::regex_search(type, std::regex("INT|FLOAT|NUMBER|^N,"));
    if (!numeric && !list) continue;
    if (m[1] == "--slurm-opt" || m[1] == "--param" || m[1] == "--set")
      continue;  // KEY=VALUE, repeated
    found.push_back({command, m[1], list, std::regex_search(type, std::regex("FLOAT|NUMBER"))});
  }
  return found;
}

// Every numeric and list option of every command refuses, at parse time and in one line that
// names the option and quotes the value: overflow, text, and (lists) empty items; numbers
// that float32 cannot hold. The trailing unknown option makes sure that nothing runs even
// if a value were wrongly accepted: the test would then see CLI11's complaint about it
// instead.
TEST_F(CliNumbers, EveryNumericAndListOptionOfEveryCommandIsChecked) {
  const std::vector<std::vector<std::string>> commands = all_commands(dir_.path());
  ASSERT_GE(commands.size(), 14u);
  std::set<std::string> seen;
  for (const std::vector<std::string>& command : commands)
    for (const NumericOption& o : numeric_options(command, dir_.path())) {
      seen.insert(o.name);
      std::vector<std::string> bad = {"1,,2", "1,", ",1"};
      if (!o.list) bad.clear();
      if (o.number) {
        for (const char* v : {"1e-50", "1e39", "nan", "x"}) bad.push_back(v);
      } else if (o.name != "--config" && o.name != "--scheme" && o.name != "--schemes" &&
                 o.name != "--only") {
        for (const char* v : {"99999999999999999999", "-99999999999999999999", "x", "1.5"})
          bad.push_back(v);
      }
      for (const std::string& value : bad) {
        // The option's check runs before CLI11 looks for required arguments, so none are
        // given: only the option can be at fault.
        std::vector<std::string> args = command;
        args.insert(args.end(), {o.name + "=" + value, "--no-such-option"});
        // Numbers beyond float32 are named unquoted, as in a config.
        const bool bare = o.number && value.rfind("1e", 0) == 0;
        expect_user_error(args,
                          {o.name + ": ", bare ? value + " is out of range" : "'" + value + "'"});
      }
    }
  // The scan found the options this issue is about.
  for (const char* name : {"--examples", "--lengths", "--seed", "--reference", "--shifts",
                           "--stop-after", "--jobs", "--threads", "--threshold", "--count"})
    EXPECT_TRUE(seen.count(name)) << name;
}

// The options of `command` that take a value (every option its help shows with a type; flags
// have none), and its positionals, in order.
struct ValueArguments {
  std::vector<std::string> options, positionals;
};
ValueArguments value_arguments(const std::vector<std::string>& command, const fs::path& cwd) {
  std::vector<std::string> args = command;
  args.push_back("--help");
  const Outcome o = run_pelab(args, cwd);
  const std::regex option(R"(^  (?:-\w,)?(--[a-z-]+) [A-Z])");
  const std::regex positional(R"(^  ([a-z][a-z_-]*) [A-Z])");
  ValueArguments found;
  std::string section;
  for (const std::string& l : lines_of(o.out)) {
    if (!l.empty() && l[0] != ' ') section = l;
    std::smatch m;
    if (section == "Positionals:" && std::regex_search(l, m, positional))
      found.positionals.push_back(m[1]);
    else if (section == "Options:" && std::regex_search(l, m, option))
      found.options.push_back(m[1]);
  }
  return found;
}

// '' names nothing: as an option's value it read as "not given" (`sweep --status ''` said
// the config was required; `dump --batch ''` said "not both" of two things neither given),
// or as the current directory (`--config-path ''`). Every option and positional of every
// command refuses it at parse time, naming itself; the trailing unknown option makes sure
// nothing runs even if the value were taken.
TEST_F(CliNumbers, EveryOptionAndPositionalOfEveryCommandRefusesAnEmptyValue) {
  std::set<std::string> seen;
  for (const std::vector<std::string>& command : all_commands(dir_.path())) {
    const ValueArguments found = value_arguments(command, dir_.path());
    for (const std::string& name : found.options) {
      seen.insert(name);
      // (`--out=` is not one: CLI11 then takes the next argument as the value.)
      std::vector<std::string> args = command;
      args.insert(args.end(), {name, "", "--no-such-option"});
      expect_user_error(args, {name + ": an empty value ('')"});
    }
    // Positional k: k placeholders before it.
    for (size_t k = 0; k < found.positionals.size(); ++k) {
      seen.insert(found.positionals[k]);
      std::vector<std::string> args = command;
      args.insert(args.end(), k, "x");
      args.insert(args.end(), {"", "--no-such-option"});
      expect_user_error(args, {found.positionals[k] + ": an empty argument ('')"});
    }
  }
  for (const char* name : {"--config-path", "--batch", "--status", "--out", "--set", "--metric",
                           "--slurm-opt", "config", "overrides", "run", "dirs"})
    EXPECT_TRUE(seen.count(name)) << name;
  // The control: the same commands with a value get past the check (to the unknown option).
  const Outcome o = run_pelab({"sweep", "--status", "x", "--no-such-option"}, dir_.path());
  EXPECT_EQ(user_error_problem(o, {"--no-such-option"}), "");
}

TEST_F(CliNumbers, EmptyValuesOfTheIssueNameTheirOption) {
  expect_user_error({"print-config", "tiny.yaml", "--config-path", ""},
                    {"--config-path: an empty value ('')"});
  expect_user_error({"dump", "run", "--batch", "", "--out", "d.safetensors"},
                    {"--batch: an empty value ('')"});
  expect_user_error({"sweep", "--status", ""}, {"--status: an empty value ('')"});
  expect_user_error({"train", ""}, {"config: an empty argument ('')"});
}

// ---- the cases of the issue --------------------------------------------------------------------

TEST_F(CliNumbers, EvalExamplesIsHeldToTheConfigsBound) {
  for (const char* n : {"-1", "0", "1000001"})
    expect_user_error(
        {"eval", "run", "--examples", n},
        {fmt::format("--examples: expected an integer in [1, 1000000], got '{}'", n)});
}

TEST_F(CliNumbers, EmptyListItemsAreRefused) {
  expect_user_error({"eval", "run", "--lengths", "1,,2"},
                    {"--lengths: expected a comma-separated list without empty items, got '1,,2'"});
  expect_user_error({"gen", "copy", "--lengths", "1,,2", "--count", "1", "--out", "x.jsonl"},
                    {"--lengths: expected a comma-separated list without empty items"});
  expect_user_error({"analyze", "positions", "run", "--lengths", "1,,2"},
                    {"--lengths: expected a comma-separated list without empty items"});
}

TEST_F(CliNumbers, SeedIsNeverWrapped) {
  expect_user_error(
      {"gen", "copy", "--lengths", "4", "--count", "1", "--out", "x.jsonl", "--seed", "-1"},
      {"--seed: expected an integer >= 0, got '-1'"});
  expect_user_error({"gen", "copy", "--lengths", "4", "--count", "1", "--out", "x.jsonl", "--seed",
                     "18446744073709551616"},
                    {"--seed: expected an integer in [0, 9223372036854775807], got "
                     "'18446744073709551616'"});
}

TEST_F(CliNumbers, EncodingReferenceAndShiftsAreEncodedPositions) {
  expect_user_error({"analyze", "encoding", "tiny.yaml", "--reference", "-5"},
                    {"--reference: expected an integer in [0, 8191], got '-5'",
                     "(see pelab analyze encoding --help)"});
  expect_user_error({"analyze", "encoding", "tiny.yaml", "--shifts", "-3,100000"},
                    {"--shifts: expected an integer in [0, 8191], got '-3'"});
  expect_user_error({"analyze", "encoding", "tiny.yaml", "--shifts", "100000"},
                    {"--shifts: expected an integer in [0, 8191], got '100000'"});
  // Beyond the positions actually encoded.
  expect_user_error({"analyze", "encoding", "tiny.yaml", "--positions", "16", "--reference", "16"},
                    {"--reference: expected an integer in [0, 15], got '16'"});
  expect_user_error({"analyze", "encoding", "tiny.yaml", "--positions", "16", "--shifts", "1,20"},
                    {"--shifts: expected an integer in [0, 15], got '20'"});
}

TEST_F(CliNumbers, LearningRateMustBeAFloat32) {
  expect_user_error({"train", "tiny.yaml", "training.lr=1e-50", "--out", "run"},
                    {"command line 'training.lr=1e-50': training.lr: 1e-50 is out of range (a "
                     "number other than 0 must be at least 1.17549e-38 in magnitude)"});
  expect_user_error({"train", "tiny.yaml", "training.lr=1e39", "--out", "run"},
                    {"training.lr: 1e39 is out of range (a number must be at most 3.40282e+38"});
  write_file(dir_ / "tiny_lr.yaml", tiny_config("t", "training:\n  lr: 1e-50\n"));
  expect_user_error({"print-config", "tiny_lr.yaml"},
                    {"tiny_lr.yaml:", "training.lr: 1e-50 is out of range"});
}

TEST_F(CliNumbers, HugeLengthIsQuotedAsGiven) {
  expect_user_error({"eval", "run", "--lengths", "99999999999999999999"},
                    {"--lengths: expected an integer in [0, 100000], got '99999999999999999999'"});
  expect_user_error({"print-config", "tiny.yaml", "evaluation.lengths=[4, 99999999999999999999]"},
                    {"evaluation.lengths: expected an integer in [-9223372036854775808, "
                     "9223372036854775807], got '99999999999999999999'"});
}

// Valid values still work, and lists and ranges still parse.
TEST_F(CliNumbers, ValidValuesAreTakenAsGiven) {
  Outcome o =
      run_pelab({"gen", "copy", "--lengths", "1-3,5", "--count", "2", "--seed", "+7", "--out", "-"},
                dir_.path());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.err.find("8 examples of copy (sizes 1-3, 5, 2 each, seed 7;"), std::string::npos)
      << o.err;
  o = run_pelab({"analyze", "encoding", "tiny.yaml", "positional.type=sinusoidal", "--positions",
                 "64", "--reference", "5", "--shifts", "1,40", "--moving-lengths", "8",
                 "--threshold", "0.5", "--out", "enc"},
                dir_.path());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("P(5)·P(j)"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("Δ=1: "), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("Δ=40: "), std::string::npos) << o.out;
}

}  // namespace
}  // namespace pelab::testing
