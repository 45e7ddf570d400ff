// Tests of Gather, GatherElements and GatherND.
#include "reference/ops/tensor/tensor_test_util.h"

namespace parity::ops::tensor {
namespace {

using namespace testing;  // NOLINT

TEST(GatherTest, IndicesShapeReplacesTheAxis) {
  const Tensor x = Floats({3, 2}, {1, 2, 3, 4, 5, 6});
  ExpectDoubles(RunOk(NodeRunner("Gather").Input(x).Input(Ints({2, 2}, {0, 1, -1, 0}))), {2, 2, 2},
                {1, 2, 3, 4, 5, 6, 1, 2});
  ExpectDoubles(RunOk(NodeRunner("Gather").Input(x).Input(Ints({}, {1})).Attr("axis", int64_t{1})), {3}, {2, 4, 6});
  ExpectError(NodeRunner("Gather").Input(x).Input(Ints({1}, {3})), "out of range");
}

TEST(GatherElementsTest, PicksAlongAxis) {
  const Tensor x = Floats({2, 2}, {1, 2, 3, 4});
  ExpectDoubles(RunOk(NodeRunner("GatherElements").Input(x).Input(Ints({2, 2}, {0, 0, -1, 0})).Attr("axis", int64_t{1})),
                {2, 2}, {1, 1, 4, 3});
  ExpectError(NodeRunner("GatherElements").Input(x).Input(Ints({2}, {0, 0})), "same rank");
}

TEST(GatherNDTest, SlicesAndBatchDims) {
  const Tensor x = Floats({2, 2}, {0, 1, 2, 3});
  ExpectDoubles(RunOk(NodeRunner("GatherND").Input(x).Input(Ints({2, 1}, {1, 0}))), {2, 2}, {2, 3, 0, 1});
  ExpectDoubles(RunOk(NodeRunner("GatherND").Input(x).Input(Ints({2, 2}, {0, 0, 1, 1}))), {2}, {0, 3});
  const Tensor b = Floats({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  ExpectDoubles(RunOk(NodeRunner("GatherND").Input(b).Input(Ints({2, 1}, {1, 0})).Attr("batch_dims", int64_t{1})),
                {2, 2}, {2, 3, 4, 5});
  ExpectError(NodeRunner("GatherND").Input(x).Input(Ints({1, 3}, {0, 0, 0})), "last dimension");
}

}  // namespace
}  // namespace parity::ops::tensor
