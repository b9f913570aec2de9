#include "pelab/config/yaml_reader.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "pelab/config/numbers.h"
#include "pelab/core/error.h"
#include "pelab/core/strings.h"
#include "pelab/io/read_file.h"

namespace pelab {

namespace fs = std::filesystem;

namespace {
constexpr int64_t kMaxExpandedNodes = 1'000'000;  // a config is a few hundred nodes
constexpr int kMaxDepth = 64;
constexpr size_t kMaxFileBytes = 16u << 20;

int line_of(const YAML::Node& n) {
  return n.Mark().line + 1;
}

// Where a YAML text came from: "file:line" in a file; a command-line value has no lines.
struct Place {
  const std::string& source;
  bool has_lines;
  std::string at(int line) const { return has_lines ? fmt::format("{}:{}", source, line) : source; }
};

// Walks the tree as if every alias were expanded: rejects duplicate keys and excessive depth
// (which also stops a self-referencing alias), and gives up as soon as the expanded size
// passes the cap, so an alias bomb costs at most kMaxExpandedNodes steps.
int64_t check_tree(const YAML::Node& node, const Place& place, int depth) {
  if (depth > kMaxDepth)
    throw Error(fmt::format("{}: nesting deeper than {} levels (an alias that contains itself?)",
                            place.at(line_of(node)), kMaxDepth));
  int64_t size = 1;
  if (node.IsMap()) {
    std::unordered_map<std::string, int> first_line;
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (it->first.IsScalar()) {
        const std::string key = it->first.Scalar();
        auto [pos, inserted] = first_line.emplace(key, line_of(it->first));
        if (!inserted)
          throw Error(fmt::format("{}: duplicate key '{}' (first given at line {})",
                                  place.at(line_of(it->first)), message_text(key), pos->second));
      }
      size += check_tree(it->second, place, depth + 1);
      if (size > kMaxExpandedNodes) break;
    }
  } else if (node.IsSequence()) {
    for (auto it = node.begin(); it != node.end(); ++it) {
      size += check_tree(*it, place, depth + 1);
      if (size > kMaxExpandedNodes) break;
    }
  }
  if (size > kMaxExpandedNodes)
    throw Error(fmt::format(
        "{}: the document expands to more than {} nodes through aliases (at most {} are allowed)",
        place.at(line_of(node)), kMaxExpandedNodes, kMaxExpandedNodes));
  return size;
}

// The line of the '---' that starts the second document of `text`: the last one at or before
// the line (1-based) where the parser found the document.
int second_document_line(const std::string& text, int node_line) {
  int line = 1, separator = 1;
  for (size_t at = 0; at < text.size() && line <= node_line; ++line) {
    if (text.compare(at, 3, "---") == 0) separator = line;
    const size_t end = text.find('\n', at);
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return separator;
}

// Where the documents of a YAML text start, as the parser meets them.
class DocumentStarts : public YAML::EventHandler {
 public:
  std::vector<YAML::Mark> starts;
  void OnDocumentStart(const YAML::Mark& mark) override { starts.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

// The line (1-based) where a second document of `text` starts, or 0 if there is none. At most
// two documents are read: yaml-cpp 0.7's parser reports an endless run of documents at one
// place on some malformed texts (',' is one), which LoadAll never leaves; a document that
// starts where the previous one did is that, not a second document.
int second_document_at(const std::string& text) {
  // A second document starts after a marker, '---' or '...', at the start of a line: a text
  // with neither anywhere (every config pelab writes) has one, and the second parse that
  // would say so is skipped (it doubled the cost of reading the thousands of configs of a
  // sweep or a comparison).
  if (text.find("---") == std::string::npos && text.find("...") == std::string::npos) return 0;
  std::stringstream in(text);
  YAML::Parser parser(in);
  DocumentStarts documents;
  while (documents.starts.size() < 2 && parser.HandleNextDocument(documents)) {
  }
  if (documents.starts.size() < 2 || documents.starts[1].pos <= documents.starts[0].pos) return 0;
  return second_document_line(text, documents.starts[1].line + 1);
}

// Parses and checks; `what` starts the message of a syntax error, `one` names what holds a
// single document ("a config file", "a value"). yaml-cpp's Load() would silently drop every
// document after the first, so a second one is looked for and is an error.
YAML::Node parse_checked(const std::string& text, const Place& place, const char* what,
                         const char* one) {
  YAML::Node root;
  try {
    const int second = second_document_at(text);
    if (second > 0)
      throw Error(fmt::format("{}: a second YAML document ('---'); {} holds one document",
                              place.at(second), one));
    root = YAML::Load(text);
    check_tree(root, place, 0);
  } catch (const YAML::DeepRecursion& e) {  // yaml-cpp's own guard, with a vague message
    throw Error(
        fmt::format("{}: nesting deeper than {} levels", place.at(e.mark.line + 1), kMaxDepth));
  } catch (const YAML::Exception& e) {
    // yaml-cpp marks some errors (e.g. an alias to an unknown anchor) at no position.
    throw Error(fmt::format("{}: {}: {}", place.at(e.mark.is_null() ? 1 : e.mark.line + 1), what,
                            message_text(e.msg)));
  }
  return root;
}

// Text without control characters (names, types, paths: what config strings are).
// The terminal's whitelist (pelab/core/strings.h): a value reaches messages, run directory
// names, progress lines and generated scripts.
bool plain(const std::string& s) {
  return printable_text(s);
}

std::string describe(const YAML::Node& n) {
  if (n.IsScalar()) return fmt::format("'{}'", message_text(n.Scalar()));
  if (n.IsMap()) return "a mapping";
  if (n.IsSequence()) return "a list";
  return "nothing";
}
}  // namespace

YAML::Node load_yaml_string(const std::string& text, const std::string& source) {
  return parse_checked(text, Place{source, true}, "invalid YAML", "a config file");
}

std::string read_yaml_file_text(const std::string& path) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  PELAB_CHECK(!ec && fs::exists(status), "{}: no such file", path);
  PELAB_CHECK(fs::is_regular_file(status), "{}: not a regular file; expected a YAML config", path);
  // Read up to the limit whatever the file claims its size is; opened without blocking, so
  // a file swapped for a FIFO since the check above is refused, not waited on.
  bool over_limit = false;
  std::string s = read_regular_file(path, "a YAML config", kMaxFileBytes, &over_limit);
  PELAB_CHECK(!over_limit, "{}: more than {} bytes is too large for a config", path, kMaxFileBytes);
  const size_t nul = s.find('\0');
  PELAB_CHECK(nul == std::string::npos, "{}:{}: not a text file (a NUL byte); expected YAML", path,
              1 + std::count(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(nul), '\n'));
  return s;
}

YAML::Node load_yaml_file(const std::string& path) {
  return load_yaml_string(read_yaml_file_text(path), path);
}

YAML::Node load_yaml_value(const std::string& text, const std::string& origin) {
  PELAB_CHECK(!text.empty(), "{}: empty value", origin);
  return parse_checked(text, Place{origin, false}, "the value is not valid YAML", "a value");
}

std::string message_text(const std::string& text) {
  constexpr size_t kMaxBytes = 80;
  // Cut at a character's start, so that a cut never splits a UTF-8 sequence into bytes that
  // get escaped.
  size_t cut = std::min(text.size(), kMaxBytes);
  while (cut > 0 && cut < text.size() && (static_cast<unsigned char>(text[cut]) & 0xc0) == 0x80)
    --cut;
  std::string out = escape_unprintable(text.substr(0, cut));
  if (text.size() > kMaxBytes) out += fmt::format("... ({} bytes)", text.size());
  return out;
}

std::string yaml_number(double value) {
  return fmt::format("{}", value);
}

std::string nearest_name(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = std::max<size_t>(2, word.size() / 3) + 1;
  for (const std::string& c : candidates) {
    std::vector<size_t> prev(c.size() + 1), cur(c.size() + 1);
    for (size_t j = 0; j <= c.size(); ++j) prev[j] = j;
    for (size_t i = 1; i <= word.size(); ++i) {
      cur[0] = i;
      for (size_t j = 1; j <= c.size(); ++j)
        cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (word[i - 1] != c[j - 1])});
      std::swap(prev, cur);
    }
    if (prev[c.size()] < best_distance) {
      best_distance = prev[c.size()];
      best = c;
    }
  }
  return best;
}

