// Kernels of the tensor family: shape manipulation, data movement, indexing,
// casts and resizing. register.cc binds them to (op_type, since_version);
// each kernel reads ctx.opset() where one kernel serves several versions
// whose signatures differ (attributes that became inputs).
#pragma once

#include <vector>

#include "reference/core/value.h"
#include "reference/eval/kernel.h"

namespace parity::ops::tensor {

using KernelResult = StatusOr<std::vector<Value>>;

// constant.cc
KernelResult IdentityKernel(const KernelContext& ctx);
KernelResult ConstantKernel(const KernelContext& ctx);
KernelResult ConstantOfShapeKernel(const KernelContext& ctx);
KernelResult EyeLikeKernel(const KernelContext& ctx);
KernelResult RangeKernel(const KernelContext& ctx);

// shape.cc
KernelResult ShapeKernel(const KernelContext& ctx);
KernelResult SizeKernel(const KernelContext& ctx);
KernelResult ReshapeKernel(const KernelContext& ctx);
KernelResult FlattenKernel(const KernelContext& ctx);
KernelResult SqueezeKernel(const KernelContext& ctx);
KernelResult UnsqueezeKernel(const KernelContext& ctx);
KernelResult ExpandKernel(const KernelContext& ctx);

// transpose.cc
KernelResult TransposeKernel(const KernelContext& ctx);
KernelResult DepthToSpaceKernel(const KernelContext& ctx);
KernelResult SpaceToDepthKernel(const KernelContext& ctx);

// concat_split.cc
KernelResult ConcatKernel(const KernelContext& ctx);
KernelResult SplitKernel(const KernelContext& ctx);
KernelResult TileKernel(const KernelContext& ctx);

// slice_pad.cc
KernelResult SliceKernel(const KernelContext& ctx);
KernelResult PadKernel(const KernelContext& ctx);
KernelResult CenterCropPadKernel(const KernelContext& ctx);

// gather.cc
KernelResult GatherKernel(const KernelContext& ctx);
KernelResult GatherElementsKernel(const KernelContext& ctx);
KernelResult GatherNDKernel(const KernelContext& ctx);

// scatter.cc
KernelResult ScatterElementsKernel(const KernelContext& ctx);  // also the deprecated Scatter
KernelResult ScatterNDKernel(const KernelContext& ctx);

// select.cc
KernelResult NonZeroKernel(const KernelContext& ctx);
KernelResult CompressKernel(const KernelContext& ctx);
KernelResult TriluKernel(const KernelContext& ctx);
KernelResult OneHotKernel(const KernelContext& ctx);
KernelResult ReverseSequenceKernel(const KernelContext& ctx);

// cast.cc
KernelResult CastKernel(const KernelContext& ctx);
KernelResult CastLikeKernel(const KernelContext& ctx);
KernelResult BitCastKernel(const KernelContext& ctx);

// sort.cc
KernelResult TopKKernel(const KernelContext& ctx);
KernelResult UniqueKernel(const KernelContext& ctx);

// resize.cc
KernelResult ResizeKernel(const KernelContext& ctx);
KernelResult UpsampleKernel(const KernelContext& ctx);

}  // namespace parity::ops::tensor
