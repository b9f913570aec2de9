// JSONL dataset lines: one JSON object per line, {"input": [...], "target": ..., "length": n},
// after an optional header object without "input".
//
// Each line goes through nlohmann-json's SAX parser into a JsonLine, which keeps only what
// the checks read: the top-level object's members, each a scalar or a flat list. A value
// nested deeper is kept as an empty container of its type (a symbol is never nested, and the
// message only names the type), and nesting past kMaxDepth stops the parse, so a hostile line
// costs no more memory than its flat values. The parser's own messages keep their column.
#include <limits>
#include <map>
#include <nlohmann/json.hpp>

#include "data/dataset_builder.h"
#include "data/dataset_checks.h"
#include "pelab/core/error.h"

namespace pelab::dataset {

namespace {

using json = nlohmann::json;

// One JSONL line: a top-level object's members by key (in key order, which is the order the
// checks report problems in), or the type of any other top-level value.
struct JsonLine {
  const char* top_type = "object";
  std::map<std::string, json> members;

  bool is_object() const { return std::string_view(top_type) == "object"; }
  bool has(const std::string& key) const { return members.count(key) > 0; }
};

// Collects a JsonLine from SAX events. A value's depth is the number of containers open
// around it: the line's members are at depth 1 and their list entries at depth 2.
class JsonLineHandler final : public nlohmann::json_sax<json> {
 public:
  // Containers may open at depths 0-3 and values sit at depths 0-3: a symbol list needs 2.
  static constexpr size_t kMaxDepth = 3;

  JsonLine line;
  std::string error;  // why the parse stopped: a message for the dataset's error

  bool null() override { return value(json(nullptr)); }
  bool boolean(bool v) override { return value(json(v)); }
  bool number_integer(number_integer_t v) override { return value(json(v)); }
  bool number_unsigned(number_unsigned_t v) override { return value(json(v)); }
  bool number_float(number_float_t v, const string_t&) override { return value(json(v)); }
  bool string(string_t& v) override { return value(json(std::move(v))); }
  bool binary(binary_t&) override { return value(json::binary({})); }
  bool start_object(std::size_t) override { return open(json::object()); }
  bool start_array(std::size_t) override { return open(json::array()); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }

  bool key(string_t& k) override {
    if (!within_depth()) return false;
    if (depth_ != 1) return true;
    if (!keys_.insert(k).second) {
      error = fmt::format("the key {} is given twice", quote(k));
      return false;
    }
    key_ = k;
    return true;
  }

  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    error = "not valid JSON: " + parser_message(e.what());
    return false;
  }

 private:
  bool within_depth() {
    if (depth_ <= kMaxDepth) return true;
    error = "nested too deeply (symbols are strings in flat lists)";
    return false;
  }

  bool value(json v) {
    if (!within_depth()) return false;
    if (depth_ == 0) {
      line.top_type = v.type_name();
    } else if (top_is_object_) {
      if (depth_ == 1)
        line.members[key_] = std::move(v);
      else if (depth_ == 2 && line.members[key_].is_array())
        line.members[key_].push_back(std::move(v));
    }
    return true;
  }

  bool open(json container) {
    if (depth_ == 0) top_is_object_ = container.is_object();
    if (!value(std::move(container))) return false;
    ++depth_;
    return true;
  }

  bool close() {
    --depth_;
    return true;
  }

  // The parser's message without its exception id and line (a dataset line is one JSON
  // line), shortened and with control bytes replaced, for a one-line error.
  static std::string parser_message(std::string what) {
    const size_t bracket = what.find("] ");
    if (bracket != std::string::npos) what = what.substr(bracket + 2);
    if (what.rfind("parse error at line 1, ", 0) == 0) what = what.substr(23);
    if (what.size() > 160) what = what.substr(0, 160) + "...";
    for (char& c : what)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) c = '?';
    return what;
  }

  size_t depth_ = 0;
  bool top_is_object_ = false;
  std::string key_;  // the member being read
  std::set<std::string> keys_;
};

JsonLine parse_line(const DatasetBuilder& builder, int64_t line, std::string_view text) {
  JsonLineHandler handler;
  if (!json::sax_parse(text, &handler, json::input_format_t::json, /*strict=*/true,
                       /*ignore_comments=*/false))
    builder.fail(line, handler.error);
  return std::move(handler.line);
}

// " (write it as \"3\")" for a number where a symbol belongs.
std::string write_as_string(const json& j) {
  return j.is_number() ? fmt::format(" (write it as \"{}\")", j.dump()) : "";
}

std::vector<std::string> strings_of(const DatasetBuilder& builder, int64_t line, const json& j,
                                    const std::string& key) {
  if (!j.is_array())
    builder.fail(line, fmt::format("{}: expected a list of strings, got {}", key, j.type_name()));
  std::vector<std::string> out;
  out.reserve(j.size());
  for (size_t i = 0; i < j.size(); ++i) {
    if (!j[i].is_string())
      builder.fail(line,
                   fmt::format("{}[{}]: expected a string, got {}", key, i, j[i].type_name()));
    out.push_back(j[i].get<std::string>());
  }
  return out;
}

