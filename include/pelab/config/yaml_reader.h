// Strict YAML reading. Configs are read into typed structs once, here; every error names the
// file, the line, the dotted key and what would be valid:
//   configs/x.yaml:12: model.heads: expected an integer, got 'four'
//   configs/x.yaml:7: model.hedas: unknown key (did you mean 'heads'? valid: d_model, ...)
// On top of yaml-cpp it rejects what yaml-cpp lets through: duplicate keys (yaml-cpp keeps the
// first silently), documents that expand to huge trees through aliases, deep nesting.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace pelab {

// Parses YAML text (source = the file name used in messages) and checks it as above.
YAML::Node load_yaml_string(const std::string& text, const std::string& source);
YAML::Node load_yaml_file(const std::string& path);
// The text of a config file: a regular file of at most 16 MiB with no NUL byte.
std::string read_yaml_file_text(const std::string& path);
// A value given on the command line (`origin` names it, e.g. "command line 'model.heads=8'"),
// with the same checks; errors read "<origin>: the value is not valid YAML: ...".
YAML::Node load_yaml_value(const std::string& text, const std::string& origin);

// `text` as it may appear inside a one-line message: control characters escaped ("\n",
// "\x01"), cut after 80 bytes. Config text can say anything; messages stay one line.
std::string message_text(const std::string& text);

// A number as YAML text: the shortest form that reads back to the same double.
std::string yaml_number(double value);

// The candidate closest to `word` by edit distance, or "" if none is close.
std::string nearest_name(const std::string& word, const std::vector<std::string>& candidates);

// Where each dotted key came from ("configs/x.yaml:12" or "command line 'model.heads=8'"),
// shared by the readers of one config so that later checks can point at the right line.
using KeyLocations = std::map<std::string, std::string>;

// Reads one mapping. Each read() consumes a key; finish() rejects any key not consumed.
class MapReader {
 public:
  // `path` is the dotted prefix for messages ("" at the root, "model" for a section).
  // `origins` names keys that did not come from `source` (overrides); `locations`, if given,
  // collects where every key read was given.
  MapReader(const YAML::Node& node, std::string source, std::string path,
            std::shared_ptr<const KeyLocations> origins = nullptr,
            std::shared_ptr<KeyLocations> locations = nullptr);

  bool has(const std::string& key) const;
  // Reads `key` into `out` if present (returns false and leaves `out` alone if absent).
  bool read(const std::string& key, int64_t& out);
  bool read(const std::string& key, double& out);
  bool read(const std::string& key, bool& out);
  // Text is one line and never empty; `valid`, if given, is listed when it is empty.
  bool read(const std::string& key, std::string& out, const std::vector<std::string>& valid = {});
  bool read(const std::string& key, std::vector<std::string>& out);
  bool read(const std::string& key, std::vector<int64_t>& out);
  // A nested mapping (an empty one if absent).
  MapReader section(const std::string& key);
  // The raw node of a key (consumed), for values of several possible forms; nullopt if absent.
  std::optional<YAML::Node> take(const std::string& key);

  // Errors for keys not consumed, naming the nearest valid key among `valid` (the keys this
  // section takes; by default those read so far).
  void finish(const std::vector<std::string>& valid = {});

  // "file:line: dotted.key" for messages about a key's value.
  std::string where(const std::string& key) const;
  [[noreturn]] void fail(const std::string& key, const std::string& what) const;
  const std::set<std::string>& keys_present() const { return present_; }
  std::vector<std::string> keys_in_file_order() const;
  const std::string& source() const { return source_; }
  const std::string& path() const { return path_; }

 private:
  const YAML::Node* find(const std::string& key) const;
  YAML::Node node_;
  std::string source_, path_;
  std::set<std::string> present_, consumed_;
  struct Entry {
    std::string key;
    YAML::Node value;
    int line;  // of the key: where messages about it point
  };
  std::vector<Entry> entries_;  // in file order
  std::shared_ptr<const KeyLocations> origins_;
  std::shared_ptr<KeyLocations> locations_;
};

}  // namespace pelab
