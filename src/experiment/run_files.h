// Reading the files of a run directory (config.yaml, summary.json, status.json) where a missing
// or unreadable file is an answer, not an error: `pelab sweep` plans runs from them and
// `pelab compare` reports them.
#pragma once

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace pelab::run_files {

// The file's bytes; "" when it is missing or unreadable.
inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A JSON file, or a discarded value when it is missing, unreadable or not JSON.
inline nlohmann::json read_json(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return nlohmann::json(nlohmann::json::value_t::discarded);
  std::stringstream s;
  s << in.rdbuf();
  return nlohmann::json::parse(s.str(), nullptr, false);
}

// j[key] when j is an object and that member is a string; "" otherwise.
inline std::string json_string(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return "";
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace pelab::run_files
