// Concat on oneDNN's concat primitive, Transpose as a oneDNN reorder, and
// the shape-only operators (Reshape, Flatten, Squeeze, Unsqueeze, Identity)
// as views.
//
// Why the views are placed on "cpu": oneDNN's CPU engine works on the host
// buffers the reference's tensors own (onednn_context.h wraps them without a
// copy), so a value between two lowered nodes is already where both read
// it, and a new shape over the same bytes is all a reshape is on this
// device (adapters/device/view_node.h).
#include <algorithm>
#include <limits>
#include <numeric>

#include "adapters/onednn/lowerings.h"
#include "adapters/onednn/primitive_node.h"
#include "adapters/device/view_node.h"

namespace parity::adapters::onednn {
namespace {

// --- Concat ---------------------------------------------------------------

struct ConcatPlan {
  BoundPrimitive primitive;  // the sources, then the destination; unmade when the output is empty
  std::vector<int> sources;  // the inputs concatenated (those with elements)
  std::vector<int64_t> out_dims;
};

class ConcatNode final : public ShapedNode<ConcatPlan> {
 public:
  ConcatNode(DataType type, int64_t axis) : type_(type), axis_(axis) {}

 protected:
  StatusOr<ConcatPlan> MakePlan(const InputShapes& shapes) override {
    const std::vector<int64_t>& first = shapes[0];
    const int64_t rank = static_cast<int64_t>(first.size());
    if (rank == 0) return InvalidArgument("Concat of a scalar");
    if (axis_ < -rank || axis_ >= rank) return InvalidArgument("axis ", axis_, " is out of range for rank ", rank);
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    ConcatPlan plan;
    std::vector<dnnl::memory::desc> descs;  // one per source
    plan.out_dims = first;
    plan.out_dims[static_cast<size_t>(axis)] = 0;
    const dnnl_dt dt = *DnnlType(type_);
    for (size_t i = 0; i < shapes.size(); ++i) {
      const std::vector<int64_t>& s = shapes[i];
      if (static_cast<int64_t>(s.size()) != rank) {
        return InvalidArgument("input ", i, " has rank ", s.size(), ", input 0 has rank ", rank);
      }
      for (int64_t d = 0; d < rank; ++d) {
        if (d != axis && s[static_cast<size_t>(d)] != first[static_cast<size_t>(d)]) {
          return InvalidArgument("input ", i, " has dim ", d, " = ", s[static_cast<size_t>(d)], ", input 0 has ",
                                 first[static_cast<size_t>(d)]);
        }
      }
      plan.out_dims[static_cast<size_t>(axis)] += s[static_cast<size_t>(axis)];
      // oneDNN takes no empty source: an input without elements adds nothing.
      if (std::find(s.begin(), s.end(), 0) != s.end()) continue;
      plan.sources.push_back(static_cast<int>(i));
      descs.push_back(PlainDesc(s, dt));
    }
    if (std::find(plan.out_dims.begin(), plan.out_dims.end(), 0) != plan.out_dims.end()) return plan;
    const dnnl::memory::desc dst = PlainDesc(plan.out_dims, dt);
    std::vector<std::pair<int, dnnl::memory::desc>> args;
    for (size_t k = 0; k < descs.size(); ++k) args.emplace_back(DNNL_ARG_MULTIPLE_SRC + static_cast<int>(k), descs[k]);
    args.emplace_back(DNNL_ARG_DST, dst);
    plan.primitive = BoundPrimitive(
        dnnl::concat(dnnl::concat::primitive_desc(Engine(), dst, static_cast<int>(axis), descs)), args);
    return plan;
  }

  StatusOr<std::vector<Value>> Execute(const ConcatPlan& plan, const KernelContext& ctx) override {
    PARITY_ASSIGN_OR_RETURN(Tensor out, NewTensor(type_, plan.out_dims));
    if (!plan.sources.empty() && out.size() > 0) {
      buffers_.clear();
      for (int source : plan.sources) buffers_.push_back(ctx.tensor(static_cast<size_t>(source)).raw_bytes());
      buffers_.push_back(out.mutable_raw_bytes());
      plan.primitive.Run(buffers_.data(), buffers_.size());
    }
    return std::vector<Value>{Value::FromTensor(std::move(out))};
  }

