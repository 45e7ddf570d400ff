// Kernels of the control-flow family: If, Loop and Scan (which run
// graph-valued attributes through KernelContext::RunSubgraph, so bodies see
// their outer scope), the Sequence* operators and the Optional* operators.
#pragma once

#include "onnx/onnx-ml.pb.h"
#include "reference/eval/kernel.h"

namespace parity::ops::controlflow {

StatusOr<std::vector<Value>> If(const KernelContext& ctx);
StatusOr<std::vector<Value>> Loop(const KernelContext& ctx);
StatusOr<std::vector<Value>> Scan8(const KernelContext& ctx);  // opset 8: batch axis and sequence_lens
StatusOr<std::vector<Value>> Scan(const KernelContext& ctx);   // opset 9 and later

StatusOr<std::vector<Value>> SequenceConstruct(const KernelContext& ctx);
StatusOr<std::vector<Value>> SequenceEmpty(const KernelContext& ctx);
StatusOr<std::vector<Value>> SequenceInsert(const KernelContext& ctx);
StatusOr<std::vector<Value>> SequenceErase(const KernelContext& ctx);
StatusOr<std::vector<Value>> SequenceAt(const KernelContext& ctx);
StatusOr<std::vector<Value>> SequenceLength(const KernelContext& ctx);
StatusOr<std::vector<Value>> SplitToSequence(const KernelContext& ctx);
StatusOr<std::vector<Value>> ConcatFromSequence(const KernelContext& ctx);
StatusOr<std::vector<Value>> SequenceMap(const KernelContext& ctx);

StatusOr<std::vector<Value>> Optional(const KernelContext& ctx);
StatusOr<std::vector<Value>> OptionalHasElement(const KernelContext& ctx);
StatusOr<std::vector<Value>> OptionalGetElement(const KernelContext& ctx);

// The tensor element type a graph value is declared with (for a sequence or
// optional, that of its element); kUndefined when the type does not say.
DataType DeclaredElementType(const onnx::TypeProto& type);
// The static shape a tensor type declares, with unknown dimensions as 0;
// empty when the type carries no shape.
Shape DeclaredShapeOrZero(const onnx::TypeProto& type);

}  // namespace parity::ops::controlflow
