// Tests of the shape facts n and k per operator (harness/shape_facts.h), on
// small models written in ONNX text syntax.
#include "harness/shape_facts.h"

#include <gtest/gtest.h>

#include "reference/model/tensor_io.h"
#include "reference/model/text_syntax.h"

namespace parity {
namespace {

// A model of `graph_text` importing the default domain at `opset` (and
// com.microsoft, ai.onnx.preview at 1).
onnx::ModelProto Model(int opset, const std::string& graph_text) {
  const std::string text = "<ir_version: 10, opset_import: [\"\" : " + std::to_string(opset) +
                           ", \"com.microsoft\" : 1, \"ai.onnx.preview\" : 1]>\n" + graph_text;
  StatusOr<onnx::ModelProto> model = ParseModelText(text);
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  return model.ok() ? std::move(model).value() : onnx::ModelProto();
}

struct NK {
  int64_t n, k;
  bool operator==(const NK&) const = default;
};
std::ostream& operator<<(std::ostream& os, const NK& f) { return os << "{n=" << f.n << ", k=" << f.k << "}"; }

NK Facts(const onnx::ModelProto& model, std::string_view op, const KnownDims& dims = {}, const KnownInts& ints = {}) {
  const ShapeFacts f = ShapeFactsFor(model, op, dims, ints);
  return {f.reduced_length, f.inner_dim};
}

// --- Matrix products and convolutions ------------------------------------------------------

TEST(ShapeFactsMatMul, KIsTheLastDimOfA) {
  EXPECT_EQ(Facts(Model(13, "g (float[2, 3, 5] a, float[5, 4] b) => (float[2, 3, 4] y) { y = MatMul (a, b) }"),
                  "MatMul"),
            (NK{1, 5}));
  // Rank-1 A is [K].
  EXPECT_EQ(Facts(Model(13, "g (float[7] a, float[7, 4] b) => (float[4] y) { y = MatMul (a, b) }"), "MatMul"),
            (NK{1, 7}));
  EXPECT_EQ(Facts(Model(10, "g (uint8[3, 6] a, uint8[6, 2] b) => (int32[3, 2] y) { y = MatMulInteger (a, b) }"),
                  "MatMulInteger"),
            (NK{1, 6}));
  EXPECT_EQ(Facts(Model(10, R"(g (uint8[3, 9] a, float s, uint8 z, uint8[9, 2] b) => (uint8[3, 2] y) {
                    y = QLinearMatMul (a, s, z, b, s, z, s, z) })"),
                  "QLinearMatMul"),
            (NK{1, 9}));
}

TEST(ShapeFactsMatMul, FusedMatMulFollowsTransA) {
  EXPECT_EQ(Facts(Model(13, R"(g (float[8, 3] a, float[8, 4] b) => (float[3, 4] y) {
                    y = com.microsoft.FusedMatMul <transA = 1> (a, b) })"),
                  "FusedMatMul"),
            (NK{1, 8}));
  EXPECT_EQ(Facts(Model(13, R"(g (float[2, 8, 3] a, float[3, 4] b) => (float[2, 8, 4] y) {
                    y = com.microsoft.FusedMatMul <transBatchA = 1> (a, b) })"),
                  "FusedMatMul"),
            (NK{1, 1}));
}

TEST(ShapeFactsMatMul, GemmFollowsTransA) {
  EXPECT_EQ(Facts(Model(13, "g (float[3, 6] a, float[6, 4] b) => (float[3, 4] y) { y = Gemm (a, b) }"), "Gemm"),
            (NK{1, 6}));
  EXPECT_EQ(Facts(Model(13, "g (float[6, 3] a, float[6, 4] b) => (float[3, 4] y) { y = Gemm <transA = 1> (a, b) }"),
                  "Gemm"),
            (NK{1, 6}));
}

TEST(ShapeFactsMatMul, DetIsTheMatrixSize) {
  EXPECT_EQ(Facts(Model(11, "g (float[2, 5, 5] x) => (float[2] y) { y = Det (x) }"), "Det"), (NK{1, 5}));
}

