// User datasets: the JSONL/TSV reader and writer (format in datasets/README.md) and the
// FileTask built from a training and an evaluation file.
//
// The reader is written for hostile input: it checks size, bytes (NUL, UTF-8) and line
// length before parsing, bounds JSON nesting, and never indexes by a value it has not
// checked. Every error is a pelab::Error naming the file and line.
#include "pelab/data/file_dataset.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <unordered_map>

#include "pelab/core/error.h"

namespace pelab {

namespace fs = std::filesystem;

namespace {

using json = nlohmann::json;

constexpr const char* kSeparator = "|";  // appended layout: between the input and the queries
constexpr const char* kQuery = "?";      // appended and classification layouts: a query token

// ---- text checks -------------------------------------------------------------------------------

// The byte offset of the first invalid UTF-8 sequence in [p, p + n), or n if there is none
// (overlong forms, surrogates and code points above U+10FFFF are invalid).
size_t invalid_utf8_at(const unsigned char* p, size_t n) {
  size_t i = 0;
  while (i < n) {
    const unsigned char c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      return i;
    }
    if (i + len > n) return i;
    if (p[i + 1] < lo || p[i + 1] > hi) return i;
    for (size_t k = 2; k < len; ++k)
      if (p[i + k] < 0x80 || p[i + k] > 0xBF) return i;
    i += len;
  }
  return n;
}

// A user-given string for a message: quoted, control bytes escaped, at most ~60 bytes.
std::string quote(const std::string& s) {
  std::string out = "'";
  size_t i = 0;
  for (; i < s.size() && i < 60; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7F)
      out += fmt::format("\\x{:02x}", c);
    else
      out += static_cast<char>(c);
  }
  if (i < s.size()) {
    while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xC0) == 0x80) out.pop_back();
    if (!out.empty() && static_cast<unsigned char>(out.back()) >= 0xC0) out.pop_back();
    out += "...";
  }
  return out + "'";
}

// Why `s` cannot be a symbol, or "" if it can: non-empty, at most kDatasetMaxSymbolBytes,
// no whitespace or control characters (so that every symbol can be written in TSV).
std::string symbol_problem(const std::string& s) {
  if (s.empty()) return "an empty symbol";
  if (static_cast<int64_t>(s.size()) > kDatasetMaxSymbolBytes)
    return fmt::format("a symbol of {} bytes (the limit is {})", s.size(), kDatasetMaxSymbolBytes);
  for (const char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c <= 0x20 || c == 0x7F)
      return fmt::format("the symbol {} contains whitespace or a control character", quote(s));
  }
  return "";
}

std::string join(const std::vector<std::string>& items, const char* sep = ", ") {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : sep) + item;
  return out;
}

std::string lower_extension(const std::string& path) {
  std::string ext = fs::path(path).extension().string();
  for (char& c : ext)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return ext;
}

int64_t tokens_for(TaskLayout layout, int64_t inputs, int64_t targets) {
  switch (layout) {
    case TaskLayout::Tagging:
      return inputs;
    case TaskLayout::AppendedQueries:
      return inputs + 1 + targets;
    case TaskLayout::Classification:
      return inputs + 1;
  }
  return inputs;
}

std::optional<TaskLayout> layout_named(const std::string& name) {
  if (name == "tagging") return TaskLayout::Tagging;
  if (name == "appended") return TaskLayout::AppendedQueries;
  if (name == "classification") return TaskLayout::Classification;
  return std::nullopt;
}

// Thrown from inside the JSON parser's callback (too deep, duplicate key).
struct JsonLimit {
  std::string what;
};

// ---- the parser
// ----------------------------------------------------------------------------------

class Parser {
 public:
  Parser(const std::string& text, std::string source, std::optional<DatasetDefaults> defaults)
      : text_(text), defaults_(std::move(defaults)) {
    out_.source = std::move(source);
    if (defaults_) out_.unscored = defaults_->unscored;  // until the header says otherwise
  }

  ParsedDataset run() {
    PELAB_CHECK(static_cast<int64_t>(text_.size()) <= kDatasetMaxFileBytes,
                "{}: {} bytes is larger than the {} MiB limit for a dataset file", out_.source,
                text_.size(), kDatasetMaxFileBytes >> 20);
    const std::optional<DatasetFormat> by_name = dataset_format_of_path(out_.source);
    bool format_known = by_name.has_value();
    if (by_name) out_.format = *by_name;
    size_t pos = 0;
    if (text_.compare(0, 3, "\xEF\xBB\xBF") == 0) pos = 3;  // a UTF-8 byte-order mark
    int64_t line = 0;
    while (pos < text_.size()) {
      ++line;
      size_t end = text_.find('\n', pos);
      if (end == std::string::npos) end = text_.size();
      const size_t next = end + 1;
      if (end > pos && text_[end - 1] == '\r') --end;
      if (static_cast<int64_t>(end - pos) > kDatasetMaxLineBytes)
        fail(line, fmt::format("the line has {} bytes; the limit is {} (1 MiB)", end - pos,
                               kDatasetMaxLineBytes));
      const std::string_view view(text_.data() + pos, end - pos);
      check_bytes(line, view);
      pos = next;
      if (view.find_first_not_of(" \t") == std::string_view::npos) continue;  // blank
      if (!format_known) {
        const size_t first = view.find_first_not_of(" \t");
        out_.format = view[first] == '{' ? DatasetFormat::Jsonl : DatasetFormat::Tsv;
        format_known = true;
      }
      if (out_.format == DatasetFormat::Jsonl)
        jsonl_line(line, std::string(view));
      else
        tsv_line(line, view);
    }
    if (out_.examples.empty()) {
      if (line == 0 || !out_.has_header)
        throw Error(fmt::format("{}: the file is empty (no examples)", out_.source));
      throw Error(fmt::format("{}: the file has a header but no examples", out_.source));
    }
    if (!layout_known_) resolve_layout(std::nullopt);
    return std::move(out_);
  }

 private:
  [[noreturn]] void fail(int64_t line, const std::string& what) const {
    throw Error(fmt::format("{}:{}: {}", out_.source, line, what));
  }

