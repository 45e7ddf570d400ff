// Body consistency: every function body in spec/functions must compute what
// the operator's direct kernel computes. Each case runs one node twice, with
// the kernel and with prefer_function_bodies, and compares the two outputs
// under the tolerance policy (spec/tolerance.json). Inputs are drawn from a
// seeded generator so that a failure reproduces.
#include <gtest/gtest.h>

#include <cmath>

#include "spec/functions/body_check_test_util.h"

namespace parity {
namespace {

using testing_util::AllowStepwiseRounding;
using testing_util::BodyComparison;
using testing_util::Draw;
using testing_util::FloatAttr;
using testing_util::IntAttr;
using testing_util::kFloatTypes;
using testing_util::ShapeLabel;
using testing_util::SingleNode;
using testing_util::SpecTolerancePolicy;
using testing_util::StringAttr;

// One optional input of a case: absent when `present` is false.
struct Input {
  bool present = true;
  Tensor tensor;
};

struct BodyCase {
  std::string label;  // names the attributes and shapes, for failure messages
  std::string op;
  int opset = 0;
  std::vector<onnx::AttributeProto> attributes;
  std::vector<Input> inputs;
  ShapeFacts facts;
};

// A body evaluated in the input type T rounds after each of its steps, where
// the kernel (and the backends the policy describes, which compute float16
// and bfloat16 in float32) rounds once. For T = float16 or bfloat16 this is
// outside the policy's 1-ULP allowance, and it is the body's definition, not
// an error: such an op names here how many roundings in T its body makes
// (`steps`), and the comparison allows `steps` ULP of T plus `steps` unit
// roundoffs of T in absolute terms (outputs of magnitude about 1). Each
// function's page (spec/functions/*.md) says the same.
Tolerance ToleranceFor(const BodyCase& c, DataType dtype, int narrow_steps) {
  Tolerance tol = SpecTolerancePolicy().For(c.op, dtype, c.facts);
  if (narrow_steps > 0 && (dtype == DataType::kFloat16 || dtype == DataType::kBfloat16)) {
    tol = AllowStepwiseRounding(std::move(tol), dtype, narrow_steps,
                                "body rounds in " + std::string(DataTypeName(dtype)) + " after each of its steps");
  }
  return tol;
}

// Runs every case both ways and expects a match; returns the number run.
int ExpectBodyMatchesKernel(const std::vector<BodyCase>& cases, int narrow_steps) {
  int run = 0;
  for (const BodyCase& c : cases) {
    SCOPED_TRACE(c.op + " " + c.label);
    SingleNode node;
    node.op = c.op;
    node.opsets = {{"", c.opset}};
    node.attributes = c.attributes;
    for (const Input& in : c.inputs) node.inputs.push_back(in.present ? &in.tensor : nullptr);
    BodyComparison how;
    how.tolerance = [&](DataType dtype) { return ToleranceFor(c, dtype, narrow_steps); };
    how.output_names = {"output"};
    run += testing_util::ExpectBodyMatchesKernel(node, how);
  }
  return run;
}

TEST(FunctionBodiesTest, StandardLibraryDefinesEachCheckedOperator) {
  for (const char* op : {"Swish", "SwiGLU", "RMSNormalization", "RotaryEmbedding", "TensorScatter"}) {
    EXPECT_NE(testing_util::StandardBodies().Find("", op), nullptr) << op << " has no body in spec/functions";
  }
}

// Swish: x in [-4, 4] keeps alpha*x where the sigmoid is neither 0 nor 1;
// alpha 0 (x/2), negative and fractional slopes; a scalar and a 3-D shape.
TEST(FunctionBodiesTest, SwishBodyMatchesKernel) {
  Draw draw(24001);
  std::vector<BodyCase> cases;
  for (DataType dtype : kFloatTypes) {
    for (float alpha : {1.0f, 0.5f, 1.702f, 0.0f, -1.25f}) {
      for (const Shape& shape : {Shape{}, Shape{33}, Shape{2, 3, 7}}) {
        BodyCase c{"alpha=" + std::to_string(alpha) + " " + ShapeLabel(shape) + " " +
                       std::string(DataTypeName(dtype)),
                   "Swish", 24, {}, {{true, draw.Make(dtype, shape, -4, 4)}}, {}};
        if (alpha != 1.0f) c.attributes.push_back(FloatAttr("alpha", alpha));  // 1.0: the default
        cases.push_back(std::move(c));
      }
    }
  }
  // float16/bfloat16: three roundings (alpha*x, sigmoid, product); the
  // sigmoid amplifies the first by up to |alpha*x| <= 4*1.702, within 4 ULP.
  EXPECT_EQ(ExpectBodyMatchesKernel(cases, 4), 45);
}

TEST(FunctionBodiesTest, SwiGluBodyMatchesKernel) {
  Draw draw(28001);
  std::vector<BodyCase> cases;
  for (DataType dtype : kFloatTypes) {
    for (float alpha : {1.0f, 1.702f, 0.0f}) {
      for (const Shape& shape : {Shape{17}, Shape{2, 4, 6}}) {
        BodyCase c{"alpha=" + std::to_string(alpha) + " " + ShapeLabel(shape) + " " +
                       std::string(DataTypeName(dtype)),
                   "SwiGLU", 28, {FloatAttr("alpha", alpha)},
                   {{true, draw.Make(dtype, shape, -4, 4)}, {true, draw.Make(dtype, shape, -2, 2)}}, {}};
        cases.push_back(std::move(c));
      }
    }
  }
  // Four roundings in T (alpha*A, sigmoid, A*gate, *B), the first amplified
  // as for Swish: within 5 ULP of T.
  EXPECT_EQ(ExpectBodyMatchesKernel(cases, 5), 18);
}

// RMSNormalization: every axis of a 3-D and a 2-D input (negative and
// non-negative spellings), scale of the full normalized shape or
// broadcasting to it, the default and a large epsilon, stash_type float32
// (the default) and float64. X in [-2, 2], scale in [0.5, 1.5].
TEST(FunctionBodiesTest, RmsNormalizationBodyMatchesKernel) {
  struct Layout {
    Shape x, scale;
    int64_t axis;
  };
  const std::vector<Layout> layouts = {{{2, 3, 8}, {8}, -1},  {{2, 3, 8}, {3, 8}, 1}, {{2, 3, 8}, {1, 8}, -2},
                                       {{4, 16}, {4, 16}, 0}, {{5, 12}, {12}, 1}};
  Draw draw(23001);
  std::vector<BodyCase> cases;
  for (DataType dtype : kFloatTypes) {
    for (const Layout& layout : layouts) {
      for (float epsilon : {0.0f, 1e-2f}) {  // 0: the attribute left out (1e-5)
        for (int64_t stash : {int64_t{0}, int64_t{11}}) {  // 0: left out (float32)
          BodyCase c{ShapeLabel(layout.x) + " axis=" + std::to_string(layout.axis) + " scale " +
                         ShapeLabel(layout.scale) + " epsilon=" + std::to_string(epsilon) +
                         " stash=" + std::to_string(stash) + " " + std::string(DataTypeName(dtype)),
                     "RMSNormalization", 23, {IntAttr("axis", layout.axis)},
                     {{true, draw.Make(dtype, layout.x, -2, 2)}, {true, draw.Make(dtype, layout.scale, 0.5, 1.5)}},
                     {}};
          if (epsilon != 0.0f) c.attributes.push_back(FloatAttr("epsilon", epsilon));
          if (stash != 0) c.attributes.push_back(IntAttr("stash_type", stash));
          const int64_t rank = static_cast<int64_t>(layout.x.size());
          const size_t first = static_cast<size_t>(layout.axis < 0 ? layout.axis + rank : layout.axis);
          c.facts.reduced_length = 1;
          for (size_t d = first; d < layout.x.size(); ++d) c.facts.reduced_length *= layout.x[d];
          cases.push_back(std::move(c));
        }
      }
    }
  }
  // The body rounds twice in T (the normalized value, then its product with
  // scale): within the normalization family's 2 ULP, so no allowance.
  EXPECT_EQ(ExpectBodyMatchesKernel(cases, 0), 60);
}

// RotaryEmbedding: 4-D [B, H, S, D] and 3-D [B, S, H*D] inputs (num_heads),
// halves and interleaved pairs, full rotation (dim 0 and dim = D) and a
// partial one (dim 4 of 8, the tail untouched), caches looked up by
// position_ids or given per (batch, position). X in [-1, 1]; the caches
// hold the cosine and sine of angles in [0, 2 pi).
TEST(FunctionBodiesTest, RotaryEmbeddingBodyMatchesKernel) {
  const int64_t batch = 2, heads = 3, seq = 4, head_size = 8, max_position = 10;
  Draw draw(23002);
  std::vector<BodyCase> cases;
  for (DataType dtype : kFloatTypes) {
    for (bool three_d : {false, true}) {
      for (int64_t interleaved : {0, 1}) {
        for (int64_t rotary_dim : {0, 4, 8}) {
          for (bool with_positions : {true, false}) {
            const int64_t half = (rotary_dim == 0 ? head_size : rotary_dim) / 2;
            const Shape x_shape = three_d ? Shape{batch, seq, heads * head_size} : Shape{batch, heads, seq, head_size};
            const Shape cache_shape = with_positions ? Shape{max_position, half} : Shape{batch, seq, half};
            int64_t rows = cache_shape[0] * (with_positions ? 1 : seq);
            std::vector<double> angles = draw.Uniform(rows * half, 0, 2 * M_PI), cosines, sines;
            for (double a : angles) cosines.push_back(std::cos(a)), sines.push_back(std::sin(a));
            BodyCase c{std::string(three_d ? "3-D" : "4-D") + " interleaved=" + std::to_string(interleaved) +
                           " rotary_dim=" + std::to_string(rotary_dim) +
                           (with_positions ? " position_ids " : " no position_ids ") + std::string(DataTypeName(dtype)),
                       "RotaryEmbedding", 23, {},
                       {{true, draw.Make(dtype, x_shape, -1, 1)},
                        {true, *Tensor::FromDoubles(dtype, cache_shape, cosines)},
                        {true, *Tensor::FromDoubles(dtype, cache_shape, sines)}},
                       {}};
            if (with_positions) {
              std::vector<int64_t> positions;
              for (int64_t i = 0; i < batch * seq; ++i) positions.push_back(draw.Int(0, max_position - 1));
              c.inputs.push_back({true, Tensor::FromInt64s({batch, seq}, positions)});
            }
            if (interleaved) c.attributes.push_back(IntAttr("interleaved", 1));
            if (rotary_dim) c.attributes.push_back(IntAttr("rotary_embedding_dim", rotary_dim));
            if (three_d) c.attributes.push_back(IntAttr("num_heads", heads));
            cases.push_back(std::move(c));
          }
        }
      }
    }
  }
  // Three roundings in T (two products and their sum or difference), each
  // of up to half a unit of T at magnitude 1.
  EXPECT_EQ(ExpectBodyMatchesKernel(cases, 3), 72);
}

// TensorScatter: the default axis (-2) and explicit ones (2, 1, -1) on 3-D
// and 4-D caches; one, several and max_sequence_length updates; modes
// linear (default and named) and circular, with write indices that wrap;
// write_indices given and absent (all 0). Exact for every type.
TEST(FunctionBodiesTest, TensorScatterBodyMatchesKernel) {
  struct Layout {
    Shape cache;
    int64_t axis;  // 0: the attribute left out (-2)
  };
  const std::vector<Layout> layouts = {{{2, 3, 8, 4}, 0}, {{2, 3, 8, 4}, 2}, {{3, 10, 5}, 1}, {{2, 2, 6}, -1}};
  Draw draw(24002);
  std::vector<BodyCase> cases;
  for (DataType dtype : {DataType::kFloat, DataType::kFloat16, DataType::kBfloat16, DataType::kInt64}) {
    for (const Layout& layout : layouts) {
      const int64_t rank = static_cast<int64_t>(layout.cache.size());
      const int64_t axis = layout.axis == 0 ? -2 : layout.axis;
      const size_t seq_axis = static_cast<size_t>(axis < 0 ? axis + rank : axis);
      const int64_t max_len = layout.cache[seq_axis];
      for (int64_t len : {int64_t{1}, int64_t{3}, max_len}) {
        for (const std::string mode : {"", "linear", "circular"}) {
          for (bool with_indices : {true, false}) {
            Shape update_shape = layout.cache;
            update_shape[seq_axis] = len;
            BodyCase c{ShapeLabel(layout.cache) + " axis=" + std::to_string(layout.axis) + " len=" +
                           std::to_string(len) + " mode=" + mode + (with_indices ? " indices " : " no indices ") +
                           std::string(DataTypeName(dtype)),
                       "TensorScatter", 24, {},
                       {{true, draw.Make(dtype, layout.cache, -3, 3)}, {true, draw.Make(dtype, update_shape, -3, 3)}},
                       {}};
            if (dtype == DataType::kInt64) {  // whole numbers, so that the values differ
              for (Input& in : c.inputs) {
                in.tensor = *Tensor::FromDoubles(dtype, in.tensor.shape(), draw.Uniform(in.tensor.size(), -90, 90));
              }
            }
            if (with_indices) {
              std::vector<int64_t> starts;
              for (int64_t b = 0; b < layout.cache[0]; ++b) {
                // Circular: any start, so that start + len passes the end and wraps.
                starts.push_back(draw.Int(0, mode == "circular" ? max_len - 1 : max_len - len));
              }
              c.inputs.push_back({true, Tensor::FromInt64s({layout.cache[0]}, starts)});
            }
            if (layout.axis != 0) c.attributes.push_back(IntAttr("axis", layout.axis));
            if (!mode.empty()) c.attributes.push_back(StringAttr("mode", mode));
            cases.push_back(std::move(c));
          }
        }
      }
    }
  }
  EXPECT_EQ(ExpectBodyMatchesKernel(cases, 0), 288);
}

}  // namespace
}  // namespace parity
