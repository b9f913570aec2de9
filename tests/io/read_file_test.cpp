// Reading a whole regular file within a limit: a file over it is refused, never cut.
#include "pelab/io/read_file.h"

#include <gtest/gtest.h>

#include <string>

#include "pelab/core/error.h"
#include "pelab_process.h"

namespace pelab {
namespace {

std::string error_of(const std::string& path, uint64_t limit) {
  try {
    read_regular_file(path, "a test file", limit);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// At the limit the whole file comes back; one byte over, an error naming the file, the limit
// and what the file was for (the control: the same file under a larger limit reads whole);
// a caller that asks to know gets the prefix and the flag.
TEST(ReadFile, AFileOverItsLimitIsRefusedNotCut) {
  testing::TempDir dir;
  const std::string path = dir / "f.txt";
  testing::write_file(path, "0123456789");
  EXPECT_EQ(read_regular_file(path, "a test file", 10), "0123456789");
  EXPECT_EQ(error_of(path, 9), path + ": larger than the 9 bytes allowed for a test file");
  EXPECT_EQ(error_of(path, 11), "");
  bool over = false;
  EXPECT_EQ(read_regular_file(path, "a test file", 4, &over), "0123");
  EXPECT_TRUE(over);
}

}  // namespace
}  // namespace pelab