TEST(ShapeFactsConv, KIsChannelsPerGroupTimesKernel) {
  // W [M, C/group, kH, kW] = [8, 2, 3, 3]: k = 2 * 9.
  EXPECT_EQ(Facts(Model(11, R"(g (float[1, 4, 9, 9] x, float[8, 2, 3, 3] w) => (float[1, 8, 7, 7] y) {
                    y = Conv <group = 2> (x, w) })"),
                  "Conv"),
            (NK{1, 18}));
  EXPECT_EQ(Facts(Model(10, R"(g (uint8[1, 3, 5, 5] x, uint8[2, 3, 2, 2] w) => (int32[1, 2, 4, 4] y) {
                    y = ConvInteger (x, w) })"),
                  "ConvInteger"),
            (NK{1, 12}));
  EXPECT_EQ(Facts(Model(10, R"(g (uint8[1, 3, 5, 5] x, float s, uint8 z, uint8[2, 3, 3] w) => (uint8[1, 2, 3] y) {
                    y = QLinearConv (x, s, z, w, s, z, s, z) })"),
                  "QLinearConv"),
            (NK{1, 9}));
}

TEST(ShapeFactsConv, ConvTransposeDividesTheInputChannelsByGroup) {
  // W [C, M/group, kH, kW] = [6, 1, 2, 3] with group 3: k = (6 / 3) * 6.
  EXPECT_EQ(Facts(Model(11, R"(g (float[1, 6, 4, 4] x, float[6, 1, 2, 3] w) => (float[1, 3, 5, 6] y) {
                    y = ConvTranspose <group = 3> (x, w) })"),
                  "ConvTranspose"),
            (NK{1, 12}));
  EXPECT_EQ(Facts(Model(11, R"(g (float[1, 5, 4] x, float[5, 2, 3] w) => (float[1, 2, 6] y) {
                    y = ConvTranspose (x, w) })"),
                  "ConvTranspose"),
            (NK{1, 15}));
}

// --- Reductions --------------------------------------------------------------------------

TEST(ShapeFactsReduce, AxesAttributeBeforeOpset13AllAxesByDefault) {
  EXPECT_EQ(Facts(Model(11, "g (float[3, 4, 5] x) => (float[3, 1, 5] y) { y = ReduceSum <axes = [1]> (x) }"),
                  "ReduceSum"),
            (NK{4, 1}));
  EXPECT_EQ(Facts(Model(11, "g (float[3, 4, 5] x) => (float[3, 1, 1] y) { y = ReduceSum <axes = [-1, 1]> (x) }"),
                  "ReduceSum"),
            (NK{20, 1}));
  EXPECT_EQ(Facts(Model(11, "g (float[3, 4, 5] x) => (float[1, 1, 1] y) { y = ReduceSum (x) }"), "ReduceSum"),
            (NK{60, 1}));
  // Out of range: the fact is unknown, so 1.
  EXPECT_EQ(Facts(Model(11, "g (float[3, 4, 5] x) => (float y) { y = ReduceSum <axes = [3]> (x) }"), "ReduceSum"),
            (NK{1, 1}));
}

TEST(ShapeFactsReduce, AxesInputFromOpset13ForReduceSum) {
  // From an initializer.
  EXPECT_EQ(Facts(Model(13, R"(g (float[3, 4, 5] x) => (float[1, 4, 5] y) <int64[1] axes = {0}> {
                    y = ReduceSum (x, axes) })"),
                  "ReduceSum"),
            (NK{3, 1}));
  // From a Constant node.
  EXPECT_EQ(Facts(Model(13, R"(g (float[3, 4, 5] x) => (float[3, 4, 1] y) {
                    axes = Constant <value = int64[1] {2}> ()
                    y = ReduceSum (x, axes) })"),
                  "ReduceSum"),
            (NK{5, 1}));
  // From the data set (the caller's known_int_values).
  const onnx::ModelProto fed =
      Model(13, "g (float[3, 4, 5] x, int64[2] axes) => (float[3, 1, 1] y) { y = ReduceSum (x, axes) }");
  EXPECT_EQ(Facts(fed, "ReduceSum", {}, {{"axes", {1, 2}}}), (NK{20, 1}));
  // Not known at all: 1, never the "all axes" guess.
  EXPECT_EQ(Facts(fed, "ReduceSum"), (NK{1, 1}));
  // At opset 13 an axes attribute is no longer read.
  EXPECT_EQ(Facts(Model(13, "g (float[3, 4, 5] x) => (float y) { y = ReduceSum <axes = [1]> (x) }"), "ReduceSum"),
            (NK{60, 1}));
}

