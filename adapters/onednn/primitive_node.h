// The shape a oneDNN lowering takes: a node whose primitive depends on the
// shapes of its inputs. The primitive (oneDNN compiles it: JIT) is made at
// session creation when the static facts give every input's dims, and
// otherwise at the first run that meets a new combination of shapes; each
// made plan is kept for the session's later runs.
#pragma once

#include <map>
#include <memory>
#include <vector>

#include "adapters/device/lowering.h"
#include "adapters/onednn/onednn_context.h"

namespace parity::adapters::onednn {

// One per input. An absent input has empty dims, as a scalar has: a
// lowering tells them apart by its node (NodeView::has_input at creation).
using InputShapes = std::vector<std::vector<int64_t>>;

// Counts of plans made, for the adapter's report on where compile time goes.
struct PlanCounts {
  uint64_t at_creation = 0;
  uint64_t at_run = 0;
};
PlanCounts& Counts();

template <typename Plan>
class ShapedNode : public LoweredNode {
 public:
  StatusOr<std::vector<Value>> Run(const KernelContext& ctx) final {
    for (size_t i = 0; i < ctx.input_count(); ++i) {
      if (ctx.has_input(i) && !ctx.input(i).is_tensor()) return ctx.Error("input ", i, " is not a tensor");
    }
    // A run mostly meets the shapes of the one before: that plan is checked
    // first, without building the key of the map.
    const Plan* plan = last_ && SameShapes(*last_shapes_, ctx) ? last_ : nullptr;
    if (!plan) {
      InputShapes shapes(ctx.input_count());
      for (size_t i = 0; i < ctx.input_count(); ++i) {
        if (ctx.has_input(i)) shapes[i] = ctx.tensor(i).shape();
      }
      PARITY_ASSIGN_OR_RETURN(plan, Find(shapes, /*at_creation=*/false, &ctx));
    }
    WrapScope scope;
    try {
      return Execute(*plan, ctx);
    } catch (const dnnl::error& e) {
      return ctx.Error("running its oneDNN primitive failed: ", DnnlError(e));
    }
  }

  bool deferred() const override { return plans_.empty(); }

  // Makes a plan for `shapes` and drops it: at session creation, whether
  // oneDNN makes this primitive for stand-in shapes of the known rank when
  // the real ones wait for the first run.
  Status CheckPlan(const InputShapes& shapes) {
    try {
      return MakePlan(shapes).status();
    } catch (const dnnl::error& e) {
      return Status(StatusCode::kInternal, StrCat("creating its oneDNN primitive failed: ", DnnlError(e)));
    }
  }

  // Makes the plan of the static shapes now, when they are all known.
  Status Prepare(const NodeView& view) {
    InputShapes shapes(static_cast<size_t>(view.input_count()));
    for (int i = 0; i < view.input_count(); ++i) {
      if (!view.has_input(i)) continue;
      const std::vector<int64_t>* dims = view.input_dims(i);
      if (!dims) return Status::Ok();  // made at the first run
      shapes[static_cast<size_t>(i)] = *dims;
    }
    return Find(shapes, /*at_creation=*/true, nullptr).status();
  }

 protected:
  // The plan for these shapes, or an error naming what the shapes break
  // (an error a claimed node cannot meet for valid input: a claim checks
  // what the shapes do not decide).
  virtual StatusOr<Plan> MakePlan(const InputShapes& shapes) = 0;
  virtual StatusOr<std::vector<Value>> Execute(const Plan& plan, const KernelContext& ctx) = 0;

 private:
  // The plan for `shapes`, made when none is kept yet; it becomes the last
  // one, which Run checks first.
  StatusOr<const Plan*> Find(const InputShapes& shapes, bool at_creation, const KernelContext* ctx) {
    auto it = plans_.find(shapes);
    if (it == plans_.end()) {
      StatusOr<Plan> made = Status(StatusCode::kInternal, "no plan");
      try {
        made = MakePlan(shapes);
      } catch (const dnnl::error& e) {
        made = Status(StatusCode::kInternal, StrCat("creating its oneDNN primitive failed: ", DnnlError(e)));
      }
      if (!made.ok()) return ctx ? made.status().WithContext(graph::DescribeNode(ctx->node())) : made.status();
      (at_creation ? Counts().at_creation : Counts().at_run) += 1;
      it = plans_.emplace(shapes, std::make_unique<Plan>(std::move(made).value())).first;
    }
    last_shapes_ = &it->first;
    last_ = it->second.get();
    return last_;
  }

  // Whether the context's inputs have `shapes` (an absent input has empty dims).
  static bool SameShapes(const InputShapes& shapes, const KernelContext& ctx) {
    if (shapes.size() != ctx.input_count()) return false;
    for (size_t i = 0; i < shapes.size(); ++i) {
      if (ctx.has_input(i) ? shapes[i] != ctx.tensor(i).shape() : !shapes[i].empty()) return false;
    }
    return true;
  }

  std::map<InputShapes, std::unique_ptr<Plan>> plans_;
  // The plan of the last run and its key in plans_ (std::map keeps both in place).
  const Plan* last_ = nullptr;
  const InputShapes* last_shapes_ = nullptr;
};

// Makes `node` (a ShapedNode) and prepares it; the LowerFn's usual tail.
template <typename Node>
StatusOr<std::unique_ptr<LoweredNode>> Prepared(std::unique_ptr<Node> node, const NodeView& view) {
  Status prepared = node->Prepare(view);
  if (!prepared.ok()) {
    // oneDNN refused the static shapes: the node falls back, saying why.
    return NotLowered(prepared.message());
  }
  return std::unique_ptr<LoweredNode>(std::move(node));
}

// Makes a region's runner (a ShapedNode over the region's inputs, in
// `claim.inputs` order) and prepares it for their static shapes, read at
// the anchor's opset: claim.runner, or NotLowered when oneDNN refuses them.
template <typename Node>
Status PrepareRegion(std::unique_ptr<Node> node, const RegionView& region, RegionClaim& claim) {
  onnx::NodeProto inputs_only;
  for (const std::string& input : claim.inputs) inputs_only.add_input(input);
  PARITY_ASSIGN_OR_RETURN(claim.runner,
                          Prepared(std::move(node), NodeView(inputs_only, region.view(region.anchor()).opset(),
                                                             region.facts())));
  return Status::Ok();
}

}  // namespace parity::adapters::onednn
