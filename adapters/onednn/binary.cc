// Binary arithmetic (Add, Sub, Mul, Div), Max and Min, the variadic Sum,
// Mean, Max and Min as a chain of binary steps, and the comparisons
// (Equal, Less, LessOrEqual, Greater, GreaterOrEqual), with numpy
// broadcasting, on oneDNN's binary primitive.
//
// oneDNN 3.2 broadcasts only its second source: the destination has the
// first source's dims. A first operand that broadcasts is read through a
// memory descriptor with the output's dims and stride 0 along its
// broadcast dims (oneDNN then takes its reference kernel, exact and
// slower), or, for an operator whose operands commute, becomes the second.
// What oneDNN 3.2 computes differently from ONNX, measured on avx512_core,
// and what is done about it:
// - binary_max and binary_min return their second source when either is
//   NaN, so a NaN in the first is lost: the step multiplies and divides its
//   result by the mask (first == first), 1 or 0, so that 0 / 0 restores NaN.
// - the JIT binary_gt and binary_ge compare unordered (NaN > 1 is true):
//   Greater(a, b) runs as binary_lt(b, a), GreaterOrEqual as binary_le(b, a).
#include <algorithm>

#include "adapters/onednn/lowerings.h"
#include "adapters/onednn/primitive_node.h"

namespace parity::adapters::onednn {
namespace {

constexpr size_t kMaxRank = DNNL_MAX_NDIMS;  // oneDNN's limit on dims

struct BinarySpec {
  dnnl::algorithm algorithm = dnnl::algorithm::undef;
  bool commutes = false;    // the operands may be exchanged
  bool exchanged = false;   // the ONNX operands reach oneDNN exchanged (Greater as lt)
  bool comparison = false;  // bool output: one byte, 0 or 1, as the reference stores it
  bool restore_nan = false; // max and min: the mask of NaN in the first source
  bool mean = false;        // Mean: the last step divides by the input count
  bool variadic = false;    // Sum, Mean, Max, Min: any number of inputs
};

// One binary step of the chain: acc op input, both broadcast to out_dims.
struct Step {
  dnnl::binary primitive;
  dnnl::binary nan_mask;  // restore_nan: eq(src0, src0) over out_dims
  dnnl::memory::desc src0, src1, dst, mask, mask_src1, count;
  bool swap = false;  // the step's input is oneDNN's src0 and the accumulated value its src1
  std::vector<int64_t> out_dims;
};

struct BinaryPlan {
  std::vector<Step> steps;  // none for one input (a copy) or an empty output
  dnnl::reorder copy;       // one input: Sum, Mean, Max and Min of it are itself
  dnnl::memory::desc copy_desc;
  std::vector<int64_t> out_dims;
};

class BinaryNode final : public ShapedNode<BinaryPlan> {
 public:
  BinaryNode(DataType type, BinarySpec spec) : type_(type), spec_(spec) {}


 protected:
  StatusOr<BinaryPlan> MakePlan(const InputShapes& shapes) override {
    BinaryPlan plan;
    const dnnl_dt dt = *DnnlType(type_);
    plan.out_dims = shapes[0];
    for (size_t i = 1; i < shapes.size(); ++i) {
      PARITY_ASSIGN_OR_RETURN(plan.out_dims, Broadcast(plan.out_dims, shapes[i]));
    }
    if (plan.out_dims.size() > kMaxRank) {
      return InvalidArgument("rank ", plan.out_dims.size(), " (oneDNN takes at most ", kMaxRank, " dims)");
    }
    for (int64_t d : plan.out_dims) {
      if (d == 0) return plan;
    }
    if (shapes.size() == 1) {
      plan.copy_desc = PlainDesc(shapes[0], dt);
      plan.copy = dnnl::reorder(dnnl::reorder::primitive_desc(Engine(), plan.copy_desc, Engine(), plan.copy_desc));
      return plan;
    }
    std::vector<int64_t> acc = shapes[0];
    for (size_t i = 1; i < shapes.size(); ++i) {
      // The chain accumulates in float32 (a sum of 16-bit floats rounded to
      // 16 bits at each step would lose what a later input cancels).
      const dnnl_dt acc_dt = i == 1 ? dt : dnnl_dt::f32;
      const bool last = i + 1 == shapes.size();
      PARITY_ASSIGN_OR_RETURN(Step step, MakeStep(acc, acc_dt, shapes[i], dt, last, last ? dt : dnnl_dt::f32));
      acc = step.out_dims;
      plan.steps.push_back(std::move(step));
    }
    return plan;
  }

