// Tests of ScatterElements, Scatter and ScatterND with their reductions.
#include "reference/ops/tensor/tensor_test_util.h"

namespace parity::ops::tensor {
namespace {

using namespace testing;  // NOLINT

TEST(ScatterElementsTest, WritesAlongAxisWithNegativeIndices) {
  Tensor y = RunOk(NodeRunner("ScatterElements")
                       .Input(Floats({1, 5}, {1, 2, 3, 4, 5}))
                       .Input(Ints({1, 2}, {1, -2}))
                       .Input(Floats({1, 2}, {10, 20}))
                       .Attr("axis", int64_t{1}));
  ExpectDoubles(y, {1, 5}, {1, 10, 3, 20, 5});
}

TEST(ScatterElementsTest, ReductionsCombineDuplicates) {
  auto run = [](const char* reduction) {
    return RunOk(NodeRunner("ScatterElements").Opset(18)
                     .Input(Floats({3}, {1, 2, 3}))
                     .Input(Ints({3}, {1, 1, 0}))
                     .Input(Floats({3}, {4, 5, -1}))
                     .Attr("reduction", std::string(reduction)));
  };
  ExpectDoubles(run("add"), {3}, {0, 11, 3});
  ExpectDoubles(run("mul"), {3}, {-1, 40, 3});
  ExpectDoubles(run("max"), {3}, {1, 5, 3});
  ExpectDoubles(run("min"), {3}, {-1, 2, 3});
  ExpectError(NodeRunner("ScatterElements").Opset(16).Input(Floats({1}, {1})).Input(Ints({1}, {0}))
                  .Input(Floats({1}, {1})).Attr("reduction", std::string("max")),
              "not supported at opset 16");
}

TEST(ScatterElementsTest, IntegerAddWrapsToWidth) {
  StatusOr<Tensor> data = Tensor::FromDoubles(DataType::kInt8, {1}, {100});
  StatusOr<Tensor> updates = Tensor::FromDoubles(DataType::kInt8, {2}, {100, 100});
  Tensor y = RunOk(NodeRunner("ScatterElements").Opset(18).Input(*data).Input(Ints({2}, {0, 0})).Input(*updates)
                       .Attr("reduction", std::string("add")));
  ExpectInts(y, {1}, {44});  // 300 wraps to 44 in int8
}

TEST(ScatterTest, DeprecatedNameWorksBeforeOpset11) {
  Tensor y = RunOk(NodeRunner("Scatter").Opset(10).Input(Floats({3}, {0, 0, 0})).Input(Ints({1}, {2}))
                       .Input(Floats({1}, {7})));
  ExpectDoubles(y, {3}, {0, 0, 7});
  ExpectError(NodeRunner("Scatter").Opset(11).Input(Floats({3}, {0, 0, 0})).Input(Ints({1}, {2}))
                  .Input(Floats({1}, {7})),
              "deprecated");
}

TEST(ScatterNDTest, SlicesAndReductions) {
  const Tensor data = Floats({2, 2}, {1, 2, 3, 4});
  ExpectDoubles(RunOk(NodeRunner("ScatterND").Input(data).Input(Ints({1, 1}, {1})).Input(Floats({1, 2}, {8, 9}))),
                {2, 2}, {1, 2, 8, 9});
  ExpectDoubles(RunOk(NodeRunner("ScatterND").Opset(16).Input(data).Input(Ints({2, 2}, {0, 1, 0, 1}))
                          .Input(Floats({2}, {10, 20})).Attr("reduction", std::string("add"))),
                {2, 2}, {1, 32, 3, 4});
  ExpectError(NodeRunner("ScatterND").Input(data).Input(Ints({1, 1}, {2})).Input(Floats({1, 2}, {8, 9})),
              "out of range");
  ExpectError(NodeRunner("ScatterND").Input(data).Input(Ints({1, 1}, {0})).Input(Floats({2}, {8, 9})),
              "updates shape");
}

}  // namespace
}  // namespace parity::ops::tensor
