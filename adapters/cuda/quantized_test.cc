// The 8-bit products' path (quantized.cc) without a device: the operands
// packed as the kernels pack them, cuBLASLt's int8 call emulated on the
// packed bytes, the zero points taken out and the sums finished by the
// kernels' own functions (kernel_math.h), each against the reference's
// MatMulInteger and QLinearMatMul, bit for bit; the int8 descriptors,
// which cuBLASLt makes without a GPU; and what the lowering claims.
#include <gtest/gtest.h>

#include <cmath>

#include "adapters/cuda/cublaslt.h"
#include "adapters/cuda/lowerings.h"
#include "adapters/cuda/lt_emulation.h"
#include "adapters/device/partition.h"
#include "reference/model/text_syntax.h"
#include "reference/ops/node_runner.h"

namespace parity::adapters::cuda {
namespace {

// Every byte value of `type` in turn, from a different start for each tensor.
Tensor Bytes(DataType type, const Shape& shape, int start) {
  std::vector<double> values(static_cast<size_t>(*ElementCount(shape)));
  const int lo = type == DataType::kInt8 ? -128 : 0;
  for (size_t i = 0; i < values.size(); ++i) values[i] = lo + static_cast<int>((start + i * 37) % 256);
  return *Tensor::FromDoubles(type, shape, values);
}

Tensor Scalar(DataType type, double v) { return *Tensor::FromDoubles(type, {}, {v}); }

// An operand packed as LaunchPackInt8 packs it, as doubles.
std::vector<double> Packed(const Tensor& t, const Int8Pack& pack, int64_t matrices) {
  std::vector<double> out(static_cast<size_t>(matrices * pack.rows_pad * pack.cols_pad));
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t from = PackSource(pack, static_cast<int64_t>(i));
    out[i] = from < 0 ? 0.0 : PackedInt8(t.raw_bytes()[from], pack.flip);
  }
  return out;
}

// LaunchRowSumsInt8 on the host.
std::vector<int64_t> RowSums(const std::vector<double>& packed, int64_t rows, int64_t cols) {
  std::vector<int64_t> sums(static_cast<size_t>(rows));
  for (size_t r = 0; r < sums.size(); ++r) {
    for (int64_t c = 0; c < cols; ++c) sums[r] += static_cast<int64_t>(packed[r * static_cast<size_t>(cols) + static_cast<size_t>(c)]);
  }
  return sums;
}

// The device's path on the host: pack, the int8 call, the finishing.
std::vector<double> Int8Path(const Tensor& a, const Tensor& b, IntFinish finish, DataType out_type,
                             const Int8Parameters& p, std::string* geometry_text) {
  StatusOr<Int8Geometry> made =
      Int8GeometryOf(a.shape(), b.shape(), a.dtype() == DataType::kUint8, b.dtype() == DataType::kUint8);
  EXPECT_TRUE(made.ok()) << made.status().ToString();
  if (!made.ok()) return {};
  const Int8Geometry& g = *made;
  *geometry_text = g.lt.Text();
  const std::vector<double> a_packed = Packed(a, g.a_pack, g.a_matrices), b_packed = Packed(b, g.b_pack, g.b_matrices);
  const std::vector<int64_t> a_sums = RowSums(a_packed, g.a_matrices * g.m, g.k_pad),
                             b_sums = RowSums(b_packed, g.b_matrices * g.n_pad, g.k_pad);
  std::vector<double> raw(static_cast<size_t>(g.batch * g.m * g.n_pad), 0.0);
  if (g.k > 0) EmulateLt(g.lt, b_packed, a_packed, 1, 0, raw);
  std::vector<int64_t> packed_b_zero;
  Int8Finish f = Int8FinishOf(g, finish, out_type, p, packed_b_zero);
  f.b_zero = packed_b_zero.data();
  f.w_scale = p.w_scale.data();
  std::vector<double> out(static_cast<size_t>(g.batch * g.m * g.n));
  for (size_t o = 0; o < out.size(); ++o) {
    const auto raw_sum = static_cast<int64_t>(raw[static_cast<size_t>(Int8RawOffset(f, static_cast<int64_t>(o)))]);
    out[o] = Int8OutputValue(f, static_cast<int64_t>(o), raw_sum, a_sums.data(), b_sums.data());
  }
  return out;
}

void ExpectBits(const std::vector<double>& got, const Tensor& want, const std::string& what) {
  ASSERT_EQ(static_cast<int64_t>(got.size()), want.size()) << what;
  for (int64_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(got[static_cast<size_t>(i)], want.GetDouble(i)) << what << " element " << i;
  }
}

struct ProductCase {
  Shape a, b;
  DataType a_type, b_type;
};

// Every K and N padded or not, one-way batch broadcasting, a rank-1
// operand, an empty sum.
const ProductCase kCases[] = {
    {{3, 5}, {5, 6}, DataType::kInt8, DataType::kInt8},
    {{2, 3, 7}, {7, 2}, DataType::kUint8, DataType::kInt8},
    {{7}, {2, 7, 3}, DataType::kInt8, DataType::kUint8},
    {{2, 4, 8}, {2, 8, 4}, DataType::kUint8, DataType::kUint8},
    {{1, 9}, {9}, DataType::kUint8, DataType::kInt8},
    {{3, 0}, {0, 4}, DataType::kInt8, DataType::kInt8},
    {{2, 1, 5, 64}, {64, 13}, DataType::kInt8, DataType::kUint8},
};

TEST(CudaInt8Test, PackedSumsGiveMatMulIntegersBitsWithEveryZeroPoint) {
  for (const ProductCase& c : kCases) {
    const Tensor a = Bytes(c.a_type, c.a, 3), b = Bytes(c.b_type, c.b, 11);
    const int64_t n = c.b.size() == 1 ? 1 : c.b.back();
    std::vector<double> column_zeros;
    for (int64_t j = 0; j < n; ++j) column_zeros.push_back((c.b_type == DataType::kInt8 ? -60 : 70) + 29 * j % 90);
    for (bool per_column : {false, true}) {
      const double a_zero = c.a_type == DataType::kInt8 ? -7 : 133;
      const Tensor az = Scalar(c.a_type, a_zero);
      const Tensor bz = per_column ? *Tensor::FromDoubles(c.b_type, {n}, column_zeros)
                                   : Scalar(c.b_type, c.b_type == DataType::kInt8 ? 5 : 250);
      StatusOr<Tensor> want = NodeRunner("MatMulInteger").Opset(10).Input(a).Input(b).Input(az).Input(bz).RunOne();
      ASSERT_TRUE(want.ok()) << want.status().ToString();
      Int8Parameters p;
      p.a_zero = static_cast<int64_t>(a_zero);
      p.b_zero.clear();
      for (double z : bz.ToDoubles()) p.b_zero.push_back(static_cast<int64_t>(z));
      std::string text;
      const std::vector<double> got = Int8Path(a, b, IntFinish::kInt32, DataType::kInt32, p, &text);
      ExpectBits(got, *want, StrCat(ShapeToString(c.a), " x ", ShapeToString(c.b), per_column ? " per column" : "",
                                    ": ", text));
    }
  }
}

TEST(CudaInt8Test, FinishedSumsGiveQLinearMatMulsBitsAndSaturate) {
  for (const ProductCase& c : kCases) {
    const Tensor a = Bytes(c.a_type, c.a, 5), b = Bytes(c.b_type, c.b, 17);
    const int64_t n = c.b.size() == 1 ? 1 : c.b.back();
    std::vector<double> column_scales;
    for (int64_t j = 0; j < n; ++j) column_scales.push_back(0.0078125 * static_cast<double>(1 + j % 5));
    for (DataType out_type : {DataType::kInt8, DataType::kUint8}) {
      for (bool per_column : {false, true}) {
        // A small y_scale saturates many outputs; ties fall where sums are whole.
        for (double y_scale : {0.5, 0.015625, 64.0}) {
          const double a_scale = 0.25, y_zero = out_type == DataType::kInt8 ? 3 : 128;
          const Tensor bs = per_column ? *Tensor::FromDoubles(DataType::kFloat, {n}, column_scales)
                                       : Scalar(DataType::kFloat, 0.03125);
          const double a_zero = c.a_type == DataType::kInt8 ? 1 : 128, b_zero = c.b_type == DataType::kInt8 ? -2 : 127;
          StatusOr<Tensor> want = NodeRunner("QLinearMatMul")
                                      .Opset(21)
                                      .Input(a)
                                      .Input(Scalar(DataType::kFloat, a_scale))
                                      .Input(Scalar(c.a_type, a_zero))
                                      .Input(b)
                                      .Input(bs)
                                      .Input(Scalar(c.b_type, b_zero))
                                      .Input(Scalar(DataType::kFloat, y_scale))
                                      .Input(Scalar(out_type, y_zero))
                                      .RunOne();
          ASSERT_TRUE(want.ok()) << want.status().ToString();
          Int8Parameters p;
          p.a_zero = static_cast<int64_t>(a_zero);
          p.b_zero = {static_cast<int64_t>(b_zero)};
          p.x_scale = a_scale, p.y_scale = y_scale, p.y_zero = y_zero;
          p.w_scale = bs.ToDoubles();
          std::string text;
          const std::vector<double> got = Int8Path(a, b, IntFinish::kQuantize, out_type, p, &text);
          ExpectBits(got, *want,
                     StrCat(ShapeToString(c.a), " x ", ShapeToString(c.b), " to ", DataTypeName(out_type),
                            per_column ? " per column" : "", " y_scale ", y_scale, ": ", text));
        }
      }
    }
  }
}

TEST(CudaInt8Test, AQdqRegionsRealSumIsTheScaledIntegerSumRoundedOnce) {
  const Tensor a = Bytes(DataType::kUint8, {2, 3, 8}, 1), b = Bytes(DataType::kInt8, {8, 5}, 2);
  const Tensor az = Scalar(DataType::kUint8, 120), bz = Scalar(DataType::kInt8, 0);
  StatusOr<Tensor> sums = NodeRunner("MatMulInteger").Opset(10).Input(a).Input(b).Input(az).Input(bz).RunOne();
  ASSERT_TRUE(sums.ok()) << sums.status().ToString();
  Int8Parameters p;
  p.a_zero = 120;
  p.x_scale = 0.1;
  p.w_scale = {0.5, 0.25, 0.3, 1.5, 0.7};
  std::string text;
  const std::vector<double> got = Int8Path(a, b, IntFinish::kFloat, DataType::kFloat, p, &text);
  ASSERT_EQ(static_cast<int64_t>(got.size()), sums->size());
  for (int64_t i = 0; i < sums->size(); ++i) {
    const double want = sums->GetDouble(i) * 0.1 * p.w_scale[static_cast<size_t>(i % 5)];
    EXPECT_EQ(got[static_cast<size_t>(i)], want) << "element " << i << ": " << text;
  }
}

TEST(CudaInt8Test, TheGeometryRefusesWhatTheInt8CallCannotHold) {
  const StatusOr<Int8Geometry> both_ways = Int8GeometryOf({2, 1, 3, 4}, {1, 5, 4, 2}, false, false);
  ASSERT_FALSE(both_ways.ok());
  EXPECT_NE(both_ways.status().message().find("both ways"), std::string::npos) << both_ways.status().ToString();
  const StatusOr<Int8Geometry> long_sums = Int8GeometryOf({1, kMaxInt8K + 1}, {kMaxInt8K + 1, 4}, false, false);
  ASSERT_FALSE(long_sums.ok());
  EXPECT_NE(long_sums.status().message().find("int32 sums"), std::string::npos) << long_sums.status().ToString();
  const StatusOr<Int8Geometry> g = Int8GeometryOf({3, 5}, {5, 6}, false, false);
  ASSERT_TRUE(g.ok());
  // cuBLASLt's int8 kernels: "TN" operands, m, k and leading dims multiples of 4.
  EXPECT_TRUE(g->lt.first.transposed);
  EXPECT_FALSE(g->lt.second.transposed);
  for (int64_t v : {g->lt.m, g->lt.k, g->lt.first.ld, g->lt.second.ld, g->lt.out.ld}) EXPECT_EQ(v % 4, 0) << g->lt.Text();
}

TEST(CudaInt8Test, CublasLtMakesTheInt8DescriptorsWithoutADevice) {
  StatusOr<const CublasLt*> lt = LoadCublasLt();
  if (!lt.ok()) GTEST_SKIP() << lt.status().ToString();
  for (const ProductCase& c : kCases) {
    StatusOr<Int8Geometry> g = Int8GeometryOf(c.a, c.b, false, true);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    StatusOr<std::unique_ptr<LtDescriptors>> made = LtDescriptors::Make(**lt, g->lt, DataType::kInt8, Epilogue::kNone);
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    EXPECT_NE((*made)->matmul, nullptr);
  }
  StatusOr<Int8Geometry> g = Int8GeometryOf({3, 4}, {4, 8}, false, false);
  StatusOr<std::unique_ptr<LtDescriptors>> biased = LtDescriptors::Make(**lt, g->lt, DataType::kInt8, Epilogue::kBias);
  ASSERT_FALSE(biased.ok());
  EXPECT_NE(biased.status().message().find("epilogue"), std::string::npos) << biased.status().ToString();
}

LoadedModel ParseQuantized(const char* text) {
  StatusOr<onnx::ModelProto> proto = ParseModelText(text);
  EXPECT_TRUE(proto.ok()) << proto.status().ToString();
  return LoadedModel{std::make_shared<onnx::ModelProto>(*proto), "test model", ""};
}

TEST(CudaInt8Test, TheLoweringClaimsTheIntegerProductsAndQdqRegionsAndSaysWhyNotOtherwise) {
  if (!LoadCublasLt().ok()) GTEST_SKIP() << LoadCublasLt().status().ToString();
  StatusOr<Partition> partition = PartitionModel(ParseQuantized(R"(
    <ir_version: 10, opset_import: ["" : 21]>
    g (int8[2, 8] a, uint8[8, 4] b, int8 az, uint8[4] bz, uint8 yz, float s, float[4] bs, int8[2] rows,
       float8e4m3fn[2, 8] f8, float8e4m3fn[8, 4] f8b, float8e4m3fn f8z, uint8[8, 4] blocked, float[2, 4] bls,
       int8[M, 8] dyn, uint8[8] column, uint8[8] bz8, int8[2, 1, 2, 8] a4, uint8[1, 3, 8, 4] b4)
        => (int32[2, 4] y, uint8[2, 4] q, int8[2, 4] r, int32[2, 4] wide, float8e4m3fn[2, 4] f, float[2, 4] v,
            int32[M, 4] yd, int32[2] yc, int32[2, 3, 2, 4] yb) {
      y = MatMulInteger (a, b, az, bz)
      q = QLinearMatMul (a, s, az, b, bs, bz, s, yz)
      da = DequantizeLinear (a, s, az)
      db = DequantizeLinear <axis: int = 1> (b, bs, bz)
      p = MatMul (da, db)
      r = QuantizeLinear (p, s, az)
      wide = MatMulInteger (a, b, rows, bz)
      f = QLinearMatMul (f8, s, f8z, f8b, s, f8z, s, f8z)
      da2 = DequantizeLinear (a, s, az)
      db2 = DequantizeLinear <axis: int = 0, block_size: int = 4> (blocked, bls)
      v = MatMul (da2, db2)
      yd = MatMulInteger (dyn, b, az, bz)
      yc = MatMulInteger (a, column, az, bz8)
      yb = MatMulInteger (a4, b4)
    })"),
                                                 CudaLowering(), "cuda");
  ASSERT_TRUE(partition.ok()) << partition.status().ToString();
  const std::vector<PlacedNode>& nodes = partition->nodes;
  ASSERT_EQ(nodes.size(), 14u);
  // MatMulInteger, QLinearMatMul, and the four nodes of the QDQ region (one runner).
  for (int i : {0, 1, 2, 3, 4, 5}) EXPECT_EQ(nodes[static_cast<size_t>(i)].device, "cuda") << nodes[static_cast<size_t>(i)].name << ": " << nodes[static_cast<size_t>(i)].reason;
  EXPECT_NE(nodes[6].reason.find("a_zero_point of 2 elements"), std::string::npos) << nodes[6].reason;
  EXPECT_NE(nodes[7].reason.find("not int8 or uint8"), std::string::npos) << nodes[7].reason;
  // A blocked DequantizeLinear stays on the host, and its MatMul runs on
  // cuBLASLt as a float32 product.
  EXPECT_EQ(nodes[9].device, kFallbackDevice) << nodes[9].reason;
  EXPECT_EQ(nodes[10].device, "cuda") << nodes[10].reason;
  EXPECT_EQ(partition->lowered_count(), 4u);
  // Refused at creation, not at a run: dims not known; a rank-1 B's one
  // column given 8 zero points; batch dims that broadcast both ways.
  EXPECT_NE(nodes[11].reason.find("not known before the run"), std::string::npos) << nodes[11].reason;
  EXPECT_NE(nodes[12].reason.find("b_zero_point of 8 elements"), std::string::npos) << nodes[12].reason;
  EXPECT_NE(nodes[13].reason.find("both ways"), std::string::npos) << nodes[13].reason;
}

}  // namespace
}  // namespace parity::adapters::cuda
