// Tests of Transpose, DepthToSpace and SpaceToDepth.
#include "reference/ops/tensor/tensor_test_util.h"

namespace parity::ops::tensor {
namespace {

using namespace testing;  // NOLINT

TEST(TransposeTest, DefaultReversesAxes) {
  Tensor y = RunOk(NodeRunner("Transpose").Input(Floats({2, 3}, Iota(6))));
  ExpectDoubles(y, {3, 2}, {0, 3, 1, 4, 2, 5});
}

TEST(TransposeTest, PermutationOfThreeAxes) {
  Tensor y = RunOk(NodeRunner("Transpose").Input(Floats({2, 3, 4}, Iota(24))).Attr("perm", std::vector<int64_t>{1, 2, 0}));
  EXPECT_EQ(y.shape(), (Shape{3, 4, 2}));
  // y[i][j][k] = x[k][i][j] = 12k + 4i + j
  EXPECT_EQ(y.GetDouble(((2 * 4) + 3) * 2 + 1), 12 + 8 + 3);
}

TEST(TransposeTest, KeepsStringsAndRefusesBadPerm) {
  Tensor y = RunOk(NodeRunner("Transpose").Input(Strings({1, 2}, {"a", "b"})));
  EXPECT_EQ(y.shape(), (Shape{2, 1}));
  EXPECT_EQ(y.strings()[1], "b");
  ExpectError(NodeRunner("Transpose").Input(Floats({2, 2}, Iota(4))).Attr("perm", std::vector<int64_t>{0, 0}),
              "not a permutation");
}

TEST(DepthToSpaceTest, DcrAndCrdOrders) {
  const Tensor x = Floats({1, 4, 1, 1}, {0, 1, 2, 3});
  // One pixel, 4 channels, blocksize 2: both modes give channel c at block (c / 2, c % 2).
  ExpectDoubles(RunOk(NodeRunner("DepthToSpace").Input(x).Attr("blocksize", int64_t{2})), {1, 1, 2, 2}, {0, 1, 2, 3});
  const Tensor x8 = Floats({1, 8, 1, 1}, Iota(8));
  // DCR: channel = (bh * 2 + bw) * 2 + c; CRD: channel = c * 4 + bh * 2 + bw.
  ExpectDoubles(RunOk(NodeRunner("DepthToSpace").Input(x8).Attr("blocksize", int64_t{2})), {1, 2, 2, 2},
                {0, 2, 4, 6, 1, 3, 5, 7});
  ExpectDoubles(RunOk(NodeRunner("DepthToSpace").Input(x8).Attr("blocksize", int64_t{2}).Attr("mode", std::string("CRD"))),
                {1, 2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  ExpectError(NodeRunner("DepthToSpace").Input(Floats({1, 3, 1, 1}, Iota(3))).Attr("blocksize", int64_t{2}),
              "multiple");
}

TEST(SpaceToDepthTest, InvertsDepthToSpace) {
  const Tensor x = Floats({1, 2, 2, 4}, Iota(16));
  for (const char* mode : {"DCR", "CRD"}) {
    Tensor d = RunOk(NodeRunner("SpaceToDepth").Opset(28).Input(x).Attr("blocksize", int64_t{2}).Attr("mode", std::string(mode)));
    EXPECT_EQ(d.shape(), (Shape{1, 8, 1, 2}));
    Tensor back = RunOk(NodeRunner("DepthToSpace").Input(d).Attr("blocksize", int64_t{2}).Attr("mode", std::string(mode)));
    ExpectDoubles(back, {1, 2, 2, 4}, Iota(16));
  }
  ExpectError(NodeRunner("SpaceToDepth").Input(Floats({1, 1, 3, 2}, Iota(6))).Attr("blocksize", int64_t{2}), "multiples");
}

}  // namespace
}  // namespace parity::ops::tensor
