// Registration of the tensor family's kernels. Each operator is registered
// at the versions where its signature or semantics changed (docs/Changelog.md);
// versions that only widened the type constraints share the earlier kernel.
// Kernels that serve several versions branch on ctx.opset().
#include <initializer_list>

#include "reference/ops/families.h"
#include "reference/ops/tensor/tensor.h"

namespace parity::ops {
namespace {

void RegisterAt(OpRegistry& registry, std::string_view op, std::initializer_list<int> versions, Kernel kernel) {
  for (int v : versions) registry.Register(op, v, kernel);
}

// Deprecated operators: the schema at `version` forbids the op.
Kernel Deprecated(std::string replacement) {
  return [replacement](const KernelContext& ctx) -> StatusOr<std::vector<Value>> {
    return ctx.Error("this operator is deprecated at opset ", ctx.opset(), "; use ", replacement);
  };
}

}  // namespace

void RegisterTensorOps(OpRegistry& registry) {
  using namespace tensor;  // NOLINT: the kernels' namespace
  RegisterAt(registry, "Identity", {1, 14, 16}, IdentityKernel);  // 14: sequences, 16: optionals
  RegisterAt(registry, "Constant", {1, 11, 12}, ConstantKernel);  // 11: sparse_value, 12: value_*
  RegisterAt(registry, "ConstantOfShape", {9}, ConstantOfShapeKernel);
  RegisterAt(registry, "Shape", {1, 15}, ShapeKernel);  // 15: start, end
  RegisterAt(registry, "Size", {1}, SizeKernel);
  RegisterAt(registry, "Reshape", {1, 5, 14}, ReshapeKernel);  // 5: shape input, 14: allowzero
  RegisterAt(registry, "Transpose", {1}, TransposeKernel);
  RegisterAt(registry, "Flatten", {1, 11}, FlattenKernel);            // 11: negative axis
  RegisterAt(registry, "Squeeze", {1, 11, 13}, SqueezeKernel);        // 13: axes input
  RegisterAt(registry, "Unsqueeze", {1, 11, 13}, UnsqueezeKernel);    // 13: axes input
  RegisterAt(registry, "Concat", {1, 4, 11}, ConcatKernel);           // 4: axis required
  RegisterAt(registry, "Split", {1, 2, 13, 18}, SplitKernel);         // 13: split input, 18: num_outputs
  RegisterAt(registry, "Slice", {1, 10, 11}, SliceKernel);            // 10: inputs and steps
  RegisterAt(registry, "Gather", {1, 11}, GatherKernel);              // 11: negative indices
  RegisterAt(registry, "GatherElements", {11}, GatherElementsKernel);
  RegisterAt(registry, "GatherND", {11, 12}, GatherNDKernel);         // 12: batch_dims
  RegisterAt(registry, "Scatter", {9}, ScatterElementsKernel);
  registry.Register("Scatter", 11, Deprecated("ScatterElements"));
  RegisterAt(registry, "ScatterElements", {11, 16, 18}, ScatterElementsKernel);  // 16, 18: reductions
  RegisterAt(registry, "ScatterND", {11, 16, 18}, ScatterNDKernel);
  RegisterAt(registry, "Expand", {8}, ExpandKernel);
  RegisterAt(registry, "Tile", {1, 6}, TileKernel);                   // 6: repeats input
  RegisterAt(registry, "Pad", {1, 2, 11, 18, 19}, PadKernel);         // 11: inputs, 18: axes, 19: wrap
  RegisterAt(registry, "Range", {11}, RangeKernel);
  RegisterAt(registry, "Trilu", {14}, TriluKernel);
  RegisterAt(registry, "OneHot", {9, 11}, OneHotKernel);
  RegisterAt(registry, "EyeLike", {9}, EyeLikeKernel);
  RegisterAt(registry, "NonZero", {9}, NonZeroKernel);
  RegisterAt(registry, "Compress", {9, 11}, CompressKernel);
  RegisterAt(registry, "Cast", {1, 6, 19, 24}, CastKernel);           // 19: saturate, 24: round_mode
  RegisterAt(registry, "CastLike", {15, 19, 24}, CastLikeKernel);
  RegisterAt(registry, "BitCast", {26}, BitCastKernel);
  RegisterAt(registry, "DepthToSpace", {1, 11}, DepthToSpaceKernel);  // 11: mode
  RegisterAt(registry, "SpaceToDepth", {1, 28}, SpaceToDepthKernel);  // 28: mode
  RegisterAt(registry, "ReverseSequence", {10}, ReverseSequenceKernel);
  RegisterAt(registry, "Unique", {11}, UniqueKernel);
  RegisterAt(registry, "TopK", {1, 10, 11}, TopKKernel);              // 10: K input, 11: largest, sorted
  RegisterAt(registry, "CenterCropPad", {18}, CenterCropPadKernel);
  // Resize 11: roi, sizes, coordinate modes, cubic; 13: optional roi/scales;
  // 18: axes, antialias, keep_aspect_ratio_policy; 19: half_pixel_symmetric.
  RegisterAt(registry, "Resize", {10, 11, 13, 18, 19}, ResizeKernel);
  RegisterAt(registry, "Upsample", {1, 7, 9}, UpsampleKernel);  // 7: scales attribute, 9: scales input
  registry.Register("Upsample", 10, Deprecated("Resize"));
}

}  // namespace parity::ops