const std::string& string_of(const DatasetBuilder& builder, int64_t line, const json& j,
                             const char* key) {
  if (!j.is_string())
    builder.fail(line, fmt::format("{}: expected a string, got {}", key, j.type_name()));
  return j.get_ref<const std::string&>();
}

void read_header(DatasetBuilder& builder, int64_t line, const JsonLine& j) {
  builder.begin_header(line);
  static const std::vector<std::string> kValid = {"layout", "input_symbols", "output_symbols",
                                                  "unscored"};
  for (const auto& [key, value] : j.members) {
    if (key == "layout") {
      builder.set_layout(line, string_of(builder, line, value, "layout"));
    } else if (key == "input_symbols" || key == "output_symbols") {
      builder.set_symbols(line, key, strings_of(builder, line, value, key));
    } else if (key == "unscored") {
      builder.set_unscored(line, string_of(builder, line, value, "unscored"));
    } else {
      builder.fail(line,
                   fmt::format("unknown header key {} (valid: {}; an example line has \"input\")",
                               quote(key), join(kValid)));
    }
  }
  builder.finish_header(line);
}

std::vector<int32_t> input_of(DatasetBuilder& builder, int64_t line, const json& input) {
  if (!input.is_array())
    builder.fail(line, fmt::format("input: expected a list of symbols (strings), got {}",
                                   input.type_name()));
  std::vector<int32_t> in;
  in.reserve(input.size());
  for (size_t i = 0; i < input.size(); ++i) {
    const json& s = input[i];
    if (!s.is_string())
      builder.fail(line, fmt::format("input[{}]: expected a symbol (a string), got {}{}", i,
                                     s.type_name(), write_as_string(s)));
    in.push_back(
        builder.intern(line, s.get_ref<const std::string&>(), fmt::format("input[{}]", i)));
  }
  return in;
}

// The target's ids (RawExample::kNull for null), and whether it was a string (a label).
std::pair<std::vector<int32_t>, bool> target_of(DatasetBuilder& builder, int64_t line,
                                                const json& target) {
  if (target.is_string())
    return {{builder.intern(line, target.get_ref<const std::string&>(), "target")}, true};
  if (!target.is_array())
    builder.fail(line, fmt::format("target: expected a list of symbols or a string label, got {}",
                                   target.type_name()));
  std::vector<int32_t> tg;
  tg.reserve(target.size());
  for (size_t i = 0; i < target.size(); ++i) {
    const json& s = target[i];
    if (s.is_null()) {
      tg.push_back(RawExample::kNull);
      continue;
    }
    if (!s.is_string())
      builder.fail(line, fmt::format("target[{}]: expected a symbol (a string) or null, got {}{}",
                                     i, s.type_name(), write_as_string(s)));
    tg.push_back(
        builder.intern(line, s.get_ref<const std::string&>(), fmt::format("target[{}]", i)));
  }
  return {std::move(tg), false};
}

// The "length" member: at least 1; a value past int64 reads as its largest (too long anyway).
int64_t length_of(const DatasetBuilder& builder, int64_t line, const json& l) {
  if (!l.is_number_integer())
    builder.fail(line, fmt::format("length: expected an integer, got {}", l.type_name()));
  int64_t length = 0;
  if (l.is_number_unsigned()) {
    const uint64_t u = l.get<uint64_t>();
    length = u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
                 ? std::numeric_limits<int64_t>::max()
                 : static_cast<int64_t>(u);
  } else {
    length = l.get<int64_t>();
  }
  if (length < 1) builder.fail(line, "length: must be at least 1");
  return length;
}

void read_example(DatasetBuilder& builder, int64_t line, const JsonLine& j) {
  for (const auto& [key, value] : j.members)
    if (key != "input" && key != "target" && key != "length")
      builder.fail(line, fmt::format("unknown key {} (an example has \"input\", \"target\" and an "
                                     "optional \"length\")",
                                     quote(key)));
  if (!j.has("target")) builder.fail(line, "missing key \"target\"");
  std::vector<int32_t> in = input_of(builder, line, j.members.at("input"));
  auto [tg, is_string] = target_of(builder, line, j.members.at("target"));
  const int64_t length = j.has("length") ? length_of(builder, line, j.members.at("length")) : 0;
  builder.add_example(line, std::move(in), std::move(tg), is_string, length);
}

}  // namespace

void JsonlLineReader::read(int64_t line, std::string_view text) {
  const JsonLine j = parse_line(builder_, line, text);
  if (!j.is_object())
    builder_.fail(
        line, fmt::format("expected a JSON object {{\"input\": [...], \"target\": ...}}, got {}",
                          j.top_type));
  const bool first = !seen_line_;
  seen_line_ = true;
  if (j.has("input")) {
    read_example(builder_, line, j);
    return;
  }
  if (first) {
    read_header(builder_, line, j);
    return;
  }
  if (j.has("layout") || j.has("input_symbols") || j.has("output_symbols") || j.has("unscored"))
    builder_.fail(line, "a header (an object without \"input\") must be the first line");
  builder_.fail(line, "missing key \"input\" (an example is {\"input\": [...], \"target\": ...})");
}

}  // namespace pelab::dataset
