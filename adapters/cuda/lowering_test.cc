// The CUDA adapter's decisions, checked without a device: which nodes its
// lowering claims and the reason it gives for the others; how MatMul and
// Gemm map onto one cuBLASLt call (run here through a host emulation of
// that call against the reference); and the cuBLASLt descriptors of those
// calls, which cuBLASLt makes without a GPU.
#include <gtest/gtest.h>

#include "adapters/cuda/cublaslt.h"
#include "adapters/cuda/lowerings.h"
#include "adapters/cuda/cudnn_graphs.h"
#include "adapters/cuda/lt_emulation.h"
#include "adapters/cuda/strided_views.h"
#include "adapters/device/partition.h"
#include "reference/eval/evaluator.h"
#include "reference/model/text_syntax.h"
#include "reference/ops/node_runner.h"
#include "reference/ops/reference_registry.h"

namespace parity::adapters::cuda {
namespace {

LoadedModel Parse(const char* text) {
  StatusOr<onnx::ModelProto> proto = ParseModelText(text);
  EXPECT_TRUE(proto.ok()) << proto.status().ToString();
  return LoadedModel{std::make_shared<onnx::ModelProto>(*proto), "test model", ""};
}

const PlacedNode* Find(const Partition& partition, const std::string& name) {
  for (const PlacedNode& node : partition.nodes) {
    if (node.name == name) return &node;
  }
  return nullptr;
}

constexpr const char* kDecoderBits = R"(
  <ir_version: 10, opset_import: ["" : 23]>
  g (float16[2, 8] x, float16[8, 4] w, float16[8] scale, int64[2] ids, bfloat16[2, 4] b16) => (float16[2, 4] y, int64[2] n, bfloat16[4, 2] t, float[2] d) {
    normed = RMSNormalization <axis: int = -1> (x, scale)
    h = MatMul (normed, w)
    y = Softmax <axis: int = -1> (h)
    n = Add (ids, ids)
    t = Transpose <perm: ints = [1, 0]> (b16)
    shape = Shape (x)
    d = Cast <to: int = 1> (shape)
  })";

TEST(CudaLoweringTest, ClaimsItsOperatorsInTheirTypesAndNamesWhyTheRestFallBack) {
  StatusOr<Partition> partition = PartitionModel(Parse(kDecoderBits), CudaLowering(), "cuda");
  ASSERT_TRUE(partition.ok()) << partition.status().ToString();
  ASSERT_EQ(partition->nodes.size(), 7u);
  EXPECT_EQ(Find(*partition, "RMSNormalization#0")->device, "cuda");
  EXPECT_EQ(Find(*partition, "Softmax#2")->device, "cuda");
  EXPECT_EQ(Find(*partition, "Transpose#4")->device, "cuda");
  // MatMul is claimed where cuBLASLt can be opened, and says why not elsewhere.
  const PlacedNode* matmul = Find(*partition, "MatMul#1");
  if (LoadCublasLt().ok()) {
    EXPECT_EQ(matmul->device, "cuda") << matmul->reason;
  } else {
    EXPECT_EQ(matmul->device, kFallbackDevice);
    EXPECT_NE(matmul->reason.find("libcublasLt.so.13"), std::string::npos) << matmul->reason;
  }
  // Integer arithmetic (a model's shape computations) stays on the host.
  const PlacedNode* add = Find(*partition, "Add#3");
  EXPECT_EQ(add->device, kFallbackDevice);
  EXPECT_NE(add->reason.find("int64 data"), std::string::npos) << add->reason;
  EXPECT_EQ(Find(*partition, "Shape#5")->device, kFallbackDevice);
  EXPECT_NE(Find(*partition, "Shape#5")->reason.find("Shape"), std::string::npos);
  EXPECT_EQ(Find(*partition, "Cast#6")->device, kFallbackDevice);
}

TEST(CudaLoweringTest, RefusesWhatItsKernelsDoNotComputeAsTheOperatorSays) {
  StatusOr<Partition> partition = PartitionModel(Parse(R"(
    <ir_version: 10, opset_import: ["" : 23]>
    g (float[4] x, float[4] y, float[4] z) => (float[4] a, float[4] b, float[4] c, float[4] d) {
      a = Max (x, y, z)
      b = Gelu <approximate: string = "sigmoid"> (x)
      c = RMSNormalization <stash_type: int = 11> (x, y)
      d = Pow (x, y)
    })"),
                                                 CudaLowering(), "cuda");
  ASSERT_TRUE(partition.ok()) << partition.status().ToString();
  EXPECT_EQ(partition->nodes[0].device, kFallbackDevice);
  EXPECT_NE(partition->nodes[0].reason.find("3 inputs"), std::string::npos) << partition->nodes[0].reason;
  EXPECT_NE(partition->nodes[1].reason.find("approximate='sigmoid'"), std::string::npos) << partition->nodes[1].reason;
  EXPECT_NE(partition->nodes[2].reason.find("stash_type 11"), std::string::npos) << partition->nodes[2].reason;
  EXPECT_EQ(partition->nodes[3].device, "cuda");
}

TEST(CudaLoweringTest, AClaimedNodeWithoutADeviceFailsNamingTheNodeAndWhatIsMissing) {
  if (CudaContext::Get().ok()) GTEST_SKIP() << "a GPU is present: the node runs";
  StatusOr<Partition> partition = PartitionModel(Parse(R"(
    <ir_version: 10, opset_import: ["" : 23]>
    g (float[3] x) => (float[3] y) {
      y = Relu (x)
    })"),
                                                 CudaLowering(), "cuda");
  ASSERT_TRUE(partition.ok()) << partition.status().ToString();
  EvalOptions options;
  options.node_kernels = &partition->kernels;
  StatusOr<std::unique_ptr<Evaluator>> evaluator = Evaluator::Create(partition->model, WithReferenceKernels(options));
  ASSERT_TRUE(evaluator.ok()) << evaluator.status().ToString();
  StatusOr<std::vector<Value>> out =
      (*evaluator)->Run({Value::FromTensor(*Tensor::FromDoubles(DataType::kFloat, {3}, {1, -2, 3}))});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("Relu"), std::string::npos) << out.status().ToString();
  EXPECT_NE(out.status().message().find(CudaContext::Get().status().message()), std::string::npos)
      << out.status().ToString();
}

