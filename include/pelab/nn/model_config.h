// The model's configuration: MODEL.md's keys, typed. YAML is read into these structs once
// (src/config/); the rest of pelab never touches YAML.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>

namespace pelab {

struct PositionalConfig {
  std::string type = "none";
  std::string combine = "add";  // input-side schemes: add | concat
  int64_t dim = 0;              // concat: width d_pe of the positional part
  double scale = 1.0;           // input-side schemes: s_pe
  double base = 10000.0;        // sinusoidal, rotary
  int64_t max_len = 0;          // learned; 0 = the longest length the run trains or evaluates on
  int64_t max_distance = 0;     // relative (default 16), t5 (default 128); 0 = the default
  int64_t num_buckets = 32;     // t5
  // The keys the user wrote (so a scheme can reject keys it does not take).
  std::set<std::string> keys_given;
};

struct ModelConfig {
  int64_t vocab_in = 0;   // from the task or dataset
  int64_t vocab_out = 0;  // from the task or dataset
  int64_t d_model = 64;
  int64_t heads = 4;
  int64_t layers = 2;
  int64_t d_ff = 0;  // 0 = 4·d_model
  double dropout = 0.0;
  std::string norm = "pre";  // pre | post
  bool causal = false;
  std::string activation = "gelu";    // gelu | relu
  std::optional<double> embed_scale;  // default sqrt(d_model)
  PositionalConfig positional;

  int64_t ffn_width() const { return d_ff > 0 ? d_ff : 4 * d_model; }
  int64_t head_dim() const { return d_model / heads; }
  double embedding_scale() const;
};

}  // namespace pelab
