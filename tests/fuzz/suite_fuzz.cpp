// The suite-file reader: arbitrary YAML text as configs/suites/fuzz.yaml (its task paths
// resolve among the project's configs), then its columns, plan-independent parts and
// fingerprint. Only pelab::Error may come out.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "fuzz_util.h"
#include "pelab/config/experiment.h"
#include "pelab/suite/suite.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  static const bool configured = [] {
    pelab::set_config_search_path({PELAB_SOURCE_DIR "/configs"});
    return true;
  }();
  (void)configured;
  try {
    const pelab::Suite suite =
        pelab::parse_suite(text, PELAB_SOURCE_DIR "/configs/suites/fuzz.yaml");
    (void)pelab::suite_schemes(suite, {});
    (void)suite.fingerprint();
    (void)suite.budget_overrides();
  } catch (const pelab::Error& e) {
    pelab::fuzz::check_error(e);
  }
  return 0;
}
