// Exclusive locks on files, for "one process at a time" rules: one sweep per sweep directory,
// one trainer per run directory. An flock goes with the process however it ends (no stale
// lock after a SIGKILL); Linux maps flock onto NFS byte-range locks, which the server
// arbitrates between clients, so the rule holds across the nodes of a cluster too.
#pragma once

#include <string>

namespace pelab {

class FileLock {
 public:
  // Creates `path` if needed and locks it; throws Error(`held_message`) when another process
  // holds it, and "<path>: not a regular file; expected a lock file" when something else (a
  // FIFO, a device, a symlink) is at its name. Never blocks. Close-on-exec: a child process
  // never inherits the lock.
  FileLock(const std::string& path, const std::string& held_message);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

  // Whether another process holds the lock on `path` now (false when the file is missing);
  // the same error as the constructor when `path` is not a regular file. Never blocks.
  static bool held_elsewhere(const std::string& path);

 private:
  int fd_ = -1;
};

}  // namespace pelab
