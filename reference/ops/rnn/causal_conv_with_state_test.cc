// Tests of CausalConvWithState-27: short causal convolutions computed by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "reference/ops/node_runner.h"
#include "reference/ops/test_builders.h"

namespace parity::ops::rnn {
namespace {

using testing_util::ExpectNear;
using testing_util::Floats;
using testing_util::Make;

NodeRunner Node() {
  NodeRunner runner("CausalConvWithState");
  runner.Opset(27).Outputs(2);
  return runner;
}

TEST(CausalConvWithState, ZeroPaddingWithoutPastState) {
  // padded = [0, 0, 1, 2, 3, 4], y[l] = p[l] + 2 p[l+1] + 3 p[l+2].
  auto out = Node().Input(Floats({1, 1, 4}, {1, 2, 3, 4})).Input(Floats({1, 1, 3}, {1, 2, 3})).Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectNear((*out)[0].tensor().ToDoubles(), {3, 8, 14, 20});
  EXPECT_EQ((*out)[1].tensor().shape(), Shape({1, 1, 2}));
  ExpectNear((*out)[1].tensor().ToDoubles(), {3, 4});
}

TEST(CausalConvWithState, PastStateAndBiasPerChannel) {
  // Channel 0: padded [5, 6, 1], weights [1, 2], bias 1: y = [5+12+1, 6+2+1].
  // Channel 1: padded [1, 0, 0], weights [0, 10], bias -1: y = [-1, -1].
  auto out = Node()
                 .Input(Floats({1, 2, 2}, {6, 1, 0, 0}))
                 .Input(Floats({2, 1, 2}, {1, 2, 0, 10}))
                 .Input(Floats({2}, {1, -1}))
                 .Input(Floats({1, 2, 1}, {5, 1}))
                 .Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectNear((*out)[0].tensor().ToDoubles(), {18, 9, -1, -1});
  ExpectNear((*out)[1].tensor().ToDoubles(), {1, 0});
}

TEST(CausalConvWithState, ShortInputKeepsPartOfThePastInTheState) {
  // k = 4, L = 1: present = last 3 of [1, 2, 3, 9].
  auto out = Node()
                 .Input(Floats({1, 1, 1}, {9}))
                 .Input(Floats({1, 1, 4}, {0, 0, 0, 1}))
                 .AbsentInput()
                 .Input(Floats({1, 1, 3}, {1, 2, 3}))
                 .Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectNear((*out)[0].tensor().ToDoubles(), {9});
  ExpectNear((*out)[1].tensor().ToDoubles(), {2, 3, 9});
}

TEST(CausalConvWithState, KernelSizeOneHasAnEmptyState) {
  auto out = Node().Input(Floats({2, 1, 2}, {1, 2, 3, 4})).Input(Floats({1, 1, 1}, {2})).Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectNear((*out)[0].tensor().ToDoubles(), {2, 4, 6, 8});
  EXPECT_EQ((*out)[1].tensor().shape(), Shape({2, 1, 0}));
}

TEST(CausalConvWithState, SiluAndSwishApplyToTheSum) {
  for (const char* name : {"silu", "swish"}) {
    auto out = Node()
                   .Attr("activation", std::string(name))
                   .Input(Floats({1, 1, 3}, {0, 1, -2}))
                   .Input(Floats({1, 1, 1}, {1}))
                   .Run();
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    ExpectNear((*out)[0].tensor().ToDoubles(), {0, 1 / (1 + std::exp(-1.0)), -2 / (1 + std::exp(2.0))});
  }
}

TEST(CausalConvWithState, Float16RoundsOnceAtTheEnd) {
  // 1 + 2^-11 + 2^-11, summed in this order: exactly it is 1 + 2^-10, a
  // float16 value; rounding after each addition would give 1 (ties to even twice).
  const double tiny = std::ldexp(1.0, -11);
  auto out = Node()
                 .Input(Make(DataType::kFloat16, {1, 1, 1}, {1}))
                 .Input(Make(DataType::kFloat16, {1, 1, 3}, {1, tiny, tiny}))
                 .AbsentInput()
                 .Input(Make(DataType::kFloat16, {1, 1, 2}, {1, 1}))
                 .Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].tensor().dtype(), DataType::kFloat16);
  EXPECT_EQ((*out)[0].tensor().GetDouble(0), 1.0 + std::ldexp(1.0, -10));
}

TEST(CausalConvWithState, RejectsBadShapesTypesAndActivations) {
  const Tensor x = Floats({1, 2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor w = Floats({2, 1, 2}, {1, 1, 1, 1});
  EXPECT_TRUE(Node().Input(x).Input(w).Run().ok());
  EXPECT_FALSE(Node().Attr("activation", std::string("relu")).Input(x).Input(w).Run().ok());
  EXPECT_FALSE(Node().Input(x).Input(Floats({1, 1, 2}, {1, 1})).Run().ok());           // channels differ
  EXPECT_FALSE(Node().Input(x).Input(Floats({2, 1, 0}, {})).Run().ok());               // k = 0
  EXPECT_FALSE(Node().Input(x).Input(w).Input(Floats({3}, {0, 0, 0})).Run().ok());     // bias length
  EXPECT_FALSE(Node().Input(x).Input(w).AbsentInput().Input(Floats({1, 2, 2}, {0, 0, 0, 0})).Run().ok());
  EXPECT_FALSE(Node().Input(x).Input(Make(DataType::kDouble, {2, 1, 2}, {1, 1, 1, 1})).Run().ok());
  EXPECT_FALSE(Node().Input(Floats({2, 3}, {1, 2, 3, 4, 5, 6})).Input(w).Run().ok());  // rank 2
}

}  // namespace
}  // namespace parity::ops::rnn
