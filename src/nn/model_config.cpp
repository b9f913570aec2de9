#include "pelab/nn/model_config.h"

#include <cmath>

#include "pelab/core/error.h"

namespace pelab {

double ModelConfig::embedding_scale() const {
  return embed_scale ? *embed_scale : std::sqrt(static_cast<double>(d_model));
}

const KeyValue& KeyValues::get(const std::string& key) const {
  auto it = values_.find(key);
  PELAB_CHECK(it != values_.end(), "positional.{} is not set", key);
  return it->second;
}

int64_t KeyValues::integer(const std::string& key) const {
  const KeyValue& v = get(key);
  PELAB_CHECK(std::holds_alternative<int64_t>(v), "positional.{} is not an integer", key);
  return std::get<int64_t>(v);
}

double KeyValues::number(const std::string& key) const {
  const KeyValue& v = get(key);
  if (std::holds_alternative<int64_t>(v)) return static_cast<double>(std::get<int64_t>(v));
  PELAB_CHECK(std::holds_alternative<double>(v), "positional.{} is not a number", key);
  return std::get<double>(v);
}

const std::string& KeyValues::text(const std::string& key) const {
  const KeyValue& v = get(key);
  PELAB_CHECK(std::holds_alternative<std::string>(v), "positional.{} is not a text", key);
  return std::get<std::string>(v);
}

}  // namespace pelab
