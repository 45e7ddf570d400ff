// The shape-only operators (Reshape, Flatten, Squeeze, Unsqueeze, Identity)
// as a device adapter claims them: a view, the input's buffer under another
// shape, with no kernel and no copy. The new shape comes from the
// reference's own kernel for the operator, whose result for these
// operators is such a view (Tensor::Reshaped): one set of shape rules, and
// the run checks that no data was moved. Claiming them keeps a chain of
// lowered nodes one device region instead of breaking it at every reshape
// (a device that keeps its values in its own memory finds the view's
// buffer where the input's was), and a run that forbids fallback is not
// failed by nodes that move no data. The report still tells them apart:
// they make no kernel (kernels_compiled).
#pragma once

#include <memory>

#include "adapters/device/lowering.h"
#include "reference/ops/reference_registry.h"

namespace parity::adapters {

class ViewNode final : public LoweredNode {
 public:
  StatusOr<std::vector<Value>> Run(const KernelContext& ctx) override {
    if (!ctx.has_input(0) || !ctx.input(0).is_tensor()) return ctx.Error("input 0 is not a tensor");
    const Kernel* kernel = ReferenceRegistry().Find(ctx.node().domain(), ctx.node().op_type(), ctx.opset());
    if (!kernel) return ctx.Error("has no shape rule at opset ", ctx.opset());
    PARITY_ASSIGN_OR_RETURN(std::vector<Value> out, (*kernel)(ctx));
    if (out.size() != 1 || !out[0].is_tensor() || !out[0].tensor().SharesBufferWith(ctx.tensor(0))) {
      return ctx.Error("the reference's kernel made a copy, not a view");
    }
    return out;
  }
};

// A view claims a tensor of any type but strings; sequences and optionals
// are no tensors and stay with the reference. Before `since_opset` the
// operator's shape is an attribute, left to the reference.
inline LowerFn LowerView(int64_t since_opset) {
  return [since_opset](const NodeView& view) -> StatusOr<std::unique_ptr<LoweredNode>> {
    if (view.opset() < since_opset) return NotLowered("opset ", view.opset(), " (its shape is an attribute)");
    const std::optional<DataType> type = view.input_type(0);
    if (!type) return NotLowered("input 0 is not known to be a tensor before the run");
    if (*type == DataType::kString) return NotLowered("a string tensor");
    return std::unique_ptr<LoweredNode>(std::make_unique<ViewNode>());
  };
}

// Every shape-only operator, as a view.
inline void AddViewLowerings(Lowering& lowering) {
  lowering.Add("Reshape", LowerView(5));
  lowering.Add("Flatten", LowerView(1));
  lowering.Add("Squeeze", LowerView(1));
  lowering.Add("Unsqueeze", LowerView(1));
  lowering.Add("Identity", LowerView(1));
}

}  // namespace parity::adapters
