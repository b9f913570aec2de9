// Private helpers of the dataset reader, writer and file task (src/data/dataset_*.cpp,
// src/data/file_task.cpp): the byte and symbol checks every file passes, how a message
// quotes user text, and what each layout adds to an example's tokens.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pelab/core/strings.h"
#include "pelab/data/task.h"

namespace pelab::dataset {

inline constexpr const char* kSeparator = "|";  // appended layout: between input and queries
inline constexpr const char* kQuery = "?";      // appended and classification: a query token

// The byte offset of the first invalid UTF-8 sequence in [p, p + n), or n if there is none
// (overlong forms, surrogates and code points above U+10FFFF are invalid).
size_t invalid_utf8_at(const unsigned char* p, size_t n);

// A user-given string for a message: quoted, control bytes escaped, at most ~60 bytes.
std::string quote(const std::string& s);

// Why `s` cannot be a symbol, or "" if it can: non-empty, at most kDatasetMaxSymbolBytes,
// no whitespace or control characters (so that every symbol can be written in TSV).
std::string symbol_problem(const std::string& s);

// The tokens an example of `inputs` input and `targets` target symbols takes as laid out.
int64_t tokens_for(TaskLayout layout, int64_t inputs, int64_t targets);

// The layout a header names ("tagging", "appended", "classification"), if any.
std::optional<TaskLayout> layout_named(const std::string& name);

// The layout's special input tokens, and the symbol list with them appended where missing.
std::vector<std::string> special_tokens(TaskLayout layout);
void add_specials(std::vector<std::string>& input_symbols, TaskLayout layout);

}  // namespace pelab::dataset
