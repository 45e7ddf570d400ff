// Binary arithmetic (Add, Sub, Mul, Div) and comparisons (Equal, Less,
// LessOrEqual, Greater, GreaterOrEqual) with numpy broadcasting on oneDNN's
// binary primitive, for float32 and the 16-bit floats this CPU computes.
//
// oneDNN 3.2 broadcasts only its second source: the destination has the
// first source's dims. A first operand that broadcasts is read through a
// memory descriptor with the output's dims and stride 0 along its
// broadcast dims (oneDNN then takes its reference kernel, exact and
// slower), or, for an operator whose operands commute, becomes the second.
#include <algorithm>

#include "adapters/onednn/lowerings.h"
#include "adapters/onednn/primitive_node.h"

namespace parity::adapters::onednn {
namespace {

constexpr size_t kMaxRank = DNNL_MAX_NDIMS;  // oneDNN's limit on dims

struct BinarySpec {
  dnnl::algorithm algorithm;
  // Operands may be exchanged (the result does not change).
  bool commutes = false;
  // The ONNX operands reach oneDNN exchanged: Greater(a, b) runs as
  // binary_lt(b, a), because oneDNN 3.2's JIT binary_gt and binary_ge
  // compare unordered (NaN > 1 is true there); lt, le and eq are ordered.
  bool exchanged = false;
  bool comparison = false;  // output bool, one byte 0 or 1 as the reference stores it
};

struct BinaryPlan {
  dnnl::binary primitive;  // none when the output has no elements
  dnnl::memory::desc src0, src1, dst;
  bool swap = false;  // ONNX input 1 is oneDNN's src0
  std::vector<int64_t> out_dims;
};

class BinaryNode final : public ShapedNode<BinaryPlan> {
 public:
  BinaryNode(DataType type, BinarySpec spec) : type_(type), spec_(spec) {}

  Status Check(const InputShapes& shapes) {
    try {
      return MakePlan(shapes).status();
    } catch (const dnnl::error& e) {
      return Status(StatusCode::kInternal, StrCat("creating its oneDNN primitive failed: ", DnnlError(e)));
    }
  }

 protected:
  StatusOr<BinaryPlan> MakePlan(const InputShapes& shapes) override {
    const size_t rank = std::max(shapes[0].size(), shapes[1].size());
    if (rank > kMaxRank) return InvalidArgument("rank ", rank, " (oneDNN takes at most ", kMaxRank, " dims)");
    std::vector<int64_t> a = LeftPad(shapes[0], rank), b = LeftPad(shapes[1], rank);
    BinaryPlan plan;
    plan.out_dims.resize(rank);
    bool a_full = true, b_full = true;
    for (size_t i = 0; i < rank; ++i) {
      if (a[i] != b[i] && a[i] != 1 && b[i] != 1) {
        return InvalidArgument("shapes ", ShapeToString(shapes[0]), " and ", ShapeToString(shapes[1]), " do not broadcast");
      }
      plan.out_dims[i] = a[i] == 1 ? b[i] : a[i];
      a_full = a_full && a[i] == plan.out_dims[i];
      b_full = b_full && b[i] == plan.out_dims[i];
    }
    plan.swap = spec_.exchanged || (spec_.commutes && !a_full && b_full);
    if (plan.swap) std::swap(a, b);
    const dnnl_dt dt = *DnnlType(type_);
    plan.dst = PlainDesc(plan.out_dims, spec_.comparison ? dnnl_dt::u8 : dt);
    plan.src0 = Broadcast(a, plan.out_dims, dt);
    plan.src1 = PlainDesc(b, dt);
    for (int64_t d : plan.out_dims) {
      if (d == 0) return plan;
    }
    plan.primitive =
        dnnl::binary(dnnl::binary::primitive_desc(Engine(), spec_.algorithm, plan.src0, plan.src1, plan.dst));
    return plan;
  }

  StatusOr<std::vector<Value>> Execute(const BinaryPlan& plan, const KernelContext& ctx) override {
    PARITY_ASSIGN_OR_RETURN(Tensor out, NewTensor(spec_.comparison ? DataType::kBool : type_, plan.out_dims));
    if (out.size() > 0) {
      const Tensor& first = ctx.tensor(plan.swap ? 1 : 0);
      const Tensor& second = ctx.tensor(plan.swap ? 0 : 1);
      plan.primitive.execute(Stream(), {{DNNL_ARG_SRC_0, Wrap(first, plan.src0)},
                                        {DNNL_ARG_SRC_1, Wrap(second, plan.src1)},
                                        {DNNL_ARG_DST, Wrap(out, plan.dst)}});
      Stream().wait();
    }
    return std::vector<Value>{Value::FromTensor(std::move(out))};
  }