  void check_bytes(int64_t line, std::string_view view) const {
    const size_t nul = view.find('\0');
    if (nul != std::string_view::npos)
      fail(line, fmt::format("binary content (a NUL byte at column {}); a dataset is UTF-8 text",
                             nul + 1));
    const size_t bad =
        invalid_utf8_at(reinterpret_cast<const unsigned char*>(view.data()), view.size());
    if (bad != view.size())
      fail(line, fmt::format("invalid UTF-8 (byte 0x{:02x} at column {}); a dataset is UTF-8 text",
                             static_cast<unsigned char>(view[bad]), bad + 1));
  }

  int32_t intern(int64_t line, const std::string& symbol, const std::string& where) {
    const auto it = index_.find(symbol);
    if (it != index_.end()) return it->second;
    const std::string problem = symbol_problem(symbol);
    if (!problem.empty()) fail(line, fmt::format("{}: {}", where, problem));
    const int32_t id = static_cast<int32_t>(out_.symbols.size());
    out_.symbols.push_back(symbol);
    index_.emplace(symbol, id);
    return id;
  }

  // ---- header ----------------------------------------------------------------------------------

  void set_layout(int64_t line, const std::string& name) {
    const std::optional<TaskLayout> layout = layout_named(name);
    if (!layout)
      fail(line, fmt::format("unknown layout {} (valid: tagging, appended, classification)",
                             quote(name)));
    out_.layout = *layout;
    out_.layout_declared = true;
  }

  void set_unscored(int64_t line, const std::string& symbol) {
    const std::string problem = symbol_problem(symbol);
    if (!problem.empty()) fail(line, "unscored: " + problem);
    out_.unscored = symbol;
  }

  std::vector<std::string> symbol_list(int64_t line, const std::string& key,
                                       const std::vector<std::string>& symbols) {
    if (symbols.empty()) fail(line, key + ": the list is empty");
    if (static_cast<int64_t>(symbols.size()) > kDatasetMaxVocabulary)
      fail(line, fmt::format("{}: {} symbols; the limit is {}", key, symbols.size(),
                             kDatasetMaxVocabulary));
    std::set<std::string> seen;
    for (const std::string& s : symbols) {
      const std::string problem = symbol_problem(s);
      if (!problem.empty()) fail(line, key + ": " + problem);
      if (!seen.insert(s).second) fail(line, fmt::format("{}: {} is listed twice", key, quote(s)));
    }
    return symbols;
  }

  // Checks a header once complete (before the first example).
  void finish_header(int64_t line) {
    if (!out_.has_header) return;
    if (out_.input_symbols.empty() != out_.output_symbols.empty())
      fail(line,
           "the header gives only one of input_symbols and output_symbols; give both or "
           "neither (then they are inferred)");
    out_.vocabulary_declared = !out_.input_symbols.empty();
    if (out_.vocabulary_declared) {
      for (size_t i = 0; i < out_.input_symbols.size(); ++i)
        declared_in_.emplace(out_.input_symbols[i], static_cast<int32_t>(i));
      for (size_t i = 0; i < out_.output_symbols.size(); ++i)
        declared_out_.emplace(out_.output_symbols[i], static_cast<int32_t>(i));
      if (out_.layout == TaskLayout::Tagging && declared_out_.count(out_.unscored))
        fail(out_.header_line,
             fmt::format("the unscored marker {} is also an output symbol; choose another "
                         "marker with 'unscored'",
                         quote(out_.unscored)));
    }
  }

  // The layout and marker examples are read with: the header's, else the defaults', else
  // (first example) inferred.
  void resolve_layout(std::optional<TaskLayout> inferred) {
    layout_known_ = true;
    if (!out_.layout_declared) {
      if (defaults_)
        out_.layout = defaults_->layout;
      else if (inferred)
        out_.layout = *inferred;
      else
        out_.layout = TaskLayout::Tagging;
    }
  }

  // ---- JSONL -----------------------------------------------------------------------------------

