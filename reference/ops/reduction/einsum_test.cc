// Tests of Einsum: explicit and implicit outputs, traces and diagonals,
// ellipsis broadcasting, bad equations.
#include "reference/ops/reduction/test_util.h"

namespace parity::ops {
namespace {

using testing::ExpectNear;
using testing::Floats;
using testing::RunOutput;

NodeRunner Einsum(const std::string& equation) {
  NodeRunner r("Einsum");
  r.Opset(12).Attr("equation", equation);
  return r;
}

TEST(EinsumTest, MatrixProduct) {
  Tensor y = RunOutput(Einsum("ij,jk->ik").Input(Floats({1, 2}, {1, 2})).Input(Floats({2, 2}, {1, 2, 3, 4})));
  ExpectNear(y, {1, 2}, {7, 10});
}

TEST(EinsumTest, ImplicitOutputSortsLabels) {
  // "ba" implicit output is "ab": a transpose of the [b, a] input.
  Tensor y = RunOutput(Einsum("ba").Input(Floats({2, 3}, {1, 2, 3, 4, 5, 6})));
  ExpectNear(y, {3, 2}, {1, 4, 2, 5, 3, 6});
}

TEST(EinsumTest, TraceAndDiagonal) {
  const Tensor m = Floats({2, 2}, {1, 2, 3, 4});
  ExpectNear(RunOutput(Einsum("ii").Input(m)), {}, {5});
  ExpectNear(RunOutput(Einsum("ii->i").Input(m)), {2}, {1, 4});
}

TEST(EinsumTest, EllipsisBatchMatmulWithBroadcast) {
  Tensor y = RunOutput(Einsum("...ij,...jk->...ik")
                           .Input(Floats({2, 1, 2}, {1, 2, 3, 4}))
                           .Input(Floats({2, 1}, {1, 1})));
  ExpectNear(y, {2, 1, 1}, {3, 7});
}

TEST(EinsumTest, SumAndOuterProduct) {
  ExpectNear(RunOutput(Einsum("ij->i").Input(Floats({2, 2}, {1, 2, 3, 4}))), {2}, {3, 7});
  ExpectNear(RunOutput(Einsum("i,j").Input(Floats({2}, {1, 2})).Input(Floats({2}, {3, 4}))), {2, 2}, {3, 4, 6, 8});
}

TEST(EinsumTest, BadEquationsAreErrors) {
  EXPECT_FALSE(Einsum("ij->k").Input(Floats({1, 1}, {1})).Run().ok());
  EXPECT_FALSE(Einsum("ijk").Input(Floats({1, 1}, {1})).Run().ok());
  EXPECT_FALSE(Einsum("ij,jk").Input(Floats({1, 2}, {1, 2})).Input(Floats({3, 1}, {1, 2, 3})).Run().ok());
  EXPECT_FALSE(Einsum("i$").Input(Floats({1, 1}, {1})).Run().ok());
}

}  // namespace
}  // namespace parity::ops
