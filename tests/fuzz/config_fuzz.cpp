// The config loader: arbitrary YAML text as an experiment config (groups resolve from the
// project's configs/ folder), then its resolved form, which must reload to the same text.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "fuzz_util.h"
#include "pelab/config/experiment.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::string configs = PELAB_SOURCE_DIR "/configs";
  std::string resolved;
  try {
    resolved = pelab::to_yaml(pelab::parse_experiment(text, "fuzz.yaml", {}, configs));
  } catch (const pelab::Error& e) {
    pelab::fuzz::check_error(e);
    return 0;
  }
  // What pelab writes as config.yaml must load again, unchanged.
  try {
    if (pelab::to_yaml(pelab::parse_experiment(resolved, "resolved.yaml", {}, configs)) != resolved)
      std::abort();
  } catch (const pelab::Error& e) {
    std::fprintf(stderr, "a resolved config does not reload: %s\n", e.what());
    std::abort();
  }
  return 0;
}
