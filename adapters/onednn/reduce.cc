// The Reduce operators on oneDNN's reduction primitive: ReduceSum,
// ReduceMean, ReduceProd, ReduceL1, ReduceL2 and ReduceSumSquare, for
// float32 and the 16-bit floats this CPU computes. oneDNN accumulates in float32
// and rounds the result once to the output type.
//
// The axes known at session creation (the `axes` attribute before
// ReduceSum-13 and the others' 18, or an `axes` input that is an
// initializer or a Constant small enough for the static facts) make the
// primitives then; an `axes` input known only at the run, at its first run
// with those values.
// Not claimed: ReduceMax and ReduceMin (oneDNN loses NaN, see kLosesNaN;
// their entries are kept so that the claim is one line away once that is
// settled); integer types (oneDNN's reduction accumulates them in
// float32, not exactly); ReduceLogSumExp (the reference subtracts each
// group's maximum before exp; oneDNN has no primitive for that, and exp
// without it overflows float32 where the reference's result is finite);
// and ReduceLogSum, which would be a sum with a log post-op, but oneDNN's
// log (eltwise_log, also as a post-op) errs by about 1.5e-6 absolute near
// 1, 99 float32 ULPs at log(1.204) (finding ONEDNN-40), far beyond the
// tolerance of a result near 0.
#include <algorithm>
#include <limits>
#include <map>

#include "adapters/onednn/lowerings.h"
#include "adapters/onednn/primitive_node.h"

namespace parity::adapters::onednn {
namespace {

using dnnl::algorithm;

struct ReduceOp {
  const char* name;
  int64_t axes_input_since;  // the opset from which `axes` is an input
  algorithm reduction;
  float p;               // the norm's power (norm algorithms only)
  double empty_value;    // the result over no elements (the reduction's identity)
  // A group of exactly one element x gives f(x): oneDNN refuses a reduction
  // that reduces nothing, so that case runs this eltwise (or a copy).
  std::optional<algorithm> single;
  // Why it is not claimed, when oneDNN's result differs from ONNX's.
  const char* refused = nullptr;
};

// oneDNN's max and min reductions lose NaN: over the row [1, NaN, 3, 2]
// ReduceMax gave 3 and ReduceMin 2 (neither NaN nor the minimum of the
// rest; consistent with x86 max and min instructions, which return their
// second operand when one is NaN), where ONNX and the reference
// propagate the NaN (finding ONEDNN-41).
constexpr const char* kLosesNaN =
    "oneDNN's max and min reductions lose NaN (over [1, NaN, 3, 2] max gave 3 and min 2) where ONNX propagates it";

constexpr double kInf = std::numeric_limits<double>::infinity();

const ReduceOp kOps[] = {
    {"ReduceSum", 13, algorithm::reduction_sum, 0, 0.0, std::nullopt},
    {"ReduceMean", 18, algorithm::reduction_mean, 0, std::numeric_limits<double>::quiet_NaN(), std::nullopt},
    {"ReduceMax", 18, algorithm::reduction_max, 0, -kInf, std::nullopt, kLosesNaN},
    {"ReduceMin", 18, algorithm::reduction_min, 0, kInf, std::nullopt, kLosesNaN},
    {"ReduceProd", 18, algorithm::reduction_mul, 0, 1.0, std::nullopt},
    // norm_lp_sum: (sum |x|^p + eps)^(1/p), with eps = 0.
    {"ReduceL1", 18, algorithm::reduction_norm_lp_sum, 1, 0.0, algorithm::eltwise_abs},
    {"ReduceL2", 18, algorithm::reduction_norm_lp_sum, 2, 0.0, algorithm::eltwise_abs},
    // norm_lp_power_p_sum: sum |x|^p + eps, with eps = 0.
    {"ReduceSumSquare", 18, algorithm::reduction_norm_lp_power_p_sum, 2, 0.0, algorithm::eltwise_square},
};

// How one shape is reduced.
struct ReducePlan {
  enum class Kind { kEmptyOutput, kFill, kSingle, kReduce } kind = Kind::kReduce;
  dnnl::primitive primitive;      // kSingle: an eltwise or a reorder; kReduce: the reduction
  dnnl::memory::desc src, dst;    // dst with the reduced dims kept as 1
  std::vector<int64_t> out_dims;  // the ONNX output's dims (keepdims applied)
};

class ReduceNode final : public ShapedNode<ReducePlan> {
 public:
  ReduceNode(const ReduceOp& op, DataType type, std::vector<int64_t> axes, bool keepdims, bool noop)
      : op_(op), type_(type), axes_(std::move(axes)), keepdims_(keepdims), noop_(noop) {}