  json parse_json(int64_t line, const std::string& text) {
    std::set<std::string> keys;
    json::parser_callback_t cb = [&keys](int depth, json::parse_event_t event, json& parsed) {
      if (depth > 3) throw JsonLimit{"nested too deeply (symbols are strings in flat lists)"};
      if (event == json::parse_event_t::key && depth == 1 && parsed.is_string() &&
          !keys.insert(parsed.get_ref<const std::string&>()).second)
        throw JsonLimit{
            fmt::format("the key {} is given twice", quote(parsed.get_ref<const std::string&>()))};
      return true;
    };
    try {
      return json::parse(text, cb, /*allow_exceptions=*/true, /*ignore_comments=*/false);
    } catch (const JsonLimit& e) {
      fail(line, e.what);
    } catch (const json::exception& e) {
      std::string what = e.what();
      const size_t bracket = what.find("] ");
      if (bracket != std::string::npos) what = what.substr(bracket + 2);
      if (what.rfind("parse error at line 1, ", 0) == 0) what = what.substr(23);
      if (what.size() > 160) what = what.substr(0, 160) + "...";
      for (char& c : what)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) c = '?';
      fail(line, "not valid JSON: " + what);
    }
  }

  static const char* type_of(const json& j) { return j.type_name(); }

  std::vector<std::string> json_strings(int64_t line, const json& j, const std::string& key) {
    if (!j.is_array())
      fail(line, fmt::format("{}: expected a list of strings, got {}", key, type_of(j)));
    std::vector<std::string> out;
    out.reserve(j.size());
    for (size_t i = 0; i < j.size(); ++i) {
      if (!j[i].is_string())
        fail(line, fmt::format("{}[{}]: expected a string, got {}", key, i, type_of(j[i])));
      out.push_back(j[i].get<std::string>());
    }
    return out;
  }

  void jsonl_header(int64_t line, const json& j) {
    out_.has_header = true;
    out_.header_line = line;
    static const std::vector<std::string> kValid = {"layout", "input_symbols", "output_symbols",
                                                    "unscored"};
    for (const auto& [key, value] : j.items()) {
      if (key == "layout") {
        if (!value.is_string())
          fail(line, fmt::format("layout: expected a string, got {}", type_of(value)));
        set_layout(line, value.get<std::string>());
      } else if (key == "input_symbols") {
        out_.input_symbols = symbol_list(line, key, json_strings(line, value, key));
      } else if (key == "output_symbols") {
        out_.output_symbols = symbol_list(line, key, json_strings(line, value, key));
      } else if (key == "unscored") {
        if (!value.is_string())
          fail(line, fmt::format("unscored: expected a string, got {}", type_of(value)));
        set_unscored(line, value.get<std::string>());
      } else {
        fail(line, fmt::format("unknown header key {} (valid: {}; an example line has \"input\")",
                               quote(key), join(kValid)));
      }
    }
    finish_header(line);
  }

  void jsonl_line(int64_t line, const std::string& text) {
    const json j = parse_json(line, text);
    if (!j.is_object())
      fail(line, fmt::format("expected a JSON object {{\"input\": [...], \"target\": ...}}, got {}",
                             type_of(j)));
    if (!j.contains("input")) {
      const bool header_like = j.contains("layout") || j.contains("input_symbols") ||
                               j.contains("output_symbols") || j.contains("unscored");
      if (!seen_line_) {
        seen_line_ = true;
        jsonl_header(line, j);
        return;
      }
      if (header_like) fail(line, "a header (an object without \"input\") must be the first line");
      fail(line, "missing key \"input\" (an example is {\"input\": [...], \"target\": ...})");
    }
    seen_line_ = true;
    for (const auto& [key, value] : j.items())
      if (key != "input" && key != "target" && key != "length")
        fail(line, fmt::format("unknown key {} (an example has \"input\", \"target\" and an "
                               "optional \"length\")",
                               quote(key)));
    if (!j.contains("target")) fail(line, "missing key \"target\"");
    const json& input = j["input"];
    if (!input.is_array())
      fail(line,
           fmt::format("input: expected a list of symbols (strings), got {}", type_of(input)));
    std::vector<int32_t> in;
    in.reserve(input.size());
    for (size_t i = 0; i < input.size(); ++i) {
      const json& s = input[i];
      if (!s.is_string())
        fail(line,
             fmt::format("input[{}]: expected a symbol (a string), got {}{}", i, type_of(s),
                         s.is_number() ? fmt::format(" (write it as \"{}\")", s.dump()) : ""));
      in.push_back(intern(line, s.get_ref<const std::string&>(), fmt::format("input[{}]", i)));
    }
    const json& target = j["target"];
    std::vector<int32_t> tg;
    bool is_string = false;
    if (target.is_string()) {
      is_string = true;
      tg.push_back(intern(line, target.get_ref<const std::string&>(), "target"));
    } else if (target.is_array()) {
      tg.reserve(target.size());
      for (size_t i = 0; i < target.size(); ++i) {
        const json& s = target[i];
        if (s.is_null()) {
          tg.push_back(RawExample::kNull);
          continue;
        }
        if (!s.is_string())
          fail(line,
               fmt::format("target[{}]: expected a symbol (a string) or null, got {}{}", i,
                           type_of(s),
                           s.is_number() ? fmt::format(" (write it as \"{}\")", s.dump()) : ""));
        tg.push_back(intern(line, s.get_ref<const std::string&>(), fmt::format("target[{}]", i)));
      }
    } else {
      fail(line, fmt::format("target: expected a list of symbols or a string label, got {}",
                             type_of(target)));
    }
    int64_t length = 0;
    if (j.contains("length")) {
      const json& l = j["length"];
      if (!l.is_number_integer())
        fail(line, fmt::format("length: expected an integer, got {}", type_of(l)));
      if (l.is_number_unsigned()) {
        const uint64_t u = l.get<uint64_t>();
        length = u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
                     ? std::numeric_limits<int64_t>::max()
                     : static_cast<int64_t>(u);
      } else {
        length = l.get<int64_t>();
      }
      if (length < 1) fail(line, "length: must be at least 1");
    }
    add_example(line, std::move(in), std::move(tg), is_string, length);
  }

  // ---- TSV -------------------------------------------------------------------------------------

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

  void tsv_directive(int64_t line, std::string_view view) {
    if (view.size() < 2 || view[1] == ' ') return;  // "#" or "# ..." : a comment
    const std::vector<std::string> parts = words(view.substr(1));
    const std::string& key = parts.front();
    static const std::vector<std::string> kValid = {"#layout", "#input_symbols", "#output_symbols",
                                                    "#unscored"};
    if (key != "layout" && key != "input_symbols" && key != "output_symbols" && key != "unscored")
      fail(line, fmt::format("unknown header line {} (valid: {}; '# ' starts a comment)",
                             quote("#" + key), join(kValid)));
    if (!out_.examples.empty())
      fail(line, fmt::format("the header line #{} comes after the first example", key));
    if (!tsv_keys_.insert(key).second) fail(line, fmt::format("#{} is given twice", key));
    if (!out_.has_header) {
      out_.has_header = true;
      out_.header_line = line;
    }
    const std::vector<std::string> values(parts.begin() + 1, parts.end());
    if (key == "layout" || key == "unscored") {
      if (values.size() != 1)
        fail(line, fmt::format("#{} takes one value, got {}", key, values.size()));
      if (key == "layout")
        set_layout(line, values[0]);
      else
        set_unscored(line, values[0]);
    } else if (key == "input_symbols") {
      out_.input_symbols = symbol_list(line, key, values);
    } else {
      out_.output_symbols = symbol_list(line, key, values);
    }
  }

  void tsv_line(int64_t line, std::string_view view) {
    const size_t tab = view.find('\t');
    if (!view.empty() && view[0] == '#' && tab == std::string_view::npos) {
      tsv_directive(line, view);
      return;
    }
    if (tab == std::string_view::npos)
      fail(line,
           "no TAB: a line is the input symbols, a TAB, then the target symbols (symbols "
           "separated by spaces)");
    if (out_.examples.empty()) finish_header_once(line);
    std::vector<std::string_view> fields;
    size_t start = 0;
    for (;;) {
      const size_t t = view.find('\t', start);
      fields.push_back(
          view.substr(start, t == std::string_view::npos ? view.size() - start : t - start));
      if (t == std::string_view::npos || fields.size() > 3) break;
      start = t + 1;
    }
    if (fields.size() > 3)
      fail(line,
           "more than 3 TAB-separated fields (a line is input, target and an optional length)");
    std::vector<int32_t> in, tg;
    const std::vector<std::string> input_words = words(fields[0]);
    in.reserve(input_words.size());
    for (size_t i = 0; i < input_words.size(); ++i)
      in.push_back(intern(line, input_words[i], fmt::format("input symbol {}", i + 1)));
    const std::vector<std::string> target_words = words(fields[1]);
    tg.reserve(target_words.size());
    for (size_t i = 0; i < target_words.size(); ++i)
      tg.push_back(intern(line, target_words[i], fmt::format("target symbol {}", i + 1)));
    int64_t length = 0;
    if (fields.size() == 3) {
      const std::vector<std::string> l = words(fields[2]);
      if (l.size() != 1) fail(line, "the third field (the length) must be one integer");
      const std::string& s = l[0];
      const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), length);
      if (ec == std::errc::result_out_of_range)
        fail(line, fmt::format("the length {} is too large", quote(s)));
      if (ec != std::errc() || ptr != s.data() + s.size())
        fail(line, fmt::format("the length {} is not an integer", quote(s)));
      if (length < 1) fail(line, "the length must be at least 1");
    }
    add_example(line, std::move(in), std::move(tg), /*is_string=*/false, length);
  }

  void finish_header_once(int64_t line) {
    if (header_finished_) return;
    header_finished_ = true;
    finish_header(line);
  }

  // ---- one example -----------------------------------------------------------------------------

  bool unscored(int32_t id) const {
    return id == RawExample::kNull || out_.symbols[id] == out_.unscored;
  }

  void add_example(int64_t line, std::vector<int32_t> in, std::vector<int32_t> tg, bool is_string,
                   int64_t length) {
    header_finished_ = true;
    if (!layout_known_)
      resolve_layout(is_string ? TaskLayout::Classification : TaskLayout::Tagging);
    if (static_cast<int64_t>(out_.examples.size()) >= kDatasetMaxExamples)
      fail(line,
           fmt::format("more than {} examples; split or sample the file", kDatasetMaxExamples));
    const int64_t n = static_cast<int64_t>(in.size());
    if (n == 0) fail(line, "the input is empty");
    const char* layout = dataset_layout_name(out_.layout);
    switch (out_.layout) {
      case TaskLayout::Tagging: {
        if (is_string)
          fail(line,
               "the target is a string, but the layout is tagging: give a list with one "
               "entry per input symbol (a file of labels needs the classification layout)");
        if (static_cast<int64_t>(tg.size()) != n)
          fail(line, fmt::format("the target has {} entries but the input has {} symbols; the "
                                 "tagging layout needs one per input symbol ({}{} where not "
                                 "scored)",
                                 tg.size(), n, quote(out_.unscored),
                                 out_.format == DatasetFormat::Jsonl ? " or null" : ""));
        if (std::all_of(tg.begin(), tg.end(), [&](int32_t id) { return unscored(id); }))
          fail(line, "no target is scored (every entry is the unscored marker)");
        break;
      }
      case TaskLayout::AppendedQueries: {
        if (is_string)
          fail(line,
               "the target is a string, but the layout is appended: give the answer as a "
               "list of symbols");
        if (tg.empty())
          fail(line, "the answer (target) is empty; the appended layout needs at least one symbol");
        break;
      }
      case TaskLayout::Classification: {
        if (out_.format == DatasetFormat::Jsonl && !is_string)
          fail(line,
               "the target is a list, but the layout is classification: give one label as "
               "a string");
        if (tg.size() != 1)
          fail(line, fmt::format("the target has {} symbols; the classification layout needs "
                                 "exactly one label",
                                 tg.size()));
        break;
      }
    }
    if (out_.layout != TaskLayout::Tagging)
      for (size_t i = 0; i < tg.size(); ++i)
        if (unscored(tg[i]))
          fail(line, fmt::format("target {}: {} is the unscored marker; in the {} layout every "
                                 "target symbol is scored",
                                 i + 1, tg[i] == RawExample::kNull ? "null" : quote(out_.unscored),
                                 layout));
    const int64_t tokens = tokens_for(out_.layout, n, static_cast<int64_t>(tg.size()));
    if (tokens > kDatasetMaxTokens)
      fail(line, fmt::format("the example has {} tokens as laid out ({}); the limit is {}", tokens,
                             layout, kDatasetMaxTokens));
    if (length > n)
      fail(line, fmt::format("length {} is more than the {} input symbols", length, n));
    if (out_.vocabulary_declared) {
      for (size_t i = 0; i < in.size(); ++i)
        if (!declared_in_.count(out_.symbols[in[i]]))
          fail(line, fmt::format("unknown input symbol {} (input symbol {}; not in the header's "
                                 "input_symbols)",
                                 quote(out_.symbols[in[i]]), i + 1));
      for (size_t i = 0; i < tg.size(); ++i)
        if (!unscored(tg[i]) && !declared_out_.count(out_.symbols[tg[i]]))
          fail(line, fmt::format("unknown output symbol {} (target {}; not in the header's "
                                 "output_symbols)",
                                 quote(out_.symbols[tg[i]]), i + 1));
    }
    RawExample e;
    e.input = std::move(in);
    e.target = std::move(tg);
    e.length = static_cast<int32_t>(length > 0 ? length : n);
    e.line = line;
    out_.examples.push_back(std::move(e));
  }

  const std::string& text_;
  std::optional<DatasetDefaults> defaults_;
  ParsedDataset out_;
  std::unordered_map<std::string, int32_t> index_;
  std::unordered_map<std::string, int32_t> declared_in_, declared_out_;
  std::set<std::string> tsv_keys_;
  bool layout_known_ = false;
  bool seen_line_ = false;  // JSONL: a non-blank line was read
  bool header_finished_ = false;
};

