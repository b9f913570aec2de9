// Reading a whole file that must be a regular file, without ever blocking. Opening a FIFO
// for reading waits for a writer, forever if none comes, and a device may never end; so the
// file is opened non-blocking and checked to be regular before anything is read. Every file
// pelab reads — configs and groups, datasets, checkpoints, a run's files, scripts it hands
// to another program — goes through here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace pelab {

// The bytes of the regular file `path`. A file of more than `limit` bytes is an error
// ("larger than the <limit> bytes allowed for <what>"), unless `over_limit` is given: then
// the first `limit` bytes come back, *over_limit says the file holds more, and the caller
// refuses it in its own words. Nothing is ever cut silently. Other errors (pelab::Error),
// each naming the path: "no such file", "not a regular file; expected <what>", "cannot open
// the file: <reason>", "read error: <reason>".
std::string read_regular_file(const std::string& path, const std::string& what, uint64_t limit,
                              bool* over_limit = nullptr);

// The same, but nullopt where the file does not exist: for the files of a run directory,
// whose absence is an answer. A file that exists but is not regular, cannot be read or holds
// more than `limit` bytes is an error, never taken for a missing one (a sweep would otherwise
// start an unreadable run afresh and delete its checkpoint).
std::optional<std::string> read_regular_file_if_any(const std::string& path, uint64_t limit);

// The last `max_bytes` bytes (or fewer) of the regular file `path`, with the errors of
// read_regular_file: for the tail of a log, which may be large.
std::string read_regular_file_tail(const std::string& path, const std::string& what,
                                   uint64_t max_bytes);

// Whether `path` is a regular file now, checked without blocking (a FIFO is not).
bool is_regular_file_now(const std::string& path);

// Throws "<path>: not a regular file; expected <what>" (or "no such file") unless `path` is a
// regular file now; for paths pelab hands to another program instead of reading itself.
void require_regular_file(const std::string& path, const std::string& what);

// The same, but a missing `path` passes: for a file pelab is about to create or append to
// (a log), where a FIFO would block the writer until some reader came.
void require_regular_file_if_any(const std::string& path, const std::string& what);

}  // namespace pelab