// --- MatMul and Gemm as one cuBLASLt call ---------------------------------

// The elements of `t`, expanded along `dims` when the geometry says so (the
// run's batch expansion).
std::vector<double> Operand(const Tensor& t, const std::optional<Shape>& dims) {
  if (!dims) return t.ToDoubles();
  const StridedView view = BroadcastView(t.shape(), *dims);
  std::vector<double> out(static_cast<size_t>(*ElementCount(*dims)));
  for (size_t i = 0; i < out.size(); ++i) out[i] = t.GetDouble(StridedOffset(static_cast<int64_t>(i), view));
  return out;
}

Tensor Counting(Shape shape, double step) {
  std::vector<double> values(static_cast<size_t>(*ElementCount(shape)));
  for (size_t i = 0; i < values.size(); ++i) values[i] = step * static_cast<double>((i * 7) % 11) - 0.5;
  return *Tensor::FromDoubles(DataType::kFloat, shape, values);
}

void ExpectSame(const std::vector<double>& got, const Tensor& want, const std::string& what) {
  ASSERT_EQ(static_cast<int64_t>(got.size()), want.size()) << what;
  for (int64_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(got[static_cast<size_t>(i)], want.GetDouble(i), 1e-5 * (1 + std::fabs(want.GetDouble(i))))
        << what << " element " << i;
  }
}

