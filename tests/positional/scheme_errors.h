// The message of the error a scheme's keys (key_error) or a model built with them
// (build_error) raise, or "no error", for the positional schemes' bad-input tests.
#pragma once

#include <functional>
#include <string>

#include "nn/model_util.h"
#include "pelab/core/error.h"
#include "pelab/positional/scheme.h"

namespace pelab::testing {

inline std::string error_or_none(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

inline std::string key_error(const std::string& type, const std::string& key,
                             const KeyValue& value) {
  PositionalConfig p;
  p.type = type;
  p.keys.set(key, value);
  return error_or_none([&] { resolve_defaults(p); });
}

inline std::string build_error(const ModelConfig& config) {
  return error_or_none([&] { const Encoder model(config, make_scheme, 1); });
}

}  // namespace pelab::testing
