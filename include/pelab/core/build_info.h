// What built this pelab, recorded in every run's environment.json and printed by --version.
#pragma once

namespace pelab {

// The project version, e.g. "0.1.0".
const char* pelab_version();
// The git commit the binary was built from, e.g. "1f77a96a38bb"; "-dirty" is appended when
// tracked files differed from it, "unknown" outside a git checkout. Read at build time.
const char* pelab_git_commit();

}  // namespace pelab
