// Reading the files of a run directory (config.yaml, summary.json, status.json) where a missing
// or unreadable file is an answer, not an error: `pelab sweep` plans runs from them and
// `pelab compare` reports them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "pelab/io/read_file.h"

namespace pelab::run_files {

// The largest run file pelab reads whole (metrics.jsonl of a long run is the largest); one
// larger than this is not one pelab wrote, and reading it is an error, not a truncation.
inline constexpr uint64_t kMaxRunFileBytes = uint64_t{1} << 30;

// The file's bytes; "" when it does not exist. Not a regular file (a FIFO is never waited
// on), unreadable or over kMaxRunFileBytes: an error naming it.
inline std::string read_text(const std::filesystem::path& path) {
  return read_regular_file_if_any(path.string(), kMaxRunFileBytes).value_or("");
}

// A JSON file, or a discarded value when it is missing or not JSON; errors as read_text.
inline nlohmann::json read_json(const std::filesystem::path& path) {
  const std::optional<std::string> text = read_regular_file_if_any(path.string(), kMaxRunFileBytes);
  if (!text) return nlohmann::json(nlohmann::json::value_t::discarded);
  return nlohmann::json::parse(*text, nullptr, false);
}

// j[key] when j is an object and that member is a string; "" otherwise.
inline std::string json_string(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return "";
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace pelab::run_files
