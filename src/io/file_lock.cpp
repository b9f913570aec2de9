#include "pelab/io/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "pelab/core/error.h"

namespace pelab {

namespace {

// Non-blocking, so that a FIFO or a device planted at the lock's name is never waited on, and
// not through a symlink: a lock is a regular file pelab made.
constexpr int kLockOpenFlags = O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC;

[[noreturn]] void not_a_lock(const std::string& path) {
  throw Error(fmt::format("{}: not a regular file; expected a lock file", path));
}

// Closes `fd` and throws unless it is a regular file.
void require_regular(int fd, const std::string& path) {
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) return;
  ::close(fd);
  not_a_lock(path);
}

}  // namespace

FileLock::FileLock(const std::string& path, const std::string& held_message) {
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | kLockOpenFlags, 0644);
  if (fd_ < 0 && (errno == ELOOP || errno == ENXIO || errno == EISDIR)) not_a_lock(path);
  PELAB_CHECK(fd_ >= 0, "{}: cannot create: {}", path, std::strerror(errno));
  require_regular(fd_, path);
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd_);
    fd_ = -1;
    throw Error(held_message);
  }
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);
}

bool FileLock::held_elsewhere(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | kLockOpenFlags);
  if (fd < 0 && (errno == ELOOP || errno == ENXIO)) not_a_lock(path);
  if (fd < 0) return false;
  require_regular(fd, path);
  const bool held = ::flock(fd, LOCK_EX | LOCK_NB) != 0;
  ::close(fd);  // releases the probe's own lock, if it got one
  return held;
}

}  // namespace pelab
