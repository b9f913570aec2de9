// core/process: the one child-process runner. Each option of a captured run (the directory,
// stdin, where stderr goes, the PATH search, the output cap) and a child that cannot start.
#include "pelab/core/process.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <string>

#include "pelab/core/error.h"

namespace pelab {
namespace {

CapturedRun run_script(const std::string& script, const CaptureOptions& options = {}) {
  return try_run_captured({"/bin/sh", "-c", script}, options);
}

TEST(Process, CapturesStdoutAndTheExitStatus) {
  const CapturedRun run = run_script("echo out; echo err >&2; exit 3");
  EXPECT_EQ(run.start_error, 0);
  EXPECT_EQ(run.status, 3);
  EXPECT_EQ(run.out, "out\n");
}

TEST(Process, StderrWithStdoutOrDiscarded) {
  CaptureOptions with;
  with.stderr_to = ChildSpec::Stderr::with_stdout;
  EXPECT_EQ(run_script("echo out; echo err >&2", with).out, "out\nerr\n");
  CaptureOptions discarded;
  discarded.stderr_to = ChildSpec::Stderr::discarded;
  ::testing::internal::CaptureStderr();
  const CapturedRun run = run_script("echo out; echo err >&2", discarded);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(run.out, "out\n");
}

TEST(Process, DirectoryStdinAndEnvironment) {
  CaptureOptions options;
  options.cwd = "/";
  options.stdin_null = true;
  options.extra_env = {"PELAB_PROCESS_TEST=yes"};
  EXPECT_EQ(run_script("pwd; cat; echo $PELAB_PROCESS_TEST", options).out, "/\nyes\n");
}

TEST(Process, OutputBeyondTheCapIsDropped) {
  CaptureOptions options;
  options.max_output = 1;
  // Two writes apart: the first read holds the first only; the rest is read and dropped.
  const CapturedRun run = run_script("printf 12345; sleep 0.2; echo 67890", options);
  EXPECT_EQ(run.status, 0);
  EXPECT_EQ(run.out, "12345");
}

TEST(Process, ProgramsAreFoundInPathOnlyWhenAsked) {
  CaptureOptions options;
  options.search_path = true;
  EXPECT_EQ(try_run_captured({"sh", "-c", "echo found"}, options).out, "found\n");
  const CapturedRun not_searched = try_run_captured({"sh", "-c", "echo found"}, {});
  EXPECT_EQ(not_searched.status, -1);
  EXPECT_EQ(not_searched.start_error, ENOENT);
}

TEST(Process, AChildThatCannotStartIsAnAnswerOrAnError) {
  const CapturedRun run = try_run_captured({"/nonexistent/program"}, {});
  EXPECT_EQ(run.status, -1);
  EXPECT_EQ(run.start_error, ENOENT);
  try {
    run_captured({"/nonexistent/program"});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "cannot run /nonexistent/program: No such file or directory");
  }
}

}  // namespace
}  // namespace pelab
