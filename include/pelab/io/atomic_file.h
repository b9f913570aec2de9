// Atomic file replacement: readers of `path` see either its old content or the complete new
// content, never a partial write, even if the process dies or the machine loses power.
#pragma once

#include <string>

namespace pelab {

// Writes `bytes` to `path + ".tmp-<pid>"` in the same directory, flushes and fsyncs it, renames
// it over `path` and fsyncs the directory. On failure the temporary is removed, `path` keeps
// its previous content (or stays absent) and a pelab::Error names the path and the errno text.
// Two threads of one process must not write the same path at the same time (they would
// share the temporary name).
void write_file_atomic(const std::string& path, const std::string& bytes);

// Creates `path` and its parents if missing; a pelab::Error names the path otherwise.
void ensure_directory(const std::string& path);

// The temporary name write_file_atomic uses for `path` in this process.
std::string atomic_temp_path(const std::string& path);

}  // namespace pelab