TEST(CudaMatMulGeometryTest, OneLtCallComputesMatMulForEveryBatchShape) {
  const std::pair<Shape, Shape> cases[] = {
      {{3, 4}, {4, 5}},       {{2, 3, 4}, {4, 5}},       {{4}, {2, 4, 5}},          {{2, 3, 4}, {4}},
      {{4}, {4}},             {{1, 3, 4}, {2, 4, 5}},    {{2, 1, 3, 4}, {1, 5, 4, 2}}, {{3, 2, 1, 4}, {2, 4, 6}},
  };
  for (const auto& [a_shape, b_shape] : cases) {
    const Tensor a = Counting(a_shape, 0.25), b = Counting(b_shape, 0.5);
    StatusOr<Tensor> want = NodeRunner("MatMul").Opset(13).Input(a).Input(b).RunOne();
    ASSERT_TRUE(want.ok()) << want.status().ToString();
    StatusOr<MatMulGeometry> g = MatMulGeometryOf(a_shape, b_shape);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    const std::string what = StrCat(ShapeToString(a_shape), " x ", ShapeToString(b_shape), ": ", g->Text());
    EXPECT_EQ(g->out_dims, want->shape()) << what;
    std::vector<double> out(static_cast<size_t>(want->size()), 0.0);
    EmulateLt(*g, Operand(b, g->expand_b), Operand(a, g->expand_a), 1, 0, out);
    ExpectSame(out, *want, what);
  }
  EXPECT_FALSE(MatMulGeometryOf({2, 3}, {4, 5}).ok());
  EXPECT_FALSE(MatMulGeometryOf({2, 3, 4}, {3, 4, 5}).ok());
  EXPECT_FALSE(MatMulGeometryOf({}, {4}).ok());
}

TEST(CudaMatMulGeometryTest, OneLtCallComputesGemmWithTransposesAndC) {
  struct Case {
    bool trans_a, trans_b;
    Shape c;
    float alpha, beta;
  };
  const Case cases[] = {{false, false, {5}, 1, 1},     {true, false, {3, 5}, 0.5f, 2},
                        {false, true, {3, 1}, 1, 0.25f}, {true, true, {}, 2, 1},
                        {false, false, {1, 5}, 1, 1}};
  for (const Case& c : cases) {
    const Shape a_shape = c.trans_a ? Shape{4, 3} : Shape{3, 4};
    const Shape b_shape = c.trans_b ? Shape{5, 4} : Shape{4, 5};
    const Tensor a = Counting(a_shape, 0.25), b = Counting(b_shape, 0.5), bias = Counting(c.c, 1.0);
    StatusOr<Tensor> want = NodeRunner("Gemm")
                                .Opset(13)
                                .Attr("transA", int64_t{c.trans_a})
                                .Attr("transB", int64_t{c.trans_b})
                                .Attr("alpha", c.alpha)
                                .Attr("beta", c.beta)
                                .Input(a)
                                .Input(b)
                                .Input(bias)
                                .RunOne();
    ASSERT_TRUE(want.ok()) << want.status().ToString();
    StatusOr<MatMulGeometry> g = GemmGeometryOf(a_shape, b_shape, c.trans_a, c.trans_b);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    // C broadcast into the output first (the run's path for C that is not a row with beta 1).
    std::vector<double> out = Operand(bias, g->out_dims);
    EmulateLt(*g, b.ToDoubles(), a.ToDoubles(), c.alpha, c.beta, out);
    ExpectSame(out, *want, StrCat("Gemm ", c.trans_a, c.trans_b, " C ", ShapeToString(c.c)));
  }
  EXPECT_FALSE(GemmGeometryOf({3, 4}, {5, 4}, false, false).ok());
}

TEST(CudaMatMulGeometryTest, CublasLtMakesTheDescriptorsOfEveryCallWithoutADevice) {
  StatusOr<const CublasLt*> lt = LoadCublasLt();
  if (!lt.ok()) GTEST_SKIP() << lt.status().ToString();
  const std::pair<Shape, Shape> shapes[] = {{{3, 4}, {4, 5}}, {{2, 3, 4}, {4, 5}}, {{2, 1, 3, 4}, {1, 5, 4, 2}}};
  for (DataType type : {DataType::kFloat, DataType::kFloat16, DataType::kBfloat16}) {
    for (const auto& [a, b] : shapes) {
      StatusOr<MatMulGeometry> g = MatMulGeometryOf(a, b);
      ASSERT_TRUE(g.ok());
      StatusOr<std::unique_ptr<LtDescriptors>> made = LtDescriptors::Make(**lt, *g, type, Epilogue::kNone);
      ASSERT_TRUE(made.ok()) << made.status().ToString();
      EXPECT_NE((*made)->matmul, nullptr);
      EXPECT_NE((*made)->out, nullptr);
    }
    StatusOr<MatMulGeometry> gemm = GemmGeometryOf({4, 3}, {5, 4}, true, true);
    ASSERT_TRUE(gemm.ok());
    StatusOr<std::unique_ptr<LtDescriptors>> biased = LtDescriptors::Make(**lt, *gemm, type, Epilogue::kBias);
    EXPECT_TRUE(biased.ok()) << biased.status().ToString();
  }
  StatusOr<MatMulGeometry> g = MatMulGeometryOf({3, 4}, {4, 5});
  StatusOr<std::unique_ptr<LtDescriptors>> refused = LtDescriptors::Make(**lt, *g, DataType::kInt32, Epilogue::kNone);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("int32"), std::string::npos) << refused.status().ToString();
}

