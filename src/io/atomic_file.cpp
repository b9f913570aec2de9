#include "pelab/io/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include "pelab/core/error.h"

#include <filesystem>

namespace pelab {
namespace {

std::string errno_text(int err) {
  return std::generic_category().message(err);
}

// The directory holding `path` ("." for a bare file name).
std::string parent_directory(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// Closes the descriptor and removes the temporary unless released (i.e. renamed).
class TempFile {
 public:
  explicit TempFile(std::string path) : path_(std::move(path)) {}
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (created_) ::unlink(path_.c_str());
  }
  int fd_ = -1;
  bool created_ = false;
  const std::string path_;
};

[[noreturn]] void fail(const std::string& path, const std::string& step, int err) {
  throw Error(fmt::format("{}: cannot write the file: {} failed: {}", path, step, errno_text(err)));
}

}  // namespace

std::string atomic_temp_path(const std::string& path) {
  return fmt::format("{}.tmp-{}", path, static_cast<long>(::getpid()));
}

void ensure_directory(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  PELAB_CHECK(!ec, "{}: cannot create the directory: {}", path, ec.message());
}

void write_file_atomic(const std::string& path, const std::string& bytes) {
  PELAB_CHECK(!path.empty(), "cannot write a file with an empty path");
  TempFile temp(atomic_temp_path(path));
  // O_NOFOLLOW: never write through a symlink planted at the temporary name. O_NONBLOCK: a
  // FIFO planted there is refused (no reader) or found below, never waited on; a regular
  // file's writes do not care.
  temp.fd_ =
      ::open(temp.path_.c_str(),
             O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0666);
  if (temp.fd_ < 0) fail(path, fmt::format("creating the temporary '{}'", temp.path_), errno);
  struct stat st {};
  if (::fstat(temp.fd_, &st) != 0 || !S_ISREG(st.st_mode))
    throw Error(fmt::format("{}: cannot write the file: the temporary '{}' is not a regular file",
                            path, temp.path_));
  temp.created_ = true;

  const char* data = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    const ssize_t n = ::write(temp.fd_, data, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(path, fmt::format("writing the temporary '{}'", temp.path_), errno);
    }
    data += n;
    left -= static_cast<size_t>(n);
  }
  if (::fsync(temp.fd_) != 0) fail(path, fmt::format("fsync of '{}'", temp.path_), errno);
  const int fd = temp.fd_;
  temp.fd_ = -1;
  if (::close(fd) != 0) fail(path, fmt::format("closing the temporary '{}'", temp.path_), errno);

  if (::rename(temp.path_.c_str(), path.c_str()) != 0) {
    fail(path, fmt::format("renaming '{}' over it", temp.path_), errno);
  }
  temp.created_ = false;  // it is `path` now

  // Make the rename itself durable.
  const std::string dir = parent_directory(path);
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) fail(path, fmt::format("opening its directory '{}'", dir), errno);
  const int rc = ::fsync(dir_fd);
  const int err = errno;
  ::close(dir_fd);
  // Some file systems cannot sync a directory; the rename is as durable as they allow.
  if (rc != 0 && err != EINVAL && err != ENOTSUP) {
    fail(path, fmt::format("fsync of its directory '{}'", dir), err);
  }
}

}  // namespace pelab