 protected:
  StatusOr<ReducePlan> MakePlan(const InputShapes& shapes) override {
    const std::vector<int64_t>& in = shapes[0];
    const int64_t rank = static_cast<int64_t>(in.size());
    if (rank > DNNL_MAX_NDIMS) return InvalidArgument("rank ", rank, " over oneDNN's ", DNNL_MAX_NDIMS);
    // No axes reduce every axis, unless noop_with_empty_axes says none.
    std::vector<bool> reduced(static_cast<size_t>(rank), axes_.empty() && !noop_);
    for (int64_t a : axes_) {
      if (a < -rank || a >= rank) return InvalidArgument("axis ", a, " is out of range for rank ", rank);
      const size_t axis = static_cast<size_t>(a < 0 ? a + rank : a);
      if (reduced[axis]) return InvalidArgument("axis ", a, " appears twice in axes");
      reduced[axis] = true;
    }
    ReducePlan plan;
    std::vector<int64_t> kept = in;
    bool reduces_many = false;  // some reduced dim has more than one element
    int64_t in_count = 1, out_count = 1;
    for (size_t d = 0; d < in.size(); ++d) {
      in_count *= in[d];
      if (reduced[d]) {
        reduces_many = reduces_many || in[d] > 1;
        kept[d] = 1;
      }
      out_count *= kept[d];
      if (!reduced[d] || keepdims_) plan.out_dims.push_back(kept[d]);
    }
    if (out_count == 0) {
      plan.kind = ReducePlan::Kind::kEmptyOutput;
      return plan;
    }
    if (in_count == 0) {  // every group is empty: the identity of the reduction
      plan.kind = ReducePlan::Kind::kFill;
      return plan;
    }
    const dnnl_dt dt = *DnnlType(type_);
    plan.src = PlainDesc(in, dt);
    plan.dst = PlainDesc(kept, dt);
    if (!reduces_many) {
      // Groups of one element: f(x) for each, which oneDNN's reduction
      // refuses (it computes no identity); the eltwise of f, or a copy.
      plan.kind = ReducePlan::Kind::kSingle;
      if (op_.single) {
        plan.primitive = dnnl::eltwise_forward(dnnl::eltwise_forward::primitive_desc(
            Engine(), dnnl::prop_kind::forward_inference, *op_.single, plan.src, plan.dst, 0.0f, 0.0f));
      } else {
        plan.primitive = dnnl::reorder(dnnl::reorder::primitive_desc(Engine(), plan.src, Engine(), plan.dst));
      }
      return plan;
    }
    plan.primitive =
        dnnl::reduction(dnnl::reduction::primitive_desc(Engine(), op_.reduction, plan.src, plan.dst, op_.p, 0.0f));
    return plan;
  }

  StatusOr<std::vector<Value>> Execute(const ReducePlan& plan, const KernelContext& ctx) override {
    PARITY_ASSIGN_OR_RETURN(Tensor out, NewTensor(type_, plan.out_dims));
    switch (plan.kind) {
      case ReducePlan::Kind::kEmptyOutput: break;
      case ReducePlan::Kind::kFill:
        // Reductions over no elements: no arithmetic, the identity (0, 1,
        // -inf, +inf, or NaN for a mean) written as a value of the type.
        for (int64_t i = 0; i < out.size(); ++i) out.SetDouble(i, op_.empty_value);
        break;
      case ReducePlan::Kind::kSingle:
      case ReducePlan::Kind::kReduce:
        // DNNL_ARG_FROM and DNNL_ARG_TO (a reorder's) are DNNL_ARG_SRC and DNNL_ARG_DST.
        plan.primitive.execute(Stream(), {{DNNL_ARG_SRC, Wrap(ctx.tensor(0), plan.src)},
                                          {DNNL_ARG_DST, Wrap(out, plan.dst)}});
        Stream().wait();
        break;
    }
    return std::vector<Value>{Value::FromTensor(std::move(out))};
  }