TEST(CudaLoweringTest, AttentionIsClaimedUnlessItsQkOutputIsAsked) {
  StatusOr<Partition> partition = PartitionModel(Parse(R"(
    <ir_version: 10, opset_import: ["" : 23]>
    g (float16[1, 4, 8, 16] q, float16[1, 2, 8, 16] k, float16[1, 2, 8, 16] v) => (float16[1, 4, 8, 16] y, float16[1, 4, 8, 16] y2, float16[1, 4, 8, 8] qk) {
      y = Attention <is_causal: int = 1> (q, k, v)
      y2, a, b, qk = Attention (q, k, v)
    })"),
                                                 CudaLowering(), "cuda");
  ASSERT_TRUE(partition.ok()) << partition.status().ToString();
  EXPECT_EQ(partition->nodes[0].device, "cuda") << partition->nodes[0].reason;
  EXPECT_EQ(partition->nodes[1].device, kFallbackDevice);
  EXPECT_NE(partition->nodes[1].reason.find("qk_matmul_output"), std::string::npos) << partition->nodes[1].reason;
}

// The SDPA problems of the GPU benchmark (adapters/cuda/gpu_bench.py),
// validated by the cuDNN frontend for sm_90 (H100, H200) with no device.
SdpaShape Problem(DataType type, int64_t q_heads, int64_t kv_heads, int64_t q_len, int64_t total, int64_t size,
                  bool three_d, bool causal) {
  SdpaShape s;
  s.type = type, s.batch = 1, s.q_heads = q_heads, s.kv_heads = kv_heads, s.q_len = q_len, s.total = total;
  s.head_size = size, s.causal = causal, s.scale = 1.0f / std::sqrt(static_cast<float>(size));
  for (int64_t* strides : {s.q_strides, s.o_strides}) {
    if (three_d) {
      strides[0] = q_len * q_heads * size, strides[1] = size, strides[2] = q_heads * size;
    } else {
      strides[0] = q_heads * q_len * size, strides[1] = q_len * size, strides[2] = size;
    }
  }
  return s;
}

TEST(CudaSdpaTest, TheFrontendValidatesTheBenchmarkProblemsForSm90WithoutADevice) {
  if (CudnnVersionText().find("could not be opened") != std::string::npos) GTEST_SKIP() << CudnnVersionText();
  for (DataType type : {DataType::kFloat16, DataType::kBfloat16}) {
    // Prefill: 32 heads, 4,096 tokens, head size 128, causal.
    Status prefill = ValidateSdpa(Problem(type, 32, 32, 4096, 4096, 128, false, true), 90);
    EXPECT_TRUE(prefill.ok()) << prefill.ToString();
    // A decode step against a 4,096-position cache, grouped heads, Q in 3-D layout.
    Status decode = ValidateSdpa(Problem(type, 32, 8, 1, 4097, 128, true, false), 90);
    EXPECT_TRUE(decode.ok()) << decode.ToString();
  }
  // What cuDNN does not take is refused, saying why, and runs on the own kernel.
  Status wide = ValidateSdpa(Problem(DataType::kFloat16, 4, 4, 8, 8, 300, false, false), 90);
  ASSERT_FALSE(wide.ok());
  EXPECT_NE(wide.message().find("head sizes"), std::string::npos) << wide.ToString();
  Status single = ValidateSdpa(Problem(DataType::kFloat, 4, 4, 8, 8, 64, false, false), 90);
  ASSERT_FALSE(single.ok());
  EXPECT_NE(single.message().find("float32"), std::string::npos) << single.ToString();
  Status ungrouped = ValidateSdpa(Problem(DataType::kFloat16, 6, 4, 8, 8, 64, false, false), 90);
  EXPECT_FALSE(ungrouped.ok());
}