// ---- vocabulary and encoding
// -----------------------------------------------------------------------

// The layout's special input tokens.
std::vector<std::string> special_tokens(TaskLayout layout) {
  switch (layout) {
    case TaskLayout::Tagging:
      return {};
    case TaskLayout::AppendedQueries:
      return {kSeparator, kQuery};
    case TaskLayout::Classification:
      return {kQuery};
  }
  return {};
}

void add_specials(std::vector<std::string>& input_symbols, TaskLayout layout) {
  for (const std::string& s : special_tokens(layout))
    if (std::find(input_symbols.begin(), input_symbols.end(), s) == input_symbols.end())
      input_symbols.push_back(s);
}

struct Vocabulary {
  std::vector<std::string> input, output;
  std::unordered_map<std::string, int32_t> input_id, output_id;
  void index() {
    for (size_t i = 0; i < input.size(); ++i) input_id.emplace(input[i], static_cast<int32_t>(i));
    for (size_t i = 0; i < output.size(); ++i)
      output_id.emplace(output[i], static_cast<int32_t>(i));
  }
};

bool is_unscored(const ParsedDataset& d, int32_t id) {
  return id == RawExample::kNull || d.symbols[id] == d.unscored;
}

Vocabulary training_vocabulary(const ParsedDataset& train) {
  Vocabulary v;
  if (train.vocabulary_declared) {
    v.input = train.input_symbols;
    v.output = train.output_symbols;
  } else {
    std::vector<char> in_used(train.symbols.size(), 0), out_used(train.symbols.size(), 0);
    for (const RawExample& e : train.examples) {
      for (int32_t id : e.input) in_used[id] = 1;
      for (int32_t id : e.target)
        if (!is_unscored(train, id)) out_used[id] = 1;
    }
    for (size_t i = 0; i < train.symbols.size(); ++i) {
      if (in_used[i]) v.input.push_back(train.symbols[i]);
      if (out_used[i]) v.output.push_back(train.symbols[i]);
    }
    std::sort(v.input.begin(), v.input.end());
    std::sort(v.output.begin(), v.output.end());
    PELAB_CHECK(static_cast<int64_t>(v.input.size()) <= kDatasetMaxVocabulary,
                "{}: {} distinct input symbols; the limit is {}", train.source, v.input.size(),
                kDatasetMaxVocabulary);
    PELAB_CHECK(static_cast<int64_t>(v.output.size()) <= kDatasetMaxVocabulary,
                "{}: {} distinct output symbols; the limit is {}", train.source, v.output.size(),
                kDatasetMaxVocabulary);
  }
  add_specials(v.input, train.layout);
  v.index();
  return v;
}