MapReader::MapReader(const YAML::Node& node, std::string source, std::string path,
                     std::shared_ptr<const KeyLocations> origins,
                     std::shared_ptr<KeyLocations> locations)
    : node_(node),
      source_(std::move(source)),
      path_(std::move(path)),
      origins_(std::move(origins)),
      locations_(std::move(locations)) {
  if (!node_ || node_.IsNull()) return;
  if (!node_.IsMap())
    throw Error(fmt::format("{}:{}: {}: expected a mapping of keys, got {}", source_,
                            line_of(node_), path_.empty() ? "the document" : path_,
                            describe(node_)));
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    if (!it->first.IsScalar() || !plain(it->first.Scalar()))
      throw Error(fmt::format("{}:{}: {}: keys must be plain names{}", source_, line_of(it->first),
                              path_.empty() ? "the document" : path_,
                              it->first.IsScalar() ? ", got " + describe(it->first) : ""));
    entries_.push_back({it->first.Scalar(), it->second, line_of(it->first)});
    present_.insert(it->first.Scalar());
  }
}

const YAML::Node* MapReader::find(const std::string& key) const {
  for (const Entry& e : entries_)
    if (e.key == key) return &e.value;
  return nullptr;
}

std::vector<std::string> MapReader::keys_in_file_order() const {
  std::vector<std::string> keys;
  for (const Entry& e : entries_) keys.push_back(e.key);
  return keys;
}