TEST(ShapeFactsReduce, NoopWithEmptyAxes) {
  EXPECT_EQ(Facts(Model(13, R"(g (float[3, 4] x) => (float[3, 4] y) {
                    y = ReduceSum <noop_with_empty_axes = 1> (x) })"),
                  "ReduceSum"),
            (NK{1, 1}));
  EXPECT_EQ(Facts(Model(13, R"(g (float[3, 4] x) => (float[3, 4] y) <int64[0] axes = {}> {
                    y = ReduceSum <noop_with_empty_axes = 1> (x, axes) })"),
                  "ReduceSum"),
            (NK{1, 1}));
  EXPECT_EQ(Facts(Model(13, R"(g (float[3, 4] x) => (float[1, 1] y) <int64[0] axes = {}> {
                    y = ReduceSum (x, axes) })"),
                  "ReduceSum"),
            (NK{12, 1}));
}

TEST(ShapeFactsReduce, OtherReductionsTakeAxesAsInputFromOpset18) {
  const std::string attribute = "g (float[3, 4, 5] x) => (float[3, 1, 5] y) { y = ReduceMean <axes = [1]> (x) }";
  EXPECT_EQ(Facts(Model(13, attribute), "ReduceMean"), (NK{4, 1}));
  EXPECT_EQ(Facts(Model(18, attribute), "ReduceMean"), (NK{60, 1}));
  EXPECT_EQ(Facts(Model(18, R"(g (float[3, 4, 5] x) => (float[3, 1, 1] y) <int64[2] axes = {1, 2}> {
                    y = ReduceLogSumExp (x, axes) })"),
                  "ReduceLogSumExp"),
            (NK{20, 1}));
  EXPECT_EQ(Facts(Model(18, R"(g (float[3, 4, 5] x) => (float[3, 4, 5] y) {
                    y = ReduceL2 <noop_with_empty_axes = 1> (x) })"),
                  "ReduceL2"),
            (NK{1, 1}));
}

TEST(ShapeFactsReduce, CumSumSumMeanAndPools) {
  EXPECT_EQ(Facts(Model(14, "g (float[3, 7] x, int32 axis) => (float[3, 7] y) { y = CumSum (x, axis) }"), "CumSum",
                  {}, {{"axis", {-1}}}),
            (NK{7, 1}));
  EXPECT_EQ(Facts(Model(13, "g (float[3] a, float[3] b, float[3] c) => (float[3] y) { y = Sum (a, b, c) }"), "Sum"),
            (NK{3, 1}));
  EXPECT_EQ(Facts(Model(13, "g (float[3] a, float[3] b) => (float[3] y) { y = Mean (a, b) }"), "Mean"), (NK{2, 1}));
  EXPECT_EQ(Facts(Model(19, R"(g (float[1, 2, 8, 8] x) => (float[1, 2, 6, 7] y) {
                    y = AveragePool <kernel_shape = [3, 2]> (x) })"),
                  "AveragePool"),
            (NK{6, 1}));
  EXPECT_EQ(Facts(Model(13, "g (float[1, 2, 4, 5] x) => (float[1, 2, 1, 1] y) { y = GlobalAveragePool (x) }"),
                  "GlobalAveragePool"),
            (NK{20, 1}));
}

// --- Softmax and normalizations -----------------------------------------------------------

TEST(ShapeFactsSoftmax, Opset13IsOneAxisDefaultLast) {
  EXPECT_EQ(Facts(Model(13, "g (float[2, 3, 4] x) => (float[2, 3, 4] y) { y = Softmax (x) }"), "Softmax"),
            (NK{4, 1}));
  EXPECT_EQ(Facts(Model(13, "g (float[2, 3, 4] x) => (float[2, 3, 4] y) { y = LogSoftmax <axis = 1> (x) }"),
                  "LogSoftmax"),
            (NK{3, 1}));
}