// Encodes a parsed file with the vocabulary; unknown symbols are errors naming file and line.
void encode(const ParsedDataset& d, const Vocabulary& v, const std::string& vocab_source,
            std::vector<Example>& examples, std::vector<int64_t>& lines) {
  std::vector<int32_t> in_id(d.symbols.size(), -1), out_id(d.symbols.size(), -1);
  for (size_t i = 0; i < d.symbols.size(); ++i) {
    const auto a = v.input_id.find(d.symbols[i]);
    if (a != v.input_id.end()) in_id[i] = a->second;
    const auto b = v.output_id.find(d.symbols[i]);
    if (b != v.output_id.end()) out_id[i] = b->second;
  }
  const int32_t sep = d.layout == TaskLayout::AppendedQueries ? v.input_id.at(kSeparator) : -1;
  const int32_t query = d.layout != TaskLayout::Tagging ? v.input_id.at(kQuery) : -1;
  examples.reserve(d.examples.size());
  lines.reserve(d.examples.size());
  for (const RawExample& r : d.examples) {
    Example e;
    e.length = r.length;
    const size_t n = r.input.size();
    e.tokens.reserve(static_cast<size_t>(
        tokens_for(d.layout, static_cast<int64_t>(n), static_cast<int64_t>(r.target.size()))));
    for (size_t i = 0; i < n; ++i) {
      const int32_t id = in_id[r.input[i]];
      if (id < 0)
        throw Error(fmt::format(
            "{}:{}: unknown input symbol {} (input symbol {}; the vocabulary "
            "of {} has {} input symbols)",
            d.source, r.line, quote(d.symbols[r.input[i]]), i + 1, vocab_source, v.input.size()));
      e.tokens.push_back(id);
    }
    std::vector<int32_t> answer;
    for (size_t i = 0; i < r.target.size(); ++i) {
      if (is_unscored(d, r.target[i])) {
        answer.push_back(kIgnore);
        continue;
      }
      const int32_t id = out_id[r.target[i]];
      if (id < 0)
        throw Error(fmt::format(
            "{}:{}: unknown output symbol {} (target {}; the vocabulary of "
            "{} has {} output symbols)",
            d.source, r.line, quote(d.symbols[r.target[i]]), i + 1, vocab_source, v.output.size()));
      answer.push_back(id);
    }
    switch (d.layout) {
      case TaskLayout::Tagging:
        e.targets = std::move(answer);
        break;
      case TaskLayout::AppendedQueries:
        e.tokens.push_back(sep);
        e.tokens.insert(e.tokens.end(), answer.size(), query);
        e.targets.assign(n + 1, kIgnore);
        e.targets.insert(e.targets.end(), answer.begin(), answer.end());
        break;
      case TaskLayout::Classification:
        e.tokens.push_back(query);
        e.targets.assign(n, kIgnore);
        e.targets.push_back(answer.at(0));
        break;
    }
    PELAB_ASSERT(e.tokens.size() == e.targets.size());
    examples.push_back(std::move(e));
    lines.push_back(r.line);
  }
}

// ---- the writer
// ----------------------------------------------------------------------------------

// How format_dataset writes one example.
struct Written {
  std::vector<int32_t> input;   // input ids
  std::vector<int32_t> target;  // output ids or kIgnore
  int32_t length = 0;
  bool write_length = false;
};

std::optional<Written> as_appended(const Example& e, int32_t sep, int32_t query) {
  const int64_t T = static_cast<int64_t>(e.tokens.size());
  int64_t first = T;  // the first scored position; everything after it must be scored
  while (first > 0 && e.targets[first - 1] != kIgnore && e.tokens[first - 1] == query) --first;
  const int64_t m = T - first, k = first - 1;
  if (m < 1 || k < 1 || e.tokens[k] != sep || e.length > k) return std::nullopt;
  for (int64_t t = 0; t <= k; ++t)
    if (e.targets[t] != kIgnore) return std::nullopt;
  Written w;
  w.input.assign(e.tokens.begin(), e.tokens.begin() + k);
  w.target.assign(e.targets.begin() + first, e.targets.end());
  w.length = e.length;
  w.write_length = e.length != k;
  return w;
}

std::optional<Written> as_classification(const Example& e, int32_t query) {
  const int64_t T = static_cast<int64_t>(e.tokens.size());
  if (T < 2 || e.tokens[T - 1] != query || e.targets[T - 1] == kIgnore || e.length > T - 1)
    return std::nullopt;
  for (int64_t t = 0; t + 1 < T; ++t)
    if (e.targets[t] != kIgnore) return std::nullopt;
  Written w;
  w.input.assign(e.tokens.begin(), e.tokens.end() - 1);
  w.target = {e.targets[T - 1]};
  w.length = e.length;
  w.write_length = e.length != T - 1;
  return w;
}

Written as_tagging(const Example& e) {
  Written w;
  w.input = e.tokens;
  w.target = e.targets;
  w.length = e.length;
  w.write_length = e.length != static_cast<int32_t>(e.tokens.size());
  return w;
}