bool MapReader::has(const std::string& key) const {
  return find(key) != nullptr;
}

std::string MapReader::where(const std::string& key) const {
  const std::string dotted = path_.empty() ? key : path_ + "." + key;
  if (origins_) {
    auto it = origins_->find(dotted);
    if (it != origins_->end()) return fmt::format("{}: {}", it->second, dotted);
  }
  int line = node_ ? line_of(node_) : 1;
  for (const Entry& e : entries_)
    if (e.key == key) line = e.line;
  // A mapping an override made by setting a key inside it (`positional.scaling.factor=2`
  // where the file has no `scaling`) has no line: it was written where that override was.
  if (line < 1 && origins_) {
    const auto it = origins_->lower_bound(dotted + ".");
    if (it != origins_->end() && it->first.rfind(dotted + ".", 0) == 0)
      return fmt::format("{}: {}", it->second, dotted);
  }
  return fmt::format("{}:{}: {}", source_, line, dotted);
}

void MapReader::fail(const std::string& key, const std::string& what) const {
  throw Error(where(key) + ": " + what);
}

std::optional<YAML::Node> MapReader::take(const std::string& key) {
  const YAML::Node* n = find(key);
  if (!n) return std::nullopt;
  consumed_.insert(key);
  if (locations_) {
    const std::string w = where(key);
    (*locations_)[path_.empty() ? key : path_ + "." + key] = w.substr(0, w.rfind(": "));
  }
  return *n;
}

bool MapReader::read(const std::string& key, int64_t& out) {
  const std::optional<YAML::Node> found = take(key);
  if (!found) return false;
  const YAML::Node& n = *found;
  if (!n.IsScalar()) fail(key, "expected an integer, got " + describe(n));
  const std::string error = parse_integer(n.Scalar(), IntegerRange{}, out);
  if (!error.empty()) fail(key, error);
  return true;
}