TEST(ShapeFactsSoftmax, BeforeOpset13TheInputIsCoercedTo2D) {
  // Default axis 1: rows of 3 * 4.
  EXPECT_EQ(Facts(Model(11, "g (float[2, 3, 4] x) => (float[2, 3, 4] y) { y = Softmax (x) }"), "Softmax"),
            (NK{12, 1}));
  EXPECT_EQ(Facts(Model(11, "g (float[2, 3, 4] x) => (float[2, 3, 4] y) { y = Softmax <axis = 0> (x) }"), "Softmax"),
            (NK{24, 1}));
  EXPECT_EQ(Facts(Model(11, "g (float[2, 3, 4] x) => (float[2, 3, 4] y) { y = LogSoftmax <axis = -1> (x) }"),
                  "LogSoftmax"),
            (NK{4, 1}));
}

TEST(ShapeFactsNormalization, TrailingAxes) {
  EXPECT_EQ(Facts(Model(17, R"(g (float[2, 3, 4] x, float[4] s) => (float[2, 3, 4] y) {
                    y = LayerNormalization (x, s) })"),
                  "LayerNormalization"),
            (NK{4, 1}));
  EXPECT_EQ(Facts(Model(17, R"(g (float[2, 3, 4] x, float[3, 4] s) => (float[2, 3, 4] y) {
                    y = LayerNormalization <axis = 1> (x, s) })"),
                  "LayerNormalization"),
            (NK{12, 1}));
  EXPECT_EQ(Facts(Model(23, R"(g (float[2, 3, 4] x, float[3, 4] s) => (float[2, 3, 4] y) {
                    y = RMSNormalization <axis = -2> (x, s) })"),
                  "RMSNormalization"),
            (NK{12, 1}));
  EXPECT_EQ(Facts(Model(17, R"(g (float[2, 3, 8] x, float[2, 3, 8] skip, float[8] s) => (float[2, 3, 8] y) {
                    y = com.microsoft.SkipLayerNormalization (x, skip, s) })"),
                  "SkipLayerNormalization"),
            (NK{8, 1}));
  EXPECT_EQ(Facts(Model(17, R"(g (float[2, 3, 8] x, float[2, 3, 8] skip, float[8] s) => (float[2, 3, 8] y) {
                    y = com.microsoft.SkipSimplifiedLayerNormalization (x, skip, s) })"),
                  "SkipSimplifiedLayerNormalization"),
            (NK{8, 1}));
  EXPECT_EQ(Facts(Model(17, R"(g (float[2, 6] x, float[6] s) => (float[2, 6] y) {
                    y = SimplifiedLayerNormalization (x, s) })"),
                  "SimplifiedLayerNormalization"),
            (NK{6, 1}));
}

TEST(ShapeFactsNormalization, GroupsInstancesAndAxes) {
  // C / num_groups * spatial = 6 / 3 * 4 * 5.
  EXPECT_EQ(Facts(Model(21, R"(g (float[2, 6, 4, 5] x, float[6] s, float[6] b) => (float[2, 6, 4, 5] y) {
                    y = GroupNormalization <num_groups = 3> (x, s, b) })"),
                  "GroupNormalization"),
            (NK{40, 1}));
  EXPECT_EQ(Facts(Model(6, R"(g (float[2, 3, 4, 5] x, float[3] s, float[3] b) => (float[2, 3, 4, 5] y) {
                    y = InstanceNormalization (x, s, b) })"),
                  "InstanceNormalization"),
            (NK{20, 1}));
  EXPECT_EQ(Facts(Model(13, "g (float[2, 3, 4, 5] x) => (float[2, 3, 4, 5] y) { y = MeanVarianceNormalization (x) }"),
                  "MeanVarianceNormalization"),
            (NK{40, 1}));
  EXPECT_EQ(Facts(Model(13, R"(g (float[2, 3, 4, 5] x) => (float[2, 3, 4, 5] y) {
                    y = MeanVarianceNormalization <axes = [1]> (x) })"),
                  "MeanVarianceNormalization"),
            (NK{3, 1}));
  EXPECT_EQ(Facts(Model(13, "g (float[2, 3, 4] x) => (float[2, 3, 4] y) { y = LpNormalization <axis = 1> (x) }"),
                  "LpNormalization"),
            (NK{3, 1}));
}

