// The positional schemes' registry. Each scheme lives in one file under src/positional/ and
// owns everything about itself: its hooks (the PositionalScheme interface of
// pelab/nn/positional_scheme.h), the table of the positional.* keys it takes (type, default,
// valid range, help) and, if it needs one, a hook that resolves keys from facts of the run.
// The config reader, the validator, config.yaml, the error messages and docs/model.md's key
// lists all come from these tables. Registering a scheme is one line in registry.cpp.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pelab/core/keys.h"
#include "pelab/nn/positional_scheme.h"

namespace pelab {

// One positional.* key of a scheme (see pelab/core/keys.h).
using SchemeKey = KeySpec;

// Facts of a run that a scheme's keys may depend on.
struct RunFacts {
  int64_t longest_sequence = 0;  // tokens of the longest sequence trained or evaluated on
  int64_t positions = 0;         // positions used: that length, or M when randomized
};

struct SchemeInfo {
  std::string name;
  std::string summary;          // one line, for --help and docs
  std::vector<SchemeKey> keys;  // positional.* keys it takes (besides type), in config.yaml order
  std::function<std::unique_ptr<PositionalScheme>(const SchemeContext&)> make;
  // Sets keys from the run's facts (learned: the table length), or throws an error that
  // starts with "positional.<key>:". Null for schemes whose keys do not depend on the run.
  std::function<void(const RunFacts&, KeyValues&)> resolve = nullptr;
  // True if the encoding of a position depends on the sequence's length (normalized divides
  // by it): a prefix is then not encoded as the start of the whole sequence, so a model
  // generating token by token reads positions unlike the ones it was trained on.
  bool positions_depend_on_length = false;

  // Where the scheme acts (docs/model.md's "where it acts"): what the tests instantiated over
  // every scheme read to know which property must hold for it.
  enum class Acts { Nowhere, Input, QueriesAndKeys, Logits, LogitsAndValues };
  Acts acts = Acts::Nowhere;
  // Adding one constant to every position of a sequence leaves the logits unchanged
  // (docs/model.md, "Invariances"), at every setting of the scheme's keys but those the
  // Invariances name (rotary's dynamic NTK, once a sequence is longer than its L).
  bool shift_invariant = false;
  // Needs model.causal: true; the scheme refuses a bidirectional model.
  bool causal_only = false;

  const SchemeKey* key(const std::string& key_name) const { return find_key(keys, key_name); }
};

// "nowhere", "input", "queries and keys", "attention logits", "attention logits and values".
const char* to_string(SchemeInfo::Acts acts);

// The registered schemes, in registry order.
const std::vector<SchemeInfo>& scheme_table();
std::vector<std::string> scheme_names();
// The scheme called `name`; an error listing the valid names if there is none.
const SchemeInfo& scheme_info(const std::string& name);
bool is_scheme(const std::string& name);
// Every key any scheme takes, in registry order, each once.
std::vector<std::string> all_scheme_keys();

// "the 'rotary' scheme does not take this key (it takes: base)": the message about a key
// given to a scheme that does not take it.
std::string key_not_taken(const SchemeInfo& info);
// The keys given, with each missing default filled in, every value checked against the
// table (type, range, choices). Errors start with the key: "positional.<key>: must be in
// [a, b], got v".
KeyValues resolve_defaults(const PositionalConfig& positional);
// Applies the scheme's resolve hook to the keys given (see SchemeInfo::resolve).
void resolve_run_facts(PositionalConfig& positional, const RunFacts& facts);
// Builds the scheme `model.positional.type` names: fills in the defaults of its keys, checks
// every key against its table (an error names the key and what is valid), then calls its
// factory. The SchemeFactory an Encoder is given: Encoder model(config, make_scheme, seed).
std::unique_ptr<PositionalScheme> make_scheme(const ModelConfig& model, ParameterStore& params);

// The scheme's keys as docs/model.md lists them (a Markdown table; "takes no keys" if none).
std::string scheme_keys_markdown(const SchemeInfo& info);

}  // namespace pelab
