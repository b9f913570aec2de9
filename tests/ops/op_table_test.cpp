// "No op without an entry": every function declared in include/pelab/ops/ops.h that returns
// a Tensor must have at least one case in the op table.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "ops/op_table.h"

namespace pelab::testing {
namespace {

TEST(OpTableCoverage, EveryDeclaredOpHasAnEntry) {
  std::ifstream header(PELAB_SOURCE_DIR "/include/pelab/ops/ops.h");
  ASSERT_TRUE(header) << "cannot read ops.h";
  std::stringstream text;
  text << header.rdbuf();
  const std::string source = text.str();
  std::set<std::string> declared;
  const std::regex decl(R"(\nTensor (\w+)\()");
  for (std::sregex_iterator it(source.begin(), source.end(), decl), end; it != end; ++it)
    declared.insert((*it)[1]);
  ASSERT_GT(declared.size(), 20u);
  std::set<std::string> covered;
  for (const OpCase& c : op_cases()) covered.insert(c.name.substr(0, c.name.find('/')));
  for (const std::string& op : declared) EXPECT_TRUE(covered.count(op)) << op << " has no entry";
  for (const std::string& op : covered) EXPECT_TRUE(declared.count(op)) << op << " is not in ops.h";
}

}  // namespace
}  // namespace pelab::testing