TEST(ShapeFactsNormalization, BatchNormalizationFoldsOnlyInTraining) {
  const std::string graph = R"(g (float[4, 3, 5] x, float[3] s, float[3] b, float[3] m, float[3] v)
                                 => (float[4, 3, 5] y) { y = BatchNormalization <training_mode = %> (x, s, b, m, v) })";
  auto with_mode = [&](const char* mode) {
    std::string text = graph;
    text.replace(text.find('%'), 1, mode);
    return text;
  };
  EXPECT_EQ(Facts(Model(15, with_mode("0")), "BatchNormalization"), (NK{1, 1}));
  EXPECT_EQ(Facts(Model(15, with_mode("1")), "BatchNormalization"), (NK{20, 1}));
}

// --- Attention ---------------------------------------------------------------------------

TEST(ShapeFactsAttention, FourDimensionalWithPastKey) {
  const std::string graph = R"(g (float[2, 4, 3, 8] q, float[2, 4, 6, 8] k, float[2, 4, 6, 5] v,
                                  float[2, 4, 7, 8] pk, float[2, 4, 7, 5] pv) => (float[2, 4, 3, 5] y) {
                                 y = Attention (q, k, v, , pk, pv) })";
  EXPECT_EQ(Facts(Model(23, graph), "Attention"), (NK{13, 8}));
  EXPECT_EQ(Facts(Model(23, R"(g (float[2, 4, 3, 8] q, float[2, 4, 6, 8] k, float[2, 4, 6, 5] v)
                                 => (float[2, 4, 3, 5] y) { y = Attention (q, k, v) })"),
                  "Attention"),
            (NK{6, 8}));
}

TEST(ShapeFactsAttention, ThreeDimensionalDividesByHeads) {
  EXPECT_EQ(Facts(Model(23, R"(g (float[2, 3, 12] q, float[2, 5, 6] k, float[2, 5, 6] v) => (float[2, 3, 12] y) {
                    y = Attention <q_num_heads = 4, kv_num_heads = 2> (q, k, v) })"),
                  "Attention"),
            (NK{5, 3}));
  // com.microsoft's Attention is a different operator.
  EXPECT_EQ(Facts(Model(23, R"(g (float[2, 3, 12] x, float[12, 36] w) => (float[2, 3, 12] y) {
                    y = com.microsoft.Attention <num_heads = 4> (x, w) })"),
                  "Attention"),
            (NK{1, 1}));
}

TEST(ShapeFactsAttention, ContribAndPreviewAttention) {
  EXPECT_EQ(Facts(Model(23, R"(g (float[2, 3, 16] q, float[2, 7, 16] k, float[2, 7, 16] v) => (float[2, 3, 16] y) {
                    y = com.microsoft.MultiHeadAttention <num_heads = 4> (q, k, v) })"),
                  "MultiHeadAttention"),
            (NK{7, 4}));
  // Packed QKV [B, S, N, 3, H], with a past of 5.
  EXPECT_EQ(Facts(Model(23, R"(g (float[2, 3, 4, 3, 8] q, float[2, 4, 5, 8] pk, float[2, 4, 5, 8] pv)
                                 => (float[2, 3, 32] y) {
                    y = com.microsoft.MultiHeadAttention <num_heads = 4> (q, , , , , , pk, pv) })"),
                  "MultiHeadAttention"),
            (NK{8, 8}));
  const onnx::ModelProto gqa = Model(23, R"(g (float[1, 2, 32] q, float[1, 2, 16] k, float[1, 2, 16] v,
                                                float[1, 2, 9, 8] pk, float[1, 2, 9, 8] pv,
                                                int32[1] seqlens, int32 total) => (float[1, 2, 32] y) {
      y = com.microsoft.GroupQueryAttention <num_heads = 4, kv_num_heads = 2> (q, k, v, pk, pv, seqlens, total) })");
  EXPECT_EQ(Facts(gqa, "GroupQueryAttention", {}, {{"total", {6}}}), (NK{6, 8}));
  EXPECT_EQ(Facts(gqa, "GroupQueryAttention"), (NK{11, 8}));
  EXPECT_EQ(Facts(Model(23, R"(g (float[1, 2, 3, 8] q, float[1, 1, 9, 8] k, float[1, 1, 9, 4] v)
                                 => (float[1, 2, 3, 4] y) { y = ai.onnx.preview.FlexAttention (q, k, v) })"),
                  "FlexAttention"),
            (NK{9, 8}));
}

// --- Spectral and recurrent -----------------------------------------------------------------