// The reader's line limit, checked by the writer so that what it writes reads back.
void check_line_length(const TaskInfo& info, const Written& w, size_t bytes) {
  PELAB_CHECK(static_cast<int64_t>(bytes) <= kDatasetMaxLineBytes,
              "task '{}': an example of size {} takes a line of {} bytes, over the {} MiB limit "
              "of a dataset line; use smaller sizes",
              info.name, w.length, bytes, kDatasetMaxLineBytes >> 20);
}

int32_t index_of(const std::vector<std::string>& symbols, const char* s) {
  const auto it = std::find(symbols.begin(), symbols.end(), s);
  return it == symbols.end() ? -1 : static_cast<int32_t>(it - symbols.begin());
}

}  // namespace

// ---- the format
// ------------------------------------------------------------------------------------

const char* to_string(DatasetFormat format) {
  return format == DatasetFormat::Jsonl ? "jsonl" : "tsv";
}

DatasetFormat parse_dataset_format(const std::string& name) {
  if (name == "jsonl") return DatasetFormat::Jsonl;
  if (name == "tsv") return DatasetFormat::Tsv;
  throw Error(fmt::format("unknown dataset format {} (valid: jsonl, tsv)", quote(name)));
}

std::optional<DatasetFormat> dataset_format_of_path(const std::string& path) {
  const std::string ext = lower_extension(path);
  if (ext == ".jsonl" || ext == ".ndjson" || ext == ".json") return DatasetFormat::Jsonl;
  if (ext == ".tsv") return DatasetFormat::Tsv;
  return std::nullopt;
}

const char* dataset_layout_name(TaskLayout layout) {
  switch (layout) {
    case TaskLayout::Tagging:
      return "tagging";
    case TaskLayout::AppendedQueries:
      return "appended";
    case TaskLayout::Classification:
      return "classification";
  }
  return "unknown";
}

ParsedDataset parse_dataset_text(const std::string& text, const std::string& source) {
  return Parser(text, source, std::nullopt).run();
}

ParsedDataset parse_dataset_text(const std::string& text, const std::string& source,
                                 const DatasetDefaults& defaults) {
  return Parser(text, source, defaults).run();
}

ParsedDataset read_dataset_file(const std::string& path,
                                const std::optional<DatasetDefaults>& defaults) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  PELAB_CHECK(!ec && fs::exists(status), "{}: no such file", path);
  PELAB_CHECK(!fs::is_directory(status), "{}: is a directory, not a dataset file", path);
  const uintmax_t size = fs::file_size(path, ec);
  PELAB_CHECK(ec || size <= static_cast<uintmax_t>(kDatasetMaxFileBytes),
              "{}: {:.1f} MiB is larger than the {} MiB limit for a dataset file; split or "
              "sample it",
              path, static_cast<double>(size) / (1 << 20), kDatasetMaxFileBytes >> 20);
  std::ifstream in(path, std::ios::binary);
  PELAB_CHECK(in.good(), "{}: cannot open the file", path);
  std::string text;
  char buffer[1 << 16];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    text.append(buffer, static_cast<size_t>(in.gcount()));
    PELAB_CHECK(static_cast<int64_t>(text.size()) <= kDatasetMaxFileBytes,
                "{}: larger than the {} MiB limit for a dataset file; split or sample it", path,
                kDatasetMaxFileBytes >> 20);
  }
  PELAB_CHECK(!in.bad(), "{}: read error", path);
  return defaults ? parse_dataset_text(text, path, *defaults) : parse_dataset_text(text, path);
}

std::string format_dataset(const TaskInfo& info, const std::vector<Example>& examples,
                           DatasetFormat format, TaskLayout* layout_written) {
  PELAB_CHECK(!examples.empty(), "no examples to write");
  for (const auto* list : {&info.input_symbols, &info.output_symbols})
    for (const std::string& s : *list) {
      const std::string problem = symbol_problem(s);
      PELAB_CHECK(problem.empty(), "task '{}' cannot be written as a dataset: {}", info.name,
                  problem);
    }
  // The layout: the task's, if every example fits it; else tagging over all tokens.
  std::vector<Written> written;
  written.reserve(examples.size());
  TaskLayout layout = info.layout;
  const int32_t sep = index_of(info.input_symbols, kSeparator);
  const int32_t query = index_of(info.input_symbols, kQuery);
  if (layout == TaskLayout::AppendedQueries || layout == TaskLayout::Classification) {
    for (const Example& e : examples) {
      PELAB_ASSERT(e.tokens.size() == e.targets.size());
      std::optional<Written> w;
      if (layout == TaskLayout::AppendedQueries && sep >= 0 && query >= 0)
        w = as_appended(e, sep, query);
      if (layout == TaskLayout::Classification && query >= 0) w = as_classification(e, query);
      if (!w) {
        written.clear();
        layout = TaskLayout::Tagging;
        break;
      }
      written.push_back(std::move(*w));
    }
  } else {
    layout = TaskLayout::Tagging;
  }
  if (layout == TaskLayout::Tagging)
    for (const Example& e : examples) written.push_back(as_tagging(e));
  for (const Written& w : written)
    PELAB_CHECK(
        std::any_of(w.target.begin(), w.target.end(), [](int32_t t) { return t != kIgnore; }),
        "task '{}': an example has no scored target", info.name);

  if (layout_written) *layout_written = layout;
  // The unscored marker: "_" unless that is an output symbol.
  std::string marker = "_";
  for (const char* candidate : {"_", ".", "-", "~", "__", "<unscored>"}) {
    marker = candidate;
    if (index_of(info.output_symbols, candidate) < 0) break;
  }
  PELAB_CHECK(index_of(info.output_symbols, marker.c_str()) < 0,
              "task '{}': no unscored marker is free", info.name);

  std::string out;
  if (format == DatasetFormat::Jsonl) {
    nlohmann::ordered_json header;
    header["layout"] = dataset_layout_name(layout);
    header["input_symbols"] = info.input_symbols;
    header["output_symbols"] = info.output_symbols;
    if (marker != "_") header["unscored"] = marker;
    out += header.dump() + "\n";
    for (const Written& w : written) {
      nlohmann::ordered_json line;
      json input = json::array(), target = json::array();
      for (int32_t id : w.input) input.push_back(info.input_symbols.at(id));
      if (layout == TaskLayout::Classification) {
        target = info.output_symbols.at(w.target.at(0));
      } else {
        for (int32_t id : w.target) {
          if (id == kIgnore)
            target.push_back(nullptr);
          else
            target.push_back(info.output_symbols.at(id));
        }
      }
      line["input"] = std::move(input);
      line["target"] = std::move(target);
      if (w.write_length) line["length"] = w.length;
      const std::string text = line.dump();
      check_line_length(info, w, text.size());
      out += text + "\n";
    }
  } else {
    out += fmt::format("#layout {}\n", dataset_layout_name(layout));
    out += "#input_symbols " + join(info.input_symbols, " ") + "\n";
    out += "#output_symbols " + join(info.output_symbols, " ") + "\n";
    if (marker != "_") out += "#unscored " + marker + "\n";
    for (const Written& w : written) {
      std::string line;
      for (size_t i = 0; i < w.input.size(); ++i)
        line += (i ? " " : "") + info.input_symbols.at(w.input[i]);
      line += '\t';
      for (size_t i = 0; i < w.target.size(); ++i)
        line += (i ? " " : "") +
                (w.target[i] == kIgnore ? marker : info.output_symbols.at(w.target[i]));
      if (w.write_length) line += fmt::format("\t{}", w.length);
      check_line_length(info, w, line.size());
      out += line + "\n";
    }
  }
  return out;
}