TEST(CudaCudnnTest, TheFrontendValidatesConvolutionsAndNormalizationsForSm90WithoutADevice) {
  if (CudnnVersionText().find("could not be opened") != std::string::npos) GTEST_SKIP() << CudnnVersionText();
  for (DataType type : {DataType::kFloat, DataType::kFloat16, DataType::kBfloat16}) {
    ConvShape conv;
    conv.type = type, conv.x = {1, 3, 224, 224}, conv.w = {64, 3, 16, 16}, conv.bias = true;
    conv.pads_begin = {0, 0}, conv.pads_end = {0, 0}, conv.strides = {16, 16}, conv.dilations = {1, 1};
    EXPECT_EQ(conv.Output(), (Shape{1, 64, 14, 14}));
    Status patches = ValidateConv(conv, 90);
    EXPECT_TRUE(patches.ok()) << DataTypeName(type) << ": " << patches.ToString();
    ConvShape padded = conv;
    padded.x = {2, 8, 9, 9}, padded.w = {4, 8, 3, 3}, padded.bias = false;
    padded.pads_begin = {1, 0}, padded.pads_end = {1, 2}, padded.strides = {2, 1}, padded.dilations = {1, 2};
    EXPECT_EQ(padded.Output(), (Shape{2, 4, 5, 7}));
    Status asymmetric = ValidateConv(padded, 90);
    EXPECT_TRUE(asymmetric.ok()) << DataTypeName(type) << ": " << asymmetric.ToString();
    ConvShape line = padded;
    line.x = {1, 8, 20}, line.w = {4, 8, 5}, line.pads_begin = {2}, line.pads_end = {2}, line.strides = {1},
    line.dilations = {1};
    Status one_d = ValidateConv(line, 90);
    EXPECT_TRUE(one_d.ok()) << DataTypeName(type) << ": " << one_d.ToString();
    ConvShape grouped = padded;
    grouped.w = {4, 4, 3, 3};  // two groups of four channels
    Status groups = ValidateConv(grouped, 90);
    EXPECT_TRUE(groups.ok()) << DataTypeName(type) << ": " << groups.ToString();
    ConvShape depthwise = padded;
    depthwise.w = {8, 1, 3, 3};  // one channel a group
    Status per_channel = ValidateConv(depthwise, 90);
    EXPECT_TRUE(per_channel.ok()) << DataTypeName(type) << ": " << per_channel.ToString();
    ConvShape uneven = padded;
    uneven.w = {4, 3, 3, 3};  // 8 channels do not split into groups of 3
    Status no_groups = ValidateConv(uneven, 90);
    EXPECT_FALSE(no_groups.ok()) << DataTypeName(type);
    EXPECT_NE(no_groups.message().find("no whole groups"), std::string::npos) << no_groups.ToString();
    LayerNormShape norm;
    norm.type = type, norm.rows = 197, norm.cols = 768, norm.bias = true, norm.epsilon = 1e-6f;
    Status layer = ValidateLayerNorm(norm, 90);
    EXPECT_TRUE(layer.ok()) << DataTypeName(type) << ": " << layer.ToString();
    for (BatchNormShape batch : {BatchNormShape{type, 2, 64, 56 * 56}, BatchNormShape{type, 4, 32, 1}}) {
      Status batched = ValidateBatchNorm(batch, 90);
      EXPECT_TRUE(batched.ok()) << DataTypeName(type) << " " << batch.Key() << ": " << batched.ToString();
    }
  }
  ConvShape flat;
  flat.type = DataType::kFloat, flat.x = {1, 3}, flat.w = {4, 3};
  Status refused = ValidateConv(flat, 90);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("spatial dims"), std::string::npos) << refused.ToString();
}