bool MapReader::read(const std::string& key, double& out) {
  const std::optional<YAML::Node> found = take(key);
  if (!found) return false;
  const YAML::Node& n = *found;
  if (!n.IsScalar()) fail(key, "expected a number, got " + describe(n));
  const std::string error = parse_number(n.Scalar(), NumberRange{}, out);
  if (!error.empty()) fail(key, error);
  return true;
}

bool MapReader::read(const std::string& key, bool& out) {
  const std::optional<YAML::Node> found = take(key);
  if (!found) return false;
  const YAML::Node& n = *found;
  const std::string s = n.IsScalar() ? n.Scalar() : "";
  if (s == "true" || s == "True" || s == "yes") {
    out = true;
  } else if (s == "false" || s == "False" || s == "no") {
    out = false;
  } else {
    fail(key, "expected true or false, got " + describe(n));
  }
  return true;
}

bool MapReader::read(const std::string& key, std::string& out,
                     const std::vector<std::string>& valid) {
  const std::optional<YAML::Node> found = take(key);
  if (!found) return false;
  const YAML::Node& n = *found;
  if (!n.IsScalar() || !plain(n.Scalar()))
    fail(key, "expected a text value (one line), got " + describe(n));
  // '' names nothing; taken, it would read as "not given" and pick a default silently.
  if (n.Scalar().empty())
    fail(key, valid.empty() ? "an empty value (''); give one, or leave the key out"
                            : fmt::format("an empty value (''); valid: {}", join(valid)));
  out = n.Scalar();
  return true;
}

bool MapReader::read(const std::string& key, std::vector<std::string>& out) {
  const std::optional<YAML::Node> found = take(key);
  if (!found) return false;
  const YAML::Node& n = *found;
  out.clear();
  if (n.IsScalar() && plain(n.Scalar())) {
    if (n.Scalar().empty()) fail(key, "an empty value (''); give one, or leave the key out");
    out.push_back(n.Scalar());
    return true;
  }
  if (!n.IsSequence()) fail(key, "expected a list, got " + describe(n));
  for (const auto& item : n) {
    if (!item.IsScalar() || !plain(item.Scalar()))
      fail(key, "expected a list of plain values, got " + describe(item));
    if (item.Scalar().empty()) fail(key, "an empty item (''); each item is a value");
    out.push_back(item.Scalar());
  }
  return true;
}

bool MapReader::read(const std::string& key, std::vector<int64_t>& out) {
  std::vector<std::string> items;
  if (!read(key, items)) return false;
  out.clear();
  for (const std::string& s : items) {
    int64_t v = 0;
    const std::string error = parse_integer(s, IntegerRange{}, v);
    if (error.starts_with("expected an integer,"))  // not a number at all
      fail(key, "expected a list of integers, got '" + message_text(s) + "'");
    if (!error.empty()) fail(key, error);
    out.push_back(v);
  }
  return true;
}

MapReader MapReader::section(const std::string& key) {
  const std::optional<YAML::Node> n = take(key);
  return MapReader(n ? *n : YAML::Node(), source_, path_.empty() ? key : path_ + "." + key,
                   origins_, locations_);
}

void MapReader::finish(const std::vector<std::string>& valid_in) {
  std::vector<std::string> valid = valid_in;
  if (valid.empty()) valid.assign(consumed_.begin(), consumed_.end());
  for (const Entry& e : entries_) {
    const std::string& key = e.key;
    if (consumed_.count(key) || std::find(valid.begin(), valid.end(), key) != valid.end()) continue;
    const std::string near = nearest_name(key, valid);
    fail(key, fmt::format("unknown key ({}valid: {})",
                          near.empty() ? "" : "did you mean '" + near + "'? ", join(valid)));
  }
}

}  // namespace pelab