  StatusOr<std::vector<Value>> Execute(const BinaryPlan& plan, const KernelContext& ctx) override {
    const DataType out_type = spec_.comparison ? DataType::kBool : type_;
    PARITY_ASSIGN_OR_RETURN(Tensor out, NewTensor(out_type, plan.out_dims));
    if (out.size() == 0) return std::vector<Value>{Value::FromTensor(std::move(out))};
    if (plan.steps.empty()) {
      dnnl::memory from = Wrap(ctx.tensor(0), plan.copy_desc), to = Wrap(out, plan.copy_desc);
      plan.copy.execute(Stream(), from, to);
      Stream().wait();
      return std::vector<Value>{Value::FromTensor(std::move(out))};
    }
    Tensor acc = ctx.tensor(0);  // shares the input's buffer; never written
    float count = static_cast<float>(ctx.input_count());
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      const Step& step = plan.steps[i];
      const bool last = i + 1 == plan.steps.size();
      Tensor result;
      if (last) {
        result = out;
      } else {
        PARITY_ASSIGN_OR_RETURN(result, NewTensor(DataType::kFloat, step.out_dims));  // the float32 accumulator
      }
      const Tensor& first = step.swap ? ctx.tensor(i + 1) : acc;
      const Tensor& second = step.swap ? acc : ctx.tensor(i + 1);
      const dnnl::memory src0 = Wrap(first, step.src0);
      std::unordered_map<int, dnnl::memory> args = {
          {DNNL_ARG_SRC_0, src0}, {DNNL_ARG_SRC_1, Wrap(second, step.src1)}, {DNNL_ARG_DST, Wrap(result, step.dst)}};
      Tensor mask;
      if (spec_.restore_nan) {
        PARITY_ASSIGN_OR_RETURN(mask, NewTensor(DataType::kFloat, step.out_dims));
        const dnnl::memory mask_memory = Wrap(mask, step.mask);
        step.nan_mask.execute(Stream(), {{DNNL_ARG_SRC_0, src0},
                                         {DNNL_ARG_SRC_1, Wrap(first, step.mask_src1)},
                                         {DNNL_ARG_DST, mask_memory}});
        args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1] = mask_memory;
        args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(1) | DNNL_ARG_SRC_1] = mask_memory;
      }
      if (spec_.mean && last) {
        args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1] = dnnl::memory(step.count, Engine(), &count);
      }
      step.primitive.execute(Stream(), args);
      Stream().wait();
      acc = result;
    }
    return std::vector<Value>{Value::FromTensor(std::move(out))};
  }

 private:
  static StatusOr<std::vector<int64_t>> Broadcast(const std::vector<int64_t>& x, const std::vector<int64_t>& y) {
    const size_t rank = std::max(x.size(), y.size());
    const std::vector<int64_t> a = LeftPad(x, rank), b = LeftPad(y, rank);
    std::vector<int64_t> out(rank);
    for (size_t i = 0; i < rank; ++i) {
      if (a[i] != b[i] && a[i] != 1 && b[i] != 1) {
        return InvalidArgument("shapes ", ShapeToString(x), " and ", ShapeToString(y), " do not broadcast");
      }
      out[i] = a[i] == 1 ? b[i] : a[i];
    }
    return out;
  }

  // `dims` (padded to the output's rank) read as the output's dims: the
  // plain strides, 0 along each dim of 1 that the output widens.
  static dnnl::memory::desc Widened(const std::vector<int64_t>& dims, const std::vector<int64_t>& out, dnnl_dt dt) {
    if (dims == out) return PlainDesc(dims, dt);
    dnnl_dims strides(dims.size(), 0);
    int64_t stride = 1;
    for (size_t i = dims.size(); i-- > 0;) {
      strides[i] = dims[i] == out[i] ? stride : 0;
      stride *= std::max<int64_t>(dims[i], 1);
    }
    return dnnl::memory::desc(dnnl_dims(out.begin(), out.end()), dt, strides);
  }

  StatusOr<Step> MakeStep(const std::vector<int64_t>& acc, dnnl_dt acc_dt, const std::vector<int64_t>& input,
                          dnnl_dt input_dt, bool last, dnnl_dt out_dt) {
    Step step;
    PARITY_ASSIGN_OR_RETURN(step.out_dims, Broadcast(acc, input));
    const size_t rank = step.out_dims.size();
    std::vector<int64_t> a = LeftPad(acc, rank), b = LeftPad(input, rank);
    step.swap = spec_.exchanged || (spec_.commutes && a != step.out_dims && b == step.out_dims);
    if (step.swap) {
      std::swap(a, b);
      std::swap(acc_dt, input_dt);
    }
    step.src0 = Widened(a, step.out_dims, acc_dt);
    step.src1 = PlainDesc(b, input_dt);
    step.dst = PlainDesc(step.out_dims, spec_.comparison ? dnnl_dt::u8 : out_dt);
    dnnl::post_ops ops;
    if (spec_.restore_nan) {
      step.mask = PlainDesc(step.out_dims, dnnl_dt::f32);
      step.mask_src1 = PlainDesc(a, acc_dt);
      step.nan_mask = dnnl::binary(
          dnnl::binary::primitive_desc(Engine(), dnnl::algorithm::binary_eq, step.src0, step.mask_src1, step.mask));
      ops.append_binary(dnnl::algorithm::binary_mul, step.mask);
      ops.append_binary(dnnl::algorithm::binary_div, step.mask);
    }
    if (spec_.mean && last) {  // the sum divided by the count, one rounding as the reference's sum / n
      step.count = PlainDesc(std::vector<int64_t>(rank, 1), dnnl_dt::f32);
      ops.append_binary(dnnl::algorithm::binary_div, step.count);
    }
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);
    step.primitive =
        dnnl::binary(dnnl::binary::primitive_desc(Engine(), spec_.algorithm, step.src0, step.src1, step.dst, attr));
    return step;
  }

  DataType type_;
  BinarySpec spec_;
};