// ---- the file task
// ---------------------------------------------------------------------------------

std::shared_ptr<const FileTaskData> build_file_task_data(const ParsedDataset& train,
                                                         const ParsedDataset& eval) {
  if (eval.layout != train.layout)
    throw Error(fmt::format(
        "{}:{}: the layout is {} but the training file {} is {}; both files "
        "need the same layout",
        eval.source, std::max<int64_t>(eval.header_line, 1), dataset_layout_name(eval.layout),
        train.source, dataset_layout_name(train.layout)));
  const Vocabulary v = training_vocabulary(train);
  if (eval.vocabulary_declared) {
    std::vector<std::string> in = eval.input_symbols;
    add_specials(in, eval.layout);
    if (in != v.input || eval.output_symbols != v.output)
      throw Error(
          fmt::format("{}:{}: the header's {} differ from the training vocabulary of {}; "
                      "give the same lists or leave them out",
                      eval.source, eval.header_line,
                      in != v.input ? "input_symbols" : "output_symbols", train.source));
  }
  auto data = std::make_shared<FileTaskData>();
  data->train_source = train.source;
  data->eval_source = eval.source;
  encode(train, v, train.source, data->train, data->train_lines);
  encode(eval, v, train.source, data->eval, data->eval_lines);
  TaskInfo& info = data->info;
  info.name = kFileTaskName;
  info.layout = train.layout;
  info.input_symbols = v.input;
  info.output_symbols = v.output;
  std::string form;
  switch (train.layout) {
    case TaskLayout::Tagging:
      form =
          "Tagging. Tokens: the input symbols. Target: one per input symbol; scored where the "
          "file gives a symbol (not the unscored marker).";
      break;
    case TaskLayout::AppendedQueries:
      form =
          "AppendedQueries. Tokens: the input symbols, the separator '|', then one query "
          "token '?' per answer symbol. Target: the answer on the query tokens; scored: the "
          "query tokens only.";
      break;
    case TaskLayout::Classification:
      form =
          "Classification. Tokens: the input symbols, then one query token '?'. Target: the "
          "label at the query token; scored: the query token only.";
      break;
  }
  info.description = fmt::format(
      "{} Examples from files: training {} ({} examples), evaluation {} ({} examples). "
      "Problem size n: the number of input symbols or the example's length. Vocabulary: {} "
      "input and {} output symbols.",
      form, train.source, data->train.size(), eval.source, data->eval.size(), v.input.size(),
      v.output.size());
  info.position_need =
      "Unknown: the examples come from a file, so what position must carry depends on the data.";
  return data;
}

namespace {
std::vector<std::pair<int, std::vector<int32_t>>> by_size(const std::vector<Example>& examples) {
  std::map<int, std::vector<int32_t>> m;
  for (size_t i = 0; i < examples.size(); ++i)
    m[examples[i].length].push_back(static_cast<int32_t>(i));
  return {m.begin(), m.end()};
}

const std::vector<int32_t>* find_size(const std::vector<std::pair<int, std::vector<int32_t>>>& v,
                                      int64_t size) {
  const auto it = std::lower_bound(v.begin(), v.end(), size,
                                   [](const auto& entry, int64_t s) { return entry.first < s; });
  return it != v.end() && it->first == size ? &it->second : nullptr;
}

std::vector<int> sizes_of(const std::vector<std::pair<int, std::vector<int32_t>>>& v) {
  std::vector<int> out;
  for (const auto& entry : v) out.push_back(entry.first);
  return out;
}
}  // namespace

FileTask::FileTask(std::shared_ptr<const FileTaskData> data) : data_(std::move(data)) {
  PELAB_ASSERT(data_ && !data_->train.empty() && !data_->eval.empty());
  train_by_size_ = by_size(data_->train);
  eval_by_size_ = by_size(data_->eval);
  std::map<int, int> longest;
  for (const auto* set : {&data_->train, &data_->eval})
    for (const Example& e : *set) {
      int& l = longest[e.length];
      l = std::max(l, static_cast<int>(e.tokens.size()));
      tokens_per_size_ =
          std::max(tokens_per_size_, static_cast<double>(e.tokens.size()) / e.length);
    }
  int running = 0;
  for (const auto& [size, tokens] : longest) {
    running = std::max(running, tokens);
    longest_.emplace_back(size, running);
  }
}

int FileTask::sequence_length(int n) const {
  const auto it =
      std::upper_bound(longest_.begin(), longest_.end(), n,
                       [](int s, const std::pair<int, int>& entry) { return s < entry.first; });
  // Outside the files' sizes: grows like the steepest example, capped far above any real use.
  const int estimate =
      static_cast<int>(std::min(std::ceil(tokens_per_size_ * std::max(n, 1)), 1e8));
  if (it == longest_.begin()) return std::max(1, estimate);
  const int known = std::prev(it)->second;
  return n <= longest_.back().first ? known : std::max(known, estimate);
}