TEST(ShapeFactsSpectral, Dft17AxisAttribute) {
  EXPECT_EQ(Facts(Model(17, "g (float[3, 10, 1] x) => (float[3, 10, 2] y) { y = DFT (x) }"), "DFT"), (NK{10, 1}));
  EXPECT_EQ(Facts(Model(17, "g (float[3, 10, 6, 2] x) => (float[3, 10, 6, 2] y) { y = DFT <axis = 2> (x) }"), "DFT"),
            (NK{6, 1}));
  EXPECT_EQ(Facts(Model(17, R"(g (float[3, 10, 1] x) => (float[3, 16, 2] y) <int64 len = {16}> {
                    y = DFT (x, len) })"),
                  "DFT"),
            (NK{16, 1}));
  // The inverse of a one-sided spectrum of 6 bins has 10 points.
  EXPECT_EQ(Facts(Model(17, R"(g (float[3, 6, 2] x) => (float[3, 10, 1] y) {
                    y = DFT <onesided = 1, inverse = 1> (x) })"),
                  "DFT"),
            (NK{10, 1}));
}

TEST(ShapeFactsSpectral, Dft20AxisInputDefaultsToLastSignalAxis) {
  EXPECT_EQ(Facts(Model(20, "g (float[3, 10, 6, 2] x) => (float[3, 10, 6, 2] y) { y = DFT (x) }"), "DFT"),
            (NK{6, 1}));
  EXPECT_EQ(Facts(Model(20, R"(g (float[3, 10, 6, 2] x) => (float[3, 10, 6, 2] y) <int64 axis = {1}> {
                    y = DFT (x, , axis) })"),
                  "DFT"),
            (NK{10, 1}));
  // An axis that comes from the data set and is not given: 1.
  EXPECT_EQ(Facts(Model(20, R"(g (float[3, 10, 6, 2] x, int64 axis) => (float[3, 10, 6, 2] y) {
                    y = DFT (x, , axis) })"),
                  "DFT"),
            (NK{1, 1}));
}

TEST(ShapeFactsSpectral, StftFrameLength) {
  EXPECT_EQ(Facts(Model(17, R"(g (float[1, 128, 1] x, int64 step, int64 len) => (float[1, 15, 9, 2] y) {
                    y = STFT (x, step, , len) })"),
                  "STFT", {}, {{"len", {16}}}),
            (NK{16, 1}));
  EXPECT_EQ(Facts(Model(17, R"(g (float[1, 128, 1] x, int64 step, float[32] w) => (float[1, 7, 17, 2] y) {
                    y = STFT (x, step, w) })"),
                  "STFT"),
            (NK{32, 1}));
}

TEST(ShapeFactsRecurrent, SequenceLengthAndInputPlusHidden) {
  EXPECT_EQ(Facts(Model(14, R"(g (float[7, 2, 3] x, float[1, 20, 3] w, float[1, 20, 5] r) => (float[7, 1, 2, 5] y) {
                    y = LSTM <hidden_size = 5> (x, w, r) })"),
                  "LSTM"),
            (NK{7, 8}));
  // Layout 1 is [batch, seq, input]; hidden size from R when the attribute is absent.
  EXPECT_EQ(Facts(Model(14, R"(g (float[2, 7, 3] x, float[1, 15, 3] w, float[1, 15, 5] r) => (float[2, 7, 1, 5] y) {
                    y = GRU <layout = 1> (x, w, r) })"),
                  "GRU"),
            (NK{7, 8}));
}

// --- Where the dims come from ---------------------------------------------------------------

TEST(ShapeFactsSources, UnknownDimsFallBackToOne) {
  const onnx::ModelProto model = Model(13, "g (float[N, K] a, float[K, 4] b) => (float[N, 4] y) { y = MatMul (a, b) }");
  EXPECT_EQ(Facts(model, "MatMul"), (NK{1, 1}));
  // The data set's actual dims fill the gap.
  EXPECT_EQ(Facts(model, "MatMul", {{"a", {3, 9}}}), (NK{1, 9}));
}

TEST(ShapeFactsSources, DataSetDimsWinOverDeclaredOnes) {
  const onnx::ModelProto model = Model(13, "g (float[2, 3] a, float[3, 4] b) => (float[2, 4] y) { y = MatMul (a, b) }");
  EXPECT_EQ(Facts(model, "MatMul", {{"a", {2, 30}}}), (NK{1, 30}));
}