// The input types a step admits: the floats this CPU computes; for the
// comparisons also int8 and uint8, which float32 (oneDNN's arithmetic)
// holds exactly. Wider integers would round in float32, and oneDNN's
// integer arithmetic saturates where ONNX wraps (and Div truncates).
Status RequireTypes(const NodeView& view, const BinarySpec& spec) {
  std::optional<DataType> first;
  for (int i = 0; i < view.input_count(); ++i) {
    const std::optional<DataType> type = view.input_type(i);
    if (!type) return NotLowered("the type of input ", i, " is not known before the run");
    if (first && *type != *first) return NotLowered("inputs of mixed types");
    first = type;
  }
  if (!first) return NotLowered("no inputs");
  if (spec.comparison && (*first == DataType::kInt8 || *first == DataType::kUint8)) return Status::Ok();
  if (IsInteger(*first) && !spec.comparison) {
    return NotLowered(DataTypeName(*first), " (oneDNN's binary computes in float32 and saturates integer results; ",
                      "ONNX's integer arithmetic wraps", " and its Div truncates)");
  }
  if (IsInteger(*first)) return NotLowered(DataTypeName(*first), " (float32, oneDNN's arithmetic, rounds it)");
  if (spec.restore_nan && *first == DataType::kBfloat16) {
    // oneDNN 3.2 writes a bfloat16 result through vcvtneps2bf16, which
    // flushes subnormals to zero; Max and Min are compared exactly.
    return NotLowered("bfloat16 (oneDNN 3.2 writes bfloat16 subnormal results as zero; ", view.node().op_type(),
                      " is compared exactly)");
  }
  return RequireSameComputedFloat(view, {0});
}

