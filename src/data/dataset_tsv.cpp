// TSV dataset lines: `input symbols TAB target symbols [TAB length]`, symbols separated by
// spaces, after optional `#key values` header lines ('# ' starts a comment).
#include <charconv>

#include "data/dataset_builder.h"
#include "data/dataset_checks.h"
#include "pelab/core/error.h"

namespace pelab::dataset {

namespace {

// The space-separated words of a field.
std::vector<std::string> words(std::string_view field) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < field.size()) {
    while (i < field.size() && field[i] == ' ') ++i;
    const size_t start = i;
    while (i < field.size() && field[i] != ' ') ++i;
    if (i > start) out.emplace_back(field.substr(start, i - start));
  }
  return out;
}

// The TAB-separated fields of a line, at most 4 (a fourth means too many).
std::vector<std::string_view> fields_of(std::string_view text) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  for (;;) {
    const size_t t = text.find('\t', start);
    fields.push_back(
        text.substr(start, t == std::string_view::npos ? text.size() - start : t - start));
    if (t == std::string_view::npos || fields.size() > 3) break;
    start = t + 1;
  }
  return fields;
}

std::vector<int32_t> symbols_of(DatasetBuilder& builder, int64_t line, std::string_view field,
                                const char* what) {
  const std::vector<std::string> symbols = words(field);
  std::vector<int32_t> ids;
  ids.reserve(symbols.size());
  for (size_t i = 0; i < symbols.size(); ++i)
    ids.push_back(builder.intern(line, symbols[i], fmt::format("{} symbol {}", what, i + 1)));
  return ids;
}

int64_t length_of(const DatasetBuilder& builder, int64_t line, std::string_view field) {
  const std::vector<std::string> l = words(field);
  if (l.size() != 1) builder.fail(line, "the third field (the length) must be one integer");
  const std::string& s = l[0];
  int64_t length = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), length);
  if (ec == std::errc::result_out_of_range)
    builder.fail(line, fmt::format("the length {} is too large", quote(s)));
  if (ec != std::errc() || ptr != s.data() + s.size())
    builder.fail(line, fmt::format("the length {} is not an integer", quote(s)));
  if (length < 1) builder.fail(line, "the length must be at least 1");
  return length;
}

}  // namespace

void TsvLineReader::directive(int64_t line, std::string_view text) {
  if (text.size() < 2 || text[1] == ' ') return;  // "#" or "# ..." : a comment
  const std::vector<std::string> parts = words(text.substr(1));
  const std::string& key = parts.front();
  static const std::vector<std::string> kValid = {"#layout", "#input_symbols", "#output_symbols",
                                                  "#unscored"};
  if (key != "layout" && key != "input_symbols" && key != "output_symbols" && key != "unscored")
    builder_.fail(line, fmt::format("unknown header line {} (valid: {}; '# ' starts a comment)",
                                    quote("#" + key), join(kValid)));
  if (builder_.has_examples())
    builder_.fail(line, fmt::format("the header line #{} comes after the first example", key));
  if (!keys_.insert(key).second) builder_.fail(line, fmt::format("#{} is given twice", key));
  builder_.begin_header(line);
  const std::vector<std::string> values(parts.begin() + 1, parts.end());
  if (key == "layout" || key == "unscored") {
    if (values.size() != 1)
      builder_.fail(line, fmt::format("#{} takes one value, got {}", key, values.size()));
    if (key == "layout")
      builder_.set_layout(line, values[0]);
    else
      builder_.set_unscored(line, values[0]);
  } else {
    builder_.set_symbols(line, key, values);
  }
}

void TsvLineReader::read(int64_t line, std::string_view text) {
  const size_t tab = text.find('\t');
  if (!text.empty() && text[0] == '#' && tab == std::string_view::npos) {
    directive(line, text);
    return;
  }
  if (tab == std::string_view::npos)
    builder_.fail(line,
                  "no TAB: a line is the input symbols, a TAB, then the target symbols (symbols "
                  "separated by spaces)");
  if (!builder_.has_examples()) builder_.finish_header_once(line);
  const std::vector<std::string_view> fields = fields_of(text);
  if (fields.size() > 3)
    builder_.fail(
        line, "more than 3 TAB-separated fields (a line is input, target and an optional length)");
  std::vector<int32_t> in = symbols_of(builder_, line, fields[0], "input");
  std::vector<int32_t> tg = symbols_of(builder_, line, fields[1], "target");
  const int64_t length = fields.size() == 3 ? length_of(builder_, line, fields[2]) : 0;
  builder_.add_example(line, std::move(in), std::move(tg), /*is_string=*/false, length);
}

}  // namespace pelab::dataset