TEST(ShapeFactsSources, IntermediateValuesThroughValueInfo) {
  const std::string graph = R"(g (float[2, 3] a, float[3, 4] b, float[4, 5] c) => (float[2, 5] y) %
                               { t = MatMul (a, b) y = Softmax (t) })";
  std::string declared = graph, undeclared = graph;
  declared.replace(declared.find('%'), 1, "<float[2, 4] t>");
  undeclared.replace(undeclared.find('%'), 1, "");
  EXPECT_EQ(Facts(Model(13, declared), "Softmax"), (NK{4, 1}));
  EXPECT_EQ(Facts(Model(13, undeclared), "Softmax"), (NK{1, 1}));
}

TEST(ShapeFactsSources, SeveralNodesTakeTheLargest) {
  // The first node contracts 30, the second 4 (and the third's input is unknown).
  EXPECT_EQ(Facts(Model(13, R"(g (float[2, 30] a, float[30, 4] b, float[4, 5] c) => (float[2, 5] y) {
                    t = MatMul (a, b)
                    u = MatMul (t, c)
                    y = MatMul (u, c) })"),
                  "MatMul", {{"t", {2, 4}}}),
            (NK{1, 30}));
}

TEST(ShapeFactsSources, NoNodeOfTheOperatorOrNoRule) {
  const onnx::ModelProto model = Model(13, "g (float[3, 5] a, float[5, 4] b) => (float[3, 4] y) { y = MatMul (a, b) }");
  // An expanded case: the operator is not in the graph.
  EXPECT_EQ(Facts(model, "Softmax"), (NK{1, 1}));
  EXPECT_EQ(Facts(Model(13, "g (float[3] a, float[3] b) => (float[3] y) { y = Add (a, b) }"), "Add"), (NK{1, 1}));
  EXPECT_EQ(Facts(onnx::ModelProto(), "MatMul"), (NK{1, 1}));
}

TEST(ShapeFactsSources, NoteKnownValueReadsDimsAndSmallInts) {
  KnownDims dims;
  KnownInts ints;
  NoteKnownValue("axes", Value::FromTensor(Tensor::FromInt64s({2}, {0, -1})), dims, ints);
  StatusOr<Tensor> big = Tensor::Create(DataType::kInt64, {17});
  ASSERT_TRUE(big.ok());
  NoteKnownValue("big", Value::FromTensor(*big), dims, ints);
  StatusOr<Tensor> floats = Tensor::FromDoubles(DataType::kFloat, {2, 3}, {1, 2, 3, 4, 5, 6});
  ASSERT_TRUE(floats.ok());
  NoteKnownValue("x", Value::FromTensor(*floats), dims, ints);
  NoteKnownValue("seq", Value::FromSequence({}, DataType::kFloat), dims, ints);
  EXPECT_EQ(dims["axes"], (std::vector<int64_t>{2}));
  EXPECT_EQ(ints["axes"], (std::vector<int64_t>{0, -1}));
  EXPECT_EQ(dims["big"], (std::vector<int64_t>{17}));
  EXPECT_EQ(ints.count("big"), 0u);
  EXPECT_EQ(dims["x"], (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(ints.count("x"), 0u);
  EXPECT_EQ(dims.count("seq"), 0u);
}

TEST(ShapeFactsSources, NoteKnownTensorDecodesRawAndTypedData) {
  KnownDims dims;
  KnownInts ints;
  onnx::TensorProto raw;
  TensorToProto(*Tensor::Create(DataType::kInt32, {3}), &raw);  // raw_data, little-endian
  raw.set_raw_data(std::string("\x05\x00\x00\x00\xfe\xff\xff\xff\x07\x00\x00\x00", 12));
  NoteKnownTensor("raw", raw, dims, ints);
  onnx::TensorProto typed;
  typed.set_data_type(onnx::TensorProto::INT64);
  typed.add_dims(2);
  typed.add_int64_data(3);
  typed.add_int64_data(-4);
  NoteKnownTensor("typed", typed, dims, ints);
  EXPECT_EQ(ints["raw"], (std::vector<int64_t>{5, -2, 7}));
  EXPECT_EQ(ints["typed"], (std::vector<int64_t>{3, -4}));
  EXPECT_EQ(dims["typed"], (std::vector<int64_t>{2}));
}

}  // namespace
}  // namespace parity
