// Where a recorded result comes from: the binary's commit, whether the source tree that holds
// the configs matched it, and the machine. Results committed under docs/ must come from one
// clean commit, so `pelab reproduce` (and the task survey) refuse a dirty tree unless the user
// says --allow-dirty, and then record that they did.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace pelab {

struct Provenance {
  std::string version;           // pelab's version
  std::string binary_commit;     // the commit the binary was built from ("…-dirty", "unknown")
  std::string source_dir;        // the git checkout holding the configs ("" when not in one)
  std::string source_commit;     // its HEAD (12 hex digits), "" when not in a checkout
  std::string source_changes;    // tracked changes and untracked configs, "" when clean
  bool source_is_pelab = false;  // the checkout is pelab's own source (its commit must match)
  std::string cpu;               // the CPU's model name
  std::string isa;               // avx512 | avx2 | scalar
  bool allow_dirty = false;      // the user accepted a tree that is not clean

  // Why the result cannot be tied to one clean commit ("" when it can).
  std::string dirty_reason() const;
  // One line for a report: "pelab 0.1.0, commit 1f77a96a38bb (clean); AMD EPYC 7B13, avx2".
  std::string describe() const;
  nlohmann::json to_json() const;
};

// The provenance of a run that reads its configs from `configs_dir`.
Provenance read_provenance(const std::string& configs_dir, bool allow_dirty);

// Throws Error naming `command` and what is not clean, unless the tree is clean or
// provenance.allow_dirty.
void require_clean_tree(const Provenance& provenance, const std::string& command);

}  // namespace pelab
