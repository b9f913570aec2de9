#include "pelab/io/read_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "pelab/core/error.h"

namespace pelab {

namespace {

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

std::string reason(int error) {
  return std::strerror(error);
}

// Opens `path` for reading without blocking and checks that it is a regular file; the
// descriptor is then made blocking again for ordinary reads.
int open_regular(const std::string& path, const std::string& what) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    const int error = errno;
    PELAB_CHECK(error != ENOENT, "{}: no such file", path);
    PELAB_CHECK(error != EISDIR, "{}: not a regular file; expected {}", path, what);
    throw Error(fmt::format("{}: cannot open the file: {}", path, reason(error)));
  }
  Fd guard{fd};
  struct stat st {};
  PELAB_CHECK(::fstat(fd, &st) == 0, "{}: cannot open the file: {}", path, reason(errno));
  PELAB_CHECK(S_ISREG(st.st_mode), "{}: not a regular file; expected {}", path, what);
  const int flags = ::fcntl(fd, F_GETFL);
  PELAB_CHECK(flags >= 0 && ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == 0,
              "{}: cannot open the file: {}", path, reason(errno));
  guard.fd = -1;
  return fd;
}

}  // namespace

std::string read_regular_file(const std::string& path, const std::string& what, uint64_t limit,
                              bool* over_limit) {
  Fd file{open_regular(path, what)};
  std::string bytes;
  char buffer[1 << 16];
  if (over_limit) *over_limit = false;
  while (true) {
    const ssize_t n = ::read(file.fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    PELAB_CHECK(n >= 0, "{}: read error: {}", path, reason(errno));
    if (n == 0) break;
    const uint64_t room = limit - bytes.size();
    if (static_cast<uint64_t>(n) > room) {
      // A reader never works on a silently cut file: the caller that asked to know gets the
      // first `limit` bytes and says what is wrong itself; any other gets this error.
      PELAB_CHECK(over_limit != nullptr, "{}: larger than the {} bytes allowed for {}", path, limit,
                  what);
      bytes.append(buffer, static_cast<size_t>(room));
      *over_limit = true;
      break;
    }
    bytes.append(buffer, static_cast<size_t>(n));
  }
  return bytes;
}

std::optional<std::string> read_regular_file_if_any(const std::string& path, uint64_t limit) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 && errno == ENOENT) return std::nullopt;
  bool over = false;
  std::string bytes = read_regular_file(path, "a file of a run directory", limit, &over);
  PELAB_CHECK(!over, "{}: larger than {} bytes, not a file pelab wrote", path, limit);
  return bytes;
}

std::string read_regular_file_tail(const std::string& path, const std::string& what,
                                   uint64_t max_bytes) {
  Fd file{open_regular(path, what)};
  struct stat st {};
  PELAB_CHECK(::fstat(file.fd, &st) == 0, "{}: read error: {}", path, reason(errno));
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  const uint64_t from = size > max_bytes ? size - max_bytes : 0;
  PELAB_CHECK(::lseek(file.fd, static_cast<off_t>(from), SEEK_SET) >= 0, "{}: read error: {}", path,
              reason(errno));
  std::string bytes;
  char buffer[1 << 16];
  while (bytes.size() < max_bytes) {
    const ssize_t n =
        ::read(file.fd, buffer, std::min<uint64_t>(sizeof buffer, max_bytes - bytes.size()));
    if (n < 0 && errno == EINTR) continue;
    PELAB_CHECK(n >= 0, "{}: read error: {}", path, reason(errno));
    if (n == 0) break;
    bytes.append(buffer, static_cast<size_t>(n));
  }
  return bytes;
}

bool is_regular_file_now(const std::string& path) {
  try {
    Fd checked{open_regular(path, "a regular file")};
    return true;
  } catch (const Error&) {
    return false;
  }
}

void require_regular_file(const std::string& path, const std::string& what) {
  Fd checked{open_regular(path, what)};
}

void require_regular_file_if_any(const std::string& path, const std::string& what) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 && errno == ENOENT) return;
  require_regular_file(path, what);
}

}  // namespace pelab