Example FileTask::sample(Generator& rng, int length) const {
  const std::vector<int32_t>* ids = find_size(train_by_size_, length);
  PELAB_CHECK(ids != nullptr, "task 'file': {} has no training example of size {} (its sizes: {})",
              data_->train_source, length, describe_sizes(train_sizes()));
  const int64_t pick = rng.uniform_int(0, static_cast<int64_t>(ids->size()) - 1);
  return data_->train[static_cast<size_t>((*ids)[static_cast<size_t>(pick)])];
}

std::vector<Example> FileTask::evaluation_set(int64_t length, int64_t count, uint64_t seed) const {
  const std::vector<int32_t>* found = find_size(eval_by_size_, length);
  PELAB_CHECK(found != nullptr,
              "task 'file': {} has no evaluation example of size {} (its sizes: {})",
              data_->eval_source, length, describe_sizes(eval_sizes()));
  PELAB_CHECK(count >= 1, "task 'file': an evaluation set needs at least one example");
  std::vector<int32_t> ids = *found;
  if (static_cast<int64_t>(ids.size()) > count) {
    // A partial Fisher-Yates shuffle fixed by (seed, length), then back to file order.
    Generator rng(derive_seed(seed ^ mix64(static_cast<uint64_t>(length)), "file-evaluation"));
    for (int64_t i = 0; i < count; ++i) {
      const int64_t j = rng.uniform_int(i, static_cast<int64_t>(ids.size()) - 1);
      std::swap(ids[static_cast<size_t>(i)], ids[static_cast<size_t>(j)]);
    }
    ids.resize(static_cast<size_t>(count));
    std::sort(ids.begin(), ids.end());
  }
  std::vector<Example> out;
  out.reserve(ids.size());
  for (int32_t id : ids) out.push_back(data_->eval[static_cast<size_t>(id)]);
  return out;
}

std::vector<int> FileTask::train_sizes() const {
  return sizes_of(train_by_size_);
}

std::vector<int> FileTask::eval_sizes() const {
  return sizes_of(eval_by_size_);
}

std::string FileTask::describe_sizes(const std::vector<int>& sizes) {
  if (sizes.empty()) return "none";
  std::vector<std::string> parts;
  size_t i = 0;
  while (i < sizes.size()) {
    size_t j = i;
    while (j + 1 < sizes.size() && sizes[j + 1] == sizes[j] + 1) ++j;
    parts.push_back(j == i ? std::to_string(sizes[i])
                           : fmt::format("{}{}{}", sizes[i], j == i + 1 ? ", " : "-", sizes[j]));
    i = j + 1;
  }
  return join(parts);
}

std::string FileTask::check_training_range(int64_t min_length, int64_t max_length) const {
  std::vector<int64_t> missing;
  int64_t present = 0;
  for (const auto& [size, ids] : train_by_size_)
    if (size >= min_length && size <= max_length) ++present;
  if (present == max_length - min_length + 1) return "";
  for (int64_t n = min_length; n <= max_length && missing.size() < 6; ++n)
    if (!find_size(train_by_size_, n)) missing.push_back(n);
  std::string list;
  for (size_t i = 0; i < missing.size() && i < 5; ++i)
    list += (i ? ", " : "") + std::to_string(missing[i]);
  if (missing.size() > 5) list += ", ...";
  return fmt::format(
      "the training file {} has no examples of size {} (its sizes: {}); every size "
      "in [task.min_length, task.max_length] = [{}, {}] needs some",
      data_->train_source, list, describe_sizes(train_sizes()), min_length, max_length);
}

std::string FileTask::check_evaluation_lengths(const std::vector<int64_t>& lengths) const {
  for (int64_t n : lengths)
    if (!find_size(eval_by_size_, n))
      return fmt::format("the evaluation file {} has no examples of size {} (its sizes: {})",
                         data_->eval_source, n, describe_sizes(eval_sizes()));
  return "";
}

std::unique_ptr<FileTask> make_file_task(const std::string& train_path,
                                         const std::string& eval_path) {
  const ParsedDataset train = read_dataset_file(train_path);
  const ParsedDataset eval =
      read_dataset_file(eval_path, DatasetDefaults{train.layout, train.unscored});
  return std::make_unique<FileTask>(build_file_task_data(train, eval));
}

// ---- binding
// ---------------------------------------------------------------------------------------

namespace {
struct FileTaskRegistry {
  std::mutex mutex;
  std::map<std::pair<std::string, std::string>, int64_t> handles;
  std::map<int64_t, std::shared_ptr<const FileTaskData>> data;
};

FileTaskRegistry& file_task_registry() {
  static FileTaskRegistry registry;
  return registry;
}
}  // namespace

TaskParams register_file_task(std::shared_ptr<const FileTaskData> data) {
  PELAB_ASSERT(data);
  FileTaskRegistry& r = file_task_registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  const auto key = std::make_pair(data->train_source, data->eval_source);
  auto it = r.handles.find(key);
  if (it == r.handles.end())
    it = r.handles.emplace(key, static_cast<int64_t>(r.handles.size()) + 1).first;
  r.data[it->second] = std::move(data);
  return {{kFileTaskHandle, it->second}};
}

TaskParams load_file_task(const std::string& train_path, const std::string& eval_path,
                          const std::string& train_where, const std::string& eval_where) {
  ParsedDataset train;
  try {
    train = read_dataset_file(train_path);
  } catch (const Error& e) {
    throw Error(train_where + ": " + e.what());
  }
  try {
    const ParsedDataset eval =
        read_dataset_file(eval_path, DatasetDefaults{train.layout, train.unscored});
    return register_file_task(build_file_task_data(train, eval));
  } catch (const Error& e) {
    throw Error(eval_where + ": " + e.what());
  }
}

std::unique_ptr<Task> make_registered_file_task(const TaskParams& params) {
  for (const auto& [key, value] : params)
    PELAB_CHECK(key == kFileTaskHandle, "task 'file' takes no parameters; got '{}'", key);
  const auto handle = params.find(kFileTaskHandle);
  PELAB_CHECK(handle != params.end(),
              "task 'file' reads its examples from task.train_file and task.eval_file: load it "
              "from an experiment config (task.name: file)");
  FileTaskRegistry& r = file_task_registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  const auto it = r.data.find(handle->second);
  PELAB_CHECK(it != r.data.end(), "task 'file': no dataset files are loaded under handle {}",
              handle->second);
  return std::make_unique<FileTask>(it->second);
}

}  // namespace pelab
