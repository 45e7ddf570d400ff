// Softmax on oneDNN's softmax primitive (softmax_accurate subtracts the
// maximum first), float32 and the 16-bit floats this CPU computes,
// accumulating in float32. LogSoftmax is refused: softmax_log takes the log
// of the sum with oneDNN 3.2's log, which is off by up to 3.5e-6 absolute
// on [0.5, 2] (test_logsoftmax_* fail by up to 3.3e-6 against an allowance
// of 3.8e-7).
//
// ONNX's softmax of a row holding NaN or +inf is NaN throughout (the sum
// of exp(x - max) is NaN), while oneDNN 3.2 writes NaN only where the input
// is NaN or +inf and 0 elsewhere. So each run also marks the rows that are
// all below +inf (binary_lt(x, +inf) is 0 for NaN and +inf, then a min
// reduction along the axis) and multiplies and divides the result by that
// mark, 1 or 0, so that 0 / 0 makes such a row NaN.
//
// Before opset 13 the input is read as a matrix [d0 * ... * d(axis-1),
// d(axis) * ... * d(n-1)] with the softmax along its rows; from 13 along
// `axis` alone. Either way the tensor is viewed as [outer, length, inner]
// with the softmax along the middle dim, so that any rank runs.
#include <limits>

#include "adapters/onednn/lowerings.h"
#include "adapters/onednn/primitive_node.h"

namespace parity::adapters::onednn {
namespace {

struct SoftmaxPlan {
  dnnl::softmax_forward primitive;  // none when the tensor has no elements
  dnnl::binary below_inf;           // 1 where x < +inf, else 0 (NaN, +inf)
  dnnl::reduction row_mark;         // the min of that along the axis
  dnnl::binary fix_rows;            // y * mark / mark
  dnnl::memory::desc desc, marks, row_marks, infinity;
  int64_t rows = 0;  // outer * inner
};

class SoftmaxNode final : public ShapedNode<SoftmaxPlan> {
 public:
  SoftmaxNode(DataType type, dnnl::algorithm algorithm, int64_t axis, bool coerced)
      : type_(type), algorithm_(algorithm), axis_(axis), coerced_(coerced) {}


 protected:
  StatusOr<SoftmaxPlan> MakePlan(const InputShapes& shapes) override {
    const std::vector<int64_t>& dims = shapes[0];
    const int64_t rank = static_cast<int64_t>(dims.size());
    // Opset 13's axis is in [-rank, rank - 1]; the coerced form's in [-rank, rank].
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    if (axis < 0 || axis > rank || (!coerced_ && axis == rank) || (!coerced_ && rank == 0)) {
      return InvalidArgument("axis ", axis_, " is out of range for rank ", rank);
    }
    int64_t outer = 1, length = 1, inner = 1;
    for (int64_t i = 0; i < rank; ++i) {
      int64_t& part = i < axis ? outer : (i == axis || coerced_ ? length : inner);
      part *= dims[static_cast<size_t>(i)];
    }
    SoftmaxPlan plan;
    plan.desc = PlainDesc({outer, length, inner}, *DnnlType(type_));
    if (outer * length * inner == 0) return plan;
    plan.primitive = dnnl::softmax_forward(dnnl::softmax_forward::primitive_desc(
        Engine(), dnnl::prop_kind::forward_inference, algorithm_, plan.desc, plan.desc, 1));
    plan.marks = PlainDesc({outer, length, inner}, dnnl_dt::f32);
    plan.row_marks = PlainDesc({outer, 1, inner}, dnnl_dt::f32);
    plan.rows = outer * inner;
    plan.infinity = PlainDesc({1, 1, 1}, dnnl_dt::f32);
    plan.below_inf = dnnl::binary(
        dnnl::binary::primitive_desc(Engine(), dnnl::algorithm::binary_lt, plan.desc, plan.infinity, plan.marks));
    if (length > 1) {  // oneDNN refuses a reduction that reduces nothing; a row of one is its own mark
      plan.row_mark = dnnl::reduction(
          dnnl::reduction::primitive_desc(Engine(), dnnl::algorithm::reduction_min, plan.marks, plan.row_marks, 0, 0));
    }
    dnnl::post_ops ops;
    ops.append_binary(dnnl::algorithm::binary_div, plan.row_marks);
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);
    plan.fix_rows = dnnl::binary(dnnl::binary::primitive_desc(Engine(), dnnl::algorithm::binary_mul, plan.desc,
                                                              plan.row_marks, plan.desc, attr));
    return plan;
  }