TEST(CudaLoweringTest, ConvAndLayerNormAreClaimedForStaticShapesAndSayWhyNotOtherwise) {
  if (CudnnVersionText().find("could not be opened") != std::string::npos) GTEST_SKIP() << CudnnVersionText();
  StatusOr<Partition> partition = PartitionModel(Parse(R"(
    <ir_version: 10, opset_import: ["" : 21]>
    g (float[1, 3, 8, 8] x, float[4, 3, 3, 3] w, float[4] b, float[N, 3, 8, 8] d, float[4, 1, 3, 3] gw, float[3, 1, 3, 3] hw,
       float[2, 5, 16] t, float[16] s, float[16] o) => (float[1, 4, 6, 6] y, float[N, 4, 6, 6] yd, float[1, 4, 6, 6] yg, float[1, 3, 6, 6] yh,
       float[2, 5, 16] n, float[2, 5, 16] m, float[2, 5, 1] mean) {
      y = Conv <pads: ints = [0, 0, 0, 0]> (x, w, b)
      yd = Conv (d, w)
      yg = Conv <group: int = 3> (x, gw)
      yh = Conv <group: int = 3> (x, hw)
      n = LayerNormalization <epsilon: float = 1e-6> (t, s, o)
      m, mean = LayerNormalization (t, s)
    })"),
                                                 CudaLowering(), "cuda");
  ASSERT_TRUE(partition.ok()) << partition.status().ToString();
  EXPECT_EQ(partition->nodes[0].device, "cuda") << partition->nodes[0].reason;
  EXPECT_NE(partition->nodes[1].reason.find("not known before the run"), std::string::npos) << partition->nodes[1].reason;
  EXPECT_NE(partition->nodes[2].reason.find("group 3"), std::string::npos) << partition->nodes[2].reason;
  EXPECT_EQ(partition->nodes[3].device, "cuda") << partition->nodes[3].reason;  // depthwise
  EXPECT_EQ(partition->nodes[4].device, "cuda") << partition->nodes[4].reason;
  EXPECT_NE(partition->nodes[5].reason.find("Mean or InvStdDev"), std::string::npos) << partition->nodes[5].reason;
}

TEST(CudaLoweringTest, MatMulWithARowBiasIsOneCublasLtCallWithItsEpilogue) {
  if (!LoadCublasLt().ok()) GTEST_SKIP() << LoadCublasLt().status().ToString();
  StatusOr<Partition> partition = PartitionModel(Parse(R"(
    <ir_version: 10, opset_import: ["" : 21]>
    g (float16[2, 3, 8] x, float16[8, 4] w, float16[4] b, float16[3, 4] wide, float16[3, 8] flat, float16[1, 1, 1, 4] deep)
        => (float16[2, 3, 4] y, float16[2, 3, 4] z, float16[1, 1, 3, 4] v) {
      h = MatMul (x, w)
      hb = Add (b, h)
      y = Relu (hb)
      p = MatMul (x, w)
      z = Add (p, wide)
      q = MatMul (flat, w)
      v = Add (q, deep)
    })"),
                                                 CudaLowering(), "cuda");
  ASSERT_TRUE(partition.ok()) << partition.status().ToString();
  for (const PlacedNode& node : partition->nodes) EXPECT_EQ(node.device, "cuda") << node.name << ": " << node.reason;
  // One runner for MatMul and its row bias; Relu on its own (cuBLASLt's Relu
  // turns NaN into 0); the second MatMul and its Add of a bias that is not one
  // row each their own; the third's bias of a higher rank than the product
  // widens the output, so it is not fused either.
  EXPECT_EQ(partition->lowered_count(), 6u);
}

TEST(CudaLoweringTest, BatchNormalizationIsClaimedInInferenceModeOnly) {
  StatusOr<Partition> partition = PartitionModel(Parse(R"(
    <ir_version: 10, opset_import: ["" : 15]>
    g (float[2, 3, 4] x, float[3] s, float[3] b, float[3] m, float[3] v, double[3] wide)
        => (float[2, 3, 4] y, float[2, 3, 4] t, float[2, 3, 4] u) {
      y = BatchNormalization (x, s, b, m, v)
      t, rm, rv = BatchNormalization <training_mode: int = 1> (x, s, b, m, v)
      u = BatchNormalization (x, s, b, wide, wide)
    })"),
                                                 CudaLowering(), "cuda");
  ASSERT_TRUE(partition.ok()) << partition.status().ToString();
  EXPECT_EQ(partition->nodes[0].device, "cuda") << partition->nodes[0].reason;
  EXPECT_NE(partition->nodes[1].reason.find("training mode"), std::string::npos) << partition->nodes[1].reason;
  EXPECT_NE(partition->nodes[2].reason.find("another type"), std::string::npos) << partition->nodes[2].reason;
}

}  // namespace
}  // namespace parity::adapters::cuda
