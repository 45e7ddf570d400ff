// Tests of BitShift and the Bitwise operators: arithmetic right shifts,
// dropped high bits, out-of-range shift amounts, per-version types.
#include "reference/ops/elementwise/test_support.h"

namespace parity::ops {
namespace {

using namespace elementwise_test;

NodeRunner Shift(const std::string& direction, int64_t opset, const Tensor& x, const Tensor& y) {
  return Node("BitShift", opset, {x, y}).Attr("direction", direction);
}

TEST(BitShiftTest, UnsignedShifts) {
  const Tensor x = MakeInts(DataType::kUint8, {16, 4, 1});
  const Tensor y = MakeInts(DataType::kUint8, {1, 2, 3});
  EXPECT_EQ(Int64s(RunOk(Shift("RIGHT", 11, x, y))), (std::vector<int64_t>{8, 1, 0}));
  EXPECT_EQ(Int64s(RunOk(Shift("LEFT", 11, x, y))), (std::vector<int64_t>{32, 16, 8}));
  const Tensor big = MakeUint64s({1});
  EXPECT_EQ(RunOk(Shift("LEFT", 11, big, MakeUint64s({63}))).GetUint64(0), 1ull << 63);
  EXPECT_EQ(RunOk(Shift("LEFT", 11, big, MakeUint64s({64}))).GetUint64(0), 0u);
  EXPECT_EQ(RunOk(Shift("RIGHT", 11, MakeUint64s({UINT64_MAX}), MakeUint64s({UINT64_MAX}))).GetUint64(0), 0u);
}

TEST(BitShiftTest, SignedTypesArriveInOpset28) {
  const Tensor x = MakeInts(DataType::kInt8, {-8});
  const Tensor y = MakeInts(DataType::kInt8, {1});
  RunError(Shift("RIGHT", 11, x, y));
  EXPECT_EQ(Int64s(RunOk(Shift("RIGHT", 28, x, y))), (std::vector<int64_t>{-4}));
}

TEST(BitShiftTest, RightShiftOfSignedIsArithmetic) {
  const Tensor x = MakeInts(DataType::kInt32, {-8, -1, -2147483648});
  const Tensor y = MakeInts(DataType::kInt32, {1, 1, 1});
  EXPECT_EQ(Int64s(RunOk(Shift("RIGHT", 28, x, y))), (std::vector<int64_t>{-4, -1, -1073741824}));
}

TEST(BitShiftTest, LeftShiftDropsBitsPastTheSignBit) {
  const Tensor x = MakeInts(DataType::kInt8, {64, 1, -64});
  const Tensor y = MakeInts(DataType::kInt8, {1, 7, 1});
  EXPECT_EQ(Int64s(RunOk(Shift("LEFT", 28, x, y))), (std::vector<int64_t>{-128, -128, -128}));
}

TEST(BitShiftTest, OutOfRangeAmountsLeaveTheSignFill) {
  const Tensor x = MakeInts(DataType::kInt8, {-8, 4, -1, -8, 4, -1});
  const Tensor y = MakeInts(DataType::kInt8, {8, 9, 127, -1, -8, -16});
  EXPECT_EQ(Int64s(RunOk(Shift("RIGHT", 28, x, y))), (std::vector<int64_t>{-1, 0, -1, -1, 0, -1}));
  EXPECT_EQ(Int64s(RunOk(Shift("LEFT", 28, x, y))), (std::vector<int64_t>{0, 0, 0, 0, 0, 0}));
  const Tensor x64 = MakeInts(DataType::kInt64, {-8, 4});
  EXPECT_EQ(Int64s(RunOk(Shift("RIGHT", 28, x64, MakeInts(DataType::kInt64, {64, 63})))),
            (std::vector<int64_t>{-1, 0}));
}

TEST(BitShiftTest, DirectionIsRequired) {
  const Tensor x = MakeInts(DataType::kUint8, {1});
  const std::string message = RunError(Node("BitShift", 11, {x, x}));
  EXPECT_NE(message.find("direction"), std::string::npos) << message;
  RunError(Shift("UP", 11, x, x));
}

TEST(BitwiseTest, AndOrXorWithBroadcast) {
  const Tensor a = MakeInts(DataType::kInt16, {2, 2}, {0x0F0F, -1, 0x00FF, 0});
  const Tensor b = MakeInts(DataType::kInt16, {2}, {0x3333, 0x5555});
  EXPECT_EQ(Int64s(RunOk(Node("BitwiseAnd", 18, {a, b}))), (std::vector<int64_t>{0x0303, 0x5555, 0x0033, 0}));
  EXPECT_EQ(Int64s(RunOk(Node("BitwiseOr", 18, {a, b}))), (std::vector<int64_t>{0x3F3F, -1, 0x33FF, 0x5555}));
  EXPECT_EQ(Int64s(RunOk(Node("BitwiseXor", 18, {a, b}))),
            (std::vector<int64_t>{0x3C3C, -1 ^ 0x5555, 0x33CC, 0x5555}));
}

TEST(BitwiseTest, NotStaysWithinTheWidth) {
  EXPECT_EQ(Int64s(RunOk(Node("BitwiseNot", 18, {MakeInts(DataType::kUint8, {0, 0xF0})}))),
            (std::vector<int64_t>{0xFF, 0x0F}));
  EXPECT_EQ(Int64s(RunOk(Node("BitwiseNot", 18, {MakeInts(DataType::kInt32, {0, -1, 5})}))),
            (std::vector<int64_t>{-1, 0, -6}));
  EXPECT_EQ(RunOk(Node("BitwiseNot", 18, {MakeUint64s({0})})).GetUint64(0), UINT64_MAX);
}

TEST(BitwiseTest, FloatsAreRejected) {
  const Tensor f = Make(DataType::kFloat, {1});
  EXPECT_NE(RunError(Node("BitwiseAnd", 18, {f, f})).find("input 0 has element type float32"), std::string::npos);
  EXPECT_NE(RunError(Node("BitwiseNot", 18, {f})).find("input 0 has element type float32"), std::string::npos);
}

}  // namespace
}  // namespace parity::ops
