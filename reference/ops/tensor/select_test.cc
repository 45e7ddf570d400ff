// Tests of NonZero, Compress, Trilu, OneHot and ReverseSequence.
#include <limits>

#include "reference/ops/tensor/tensor_test_util.h"

namespace parity::ops::tensor {
namespace {

using namespace testing;  // NOLINT

TEST(NonZeroTest, CoordinatesInRowMajorOrder) {
  ExpectInts(RunOk(NodeRunner("NonZero").Input(Floats({2, 2}, {1, 0, 0, -2}))), {2, 2}, {0, 1, 0, 1});
  ExpectInts(RunOk(NodeRunner("NonZero").Input(Strings({3}, {"", "x", ""}))), {1, 1}, {1});
  ExpectInts(RunOk(NodeRunner("NonZero").Input(Floats({}, {5}))), {0, 1}, {});
}

TEST(CompressTest, AlongAxisAndFlattened) {
  const Tensor x = Floats({2, 2}, {1, 2, 3, 4});
  StatusOr<Tensor> cond = Tensor::FromDoubles(DataType::kBool, {2}, {0, 1});
  ExpectDoubles(RunOk(NodeRunner("Compress").Input(x).Input(*cond).Attr("axis", int64_t{1})), {2, 1}, {2, 4});
  ExpectDoubles(RunOk(NodeRunner("Compress").Input(x).Input(*cond)), {1}, {2});  // flattened, shorter condition
  StatusOr<Tensor> longer = Tensor::FromDoubles(DataType::kBool, {3}, {0, 0, 1});
  ExpectError(NodeRunner("Compress").Input(x).Input(*longer).Attr("axis", int64_t{0}), "selects index 2");
}

TEST(TriluTest, UpperLowerAndOffsets) {
  const Tensor x = Floats({2, 3}, {1, 2, 3, 4, 5, 6});
  ExpectDoubles(RunOk(NodeRunner("Trilu").Opset(14).Input(x)), {2, 3}, {1, 2, 3, 0, 5, 6});
  ExpectDoubles(RunOk(NodeRunner("Trilu").Opset(14).Input(x).Input(Ints({}, {-1})).Attr("upper", int64_t{0})),
                {2, 3}, {0, 0, 0, 4, 0, 0});
  ExpectDoubles(RunOk(NodeRunner("Trilu").Opset(14).Input(x).Input(Ints({}, {std::numeric_limits<int64_t>::min()}))),
                {2, 3}, {1, 2, 3, 4, 5, 6});
}

TEST(OneHotTest, AxisNegativeAndOutOfRangeIndices) {
  Tensor y = RunOk(NodeRunner("OneHot").Input(Ints({3}, {0, -1, 5})).Input(Ints({}, {3})).Input(Floats({2}, {0, 7})));
  ExpectDoubles(y, {3, 3}, {7, 0, 0, 0, 0, 7, 0, 0, 0});
  Tensor z = RunOk(NodeRunner("OneHot").Input(Ints({2}, {1, 0})).Input(Floats({}, {2.9})).Input(Ints({2}, {-1, 1}))
                       .Attr("axis", int64_t{0}));
  ExpectInts(z, {2, 2}, {-1, 1, 1, -1});  // depth 2.9 truncates to 2
}

TEST(ReverseSequenceTest, ReversesEachBatchPrefix) {
  // time_axis 0, batch_axis 1: x[t][b]
  const Tensor x = Floats({3, 2}, {0, 10, 1, 11, 2, 12});
  Tensor y = RunOk(NodeRunner("ReverseSequence").Input(x).Input(Ints({2}, {3, 2})));
  ExpectDoubles(y, {3, 2}, {2, 11, 1, 10, 0, 12});
  ExpectError(NodeRunner("ReverseSequence").Input(x).Input(Ints({2}, {4, 0})), "outside");
}

}  // namespace
}  // namespace parity::ops::tensor
