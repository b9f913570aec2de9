#include "pelab_process.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace pelab::testing {

TempDir::TempDir() {
  std::string templ = (fs::temp_directory_path() / "pelab_test_XXXXXX").string();
  if (::mkdtemp(templ.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = templ;
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

std::string TempDir::write(const std::string& name, const std::string& text) const {
  const fs::path p = path_ / name;
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
  return p.string();
}

std::vector<std::string> TempDir::entries() const {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(path_)) names.push_back(e.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

std::string make_checkout(const TempDir& tmp, const std::vector<std::string>& dirs) {
  const std::string repo = tmp / "repo";
  for (const std::string& dir : dirs) {
    fs::create_directories(fs::path(repo) / dir);
    fs::copy(fs::path(PELAB_SOURCE_DIR) / dir, fs::path(repo) / dir, fs::copy_options::recursive);
  }
  const auto [code, out] = shell("cd '" + repo +
                                 "' && git init -q && git add -A && git -c user.name=t -c "
                                 "user.email=t@example.org commit -q -m configs");
  if (code != 0) throw std::runtime_error("make_checkout: git failed: " + out);
  return repo;
}

std::pair<int, std::string> shell(const std::string& command) {
  std::string output;
  FILE* p = ::popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return {-1, ""};
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, p)) output.append(buf, n);
  const int status = ::pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes;
  // A stringstream would grow its buffer step by step and copy it once more at the end: for
  // the tests' files of 64 MiB that copying was most of a test's time.
  std::error_code error;
  const uintmax_t size = fs::file_size(path, error);
  if (!error) bytes.reserve(size);
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0)
    bytes.append(chunk, static_cast<size_t>(in.gcount()));
  return bytes;
}

void write_file(const fs::path& path, const std::string& bytes) {
  if (path.has_parent_path()) fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string pelab_binary() {
  return PELAB_BINARY;
}

namespace {

pid_t spawn(const std::vector<std::string>& args, const fs::path& cwd, const fs::path& out,
            const fs::path& err) {
  std::vector<std::string> copy = args;
  std::vector<char*> argv;
  std::string exe = pelab_binary();
  argv.push_back(exe.data());
  for (std::string& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  if (err == out) {
    posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
  } else {
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
  }
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, exe.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw std::runtime_error("cannot start " + exe);
  return pid;
}

Outcome finish(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error("waitpid failed");
  }
  Outcome o;
  if (WIFEXITED(status)) o.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) o.signal = WTERMSIG(status);
  return o;
}

}  // namespace

Outcome run_pelab(const std::vector<std::string>& args, const fs::path& cwd) {
  TempDir logs;
  const fs::path out = logs.path() / "stdout", err = logs.path() / "stderr";
  Outcome o = finish(spawn(args, cwd, out, err));
  o.out = read_file(out);
  o.err = read_file(err);
  return o;
}

pid_t start_pelab(const std::vector<std::string>& args, const fs::path& log) {
  return spawn(args, {}, log, log);
}

Outcome wait_pelab(pid_t pid, const fs::path& log) {
  Outcome o = finish(pid);
  o.err = read_file(log);
  return o;
}

namespace {
// FNV-1a over the file's 8-byte words (the last one zero-filled), read a chunk at a time:
// equal contents, equal hash; the listing names the size beside it, and the tests need no
// stronger hash. Word by word, not byte by byte: listings of directories that hold files of
// 64 MiB were most of some tests' time.
uint64_t content_hash(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  uint64_t hash = 14695981039346656037ull;
  std::vector<char> chunk(1 << 20);
  while (in.read(chunk.data(), static_cast<std::streamsize>(chunk.size())) || in.gcount() > 0) {
    const auto n = static_cast<size_t>(in.gcount());
    for (size_t at = 0; at < n; at += 8) {
      uint64_t word = 0;
      std::memcpy(&word, chunk.data() + at, std::min<size_t>(8, n - at));
      hash = (hash ^ word) * 1099511628211ull;
    }
  }
  return hash;
}
}  // namespace

std::vector<std::string> listing(const fs::path& dir) {
  std::vector<std::string> entries;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    const std::string name = fs::relative(e.path(), dir).string();
    const fs::file_status status = e.symlink_status();
    if (fs::is_regular_file(status)) {
      entries.push_back(fmt::format("{} file {} bytes {:016x}", name, fs::file_size(e.path()),
                                    content_hash(e.path())));
    } else if (fs::is_symlink(status)) {
      entries.push_back(fmt::format("{} symlink to {}", name, fs::read_symlink(e.path()).string()));
    } else {
      entries.push_back(name + (fs::is_directory(status) ? " directory" : " special file"));
    }
  }
  std::sort(entries.begin(), entries.end());
  return entries;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream ss(text);
  for (std::string line; std::getline(ss, line);) lines.push_back(line);
  return lines;
}

std::string user_error_problem(const Outcome& o, const std::vector<std::string>& parts) {
  const std::string shown = fmt::format("exit {}, signal {}, stdout '{}', stderr '{}'", o.exit_code,
                                        o.signal, o.out, o.err);
  if (o.exit_code != 2) return "expected exit code 2: " + shown;
  if (!o.out.empty()) return "expected nothing on stdout: " + shown;
  const std::vector<std::string> lines = lines_of(o.err);
  if (lines.size() != 1 || o.err.back() != '\n') return "expected one line on stderr: " + shown;
  if (lines[0].rfind("pelab: error: ", 0) != 0) return "expected 'pelab: error: ': " + shown;
  for (const std::string& part : parts)
    if (lines[0].find(part) == std::string::npos) return "expected '" + part + "' in: " + shown;
  return "";
}

}  // namespace pelab::testing