  StatusOr<std::vector<Value>> Execute(const SoftmaxPlan& plan, const KernelContext& ctx) override {
    const Tensor& x = ctx.tensor(0);
    PARITY_ASSIGN_OR_RETURN(Tensor out, NewTensor(type_, x.shape()));
    if (out.size() > 0) {
      PARITY_ASSIGN_OR_RETURN(Tensor marks, NewTensor(DataType::kFloat, x.shape()));
      PARITY_ASSIGN_OR_RETURN(Tensor row_marks, NewTensor(DataType::kFloat, {plan.rows}));
      float infinity = std::numeric_limits<float>::infinity();
      const dnnl::memory src = Wrap(x, plan.desc), dst = Wrap(out, plan.desc);
      const dnnl::memory mark = Wrap(marks, plan.marks);
      const dnnl::memory row_mark = plan.row_mark ? Wrap(row_marks, plan.row_marks) : Wrap(marks, plan.row_marks);
      plan.below_inf.execute(Stream(), {{DNNL_ARG_SRC_0, src},
                                        {DNNL_ARG_SRC_1, dnnl::memory(plan.infinity, Engine(), &infinity)},
                                        {DNNL_ARG_DST, mark}});
      if (plan.row_mark) plan.row_mark.execute(Stream(), {{DNNL_ARG_SRC, mark}, {DNNL_ARG_DST, row_mark}});
      plan.primitive.execute(Stream(), {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
      plan.fix_rows.execute(Stream(), {{DNNL_ARG_SRC_0, dst},
                                       {DNNL_ARG_SRC_1, row_mark},
                                       {DNNL_ARG_DST, dst},
                                       {DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, row_mark}});
      Stream().wait();
    }
    return std::vector<Value>{Value::FromTensor(std::move(out))};
  }

 private:
  DataType type_;
  dnnl::algorithm algorithm_;
  int64_t axis_;
  bool coerced_;  // before opset 13: the 2-D form
};

LowerFn Softmax(dnnl::algorithm algorithm) {
  return [algorithm](const NodeView& view) -> StatusOr<std::unique_ptr<LoweredNode>> {
    PARITY_RETURN_IF_ERROR(RequireSameComputedFloat(view, {0}));
    const bool coerced = view.opset() < 13;
    const int64_t axis = view.GetInt("axis", coerced ? 1 : -1);
    auto node = std::make_unique<SoftmaxNode>(*view.input_type(0), algorithm, axis, coerced);
    if (!view.input_dims(0)) {
      // Tried now on twos, so that a primitive oneDNN lacks is refused here
      // rather than met at the first run.
      const int64_t rank = view.input_rank(0);
      InputShapes probe = {std::vector<int64_t>(static_cast<size_t>(rank < 0 ? std::max<int64_t>(axis < 0 ? -axis : axis + 1, 1) : rank), 2)};
      Status checked = node->CheckPlan(probe);
      if (!checked.ok()) return NotLowered(checked.message());
    }
    return Prepared(std::move(node), view);
  };
}

}  // namespace

void AddSoftmaxLowerings(Lowering& lowering) {
  lowering.Add("Softmax", Softmax(dnnl::algorithm::softmax_accurate));
  lowering.Add("LogSoftmax", [](const NodeView&) -> StatusOr<std::unique_ptr<LoweredNode>> {
    return NotLowered("oneDNN 3.2's softmax_log is off by up to 4.6e-6 absolute (its log of the sum is off by up to 3.5e-6)");
  });
}

}  // namespace parity::adapters::onednn
