// The JSONL line reader at the edges of JSON: how deep a line may nest, where duplicate keys
// are refused, numbers past int64 and double, escapes, comments and bytes that are not UTF-8.
// Each message is checked whole, since docs/errors.md promises them byte for byte.
#include <gtest/gtest.h>

#include <string>

#include "pelab/core/error.h"
#include "pelab/data/file_dataset.h"

namespace pelab {
namespace {

std::string error_of(const std::string& line) {
  try {
    parse_dataset_text(line + "\n", "j.jsonl");
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(DatasetJsonl, NestingStopsBeforeASymbolCouldBeThreeListsDeep) {
  // A list inside a symbol list is named by its type, however empty; one more level stops
  // the parse (whatever follows), so a line of many '[' costs nothing.
  EXPECT_EQ(error_of(R"({"input": [[[]]], "target": ["b"]})"),
            "j.jsonl:1: input[0]: expected a symbol (a string), got array");
  EXPECT_EQ(error_of(R"({"input": [[["a"]]], "target": ["b"]})"),
            "j.jsonl:1: nested too deeply (symbols are strings in flat lists)");
  EXPECT_EQ(error_of(R"({"input": [[[[]]]], "target": ["b"]})"),
            "j.jsonl:1: nested too deeply (symbols are strings in flat lists)");
  EXPECT_EQ(error_of(R"({"input": ["a"], "target": ["b"], "x": [[[[1]]]] })"),
            "j.jsonl:1: nested too deeply (symbols are strings in flat lists)");
}

TEST(DatasetJsonl, DuplicateKeysAreRefusedAtTheTopLevelOnly) {
  EXPECT_EQ(error_of(R"({"input": ["a"], "target": ["b"], "target": ["c"]})"),
            "j.jsonl:1: the key 'target' is given twice");
  // The same key spelled with an escape is the same key.
  EXPECT_EQ(error_of(R"({"input": ["a"], "in\u0070ut": ["b"], "target": ["c"]})"),
            "j.jsonl:1: the key 'input' is given twice");
  // Inside a value only the type matters, and that is the error.
  EXPECT_EQ(error_of(R"({"input": [{"a": 1, "a": 2}], "target": ["b"]})"),
            "j.jsonl:1: input[0]: expected a symbol (a string), got object");
}

TEST(DatasetJsonl, NumbersBeyondTheirTypes) {
  EXPECT_EQ(error_of(R"({"input": ["a", 1e400], "target": ["b"]})"),
            "j.jsonl:1: not valid JSON: number overflow parsing '1e400'");
  EXPECT_EQ(error_of(R"({"input": ["a", 123456789012345678901234567890], "target": ["b"]})"),
            "j.jsonl:1: input[1]: expected a symbol (a string), got number (write it as "
            "\"1.2345678901234568e+29\")");
  EXPECT_EQ(error_of(R"({"input": ["a"], "target": ["b"], "length": -9223372036854775809})"),
            "j.jsonl:1: length: expected an integer, got number");
  EXPECT_EQ(error_of(R"({"input": ["a"], "target": ["b"], "length": 1.0})"),
            "j.jsonl:1: length: expected an integer, got number");
}

TEST(DatasetJsonl, StringsAndBytes) {
  // A lone surrogate escape is the JSON parser's error, with its column.
  EXPECT_EQ(error_of(R"({"input": ["a\ud800"], "target": ["b"]})"),
            "j.jsonl:1: not valid JSON: column 20: syntax error while parsing value - invalid "
            "string: surrogate U+D800..U+DBFF must be followed by U+DC00..U+DFFF; last read: "
            "'\"a\\ud800\"'");
  // Bytes that are not UTF-8 are refused before the JSON parser sees the line.
  EXPECT_EQ(error_of("{\"input\": [\"a\xff\"], \"target\": [\"b\"]}"),
            "j.jsonl:1: invalid UTF-8 (byte 0xff at column 14); a dataset is UTF-8 text");
  // Comments are not JSON.
  EXPECT_EQ(error_of(R"({"input": ["a"], "target": ["b"]} // c)"),
            "j.jsonl:1: not valid JSON: column 35: syntax error while parsing value - invalid "
            "literal; last read: '\"b\"]} /'; expected end of input");
  // An escaped symbol reads as its characters.
  const ParsedDataset d = parse_dataset_text(
      "{\"input\": [\"\\u00e9\", \"\xc3\xa9\"], \"target\": [\"b\", null]}\n", "j.jsonl");
  ASSERT_EQ(d.examples.size(), 1u);
  EXPECT_EQ(d.symbols.at(0), "\xc3\xa9");
  EXPECT_EQ(d.examples[0].input, (std::vector<int32_t>{0, 0}));
}

TEST(DatasetJsonl, ProblemsAreReportedInKeyOrder) {
  // The checks read a line's keys in sorted order, not as written.
  EXPECT_EQ(error_of(R"({"zz": 1, "aa": 2})"),
            "j.jsonl:1: unknown header key 'aa' (valid: layout, input_symbols, output_symbols, "
            "unscored; an example line has \"input\")");
}

}  // namespace
}  // namespace pelab
