// Tests of the rnn family's kernels (RNN, GRU and LSTM): small cases whose results
// follow from the definitions by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "reference/ops/node_runner.h"
#include "reference/ops/reference_registry.h"
#include "reference/ops/test_builders.h"

namespace parity::ops::rnn {
namespace {

using testing_util::Floats;
using testing_util::ExpectNear;

TEST(Registration, TheReferenceRegistryHasTheRnnKernels) {
  for (const char* op : {"RNN", "GRU", "LSTM"}) {
    EXPECT_TRUE(ReferenceRegistry().Knows("", op)) << op;
  }
}

TEST(Rnn, OneStepWithIdentityWeights) {
  // h1 = tanh(x W^T + h0 R^T + Wb + Rb) with W = 1, R = 0, no bias.
  Tensor x = Floats({1, 1, 1}, {0.5});
  Tensor w = Floats({1, 1, 1}, {1});
  Tensor r = Floats({1, 1, 1}, {0});
  auto y = NodeRunner("RNN").Opset(22).Input(x).Input(w).Input(r).Attr("hidden_size", int64_t{1}).RunOne();
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  ExpectNear(y->ToDoubles(), {std::tanh(0.5)});
}

// hidden_size * 4 gates past int64 was signed overflow (undefined
// behaviour); it must be an error that names the attribute.
TEST(Lstm, HiddenSizeWhoseGateRowsOverflowIsRefused) {
  Tensor x = Floats({1, 1, 1}, {0.5});
  Tensor w = Floats({1, 4, 1}, {1, 1, 1, 1});
  Tensor r = Floats({1, 4, 1}, {0, 0, 0, 0});
  auto y = NodeRunner("LSTM")
               .Opset(22)
               .Input(x)
               .Input(w)
               .Input(r)
               .Attr("hidden_size", int64_t{1} << 62)
               .RunOne();
  ASSERT_FALSE(y.ok());
  EXPECT_NE(y.status().message().find("overflows"), std::string::npos) << y.status().message();
}

TEST(Gru, SequenceLensStopEachBatchAndZeroTheRest) {
  Tensor x = Floats({2, 1, 1}, {1, 1});
  Tensor w = Floats({1, 3, 1}, {0, 0, 1});  // z = r = sigmoid(0) = 0.5
  Tensor r = Floats({1, 3, 1}, {0, 0, 0});
  auto out = NodeRunner("GRU")
                 .Opset(22)
                 .Input(x)
                 .Input(w)
                 .Input(r)
                 .AbsentInput()
                 .Input(Tensor::FromInt64s({1}, {1}))
                 .Outputs(2)
                 .Attr("hidden_size", int64_t{1})
                 .Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const double h1 = 0.5 * std::tanh(1.0);
  ExpectNear((*out)[0].tensor().ToDoubles(), {h1, 0});
  ExpectNear((*out)[1].tensor().ToDoubles(), {h1});
}

TEST(Lstm, InputForgetCouplingAndCellOutput) {
  Tensor x = Floats({1, 1, 1}, {0});
  Tensor w = Floats({1, 4, 1}, {0, 0, 0, 0});
  Tensor r = Floats({1, 4, 1}, {0, 0, 0, 0});
  Tensor h0 = Floats({1, 1, 1}, {0});
  Tensor c0 = Floats({1, 1, 1}, {2});
  auto out = NodeRunner("LSTM")
                 .Opset(22)
                 .Input(x)
                 .Input(w)
                 .Input(r)
                 .AbsentInput()
                 .AbsentInput()
                 .Input(h0)
                 .Input(c0)
                 .Outputs(3)
                 .Attr("hidden_size", int64_t{1})
                 .Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  // i = f = o = 0.5, candidate = tanh(0) = 0: c = 0.5 * 2 = 1, h = 0.5 tanh(1).
  ExpectNear((*out)[2].tensor().ToDoubles(), {1});
  ExpectNear((*out)[1].tensor().ToDoubles(), {0.5 * std::tanh(1.0)});
}

}  // namespace
}  // namespace parity::ops::rnn
