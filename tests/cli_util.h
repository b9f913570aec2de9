// Running the real `pelab` binary from tests (end-to-end and CLI tests).
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <utility>

namespace pelab::testing {

// The pelab executable built next to the test binary (build/pelab for build/tests/pelab_tests).
inline std::string pelab_binary() {
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe");
  return (self.parent_path().parent_path() / "pelab").string();
}

// Runs a shell command; returns its exit status and stdout + stderr.
inline std::pair<int, std::string> shell(const std::string& command) {
  std::string output;
  FILE* p = ::popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return {-1, ""};
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, p)) output.append(buf, n);
  const int status = ::pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

}  // namespace pelab::testing
