// Body consistency for Attention: the function body of
// spec/functions/attention.onnxtxt must compute what the direct kernel
// (reference/ops/attention/attention.cc) computes, output by output, under
// the tolerance policy. Inputs come from a seeded generator in [-2, 2].
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <tuple>

#include "spec/functions/body_check_test_util.h"

namespace parity {
namespace {

using testing_util::AllowStepwiseRounding;
using testing_util::BodyComparison;
using testing_util::Draw;
using testing_util::FloatAttr;
using testing_util::IntAttr;
using testing_util::SingleNode;
using testing_util::SpecTolerancePolicy;

constexpr double kInf = std::numeric_limits<double>::infinity();

// Positions of Attention's inputs and outputs.
enum InputSlot { kQ, kK, kV, kMask, kPastKey, kPastValue, kNonpad, kInputSlots };
enum OutputSlot { kY, kPresentKey, kPresentValue, kQk, kOutputSlots };
const char* const kOutputNames[kOutputSlots] = {"Y", "present_key", "present_value", "qk_matmul_output"};

struct AttentionCase {
  std::string label;  // what the case covers, for failure messages
  int opset = 23;
  DataType dtype = DataType::kFloat;
  std::vector<onnx::AttributeProto> attributes;
  std::optional<Tensor> inputs[kInputSlots];
  bool want_present = false;
  bool want_qk = false;
  ShapeFacts facts;  // n: total sequence length, k: head size
};

// A single Attention node; absent inputs and unrequested outputs are empty
// names, as a real model spells them. The node points into `c`, which must
// outlive it.
SingleNode AttentionNode(const AttentionCase& c) {
  SingleNode node;
  node.op = "Attention";
  node.opsets = {{"", c.opset}};
  node.graph_name = "attention_body_check";
  node.attributes = c.attributes;
  node.outputs.clear();
  int last_input = kQ;
  for (int i = 0; i < kInputSlots; ++i) {
    if (c.inputs[i]) last_input = i;
  }
  for (int i = 0; i <= last_input; ++i) node.inputs.push_back(c.inputs[i] ? &*c.inputs[i] : nullptr);
  const bool wanted[kOutputSlots] = {true, c.want_present, c.want_present, c.want_qk};
  const int last_output = c.want_qk ? kQk : c.want_present ? kPresentValue : kY;
  for (int i = 0; i <= last_output; ++i) node.outputs.push_back(wanted[i] ? kOutputNames[i] : "");
  return node;
}

// The library under test: the bodies embedded at build time.
const FunctionLibrary& Bodies() { return testing_util::StandardBodies(); }

// The policy's float16 bound assumes a backend that accumulates in float32
// and rounds once; the body rounds to T after each of its steps. On the way
// to Y a score passes through up to eight roundings in T (MatMul, the
// scale, softcap's divide, tanh and multiply, the bias, Softmax, the second
// MatMul), as attention.md says, so float16 gets 8 ULP and 8 unit
// roundoffs of float16 in absolute terms (Y and the weights are of
// magnitude about 1). Float32 needs nothing beyond the policy.
constexpr int kNarrowSteps = 8;

Tolerance ToleranceFor(const AttentionCase& c, DataType dtype) {
  Tolerance tol = SpecTolerancePolicy().For("Attention", dtype, c.facts);
  if (dtype == DataType::kFloat16) {
    tol = AllowStepwiseRounding(std::move(tol), dtype, kNarrowSteps,
                                "the body rounds in float16 after each of its steps (attention.md)");
  }
  return tol;
}

// Runs every case both ways and compares every requested output; returns
// the number of outputs compared.
int ExpectBodyMatchesKernel(const std::vector<AttentionCase>& cases) {
  int compared = 0;
  for (const AttentionCase& c : cases) {
    SCOPED_TRACE(c.label + " " + std::string(DataTypeName(c.dtype)) + " opset " + std::to_string(c.opset));
    BodyComparison how;
    how.tolerance = [&](DataType dtype) { return ToleranceFor(c, dtype); };
    how.output_names = {"Y"};
    if (c.want_present) how.output_names.insert(how.output_names.end(), {"present_key", "present_value"});
    if (c.want_qk) how.output_names.push_back("qk_matmul_output");
    compared += testing_util::ExpectBodyMatchesKernel(AttentionNode(c), how, &Bodies());
  }
  return compared;
}

// The sizes of a case: batch 2, query length 3, head size 8, value head
// size 6 (unequal, so that the two are not confused).
struct Layout {
  bool three_d;
  int64_t q_heads, kv_heads;
  int64_t batch = 2, q_len = 3, kv_len = 5, head = 8, v_head = 6;
};

// Q, K and V (and past_key/past_value of `past_len` when it is positive)
// for `layout`, with the head attributes a 3-D layout needs.
AttentionCase Base(Draw& draw, const Layout& l, DataType dtype, int64_t past_len, std::string label) {
  AttentionCase c;
  c.label = std::string(l.three_d ? "3-D" : "4-D") + (l.q_heads == l.kv_heads ? " MHA" : " GQA") +
            (past_len ? " past" : "") + " " + label;
  c.dtype = dtype;
  if (l.three_d) {
    c.inputs[kQ] = draw.Make(dtype, {l.batch, l.q_len, l.q_heads * l.head}, -2, 2);
    c.inputs[kK] = draw.Make(dtype, {l.batch, l.kv_len, l.kv_heads * l.head}, -2, 2);
    c.inputs[kV] = draw.Make(dtype, {l.batch, l.kv_len, l.kv_heads * l.v_head}, -2, 2);
    c.attributes = {IntAttr("q_num_heads", l.q_heads), IntAttr("kv_num_heads", l.kv_heads)};
  } else {
    c.inputs[kQ] = draw.Make(dtype, {l.batch, l.q_heads, l.q_len, l.head}, -2, 2);
    c.inputs[kK] = draw.Make(dtype, {l.batch, l.kv_heads, l.kv_len, l.head}, -2, 2);
    c.inputs[kV] = draw.Make(dtype, {l.batch, l.kv_heads, l.kv_len, l.v_head}, -2, 2);
  }
  if (past_len > 0) {
    c.inputs[kPastKey] = draw.Make(dtype, {l.batch, l.kv_heads, past_len, l.head}, -2, 2);
    c.inputs[kPastValue] = draw.Make(dtype, {l.batch, l.kv_heads, past_len, l.v_head}, -2, 2);
    c.want_present = true;
  }
  c.facts.reduced_length = past_len + l.kv_len;
  c.facts.inner_dim = l.head;
  return c;
}

const Layout kLayouts[] = {{false, 2, 2}, {false, 4, 2}, {true, 2, 2}, {true, 4, 2}};
const DataType kTypes[] = {DataType::kFloat, DataType::kFloat16};

// The masks each layout is run with: none, bool over [q, total], float over
// [batch, 1, q, total], and short last axes (padded with -inf) of both kinds.
enum class MaskKind { kNone, kBool, kFloat, kShortBool, kShortFloat };

std::optional<Tensor> MakeMask(Draw& draw, MaskKind kind, const Layout& l, int64_t total, DataType dtype) {
  switch (kind) {
    case MaskKind::kNone: return std::nullopt;
    case MaskKind::kBool: return draw.Bools({l.q_len, total});
    case MaskKind::kFloat: return draw.Make(dtype, {l.batch, 1, l.q_len, total}, -2, 2);
    case MaskKind::kShortBool: return draw.Bools({l.q_heads, l.q_len, total - 2});
    case MaskKind::kShortFloat: return draw.Make(dtype, {l.q_len, total - 1}, -2, 2);
  }
  return std::nullopt;
}
const char* MaskLabel(MaskKind kind) {
  switch (kind) {
    case MaskKind::kNone: return "no mask";
    case MaskKind::kBool: return "bool mask";
    case MaskKind::kFloat: return "float mask";
    case MaskKind::kShortBool: return "short bool mask";
    case MaskKind::kShortFloat: return "short float mask";
  }
  return "";
}

TEST(AttentionBodyTest, LibraryDefinesAttention) {
  EXPECT_NE(Bodies().Find("", "Attention"), nullptr) << "spec/functions has no Attention body";
}

// Every layout (3-D and 4-D, MHA and GQA) with and without a cache, each
// mask kind, and is_causal 0 and 1, in float32 and float16.
TEST(AttentionBodyTest, LayoutsCachesMasksAndCausality) {
  Draw draw(23101);
  std::vector<AttentionCase> cases;
  for (DataType dtype : kTypes) {
    for (const Layout& l : kLayouts) {
      for (int64_t past_len : {0, 4}) {
        for (MaskKind mask : {MaskKind::kNone, MaskKind::kBool, MaskKind::kFloat, MaskKind::kShortBool,
                              MaskKind::kShortFloat}) {
          for (int64_t causal : {0, 1}) {
            AttentionCase c = Base(draw, l, dtype, past_len,
                                   std::string(MaskLabel(mask)) + (causal ? " causal" : ""));
            c.inputs[kMask] = MakeMask(draw, mask, l, past_len + l.kv_len, dtype);
            if (causal) c.attributes.push_back(IntAttr("is_causal", 1));
            cases.push_back(std::move(c));
          }
        }
      }
    }
  }
  // 160 cases; those with a cache also compare present_key and present_value.
  EXPECT_EQ(ExpectBodyMatchesKernel(cases), 160 + 2 * 80);
}

// scale, softcap (alone, and with a mask it must come before) and
// softmax_precision, on the GQA layouts.
TEST(AttentionBodyTest, ScaleSoftcapAndSoftmaxPrecision) {
  Draw draw(23102);
  std::vector<AttentionCase> cases;
  for (DataType dtype : kTypes) {
    for (const Layout& l : {kLayouts[1], kLayouts[3]}) {
      for (int variant = 0; variant < 6; ++variant) {
        const char* labels[] = {"scale 0.3", "scale 1", "softcap 1.5", "softcap 0.5 float mask causal",
                                "softmax_precision float", "softmax_precision double, scale 2, softcap 3"};
        AttentionCase c = Base(draw, l, dtype, variant % 2 ? 2 : 0, labels[variant]);
        const int64_t total = c.facts.reduced_length;
        switch (variant) {
          case 0: c.attributes.push_back(FloatAttr("scale", 0.3f)); break;
          case 1: c.attributes.push_back(FloatAttr("scale", 1.0f)); break;
          case 2: c.attributes.push_back(FloatAttr("softcap", 1.5f)); break;
          case 3:
            c.attributes.push_back(FloatAttr("softcap", 0.5f));
            c.attributes.push_back(IntAttr("is_causal", 1));
            c.inputs[kMask] = MakeMask(draw, MaskKind::kFloat, l, total, dtype);
            break;
          case 4: c.attributes.push_back(IntAttr("softmax_precision", 1)); break;
          case 5:
            c.attributes.push_back(IntAttr("softmax_precision", 11));
            c.attributes.push_back(FloatAttr("scale", 2.0f));
            c.attributes.push_back(FloatAttr("softcap", 3.0f));
            break;
        }
        cases.push_back(std::move(c));
      }
    }
  }
  // 24 cases; the three with a cache per (type, layout) add two outputs each.
  EXPECT_EQ(ExpectBodyMatchesKernel(cases), 24 + 2 * 12);
}

// The four qk_matmul_output_modes, each with softcap, a bool mask, is_causal
// and a cache, so that the four stages differ.
TEST(AttentionBodyTest, QkMatmulOutputModes) {
  Draw draw(23103);
  std::vector<AttentionCase> cases;
  for (DataType dtype : kTypes) {
    for (const Layout& l : {kLayouts[1], kLayouts[2]}) {
      for (int64_t mode = 0; mode < 4; ++mode) {
        for (bool with_past : {false, true}) {
          AttentionCase c = Base(draw, l, dtype, with_past ? 3 : 0, "mode " + std::to_string(mode));
          c.attributes.push_back(IntAttr("qk_matmul_output_mode", mode));
          c.attributes.push_back(FloatAttr("softcap", 2.0f));
          c.attributes.push_back(IntAttr("is_causal", 1));
          c.inputs[kMask] = MakeMask(draw, MaskKind::kShortBool, l, c.facts.reduced_length, dtype);
          c.want_qk = true;
          cases.push_back(std::move(c));
        }
      }
    }
  }
  // 32 cases of Y and qk_matmul_output; the 16 with a cache add two more.
  EXPECT_EQ(ExpectBodyMatchesKernel(cases), 64 + 32);
}

// Rows with no allowed key give zeros in Y and in the mode-3 output: a bool
// row all false, a float row all -inf, and a causal row whose keys a short
// mask pads away.
TEST(AttentionBodyTest, FullyMaskedRowsAreZero) {
  Draw draw(23104);
  std::vector<AttentionCase> cases;
  for (DataType dtype : kTypes) {
    for (const Layout& l : {kLayouts[0], kLayouts[3]}) {
      const int64_t total = l.kv_len;
      for (int variant = 0; variant < 3; ++variant) {
        AttentionCase c = Base(draw, l, dtype, 0, variant == 0 ? "bool row all false"
                                                  : variant == 1 ? "float row all -inf"
                                                                 : "causal row padded away");
        if (variant == 0) {
          Tensor mask = draw.Bools({l.q_len, total});
          for (int64_t j = 0; j < total; ++j) mask.SetInt64(1 * total + j, 0);
          c.inputs[kMask] = mask;
        } else if (variant == 1) {
          Tensor mask = draw.Make(dtype, {l.batch, 1, l.q_len, total}, -2, 2);
          for (int64_t j = 0; j < total; ++j) mask.SetDouble((1 * l.q_len + 2) * total + j, -kInf);
          c.inputs[kMask] = mask;
        } else {
          // The mask allows keys 1.. only; query 0 may see key 0 alone.
          Tensor wide = draw.Bools({l.q_len, 2});
          for (int64_t i = 0; i < l.q_len; ++i) wide.SetInt64(i * 2, 0), wide.SetInt64(i * 2 + 1, 1);
          c.inputs[kMask] = wide;
          c.attributes.push_back(IntAttr("is_causal", 1));
        }
        c.attributes.push_back(IntAttr("qk_matmul_output_mode", 3));
        c.want_qk = true;
        cases.push_back(std::move(c));
      }
    }
  }
  EXPECT_EQ(ExpectBodyMatchesKernel(cases), 2 * 12);
}

// Opset 24's external cache: nonpad_kv_seqlen per batch entry, with and
// without is_causal (offset nonpad - q_len, negative for the first rows
// when nonpad < q_len), and with a mask shorter than K but covering the
// lengths. K and V hold a whole cache of 7 positions.
TEST(AttentionBodyTest, NonpadKvSeqlen) {
  Draw draw(24101);
  std::vector<AttentionCase> cases;
  for (DataType dtype : kTypes) {
    for (Layout l : {kLayouts[1], kLayouts[2]}) {
      l.kv_len = 7;
      for (const std::vector<int64_t>& lengths : {std::vector<int64_t>{7, 4}, std::vector<int64_t>{5, 2}}) {
        for (int64_t causal : {0, 1}) {
          for (bool masked : {false, true}) {
            AttentionCase c = Base(draw, l, dtype, 0,
                                   "nonpad " + std::to_string(lengths[0]) + "," + std::to_string(lengths[1]) +
                                       (causal ? " causal" : "") + (masked ? " short mask" : ""));
            c.opset = 24;
            c.inputs[kNonpad] = Tensor::FromInt64s({l.batch}, lengths);
            if (causal) c.attributes.push_back(IntAttr("is_causal", 1));
            if (masked) c.inputs[kMask] = draw.Bools({l.batch, 1, l.q_len, 5});
            c.want_qk = causal && masked;
            if (c.want_qk) c.attributes.push_back(IntAttr("qk_matmul_output_mode", 3));
            cases.push_back(std::move(c));
          }
        }
      }
    }
  }
  // 32 cases; the 8 causal and masked ones also compare the mode-3 output.
  EXPECT_EQ(ExpectBodyMatchesKernel(cases), 32 + 8);
}

// Opset 25's sliding windows, composed with is_causal, a cache and a mask.
TEST(AttentionBodyTest, SlidingWindows) {
  Draw draw(25101);
  std::vector<AttentionCase> cases;
  for (DataType dtype : kTypes) {
    for (const Layout& l : {kLayouts[1], kLayouts[3]}) {
      for (const auto& [left, right, causal] :
           std::vector<std::tuple<int64_t, int64_t, int64_t>>{{2, 0, 0}, {2, 1, 0}, {1, -1, 1}, {-1, 0, 0}}) {
        for (int64_t past_len : {0, 3}) {
          AttentionCase c = Base(draw, l, dtype, past_len,
                                 "window " + std::to_string(left) + "," + std::to_string(right) +
                                     (causal ? " causal" : ""));
          c.opset = 25;
          c.attributes.push_back(IntAttr("left_window_size", left));
          c.attributes.push_back(IntAttr("right_window_size", right));
          if (causal) c.attributes.push_back(IntAttr("is_causal", 1));
          c.inputs[kMask] = MakeMask(draw, MaskKind::kBool, l, c.facts.reduced_length, dtype);
          cases.push_back(std::move(c));
        }
      }
    }
  }
  EXPECT_EQ(ExpectBodyMatchesKernel(cases), 32 + 2 * 16);
}

}  // namespace
}  // namespace parity