 private:
  // `dims` (padded to the output's rank) read as the output's dims: the
  // plain strides, 0 along each dim of 1 the output widens.
  static dnnl::memory::desc Broadcast(const std::vector<int64_t>& dims, const std::vector<int64_t>& out, dnnl_dt dt) {
    if (dims == out) return PlainDesc(dims, dt);
    dnnl_dims strides(dims.size(), 0);
    int64_t stride = 1;
    for (size_t i = dims.size(); i-- > 0;) {
      strides[i] = dims[i] == out[i] ? stride : 0;
      stride *= std::max<int64_t>(dims[i], 1);
    }
    return dnnl::memory::desc(dnnl_dims(out.begin(), out.end()), dt, strides);
  }

  DataType type_;
  BinarySpec spec_;
};

LowerFn Binary(BinarySpec spec) {
  return [spec](const NodeView& view) -> StatusOr<std::unique_ptr<LoweredNode>> {
    if (view.opset() < 7) return NotLowered("opset ", view.opset(), " broadcasting (the `broadcast` and `axis` attributes)");
    PARITY_RETURN_IF_ERROR(RequireSameComputedFloat(view, {0, 1}));
    const int64_t ra = view.input_rank(0), rb = view.input_rank(1);
    if (ra < 0 || rb < 0) return NotLowered("the rank of an input is not known before the run (oneDNN takes at most ", kMaxRank, " dims)");
    if (static_cast<size_t>(std::max(ra, rb)) > kMaxRank) return NotLowered("rank ", std::max(ra, rb), " (oneDNN takes at most ", kMaxRank, " dims)");
    auto node = std::make_unique<BinaryNode>(*view.input_type(0), spec);
    if (!view.input_dims(0) || !view.input_dims(1)) {
      // Tried now on ones of the known ranks, so that a primitive oneDNN
      // lacks is refused here rather than met at the first run.
      InputShapes probe = {std::vector<int64_t>(static_cast<size_t>(ra), 1), std::vector<int64_t>(static_cast<size_t>(rb), 1)};
      Status checked = node->Check(probe);
      if (!checked.ok()) return NotLowered(checked.message());
    }
    return Prepared(std::move(node), view);
  };
}

BinarySpec Arithmetic(dnnl::algorithm algorithm, bool commutes) {
  BinarySpec spec{algorithm};
  spec.commutes = commutes;
  return spec;
}

BinarySpec Comparison(dnnl::algorithm algorithm, bool commutes, bool exchanged) {
  BinarySpec spec{algorithm};
  spec.commutes = commutes;
  spec.exchanged = exchanged;
  spec.comparison = true;
  return spec;
}

LowerFn Refused(std::string reason) {
  return [reason](const NodeView&) -> StatusOr<std::unique_ptr<LoweredNode>> { return NotLowered(reason); };
}

}  // namespace

void AddBinaryLowerings(Lowering& lowering) {
  using dnnl::algorithm;
  lowering.Add("Add", Binary(Arithmetic(algorithm::binary_add, true)));
  lowering.Add("Sub", Binary(Arithmetic(algorithm::binary_sub, false)));
  lowering.Add("Mul", Binary(Arithmetic(algorithm::binary_mul, true)));
  lowering.Add("Div", Binary(Arithmetic(algorithm::binary_div, false)));
  lowering.Add("Equal", Binary(Comparison(algorithm::binary_eq, true, false)));
  lowering.Add("Less", Binary(Comparison(algorithm::binary_lt, false, false)));
  lowering.Add("LessOrEqual", Binary(Comparison(algorithm::binary_le, false, false)));
  lowering.Add("Greater", Binary(Comparison(algorithm::binary_lt, false, true)));
  lowering.Add("GreaterOrEqual", Binary(Comparison(algorithm::binary_le, false, true)));
  // Refused, with what oneDNN 3.2 does differently (measured on avx512_core).
  const std::string nan_reason =
      " drops a NaN in its first operand (it returns the second when either is NaN); ONNX propagates NaN from both";
  lowering.Add("Max", Refused("oneDNN 3.2's binary_max" + nan_reason));
  lowering.Add("Min", Refused("oneDNN 3.2's binary_min" + nan_reason));
  lowering.Add("Pow", Refused("oneDNN 3.2 has no binary pow (eltwise_pow takes a constant exponent)"));
}

}  // namespace parity::adapters::onednn