 private:
  const ReduceOp& op_;
  DataType type_;
  std::vector<int64_t> axes_;
  bool keepdims_, noop_;
};

// A reduction whose `axes` input is known only at the run (the node tests
// pass it as a graph input): one ReduceNode per set of axes met, each with
// its primitives by shape. Its values decide only which dims reduce, which
// the primitive takes for any set, so the claim holds for every value.
class RuntimeAxesReduceNode final : public LoweredNode {
 public:
  RuntimeAxesReduceNode(const ReduceOp& op, DataType type, bool keepdims, bool noop)
      : op_(op), type_(type), keepdims_(keepdims), noop_(noop) {}

  bool deferred() const override { return true; }

  StatusOr<std::vector<Value>> Run(const KernelContext& ctx) override {
    std::vector<int64_t> axes;
    if (ctx.has_input(1)) {
      PARITY_ASSIGN_OR_RETURN(const Tensor* t, ctx.RequireTensor(1));
      if (t->dtype() != DataType::kInt64 || t->rank() > 1) {
        return ctx.Error("axes must be a 1-D int64 tensor, not ", t->Description());
      }
      for (int64_t i = 0; i < t->size(); ++i) axes.push_back(t->data<int64_t>()[i]);
    }
    auto it = by_axes_.find(axes);
    if (it == by_axes_.end()) {
      it = by_axes_.emplace(axes, std::make_unique<ReduceNode>(op_, type_, axes, keepdims_, noop_)).first;
    }
    return it->second->Run(ctx);
  }

 private:
  const ReduceOp& op_;
  DataType type_;
  bool keepdims_, noop_;
  std::map<std::vector<int64_t>, std::unique_ptr<ReduceNode>> by_axes_;
};

LowerFn LowerReduce(const ReduceOp& op) {
  return [&op](const NodeView& view) -> StatusOr<std::unique_ptr<LoweredNode>> {
    if (op.refused) return NotLowered(op.refused);
    const std::optional<DataType> type = view.input_type(0);
    if (!type) return NotLowered("the type of input 0 is not known before the run");
    if (!IsFloatingPoint(*type)) {
      return NotLowered(DataTypeName(*type), " input (oneDNN's reduction accumulates integers in float32)");
    }
    PARITY_RETURN_IF_ERROR(RequireSameComputedFloat(view, {0}));
    if (view.input_rank(0) > DNNL_MAX_NDIMS) {
      return NotLowered("rank ", view.input_rank(0), " over oneDNN's ", DNNL_MAX_NDIMS);
    }
    std::vector<int64_t> axes;
    bool noop = false;
    if (view.opset() < op.axes_input_since) {
      axes = view.GetInts("axes").value_or(std::vector<int64_t>{});
    } else {
      noop = view.GetInt("noop_with_empty_axes", 0) != 0;
      if (view.has_input(1)) {
        const ValueFacts* facts = view.input_facts(1);
        if (!facts || !facts->ints) {
          if (view.input_type(1) != DataType::kInt64) return NotLowered("axes of a type not known to be int64");
          return std::unique_ptr<LoweredNode>(
              new RuntimeAxesReduceNode(op, *type, view.GetInt("keepdims", 1) != 0, noop));
        }
        axes = *facts->ints;
      }
    }
    return Prepared(std::make_unique<ReduceNode>(op, *type, std::move(axes), view.GetInt("keepdims", 1) != 0, noop),
                    view);
  };
}

}  // namespace

void AddReduceLowerings(Lowering& lowering) {
  for (const ReduceOp& op : kOps) lowering.Add(op.name, LowerReduce(op));
}

}  // namespace parity::adapters::onednn