 private:
  DataType type_;
  int64_t axis_;
  std::vector<const void*> buffers_;  // a run's, kept for its capacity (runs are one at a time)
};

// The types a data-movement primitive (concat, reorder) copies exactly:
// every type oneDNN names, whatever this CPU computes.
Status RequireMovableType(const NodeView& view, int input) {
  const std::optional<DataType> type = view.input_type(input);
  if (!type) return NotLowered("the type of input ", input, " is not known before the run");
  if (!DnnlType(*type)) return NotLowered("oneDNN has no ", DataTypeName(*type), " type");
  return Status::Ok();
}

StatusOr<std::unique_ptr<LoweredNode>> LowerConcat(const NodeView& view) {
  if (view.input_count() == 0) return NotLowered("Concat without inputs");
  for (int i = 0; i < view.input_count(); ++i) {
    if (!view.has_input(i)) return NotLowered("input ", i, " is absent");
    PARITY_RETURN_IF_ERROR(RequireMovableType(view, i));
    if (*view.input_type(i) != *view.input_type(0)) return NotLowered("inputs of mixed types");
    // oneDNN's memory descriptors hold at most DNNL_MAX_NDIMS dims.
    if (view.input_rank(i) > DNNL_MAX_NDIMS) {
      return NotLowered("rank ", view.input_rank(i), " over oneDNN's ", DNNL_MAX_NDIMS);
    }
  }
  if (!view.attribute("axis")) return NotLowered("no axis attribute");
  return Prepared(std::make_unique<ConcatNode>(*view.input_type(0), view.GetInt("axis", 0)), view);
}

// --- Transpose ------------------------------------------------------------

struct TransposePlan {
  BoundPrimitive primitive;  // from, to
  dnnl::memory::desc src;  // the input read through permuted strides, in the output's dim order
  dnnl::memory::desc dst;
  std::vector<int64_t> out_dims;
};

// out[i0, ..., ik] = in[j] with j[perm[d]] = i_d: the input seen with dims
// permuted (stride of output dim d = input stride of dim perm[d]) and
// reordered into a plain tensor.
class TransposeNode final : public ShapedNode<TransposePlan> {
 public:
  TransposeNode(DataType type, std::optional<std::vector<int64_t>> perm) : type_(type), perm_(std::move(perm)) {}

 protected:
  StatusOr<TransposePlan> MakePlan(const InputShapes& shapes) override {
    const std::vector<int64_t>& in = shapes[0];
    const size_t rank = in.size();
    std::vector<int64_t> perm(rank);
    if (perm_) {
      perm = *perm_;
      if (perm.size() != rank) return InvalidArgument("perm has ", perm.size(), " entries for rank ", rank);
      std::vector<bool> seen(rank, false);
      for (int64_t p : perm) {
        if (p < 0 || p >= static_cast<int64_t>(rank) || seen[static_cast<size_t>(p)]) {
          return InvalidArgument("perm is not a permutation of 0..", rank - 1);
        }
        seen[static_cast<size_t>(p)] = true;
      }
    } else {
      for (size_t d = 0; d < rank; ++d) perm[d] = static_cast<int64_t>(rank - 1 - d);  // the default: reversed
    }
    TransposePlan plan;
    std::vector<int64_t> in_strides(rank, 1);
    for (size_t d = rank; d-- > 1;) in_strides[d - 1] = in_strides[d] * std::max<int64_t>(in[d], 1);
    dnnl_dims dims, strides;
    for (size_t d = 0; d < rank; ++d) {
      plan.out_dims.push_back(in[static_cast<size_t>(perm[d])]);
      dims.push_back(plan.out_dims.back());
      strides.push_back(in_strides[static_cast<size_t>(perm[d])]);
    }
    if (rank == 0) {
      dims = {1};
      strides = {1};
    }
    const dnnl_dt dt = *DnnlType(type_);
    plan.src = dnnl::memory::desc(dims, dt, strides);
    plan.dst = PlainDesc(plan.out_dims, dt);
    if (std::find(plan.out_dims.begin(), plan.out_dims.end(), 0) != plan.out_dims.end()) return plan;
    plan.primitive = BoundPrimitive(dnnl::reorder(dnnl::reorder::primitive_desc(Engine(), plan.src, Engine(), plan.dst)),
                                    {{DNNL_ARG_FROM, plan.src}, {DNNL_ARG_TO, plan.dst}});
    return plan;
  }

  StatusOr<std::vector<Value>> Execute(const TransposePlan& plan, const KernelContext& ctx) override {
    PARITY_ASSIGN_OR_RETURN(Tensor out, NewTensor(type_, plan.out_dims));
    if (out.size() > 0) plan.primitive.Run({ctx.tensor(0).raw_bytes(), out.mutable_raw_bytes()});
    return std::vector<Value>{Value::FromTensor(std::move(out))};
  }

 private:
  DataType type_;
  std::optional<std::vector<int64_t>> perm_;
};

StatusOr<std::unique_ptr<LoweredNode>> LowerTranspose(const NodeView& view) {
  PARITY_RETURN_IF_ERROR(RequireMovableType(view, 0));
  if (view.input_rank(0) > DNNL_MAX_NDIMS) {
    return NotLowered("rank ", view.input_rank(0), " over oneDNN's ", DNNL_MAX_NDIMS);
  }
  return Prepared(std::make_unique<TransposeNode>(*view.input_type(0), view.GetInts("perm")), view);
}

}  // namespace

void AddLayoutLowerings(Lowering& lowering) {
  lowering.Add("Concat", LowerConcat);
  lowering.Add("Transpose", LowerTranspose);
  AddViewLowerings(lowering);
}

}  // namespace parity::adapters::onednn
