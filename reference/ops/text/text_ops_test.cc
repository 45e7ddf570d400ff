// Tests of the text family's kernels (the string operators): small cases whose results
// follow from the definitions by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "reference/ops/node_runner.h"
#include "reference/ops/reference_registry.h"
#include "reference/ops/test_builders.h"

namespace parity::ops::text {
namespace {

TEST(Registration, TheReferenceRegistryHasTheTextKernels) {
  for (const char* op : {"StringSplit", "StringConcat", "RegexFullMatch"}) {
    EXPECT_TRUE(ReferenceRegistry().Knows("", op)) << op;
  }
}

TEST(Strings, SplitLikePythonAndConcatBroadcasts) {
  auto split = NodeRunner("StringSplit").Opset(20).Input(testing_util::MakeStrings({2}, {" a  b ", "c"})).Outputs(2).Run();
  ASSERT_TRUE(split.ok()) << split.status().ToString();
  EXPECT_EQ((*split)[0].tensor().strings(), std::vector<std::string>({"a", "b", "c", ""}));
  EXPECT_EQ((*split)[1].tensor().ToInt64s(), std::vector<int64_t>({2, 1}));
  auto by_comma = NodeRunner("StringSplit")
                      .Opset(20)
                      .Input(testing_util::MakeStrings({1}, {"a,,b,c"}))
                      .Outputs(2)
                      .Attr("delimiter", std::string(","))
                      .Attr("maxsplit", int64_t{2})
                      .Run();
  ASSERT_TRUE(by_comma.ok());
  EXPECT_EQ((*by_comma)[0].tensor().strings(), std::vector<std::string>({"a", "", "b,c"}));
  auto cat = NodeRunner("StringConcat").Opset(20).Input(testing_util::MakeStrings({2}, {"a", "b"})).Input(testing_util::MakeStrings({}, {"!"})).RunOne();
  ASSERT_TRUE(cat.ok());
  EXPECT_EQ(cat->strings(), std::vector<std::string>({"a!", "b!"}));
}

TEST(Strings, RegexFullMatchNeedsTheWholeString) {
  auto out = NodeRunner("RegexFullMatch")
                 .Opset(20)
                 .Input(testing_util::MakeStrings({2}, {"abc", "abcd"}))
                 .Attr("pattern", std::string("a.c"))
                 .RunOne();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->ToInt64s(), std::vector<int64_t>({1, 0}));
  EXPECT_FALSE(NodeRunner("RegexFullMatch").Opset(20).Input(testing_util::MakeStrings({1}, {"a"})).Attr("pattern", std::string("(")).Run().ok());
}

}  // namespace
}  // namespace parity::ops::text