LowerFn Binary(BinarySpec spec) {
  return [spec](const NodeView& view) -> StatusOr<std::unique_ptr<LoweredNode>> {
    if (view.opset() < (spec.variadic ? 8 : 7)) {
      return NotLowered("opset ", view.opset(), spec.variadic ? " (inputs of one shape, no broadcasting)" : " broadcasting (the `broadcast` and `axis` attributes)");
    }
    if (!spec.variadic && view.input_count() != 2) return NotLowered(view.input_count(), " inputs");
    for (int i = 0; i < view.input_count(); ++i) {
      if (!view.has_input(i)) return NotLowered("input ", i, " is absent");
    }
    PARITY_RETURN_IF_ERROR(RequireTypes(view, spec));
    InputShapes probe;
    bool static_shapes = true;
    for (int i = 0; i < view.input_count(); ++i) {
      const int64_t rank = view.input_rank(i);
      if (rank < 0) {
        return NotLowered("the rank of input ", i, " is not known before the run (oneDNN takes at most ", kMaxRank, " dims)");
      }
      if (static_cast<size_t>(rank) > kMaxRank) return NotLowered("rank ", rank, " (oneDNN takes at most ", kMaxRank, " dims)");
      probe.emplace_back(static_cast<size_t>(rank), 1);
      static_shapes = static_shapes && view.input_dims(i);
    }
    auto node = std::make_unique<BinaryNode>(*view.input_type(0), spec);
    if (!static_shapes) {
      // Tried now on ones of the known ranks, so that a primitive oneDNN
      // lacks is refused here rather than met at the first run.
      Status checked = node->CheckPlan(probe);
      if (!checked.ok()) return NotLowered(checked.message());
    }
    return Prepared(std::move(node), view);
  };
}

BinarySpec Arithmetic(dnnl::algorithm algorithm, bool commutes) {
  BinarySpec spec;
  spec.algorithm = algorithm;
  spec.commutes = commutes;
  return spec;
}

BinarySpec Comparison(dnnl::algorithm algorithm, bool commutes, bool exchanged) {
  BinarySpec spec = Arithmetic(algorithm, commutes);
  spec.exchanged = exchanged;
  spec.comparison = true;
  return spec;
}

// Sum, Mean, Max and Min: 1 or more inputs, each step of the chain exact
// for Max and Min; Sum and Mean round at each step (the tolerance's
// reduction families, whose n is the input count, allow for it).
BinarySpec Variadic(dnnl::algorithm algorithm, bool restore_nan, bool mean) {
  BinarySpec spec = Arithmetic(algorithm, true);
  spec.variadic = true;
  spec.restore_nan = restore_nan;
  spec.mean = mean;
  return spec;
}

}  // namespace

void AddBinaryLowerings(Lowering& lowering) {
  using dnnl::algorithm;
  lowering.Add("Add", Binary(Arithmetic(algorithm::binary_add, true)));
  lowering.Add("Sub", Binary(Arithmetic(algorithm::binary_sub, false)));
  lowering.Add("Mul", Binary(Arithmetic(algorithm::binary_mul, true)));
  lowering.Add("Div", Binary(Arithmetic(algorithm::binary_div, false)));
  lowering.Add("Sum", Binary(Variadic(algorithm::binary_add, false, false)));
  lowering.Add("Mean", Binary(Variadic(algorithm::binary_add, false, true)));
  lowering.Add("Max", Binary(Variadic(algorithm::binary_max, true, false)));
  lowering.Add("Min", Binary(Variadic(algorithm::binary_min, true, false)));
  lowering.Add("Equal", Binary(Comparison(algorithm::binary_eq, true, false)));
  lowering.Add("Less", Binary(Comparison(algorithm::binary_lt, false, false)));
  lowering.Add("LessOrEqual", Binary(Comparison(algorithm::binary_le, false, false)));
  lowering.Add("Greater", Binary(Comparison(algorithm::binary_lt, false, true)));
  lowering.Add("GreaterOrEqual", Binary(Comparison(algorithm::binary_le, false, true)));
  lowering.Add("Pow", [](const NodeView&) -> StatusOr<std::unique_ptr<LoweredNode>> {
    return NotLowered("oneDNN 3.2 has no binary pow (eltwise_pow takes a constant exponent)");
  });
}

}  // namespace parity::adapters::onednn
