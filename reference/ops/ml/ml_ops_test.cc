// Tests of the ml family's kernels (the ai.onnx.ml operators): small cases whose results
// follow from the definitions by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "reference/ops/node_runner.h"
#include "reference/ops/reference_registry.h"
#include "reference/ops/test_builders.h"

namespace parity::ops::ml {
namespace {

using testing_util::ExpectNear;

TEST(Registration, TheReferenceRegistryHasTheMlKernels) {
  for (const char* op : {"LabelEncoder", "TreeEnsemble"}) {
    EXPECT_TRUE(ReferenceRegistry().Knows("ai.onnx.ml", op)) << op;
  }
}

TEST(Ml, LabelEncoderUsesTheDefaultForUnknownKeys) {
  auto out = NodeRunner("LabelEncoder", "ai.onnx.ml")
                 .Opset(2)
                 .Input(Tensor::FromInt64s({3}, {1, 2, 9}))
                 .Attr("keys_int64s", std::vector<int64_t>{1, 2})
                 .Attr("values_floats", std::vector<float>{0.5f, 1.5f})
                 .Attr("default_float", 7.0f)
                 .RunOne();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectNear(out->ToDoubles(), {0.5, 1.5, 7});
}

}  // namespace
}  // namespace parity::ops::ml
